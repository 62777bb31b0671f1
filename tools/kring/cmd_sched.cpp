// kring sched: capture context switches with the sched source (system-wide:
// one channel per CPU; or one task, per-thread or on every CPU with
// --inherit) for a while, then summarise them per task: switches, time on
// CPU, and how many switches were involuntary (preempted or still runnable).
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/channel.hpp"
#include "kring/reader.hpp"
#include "kring/record.hpp"

namespace kring_tool {
namespace {

// Asked for: TID, TIME, CPU, RAW{size, struct kring_sched_raw}. Records are
// parsed with the layout the channel reports (channel::sample_type()).
constexpr std::uint64_t sample_type =
    KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;

struct options {
    bool all_cpus = false;
    int pid_arg = 0;
    std::optional<int> pid;
    bool inherit = false;
    double duration = 1.0;
    unsigned order = 6;
    unsigned top = 20;
};

// One channel of the sched source and its reader.
struct ring {
    kring::channel ch;
    kring::reader rd;

    explicit ring(kring::channel c) : ch(std::move(c)), rd(ch.ring()) {}
    ring(const ring&) = delete;
    ring& operator=(const ring&) = delete;
    int cpu() const { return ch.options().cpu.value_or(-1); }
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

    void add(const kring::record& rec, std::uint64_t type) {
        auto smp = kring::parse_sample(rec, type);
        kring_sched_raw r;
        if (!smp || smp->raw.size() < sizeof(r)) {
            bad++;
            return;
        }
        const std::uint64_t time = smp->time;
        const std::uint32_t subject = smp->tid;
        std::memcpy(&r, smp->raw.data(), sizeof(r));
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

// A hint for the errors a sched channel commonly meets.
std::string hint(int err, const options& o) {
    if (err == EACCES && !o.pid)
        return "capturing every task on a CPU needs CAP_PERFMON or CAP_SYS_ADMIN "
               "(or a lower kring.paranoid)";
    if (err == EACCES)
        return fmt::format("tracing pid {} needs ptrace read access to it", *o.pid);
    if (err == EOPNOTSUPP)
        return "this kernel's module has no sched source (tracepoints not found)";
    if (err == ESRCH)
        return fmt::format("no task {}", *o.pid);
    return {};
}

// One pass over a ring through libkring's reader: every published record,
// then one release of data_tail. LOST records are counted by the reader.
kring::result<std::size_t> drain(ring& r, summary& s) {
    return r.rd.drain([&](const kring::record& rec) {
        if (rec.type() == KRING_RECORD_SAMPLE)
            s.add(rec, r.ch.sample_type());
    });
}

int report_cpu(const ring& r, const kring::error& e) {
    return report(e.with_context(fmt::format("cpu {}", r.cpu())));
}

int run(const context& ctx, options o) {
    if (!o.pid)
        o.all_cpus = true;
    kring::channel_options co;
    co.device = ctx.device;
    co.source = KRING_SOURCE_SCHED;
    co.sample_type = sample_type;
    co.pid = o.pid;
    co.extra_attr_flags = o.inherit ? KRING_ATTR_F_INHERIT : 0;
    co.data_pages_order = o.order;
    std::vector<kring::channel> chans;
    if (o.all_cpus) {
        auto all = kring::channel::open_per_cpu(co);
        if (!all)
            return report(all.error(), hint(all.error().code(), o));
        chans = std::move(*all);
    } else {
        auto one = kring::channel::open(co);  // per-thread: no CPU
        if (!one)
            return report(one.error(), hint(one.error().code(), o));
        chans.push_back(std::move(*one));
    }
    std::vector<std::unique_ptr<ring>> rings;
    for (auto& ch : chans)
        rings.push_back(std::make_unique<ring>(std::move(ch)));
    for (auto& r : rings)
        if (auto e = r->ch.enable(); !e)
            return report_cpu(*r, e.error());
    summary s;
    s.followed = o.pid.has_value();
    auto t0 = std::chrono::steady_clock::now();
    auto end = t0 + std::chrono::duration<double>(o.duration);
    while (std::chrono::steady_clock::now() < end) {
        for (auto& r : rings)
            if (auto n = drain(*r, s); !n)
                return report_cpu(*r, n.error());
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    for (auto& r : rings) {
        if (auto e = r->ch.disable(); !e)
            return report_cpu(*r, e.error());
        if (auto n = drain(*r, s); !n)
            return report_cpu(*r, n.error());
        s.lost += r->rd.lost_seen();
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    // System-wide, this tool's own 10 ms naps switch: none seen is a fault.
    if (!s.followed && s.records == 0)
        return report("no context switch captured on any CPU");

    std::vector<const task_stats*> order;
    for (auto& [key, t] : s.tasks)
        order.push_back(&t);
    std::sort(order.begin(), order.end(), [](auto* a, auto* b) {
        return a->runtime != b->runtime ? a->runtime > b->runtime : a->switches > b->switches;
    });
    fmt::print("{} records from {} {} in {:.2f} s ({} forks, {} exits, {} lost)\n", s.records,
               rings.size(), o.all_cpus ? "CPU channels" : "per-thread channel", secs, s.forks,
               s.exits, s.lost);
    fmt::print("{:>7} {:>7} {:<16} {:>9} {:>11} {:>12}\n", "pid", "tid", "comm", "switches",
               "involuntary", "runtime ms");
    for (std::size_t i = 0; i < order.size() && i < o.top; i++) {
        const auto* t = order[i];
        fmt::print("{:>7} {:>7} {:<16} {:>9} {:>11} {:>12.3f}\n", t->pid, t->tid, t->comm,
                   t->switches, t->preempted, double(t->runtime) / 1e6);
    }
    if (order.size() > o.top)
        fmt::print("... and {} more tasks\n", order.size() - o.top);
    print_summary("sched", {{"channels", rings.size()},
                            {"records", s.records},
                            {"tasks", s.tasks.size()},
                            {"forks", s.forks},
                            {"exits", s.exits},
                            {"lost", s.lost},
                            {"bad", s.bad}});
    if (s.bad)
        return report(fmt::format("{} malformed sched records", s.bad));
    return exit_ok;
}

}  // namespace

void add_sched(CLI::App* sub, context& ctx) {
    static options o;
    sub->add_flag("-a,--all-cpus", o.all_cpus,
                  "one channel per online CPU (default without --pid)");
    auto* pid = sub->add_option("-p,--pid", o.pid_arg,
                                "follow this task (per-thread; per CPU with --all-cpus)");
    sub->add_flag("--inherit", o.inherit, "also follow the tasks it forks from now on");
    sub->add_option("-d,--duration", o.duration, "seconds to capture")->capture_default_str();
    sub->add_option("--order", o.order, "data ring of 2^ORDER pages per channel")
        ->check(CLI::Range(0u, 16u))
        ->capture_default_str();
    sub->add_option("--top", o.top, "tasks to list")->capture_default_str();
    sub->footer(
        "Examples:\n"
        "  sudo kring sched -d 2\n"
        "      every CPU for 2 s"
        "\n"
        "  kring sched --pid 1234 --inherit -d 5\n"
        "      one task and its children"
        "\n"
        "  sudo kring sched -a --pid 1234 --top 5\n"
        "      one task on every CPU");
    sub->callback([&ctx, pid] {
        if (pid->count())
            o.pid = o.pid_arg;
        ctx.exit_code = run(ctx, o);
    });
}

}  // namespace kring_tool
