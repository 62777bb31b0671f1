// kring sched: capture context switches with the sched source (system-wide:
// one channel per CPU; or one task, per-thread or on every CPU with
// --inherit) for a while, then summarise them per task: switches, time on
// CPU, and how many switches were involuntary (preempted or still runnable).
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/device.hpp"

namespace kring_tool {
namespace {

// TID, TIME, CPU, RAW{size, struct kring_sched_raw}, SEQ.
constexpr std::uint64_t sample_type =
    KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;

struct options {
    bool all_cpus = false;
    int pid = -1;
    bool inherit = false;
    double duration = 1.0;
    unsigned order = 6;
    unsigned top = 20;
};

struct ring {
    kring::device dev;
    int cpu = -1;
    void* map = nullptr;
    std::size_t map_len = 0;
    kring_ctl_page* ctl = nullptr;
    const std::uint8_t* data = nullptr;
    std::size_t data_size = 0;
    std::uint64_t tail = 0;
    std::vector<std::uint8_t> scratch;

    explicit ring(kring::device d) : dev(std::move(d)) {}
    ring(const ring&) = delete;
    ring& operator=(const ring&) = delete;
    ~ring() {
        if (map)
            ::munmap(map, map_len);
    }
};

struct task_stats {
    std::uint32_t pid = 0, tid = 0;
    std::string comm;
    std::uint64_t switches = 0, preempted = 0, runtime = 0;
    std::uint64_t in_since = 0;  // time of the last switch-in, 0: not running
};

struct summary {
    std::map<std::int64_t, task_stats> tasks;  // by tid; idle: -1 - cpu
    std::uint64_t records = 0, lost = 0, bad = 0, forks = 0, exits = 0;
    // Followed modes: count only followed tasks, i.e. those that were a
    // record's subject (its TID field) at some point.
    bool followed = false;
    std::set<std::uint32_t> subjects;

    task_stats& task(std::uint32_t pid, std::uint32_t tid, const char* comm, std::uint32_t cpu) {
        std::int64_t key = tid ? std::int64_t(tid) : -1 - std::int64_t(cpu);
        auto& t = tasks[key];
        t.pid = pid;
        t.tid = tid;
        t.comm.assign(comm, strnlen(comm, 16));
        if (!tid)
            t.comm = fmt::format("idle/{}", cpu);
        return t;
    }

    void add(const std::uint8_t* rec, std::size_t size) {
        // header 8, TID 8, TIME 8, CPU 8, RAW size 4 + payload, SEQ 8
        constexpr std::size_t raw_at = 32;
        std::uint32_t raw_size;
        std::memcpy(&raw_size, rec + raw_at, 4);
        kring_sched_raw r;
        if (raw_size < sizeof(r) || raw_at + 4 + raw_size + 8 != size) {
            bad++;
            return;
        }
        std::uint64_t time;
        std::uint32_t subject;
        std::memcpy(&subject, rec + 12, 4);
        std::memcpy(&time, rec + 16, 8);
        std::memcpy(&r, rec + raw_at + 4, sizeof(r));
        records++;
        if (r.kind == KRING_SCHED_FORK) {
            forks++;
            return;
        }
        if (r.kind == KRING_SCHED_EXIT) {
            exits++;
            return;
        }
        if (r.kind != KRING_SCHED_SWITCH)
            return;
        subjects.insert(subject);
        if (!followed || subjects.count(r.prev_tid)) {
            auto& prev = task(r.prev_pid, r.prev_tid, r.prev_comm, r.cpu);
            prev.switches++;
            // Involuntary: preempted, or still runnable when switched out.
            if ((r.flags & KRING_SCHED_F_PREEMPT) || r.prev_state == 0)
                prev.preempted++;
            if (prev.in_since && time >= prev.in_since)
                prev.runtime += time - prev.in_since;
            prev.in_since = 0;
        }
        if (!followed || subjects.count(r.next_tid))
            task(r.next_pid, r.next_tid, r.next_comm, r.cpu).in_since = time;
    }
};

std::string why(int err, const options& o) {
    if (err == EACCES && o.pid == -1)
        return "capturing every task on a CPU needs CAP_PERFMON or CAP_SYS_ADMIN "
               "(or a lower kring.paranoid)";
    if (err == EACCES)
        return fmt::format("not allowed to trace pid {} (needs ptrace read access)", o.pid);
    if (err == EOPNOTSUPP)
        return "this kernel's module has no sched source (tracepoints not found)";
    if (err == ESRCH)
        return fmt::format("no task {}", o.pid);
    return std::strerror(err);
}

bool setup(ring& r, const options& o, std::string& err) {
    kring_attr a;
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.source = KRING_SOURCE_SCHED;
    a.sample_type = sample_type;
    a.cpu = r.cpu;
    a.pid = o.pid;
    a.flags = o.inherit ? KRING_ATTR_F_INHERIT : 0;
    if (::ioctl(r.dev.fd(), KRING_IOC_CONFIGURE, &a) < 0) {
        err = fmt::format("configure the sched source (cpu {}): {}", r.cpu, why(errno, o));
        return false;
    }
    std::size_t ps = r.dev.abi().page_size;
    r.data_size = ps << o.order;
    r.map_len = ps + r.data_size;
    r.map = ::mmap(nullptr, r.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r.dev.fd(), 0);
    if (r.map == MAP_FAILED) {
        r.map = nullptr;
        err = fmt::format("map the data ring (cpu {}): {}", r.cpu, std::strerror(errno));
        return false;
    }
    r.ctl = static_cast<kring_ctl_page*>(r.map);
    r.data = static_cast<const std::uint8_t*>(r.map) + ps;
    r.scratch.resize(65536);
    return true;
}

// One pass: acquire data_head (C, pairs with the kernel's smp_wmb() B),
// read, release data_tail (D, pairs with the kernel's control dependency A).
bool drain(ring& r, summary& s) {
    std::uint64_t head = __atomic_load_n(&r.ctl->data_head, __ATOMIC_ACQUIRE);
    while (r.tail < head) {
        std::size_t off = r.tail & (r.data_size - 1);
        kring_record_header h;
        std::memcpy(&h, r.data + off, sizeof(h));
        if (h.size < sizeof(h) || h.size % 8 || h.size > head - r.tail || h.size > r.scratch.size())
            return false;
        const std::uint8_t* rec = r.data + off;
        if (off + h.size > r.data_size) {
            std::size_t first = r.data_size - off;
            std::memcpy(r.scratch.data(), r.data + off, first);
            std::memcpy(r.scratch.data() + first, r.data, h.size - first);
            rec = r.scratch.data();
        }
        if (h.type == KRING_RECORD_LOST && h.size >= sizeof(kring_lost_record)) {
            kring_lost_record l;
            std::memcpy(&l, rec, sizeof(l));
            s.lost += l.lost;
        } else if (h.type == KRING_RECORD_SAMPLE) {
            s.add(rec, h.size);
        }
        r.tail += h.size;
    }
    __atomic_store_n(&r.ctl->data_tail, r.tail, __ATOMIC_RELEASE);
    return true;
}

int run(const context& ctx, options o) {
    if (o.pid == -1)
        o.all_cpus = true;
    std::vector<int> cpus;
    if (o.all_cpus) {
        int n = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
        for (int c = 0; c < n; c++)
            cpus.push_back(c);
    } else {
        cpus.push_back(-1);  // per-thread
    }
    std::vector<std::unique_ptr<ring>> rings;
    for (int cpu : cpus) {
        auto dev = kring::device::open(ctx.device.c_str());
        if (!dev) {
            fmt::print(stderr, "kring: {}\n", dev.error().message());
            return 1;
        }
        auto r = std::make_unique<ring>(std::move(*dev));
        r->cpu = cpu;
        std::string err;
        if (!setup(*r, o, err)) {
            fmt::print(stderr, "kring: {}\n", err);
            return 1;
        }
        rings.push_back(std::move(r));
    }
    for (auto& r : rings)
        if (::ioctl(r->dev.fd(), KRING_IOC_ENABLE, 0) < 0) {
            fmt::print(stderr, "kring: enable (cpu {}): {}\n", r->cpu, std::strerror(errno));
            return 1;
        }
    summary s;
    s.followed = o.pid != -1;
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::duration<double>(o.duration);
    while (std::chrono::steady_clock::now() < end) {
        for (auto& r : rings)
            if (!drain(*r, s)) {
                fmt::print(stderr, "kring: corrupt record on cpu {}\n", r->cpu);
                return 1;
            }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& r : rings) {
        ::ioctl(r->dev.fd(), KRING_IOC_DISABLE, 0);
        if (!drain(*r, s)) {
            fmt::print(stderr, "kring: corrupt record on cpu {}\n", r->cpu);
            return 1;
        }
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // System-wide, this tool's own 10 ms naps switch: none seen is a fault.
    if (!s.followed && s.records == 0) {
        fmt::print(stderr, "kring: no context switch captured on any CPU\n");
        return 1;
    }

    std::vector<const task_stats*> order;
    for (auto& [key, t] : s.tasks)
        order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) {
        return a->runtime != b->runtime ? a->runtime > b->runtime : a->switches > b->switches;
    });
    fmt::print("{} records from {} {} in {:.2f} s ({} forks, {} exits, {} lost)\n",
               s.records, rings.size(), o.all_cpus ? "CPU channels" : "per-thread channel", secs,
               s.forks, s.exits, s.lost);
    fmt::print("{:>7} {:>7} {:<16} {:>9} {:>11} {:>12}\n", "pid", "tid", "comm", "switches",
               "involuntary", "runtime ms");
    for (std::size_t i = 0; i < order.size() && i < o.top; i++) {
        const auto* t = order[i];
        fmt::print("{:>7} {:>7} {:<16} {:>9} {:>11} {:>12.3f}\n", t->pid, t->tid, t->comm,
                   t->switches, t->preempted, double(t->runtime) / 1e6);
    }
    if (order.size() > o.top)
        fmt::print("... and {} more tasks\n", order.size() - o.top);
    if (s.bad) {
        fmt::print(stderr, "kring: {} malformed sched records\n", s.bad);
        return 1;
    }
    return 0;
}

}  // namespace

void add_sched(CLI::App& app, context& ctx) {
    static options o;
    auto* sub = app.add_subcommand(
        "sched", "capture context switches (system-wide or one task) and summarise them per task");
    sub->add_flag("-a,--all-cpus", o.all_cpus, "one channel per online CPU (default without --pid)");
    sub->add_option("-p,--pid", o.pid, "follow this task (per-thread; per CPU with --all-cpus)");
    sub->add_flag("--inherit", o.inherit, "also follow the tasks it forks from now on");
    sub->add_option("-d,--duration", o.duration, "seconds to capture")->capture_default_str();
    sub->add_option("--order", o.order, "data ring of 2^ORDER pages per channel")
        ->check(CLI::Range(0u, 16u))
        ->capture_default_str();
    sub->add_option("--top", o.top, "tasks to list")->capture_default_str();
    sub->callback([&ctx] { ctx.exit_code = run(ctx, o); });
}

}  // namespace kring_tool
