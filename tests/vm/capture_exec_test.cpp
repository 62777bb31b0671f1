// In the guest: following a thread across its exec. A thread other than
// its process's leader that execs takes the leader's id (de_thread()); a
// channel follows the task, not its id, so its records go on under the new
// id and name the new image, with and without inherit, for root and for an
// unprivileged follower. The exec of a setuid image stops an unprivileged
// follower visibly (KRING_STATS_F_REVOKED). A channel on the leader, which
// that exec kills, ends with the leader's exit.
#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "capture.hpp"

namespace {

constexpr const char* image_env = "KRING_EXEC_IMAGE";
constexpr const char* leader_comm = "kring-leader";  // its process's leader
constexpr const char* pre_comm = "kring-preexec";    // the thread before its exec
constexpr const char* post_comm = "kring-execd";     // the image it execs
constexpr int pre_sleeps = 20, image_sleeps = 50;

// The image a followed thread execs: this binary again, with image_env in
// its environment. It runs before main() and GoogleTest: it names itself,
// sleeps image_sleeps times (each a switch out and one in) and exits.
__attribute__((constructor)) void exec_image() {
    if (!std::getenv(image_env))
        return;
    ::prctl(PR_SET_NAME, post_comm);
    for (int i = 0; i < image_sleeps; i++)
        ::usleep(1000);
    ::_exit(0);
}

bool is_root() { return ::geteuid() == 0; }

// What a follower of the exec'ing thread recorded.
struct exec_run {
    int err = 0;       // errno of the follower's step that failed, 0 if none
    int status = -1;   // the wait status of the exec'ing process
    pid_t thread = 0;  // the thread's id before its exec
    pid_t leader = 0;  // its process's id, the thread's id after it
    long pre = 0;      // records of the thread before the exec (its id, its name)
    long post = 0;     // records of the new image (the leader's id, the image's name)
    long exits = 0;    // exit records of the new image
    long between = 0;  // of the task between de_thread() and the image's renaming
    long old = 0;      // of the leader the exec kills (its id, its name)
    long old_exits = 0;
    long foreign = 0;  // records of another task
    std::uint64_t lost = 0, bad = 0;
    bool revoked = false;
};

// Fork a process whose second thread, once followed, sleeps a little and
// execs @image (this binary, in exec_image()'s mode); follow that thread
// (or, with @leader, its process's leader) with a per-thread sched channel
// (@flags) from before its first record to its process's end (the wait
// for it bounds everything: no record is expected "by now").
exec_run follow_thread_exec(const std::string& image, std::uint64_t flags, bool leader) {
    exec_run r;
    int ready[2], go[2];
    if (::pipe(ready) || ::pipe(go)) {
        r.err = errno;
        return r;
    }
    r.leader = kt::fork_child([&] {
        ::close(ready[0]);
        ::close(go[1]);
        ::prctl(PR_SET_NAME, leader_comm);
        std::thread t([&] {
            ::prctl(PR_SET_NAME, pre_comm);
            pid_t tid = kt::gettid_();
            char c;
            if (::write(ready[1], &tid, sizeof(tid)) != sizeof(tid) || ::read(go[0], &c, 1) != 1)
                ::_exit(125);
            for (int i = 0; i < pre_sleeps; i++)
                ::usleep(1000);
            std::string env = std::string(image_env) + "=1";
            char* const argv[] = {const_cast<char*>("kring-exec-image"), nullptr};
            char* const envp[] = {env.data(), nullptr};
            ::execve(image.c_str(), argv, envp);
            ::_exit(127);
        });
        t.join();  // the exec kills this thread
        return 126;
    });
    ::close(ready[1]);
    ::close(go[0]);
    if (r.leader < 0) {
        r.err = errno;
        ::close(ready[0]);
        ::close(go[1]);
        return r;
    }
    kt::channel c;
    if (::read(ready[0], &r.thread, sizeof(r.thread)) != sizeof(r.thread))
        r.err = EIO;
    if (!r.err)
        r.err = c.open(kt::attr(KRING_SOURCE_SCHED, -1, leader ? r.leader : r.thread, flags), 7);
    if (!r.err)
        r.err = c.enable();
    if (!r.err && ::write(go[1], "g", 1) != 1)
        r.err = errno;
    ::close(go[1]);  // without the byte, the thread gives up
    ::close(ready[0]);
    r.status = kt::wait_child(r.leader);
    if (r.err)
        return r;
    c.disable();
    c.drain();
    r.lost = c.lost;
    r.bad = c.bad;
    r.revoked = c.ch.stats().flags & KRING_STATS_F_REVOKED;
    for (const kt::rec& x : c.recs) {
        const kring_sched_raw& k = x.sched;
        // The followed side of a switch; the task itself in an exit.
        const char* comm = k.prev_tid == x.s.tid ? k.prev_comm : k.next_comm;
        const bool thread = x.s.tid == std::uint32_t(r.thread);
        const bool leader = x.s.tid == std::uint32_t(r.leader);
        if (!thread && !leader) {
            r.foreign++;
        } else if (!std::strncmp(comm, leader_comm, 16)) {
            // The leader's last switch, after its exit woke the exec, may
            // carry the thread's old id: exchange_tids() swaps the two.
            r.old++;
            r.old_exits += k.kind == KRING_SCHED_EXIT;
        } else if (thread && !std::strncmp(comm, pre_comm, 16)) {
            r.pre++;
        } else if (leader && !std::strncmp(comm, post_comm, 16)) {
            r.post++;
            r.exits += k.kind == KRING_SCHED_EXIT;
        } else {
            r.between++;
            std::printf("in between: kind %u, tid %u, prev %u '%.16s', next %u '%.16s'\n",
                        unsigned(k.kind), unsigned(x.s.tid), unsigned(k.prev_tid), k.prev_comm,
                        unsigned(k.next_tid), k.next_comm);
        }
    }
    return r;
}

// What a follower should have recorded.
enum class expect {
    image,    // the thread, then its new image, to its exit
    revoked,  // the thread, then nothing: the channel is revoked at the exec
    leader,   // the leader followed instead, to its exit at the exec
};

// In a child (as nobody when @drop): follow a thread that execs @image (or
// its process's leader); exit 0 when the run is what @e says, else a code
// saying what differed (exec_verdict()).
int exec_case(bool drop, std::uint64_t flags, const std::string& image, expect e) {
    return kt::in_child([&] {
        if (drop && !kt::become_nobody())
            return 1;
        exec_run r = follow_thread_exec(image, flags, e == expect::leader);
        std::printf(
            "%s follower of the %s%s, %s: thread %d -> %d; %ld records before the exec, "
            "%ld of the new image (%ld exit), %ld in between, %ld of the leader (%ld "
            "exit), %ld foreign, lost %llu, bad %llu, revoked %d\n",
            drop ? "unprivileged" : "root", e == expect::leader ? "leader" : "thread",
            flags & KRING_ATTR_F_INHERIT ? " (inherit)" : "", image.c_str(), r.thread, r.leader,
            r.pre, r.post, r.exits, r.between, r.old, r.old_exits, r.foreign,
            static_cast<unsigned long long>(r.lost), static_cast<unsigned long long>(r.bad),
            r.revoked);
        if (r.err) {
            std::printf("following the thread: %s\n", std::strerror(r.err));
            return 2;
        }
        if (!WIFEXITED(r.status) || WEXITSTATUS(r.status) != 0) {
            std::printf("the exec'ing process: wait status %#x\n", r.status);
            return 3;
        }
        if (r.foreign || r.lost || r.bad)
            return 5;
        if (e == expect::leader) {
            if (r.revoked)
                return 6;
            if (r.old_exits != 1)
                return 10;
            return r.pre || r.between || r.post ? 11 : 0;
        }
        if (r.pre == 0)
            return 4;
        if (r.old)
            return 5;
        if (e == expect::image) {
            // image_sleeps sleeps and an exit; a tenth of them is a bound
            // only a lost task misses.
            if (r.revoked)
                return 6;
            return r.post >= image_sleeps / 10 && r.exits == 1 ? 0 : 7;
        }
        if (!r.revoked)
            return 8;
        return r.post ? 9 : 0;
    });
}

// What exec_case()'s exit status says.
const char* exec_verdict(int status) {
    static const char* const verdicts[] = {
        "ok",
        "cannot become nobody",
        "cannot follow the thread",
        "the exec'ing process failed",
        "no record of the thread before its exec",
        "records of another task, lost or bad records",
        "revoked",
        "the new image was not followed",
        "not revoked",
        "records of the setuid image",
        "no exit record of the leader",
        "records of the thread or its new image",
    };
    if (!WIFEXITED(status))
        return "killed";
    unsigned code = WEXITSTATUS(status);
    return code < std::size(verdicts) ? verdicts[code] : "?";
}

// A thread other than its process's leader, followed per-thread (with and
// without inherit), execs: its records go on under its new id (the
// leader's) and its new name, to the new image's exit. perf's events stay
// with their task the same way.
TEST(CaptureExec, FollowsAThreadAcrossItsExec) {
    if (!is_root())
        GTEST_SKIP() << "needs root to drop to another user";
    for (bool drop : {false, true})
        for (std::uint64_t flags : {std::uint64_t(0), std::uint64_t(KRING_ATTR_F_INHERIT)}) {
            int st = exec_case(drop, flags, "/proc/self/exe", expect::image);
            EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
                << (drop ? "unprivileged" : "root") << (flags ? " inherit" : "") << ": status "
                << st << ", " << exec_verdict(st);
        }
}

// The same thread execs a setuid-root copy of this binary: an unprivileged
// follower stops at the exec, with KRING_STATS_F_REVOKED and no record of
// the new image; root (CAP_SYS_PTRACE) follows on: the control.
TEST(CaptureExec, SetuidExecOfAFollowedThreadRevokes) {
    if (!is_root())
        GTEST_SKIP() << "needs root to make a setuid image";
    const char* dir = "/tmp/kring-exec-suid";
    const std::string image = std::string(dir) + "/image";
    ASSERT_EQ(kt::make_setuid_copy("/proc/self/exe", image), "");
    int nobody = exec_case(true, 0, image, expect::revoked);
    int nobody_inherit = exec_case(true, KRING_ATTR_F_INHERIT, image, expect::revoked);
    int root = exec_case(false, 0, image, expect::image);
    ::unlink(image.c_str());
    ::rmdir(dir);
    EXPECT_TRUE(WIFEXITED(nobody) && WEXITSTATUS(nobody) == 0)
        << "unprivileged: status " << nobody << ", " << exec_verdict(nobody);
    EXPECT_TRUE(WIFEXITED(nobody_inherit) && WEXITSTATUS(nobody_inherit) == 0)
        << "unprivileged inherit: status " << nobody_inherit << ", "
        << exec_verdict(nobody_inherit);
    EXPECT_TRUE(WIFEXITED(root) && WEXITSTATUS(root) == 0)
        << "root: status " << root << ", " << exec_verdict(root);
}

// A channel follows a task, not its id: configured for the leader, it
// follows the leader, which another thread's exec kills, to its exit
// record, and not that thread, which takes the leader's id (perf's event
// on the leader ends there too).
TEST(CaptureExec, LeaderKilledByAThreadsExecEndsWithItsExit) {
    int st = exec_case(false, 0, "/proc/self/exe", expect::leader);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
        << "status " << st << ", " << exec_verdict(st);
}

}  // namespace
