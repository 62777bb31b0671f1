// In the guest: record clocks, TSC conversion and the timestamp floor.
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

#include "capture.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

namespace {

std::uint64_t load_floor(const kring_ctl_page* ctl) {
    // Acquire: pairs with the kernel's smp_store_release() of the floor in
    // kring_floor_advance(); the data_head load comes after it.
    return __atomic_load_n(&ctl->timestamp_floor, __ATOMIC_ACQUIRE);
}

long switches_of_thread() {
    rusage ru;
    ::getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

// A per-thread sched channel on each clock: the records of a sleep lie
// between user-space readings of the same clock.
TEST(CaptureTime, ClockChoice) {
    struct {
        std::uint32_t id;
        clockid_t posix;
    } clocks[] = {{KRING_CLOCK_DEFAULT, CLOCK_MONOTONIC},
                  {KRING_CLOCK_MONOTONIC, CLOCK_MONOTONIC},
                  {KRING_CLOCK_MONOTONIC_RAW, CLOCK_MONOTONIC_RAW},
                  {KRING_CLOCK_BOOTTIME, CLOCK_BOOTTIME}};
    for (auto c : clocks) {
        kt::channel ch;
        kring_attr a = kt::attr(KRING_SOURCE_SCHED, -1, 0);
        a.clockid = c.id;
        ASSERT_EQ(ch.open(a, 4), 0) << "clock " << c.id;
        ASSERT_EQ(ch.enable(), 0);
        // A sleep whose timer expires before the thread gets to schedule()
        // (its vCPU stalled) does not switch: getrusage(), read inside the
        // clock window, tells, and such a sleep is taken again (for as long
        // as it takes). A switch it counts lies between the clock reads,
        // with its switch back in.
        std::uint64_t t0 = 0, t1 = 0;
        long switched = 0;
        int sleeps = 0;
        const auto deadline = std::chrono::steady_clock::now() + kt::patience;
        while (!switched && std::chrono::steady_clock::now() < deadline) {
            t0 = kt::now_ns(c.posix);
            long sw0 = switches_of_thread();
            ::usleep(2000);
            long sw1 = switches_of_thread();
            t1 = kt::now_ns(c.posix);
            switched = sw1 - sw0;
            sleeps++;
        }
        ASSERT_EQ(ch.disable(), 0);
        ASSERT_GE(ch.drain(), 0) << "clock " << c.id << ": malformed record";
        long inside = 0;
        for (const auto& r : ch.recs)
            inside += r.s.time >= t0 && r.s.time <= t1;
        ASSERT_GT(switched, 0) << "clock " << c.id << ": " << sleeps << " sleeps, none switched";
        if (sleeps > 1)
            std::printf("clock %u: %d sleeps until one switched\n", c.id, sleeps);
        EXPECT_GE(inside, 2 * switched)
            << "clock " << c.id << ": " << ch.recs.size() << " records, " << switched
            << " switches, " << ch.lost << " lost, " << ch.bad << " bad";
    }
    kt::raw_channel local;
    ASSERT_EQ(local.open_dev(), 0);
    kring_attr a = kt::attr(KRING_SOURCE_SCHED, -1, 0);
    a.clockid = KRING_CLOCK_LOCAL;
    EXPECT_EQ(local.configure(a), 0);
}

// System-wide sched capture while two tasks play ping-pong: each buffer's
// records never go back in time, and no record written after a floor was
// read is below that floor. At least 300 rounds, and on until a floor has
// moved (its tick runs every 10 ms, when the host lets it).
TEST(CaptureTime, NonDecreasingAndFloor) {
    int n = kt::online_cpus();
    std::vector<kt::channel> chans(n);
    for (int c = 0; c < n; c++) {
        ASSERT_EQ(chans[c].open(kt::attr(KRING_SOURCE_SCHED, c, -1), 7), 0);
        EXPECT_EQ(chans[c].ch.ctl->timestamp_floor, 0u);
    }
    int a[2], b[2];
    ASSERT_EQ(::pipe(a), 0);
    ASSERT_EQ(::pipe(b), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char x;
        while (::read(a[0], &x, 1) == 1 && x != 'q')
            if (::write(b[1], &x, 1) != 1)
                break;
        ::_exit(0);
    }
    for (auto& c : chans)
        ASSERT_EQ(c.enable(), 0);
    std::vector<std::uint64_t> floor(n, 0);
    long below = 0, checked = 0, floors_seen = 0, floor_moves = 0;
    const auto deadline = std::chrono::steady_clock::now() + kt::patience;
    for (int round = 0;
         round < 300 || (floor_moves == 0 && std::chrono::steady_clock::now() < deadline);
         round++) {
        char x = 'p';
        ASSERT_EQ(::write(a[1], &x, 1), 1);
        ASSERT_EQ(::read(b[0], &x, 1), 1);
        for (int c = 0; c < n; c++) {
            std::uint64_t f = load_floor(chans[c].ch.ctl);  // before the head
            std::size_t from = chans[c].recs.size();
            chans[c].drain();
            // These records were all committed after floor[c] was read.
            for (std::size_t i = from; i < chans[c].recs.size(); i++, checked++)
                below += chans[c].recs[i].s.time < floor[c];
            if (f)
                floors_seen++;
            if (f > floor[c] && floor[c])
                floor_moves++;
            EXPECT_GE(f, floor[c]) << "the floor went down";
            floor[c] = f;
        }
    }
    ASSERT_EQ(::write(a[1], "q", 1), 1);
    ::waitpid(child, nullptr, 0);
    std::uint64_t records = 0, decreasing = 0, bad = 0, lost = 0;
    for (int k = 0; k < n; k++) {
        auto& c = chans[k];
        ASSERT_EQ(c.disable(), 0);
        std::size_t from = c.recs.size();
        c.drain();
        for (std::size_t i = from; i < c.recs.size(); i++)
            below += c.recs[i].s.time < floor[k];
        records += c.recs.size();
        decreasing += c.decreasing;
        bad += c.bad;
        lost += c.lost;
    }
    std::printf(
        "floor: %lu records on %d CPUs, %ld checked against a floor, %ld floors read, "
        "%ld moves\n",
        (unsigned long)records, n, checked, floors_seen, floor_moves);
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(lost, 0u);
    EXPECT_GT(records, 600u);
    EXPECT_EQ(decreasing, 0u);
    EXPECT_EQ(below, 0);
    EXPECT_GT(floors_seen, 0);
    EXPECT_GT(floor_moves, 0);
}

// A bound channel that records nothing (it follows a task that sleeps)
// still gets a floor that follows the clock: the merge of several CPUs'
// buffers does not wait for a quiet one. The floor is never ahead of the
// clock, and it passes any time the clock showed, again and again (how
// far behind it lags is up to when its tick runs: printed).
TEST(CaptureTime, FloorMovesOnQuietBuffer) {
    pid_t sleeper = ::fork();
    ASSERT_GE(sleeper, 0);
    if (sleeper == 0) {
        ::pause();
        ::_exit(0);
    }
    kt::channel ch;
    ASSERT_EQ(ch.open(kt::attr(KRING_SOURCE_SCHED, 0, sleeper), 2), 0);
    ASSERT_EQ(ch.enable(), 0);
    std::int64_t worst = 0;
    for (int i = 0; i < 20; i++) {
        ::usleep(20000);
        // The floor first, then the clock: the floor tick may publish a new
        // floor at any moment, and one published after a clock read would
        // be later than that "now". Read in this order, f <= now holds by
        // construction, and now - f is an upper bound of the lag.
        std::uint64_t f = load_floor(ch.ch.ctl);
        std::uint64_t now = kt::now_ns();
        std::int64_t lag = f ? std::int64_t(now - f) : 0;  // none yet: the wait below
        worst = std::max(worst, lag);
        EXPECT_LE(f, now) << "a floor in the future";
    }
    for (int i = 0; i < 3; i++) {
        const std::uint64_t mark = kt::now_ns();
        EXPECT_TRUE(kt::wait_until([&] { return load_floor(ch.ch.ctl) >= mark; }))
            << "the floor of a quiet buffer stopped below " << mark;
    }
    ASSERT_EQ(ch.disable(), 0);
    ::kill(sleeper, SIGKILL);
    ::waitpid(sleeper, nullptr, 0);
    ch.drain();
    std::printf("quiet buffer: %zu records, floor at most %.1f ms behind the clock\n",
                ch.recs.size(), double(worst) / 1e6);
}

// Where the control page offers TSC conversion, it agrees with the record
// clock (MONOTONIC_RAW) to within 100 us.
TEST(CaptureTime, TscConversion) {
#if defined(__x86_64__)
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_SCHED, -1, 0);
    a.clockid = KRING_CLOCK_MONOTONIC_RAW;
    ASSERT_EQ(ch.open(a, 2), 0);
    const kring_ctl_page* p = ch.ch.ctl;
    if (!(p->capabilities & KRING_CAP_USER_TIME_ZERO)) {
        EXPECT_EQ(p->capabilities & KRING_CAP_USER_TIME, 0u);
        GTEST_SKIP() << "no cap_user_time_zero: this CPU's TSC is not constant and non-stop";
    }
    ASSERT_TRUE(p->capabilities & KRING_CAP_USER_TIME);
    std::int64_t worst = 0;
    for (int i = 0; i < 100; i++) {
        // The TSC read bracketed by the clock: lfence keeps the (otherwise
        // unordered) rdtsc between the two clock reads, as the kernel's
        // rdtsc_ordered() does.
        std::uint64_t t0 = kt::now_ns(CLOCK_MONOTONIC_RAW);
        _mm_lfence();
        std::uint64_t cyc = __rdtsc();
        _mm_lfence();
        std::uint64_t t1 = kt::now_ns(CLOCK_MONOTONIC_RAW);
        std::uint64_t quot = cyc >> p->time_shift;
        std::uint64_t rem = cyc & ((1ull << p->time_shift) - 1);
        std::uint64_t ns =
            p->time_zero + quot * p->time_mult + ((rem * p->time_mult) >> p->time_shift);
        std::int64_t err = ns < t0 ? std::int64_t(t0 - ns) : ns > t1 ? std::int64_t(ns - t1) : 0;
        worst = std::max(worst, err);
        ::usleep(1000);
    }
    std::printf("TSC conversion: worst disagreement %ld ns\n", (long)worst);
    EXPECT_LT(worst, 100000);
#else
    GTEST_SKIP() << "TSC conversion is x86 only";
#endif
}

}  // namespace
