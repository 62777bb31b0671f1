// In the guest: races on one channel between the processes and threads
// that share its file. Processes (forked children share the file, not the
// mappings) map and unmap the data ring or the AUX area while threads
// issue ioctls; threads close a file while others map it; set-output is
// raced in both directions; snapshots are taken while the AUX area comes
// and goes; the module is unloaded right after its buffers were freed.
// Whatever the interleaving:
//
//  - every call works or fails with its documented errno;
//  - a process holding a mapping maps the channel's live buffer: STATS says
//    MAPPED, and PAUSE_OUTPUT / RESUME_OUTPUT show in that mapping's
//    control page;
//  - the AUX area of a channel nothing writes into reads as zeros (freed
//    and reused pages would not);
//  - set-output leaves no two channels redirected into each other and no
//    channel redirected into one that is itself redirected;
//  - nothing leaks: the module's reference count is back where it was;
//  - a user without privilege can do all of it within the locked-memory
//    limits, and is refused what needs privilege;
//  - the module can be unloaded, and loaded again, right after its last
//    buffer was freed;
//  - the console stays free of kernel reports (checked by the runner
//    afterwards): a race lost inside the module mostly shows there, as a
//    KASAN report or an oops.
//
// Every case loops until a deadline (not for a count: TCG guests run at
// very different speeds); the first failed check in any thread or process
// stops the case and is reported with what was seen.
#include <sched.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <new>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "hotplug.hpp"
#include "raw_ring.hpp"

namespace {

using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

constexpr auto run_time = 3s;                   // each case's loops
constexpr auto unprivileged_run_time = 1500ms;  // each case again, as another user
constexpr unsigned ring_order = 1;              // 2 data pages
constexpr std::size_t aux_pages = 4;
constexpr int rw = PROT_READ | PROT_WRITE;

std::size_t ring_len() { return kt::page_size() * (1 + (std::size_t(1) << ring_order)); }
std::size_t aux_len() { return kt::page_size() * aux_pages; }

std::string errno_name(int e) {
    if (e == 0)
        return "success";
    const char* n = ::strerrorname_np(e);
    return n ? n : "errno " + std::to_string(e);
}

// What the threads and processes of a case share, in a MAP_SHARED
// anonymous mapping so that forked children write into the same object:
// the first failure (which stops everyone), a lock and counters.
struct race_state {
    std::atomic<bool> stop{false};
    std::atomic<bool> failed{false};
    std::atomic<int> check_lock{0};
    std::atomic<std::uint64_t> count[6]{};
    // Odd while CPU 1 is going offline, offline or coming back (the
    // hotplug case): equal even values before and after a call mean that
    // CPU 1 was online throughout it.
    std::atomic<std::uint64_t> plug_gen{0};
    char why[1024]{};

    unsigned long long n(int i) const { return count[i].load(); }
    bool running(clk::time_point deadline) const {
        return !stop.load(std::memory_order_relaxed) && clk::now() < deadline;
    }
    // Records the failure (the first one wins) and stops the case. Returns
    // false, for `return st.fail(...)` in a check.
    template <class... A>
    bool fail(const A&... what) {
        if (!failed.exchange(true)) {
            std::ostringstream os;
            (os << ... << what);
            std::snprintf(why, sizeof(why), "%s", os.str().c_str());
        }
        stop = true;
        return false;
    }
    // True if @err is one of @allowed; else fails the case with @what.
    template <class... A>
    bool errno_in(int err, std::initializer_list<int> allowed, const A&... what) {
        for (int e : allowed)
            if (err == e)
                return true;
        return fail(what..., ": ", errno_name(err));
    }
    template <class... A>
    bool ok(int err, const A&... what) {
        return errno_in(err, {0}, what...);
    }
};

static_assert(std::atomic<bool>::is_always_lock_free && std::atomic<int>::is_always_lock_free &&
                  std::atomic<std::uint64_t>::is_always_lock_free,
              "atomics shared between processes must be lock-free");

using kt::shared_obj;

// Takes a race_state's check_lock if it is free, across processes, and
// releases it when it goes. Nobody waits for it: a process waiting with a
// mapping held would keep the others' unmaps from being the last.
class check_guard {
public:
    explicit check_guard(race_state& st)
        : st_(st), held_(!st.check_lock.exchange(1, std::memory_order_acquire)) {}
    check_guard(const check_guard&) = delete;
    check_guard& operator=(const check_guard&) = delete;
    ~check_guard() {
        if (held_)
            st_.check_lock.store(0, std::memory_order_release);
    }
    explicit operator bool() const { return held_; }

private:
    race_state& st_;
    const bool held_;
};

// A pause in a spin loop.
inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#else
    std::atomic_signal_fence(std::memory_order_seq_cst);
#endif
}

// Threads meet here and leave together: they spin, so that no wakeup puts
// one far behind (yielding now and then if they share a CPU).
class spin_barrier {
public:
    spin_barrier(unsigned n, bool yield) : n_(n), yield_(yield) {}
    void wait() {
        unsigned gen = gen_.load(std::memory_order_acquire);
        if (arrived_.fetch_add(1, std::memory_order_acq_rel) + 1 == n_) {
            arrived_.store(0, std::memory_order_relaxed);
            gen_.store(gen + 1, std::memory_order_release);
            return;
        }
        for (unsigned spins = 1; gen_.load(std::memory_order_acquire) == gen; spins++) {
            cpu_relax();
            if (yield_ && spins % 1024 == 0)
                ::sched_yield();
        }
    }

private:
    const unsigned n_;
    const bool yield_;
    std::atomic<unsigned> arrived_{0};
    std::atomic<unsigned> gen_{0};
};

// Keeps every CPU busy with a spinner of the lowest priority (SCHED_IDLE)
// while it lives, so that a thread woken on it preempts the spinner at
// once. Under TCG an idle vCPU can be slow to run a woken thread: on the
// debug kernel a set-output round that wakes a waiter on a mutex took ten
// times longer without this.
class cpu_keeper {
public:
    cpu_keeper() {
        for (int cpu = 0; cpu < kt::online_cpus(); cpu++)
            spinners_.emplace_back([this, cpu] {
                sched_param p{};
                ::sched_setscheduler(0, SCHED_IDLE, &p);
                kt::pin_to(cpu);
                while (!stop_.load(std::memory_order_relaxed))
                    cpu_relax();
            });
    }
    cpu_keeper(const cpu_keeper&) = delete;
    cpu_keeper& operator=(const cpu_keeper&) = delete;
    ~cpu_keeper() {
        stop_ = true;
        for (auto& t : spinners_)
            t.join();
    }

private:
    std::atomic<bool> stop_{false};
    std::vector<std::thread> spinners_;
};

// Reaps a child of the case; one that died or failed fails the case.
void join_child(race_state& st, pid_t pid, const char* who) {
    int s = kt::wait_child(pid);
    if (WIFSIGNALED(s))
        st.fail(who, " was killed by signal ", WTERMSIG(s), " (", ::strsignal(WTERMSIG(s)), ")");
    else if (!WIFEXITED(s) || WEXITSTATUS(s))
        st.fail(who, " ended with wait status ", s);
}

// /sys/module/kring/refcnt: one per open kring file; -1 if not there.
long module_refcount() {
    long n = -1;
    if (std::FILE* f = std::fopen("/sys/module/kring/refcnt", "re")) {
        if (std::fscanf(f, "%ld", &n) != 1)
            n = -1;
        std::fclose(f);
    }
    return n;
}

using race_case = void (*)(race_state&, clk::duration);

// Runs @c for @run in fresh shared state and returns its first failure, ""
// if none. A case must leave no channel behind: the module's reference
// count comes back to where it was (a deferred last fput lags, as long as
// the host makes it).
std::string run_case(race_case c, clk::duration run) {
    shared_obj<race_state> st;
    const long before = module_refcount();
    c(*st, run);
    if (!st->failed && before >= 0) {
        long now = module_refcount();
        for (auto end = clk::now() + kt::patience; now != before && clk::now() < end;
             now = module_refcount())
            std::this_thread::sleep_for(10ms);
        if (now != before)
            st->fail("kring's reference count is ", now, " after the case, ", before,
                     " before: a channel leaked");
    }
    return st->failed ? st->why : "";
}

// An ioctl without argument and the errno it must give (0: success).
struct ioctl_call {
    unsigned long req;
    const char* name;
    int err;
};

// Source NONE: the channel controls work; the AUX controls are the tracer's.
constexpr ioctl_call none_source_ioctls[] = {
    {KRING_IOC_ENABLE, "ENABLE", 0},
    {KRING_IOC_PAUSE_OUTPUT, "PAUSE_OUTPUT", 0},
    {KRING_IOC_RESUME_OUTPUT, "RESUME_OUTPUT", 0},
    {KRING_IOC_DISABLE, "DISABLE", 0},
    {KRING_IOC_AUX_SNAPSHOT, "AUX_SNAPSHOT", EOPNOTSUPP},
    {KRING_IOC_AUX_PAUSE, "AUX_PAUSE", EOPNOTSUPP},
    {KRING_IOC_AUX_RESUME, "AUX_RESUME", EOPNOTSUPP},
};

bool open_none(race_state& st, kt::raw_channel& ch) {
    return st.ok(ch.open_dev(), "open /dev/kring") &&
           st.ok(ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1)), "configure");
}

// STATS of @fd says MAPPED (this process holds a mapping).
bool check_mapped(race_state& st, int fd, const char* who) {
    kring_stats s;
    if (!st.ok(kt::stats_of(fd, s), who, ": STATS"))
        return false;
    if (!(s.flags & KRING_STATS_F_MAPPED))
        return st.fail(who, ": STATS does not say MAPPED (flags ", s.flags,
                       ") while this process holds a mapping");
    return true;
}

// Whether @ctl, the control page of a mapping this process holds, is the
// channel's live buffer: STATS says MAPPED, and PAUSE_OUTPUT and
// RESUME_OUTPUT show in it. One process at a time toggles (check_lock),
// so that none sees another's; the others skip that part meanwhile.
bool check_live(race_state& st, int fd, const kring_ctl_page* ctl, const char* who) {
    if (!check_mapped(st, fd, who))
        return false;
    if (ctl->data_size != ring_len() - kt::page_size())
        return st.fail(who, ": data_size ", ctl->data_size, " in the control page");
    check_guard guard(st);
    if (!guard)
        return true;
    for (bool pause : {true, false}) {
        const char* name = pause ? "PAUSE_OUTPUT" : "RESUME_OUTPUT";
        if (!st.ok(kt::ioctl0(fd, pause ? KRING_IOC_PAUSE_OUTPUT : KRING_IOC_RESUME_OUTPUT), who,
                   ": ", name))
            return false;
        bool shown = __atomic_load_n(&ctl->flags, __ATOMIC_ACQUIRE) & KRING_CTL_F_PAUSED;
        if (shown != pause)
            return st.fail(who, ": ", name,
                           " does not show in the control page this process maps: the mapping "
                           "is of a buffer the channel no longer has");
    }
    return true;
}

// ---- 1: the AUX area, mapped and unmapped by two processes ---------------

// Maps the AUX area, reads a byte of it and unmaps it until the deadline.
// Nothing writes into the channel, so a live area reads as zeros.
void aux_cycle(race_state& st, int fd, kring_ctl_page* ctl, clk::time_point deadline,
               const char* who, int slot) {
    std::minstd_rand rng(::getpid());
    while (st.running(deadline)) {
        kt::mapping aux = kt::map_aux(fd, ctl, ring_len(), aux_len(), true);
        if (aux.error()) {
            if (!st.errno_in(aux.error(), {EINVAL}, who, ": mmap of the AUX area"))
                return;
            st.count[3]++;
            continue;
        }
        std::size_t at = rng() % aux_len();
        if (std::uint8_t b = aux.byte(at)) {
            st.fail(who, ": byte ", at, " of the AUX area reads ", int(b),
                    " though nothing writes there: the mapping is not of the channel's area");
            return;
        }
        if (!st.ok(aux.unmap(), who, ": munmap of the AUX area"))
            return;
        st.count[slot]++;
    }
}

// A forked child and the parent loop mmap / read / munmap of the AUX area
// on the shared file, each holding its own data-ring mapping, while a
// thread of the parent issues the channel's ioctls (which also hold its
// lock, so an unmap that dropped the last AUX mapping waits there while
// a mmap may get in).
void aux_map_unmap_across_fork(race_state& st, clk::duration run) {
    kt::raw_channel ch;
    if (!open_none(st, ch) || !st.ok(ch.map_ring(ring_order, true, false), "mmap of the data ring"))
        return;
    const auto deadline = clk::now() + run;
    pid_t child = kt::fork_child([&] {
        // The parent's mappings are not inherited (VM_DONTCOPY).
        kt::mapping ring(ch.fd, ring_len(), rw, 0);
        if (st.ok(ring.error(), "child: mmap of the data ring"))
            aux_cycle(st, ch.fd, ring.ctl(), deadline, "child", 1);
        return 0;
    });
    if (child < 0)
        return (void)st.fail("fork: ", errno_name(errno));
    std::thread ioctls([&] {
        while (st.running(deadline)) {
            if (!check_mapped(st, ch.fd, "parent"))
                return;
            for (const auto& c : none_source_ioctls)
                if (!st.errno_in(ch.ioctl0(c.req), {c.err}, c.name))
                    return;
            st.count[2]++;
        }
    });
    aux_cycle(st, ch.fd, ch.ctl, deadline, "parent", 0);
    ioctls.join();
    join_child(st, child, "the child");
    std::printf(
        "race aux: %llu + %llu AUX maps (parent + child), %llu refused, "
        "%llu ioctl rounds\n",
        st.n(0), st.n(1), st.n(3), st.n(2));
}

// ---- 2: the data ring, mapped and unmapped by three processes ------------

// Maps the data ring, checks it is the channel's buffer and unmaps it,
// until the deadline.
void ring_cycle(race_state& st, int fd, clk::time_point deadline, const char* who, int slot) {
    while (st.running(deadline)) {
        kt::mapping ring(fd, ring_len(), rw, 0);
        if (!st.ok(ring.error(), who, ": mmap of the data ring") ||
            !check_live(st, fd, ring.ctl(), who) ||
            !st.ok(ring.unmap(), who, ": munmap of the data ring"))
            return;
        st.count[slot]++;
    }
}

// Issues STATS, SET_WAKEUP, ENABLE and DISABLE on @fd until the deadline.
// All hold the channel's lock, ENABLE and DISABLE of the synthetic source
// for long (they start and stop its thread): an unmap that dropped the
// last mapping count waits there while a mmap may get in.
void lock_holder(race_state& st, int fd, clk::time_point deadline, const char* who) {
    kring_wakeup w{};
    while (st.running(deadline)) {
        kring_stats s;
        if (!st.ok(kt::stats_of(fd, s), who, ": STATS") ||
            !st.ok(::ioctl(fd, KRING_IOC_SET_WAKEUP, &w) ? errno : 0, who, ": SET_WAKEUP") ||
            !st.ok(kt::ioctl0(fd, KRING_IOC_ENABLE), who, ": ENABLE") ||
            !st.ok(kt::ioctl0(fd, KRING_IOC_DISABLE), who, ": DISABLE"))
            return;
        st.count[3]++;
    }
}

// One of the processes of DataMapUnmapAcrossFork: ring_cycle() and a
// lock_holder() thread.
void ring_process(race_state& st, int fd, clk::time_point deadline, const char* who, int slot) {
    std::thread ioctls(lock_holder, std::ref(st), fd, deadline, who);
    ring_cycle(st, fd, deadline, who, slot);
    ioctls.join();
}

// Two forked children and the parent loop mmap / check / munmap of the
// data ring on the shared file, each with a thread issuing ioctls that
// hold the channel's lock; nothing else holds a mapping, so the buffer is
// allocated and freed over and over. The source is the synthetic one at
// 1000 records/s: it writes into whichever buffer the channel has.
void data_map_unmap_across_fork(race_state& st, clk::duration run) {
    kt::raw_channel ch;
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, KRING_SAMPLE_TIME);
    a.config[0] = 1000;
    if (!st.ok(ch.open_dev(), "open /dev/kring") ||
        !st.ok(ch.configure(a), "configure the synthetic source on CPU 0"))
        return;
    const auto deadline = clk::now() + run;
    pid_t children[2];
    for (int i = 0; i < 2; i++) {
        const char* who = i ? "child 2" : "child 1";
        children[i] = kt::fork_child([&] {
            ring_process(st, ch.fd, deadline, who, 1 + i);
            return 0;
        });
        if (children[i] < 0) {
            st.fail("fork: ", errno_name(errno));
            if (i)
                join_child(st, children[0], "child 1");
            return;
        }
    }
    ring_process(st, ch.fd, deadline, "parent", 0);
    join_child(st, children[0], "child 1");
    join_child(st, children[1], "child 2");
    kring_stats s;
    if (!st.failed && st.ok(kt::stats_of(ch.fd, s), "STATS at the end") &&
        (s.flags & KRING_STATS_F_MAPPED))
        st.fail("STATS says MAPPED after every mapping is gone");
    std::printf(
        "race data: %llu + %llu + %llu ring maps (parent + children), "
        "%llu ioctl rounds\n",
        st.n(0), st.n(1), st.n(2), st.n(3));
}

// ---- 3: close against mmap ----------------------------------------------

// The child's half: maps the data ring and the AUX area of the shared
// file and issues ioctls, while the parent has closed its copy.
void keep_mapping(race_state& st, int fd, clk::time_point deadline) {
    while (st.running(deadline)) {
        kt::mapping ring(fd, ring_len(), rw, 0);
        if (!st.ok(ring.error(), "child: mmap of the data ring") || !check_mapped(st, fd, "child"))
            return;
        kt::mapping aux = kt::map_aux(fd, ring.ctl(), ring_len(), aux_len(), true);
        if (!st.ok(aux.error(), "child: mmap of the AUX area"))
            return;
        for (const auto& c : none_source_ioctls)
            if (!st.errno_in(kt::ioctl0(fd, c.req), {c.err}, "child: ", c.name))
                return;
        if (!st.ok(aux.unmap(), "child: munmap of the AUX area") ||
            !st.ok(ring.unmap(), "child: munmap of the data ring"))
            return;
        st.count[0]++;
    }
}

// A new channel, mapped, closed while mapped (the mapping keeps it) and
// then unmapped (which ends it).
bool reopen_cycle(race_state& st) {
    kt::raw_channel c;
    if (!open_none(st, c) || !st.ok(c.map_ring(ring_order, true, false), "parent: mmap") ||
        !check_mapped(st, c.fd, "parent"))
        return false;
    if (!st.ok(::close(c.fd) ? errno : 0, "parent: close while mapped"))
        return false;
    c.fd = -1;
    if (c.ctl->data_size != ring_len() - kt::page_size())
        return st.fail("parent: data_size ", c.ctl->data_size, " after close");
    return true;
}

// One process: a thread opens, configures and closes channels, leaving
// their (then stale) descriptor number where a second thread maps it and
// a third issues ioctls on it. The close waits for a mmap attempt after
// the configure, then a random moment, so that it lands anywhere in the
// next one. A file closed during a mmap lives on in that mapping and goes
// at its munmap.
void close_against_mmap_threads(race_state& st, clk::time_point deadline) {
    std::atomic<int> shared_fd{-1};
    std::atomic<std::uint64_t> attempts{0};
    const kring_attr attr = kt::make_attr(KRING_SOURCE_NONE, -1);
    std::thread opener([&] {
        std::minstd_rand rng(::gettid());
        while (st.running(deadline)) {
            int fd = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
            if (fd < 0)
                return (void)st.fail("open /dev/kring: ", errno_name(errno));
            shared_fd = fd;  // before CONFIGURE: mmap may find it unconfigured
            int e = ::ioctl(fd, KRING_IOC_CONFIGURE, &attr) ? errno : 0;
            for (auto seen = attempts.load(); attempts.load() == seen && st.running(deadline);)
                std::this_thread::yield();
            for (auto n = rng() % 8; n; n--)
                std::this_thread::yield();
            if (!st.ok(::close(fd) ? errno : 0, "close") || !st.ok(e, "configure"))
                return;
            st.count[2]++;
        }
    });
    std::thread mapper([&] {
        while (st.running(deadline)) {
            int fd = shared_fd;
            if (fd < 0)
                continue;
            kt::mapping ring(fd, ring_len(), rw, 0);
            attempts++;
            // Closed (EBADF), or reopened and not configured yet (EINVAL).
            if (ring.error()) {
                if (!st.errno_in(ring.error(), {EBADF, EINVAL}, "mmap of a file being closed"))
                    return;
                st.count[4]++;
                continue;
            }
            if (ring.ctl()->data_size != ring_len() - kt::page_size())
                return (void)st.fail("data_size ", ring.ctl()->data_size,
                                     " in a mapping of a file being closed");
            if (!st.ok(ring.unmap(), "munmap of a file being closed"))
                return;
            st.count[3]++;
        }
    });
    std::thread ioctls([&] {
        while (st.running(deadline)) {
            int fd = shared_fd;
            if (fd < 0)
                continue;
            kring_stats s;
            if (!st.errno_in(kt::stats_of(fd, s), {0, EBADF}, "STATS of a file being closed") ||
                !st.errno_in(kt::ioctl0(fd, KRING_IOC_ENABLE), {0, EINVAL, EBADF},
                             "ENABLE of a file being closed") ||
                !st.errno_in(kt::ioctl0(fd, KRING_IOC_DISABLE), {0, EINVAL, EBADF},
                             "DISABLE of a file being closed"))
                return;
        }
    });
    opener.join();
    mapper.join();
    ioctls.join();
}

// A forked child keeps mapping and issuing ioctls on the shared file while
// the parent closes its copy at once and opens, maps, closes channels of
// its own; then threads of one process race close() against mmap().
void close_while_mapping(race_state& st, clk::duration run) {
    {
        kt::raw_channel ch;
        if (!open_none(st, ch))
            return;
        const auto deadline = clk::now() + run / 2;
        pid_t child = kt::fork_child([&] {
            keep_mapping(st, ch.fd, deadline);
            return 0;
        });
        if (child < 0)
            return (void)st.fail("fork: ", errno_name(errno));
        // The child's copy of the file keeps the channel.
        ::close(ch.fd);
        ch.fd = -1;
        while (st.running(deadline) && reopen_cycle(st))
            st.count[1]++;
        join_child(st, child, "the child");
    }
    if (!st.failed)
        close_against_mmap_threads(st, clk::now() + run / 2);
    std::printf(
        "race close: child %llu map rounds, parent %llu channels closed while mapped; "
        "threads: %llu channels, %llu maps, %llu refused\n",
        st.n(0), st.n(1), st.n(2), st.n(3), st.n(4));
}

// ---- 4: set-output both ways --------------------------------------------

// Two threads, one per CPU, redirect at the same moment: A into B, and B
// into A (@chain false: a cycle) or B into C (@chain true: a chain). One
// of the two must be refused (the target is redirected, or is itself a
// target); the one that succeeded is undone before the next round.
void set_output_race(race_state& st, clk::duration run, bool chain) {
    kt::raw_channel a, b, c;
    for (auto* ch : {&a, &b, &c})
        if (!st.ok(ch->open_dev(), "open /dev/kring") ||
            !st.ok(ch->configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)),
                   "configure a sched channel on CPU 0"))
            return;
    kt::raw_channel* const src[2] = {&a, &b};
    kt::raw_channel* const dst[2] = {&b, chain ? &c : &a};
    const char* const names[2] = {"A->B", chain ? "B->C" : "B->A"};
    const bool two_cpus = kt::online_cpus() > 1;
    spin_barrier barrier(2, !two_cpus);
    std::atomic<int> res[2];
    bool done = false;
    const auto deadline = clk::now() + run;

    // Thread 0, between the rounds: judge the round and undo it.
    auto judge = [&](std::uint64_t round) {
        int r0 = res[0], r1 = res[1];
        if (r0 == 0 && r1 == 0) {
            // A redirected channel cannot be mapped: the state confirms it.
            int ea = kt::mapping(a.fd, ring_len(), rw, 0).error();
            int eb = kt::mapping(b.fd, ring_len(), rw, 0).error();
            st.fail(names[0], " and ", names[1], " both succeeded in round ", round, ": ",
                    chain ? "A writes into B, which is itself redirected into C"
                          : "each channel is redirected into the other",
                    " (mmap of A: ", errno_name(ea), ", of B: ", errno_name(eb), ")");
        } else if (r0 != 0 && r1 != 0) {
            st.fail("round ", round, ": neither succeeded: ", names[0], " ", errno_name(r0), ", ",
                    names[1], " ", errno_name(r1));
        } else {
            int i = r0 == 0 ? 1 : 0;
            st.errno_in(res[i], {EINVAL, EBUSY}, "round ", round, ": ", names[i]);
        }
        for (int i = 0; i < 2; i++)
            if (res[i] == 0)
                st.ok(src[i]->set_output(-1), "round ", round, ": undoing ", names[i]);
        st.count[0]++;
        done = !st.running(deadline);
    };
    auto worker = [&](int i) {
        if (two_cpus)
            kt::pin_to(i);
        for (std::uint64_t round = 1;; round++) {
            barrier.wait();
            // The lag between the two ioctls is swept round by round (one
            // thread or the other spins 0 to 255 times first), so that
            // some rounds start them together whatever the threads' skew.
            if ((round & 1) == unsigned(i))
                for (auto n = (round / 2) % 256; n; n--)
                    cpu_relax();
            res[i] = src[i]->set_output(dst[i]->fd);
            barrier.wait();
            if (i == 0)
                judge(round);
            barrier.wait();
            if (done)
                break;
        }
    };
    cpu_keeper keeper;  // a worker woken from a contended mutex runs at once
    // STATS holds A's and B's locks now and then: a SET_OUTPUT that has
    // read its target may have to wait for its own channel's lock.
    std::atomic<bool> holding{true};
    std::thread holder([&] {
        kring_stats s;
        while (holding.load(std::memory_order_relaxed))
            if (!st.ok(kt::stats_of(a.fd, s), "STATS of A") ||
                !st.ok(kt::stats_of(b.fd, s), "STATS of B"))
                return;
    });
    std::thread t1(worker, 1);
    worker(0);
    t1.join();
    holding = false;
    holder.join();
    kt::unpin();
    std::printf("race set-output (%s): %llu rounds\n", chain ? "chain" : "cycle", st.n(0));
}

void set_output_cycle(race_state& st, clk::duration run) { set_output_race(st, run, false); }
void set_output_chain(race_state& st, clk::duration run) { set_output_race(st, run, true); }

// ---- 5: snapshots while the AUX area comes and goes -----------------------

// Maps the data ring and the AUX area read-only (snapshot mode), takes a
// snapshot (which must work: this process holds a read-only area), reads
// a byte, resumes and unmaps both, until the deadline.
void snapshot_cycle(race_state& st, int fd, clk::time_point deadline, const char* who, int slot) {
    std::minstd_rand rng(::getpid());
    while (st.running(deadline)) {
        kt::mapping ring(fd, ring_len(), rw, 0);
        if (!st.ok(ring.error(), who, ": mmap of the data ring"))
            return;
        kt::mapping aux = kt::map_aux(fd, ring.ctl(), ring_len(), aux_len(), false);
        if (!st.ok(aux.error(), who, ": read-only mmap of the AUX area") ||
            !st.ok(kt::ioctl0(fd, KRING_IOC_AUX_SNAPSHOT), who,
                   ": AUX_SNAPSHOT while this process holds a read-only AUX area"))
            return;
        (void)aux.byte(rng() % aux_len());
        if (!st.ok(kt::ioctl0(fd, KRING_IOC_AUX_RESUME), who, ": AUX_RESUME") ||
            !st.ok(aux.unmap(), who, ": munmap of the AUX area") ||
            !st.ok(ring.unmap(), who, ": munmap of the data ring"))
            return;
        st.count[slot]++;
    }
}

// The AUX tracer runs in snapshot mode while a forked child and the parent
// map and unmap the data ring and the AUX area, and a thread takes
// snapshots and resumes (a snapshot without a read-only area is EINVAL).
void snapshot_vs_unmap(race_state& st, clk::duration run) {
    kt::raw_channel ch;
    if (!st.ok(ch.open_dev(), "open /dev/kring") ||
        !st.ok(ch.configure(kt::make_attr(KRING_SOURCE_AUX_TRACER, 0)),
               "configure the AUX tracer on CPU 0") ||
        !st.ok(ch.ioctl0(KRING_IOC_ENABLE), "ENABLE"))
        return;
    const auto deadline = clk::now() + run;
    pid_t child = kt::fork_child([&] {
        snapshot_cycle(st, ch.fd, deadline, "child", 1);
        return 0;
    });
    if (child < 0)
        return (void)st.fail("fork: ", errno_name(errno));
    std::thread snapper([&] {
        while (st.running(deadline)) {
            int e = ch.ioctl0(KRING_IOC_AUX_SNAPSHOT);
            if (!st.errno_in(e, {0, EINVAL}, "AUX_SNAPSHOT") ||
                !st.ok(ch.ioctl0(KRING_IOC_AUX_RESUME), "AUX_RESUME"))
                return;
            st.count[e ? 3 : 2]++;
        }
    });
    snapshot_cycle(st, ch.fd, deadline, "parent", 0);
    snapper.join();
    join_child(st, child, "the child");
    kring_stats s;
    if (st.ok(ch.ioctl0(KRING_IOC_DISABLE), "DISABLE") &&
        st.ok(kt::stats_of(ch.fd, s), "STATS at the end") && (s.flags & KRING_STATS_F_MAPPED))
        st.fail("STATS says MAPPED after every mapping is gone");
    std::printf(
        "race snapshot: %llu + %llu map rounds (parent + child), snapshots: %llu taken, "
        "%llu without an area\n",
        st.n(0), st.n(1), st.n(2), st.n(3));
}

// ---- 6: CPU 1 going offline and back under channels bound to it ----------

// One round on CPU 1 with source set @kind: 0 the synthetic generator with
// its nesting timer, 1 a timer channel with a sched channel redirected into
// it, 2 the AUX tracer writing into a mapped AUX area. Configure and enable
// may find CPU 1 offline (EINVAL from a capture source, ENODEV from the
// generator); whatever was written must read back as well-formed records.
void hotplug_round(race_state& st, int kind, const char* who) {
    kt::raw_channel ch, side;
    if (!st.ok(ch.open_dev(), who, ": open /dev/kring"))
        return;
    kring_attr a = kind == 0   ? kt::make_attr(KRING_SOURCE_SYNTHETIC, 1, KRING_SAMPLE_RAW)
                   : kind == 1 ? kt::attr(KRING_SOURCE_TIMER, 1, -1)
                               : kt::make_attr(KRING_SOURCE_AUX_TRACER, 1);
    if (kind == 0) {
        a.config[0] = 20000;  // records per second
        a.config[2] = KRING_SYNTH_F_NEST;
    } else if (kind == 1) {
        a.config[0] = 1000;  // Hz
    }
    // A refusal for an offline CPU is right only if CPU 1 was not online
    // throughout the call.
    auto offline_refusal = [&](auto call, std::initializer_list<int> allowed, const char* what) {
        const std::uint64_t gen = st.plug_gen.load();
        int e = call();
        if (e && gen % 2 == 0 && st.plug_gen.load() == gen)
            return st.fail(who, ": ", what, ": ", errno_name(e), " though CPU 1 was online");
        return e == 0 || st.errno_in(e, allowed, who, ": ", what);
    };
    int e = 0;
    if (!offline_refusal([&] { return e = ch.configure(a); }, {EINVAL, ENODEV},
                         "configure on CPU 1"))
        return;
    if (e) {
        st.count[3]++;
        return;
    }
    if (kind == 1) {
        // Both bound to CPU 1: a redirect perf's constraints allow.
        if (!st.ok(side.open_dev(), who, ": open /dev/kring") ||
            !offline_refusal(
                [&] { return e = side.configure(kt::attr(KRING_SOURCE_SCHED, 1, -1)); }, {EINVAL},
                "configure a sched channel on CPU 1"))
            return;
        if (e) {
            st.count[3]++;
            return;
        }
        if (!st.ok(side.set_output(ch.fd), who, ": SET_OUTPUT of sched into timer"))
            return;
    }
    if (!st.ok(ch.map_ring(ring_order, true, false), who, ": mmap of the data ring"))
        return;
    kt::mapping aux;
    if (kind == 2) {
        aux = kt::map_aux(ch.fd, ch.ctl, ring_len(), aux_len(), true);
        if (!st.ok(aux.error(), who, ": mmap of the AUX area"))
            return;
    }
    // Capture sources enable on an offline CPU (and start when it comes
    // back); the generator needs its CPU.
    if (!offline_refusal([&] { return ch.ioctl0(KRING_IOC_ENABLE); }, {ENODEV}, "ENABLE") ||
        (kind == 1 && !st.ok(side.ioctl0(KRING_IOC_ENABLE), who, ": ENABLE of sched")))
        return;
    for (int i = 0; i < 4 && !st.stop; i++) {
        std::this_thread::sleep_for(2ms);
        if (ch.consume([](const kring_record_header&, const std::uint8_t*) {}) < 0)
            return (void)st.fail(who, ": a malformed record at ring position ", ch.tail,
                                 " (source set ", kind, ")");
    }
    if (!st.ok(ch.ioctl0(KRING_IOC_DISABLE), who, ": DISABLE"))
        return;
    st.count[kind == 0 ? 4 : kind == 1 ? 5 : 2]++;
}

// A thread takes CPU 1 offline and brings it back, again and again, while
// a thread and a forked child run rounds of channels bound to CPU 1 (the
// child starts one source set later, so different sources meet).
void hotplug_vs_channels(race_state& st, clk::duration run) {
    const auto deadline = clk::now() + run;
    kt::cpu1_online_guard online;
    auto rounds = [&](int first, const char* who) {
        for (int kind = first; st.running(deadline); kind = (kind + 1) % 3)
            hotplug_round(st, kind, who);
    };
    pid_t child = kt::fork_child([&] {
        rounds(1, "child");
        return 0;
    });
    if (child < 0)
        return (void)st.fail("fork: ", errno_name(errno));
    std::thread plugger([&] {
        std::minstd_rand rng(42);
        while (st.running(deadline)) {
            st.plug_gen++;  // odd: CPU 1 may be offline from here on
            int e = kt::set_cpu1_online(false);
            if (!st.errno_in(e, {0, EBUSY}, "taking CPU 1 offline"))
                return;
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));
            if (!st.ok(kt::set_cpu1_online(true), "bringing CPU 1 back online"))
                return;
            st.plug_gen++;  // even: online again
            st.count[e ? 1 : 0]++;
            std::this_thread::sleep_for(std::chrono::milliseconds(rng() % 20));
        }
    });
    rounds(0, "parent");
    plugger.join();
    join_child(st, child, "the child");
    std::printf(
        "race hotplug: CPU 1 offline and back %llu times (%llu refused); rounds: "
        "%llu synthetic, %llu timer+sched, %llu AUX tracer, %llu found CPU 1 offline\n",
        st.n(0), st.n(1), st.n(4), st.n(5), st.n(2), st.n(3));
}

// ---- the cases ------------------------------------------------------------

bool capture_available() { return kt::abi_features() & KRING_FEAT_CAPTURE; }

TEST(Race, AuxMapUnmapAcrossFork) {
    std::string why = run_case(aux_map_unmap_across_fork, run_time);
    EXPECT_TRUE(why.empty()) << why;
}

TEST(Race, DataMapUnmapAcrossFork) {
    std::string why = run_case(data_map_unmap_across_fork, run_time);
    EXPECT_TRUE(why.empty()) << why;
}

TEST(Race, CloseWhileMapping) {
    std::string why = run_case(close_while_mapping, run_time);
    EXPECT_TRUE(why.empty()) << why;
}

TEST(Race, SetOutputCycle) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "per-CPU sched channels need root";
    if (!capture_available())
        GTEST_SKIP() << "the module has no capture modes (KRING_FEAT_CAPTURE clear)";
    std::string why = run_case(set_output_cycle, run_time);
    EXPECT_TRUE(why.empty()) << why;
}

TEST(Race, SetOutputChain) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "per-CPU sched channels need root";
    if (!capture_available())
        GTEST_SKIP() << "the module has no capture modes (KRING_FEAT_CAPTURE clear)";
    std::string why = run_case(set_output_chain, run_time);
    EXPECT_TRUE(why.empty()) << why;
}

TEST(Race, SnapshotVsUnmap) {
    std::string why = run_case(snapshot_vs_unmap, run_time);
    EXPECT_TRUE(why.empty()) << why;
}

TEST(Race, HotplugVsChannels) {
    if (::geteuid() != 0 || !kt::cpu1_hotpluggable())
        GTEST_SKIP() << "needs root and a CPU 1 that can go offline (" << kt::cpu1_online << ")";
    if (!capture_available())
        GTEST_SKIP() << "the module has no capture modes (KRING_FEAT_CAPTURE clear)";
    std::string why = run_case(hotplug_vs_channels, run_time);
    EXPECT_TRUE(why.empty()) << why;
    EXPECT_EQ(kt::read_sysfs(kt::cpu1_online), "1") << "CPU 1 is not back online";
}

// The cases that need no privilege, run as uid/gid 65534 with room in
// RLIMIT_MEMLOCK (raised while still root); what needs privilege is
// refused: a per-CPU sched channel (EACCES), unloading kring (EPERM).
// Runs in a child; the first failure goes to @out.
bool run_as_nobody(race_state& out) {
    struct named_case {
        const char* name;
        race_case run;
    };
    static constexpr named_case cases[] = {
        {"AuxMapUnmapAcrossFork", aux_map_unmap_across_fork},
        {"DataMapUnmapAcrossFork", data_map_unmap_across_fork},
        {"CloseWhileMapping", close_while_mapping},
        {"SnapshotVsUnmap", snapshot_vs_unmap},
    };
    rlimit rl{64 << 20, 64 << 20};
    if (::setrlimit(RLIMIT_MEMLOCK, &rl) || !kt::become_nobody())
        return out.fail("cannot become uid 65534 with a larger RLIMIT_MEMLOCK: ",
                        errno_name(errno));
    kt::raw_channel sched;
    if (!out.ok(sched.open_dev(), "as uid 65534: open /dev/kring") ||
        !out.errno_in(sched.configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), {EACCES},
                      "as uid 65534: configure a per-CPU sched channel"))
        return false;
    long r = ::syscall(SYS_delete_module, "kring", O_NONBLOCK);
    if (!out.errno_in(r ? errno : 0, {EPERM}, "as uid 65534: delete_module(kring)"))
        return false;
    for (const auto& c : cases) {
        std::string why = run_case(c.run, unprivileged_run_time);
        if (!why.empty())
            return out.fail("as uid 65534, ", c.name, ": ", why);
    }
    return true;
}

TEST(Race, Unprivileged) {
    // The AUX tracer is a test generator: opened to every user here, as an
    // administrator may (Security.TestGeneratorsNeedPrivilege checks the
    // default refusal).
    kt::module_param test_sources("test_sources");
    if (::geteuid() != 0 || !test_sources.usable() || !test_sources.set("1"))
        GTEST_SKIP() << "needs root to drop to another user and open the test generators";
    shared_obj<race_state> out;
    int status = kt::in_child([&] { return run_as_nobody(*out) ? 0 : 1; });
    EXPECT_FALSE(out->failed) << out->why;
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "wait status " << status;
}

// ---- unloading with freed buffers -----------------------------------------

const char* const module_path = "/kring/kring.ko";

bool module_loaded() { return ::access("/sys/module/kring", F_OK) == 0; }

// The device mode the module was loaded with (the guest script opens it to
// other users): every reload keeps it.
std::string module_params() {
    std::string mode = kt::read_sysfs("/sys/module/kring/parameters/dev_mode");
    return mode.empty() ? std::string() : "dev_mode=" + mode;
}

// 0 or the errno of finit_module(kring.ko) with @params.
int load_module(const std::string& params) {
    int fd = ::open(module_path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int e = ::syscall(SYS_finit_module, fd, params.c_str(), 0) ? errno : 0;
    ::close(fd);
    return e;
}

// 0, or the errno of the last attempt: a last fput may be deferred, so a
// busy module is asked again for up to @patience.
int unload_module(clk::duration patience) {
    for (auto end = clk::now() + patience;;) {
        if (::syscall(SYS_delete_module, "kring", O_NONBLOCK) == 0)
            return 0;
        int e = errno;
        if ((e != EBUSY && e != EWOULDBLOCK) || clk::now() >= end)
            return e;
        std::this_thread::sleep_for(10ms);
    }
}

// Loads kring.ko again whatever happens to the test: the guest's other
// test binaries run after this one.
struct module_reload_guard {
    std::string params = module_params();
    ~module_reload_guard() {
        if (!module_loaded())
            load_module(params);
    }
};

// Channels with their data ring and AUX area mapped, touched, unmapped and
// closed: each unmap queues the freeing of a buffer with call_rcu().
void map_and_close_channels(int n) {
    for (int i = 0; i < n; i++) {
        kt::raw_channel ch;
        ASSERT_EQ(ch.open_dev(), 0);
        ASSERT_EQ(ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1)), 0);
        ASSERT_EQ(ch.map_ring(ring_order, true, false), 0);
        kt::mapping aux = kt::map_aux(ch.fd, ch.ctl, ring_len(), aux_len(), true);
        ASSERT_EQ(aux.error(), 0);
        EXPECT_EQ(aux.byte(aux_len() - 1), 0);
        EXPECT_EQ(ch.ctl->data_size, ring_len() - kt::page_size());
        ASSERT_EQ(aux.unmap(), 0);
        ch.unmap();
    }
}

// Configure a per-thread sched channel once: kring attaches its probes to
// the sched tracepoints on the first configure of a capture source.
void attach_probes() {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SCHED, -1);
    a.pid = 0;
    int e = ch.configure(a);
    ASSERT_TRUE(e == 0 || e == EOPNOTSUPP) << "configure(sched): " << errno_name(e);
}

// Unload kring right after its buffers were unmapped and closed, and load
// it again, 20 times: the module must not go while RCU callbacks that run
// its code are pending. Expedited grace periods make that likely:
// synchronize_rcu() (in the last close and in the module loader) then no
// longer waits behind the callbacks the unmaps queued. A short pause after
// each unload lets them run while the module text is gone, rather than
// after the next load has taken its place. The last module loaded attaches
// its probes, as the guest's first load did.
TEST(ModuleCycle, UnloadWithCallbacksPending) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root to unload and load kring";
    if (::access(module_path, R_OK) != 0)
        GTEST_SKIP() << module_path << " is not in this guest";
    ASSERT_TRUE(module_loaded());
    module_reload_guard reload;
    kt::sysfs_setting expedited("/sys/kernel/rcu_expedited");
    const bool fast = expedited.usable() && expedited.set("1");
    const std::string params = module_params();
    const auto t0 = clk::now();
    for (int i = 0; i < 20; i++) {
        ASSERT_NO_FATAL_FAILURE(map_and_close_channels(4)) << "iteration " << i;
        int e = unload_module(kt::patience);
        ASSERT_EQ(e, 0) << "iteration " << i << ": delete_module(kring): " << errno_name(e);
        std::this_thread::sleep_for(20ms);
        e = load_module(params);
        ASSERT_EQ(e, 0) << "iteration " << i << ": finit_module(" << module_path
                        << "): " << errno_name(e);
    }
    std::printf(
        "module cycle: 20 unloads and loads in %lld ms%s\n",
        (long long)std::chrono::duration_cast<std::chrono::milliseconds>(clk::now() - t0).count(),
        fast ? ", expedited grace periods" : "");
    // The module loaded last works.
    map_and_close_channels(1);
    attach_probes();
}

}  // namespace
