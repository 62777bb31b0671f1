// In the guest: what an unprivileged user may do with /dev/kring and the
// protections behind it (docs/SECURITY.md). The test generators need
// privilege; no record carries a kernel address; a follower stops at the
// exec of an image it may not observe, and does not follow a task holding
// capabilities it lacks (but does follow one into its user's own user
// namespace); records name tasks in the owner's pid namespace;
// an unprivileged follower sees no other task; the attr is bounded;
// hard-irq samples are throttled and counted, and a throttled timer stops
// interrupting; the floor ticks of a CPU's channels share interrupts; a
// user's channels are bounded; the set-output graph has no chains, wakes
// its pollers and keeps RESET away from running writers; a buffer written
// from two CPUs through set-output stays intact.
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"

namespace {

bool is_root() { return ::geteuid() == 0; }

// Burn a little CPU time where the compiler cannot see the loop is empty.
void spin(int n) {
    for (int i = 0; i < n; i++)
        asm volatile("" ::: "memory");
}

bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

// A configure that claims more than a page is refused from its size alone:
// the kernel does not scan a gigabyte of user memory for zeroes.
TEST(Security, AttrLargerThanAPageIsRefused) {
    const std::size_t ps = ::sysconf(_SC_PAGESIZE);
    std::vector<std::uint64_t> buf(2 * ps / 8, 0);
    auto* a = reinterpret_cast<kring_attr*>(buf.data());
    *a = kt::make_attr(KRING_SOURCE_NONE, -1);
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    a->size = 1u << 30;
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_CONFIGURE, a), E2BIG);
    a->size = ps + 8;
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_CONFIGURE, a), E2BIG);
    a->size = ps;  // a page, zero past the struct: a newer caller's, fine
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_CONFIGURE, a), 0);
}

// The synthetic generator and the emulated AUX tracer run kernel work on
// behalf of the caller: root only, unless kring.test_sources=1.
TEST(Security, TestGeneratorsNeedPrivilege) {
    kt::module_param p("test_sources");
    if (!is_root() || !p.usable())
        GTEST_SKIP() << "needs root and kring's test_sources parameter";
    auto configure_both = [](bool drop) {
        return kt::in_child([drop] {
            if (drop && !kt::become_nobody())
                return 1;
            kt::raw_channel s, a;
            if (s.open_dev() || a.open_dev())
                return 2;
            int es = s.configure(kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, kt::sched_type));
            int ea = a.configure(kt::make_attr(KRING_SOURCE_AUX_TRACER, 0, 0));
            // 0: both allowed; 3: both EACCES; else the errors
            if (es == 0 && ea == 0)
                return 0;
            if (es == EACCES && ea == EACCES)
                return 3;
            return 10 + (es & 0x3f);
        });
    };
    ASSERT_TRUE(p.set("0"));
    int nobody_default = configure_both(true);
    int root_default = configure_both(false);
    ASSERT_TRUE(p.set("1"));
    int nobody_allowed = configure_both(true);
    EXPECT_TRUE(WIFEXITED(nobody_default) && WEXITSTATUS(nobody_default) == 3)
        << "unprivileged: status " << nobody_default << " (3 = EACCES for both)";
    EXPECT_TRUE(exited_ok(root_default)) << root_default;
    EXPECT_TRUE(exited_ok(nobody_allowed)) << nobody_allowed;
}

// A SAMPLE's IP field never holds an address of kring's own code.
TEST(Security, SyntheticRecordsCarryNoCodeAddress) {
    if (!is_root())
        GTEST_SKIP() << "the synthetic generator needs privilege";
    const std::uint64_t type = KRING_SAMPLE_IP | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
                               KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, type);
    a.config[3] = 200;
    ASSERT_EQ(ch.configure(a), 0);
    const std::uint64_t layout = ch.sample_type();  // type and SEQ
    ASSERT_EQ(ch.map_ring(4, true, false), 0);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    long n = 0, with_ip = 0, bad = 0;
    for (auto end = std::chrono::steady_clock::now() + kt::patience;
         n < 200 && std::chrono::steady_clock::now() < end;) {
        ::usleep(10000);
        ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            kt::sample s;
            if (h.type != KRING_RECORD_SAMPLE)
                return;
            if (!kt::parse_sample(rec, layout, s)) {
                bad++;
                return;
            }
            n++;
            if (s.ip)
                with_ip++;
        });
    }
    ASSERT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(n, 200);
    EXPECT_EQ(with_ip, 0) << "an address in a record defeats module KASLR";
}

// Follow @child (which waits for a byte on @go, then does its thing and
// exits) with a per-thread sched channel; its records and stats flags.
struct followed_run {
    int err = 0;  // errno of the step that failed, 0 if none
    std::vector<kt::rec> recs;
    std::uint32_t flags = 0;
};

followed_run follow(pid_t child, int go) {
    followed_run r;
    kt::channel c;
    if ((r.err = c.open(kt::attr(KRING_SOURCE_SCHED, -1, child), 7)) || (r.err = c.enable()))
        return r;
    if (::write(go, "g", 1) != 1)
        r.err = errno;
    int status = 0;
    ::waitpid(child, &status, 0);
    c.disable();
    c.drain();
    r.recs = c.recs;
    r.flags = c.ch.stats().flags;
    return r;
}

// fork a child that waits for a byte on the returned descriptor, then runs
// @fn and exits with its result.
pid_t fork_waiting(int& go, const std::function<int()>& fn) {
    int p[2];
    if (::pipe(p))
        return -1;
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(p[1]);
        char b;
        if (::read(p[0], &b, 1) != 1)
            ::_exit(100);
        ::_exit(fn());
    }
    ::close(p[0]);
    go = p[1];
    return pid;
}

// In a child process (as nobody when @drop): fork a task running @task,
// follow it to its end, and exit with @judge(the run, the task's pid).
// Exit statuses 1 to 3 are failures to set that up.
int follow_in_child(bool drop, const std::function<int()>& task,
                    const std::function<int(const followed_run&, pid_t)>& judge) {
    return kt::in_child([&] {
        if (drop && !kt::become_nobody())
            return 1;
        int go = -1;
        pid_t child = fork_waiting(go, task);
        if (child < 0)
            return 2;
        followed_run r = follow(child, go);
        if (r.err) {
            std::printf("following the child: %s\n", std::strerror(r.err));
            return 3;
        }
        return judge(r, child);
    });
}

bool names_a_task(const char* comm, std::uint32_t pid, std::uint32_t tid, std::int32_t prio) {
    return comm[0] || pid || tid || prio;
}

// Counts of a followed child's switches: records, those naming a task on
// the other side, those whose other side is blank.
struct other_side {
    long records = 0, named = 0, blank = 0;
};

other_side count_other_side(const std::vector<kt::rec>& recs, pid_t child) {
    other_side o;
    for (const kt::rec& r : recs) {
        const kring_sched_raw& s = r.sched;
        if (s.kind != KRING_SCHED_SWITCH)
            continue;
        o.records++;
        bool prev_is_child = s.prev_tid == std::uint32_t(child);
        bool other_named = prev_is_child
                               ? names_a_task(s.next_comm, s.next_pid, s.next_tid, s.next_prio)
                               : names_a_task(s.prev_comm, s.prev_pid, s.prev_tid, s.prev_prio);
        (other_named ? o.named : o.blank)++;
    }
    return o;
}

// A follower without CAP_PERFMON sees its own tasks' side of each switch;
// the task on the other side (another user's, the idle task) is blank. Root
// sees both sides: the same run as root is the control.
TEST(Security, UnprivilegedFollowerSeesNoOtherTask) {
    if (!is_root())
        GTEST_SKIP() << "needs root to drop to another user";
    auto run = [](bool drop) {
        auto sleeper = [] { return kt::sleep_switches(100) ? 0 : 9; };
        return follow_in_child(drop, sleeper, [drop](const followed_run& r, pid_t child) {
            other_side o = count_other_side(r.recs, child);
            std::printf("%s follower: %ld switches, other side named in %ld, blank in %ld\n",
                        drop ? "unprivileged" : "root", o.records, o.named, o.blank);
            if (o.records < 20)
                return 4;
            if (drop)
                return o.named == 0 ? 0 : 5;
            return o.named > 0 ? 0 : 6;
        });
    };
    int nobody = run(true);
    int root = run(false);
    EXPECT_TRUE(exited_ok(nobody)) << "status " << nobody << " (5: another task was named)";
    EXPECT_TRUE(exited_ok(root)) << "status " << root << " (6: root saw no other task)";
}

// A task of the follower's own user that holds capabilities the follower
// lacks (kept across its change of ids, as a service started with ambient
// capabilities holds them) is not followed, as ptrace's read mode refuses
// it (cap_ptrace_access_check()); the same task without them is.
TEST(Security, TaskWithCapabilitiesTheFollowerLacksIsNotFollowed) {
    if (!is_root())
        GTEST_SKIP() << "needs root to make a nobody task that holds capabilities";
    auto run = [](bool keep_caps) {
        int ready[2], hold[2];
        if (::pipe(ready) || ::pipe(hold))
            return -1;
        pid_t target = kt::fork_child([&] {
            ::close(ready[0]);
            ::close(hold[1]);
            if (keep_caps && ::prctl(PR_SET_KEEPCAPS, 1))
                return 1;
            if (!kt::become_nobody())
                return 1;
            char c = 0;
            if (::write(ready[1], &c, 1) != 1)
                return 1;
            return ::read(hold[0], &c, 1) < 0 ? 1 : 0;  // until the parent closes
        });
        ::close(ready[1]);
        ::close(hold[0]);
        char c;
        bool up = ::read(ready[0], &c, 1) == 1;
        int status = up ? kt::in_child([&] {
            if (!kt::become_nobody())
                return 1;
            kt::channel ch;
            kring_attr a = kt::attr(KRING_SOURCE_SCHED, -1, target);
            int e = ch.open(a, 4);
            std::printf("following a nobody task %s its capabilities: %s\n",
                        keep_caps ? "with" : "without", e ? std::strerror(e) : "allowed");
            return e == 0 ? 10 : e == EACCES ? 11 : 12;
        })
                        : -1;
        ::close(ready[0]);
        ::close(hold[1]);
        kt::wait_child(target);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    EXPECT_EQ(run(true), 11) << "10: followed, 12: another error";
    EXPECT_EQ(run(false), 10) << "11: refused its own capability-less task";
}

// A task that enters a user namespace its own user made (unshare -U, a
// rootless sandbox) holds every capability there, and so does its user,
// which owns the namespace: it is followed on, as ptrace may read it; the
// channel is not revoked.
TEST(Security, TaskInItsUsersOwnUserNamespaceIsFollowed) {
    if (!is_root())
        GTEST_SKIP() << "needs root to drop to another user";
    int can = kt::in_child([] { return kt::become_nobody() && !::unshare(CLONE_NEWUSER) ? 0 : 1; });
    if (!exited_ok(can))
        GTEST_SKIP() << "nobody may not make a user namespace on this kernel";
    auto task = [] {
        if (::unshare(CLONE_NEWUSER))
            return 1;
        return kt::sleep_switches(40) ? 0 : 9;
    };
    int st = follow_in_child(true, task, [](const followed_run& r, pid_t child) {
        long switches = 0;
        for (const kt::rec& r2 : r.recs)
            switches += r2.sched.kind == KRING_SCHED_SWITCH && r2.s.tid == std::uint32_t(child);
        bool revoked = r.flags & KRING_STATS_F_REVOKED;
        std::printf("a task in its user's own user namespace: %ld switches, %s\n", switches,
                    revoked ? "revoked" : "still followed");
        return revoked ? 4 : switches < 20 ? 5 : 0;
    });
    EXPECT_TRUE(exited_ok(st)) << "status " << st << " (4: revoked, 5: too few switches)";
}

// Records name tasks in the pid namespace the channel was configured from,
// as perf names them in its event's namespace: a task that is pid 1 of a
// new pid namespace and follows itself reads tid 1 in its samples and on
// its side of each switch, not its pid in the initial namespace.
TEST(Security, RecordsNameTasksInTheOwnersPidNamespace) {
    if (!is_root())
        GTEST_SKIP() << "needs root to make a pid namespace";
    if (::access("/proc/self/ns/pid", F_OK) != 0)
        GTEST_SKIP() << "this kernel has no pid namespaces (CONFIG_PID_NS)";
    int status = kt::in_child([] {
        if (::unshare(CLONE_NEWPID))
            return 1;
        int inner = kt::in_child([] {
            if (::getpid() != 1)
                return 2;
            kt::channel c;
            if (c.open(kt::attr(KRING_SOURCE_SCHED, -1, 0), 4) || c.enable())
                return 3;
            kt::sleep_switches(20);
            c.disable();
            c.drain();
            long own = 0, wrong = 0;
            for (const kt::rec& r : c.recs) {
                if (r.sched.kind != KRING_SCHED_SWITCH)
                    continue;
                own++;
                bool mine = r.s.pid == 1 && r.s.tid == 1 &&
                            (r.sched.prev_tid == 1 || r.sched.next_tid == 1);
                if (!mine) {
                    if (!wrong)
                        std::printf("a switch names pid %u tid %u, prev %u, next %u\n", r.s.pid,
                                    r.s.tid, r.sched.prev_tid, r.sched.next_tid);
                    wrong++;
                }
            }
            std::printf("pid 1 of a new namespace: %ld switches, %ld not naming it 1\n", own,
                        wrong);
            return own < 10 ? 4 : wrong ? 5 : 0;
        });
        return WIFEXITED(inner) ? WEXITSTATUS(inner) : 6;
    });
    EXPECT_TRUE(exited_ok(status))
        << "status " << status << " (4: too few switches, 5: a record named another pid)";
}

// A followed task that execs a setuid-root image is not followed any more
// once the exec commits its credentials (perf stops a task's events there):
// no record of what the new image does, and the channel says it was
// revoked. Followed by root, the same exec stays visible: the control.
TEST(Security, ExecOfSetuidImageStopsAFollower) {
    if (!is_root() || ::access("/bin/busybox", X_OK) != 0)
        GTEST_SKIP() << "needs root and /bin/busybox to make a setuid image";
    const char* dir = "/tmp/kring-suid";
    const std::string image = std::string(dir) + "/busybox";
    ::mkdir(dir, 0755);
    {
        int in = ::open("/bin/busybox", O_RDONLY | O_CLOEXEC);
        int out = ::open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
        ASSERT_GE(in, 0);
        ASSERT_GE(out, 0);
        char buf[65536];
        ssize_t n;
        while ((n = ::read(in, buf, sizeof(buf))) > 0)
            ASSERT_EQ(::write(out, buf, n), n);
        ::close(in);
        ::close(out);
        ASSERT_EQ(::chown(image.c_str(), 0, 0), 0);
        ASSERT_EQ(::chmod(image.c_str(), 04755), 0);
    }
    auto run = [&image](bool drop) {
        auto exec_setuid = [&image] {
            ::execl(image.c_str(), "busybox", "sleep", "1", static_cast<char*>(nullptr));
            return 99;
        };
        return follow_in_child(drop, exec_setuid, [drop](const followed_run& r, pid_t) {
            // The image's own activity: `sleep` going to sleep, and its
            // exit. (The exec renames the task a moment before it commits
            // the new credentials; a preemption in between may be recorded
            // under the new name, with the old credentials: not counted.)
            long after_exec = 0;
            for (const kt::rec& x : r.recs) {
                const kring_sched_raw& k = x.sched;
                bool preempted = k.kind == KRING_SCHED_SWITCH && k.prev_state == 0;
                if (!preempted && (!std::strncmp(k.prev_comm, "busybox", 16) ||
                                   !std::strncmp(k.next_comm, "busybox", 16)))
                    after_exec++;
            }
            bool revoked = r.flags & KRING_STATS_F_REVOKED;
            std::printf("%s follower: %zu records, %ld of the new image, revoked %d\n",
                        drop ? "unprivileged" : "root", r.recs.size(), after_exec, revoked);
            if (drop)
                return !revoked ? 4 : after_exec ? 5 : 0;
            return revoked ? 6 : after_exec ? 0 : 7;
        });
    };
    int nobody = run(true);
    int root = run(false);
    ::unlink(image.c_str());
    ::rmdir(dir);
    EXPECT_TRUE(exited_ok(nobody))
        << "status " << nobody << " (4: not revoked, 5: records of the setuid image)";
    EXPECT_TRUE(exited_ok(root)) << "status " << root << " (6: revoked, 7: no record of the exec)";
}

// Samples of a timer channel on CPU 0 in 10 ms windows of the record clock
// (throttle.c's windows, aligned on the same monotonic clock), and the
// seconds it ran.
struct timer_run {
    std::uint64_t written = 0, throttled = 0;
    int max_per_window = 0;
    double secs = 0;
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
    const std::uint64_t t0 = kt::now_ns();
    EXPECT_EQ(c.enable(), 0);
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
    t.secs = double(kt::now_ns() - t0) / 1e9;
    c.drain();
    kring_stats st = c.ch.stats();
    EXPECT_GE(st.size, std::uint32_t(KRING_STATS_SIZE_VER1));
    EXPECT_EQ(c.bad, 0u);
    std::map<std::uint64_t, int> windows;
    for (const kt::rec& r : c.recs)
        t.max_per_window = std::max(t.max_per_window, ++windows[r.s.time / 10000000]);
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
long cpu0_timer_interrupts() { return kt::proc_value("/proc/interrupts", " LOC: %ld"); }

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
    std::printf(
        "20 kHz timer at max_sample_rate=500: %llu written, %llu throttled, %ld timer "
        "interrupts on CPU 0 in %.2f s\n",
        (unsigned long long)t.written, (unsigned long long)t.throttled, taken, secs);
    EXPECT_GT(t.written, 0u);
    EXPECT_LE(t.max_per_window, 5 + 1);
    // The periods skipped are throttled samples: most of the 20000.
    EXPECT_GT(t.throttled, 10000u);
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

// kring.max_user_channels bounds the channels one unprivileged user holds
// open: EMFILE beyond it (as fs.inotify.max_user_instances); a close frees
// a place, a fork or dup makes no channel; root is not bound.
TEST(Security, ChannelsPerUserAreBounded) {
    kt::module_param max("max_user_channels");
    if (!is_root() || !max.usable())
        GTEST_SKIP() << "needs root and kring's max_user_channels parameter";
    ASSERT_TRUE(max.set("4"));
    auto open_kring = [] { return ::open("/dev/kring", O_RDWR | O_CLOEXEC); };
    int status = kt::in_child([&] {
        if (!kt::become_nobody())
            return 1;
        std::vector<int> fds;
        for (int i = 0; i < 4; i++) {
            int fd = open_kring();
            if (fd < 0)
                return 2;
            fds.push_back(fd);
        }
        if (::dup(fds[0]) < 0)
            return 3;
        errno = 0;
        if (open_kring() >= 0 || errno != EMFILE)
            return 4;
        // A child shares the parent's channels and is refused a fifth too.
        int child = kt::in_child([&] {
            errno = 0;
            return open_kring() < 0 && errno == EMFILE ? 0 : 1;
        });
        if (!exited_ok(child))
            return 5;
        ::close(fds.back());
        fds.pop_back();
        return open_kring() >= 0 ? 0 : 6;
    });
    EXPECT_TRUE(exited_ok(status))
        << "status " << status << " (2: refused under the limit, 4: not refused beyond it, "
        << "5: refused a child nothing, 6: a close freed no place)";
    std::vector<int> fds;
    for (int i = 0; i < 8; i++) {
        int fd = open_kring();
        EXPECT_GE(fd, 0) << "root was refused channel " << i << ": " << std::strerror(errno);
        if (fd >= 0)
            fds.push_back(fd);
    }
    for (int fd : fds)
        ::close(fd);
}

// kring.cpu_time_max_percent bounds the share of a CPU the samples take:
// at 1 % far fewer samples are written than without the limit, in the
// same boot, and the rest are counted as throttled.
TEST(Security, CpuTimeIsThrottled) {
    kt::module_param rate("max_sample_rate"), pct("cpu_time_max_percent");
    if (!is_root() || !rate.usable() || !pct.usable())
        GTEST_SKIP() << "needs root and kring's throttle parameters";
    ASSERT_TRUE(rate.set("0"));
    ASSERT_TRUE(pct.set("0"));
    timer_run free = run_timer(20000, 500);
    ASSERT_TRUE(pct.set("1"));
    timer_run limited = run_timer(20000, 500, true);
    std::printf(
        "cpu_time_max_percent: off %llu written (%llu throttled) in %.2f s; 1%% %llu written "
        "(%llu throttled) in %.2f s\n",
        (unsigned long long)free.written, (unsigned long long)free.throttled, free.secs,
        (unsigned long long)limited.written, (unsigned long long)limited.throttled, limited.secs);
    EXPECT_EQ(free.throttled, 0u);
    EXPECT_GT(limited.throttled, 0u);
    // Per second: the runs may last differently long on a loaded host.
    EXPECT_LT(double(limited.written) / limited.secs, double(free.written) / free.secs);
}

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
    EXPECT_EQ(b.set_output(c.fd), EINVAL) << "b is a target";
    EXPECT_EQ(c.set_output(a.fd), EINVAL) << "a is redirected";
    EXPECT_EQ(b.set_output(a.fd), EINVAL) << "a cycle";
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
    EXPECT_EQ(dst.ioctl0(KRING_IOC_RESET), EBUSY) << "a writer into the buffer is enabled";
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
    long wakeups = 0, samples = 0, bad = 0;
    std::uint64_t lost = 0;
    auto drain = [&] {
        long r = timer.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
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
    };
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
        if ((ran >= 1500000000ull && wakeups > 10) ||
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
    std::printf("two-CPU buffer: %ld samples (%ld wakeups), %llu lost\n", samples, wakeups,
                (unsigned long long)lost);
    EXPECT_EQ(bad, 0);
    EXPECT_GT(wakeups, 10);
    EXPECT_EQ(st.produced, st.written + st.lost_no_space + st.lost_too_big + st.lost_paused);
    EXPECT_EQ(std::uint64_t(samples), st.written);
}

}  // namespace
