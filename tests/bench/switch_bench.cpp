// switch_bench: what another user's enabled capture channels cost a context
// switch (docs/PERFORMANCE.md, "Context switches and other users'
// channels"; `make bench` runs it after e2e_bench).
//
//   switch_bench [--rounds N] [--runs N] [--foreign LIST]
//
// Root's thread and a child, both on CPU 0, ping-pong a byte through two
// pipes: every round trip is two context switches and two wakeups there,
// the path of kring's sched_switch and sched_waking probes. Meanwhile a
// process of nobody (uid 65534) holds F sched channels enabled, each
// following itself (every other one with inherit; opened by root, since
// kring's device may be root's alone), and sleeps: channels
// that have nothing to do with the ping-pong. For each F of --foreign
// (default 0,1,64,1024; with 0 the probes are attached, nothing is
// enabled) prints the median microseconds per round trip over
// --runs runs of --rounds round trips, and the channels the probes visited
// per round trip (debugfs kring/capture_visits, -1 without it). Needs root
// (it lifts kring.max_user_captures for nobody, and restores it). Times are
// never asserted. Then the time root takes to close --close (default 1000)
// enabled sched channels following itself, one after the other (what a
// process exiting with them open waits for). The last lines are
// machine-readable:
//   summary switch_bench foreign=F us_per_round_trip=.. visits_per_round_trip=..
//   summary switch_bench close=N ms=..
#include <fcntl.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <grp.h>
#include <sstream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <linux/kring.h>

namespace {

const char* const visits_path = "/sys/kernel/debug/kring/capture_visits";
const char* const captures_param = "/sys/module/kring/parameters/max_user_captures";

long read_long(const char* path) {
    std::ifstream f(path);
    long v = -1;
    f >> v;
    return f ? v : -1;
}

std::string read_text(const char* path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

bool write_text(const char* path, const std::string& v) {
    std::ofstream f(path);
    f << v;
    f.flush();
    return bool(f);
}

bool pin_cpu0() {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(0, &set);
    return ::sched_setaffinity(0, sizeof(set), &set) == 0;
}

// A process of nobody with @n sched channels enabled, following itself,
// asleep until the returned descriptor is closed; -1 when it failed.
struct foreign {
    pid_t pid = -1;
    int go = -1;
};

foreign start_foreign(int n) {
    foreign f;
    int ready[2], go[2];
    if (::pipe(ready) || ::pipe(go))
        return f;
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(ready[0]);
        ::close(go[1]);
        rlimit nofile{static_cast<rlim_t>(n + 64), static_cast<rlim_t>(n + 64)};
        if (::setrlimit(RLIMIT_NOFILE, &nofile))
            ::_exit(1);
        // Opened as root (kring's device may be root's alone), configured
        // and enabled as nobody, following itself.
        std::vector<int> fds;
        for (int i = 0; i < n; i++) {
            int fd = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
            if (fd < 0) {
                std::perror("switch_bench: /dev/kring");
                ::_exit(1);
            }
            fds.push_back(fd);
        }
        if (::setgroups(0, nullptr) || ::setgid(65534) || ::setuid(65534) ||
            ::prctl(PR_SET_DUMPABLE, 1))
            ::_exit(1);
        for (int i = 0; i < n; i++) {
            kring_attr a{};
            a.size = sizeof(a);
            a.source = KRING_SOURCE_SCHED;
            a.cpu = -1;
            a.pid = 0;
            a.sample_type = KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_RAW;
            a.flags = i % 2 ? KRING_ATTR_F_INHERIT : 0;
            int fd = fds[i];
            if (::ioctl(fd, KRING_IOC_CONFIGURE, &a) || ::ioctl(fd, KRING_IOC_ENABLE, 0)) {
                std::perror("switch_bench: a foreign channel");
                ::_exit(2);
            }
        }
        char b = 1;
        if (::write(ready[1], &b, 1) != 1)
            ::_exit(3);
        (void)!::read(go[0], &b, 1);
        ::_exit(0);
    }
    ::close(ready[1]);
    ::close(go[0]);
    char b = 0;
    if (pid < 0 || ::read(ready[0], &b, 1) != 1) {
        ::close(go[1]);
        if (pid > 0)
            ::waitpid(pid, nullptr, 0);
        ::close(ready[0]);
        return f;
    }
    ::close(ready[0]);
    f.pid = pid;
    f.go = go[1];
    return f;
}

void stop_foreign(foreign& f) {
    if (f.go >= 0)
        ::close(f.go);
    if (f.pid > 0)
        ::waitpid(f.pid, nullptr, 0);
    f = foreign{};
}

// @rounds round trips with a child on CPU 0: ns per round trip, and the
// probes' visits meanwhile in *@visits (-1 without the counter).
double pingpong(int rounds, long* visits) {
    int to_child[2], to_parent[2];
    if (::pipe(to_child) || ::pipe(to_parent))
        return -1;
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        char b;
        for (int i = 0; i < rounds; i++)
            if (::read(to_child[0], &b, 1) != 1 || ::write(to_parent[1], &b, 1) != 1)
                ::_exit(1);
        ::_exit(0);
    }
    char b = 'x';
    long v0 = read_long(visits_path);
    auto t0 = std::chrono::steady_clock::now();
    int i = 0;
    for (; i < rounds; i++)
        if (::write(to_child[1], &b, 1) != 1 || ::read(to_parent[0], &b, 1) != 1)
            break;
    auto t1 = std::chrono::steady_clock::now();
    long v1 = read_long(visits_path);
    *visits = v0 < 0 || v1 < 0 ? -1 : v1 - v0;
    for (int fd : {to_child[0], to_child[1], to_parent[0], to_parent[1]})
        ::close(fd);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (i < rounds || !WIFEXITED(status) || WEXITSTATUS(status))
        return -1;
    return double(std::chrono::duration_cast<std::chrono::nanoseconds>(t1 - t0).count()) / rounds;
}

// Opens @n sched channels following this thread, enables them, then
// times closing them all: ms, or -1.
double close_enabled(int n) {
    rlimit nofile{static_cast<rlim_t>(n + 64), static_cast<rlim_t>(n + 64)};
    if (::setrlimit(RLIMIT_NOFILE, &nofile))
        return -1;
    std::vector<int> fds;
    bool ok = true;
    for (int i = 0; i < n && ok; i++) {
        kring_attr a{};
        a.size = sizeof(a);
        a.source = KRING_SOURCE_SCHED;
        a.cpu = -1;
        a.pid = 0;
        a.sample_type = KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_RAW;
        int fd = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
        if (fd >= 0)
            fds.push_back(fd);
        ok = fd >= 0 && !::ioctl(fd, KRING_IOC_CONFIGURE, &a) && !::ioctl(fd, KRING_IOC_ENABLE, 0);
    }
    if (!ok)
        std::perror("switch_bench: a channel to close");
    auto t0 = std::chrono::steady_clock::now();
    for (int fd : fds)
        ::close(fd);
    auto t1 = std::chrono::steady_clock::now();
    return ok ? std::chrono::duration<double, std::milli>(t1 - t0).count() : -1;
}

}  // namespace

int main(int argc, char** argv) {
    int rounds = 2000, runs = 5, close_n = 1000;
    std::string list = "0,1,64,1024";
    CLI::App app{"kring: another user's capture channels against a context switch"};
    app.add_option("--rounds", rounds, "round trips per run")->check(CLI::Range(1, 10000000));
    app.add_option("--runs", runs, "runs per figure (the median is printed)")
        ->check(CLI::Range(1, 1000));
    app.add_option("--foreign", list, "foreign channel counts, comma-separated");
    app.add_option("--close", close_n, "enabled channels to close (0: none)")
        ->check(CLI::Range(0, 100000));
    CLI11_PARSE(app, argc, argv);
    std::vector<int> counts;
    std::stringstream ss(list);
    for (std::string item; std::getline(ss, item, ',');) {
        int n = std::atoi(item.c_str());
        if (n < 0 || n > 100000) {
            std::fprintf(stderr, "switch_bench: bad foreign count '%s'\n", item.c_str());
            return 2;
        }
        counts.push_back(n);
    }
    if (::geteuid() != 0) {
        std::fprintf(stderr, "switch_bench: needs root\n");
        return 1;
    }
    if (!pin_cpu0()) {
        std::perror("switch_bench: CPU 0");
        return 1;
    }
    // The probes are attached by the first capture channel configured: one
    // configured, never enabled, so that every figure runs them.
    int attach = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
    kring_attr a{};
    a.size = sizeof(a);
    a.source = KRING_SOURCE_SCHED;
    a.cpu = -1;
    a.pid = 0;
    a.sample_type = KRING_SAMPLE_TID;
    if (attach < 0 || ::ioctl(attach, KRING_IOC_CONFIGURE, &a)) {
        std::perror("switch_bench: a sched channel");
        return 1;
    }
    std::string old_captures = read_text(captures_param);
    if (!old_captures.empty())
        write_text(captures_param, "0");
    std::printf("%-10s %18s %22s\n", "foreign", "us/round trip", "visits/round trip");
    int rc = 0;
    std::vector<std::string> summary;
    for (int n : counts) {
        foreign f;
        if (n > 0) {
            f = start_foreign(n);
            if (f.pid < 0) {
                std::fprintf(stderr, "switch_bench: %d foreign channels not enabled\n", n);
                rc = 1;
                continue;
            }
        }
        std::vector<double> ns;
        long visits = 0, v = 0;
        for (int r = 0; r < runs; r++) {
            double x = pingpong(rounds, &v);
            if (x < 0) {
                rc = 1;
                break;
            }
            ns.push_back(x);
            visits = v < 0 || visits < 0 ? -1 : visits + v;
        }
        stop_foreign(f);
        if (ns.empty())
            continue;
        std::sort(ns.begin(), ns.end());
        double us = ns[ns.size() / 2] / 1000.0;
        double vpr = visits < 0 ? -1 : double(visits) / (double(rounds) * double(ns.size()));
        std::printf("%-10d %18.1f %22.2f\n", n, us, vpr);
        char line[160];
        std::snprintf(line, sizeof(line),
                      "summary switch_bench foreign=%d us_per_round_trip=%.1f "
                      "visits_per_round_trip=%.2f",
                      n, us, vpr);
        summary.push_back(line);
    }
    if (close_n > 0) {
        double ms = close_enabled(close_n);
        if (ms < 0) {
            rc = 1;
        } else {
            std::printf("close of %d enabled sched channels: %.1f ms (%.2f ms each)\n", close_n, ms,
                        ms / close_n);
            char line[160];
            std::snprintf(line, sizeof(line), "summary switch_bench close=%d ms=%.1f", close_n, ms);
            summary.push_back(line);
        }
    }
    if (!old_captures.empty())
        write_text(captures_param, old_captures);
    for (const auto& s : summary)
        std::printf("%s\n", s.c_str());
    return rc;
}
