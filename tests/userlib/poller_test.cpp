// The poller's need-wakeup handshake, on the host with eventfds standing in
// for channel fds and host-core rings for their rings.
#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <thread>

#include "ring_views.hpp"
#include "kring/poller.hpp"
#include "errno_assert.hpp"
#include "test_util.hpp"

using kt::host_ring;

namespace {

struct efd {
    int fd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    ~efd() { ::close(fd); }
};

TEST(Poller, RecheckAfterArmingAvoidsSleeping) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    efd ea, eb;
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->add(ea.fd, kt::view_of(a), 10));
    ASSERT_TRUE(p->add(eb.fd, kt::view_of(b), 20));
    a.ctl->need_wakeup = 0;
    // Nothing anywhere: times out, both rings armed.
    auto r = p->wait(0);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->empty());
    EXPECT_EQ(a.ctl->need_wakeup, 1u);
    EXPECT_EQ(b.ctl->need_wakeup, 1u);
    EXPECT_EQ(p->stats().timeouts, 0u);  // a wait(0) does not sleep
    // Nothing for 1 ms: a sleep that ran into its timeout.
    r = p->wait(1);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->empty());
    EXPECT_EQ(p->stats().timeouts, 1u);
    EXPECT_EQ(p->stats().woken, 0u);
    // Data published without any wake-up (the fd stays silent): the
    // re-check after F reports it although the fd is not readable, and the
    // poller does not sleep (a long timeout would hang the test).
    ASSERT_EQ(kt::write_record(&b.rb, 32), 0);
    r = p->wait(60000);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0], 20u);
    EXPECT_EQ(p->rechecks_hit(), 1u);
    // While the caller drains b, b asks for no wake-ups; a stays armed.
    EXPECT_EQ(b.ctl->need_wakeup, 0u);
    EXPECT_EQ(a.ctl->need_wakeup, 1u);
}

TEST(Poller, ReportsReadableFds) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    efd ea, eb;
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->add(ea.fd, kt::view_of(a), 1));
    ASSERT_TRUE(p->add(eb.fd, kt::view_of(b), 2));
    std::uint64_t one = 1;
    ASSERT_EQ(::write(eb.fd, &one, 8), 8);
    auto r = p->wait(60000);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0], 2u);
    EXPECT_EQ(p->rechecks_hit(), 0u);
}

TEST(Poller, SpinRuleComparesTheRoomWithTheLatencies) {
    // 64 KiB woken at half: 32 KiB of room. 1 byte/ns for 4 x 10 us is 40 KB.
    EXPECT_TRUE(kring::poller::should_spin(65536, 0, 1.0, 10000, 4));
    EXPECT_FALSE(kring::poller::should_spin(65536, 0, 1.0, 5000, 4));         // 20 KB
    EXPECT_TRUE(kring::poller::should_spin(65536, 0, 1.0, 5000, 8));          // 40 KB
    EXPECT_TRUE(kring::poller::should_spin(65536, 61440, 1.0, 1100, 4));      // 4 KiB room
    EXPECT_FALSE(kring::poller::should_spin(65536, 1024, 1.0, 10000, 4));     // 63 KiB
    EXPECT_TRUE(kring::poller::should_spin(65536, 1u << 20, 1.0, 10000, 4));  // half
    EXPECT_FALSE(kring::poller::should_spin(65536, 0, 0.0, 10000, 4));        // nothing written
    EXPECT_FALSE(kring::poller::should_spin(65536, 0, 1.0, 0, 4));            // no wake-up seen
    EXPECT_FALSE(kring::poller::should_spin(0, 0, 1.0, 10000, 4));
}

TEST(Poller, BadOptionsAreAnError) {
    kring::poller_options o;
    o.headroom_latencies = 0;
    auto p = kring::poller::create(o);
    ASSERT_FALSE(p);
    EXPECT_ERRNO(p.error().code(), EINVAL);
    o.headroom_latencies = 1;
    o.max_spin = std::chrono::microseconds(-1);
    EXPECT_FALSE(kring::poller::create(o));
}

// The kernel's side of a wake-up that comes late, played by a thread: once
// the poller armed need_wakeup, write @bytes (the ring stamps wakeup_time
// when they cross the watermark), then signal the fd @late later.
void late_wakeup(host_ring& r, int fd, unsigned bytes, std::chrono::milliseconds late) {
    ASSERT_TRUE(kt::wait_until([&] {
        return __atomic_load_n(&r.ctl->need_wakeup, __ATOMIC_ACQUIRE) != 0;
    })) << "the poller never armed need_wakeup";
    for (unsigned n = 0; n < bytes; n += 64)
        ASSERT_EQ(kt::write_record(&r.rb, 64), 0);
    std::this_thread::sleep_for(late);
    std::uint64_t one = 1;
    ASSERT_EQ(::write(fd, &one, 8), 8);
}

// Drain @r as a consumer does: the tail to the head.
void drain(host_ring& r, int fd) {
    r.ctl->data_tail = __atomic_load_n(&r.ctl->data_head, __ATOMIC_ACQUIRE);
    std::uint64_t v;
    (void)!::read(fd, &v, 8);
}

// The poller learns how late wake-ups come (a wake-up 30 ms late) and how
// fast the ring fills, then polls data_head instead of sleeping; with the
// writer gone quiet it sleeps again. Sleep mode measures but never spins. Nothing here
// depends on the pace of the machine: the latency is at least 30 ms by
// construction, and with headroom_latencies 10^4 any rate above 1 byte in
// 150 s counts as fast.
void adaptive_run(kring::wait_mode mode) {
    host_ring a(1, kt::mapping::plain);
    efd ea;
    kring::poller_options o;
    o.mode = mode;
    o.headroom_latencies = 10000;
    auto p = kring::poller::create(o);
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->add(ea.fd, kt::view_of(a), 7));
    EXPECT_EQ(a.ctl->wakeup_watermark, a.size() / 2);
    const auto limit = int(std::chrono::milliseconds(kt::patience).count());

    // Rounds until one wake-up's latency was measured (a round is lost when
    // the writer's records land before the poller's re-check: no sleep).
    for (int round = 0; round < 20 && !p->stats().wake_samples; round++) {
        a.ctl->need_wakeup = 0;
        std::thread k(
            [&] { late_wakeup(a, ea.fd, unsigned(a.size() / 2), std::chrono::milliseconds(30)); });
        auto r = p->wait(limit);
        k.join();
        ASSERT_TRUE(r);
        ASSERT_EQ(r->size(), 1u);
        drain(a, ea.fd);
    }
    // Both modes measure (and report) the latency; only one acts on it.
    const kring::poller_stats s0 = p->stats();
    ASSERT_GT(s0.wake_samples, 0u) << "no wake-up measured in 20 rounds";
    EXPECT_GE(s0.wake_latency_ns, 30000000u);
    EXPECT_GE(s0.wake_latency_max_ns, 30000000u);
    EXPECT_LT(s0.wake_latency_max_ns, 1000000000000u);
    EXPECT_EQ(s0.spins, 0u);
    EXPECT_GE(s0.woken, s0.wake_samples);

    // Data there already: found by the spin (adaptive) or the re-check.
    // Less than a batch (a quarter of the 2 KiB above the watermark): the
    // spin runs to its end (max_spin, 2 ms), then takes it.
    ASSERT_EQ(kt::write_record(&a.rb, 64), 0);
    auto r = p->wait(limit);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 1u);
    EXPECT_EQ((*r)[0], 7u);
    const kring::poller_stats s1 = p->stats();
    if (mode == kring::wait_mode::sleep) {
        EXPECT_EQ(s1.spins, 0u);
        EXPECT_EQ(s1.rechecks_hit, s0.rechecks_hit + 1);
        EXPECT_EQ(s1.sleeps, s0.sleeps + 1);
    } else {
        EXPECT_EQ(s1.spins, s0.spins + 1);
        EXPECT_EQ(s1.spin_hits, s0.spin_hits + 1);
        EXPECT_EQ(s1.spin_batches, s0.spin_batches);
        EXPECT_GE(s1.spin_ns - s0.spin_ns, 2000000u) << "the spin ended before its budget";
        EXPECT_EQ(s1.sleeps, s0.sleeps) << "a spin that found data went to sleep";
        EXPECT_EQ(s1.woken, s0.woken);
        EXPECT_EQ(a.ctl->need_wakeup, 0u);
    }
    drain(a, ea.fd);
    // A batch: the spin ends on it.
    for (int i = 0; i < 8; i++)
        ASSERT_EQ(kt::write_record(&a.rb, 64), 0);
    r = p->wait(limit);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->size(), 1u);
    const kring::poller_stats s2 = p->stats();
    if (mode == kring::wait_mode::sleep) {
        EXPECT_EQ(s2.spins, 0u);
    } else {
        EXPECT_EQ(s2.spins, s1.spins + 1);
        EXPECT_EQ(s2.spin_batches, s1.spin_batches + 1);
        EXPECT_EQ(s2.sleeps, s1.sleeps);
    }
    drain(a, ea.fd);

    // Quiet: every wait measures no progress, the rate halves, and within
    // a bounded number of waits the poller sleeps without spinning.
    bool slept_plain = false;
    for (int i = 0; i < 200 && !slept_plain; i++) {
        const auto spins = p->stats().spins;
        auto q = p->wait(1);
        ASSERT_TRUE(q);
        EXPECT_TRUE(q->empty());
        slept_plain = p->stats().spins == spins;
    }
    EXPECT_TRUE(slept_plain) << "still spinning after 200 quiet waits";
    EXPECT_EQ(a.ctl->need_wakeup, 1u);  // armed: asleep as usual
}

// A wake-up so late that the next one became due too: the control page's
// wakeup_time is the second's, yet the latency measured is the first's, or
// more. The writer crosses the watermark, waits 30 ms, crosses it again
// (filling the ring) and only then signals: the first wake-up is at least
// 30 ms late, the second hardly at all. The poller places the first
// (k - 1) watermarks earlier at the rate the ring filled during its sleep:
// 2 KiB of 4 KiB over a sleep of at least 30 ms, at least 15 ms.
TEST(Poller, AWakeupLateByAWatermarkCountsFromTheFirst) {
    host_ring a(1, kt::mapping::plain);
    efd ea;
    kring::poller_options o;
    o.mode = kring::wait_mode::sleep;
    auto p = kring::poller::create(o);
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->add(ea.fd, kt::view_of(a), 3));
    const unsigned wm = unsigned(a.ctl->wakeup_watermark);
    ASSERT_EQ(wm, a.size() / 2);
    const auto limit = int(std::chrono::milliseconds(kt::patience).count());
    const std::uint64_t w0 = a.ctl->wakeups;
    // Rounds until one sleep measured it (as in adaptive_run(), a round is
    // lost when the first records land before the poller's re-check).
    for (int round = 0; round < 20 && !p->stats().wake_samples; round++) {
        a.ctl->need_wakeup = 0;
        std::thread k([&] {
            ASSERT_TRUE(kt::wait_until([&] {
                return __atomic_load_n(&a.ctl->need_wakeup, __ATOMIC_ACQUIRE) != 0;
            })) << "the poller never armed need_wakeup";
            for (unsigned n = 0; n < wm; n += 64)
                ASSERT_EQ(kt::write_record(&a.rb, 64), 0);
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            for (unsigned n = 0; n < wm; n += 64)
                ASSERT_EQ(kt::write_record(&a.rb, 64), 0);
            std::uint64_t one = 1;
            ASSERT_EQ(::write(ea.fd, &one, 8), 8);
        });
        auto r = p->wait(limit);
        k.join();
        ASSERT_TRUE(r);
        drain(a, ea.fd);
    }
    const kring::poller_stats s = p->stats();
    ASSERT_EQ(s.wake_samples, 1u) << "no wake-up measured in 20 rounds";
    EXPECT_GE(a.ctl->wakeups - w0, 2u);
    EXPECT_GE(s.wake_latency_max_ns, 15000000u);
    EXPECT_LT(s.wake_latency_max_ns, 1000000000000u);
}

TEST(Poller, AdaptiveSpinsWhenWakeupsComeTooLate) { adaptive_run(kring::wait_mode::adaptive); }

TEST(Poller, SleepModeNeverSpins) { adaptive_run(kring::wait_mode::sleep); }

TEST(Poller, BadFdIsAnError) {
    host_ring a(1, kt::mapping::plain);
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    auto r = p->add(-1, kt::view_of(a), 1);
    ASSERT_FALSE(r);
    EXPECT_ERRNO(r.error().code(), EBADF);
}

}  // namespace
