// In the guest: which tasks a follower may follow, across changes of
// credentials and namespaces (docs/SECURITY.md). A follower does not follow
// a task holding capabilities it lacks, but does follow one into its
// user's own user namespace; records name tasks in the owner's pid
// namespace; a follower stops at the exec of an image it may not observe.
#include <sched.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "security.hpp"

using kt::exited_ok;
using kt::follow_in_child;
using kt::followed_run;
using kt::is_root;

namespace {

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
    ASSERT_EQ(kt::make_setuid_copy("/bin/busybox", image), "");
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

}  // namespace
