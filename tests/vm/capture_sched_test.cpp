// In the guest: the sched source in per-thread, per-CPU and default
// (inherit) modes, against what the kernel says about the same tasks.
#include <sys/resource.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"

namespace {

// Spin for @ms of wall time.
void spin_ms(unsigned ms) {
    std::uint64_t end = kt::now_ns() + ms * 1000000ull;
    volatile std::uint64_t x = 0;
    while (kt::now_ns() < end)
        for (int i = 0; i < 1000; i++)
            x = x + i;
}

// A PREEMPT_RT kernel says so in its version string.
bool preempt_rt() {
    struct utsname u {};
    return ::uname(&u) == 0 && std::strstr(u.version, "PREEMPT_RT") != nullptr;
}

// The state letter of task @pid (/proc/PID/stat), '?' if unreadable.
char task_state(pid_t pid) {
    char path[64];
    std::snprintf(path, sizeof(path), "/proc/%d/stat", int(pid));
    std::FILE* f = std::fopen(path, "r");
    if (!f)
        return '?';
    char buf[512];
    std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
    std::fclose(f);
    buf[n] = 0;
    const char* paren = std::strrchr(buf, ')');  // the name may hold spaces
    return paren && paren[1] == ' ' && paren[2] ? paren[2] : '?';
}

long switches_of_thread() {
    rusage ru;
    ::getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw + ru.ru_nivcsw;
}

TEST(CaptureSched, RefusesBadModes) {
    kt::raw_channel a, b, c, d;
    ASSERT_EQ(a.open_dev(), 0);
    EXPECT_ERRNO(a.configure(kt::attr(KRING_SOURCE_SCHED, -1, -1)), EINVAL);  // neither
    ASSERT_EQ(b.open_dev(), 0);
    kring_attr at = kt::attr(KRING_SOURCE_SCHED, -1, 0);
    at.config[1] = 1;
    EXPECT_ERRNO(b.configure(at), EINVAL);
    kt::raw_channel b2;
    ASSERT_EQ(b2.open_dev(), 0);
    at = kt::attr(KRING_SOURCE_SCHED, -1, 0);
    at.config[0] = 2;  // an unknown KRING_SCHED_CFG_* bit
    EXPECT_ERRNO(b2.configure(at), EINVAL);
    ASSERT_EQ(c.open_dev(), 0);
    EXPECT_ERRNO(c.configure(kt::attr(KRING_SOURCE_SCHED, -1, 0x3ffffff0)), ESRCH);
    ASSERT_EQ(d.open_dev(), 0);
    EXPECT_ERRNO(d.configure(kt::attr(KRING_SOURCE_SYNTHETIC, 0, 0)), EINVAL);  // no pid there
    kt::raw_channel e;
    ASSERT_EQ(e.open_dev(), 0);
    EXPECT_ERRNO(e.configure(kt::attr(KRING_SOURCE_SCHED, 0, -1, KRING_ATTR_F_INHERIT)), EINVAL);
    kt::raw_channel f;
    ASSERT_EQ(f.open_dev(), 0);
    at = kt::attr(KRING_SOURCE_SCHED, 0, -1);
    at.clockid = 5;  // CLOCK_REALTIME_COARSE: not a record clock
    EXPECT_ERRNO(f.configure(at), EINVAL);
}

// Two tasks ping-pong through pipes 10,000 times; the per-thread channel of
// one of them holds exactly its switches out and in, and nothing else.
TEST(CaptureSched, PerThreadPingPong) {
    int to_child[2], to_parent[2];
    ASSERT_EQ(::pipe(to_child), 0);
    ASSERT_EQ(::pipe(to_parent), 0);
    const int rounds = 10000;
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char b;
        for (int i = 0; i < rounds; i++)
            if (::read(to_child[0], &b, 1) != 1 || ::write(to_parent[1], &b, 1) != 1)
                ::_exit(1);
        ::_exit(0);
    }
    kt::channel ch;
    ASSERT_EQ(ch.open(kt::attr(KRING_SOURCE_SCHED, -1, 0), 8), 0);
    const std::uint32_t self = kt::gettid_();
    ASSERT_EQ(ch.enable(), 0);
    // Each getrusage() read between two clock reads: a switch counted in
    // sw1 - sw0 has its record in [t0_out, t1_out], and a record in
    // [t0, t1] is a switch counted there, whatever falls between the reads.
    std::uint64_t t0_out = kt::now_ns();
    long sw0 = switches_of_thread();
    std::uint64_t t0 = kt::now_ns();
    char b = 'x';
    for (int i = 0; i < rounds; i++) {
        ASSERT_EQ(::write(to_child[1], &b, 1), 1);
        ASSERT_EQ(::read(to_parent[0], &b, 1), 1);
        if (i % 500 == 0)
            ch.drain();
    }
    std::uint64_t t1 = kt::now_ns();
    long sw1 = switches_of_thread();
    std::uint64_t t1_out = kt::now_ns();
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    int status = 0;
    ::waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    EXPECT_EQ(ch.bad, 0u);
    EXPECT_EQ(ch.lost, 0u);
    EXPECT_EQ(ch.decreasing, 0u);
    long outs_in_window = 0, outs_in_outer = 0, outs = 0, ins = 0, foreign = 0, not_alternating = 0;
    int last = 0;  // 1 out, 2 in
    for (const auto& r : ch.recs) {
        if (r.s.tid != self || r.sched.kind != KRING_SCHED_SWITCH ||
            (r.sched.prev_tid != self && r.sched.next_tid != self)) {
            foreign++;
            continue;
        }
        int now = r.sched.prev_tid == self ? 1 : 2;
        if (now == last)
            not_alternating++;
        last = now;
        if (now == 1) {
            outs++;
            if (r.s.time >= t0 && r.s.time <= t1)
                outs_in_window++;
            if (r.s.time >= t0_out && r.s.time <= t1_out)
                outs_in_outer++;
        } else {
            ins++;
        }
    }
    long delta = sw1 - sw0;
    std::printf(
        "ping-pong: %ld switches by getrusage, %ld out / %ld in records, %ld..%ld out in "
        "window\n",
        delta, outs, ins, outs_in_window, outs_in_outer);
    EXPECT_EQ(foreign, 0);
    EXPECT_EQ(not_alternating, 0);
    EXPECT_GT(delta, 0);
    EXPECT_LE(outs_in_window, delta);
    EXPECT_GE(outs_in_outer, delta);
    EXPECT_LE(outs - ins, 1);
    EXPECT_LE(ins - outs, 1);
}

// With KRING_SCHED_CFG_WAKEUPS a per-thread channel on a task that sleeps on
// a pipe records each wakeup by the writer, before the task's switch in.
// The writer writes only once the task is asleep in read() (its state says
// so), so every write wakes it.
TEST(CaptureSched, PerThreadWakeups) {
    int p[2], done[2];
    ASSERT_EQ(::pipe(p), 0);
    ASSERT_EQ(::pipe(done), 0);
    const int rounds = 20;
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        char b;
        for (int i = 0; i < rounds; i++)
            if (::read(p[0], &b, 1) != 1 || ::write(done[1], &b, 1) != 1)
                ::_exit(1);
        ::_exit(0);
    }
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_SCHED, -1, child);
    a.config[0] = KRING_SCHED_CFG_WAKEUPS;
    ASSERT_EQ(ch.open(a, 6), 0);
    ASSERT_EQ(ch.enable(), 0);
    const std::uint32_t self = kt::gettid_();
    char b = 'w';
    for (int i = 0; i < rounds; i++) {
        ASSERT_TRUE(kt::wait_until([&] { return task_state(child) == 'S'; }))
            << "round " << i << ": the child is not asleep in read() (state " << task_state(child)
            << ")";
        ASSERT_EQ(::write(p[1], &b, 1), 1);
        ASSERT_EQ(::read(done[0], &b, 1), 1);
    }
    ::waitpid(child, nullptr, 0);
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    long by_us = 0, wakeups = 0, other = 0;
    for (const auto& r : ch.recs) {
        if (r.s.tid != std::uint32_t(child))
            other++;
        if (r.sched.kind != KRING_SCHED_WAKEUP)
            continue;
        wakeups++;
        if (r.sched.next_tid == std::uint32_t(child) && r.sched.prev_tid == self)
            by_us++;
    }
    std::printf("wakeups: %ld records, %ld by the writer\n", wakeups, by_us);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_EQ(other, 0);
    // On PREEMPT_RT the pipe's wait-queue lock is a sleeping lock: the
    // child, woken, can block on it while the writer still holds it inside
    // the wakeup, and the writer's unlock wakes it again. Those are real
    // wakeups by us too; the pipe's own are one per round.
    if (preempt_rt())
        EXPECT_GE(by_us, rounds);
    else
        EXPECT_EQ(by_us, rounds);
}

// A busy loop pinned to CPU 1 appears in CPU 1's channel, never in CPU 0's.
// The test waits on CPU 0, so that CPU schedules (its naps) meanwhile.
TEST(CaptureSched, PerCpuBusyLoop) {
    if (kt::online_cpus() < 2)
        GTEST_SKIP() << "needs two CPUs";
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    ASSERT_TRUE(kt::pin_to(1));
    pid_t child = ::fork();  // inherits the CPU 1 affinity: never runs on 0
    if (child == 0) {
        char b;
        if (::read(go[0], &b, 1) != 1)
            ::_exit(1);
        spin_ms(300);
        ::_exit(0);
    }
    kt::unpin();
    ASSERT_GT(child, 0);
    kt::channel c0, c1;
    ASSERT_EQ(c0.open(kt::attr(KRING_SOURCE_SCHED, 0, -1), 8), 0);
    ASSERT_EQ(c1.open(kt::attr(KRING_SOURCE_SCHED, 1, -1), 8), 0);
    ASSERT_EQ(c0.enable(), 0);
    ASSERT_EQ(c1.enable(), 0);
    ASSERT_TRUE(kt::pin_to(0));
    ASSERT_EQ(::write(go[1], "g", 1), 1);
    EXPECT_TRUE(kt::sleep_switches(1));  // at least one switch on CPU 0
    int status = 0;
    while (::waitpid(child, &status, WNOHANG) == 0) {
        c0.drain();
        c1.drain();
        ::usleep(10000);
    }
    kt::unpin();
    ASSERT_EQ(c0.disable(), 0);
    ASSERT_EQ(c1.disable(), 0);
    c0.drain();
    c1.drain();
    auto count = [&](const kt::channel& c, int cpu, long& wrong_cpu) {
        long n = 0;
        for (const auto& r : c.recs) {
            if (r.sched.cpu != std::uint32_t(cpu) || r.s.cpu != std::uint32_t(cpu))
                wrong_cpu++;
            if (r.sched.prev_tid == std::uint32_t(child) ||
                r.sched.next_tid == std::uint32_t(child))
                n++;
        }
        return n;
    };
    long wrong = 0;
    long on0 = count(c0, 0, wrong), on1 = count(c1, 1, wrong);
    std::printf("per-CPU: cpu0 %zu records (%ld of the loop), cpu1 %zu records (%ld of the loop)\n",
                c0.recs.size(), on0, c1.recs.size(), on1);
    EXPECT_EQ(c0.bad + c1.bad, 0u);
    EXPECT_EQ(wrong, 0);
    EXPECT_GT(on1, 0);
    EXPECT_EQ(on0, 0);
    EXPECT_GT(c0.recs.size(), 0u);  // this thread's naps on CPU 0
}

// Default mode: a channel per CPU for P with inherit: P and the three
// children it forks appear; an unrelated task does not.
TEST(CaptureSched, DefaultModeInherit) {
    int go[2], kids[2];
    ASSERT_EQ(::pipe(go), 0);
    ASSERT_EQ(::pipe(kids), 0);
    pid_t p = ::fork();
    ASSERT_GE(p, 0);
    if (p == 0) {
        char b;
        if (::read(go[0], &b, 1) != 1)
            ::_exit(1);
        pid_t c[3];
        for (auto& x : c) {
            x = ::fork();
            if (x == 0) {
                spin_ms(30);
                ::usleep(5000);
                ::_exit(0);
            }
        }
        if (::write(kids[1], c, sizeof(c)) != sizeof(c))
            ::_exit(1);
        for (auto x : c)
            ::waitpid(x, nullptr, 0);
        ::_exit(0);
    }
    pid_t u = ::fork();
    ASSERT_GE(u, 0);
    if (u == 0) {
        char b;
        if (::read(go[0], &b, 1) != 1)
            ::_exit(1);
        for (int i = 0; i < 20; i++) {
            spin_ms(2);
            ::usleep(2000);
        }
        ::_exit(0);
    }
    int n = kt::online_cpus();
    std::vector<kt::channel> chans(n);
    for (int c = 0; c < n; c++) {
        ASSERT_EQ(chans[c].open(kt::attr(KRING_SOURCE_SCHED, c, p, KRING_ATTR_F_INHERIT), 6), 0);
        ASSERT_EQ(chans[c].enable(), 0);
    }
    ASSERT_EQ(::write(go[1], "gg", 2), 2);
    pid_t kid[3];
    ASSERT_EQ(::read(kids[0], kid, sizeof(kid)), ssize_t(sizeof(kid)));
    ::waitpid(p, nullptr, 0);
    ::waitpid(u, nullptr, 0);
    std::set<std::uint32_t> subjects;
    long forks = 0, exits = 0, bad = 0;
    for (auto& c : chans) {
        ASSERT_EQ(c.disable(), 0);
        c.drain();
        bad += c.bad;
        for (const auto& r : c.recs) {
            subjects.insert(r.s.tid);
            forks += r.sched.kind == KRING_SCHED_FORK;
            exits += r.sched.kind == KRING_SCHED_EXIT;
        }
    }
    std::printf("default+inherit: %zu tasks seen, %ld forks, %ld exits\n", subjects.size(), forks,
                exits);
    EXPECT_EQ(bad, 0);
    EXPECT_TRUE(subjects.count(p));
    for (auto k : kid)
        EXPECT_TRUE(subjects.count(k)) << "child " << k;
    EXPECT_FALSE(subjects.count(u));
    EXPECT_EQ(subjects.size(), 4u);
    EXPECT_EQ(forks, 3);
    EXPECT_EQ(exits, 4);
}

// A thread other than its process's leader that execs takes the leader's
// id: an inherit channel follows the new image under that id. Followed
// task A forks B; a second thread of B execs busybox's sleep; the records
// of the new image (its switches, its exit) name B.
TEST(CaptureSched, InheritFollowsAThreadThatExecs) {
    if (::access("/bin/busybox", X_OK) != 0)
        GTEST_SKIP() << "needs /bin/busybox to exec";
    int go[2], kid[2];
    ASSERT_EQ(::pipe(go), 0);
    ASSERT_EQ(::pipe(kid), 0);
    pid_t a = ::fork();
    ASSERT_GE(a, 0);
    if (a == 0) {
        char c;
        if (::read(go[0], &c, 1) != 1)
            ::_exit(1);
        pid_t b = ::fork();
        if (b == 0) {
            std::thread t([] {
                ::execl("/bin/busybox", "busybox", "sleep", "0.05", nullptr);
                ::_exit(127);
            });
            t.join();
            ::_exit(126);
        }
        if (b < 0 || ::write(kid[1], &b, sizeof(b)) != sizeof(b))
            ::_exit(1);
        int st = 0;
        ::waitpid(b, &st, 0);
        ::_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 2);
    }
    kt::channel c;
    ASSERT_EQ(c.open(kt::attr(KRING_SOURCE_SCHED, -1, a, KRING_ATTR_F_INHERIT), 7), 0);
    ASSERT_EQ(c.enable(), 0);
    ASSERT_EQ(::write(go[1], "g", 1), 1);
    pid_t b = 0;
    ASSERT_EQ(::read(kid[0], &b, sizeof(b)), ssize_t(sizeof(b)));
    int st = 0;
    ::waitpid(a, &st, 0);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
    ASSERT_EQ(c.disable(), 0);
    c.drain();
    EXPECT_EQ(c.bad, 0u);
    long image = 0, exits = 0;
    for (const auto& r : c.recs) {
        if (r.s.tid != std::uint32_t(b) || std::strncmp(r.sched.prev_comm, "busybox", 16) != 0)
            continue;
        image++;
        exits += r.sched.kind == KRING_SCHED_EXIT;
    }
    std::printf("thread exec: %zu records, %ld of B (%d) after the exec, %ld exit\n", c.recs.size(),
                image, b, exits);
    EXPECT_GT(image, 0) << "the new image of B was not followed";
    EXPECT_EQ(exits, 1);
}

}  // namespace
