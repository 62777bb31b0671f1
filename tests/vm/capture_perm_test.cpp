// In the guest: an unprivileged user is refused system-wide capture and
// another user's task, and may capture its own.
#include <fcntl.h>
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "capture.hpp"

namespace {

// In a child that dropped to uid/gid 65534: the errno of each attempt.
struct outcome {
    int open_err = -1, per_cpu = -1, other_task = -1, own_task = -1, timer_kernel = -1,
        timer_user = -1;
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
        ::_exit(::write(res[1], &o, sizeof(o)) == sizeof(o) ? 0 : 1);
    }
    outcome o;
    ASSERT_EQ(::read(res[0], &o, sizeof(o)), ssize_t(sizeof(o)));
    int status = 0;
    ::waitpid(child, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    ASSERT_EQ(o.open_err, 0) << "/dev/kring not openable by others: " << std::strerror(o.open_err);
    EXPECT_EQ(o.per_cpu, EACCES);
    EXPECT_EQ(o.other_task, EACCES);
    EXPECT_EQ(o.own_task, 0);
    EXPECT_EQ(o.timer_kernel, EACCES);
    EXPECT_EQ(o.timer_user, 0);
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

}  // namespace
