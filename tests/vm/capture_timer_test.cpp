// In the guest: the timer source samples a busy loop at the requested
// frequency and finds its instruction pointers inside the loop.
#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"

// The busy loop lives in its own section so its address range is known:
// the linker defines __start_/__stop_ symbols for it.
extern "C" const char __start_kring_spin[];
extern "C" const char __stop_kring_spin[];

namespace {

__attribute__((noinline, section("kring_spin"))) void spin_chunk(volatile std::uint64_t* x) {
    for (int i = 0; i < 20000; i++)
        *x = *x * 3 + i;
}

TEST(CaptureTimer, RefusesBadConfig) {
    kt::raw_channel a, b, c;
    ASSERT_EQ(a.open_dev(), 0);
    EXPECT_ERRNO(a.configure(kt::attr(KRING_SOURCE_TIMER, -1, 0)), EINVAL);  // no frequency
    ASSERT_EQ(b.open_dev(), 0);
    kring_attr at = kt::attr(KRING_SOURCE_TIMER, -1, 0);
    at.config[0] = 1000000;
    EXPECT_ERRNO(b.configure(at), EINVAL);
    ASSERT_EQ(c.open_dev(), 0);
    at = kt::attr(KRING_SOURCE_TIMER, -1, 0);
    at.config[1] = 100;  // 100 ns
    EXPECT_ERRNO(c.configure(at), EINVAL);
}

// Per-thread timer on this thread at 200 Hz while it spins for 2 s of CPU
// time: the periods the samples cover are within 10% of frequency x CPU
// time, and the user-mode samples' IPs fall inside the loop.
TEST(CaptureTimer, PerThreadCountAndIps) {
    const unsigned hz = 200;
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, -1, 0);
    a.config[0] = hz;
    ASSERT_EQ(ch.open(a, 6), 0);
    volatile std::uint64_t x = 1;
    const std::uint64_t want_cpu = 2000000000ull;
    ASSERT_EQ(ch.enable(), 0);
    std::uint64_t c0 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID);
    std::uint64_t c1 = c0;
    while (c1 - c0 < want_cpu) {
        for (int i = 0; i < 10; i++)
            spin_chunk(&x);
        c1 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    const std::uint32_t self = kt::gettid_();
    long user = 0, in_loop = 0, foreign = 0;
    std::uint64_t weighted = 0;
    for (const auto& r : ch.recs) {
        if (r.s.tid != self)
            foreign++;
        weighted += r.s.period;
        if (r.timer.flags & KRING_TIMER_F_USER) {
            user++;
            const char* ip = reinterpret_cast<const char*>(r.s.ip);
            if (ip >= __start_kring_spin && ip < __stop_kring_spin)
                in_loop++;
        }
    }
    double expected = double(hz) * double(c1 - c0) / 1e9;
    double got = double(ch.recs.size());
    std::printf(
        "timer: %zu samples (%.1f weighted by period), expected %.1f (%u Hz x %.3f s CPU); "
        "%ld user, %ld in the loop\n",
        ch.recs.size(), double(weighted) * hz / 1e9, expected, hz, double(c1 - c0) / 1e9, user,
        in_loop);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_EQ(ch.lost, 0u);
    EXPECT_EQ(foreign, 0);
    // A late expiry (a busy host stalls the emulated CPU) folds periods into
    // one sample whose PERIOD says so: the periods covered are what must
    // match the CPU time; how many samples carry them depends on the
    // host's pace (printed above, not asserted).
    double periods = double(weighted) * hz / 1e9;
    EXPECT_NEAR(periods, expected, expected * 0.10);
    EXPECT_GT(got, 0);
    EXPECT_GT(user, long(got * 0.5));
    EXPECT_GE(double(in_loop), double(user) * 0.9);
}

// With KRING_ATTR_F_EXCLUDE_KERNEL a thread that spends most of its time in
// system calls gets user-mode samples only. It runs for at least 0.5 s of
// CPU time and until 21 samples were written (how many come in a given
// time depends on the host's pace).
TEST(CaptureTimer, ExcludeKernel) {
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, -1, 0, KRING_ATTR_F_EXCLUDE_KERNEL);
    a.config[0] = 500;
    ASSERT_EQ(ch.open(a, 4), 0);
    ASSERT_EQ(ch.enable(), 0);
    std::uint64_t c0 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID), c1 = c0;
    volatile std::uint64_t x = 1;
    const auto deadline = std::chrono::steady_clock::now() + kt::patience;
    while ((c1 - c0 < 500000000ull || ch.recs.size() <= 20) &&
           std::chrono::steady_clock::now() < deadline) {
        for (int i = 0; i < 200; i++)
            ::syscall(SYS_getppid);
        spin_chunk(&x);
        c1 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID);
        if (c1 - c0 >= 500000000ull)
            ch.drain();
    }
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    // A kernel address has its top bit set on x86-64 and arm64 alike (a
    // user one may be above 2^47 on arm64: 48- and 52-bit user spaces).
    long kernel = 0;
    for (const auto& r : ch.recs)
        kernel += !(r.timer.flags & KRING_TIMER_F_USER) || (r.s.ip >> 63) != 0;
    std::printf("exclude-kernel: %zu samples, %ld in kernel mode\n", ch.recs.size(), kernel);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_GT(ch.recs.size(), 20u);
    EXPECT_EQ(kernel, 0);
}

// A per-CPU timer samples whatever runs on its CPU, idle included, and only
// there, and keeps sampling: it runs until it has written a sample at least
// 500 ms after the enable, and its samples cover the periods from the
// enable to the last one (a late expiry folds periods into one sample).
TEST(CaptureTimer, PerCpuSamplesItsCpu) {
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, 0, -1);
    a.config[1] = 10000000;  // 10 ms
    ASSERT_EQ(ch.open(a, 6), 0);
    std::uint64_t t0 = kt::now_ns();
    ASSERT_EQ(ch.enable(), 0);
    auto last_time = [&] { return ch.recs.empty() ? 0 : ch.recs.back().s.time; };
    EXPECT_TRUE(kt::wait_until(
        [&] {
            ch.drain();
            return last_time() >= t0 + 500000000ull;
        },
        kt::patience, std::chrono::milliseconds(20)))
        << "no sample 500 ms after the enable";
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    long wrong_cpu = 0;
    std::uint64_t weighted = 0, t1 = t0;
    for (const auto& r : ch.recs) {
        wrong_cpu += r.s.cpu != 0 || r.timer.cpu != 0;
        weighted += r.s.period;
        t1 = std::max(t1, r.s.time);
    }
    double expected = double(t1 - t0) / 1e7;
    std::printf("per-CPU timer: %zu samples, %.1f periods covered, %.1f expected\n", ch.recs.size(),
                double(weighted) / 1e7, expected);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_EQ(wrong_cpu, 0);
    EXPECT_NEAR(double(weighted) / 1e7, expected, expected * 0.10 + 1);
}

}  // namespace
