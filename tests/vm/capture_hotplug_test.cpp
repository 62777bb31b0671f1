// In the guest: a channel bound to a CPU that goes offline stops and says
// so in its control page, and resumes when the CPU returns.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "hotplug.hpp"
#include "errno_assert.hpp"

namespace {

// The /proc entries of the tasks named @comm and their scheduler states
// (the letter of /proc/PID/stat).
std::vector<std::pair<std::filesystem::path, char>> threads_named(const std::string& comm) {
    std::vector<std::pair<std::filesystem::path, char>> found;
    for (const auto& e : std::filesystem::directory_iterator("/proc")) {
        std::ifstream f(e.path() / "stat");
        std::string line;
        if (!std::getline(f, line))
            continue;
        auto open = line.find('('), close = line.rfind(')');
        if (open == std::string::npos || close == std::string::npos || close + 2 >= line.size())
            continue;
        if (line.substr(open + 1, close - open - 1) == comm)
            found.emplace_back(e.path(), line[close + 2]);
    }
    return found;
}

// The scheduler states of the kernel threads named @comm.
std::vector<char> thread_states(const std::string& comm) {
    std::vector<char> states;
    for (const auto& t : threads_named(comm))
        states.push_back(t.second);
    return states;
}

// The Cpus_allowed_list of each task named @comm.
std::vector<std::string> thread_cpus(const std::string& comm) {
    std::vector<std::string> cpus;
    for (const auto& t : threads_named(comm)) {
        std::ifstream f(t.first / "status");
        for (std::string line; std::getline(f, line);)
            if (line.rfind("Cpus_allowed_list:", 0) == 0)
                cpus.push_back(line.substr(line.find_first_not_of(" \t", 18)));
    }
    return cpus;
}

// Records of a CPU 1 channel that say another CPU.
long samples_off_cpu1(const kt::channel& c) {
    return std::count_if(c.recs.begin(), c.recs.end(),
                         [](const kt::rec& r) { return r.s.cpu != 1; });
}

TEST(CaptureHotplug, OfflineCpuStopsAndResumes) {
    if (!kt::cpu1_hotpluggable())
        GTEST_SKIP() << "CPU 1 cannot be taken offline here (" << kt::cpu1_online << ")";
    kt::channel timer, sched;
    kring_attr t = kt::attr(KRING_SOURCE_TIMER, 1, -1);
    t.config[1] = 5000000;  // 5 ms
    ASSERT_EQ(timer.open(t, 4), 0);
    ASSERT_EQ(sched.open(kt::attr(KRING_SOURCE_SCHED, 1, -1), 6), 0);
    ASSERT_EQ(timer.enable(), 0);
    ASSERT_EQ(sched.enable(), 0);
    EXPECT_TRUE(kt::wait_until([&] {
        timer.drain();
        return !timer.recs.empty();
    })) << "no sample from CPU 1";
    sched.drain();
    EXPECT_EQ(timer.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);

    kt::cpu1_online_guard guard;
    int err = kt::set_cpu1_online(false);
    if (err)
        GTEST_SKIP() << "cannot offline CPU 1: " << std::strerror(err);
    EXPECT_TRUE(timer.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE);
    EXPECT_TRUE(sched.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE);
    timer.drain();
    sched.drain();
    std::size_t at_offline = timer.recs.size(), sched_at_offline = sched.recs.size();
    ::usleep(200000);
    timer.drain();
    sched.drain();
    EXPECT_EQ(timer.recs.size(), at_offline) << "samples while the CPU was offline";
    EXPECT_EQ(sched.recs.size(), sched_at_offline) << "switches while the CPU was offline";
    // A channel cannot be bound to an offline CPU.
    kt::raw_channel late;
    ASSERT_EQ(late.open_dev(), 0);
    EXPECT_ERRNO(late.configure(kt::attr(KRING_SOURCE_SCHED, 1, -1)), EINVAL);

    ASSERT_EQ(kt::set_cpu1_online(true), 0);
    EXPECT_EQ(timer.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);
    EXPECT_EQ(sched.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);
    kt::wait_until([&] {
        timer.drain();
        sched.drain();
        return timer.recs.size() > at_offline + 5;
    });
    ASSERT_EQ(timer.disable(), 0);
    ASSERT_EQ(sched.disable(), 0);
    timer.drain();
    sched.drain();
    std::printf("hotplug: %zu samples before, %zu after the CPU returned\n", at_offline,
                timer.recs.size() - at_offline);
    EXPECT_GT(timer.recs.size(), at_offline + 5);
    EXPECT_EQ(samples_off_cpu1(timer), 0);
    EXPECT_EQ(timer.bad + sched.bad, 0u);
}

// A channel configured while its CPU was online and enabled after the CPU
// went offline: the control page says so from the enable on, nothing is
// recorded, and recording starts when the CPU returns. A channel disabled
// while the CPU is offline and enabled again after it returned does not
// keep a stale flag.
TEST(CaptureHotplug, EnableWhileCpuOffline) {
    if (!kt::cpu1_hotpluggable())
        GTEST_SKIP() << "CPU 1 cannot be taken offline here (" << kt::cpu1_online << ")";
    kt::channel timer, again;
    kring_attr t = kt::attr(KRING_SOURCE_TIMER, 1, -1);
    t.config[1] = 5000000;  // 5 ms
    ASSERT_EQ(timer.open(t, 4), 0);
    ASSERT_EQ(again.open(t, 4), 0);
    ASSERT_EQ(again.enable(), 0);

    kt::cpu1_online_guard guard;
    if (int err = kt::set_cpu1_online(false))
        GTEST_SKIP() << "cannot offline CPU 1: " << std::strerror(err);
    EXPECT_TRUE(again.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE);
    ASSERT_EQ(again.disable(), 0);
    ASSERT_EQ(timer.enable(), 0);
    EXPECT_TRUE(timer.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE)
        << "enabled on an offline CPU without saying so";
    ::usleep(200000);
    timer.drain();
    EXPECT_EQ(timer.recs.size(), 0u) << "samples from an offline CPU";

    ASSERT_EQ(kt::set_cpu1_online(true), 0);
    EXPECT_EQ(timer.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);
    ASSERT_EQ(again.enable(), 0);
    EXPECT_EQ(again.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u) << "stale offline flag";
    kt::wait_until([&] {
        timer.drain();
        again.drain();
        return timer.recs.size() > 5 && again.recs.size() > 5;
    });
    ASSERT_EQ(timer.disable(), 0);
    ASSERT_EQ(again.disable(), 0);
    timer.drain();
    again.drain();
    std::printf("hotplug, enabled while offline: %zu samples after the CPU returned\n",
                timer.recs.size());
    EXPECT_GT(timer.recs.size(), 5u) << "the source did not start when the CPU returned";
    EXPECT_GT(again.recs.size(), 5u);
    EXPECT_EQ(samples_off_cpu1(timer), 0);
    EXPECT_EQ(timer.bad + again.bad, 0u);
}

// The synthetic generator on CPU 1, with its nesting timer, while CPU 1
// goes offline and comes back. Its thread is parked before the CPU goes
// (state P while it is offline: hotplug never moves it, which on
// PREEMPT_RT broke the scheduler's bookkeeping) and runs on CPU 1 again
// once it is back. Every record is intact, says CPU 1, and the accounting
// is exact.
TEST(CaptureHotplug, SyntheticWritesOnlyOnItsCpu) {
    if (!kt::cpu1_hotpluggable() || ::geteuid() != 0)
        GTEST_SKIP() << "needs root and a CPU 1 that can go offline (" << kt::cpu1_online << ")";
    constexpr std::uint64_t type = KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 1, type);
    a.config[0] = 20000;
    a.config[2] = KRING_SYNTH_F_NEST;
    ASSERT_EQ(ch.configure(a), 0);
    const std::uint64_t layout = ch.sample_type();  // type and SEQ
    ASSERT_EQ(ch.map_ring(6, true, false), 0);
    long good = 0, bad = 0, after_return = 0;
    std::uint64_t back_at = ~0ull;
    auto drain = [&] {
        long r = ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            if (h.type != KRING_RECORD_SAMPLE)
                return;
            kt::sample s;
            std::uint32_t pcpu = 0;
            if (!kt::parse_sample(rec, layout, s) ||
                !kt::synth_payload_ok(s.raw, s.raw_size, s.seq, &pcpu) || s.cpu != 1 || pcpu != 1) {
                bad++;
                return;
            }
            good++;
            after_return += s.time > back_at;
        });
        if (r < 0)
            bad++;
    };
    auto run_for = [&](int ms) {
        for (int i = 0; i < ms / 20; i++) {
            ::usleep(20000);
            drain();
        }
    };
    kt::cpu1_online_guard guard;
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    run_for(300);
    ASSERT_EQ(kt::set_cpu1_online(false), 0);
    // Parked by the hotplug callback, before the write above returned.
    const std::vector<char> offline_states = thread_states("kring_synth/1");
    run_for(300);
    ASSERT_EQ(kt::set_cpu1_online(true), 0);
    back_at = kt::now_ns();
    kt::wait_until(
        [&] {
            drain();
            return after_return > 0;
        },
        kt::patience, std::chrono::milliseconds(20));
    run_for(300);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
    drain();
    kring_stats st = ch.stats();
    std::printf("synthetic across hotplug: %ld records, %ld after CPU 1 returned\n", good,
                after_return);
    EXPECT_EQ(bad, 0);
    EXPECT_GT(good, 0);
    EXPECT_GT(after_return, 0) << "the generator did not resume on CPU 1";
    ASSERT_EQ(offline_states.size(), 1u) << "one generator thread while CPU 1 was offline";
    EXPECT_EQ(offline_states[0], 'P') << "the generator was not parked while its CPU was offline";
    EXPECT_EQ(st.produced, st.written + st.lost_no_space + st.lost_too_big + st.lost_paused);
}

// The generator's thread stays bound to its CPU across hotplug, also when
// it wakes while the CPU is dying: the scheduler then moves a kthread that
// is not per-CPU elsewhere and widens its mask (the regression: it kept
// running on CPU 0 and reported its losses from there, into a ring that a
// sched channel on CPU 1 wrote at the same time, which the ring's CPU
// check on debug kernels reports). A stop count reached at once keeps the
// thread waking every millisecond or two to report its losses; a sched
// channel on CPU 1 writes into its buffer (set-output), and CPU 1 goes
// offline and back eight times.
TEST(CaptureHotplug, SyntheticStaysBoundToItsCpu) {
    if (!kt::cpu1_hotpluggable() || ::geteuid() != 0)
        GTEST_SKIP() << "needs root and a CPU 1 that can go offline (" << kt::cpu1_online << ")";
    kt::raw_channel synth, sched;
    ASSERT_EQ(synth.open_dev(), 0);
    ASSERT_EQ(sched.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 1, KRING_SAMPLE_TIME);
    // A stop count of 64 records of 4000 bytes: a 4-page ring nobody reads
    // loses most of them, so the loss report keeps finding no room.
    a.config[3] = 64;
    a.config[1] = 4000;
    ASSERT_EQ(synth.configure(a), 0);
    ASSERT_EQ(sched.configure(kt::make_attr(KRING_SOURCE_SCHED, 1, KRING_SAMPLE_TIME)), 0);
    ASSERT_EQ(sched.set_output(synth.fd), 0);
    ASSERT_EQ(synth.map_ring(2, true, false), 0);
    kt::cpu1_online_guard guard;
    ASSERT_EQ(synth.ioctl0(KRING_IOC_ENABLE), 0);
    ASSERT_EQ(sched.ioctl0(KRING_IOC_ENABLE), 0);
    for (int i = 0; i < 8; i++) {
        SCOPED_TRACE(i);
        ASSERT_EQ(kt::set_cpu1_online(false), 0);
        ASSERT_EQ(kt::set_cpu1_online(true), 0);
        // Unparked by the hotplug callback before the write above returned.
        const std::vector<std::string> cpus = thread_cpus("kring_synth/1");
        ASSERT_EQ(cpus.size(), 1u) << "one generator thread";
        EXPECT_EQ(cpus[0], "1") << "the generator's thread is no longer bound to CPU 1";
    }
    ASSERT_EQ(sched.ioctl0(KRING_IOC_DISABLE), 0);
    ASSERT_EQ(synth.ioctl0(KRING_IOC_DISABLE), 0);
}

// A generator asked for more records per second than its CPU can write
// falls behind for good; it must still yield its CPU (regression: it spun
// without scheduling, a soft lockup that also blocked taking the CPU
// offline). A thread pinned to the generator's CPU gets to run, and CPU 1
// goes offline and comes back while the generator runs.
TEST(CaptureHotplug, UnsustainableRateYieldsItsCpu) {
    if (!kt::cpu1_hotpluggable() || ::geteuid() != 0)
        GTEST_SKIP() << "needs root and a CPU 1 that can go offline (" << kt::cpu1_online << ")";
    // The test itself stays off CPU 1, so that it can observe a lockup.
    ASSERT_TRUE(kt::pin_to(0));
    struct unpin_at_exit {
        ~unpin_at_exit() { kt::unpin(); }
    } unpin;
    for (std::uint64_t rate : {std::uint64_t{1000000}, ~std::uint64_t{0}}) {
        SCOPED_TRACE(rate);
        kt::raw_channel ch;
        ASSERT_EQ(ch.open_dev(), 0);
        kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 1, KRING_SAMPLE_RAW);
        a.config[0] = rate;  // no stop count: runs until disabled
        ASSERT_EQ(ch.configure(a), 0);
        ASSERT_EQ(ch.map_ring(4, true, true), 0);
        kt::cpu1_online_guard guard;
        ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
        // The generator runs (and would hold CPU 1) before the thread comes.
        EXPECT_TRUE(kt::wait_until([&] { return ch.stats().produced > 0; }))
            << "the generator did not start";
        // Time from start to first run of a thread pinned to CPU 1.
        std::atomic<std::uint64_t> ran_at{0};
        const std::uint64_t t0 = kt::now_ns();
        std::atomic<bool> pinned_ok{true};
        std::thread pinned([&] {
            if (kt::pin_to(1))
                ran_at = kt::now_ns();
            else
                pinned_ok = false;
        });
        // A generator that never yields is stopped by DISABLE (it checks
        // for that between records), which lets the pinned thread run.
        kt::wait_until([&] { return ran_at.load() != 0 || !pinned_ok; }, kt::patience,
                       std::chrono::milliseconds(10));
        const bool ran = ran_at.load() != 0;
        if (!ran)
            ch.ioctl0(KRING_IOC_DISABLE);
        pinned.join();
        ASSERT_TRUE(pinned_ok) << "could not pin to CPU 1";
        ASSERT_TRUE(ran) << "a thread pinned to CPU 1 did not run in " << kt::patience.count()
                         << " s: the generator does not yield its CPU";
        std::printf("rate %llu: a thread pinned to the generator's CPU ran after %.1f ms\n",
                    static_cast<unsigned long long>(rate),
                    static_cast<double>(ran_at.load() - t0) / 1e6);
        ASSERT_EQ(kt::set_cpu1_online(false), 0);
        ::usleep(100000);
        ASSERT_EQ(kt::set_cpu1_online(true), 0);
        ::usleep(100000);
        EXPECT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
        kring_stats st = ch.stats();
        EXPECT_GT(st.produced, 0u);
    }
}

}  // namespace
