// What the security tests share (security_*_test.cpp, docs/SECURITY.md):
// who runs them, a child's exit, a loop that burns CPU time, and a task
// followed to its end by a per-thread sched channel, as root or as nobody.
#pragma once

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <vector>

#include "capture.hpp"

namespace kt {

// Whether the test runs as root.
inline bool is_root() { return ::geteuid() == 0; }

// Burn a little CPU time where the compiler cannot see the loop is empty.
inline void spin(int n) {
    for (int i = 0; i < n; i++)
        asm volatile("" ::: "memory");
}

// Whether a wait status is a normal exit with status 0.
inline bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

// Follow @child (which waits for a byte on @go, then does its thing and
// exits) with a per-thread sched channel; its records and stats flags.
struct followed_run {
    int err = 0;  // errno of the step that failed, 0 if none
    std::vector<kt::rec> recs;
    std::uint32_t flags = 0;
};

inline followed_run follow(pid_t child, int go) {
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
inline pid_t fork_waiting(int& go, const std::function<int()>& fn) {
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
inline int follow_in_child(bool drop, const std::function<int()>& task,
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

}  // namespace kt
