// In the guest: what the scheduler probes cost one user for the capture
// channels of another (kmod/capture.c), counted, not timed: the probes
// count each channel they hand an event in debugfs kring/capture_visits.
// And kring.max_user_captures, the bound on one user's enabled capture
// channels.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"

namespace {

bool is_root() { return ::geteuid() == 0; }
bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

// The probes' visits so far, -1 without debugfs or the counter.
long visits() {
    std::ifstream f("/sys/kernel/debug/kring/capture_visits");
    long v = -1;
    f >> v;
    return f ? v : -1;
}

// The calling thread's context switches (out) so far.
long switches_of_thread() {
    rusage ru{};
    ::getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

// A child that, as nobody, enables @n sched channels following itself
// (every other one with inherit), says so on @ready and sleeps until @go
// has something or is closed: channels of another user, whose task does
// nothing while they are enabled. Returns its pid, or -1.
pid_t foreign_channels(int n, const int ready_pipe[2], const int go_pipe[2]) {
    int ready = ready_pipe[1], go = go_pipe[0], mine[2] = {ready_pipe[0], go_pipe[1]};
    return kt::fork_child([=] {
        // The parent's ends: @go reads an end of file once the parent closes its own.
        ::close(mine[0]);
        ::close(mine[1]);
        rlimit nofile{static_cast<rlim_t>(n + 64), static_cast<rlim_t>(n + 64)};
        if (::setrlimit(RLIMIT_NOFILE, &nofile) || !kt::become_nobody())
            return 1;
        std::vector<std::unique_ptr<kt::raw_channel>> chans;
        for (int i = 0; i < n; i++) {
            auto c = std::make_unique<kt::raw_channel>();
            std::uint64_t flags = i % 2 ? KRING_ATTR_F_INHERIT : 0;
            if (c->open_dev() || c->configure(kt::attr(KRING_SOURCE_SCHED, -1, 0, flags)) ||
                c->ioctl0(KRING_IOC_ENABLE))
                return 2;
            chans.push_back(std::move(c));
        }
        char b = 1;
        if (::write(ready, &b, 1) != 1)
            return 3;
        (void)!::read(go, &b, 1);
        return 0;
    });
}

// The visits of @rounds pipe round trips between this thread, followed by
// a channel of its own, and a child; *@sw its switches meanwhile.
long pingpong_visits(int rounds, long* sw) {
    int to_child[2], to_parent[2];
    if (::pipe(to_child) || ::pipe(to_parent))
        return -1;
    pid_t child = kt::fork_child([&] {
        char b;
        for (int i = 0; i < rounds; i++)
            if (::read(to_child[0], &b, 1) != 1 || ::write(to_parent[1], &b, 1) != 1)
                return 1;
        return 0;
    });
    kt::channel own;
    long v = -1;
    if (child > 0 && own.open(kt::attr(KRING_SOURCE_SCHED, -1, 0)) == 0 && own.enable() == 0) {
        char b = 'x';
        long sw0 = switches_of_thread();
        long v0 = visits();
        int i = 0;
        for (; i < rounds; i++)
            if (::write(to_child[1], &b, 1) != 1 || ::read(to_parent[0], &b, 1) != 1)
                break;
        v = visits() - v0;
        *sw = switches_of_thread() - sw0;
        own.disable();
        if (i < rounds)
            v = -1;
    }
    for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]})
        ::close(fd);
    if (child > 0 && !exited_ok(kt::wait_child(child)))
        v = -1;
    return v;
}

// One user's 1024 enabled sched channels (half of them inheriting) cost
// another user's context switches nothing: the probes hand an event only
// to the channels of its CPU and of its tasks. Root's thread, followed by
// its own channel, ping-pongs with a child; each of its switches (out, and
// in again) and wakeups may visit that channel, once each: about three
// visits a round trip, where a walk of every enabled channel makes
// thousands.
TEST(CaptureHook, ForeignChannelsAreNotVisited) {
    kt::module_param captures("max_user_captures");
    if (!is_root() || visits() < 0)
        GTEST_SKIP() << "needs root and debugfs kring/capture_visits";
    if (captures.usable()) {
        ASSERT_TRUE(captures.set("0"));  // no bound: 1024 for nobody
    }
    const int foreign = 1024, rounds = 200;
    int ready[2], go[2];
    ASSERT_EQ(::pipe2(ready, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    pid_t child = foreign_channels(foreign, ready, go);
    ASSERT_GT(child, 0);
    ::close(ready[1]);
    ::close(go[0]);
    char b = 0;
    bool up = ::read(ready[0], &b, 1) == 1;
    long sw = 0, v = up ? pingpong_visits(rounds, &sw) : -1;
    ::close(go[1]);  // the child wakes, closes its channels and exits
    int status = kt::wait_child(child);
    ::close(ready[0]);
    ASSERT_TRUE(up) << "the foreign channels were not enabled: status " << status;
    EXPECT_TRUE(exited_ok(status)) << status;
    ASSERT_GE(v, 0) << "the ping-pong failed";
    std::printf("%d round trips: %ld switches, %ld visits with %d foreign channels enabled\n",
                rounds, sw, v, foreign);
    EXPECT_GT(sw, 0);
    // Each switch visits the own channel as it goes out and as it comes
    // in; each round trip wakes the thread at most once.
    EXPECT_LE(v, 2 * (sw + 1) + rounds + 16) << "the probes visit other users' channels";
}

// kring.max_user_captures bounds the capture channels one user without
// CAP_PERFMON has enabled: ENOSPC beyond it, a disable frees a place;
// root is not bound.
TEST(CaptureHook, EnabledCapturesPerUserAreBounded) {
    kt::module_param captures("max_user_captures");
    if (!is_root() || !captures.usable())
        GTEST_SKIP() << "needs root and kring's max_user_captures parameter";
    ASSERT_TRUE(captures.set("4"));
    int status = kt::in_child([] {
        if (!kt::become_nobody())
            return 1;
        std::vector<std::unique_ptr<kt::raw_channel>> chans;
        for (int i = 0; i < 5; i++) {
            auto c = std::make_unique<kt::raw_channel>();
            if (c->open_dev() || c->configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)))
                return 2;
            chans.push_back(std::move(c));
        }
        for (int i = 0; i < 4; i++)
            if (chans[i]->ioctl0(KRING_IOC_ENABLE))
                return 3;
        if (chans[4]->ioctl0(KRING_IOC_ENABLE) != ENOSPC)
            return 4;
        if (chans[0]->ioctl0(KRING_IOC_DISABLE) || chans[4]->ioctl0(KRING_IOC_ENABLE))
            return 5;
        // A close of an enabled channel frees its place too.
        chans[1].reset();
        return chans[0]->ioctl0(KRING_IOC_ENABLE) ? 6 : 0;
    });
    EXPECT_TRUE(exited_ok(status))
        << "status " << status << " (3: refused under the bound, 4: not ENOSPC beyond it, "
        << "5: a disable freed no place, 6: a close freed no place)";
    std::vector<std::unique_ptr<kt::raw_channel>> root;
    for (int i = 0; i < 8; i++) {
        auto c = std::make_unique<kt::raw_channel>();
        ASSERT_EQ(c->open_dev(), 0);
        ASSERT_EQ(c->configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)), 0);
        EXPECT_EQ(c->ioctl0(KRING_IOC_ENABLE), 0) << "root was refused capture " << i;
        root.push_back(std::move(c));
    }
}

}  // namespace
