// In the guest: set-output (docs/SECURITY.md). The graph has no chains, a
// redirected channel wakes its pollers and keeps RESET away from running
// writers, and a buffer written from two CPUs stays intact.
#include <poll.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <thread>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"
#include "security.hpp"

using kt::is_root;
using kt::spin;

namespace {

// Set-output builds no chains and no cycles: a target is never redirected,
// a redirected channel is never a target.
TEST(Security, SetOutputGraphHasNoChains) {
    if (!is_root())
        GTEST_SKIP() << "per-CPU capture needs privilege";
    kt::raw_channel a, b, c;
    for (kt::raw_channel* ch : {&a, &b, &c}) {
        ASSERT_EQ(ch->open_dev(), 0);
        ASSERT_EQ(ch->configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
    }
    EXPECT_EQ(a.set_output(b.fd), 0);
    EXPECT_ERRNO(b.set_output(c.fd), EINVAL) << "b is a target";
    EXPECT_ERRNO(c.set_output(a.fd), EINVAL) << "a is redirected";
    EXPECT_ERRNO(b.set_output(a.fd), EINVAL) << "a cycle";
    EXPECT_EQ(a.set_output(-1), 0);
    EXPECT_EQ(b.set_output(c.fd), 0);
}

// A redirected channel polls its target's buffer: its poller wakes when
// records arrive there. RESET of the target waits for its writers to stop.
TEST(Security, RedirectedChannelPollsAndResetsWithItsTarget) {
    if (!is_root())
        GTEST_SKIP() << "per-CPU capture needs privilege";
    kt::raw_channel src, dst;
    ASSERT_EQ(src.open_dev(), 0);
    ASSERT_EQ(src.configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
    ASSERT_EQ(dst.open_dev(), 0);
    kring_attr d = kt::attr(KRING_SOURCE_SCHED, 0, -1);
    d.wakeup_events = 1;
    ASSERT_EQ(dst.configure(d), 0);
    ASSERT_EQ(src.set_output(dst.fd), 0);
    ASSERT_EQ(dst.map_ring(6, true, false), 0);
    __atomic_store_n(&dst.ctl->need_wakeup, 1, __ATOMIC_SEQ_CST);
    ASSERT_EQ(src.ioctl0(KRING_IOC_ENABLE), 0);
    // Polling on CPU 0: going to sleep in poll() is a switch there.
    ASSERT_TRUE(kt::pin_to(0));
    pollfd p{src.fd, POLLIN, 0};
    int n = ::poll(&p, 1, int(std::chrono::milliseconds(kt::patience).count()));
    kt::unpin();
    EXPECT_EQ(n, 1) << "the redirected channel's poller was not woken";
    EXPECT_TRUE(p.revents & POLLIN);
    EXPECT_ERRNO(dst.ioctl0(KRING_IOC_RESET), EBUSY) << "a writer into the buffer is enabled";
    ASSERT_EQ(src.ioctl0(KRING_IOC_DISABLE), 0);
    EXPECT_EQ(dst.ioctl0(KRING_IOC_RESET), 0);
    kring_stats st = dst.stats();
    EXPECT_EQ(st.produced, 0u);
}

// One buffer, writers on two CPUs: a per-thread sched channel with wakeup
// records (written on the waker's CPU) redirected into a per-thread timer
// channel of the same thread (written where the thread runs). The buffer's
// write lock keeps every record intact and the accounting exact; a debug
// kernel would warn if two CPUs entered the ring at once.
// What the shared buffer of TwoCpuWritersShareOneBufferIntact holds: its
// SAMPLEs (the sched channel's wakeups among them), LOST counts and
// anything malformed.
struct shared_buffer_tally {
    std::uint64_t layout, sched_id;
    long wakeups = 0, samples = 0, bad = 0;
    std::uint64_t lost = 0;

    void drain(kt::raw_channel& ch) {
        long r = ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            kt::sample x;
            if (h.type == KRING_RECORD_LOST) {
                kring_lost_record l;
                std::memcpy(&l, rec, sizeof(l));
                lost += l.lost;
                return;
            }
            if (h.type != KRING_RECORD_SAMPLE || !kt::parse_sample(rec, layout, x)) {
                bad++;
                return;
            }
            samples++;
            kring_sched_raw r{};
            if (x.id == sched_id && x.raw_size >= sizeof(r)) {
                std::memcpy(&r, x.raw, sizeof(r));
                wakeups += r.kind == KRING_SCHED_WAKEUP;
            }
        });
        if (r < 0)
            bad++;
    }
};

TEST(Security, TwoCpuWritersShareOneBufferIntact) {
    if (!is_root() || kt::online_cpus() < 2)
        GTEST_SKIP() << "needs root and two CPUs";
    constexpr std::uint64_t id_type = kt::sched_type | KRING_SAMPLE_IDENTIFIER;
    int ping[2], pong[2];
    ASSERT_EQ(::pipe(ping), 0);
    ASSERT_EQ(::pipe(pong), 0);
    std::atomic<bool> stop{false};
    std::atomic<int> tid{0};
    // The followed thread, on CPU 0: woken through a pipe from CPU 1.
    std::thread followed([&] {
        kt::pin_to(0);
        tid = kt::gettid_();
        char b;
        while (::read(ping[0], &b, 1) == 1 && b == 'p') {
            spin(2000);
            if (::write(pong[1], "p", 1) != 1)
                break;
        }
    });
    while (!tid)
        ::usleep(1000);
    kt::raw_channel timer, sched;
    ASSERT_EQ(timer.open_dev(), 0);
    kring_attr t = kt::attr(KRING_SOURCE_TIMER, -1, tid);
    t.sample_type = id_type;
    t.config[0] = 2000;
    ASSERT_EQ(timer.configure(t), 0);
    ASSERT_EQ(sched.open_dev(), 0);
    kring_attr s = kt::attr(KRING_SOURCE_SCHED, -1, tid);
    s.sample_type = id_type;
    s.config[0] = KRING_SCHED_CFG_WAKEUPS;
    int e = sched.configure(s);
    if (e == EOPNOTSUPP) {
        ::close(ping[1]);
        followed.join();
        GTEST_SKIP() << "no wakeup tracepoints on this kernel";
    }
    ASSERT_EQ(e, 0);
    ASSERT_EQ(sched.set_output(timer.fd), 0);
    ASSERT_EQ(timer.map_ring(8, true, false), 0);
    const std::uint64_t layout = timer.sample_type();  // id_type and SEQ
    EXPECT_EQ(sched.sample_type(), layout);
    ASSERT_EQ(timer.ioctl0(KRING_IOC_ENABLE), 0);
    ASSERT_EQ(sched.ioctl0(KRING_IOC_ENABLE), 0);
    std::uint64_t sched_id = 0;
    ASSERT_EQ(sched.ioctl_arg(KRING_IOC_ID, &sched_id), 0);
    shared_buffer_tally tally{layout, sched_id};
    auto drain = [&] { tally.drain(timer); };
    // 1.5 s at least, and on until more than 10 wakeups were recorded.
    std::atomic<bool> enough{false};
    std::thread waker([&] {
        kt::pin_to(1);
        char b;
        while (!enough && ::write(ping[1], "p", 1) == 1 && ::read(pong[0], &b, 1) == 1) {}
        stop = true;
    });
    const std::uint64_t t0 = kt::now_ns();
    while (!stop) {
        ::usleep(20000);
        drain();
        const std::uint64_t ran = kt::now_ns() - t0;
        if ((ran >= 1500000000ull && tally.wakeups > 10) ||
            ran >= std::uint64_t(std::chrono::nanoseconds(kt::patience).count()))
            enough = true;
    }
    waker.join();
    ASSERT_EQ(sched.ioctl0(KRING_IOC_DISABLE), 0);
    ASSERT_EQ(timer.ioctl0(KRING_IOC_DISABLE), 0);
    drain();
    ::close(ping[1]);
    followed.join();
    kring_stats st = timer.stats();
    std::printf("two-CPU buffer: %ld samples (%ld wakeups), %llu lost\n", tally.samples,
                tally.wakeups, (unsigned long long)tally.lost);
    EXPECT_EQ(tally.bad, 0);
    EXPECT_GT(tally.wakeups, 10);
    EXPECT_EQ(st.produced, st.written + st.lost_no_space + st.lost_too_big + st.lost_paused);
    EXPECT_EQ(std::uint64_t(tally.samples), st.written);
}

}  // namespace
