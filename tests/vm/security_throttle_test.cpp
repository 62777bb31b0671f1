// In the guest: what samples may cost the machine (docs/SECURITY.md).
// Hard-irq samples are throttled by rate and by CPU time and counted, a
// throttled timer stops interrupting, and the floor ticks of a CPU's
// channels share interrupts.
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "security.hpp"

using kt::is_root;

namespace {

// Samples of a timer channel on CPU 0 in 10 ms windows of the record clock
// (throttle.c's windows, aligned on the same monotonic clock).
struct timer_run {
    std::uint64_t written = 0, throttled = 0;
    std::uint64_t sampled_ns = 0;  // the PERIOD of the samples written, summed
    int max_per_window = 0;
    // From ENABLE's return to the last sample's time: every period in
    // there was accounted for by the time that sample was written (a
    // timer held up at the end, on a loaded host, counts its periods
    // only when it fires, and DISABLE may come first).
    double accounted_secs = 0;
};

// Runs the timer for @ms at least, and on until it has written a sample
// and, when @throttle, had one throttled (how many come in a given time
// depends on the host's pace), for at most kt::patience.
timer_run run_timer(std::uint64_t hz, int ms, bool throttle = false) {
    timer_run t;
    kt::channel c;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, 0, -1);
    a.config[0] = hz;
    EXPECT_EQ(c.open(a, 8), 0);
    EXPECT_EQ(c.enable(), 0);
    const std::uint64_t on = kt::now_ns();
    for (int i = 0; i < ms / 20; i++) {
        ::usleep(20000);
        c.drain();
    }
    kt::wait_until(
        [&] {
            c.drain();
            return !c.recs.empty() && (!throttle || c.ch.stats().throttled > 0);
        },
        kt::patience, std::chrono::milliseconds(20));
    EXPECT_EQ(c.disable(), 0);
    c.drain();
    kring_stats st = c.ch.stats();
    EXPECT_GE(st.size, std::uint32_t(KRING_STATS_SIZE_VER1));
    EXPECT_EQ(c.bad, 0u);
    std::map<std::uint64_t, int> windows;
    std::uint64_t last = on;
    for (const kt::rec& r : c.recs) {
        t.max_per_window = std::max(t.max_per_window, ++windows[r.s.time / 10000000]);
        t.sampled_ns += r.s.period;
        last = std::max(last, r.s.time);
    }
    t.accounted_secs = double(last - on) / 1e9;
    t.written = c.recs.size();
    t.throttled = st.throttled;
    return t;
}

// kring.max_sample_rate bounds the samples one CPU writes per second; the
// dropped ones are counted in the channel's throttled figure.
TEST(Security, SampleRateIsThrottled) {
    kt::module_param rate("max_sample_rate"), pct("cpu_time_max_percent");
    if (!is_root() || !rate.usable() || !pct.usable())
        GTEST_SKIP() << "needs root and kring's throttle parameters";
    ASSERT_TRUE(pct.set("0"));
    ASSERT_TRUE(rate.set("500"));  // 5 per 10 ms window
    timer_run t = run_timer(5000, 1000, true);
    std::printf("max_sample_rate=500: %llu written, %llu throttled, at most %d per 10 ms\n",
                (unsigned long long)t.written, (unsigned long long)t.throttled, t.max_per_window);
    EXPECT_GT(t.written, 0u);
    EXPECT_GT(t.throttled, 0u);
    // A sample admitted at the end of a window may carry a time just past it.
    EXPECT_LE(t.max_per_window, 5 + 1);
}

// Local timer interrupts CPU 0 has taken (/proc/interrupts, LOC), -1 when
// the kernel does not say.
// CPU 0's local timer interrupts: the LOC line on x86-64, the arch_timer
// line on arm64 (" 11:  1234  567  GICv3  30 Level  arch_timer"); -1 if
// there is neither.
long cpu0_timer_interrupts() {
    long n = kt::proc_value("/proc/interrupts", " LOC: %ld");
    if (n >= 0)
        return n;
    std::ifstream f("/proc/interrupts");
    std::string line;
    while (std::getline(f, line)) {
        if (line.size() < 10 || line.compare(line.size() - 10, 10, "arch_timer") != 0)
            continue;
        long irq = 0;
        if (std::sscanf(line.c_str(), " %ld: %ld", &irq, &n) == 2)
            return n;
    }
    return -1;
}

// A throttled timer does not tick again before the CPU's next window: a
// 20 kHz timer limited to 500 samples per second costs CPU 0 about the
// interrupts of the samples it may write and one per 10 ms window, not
// one per period (the periods skipped are counted as throttled).
TEST(Security, ThrottledTimerStopsInterrupting) {
    kt::module_param rate("max_sample_rate"), pct("cpu_time_max_percent");
    if (!is_root() || !rate.usable() || !pct.usable())
        GTEST_SKIP() << "needs root and kring's throttle parameters";
    long before = cpu0_timer_interrupts();
    if (before < 0)
        GTEST_SKIP() << "no LOC line in /proc/interrupts";
    ASSERT_TRUE(pct.set("0"));
    ASSERT_TRUE(rate.set("500"));
    const std::uint64_t t0 = kt::now_ns();
    timer_run t = run_timer(20000, 1000, true);
    long taken = cpu0_timer_interrupts() - before;
    const double secs = double(kt::now_ns() - t0) / 1e9;
    // Every period of the timer is accounted for: in a sample's PERIOD
    // (more than one when the timer fired late, e.g. on a loaded host)
    // or throttled, the periods skipped to the next window.
    const std::uint64_t sampled = t.sampled_ns / 50000;  // 20 kHz: 50 us
    const double due = 20000 * t.accounted_secs;
    std::printf(
        "20 kHz timer at max_sample_rate=500: %llu written (%llu periods), %llu throttled, "
        "of %.0f periods due; %ld timer interrupts on CPU 0 in %.2f s\n",
        (unsigned long long)t.written, (unsigned long long)sampled, (unsigned long long)t.throttled,
        due, taken, secs);
    EXPECT_GT(t.written, 0u);
    EXPECT_LE(t.max_per_window, 5 + 1);
    EXPECT_GT(t.throttled, 0u);
    // Up to the last sample every period is counted; the margin is for
    // the clock reads around ENABLE and rounding.
    EXPECT_GE(double(t.throttled + sampled), 0.9 * due - 400)
        << "periods of a throttled timer went uncounted";
    // 500 samples, 100 windows, the kernel's own tick (HZ <= 1000) and
    // other timers a second: far below the 20000 periods. (A loaded host
    // stretches the run: counted per second of it.)
    EXPECT_LT(taken, 5000 * secs) << "a throttled timer still interrupts every period";
}

// Every channel bound to a CPU has a floor tick there (kring.floor_tick_us,
// 10 ms by default, hard irq). The ticks are aligned on their period, so
// the ticks of 200 channels bound to CPU 0 expire together: about 100
// interrupts a second, not 20000.
TEST(Security, FloorTicksOfManyChannelsShareOneInterrupt) {
    if (!is_root())
        GTEST_SKIP() << "per-CPU capture needs privilege";
    if (kt::read_sysfs("/sys/module/kring/parameters/floor_tick_us") != "10000")
        GTEST_SKIP() << "kring.floor_tick_us is not the default 10000";
    long before = cpu0_timer_interrupts();
    if (before < 0)
        GTEST_SKIP() << "no LOC line in /proc/interrupts";
    std::vector<std::unique_ptr<kt::raw_channel>> chans;
    for (int i = 0; i < 200; i++) {
        auto c = std::make_unique<kt::raw_channel>();
        ASSERT_EQ(c->open_dev(), 0);
        ASSERT_EQ(c->configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
        ASSERT_EQ(c->map_ring(0, true, false), 0);
        ASSERT_EQ(c->ioctl0(KRING_IOC_ENABLE), 0);
        chans.push_back(std::move(c));
    }
    long start = cpu0_timer_interrupts();
    const std::uint64_t t0 = kt::now_ns();
    ::usleep(1000000);
    long taken = cpu0_timer_interrupts() - start;
    const double secs = double(kt::now_ns() - t0) / 1e9;
    for (auto& c : chans)
        EXPECT_EQ(c->ioctl0(KRING_IOC_DISABLE), 0);
    std::printf("200 channels bound to CPU 0: %ld timer interrupts there in %.2f s\n", taken, secs);
    // 100 floor ticks, the kernel's own tick (HZ <= 1000) and other timers
    // a second (the sleep lasts longer on a loaded host: per second of it).
    EXPECT_LT(taken, 5000 * secs) << "the floor ticks of the channels do not share interrupts";
}

// kring.cpu_time_max_percent is wired to the samples' time: with it off
// nothing is throttled; at 1 % (100 us of each 10 ms window) timer samples
// on CPU 0 are throttled and counted. How many run per window depends on
// what a sample costs on this machine, and is checked on a driven clock in
// KUnit (kring_throttle); here 32 timers on one CPU make sure a window sees
// far more than 100 us of samples, whether their interrupts come on time
// (6400 ticks a window) or late, all due at once (a loaded host).
TEST(Security, CpuTimeIsThrottled) {
    kt::module_param rate("max_sample_rate"), pct("cpu_time_max_percent");
    if (!is_root() || !rate.usable() || !pct.usable())
        GTEST_SKIP() << "needs root and kring's throttle parameters";
    ASSERT_TRUE(rate.set("0"));
    ASSERT_TRUE(pct.set("0"));
    timer_run free = run_timer(20000, 200);
    EXPECT_GT(free.written, 0u);
    EXPECT_EQ(free.throttled, 0u) << "throttled with both limits off";

    ASSERT_TRUE(pct.set("1"));
    std::vector<kt::channel> chans(32);
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, 0, -1);
    a.config[0] = 20000;
    for (kt::channel& c : chans)
        ASSERT_EQ(c.open(a, 2), 0);
    for (kt::channel& c : chans)
        ASSERT_EQ(c.enable(), 0);
    std::uint64_t throttled = 0;
    const bool seen = kt::wait_until(
        [&] {
            throttled = 0;
            for (kt::channel& c : chans) {
                c.drain();
                throttled += c.ch.stats().throttled;
            }
            return throttled > 0;
        },
        kt::patience, std::chrono::milliseconds(20));
    std::uint64_t written = 0;
    for (kt::channel& c : chans) {
        EXPECT_EQ(c.disable(), 0);
        c.drain();
        written += c.recs.size();
        EXPECT_EQ(c.bad, 0u);
    }
    std::printf(
        "cpu_time_max_percent: off %llu written, %llu throttled; 1%% with 32 timers "
        "%llu written, %llu throttled\n",
        (unsigned long long)free.written, (unsigned long long)free.throttled,
        (unsigned long long)written, (unsigned long long)throttled);
    EXPECT_TRUE(seen) << "no sample throttled at 1 % in " << kt::patience.count() << " s";
    EXPECT_GT(written, 0u);
}

}  // namespace
