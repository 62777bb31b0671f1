// What every C++ test of kring shares, host and guest alike: clocks, CPUs
// and the sample-type masks the tests ask for. Namespace kt, as every
// test helper.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <new>
#include <string>
#include <thread>

#include <linux/kring.h>
#include <linux/kring_test.h>

namespace kt {

// ---- files ------------------------------------------------------------

// Writes @text to the file at @path in one write(), as a shell's `>` (or
// with @append its `>>`) does: a sysfs or tracefs setting, /proc/PID/uid_map,
// tracefs' `trace` (emptied by O_TRUNC), `kprobe_events` (appended to).
// False if it could not be opened or took less than all of @text.
inline bool write_text(const std::string& path, const std::string& text, bool append = false) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | (append ? O_APPEND : O_TRUNC));
    bool ok = fd >= 0 && ::write(fd, text.data(), text.size()) == ssize_t(text.size());
    if (fd >= 0)
        ::close(fd);
    return ok;
}

// The whole file at @path; "" when it cannot be read.
inline std::string read_text(const std::string& path) {
    std::string out;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0)
        out.append(buf, std::size_t(n));
    ::close(fd);
    return out;
}

// The first line of a sysfs file, "" when it cannot be read.
inline std::string read_sysfs(const std::string& path) {
    std::string v = read_text(path);
    v.resize(std::min(v.find('\n'), v.size()));
    return v;
}

// ---- clocks -----------------------------------------------------------

// @clock in nanoseconds (CLOCK_MONOTONIC: the clock records are compared
// with; CLOCK_THREAD_CPUTIME_ID: this thread's CPU time).
inline std::uint64_t now_ns(clockid_t clock = CLOCK_MONOTONIC) {
    timespec ts;
    ::clock_gettime(clock, &ts);
    return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

inline std::uint64_t thread_cpu_ns() { return now_ns(CLOCK_THREAD_CPUTIME_ID); }

// ---- CPUs and tasks ---------------------------------------------------

inline int online_cpus() { return static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)); }

// Runs the calling thread on @cpu only; false if that CPU cannot be used.
inline bool pin_to(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return ::sched_setaffinity(0, sizeof(set), &set) == 0;
}

// Lets the calling thread run on every CPU again.
inline void unpin() {
    cpu_set_t set;
    CPU_ZERO(&set);
    for (int c = 0; c < CPU_SETSIZE; c++)
        CPU_SET(c, &set);
    ::sched_setaffinity(0, sizeof(set), &set);
}

inline int gettid_() { return static_cast<int>(::syscall(SYS_gettid)); }

// ---- sample types the tests ask for -------------------------------------

// The sched source: who, when, where, and struct kring_sched_raw.
constexpr std::uint64_t sched_type =
    KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
// The timer source: sched's fields plus the interrupted IP and the period.
constexpr std::uint64_t timer_type = KRING_SAMPLE_IP | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
                                     KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD | KRING_SAMPLE_RAW;
// The synthetic generator: struct kring_synth_payload in RAW, and SEQ.
constexpr std::uint64_t synth_type =
    KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ;

// ---- waiting for what is asynchronous ----------------------------------

// No test waits on time. A timer, a wakeup, an interrupt, a migration, an
// RCU grace period or a deferred fput happens when the machine gets to it,
// and a loaded host (or make check LOAD=1) can hold it back for seconds: a
// test that sleeps a while and then asserts it happened fails there. It
// either forces the event or waits for it with wait_until(), whose bound
// only a defect reaches. Only what must NOT happen is watched for a fixed
// while (a sleep can miss a defect there, never fail a correct module).
constexpr std::chrono::seconds patience{60};

// Polls @done (every @step, as long as it says false) until it says true
// or @bound has passed; returns its last answer.
template <class F>
bool wait_until(F&& done, std::chrono::steady_clock::duration bound = patience,
                std::chrono::steady_clock::duration step = std::chrono::milliseconds(1)) {
    const auto end = std::chrono::steady_clock::now() + bound;
    while (!done()) {
        if (std::chrono::steady_clock::now() >= end)
            return done();
        std::this_thread::sleep_for(step);
    }
    return true;
}

// Voluntary context switches of the calling thread so far.
inline long voluntary_switches() {
    rusage ru;
    ::getrusage(RUSAGE_THREAD, &ru);
    return ru.ru_nvcsw;
}

// Sleeps 1 ms at a time until the calling thread has switched out @n times
// (a sleep whose timer expires before the thread reaches schedule(), its
// CPU held up, does not switch); false if that took longer than patience.
inline bool sleep_switches(long n) {
    const long from = voluntary_switches();
    return wait_until([&] { return voluntary_switches() - from >= n; }, patience,
                      std::chrono::milliseconds(1));
}

// ---- processes ----------------------------------------------------------

// A T in a MAP_SHARED anonymous mapping: the same object in this process
// and in the children it forks (its atomics must be lock-free to be shared).
template <class T>
class shared_obj {
public:
    shared_obj() {
        void* p =
            ::mmap(nullptr, sizeof(T), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            throw std::bad_alloc();
        obj_ = new (p) T();
    }
    shared_obj(const shared_obj&) = delete;
    shared_obj& operator=(const shared_obj&) = delete;
    ~shared_obj() {
        obj_->~T();
        ::munmap(obj_, sizeof(T));
    }
    T* operator->() const { return obj_; }
    T& operator*() const { return *obj_; }

private:
    T* obj_;
};

}  // namespace kt
