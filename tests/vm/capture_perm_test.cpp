// In the guest: an unprivileged user is refused system-wide capture and
// another user's task, and may capture its own; only the refusals ask a
// capability question an LSM would audit.
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdlib>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"

namespace {

// In a child that dropped to uid/gid 65534: the errno of each attempt.
struct outcome {
    int open_err = -1, per_cpu = -1, other_task = -1, own_task = -1, timer_kernel = -1,
        timer_user = -1, chain_kernel = -1, chain_user = -1, formats = -1;
    unsigned formats_count = 0;
};

int try_configure(const kring_attr& a) {
    kt::raw_channel ch;
    if (int e = ch.open_dev())
        return e;
    return ch.configure(a);
}

TEST(CapturePerm, UnprivilegedUser) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root to drop to another user";
    int res[2];
    ASSERT_EQ(::pipe(res), 0);
    pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        outcome o;
        if (!kt::become_nobody())
            ::_exit(1);
        kt::raw_channel probe;
        o.open_err = probe.open_dev();
        o.per_cpu = try_configure(kt::attr(KRING_SOURCE_SCHED, 0, -1));
        o.other_task = try_configure(kt::attr(KRING_SOURCE_SCHED, -1, 1));  // init, root's
        o.own_task = try_configure(kt::attr(KRING_SOURCE_SCHED, -1, 0));
        kring_attr t = kt::attr(KRING_SOURCE_TIMER, -1, 0);
        t.config[0] = 100;
        o.timer_kernel = try_configure(t);
        t.flags = KRING_ATTR_F_EXCLUDE_KERNEL;
        o.timer_user = try_configure(t);
        // Call chains: kernel frames come only with kernel-mode samples,
        // refused alike; user ones with the user's own.
        t.sample_type |= KRING_SAMPLE_CALLCHAIN;
        t.flags = 0;
        o.chain_kernel = try_configure(t);
        t.flags = KRING_ATTR_F_EXCLUDE_KERNEL;
        o.chain_user = try_configure(t);
        // The formats of its own channel.
        kt::raw_channel own;
        if (own.open_dev() == 0 && own.configure(t) == 0) {
            kring_formats q{};
            q.size = sizeof(q);
            o.formats = own.ioctl_arg(KRING_IOC_GET_FORMATS, &q);
            o.formats_count = q.count;
        }
        ::_exit(::write(res[1], &o, sizeof(o)) == sizeof(o) ? 0 : 1);
    }
    outcome o;
    ASSERT_EQ(::read(res[0], &o, sizeof(o)), ssize_t(sizeof(o)));
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(o.open_err, 0) << "/dev/kring not openable by others: " << std::strerror(o.open_err);
    EXPECT_ERRNO(o.per_cpu, EACCES);
    EXPECT_ERRNO(o.other_task, EACCES);
    EXPECT_EQ(o.own_task, 0);
    EXPECT_ERRNO(o.timer_kernel, EACCES);
    EXPECT_EQ(o.timer_user, 0);
    EXPECT_ERRNO(o.chain_kernel, EACCES);
    EXPECT_EQ(o.chain_user, 0);
    EXPECT_EQ(o.formats, 0);
    EXPECT_EQ(o.formats_count, 1u);
    // Root may do all of it.
    EXPECT_EQ(try_configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
    EXPECT_EQ(try_configure(kt::attr(KRING_SOURCE_SCHED, -1, 1)), 0);
}

// kring.paranoid = -1 lets the same user capture a CPU and kernel-mode
// samples, as perf_event_paranoid does; the default refuses again.
TEST(CapturePerm, ParanoidParameterRelaxes) {
    const char* param = "/sys/module/kring/parameters/paranoid";
    if (::geteuid() != 0 || ::access(param, W_OK) != 0)
        GTEST_SKIP() << "needs root and " << param;
    auto set = [&](const char* v) {
        int fd = ::open(param, O_WRONLY | O_CLOEXEC);
        bool ok = fd >= 0 && ::write(fd, v, std::strlen(v)) == ssize_t(std::strlen(v));
        if (fd >= 0)
            ::close(fd);
        return ok;
    };
    char old[16] = {};
    int fd = ::open(param, O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_GT(::read(fd, old, sizeof(old) - 1), 0);
    ::close(fd);
    auto as_nobody = [](bool expect_ok) {
        pid_t child = ::fork();
        if (child == 0) {
            if (!kt::become_nobody())
                ::_exit(2);
            kring_attr t = kt::attr(KRING_SOURCE_TIMER, -1, 0);
            t.config[0] = 100;
            int a = try_configure(kt::attr(KRING_SOURCE_SCHED, 0, -1));
            int b = try_configure(t);
            bool ok = expect_ok ? (a == 0 && b == 0) : (a == EACCES && b == EACCES);
            ::_exit(ok ? 0 : 1);
        }
        int status = 0;
        ::waitpid(child, &status, 0);
        return WIFEXITED(status) ? WEXITSTATUS(status) : 3;
    };
    ASSERT_TRUE(set("-1"));
    int relaxed = as_nobody(true);
    ASSERT_TRUE(set("2"));
    int strict = as_nobody(false);
    set(old);
    EXPECT_EQ(relaxed, 0);
    EXPECT_EQ(strict, 0);
}

// ---- what an LSM would audit --------------------------------------------

// A kprobe event on security_capable(cred, ns, cap, opts), the one path of
// capable(), ns_capable_noaudit() and has_capability_noaudit() into the
// LSMs, in a trace instance of its own: every capability question a task
// asks, and whether it asked for an audit record (opts without
// CAP_OPT_NOAUDIT, bit 1). An LSM that confines the task (AppArmor,
// SELinux) logs each such question it denies; the guest confines nothing,
// so the questions are what is counted.
struct cap_probe {
    std::string tfs, inst;
    bool ok = false;

    cap_probe() {
        for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
            if (::access((std::string(d) + "/kprobe_events").c_str(), W_OK) == 0) {
                tfs = d;
                break;
            }
        if (tfs.empty() && ::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
            tfs = "/sys/kernel/tracing";
        inst = tfs.empty() ? "" : tfs + "/instances/kring_cap";
        if (!inst.empty()) {  // left by a run that did not end
            kt::write_text(inst + "/events/kring_test/kring_cap/enable", "0");
            ::rmdir(inst.c_str());
            kt::write_text(tfs + "/kprobe_events", "-:kring_test/kring_cap\n", true);
        }
        if (tfs.empty() || !kt::write_text(tfs + "/kprobe_events",
                                           "p:kring_test/kring_cap security_capable cap=$arg3:s32 "
                                           "opts=$arg4:u32\n",
                                           true))
            return;
        ok = ::mkdir(inst.c_str(), 0700) == 0;
    }
    ~cap_probe() {
        if (!inst.empty()) {
            kt::write_text(inst + "/events/kring_test/kring_cap/enable", "0");
            ::rmdir(inst.c_str());
        }
        if (!tfs.empty())
            kt::write_text(tfs + "/kprobe_events", "-:kring_test/kring_cap\n", true);
    }
    // Record the questions of @pid only, from an empty buffer on.
    bool start(pid_t pid) {
        return kt::write_text(inst + "/events/kring_test/kring_cap/filter",
                              "common_pid == " + std::to_string(pid)) &&
               kt::write_text(inst + "/trace", "") &&
               kt::write_text(inst + "/events/kring_test/kring_cap/enable", "1");
    }
    // The questions asked for an audit record since start(), by capability.
    std::map<int, int> audited() {
        kt::write_text(inst + "/events/kring_test/kring_cap/enable", "0");
        std::map<int, int> n;
        std::string t = kt::read_text(inst + "/trace");
        for (std::size_t at = 0; (at = t.find(" cap=", at)) != std::string::npos; at++) {
            int cap = std::atoi(t.c_str() + at + 5);
            std::size_t o = t.find(" opts=", at);
            unsigned opts =
                o == std::string::npos ? 0 : unsigned(std::strtoul(t.c_str() + o + 6, nullptr, 0));
            if (!(opts & 2u))
                n[cap]++;
        }
        return n;
    }
};

std::string describe(const std::map<int, int>& n) {
    std::string s;
    for (auto [cap, count] : n)
        s += " cap " + std::to_string(cap) + " x" + std::to_string(count);
    return s.empty() ? " none" : s;
}

// An unprivileged user's configures that are allowed (following its own
// task with the sched and the timer source) ask no capability question an
// LSM would audit: what decides only what the records show is asked
// without an audit record. Those that are refused (a CPU, kernel samples,
// another user's task) ask exactly one each, for the capability whose
// absence refuses them: an audit log on a confined system holds the
// refusals and nothing else.
TEST(CapturePerm, OnlyRefusalsAreAudited) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root for tracefs and to drop to another user";
    cap_probe probe;
    if (!probe.ok)
        GTEST_SKIP() << "no kprobe event on security_capable (CONFIG_KPROBE_EVENTS, tracefs)";
    int ready[2], go[2];
    ASSERT_EQ(::pipe(ready), 0);
    ASSERT_EQ(::pipe(go), 0);
    pid_t child = kt::fork_child([&] {
        if (!kt::become_nobody())
            return 1;
        kt::raw_channel a, b, c, d, e;
        char x = 0;
        if (a.open_dev() || b.open_dev() || c.open_dev() || d.open_dev() || e.open_dev())
            return 2;
        kring_attr t = kt::attr(KRING_SOURCE_TIMER, -1, 0, KRING_ATTR_F_EXCLUDE_KERNEL);
        t.config[0] = 100;
        // 1: allowed
        if (::write(ready[1], &x, 1) != 1 || ::read(go[0], &x, 1) != 1)
            return 3;
        if (a.configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)) || b.configure(t))
            return 4;
        // 2: refused
        if (::write(ready[1], &x, 1) != 1 || ::read(go[0], &x, 1) != 1)
            return 3;
        t.flags = 0;
        if (c.configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)) != EACCES ||
            d.configure(t) != EACCES || e.configure(kt::attr(KRING_SOURCE_SCHED, -1, 1)) != EACCES)
            return 5;
        return ::write(ready[1], &x, 1) == 1 ? 0 : 3;
    });
    ASSERT_GT(child, 0);
    char x = 0;
    std::map<int, int> allowed, refused;
    bool steps = ::read(ready[0], &x, 1) == 1 && probe.start(child) && ::write(go[1], &x, 1) == 1 &&
                 ::read(ready[0], &x, 1) == 1;
    allowed = probe.audited();
    steps =
        steps && probe.start(child) && ::write(go[1], &x, 1) == 1 && ::read(ready[0], &x, 1) == 1;
    refused = probe.audited();
    int status = kt::wait_child(child);
    for (int fd : {ready[0], ready[1], go[0], go[1]})
        ::close(fd);
    std::printf("audited capability questions: allowed configures%s; refused%s\n",
                describe(allowed).c_str(), describe(refused).c_str());
    ASSERT_TRUE(steps);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
    EXPECT_TRUE(allowed.empty()) << describe(allowed);
    std::map<int, int> one_each = {{CAP_PERFMON, 2}, {CAP_SYS_PTRACE, 1}};
    EXPECT_EQ(refused, one_each) << describe(refused);
}

}  // namespace
