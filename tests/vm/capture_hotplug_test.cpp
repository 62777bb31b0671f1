// In the guest: a channel bound to a CPU that goes offline stops and says
// so in its control page, and resumes when the CPU returns.
#include <algorithm>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "hotplug.hpp"

namespace {

// Records of a CPU 1 channel that say another CPU.
long samples_off_cpu1(const cap::channel& c) {
    return std::count_if(c.recs.begin(), c.recs.end(),
                         [](const cap::rec& r) { return r.s.cpu != 1; });
}

TEST(CaptureHotplug, OfflineCpuStopsAndResumes) {
    if (!kt::cpu1_hotpluggable())
        GTEST_SKIP() << "CPU 1 cannot be taken offline here (" << kt::cpu1_online << ")";
    cap::channel timer, sched;
    kring_attr t = cap::attr(KRING_SOURCE_TIMER, 1, -1);
    t.config[1] = 5000000;  // 5 ms
    ASSERT_EQ(timer.open(t, 4), 0);
    ASSERT_EQ(sched.open(cap::attr(KRING_SOURCE_SCHED, 1, -1), 6), 0);
    ASSERT_EQ(timer.enable(), 0);
    ASSERT_EQ(sched.enable(), 0);
    ::usleep(100000);
    timer.drain();
    sched.drain();
    std::size_t before = timer.recs.size();
    EXPECT_GT(before, 0u);
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
    EXPECT_EQ(late.configure(cap::attr(KRING_SOURCE_SCHED, 1, -1)), EINVAL);

    ASSERT_EQ(kt::set_cpu1_online(true), 0);
    EXPECT_EQ(timer.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);
    EXPECT_EQ(sched.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);
    ::usleep(200000);
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
    cap::channel timer, again;
    kring_attr t = cap::attr(KRING_SOURCE_TIMER, 1, -1);
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
    ::usleep(200000);
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

}  // namespace
