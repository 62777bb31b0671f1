// What every C++ test of kring shares, host and guest alike: clocks, CPUs
// and the sample-type masks the tests ask for. Namespace kt, as every
// test helper.
#pragma once

#include <sched.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cstdint>

#include <linux/kring.h>

namespace kt {

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

}  // namespace kt
