// kring stat: live counters, as perf stat counts events without recording
// them. It opens its own channels - the sched and timer sources, one
// channel per CPU (every online CPU, or -C's list) - as overwrite rings
// that nothing consumes, and every interval prints what their control
// pages say: records produced and written, and the losses by cause
// (kring_ctl_page's live figures, read without a system call; throttled
// samples from the channel's stats). Nothing is read out of the rings.
#include <signal.h>
#include <time.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/channel.hpp"
#include "kring/cpus.hpp"

namespace kring_tool {
namespace {

struct options {
    bool all_cpus = false;
    std::string cpu_list;
    unsigned interval_ms = 1000;
    double duration = 0;  // 0: until SIGINT/SIGTERM
    std::vector<std::string> events;
    bool per_cpu = false;
};

// One source that stat counts: "sched", "sched:wakeups", "timer",
// "timer:<Hz>".
struct source_spec {
    std::string name;
    std::uint32_t source = 0;
    std::uint64_t config0 = 0;
};

std::optional<source_spec> parse_event(const std::string& e) {
    auto colon = e.find(':');
    std::string base = e.substr(0, colon);
    std::string arg = colon == std::string::npos ? std::string() : e.substr(colon + 1);
    if (base == "sched") {
        if (arg.empty())
            return source_spec{"sched", KRING_SOURCE_SCHED, 0};
        if (arg == "wakeups")
            return source_spec{"sched:wakeups", KRING_SOURCE_SCHED, KRING_SCHED_CFG_WAKEUPS};
        return std::nullopt;
    }
    if (base == "timer") {
        std::uint64_t hz = 1000;
        if (!arg.empty()) {
            try {
                std::size_t used = 0;
                hz = std::stoull(arg, &used);
                if (used != arg.size())
                    return std::nullopt;
            } catch (...) {
                return std::nullopt;
            }
        }
        if (hz < 1 || hz > 100000)
            return std::nullopt;
        return source_spec{fmt::format("timer:{}", hz), KRING_SOURCE_TIMER, hz};
    }
    return std::nullopt;
}

struct figures {
    std::uint64_t produced = 0, written = 0, no_space = 0, too_big = 0, paused = 0, overwritten = 0,
                  throttled = 0;
    figures& operator+=(const figures& o) {
        produced += o.produced;
        written += o.written;
        no_space += o.no_space;
        too_big += o.too_big;
        paused += o.paused;
        overwritten += o.overwritten;
        throttled += o.throttled;
        return *this;
    }
    figures operator-(const figures& o) const {
        return {produced - o.produced,  written - o.written, no_space - o.no_space,
                too_big - o.too_big,    paused - o.paused,   overwritten - o.overwritten,
                throttled - o.throttled};
    }
};

struct counted {
    std::size_t spec;  // index into the sources
    int cpu;
    kring::channel ch;
    figures last;
};

kring::result<figures> read_figures(const kring::channel& ch) {
    // The live figures of the control page: no system call.
    const kring::loss_counters l = kring::read_loss_counters(ch.ring());
    figures f;
    f.written = l.records_written;
    f.no_space = l.lost_no_space;
    f.too_big = l.lost_too_big;
    f.paused = l.lost_paused;
    f.overwritten = l.lost_overwritten;
    // Every record a producer tried to write is one of these (kring.h).
    f.produced =
        l.records_written + l.records_discarded + l.lost_no_space + l.lost_too_big + l.lost_paused;
    // Throttled samples are not on the control page.
    auto st = ch.stats();
    if (!st)
        return st.error();
    if (st->size >= KRING_STATS_SIZE_VER1)
        f.throttled = st->throttled;
    return f;
}

std::string hint(int err) {
    if (err == EACCES)
        return "counting every task on a CPU needs CAP_PERFMON or CAP_SYS_ADMIN "
               "(or a lower kring.paranoid; docs/SECURITY.md)";
    if (err == EOPNOTSUPP)
        return "this kernel's module lacks that source";
    return {};
}

void print_header(bool per_cpu) {
    fmt::print("# {:>9} {:>4} {:<14} {:>10} {:>10} {:>9} {:>8} {:>7} {:>11} {:>9}\n", "time",
               per_cpu ? "cpu" : "cpus", "source", "produced", "written", "no_space", "too_big",
               "paused", "overwritten", "throttled");
}

void print_row(double t, const std::string& cpu, const std::string& src, const figures& f) {
    fmt::print("  {:>9.3f} {:>4} {:<14} {:>10} {:>10} {:>9} {:>8} {:>7} {:>11} {:>9}\n", t, cpu,
               src, f.produced, f.written, f.no_space, f.too_big, f.paused, f.overwritten,
               f.throttled);
}

// What stat counts and where: the sources of --event, the CPUs of --cpu.
struct plan {
    std::vector<source_spec> specs;
    std::optional<std::vector<int>> cpus;
};

// The plan of the options; a usage error is printed, and nothing returned.
std::optional<plan> parse_plan(const options& o) {
    plan p;
    for (const auto& e : o.events) {
        auto s = parse_event(e);
        if (!s) {
            std::fflush(stdout);
            fmt::print(stderr,
                       "kring: --event {}: not a countable event (sched, sched:wakeups, "
                       "timer, timer:HZ) (see --help)\n",
                       e);
            return std::nullopt;
        }
        p.specs.push_back(*s);
    }
    if (p.specs.empty())
        p.specs = {*parse_event("sched"), *parse_event("timer")};
    if (!o.cpu_list.empty()) {
        auto l = kring::parse_cpu_list(o.cpu_list);
        if (!l) {
            std::fflush(stdout);
            fmt::print(stderr, "kring: --cpu {}: not a CPU list such as 0,2-3 (see --help)\n",
                       o.cpu_list);
            return std::nullopt;
        }
        p.cpus.emplace(l->begin(), l->end());
    }
    return p;
}

// One source's channels, on the CPUs of the plan or on every CPU.
kring::result<std::vector<kring::channel>> open_source(
    const context& ctx, const source_spec& spec, const std::optional<std::vector<int>>& cpus) {
    kring::channel_options co;
    co.device = ctx.device;
    co.source = spec.source;
    co.sample_type = KRING_SAMPLE_TID | KRING_SAMPLE_TIME;
    co.config[0] = spec.config0;
    co.data_pages_order = 0;
    // Nothing consumes: an overwrite ring, mapped read-only as perf
    // maps one, never stops its producer.
    co.overwrite = true;
    co.read_only = true;
    if (!cpus) {
        auto all = kring::channel::open_per_cpu(co);
        if (!all)
            return all.error().with_context(spec.name);
        return std::move(*all);
    }
    std::vector<kring::channel> opened;
    for (int c : *cpus) {
        co.cpu = c;
        auto ch = kring::channel::open(co);
        if (!ch)
            return ch.error().with_context(fmt::format("{} on cpu {}", spec.name, c));
        opened.push_back(std::move(*ch));
    }
    return opened;
}

// Every channel enabled, its figures read as the base of the first interval.
kring::result<void> start_counting(std::vector<counted>& chans) {
    for (auto& c : chans) {
        if (auto e = c.ch.enable(); !e)
            return e.error();
        auto f = read_figures(c.ch);
        if (!f)
            return f.error();
        c.last = *f;
    }
    return {};
}

// What the intervals added up to.
struct tally {
    std::map<std::size_t, figures> total;
    std::uint64_t intervals = 0;
    double last_t = 0;
};

// Waits until @until or a stop signal; true when the count is to stop.
bool wait_interval(const sigset_t& stop, std::chrono::steady_clock::time_point until) {
    auto wait = until - std::chrono::steady_clock::now();
    if (wait.count() <= 0)
        return false;
    auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(wait).count();
    timespec ts{time_t(ns / 1000000000), long(ns % 1000000000)};
    return sigtimedwait(&stop, nullptr, &ts) > 0;
}

// One interval's row (per CPU or per source), added to the total.
kring::result<void> count_interval(const options& o, const std::vector<source_spec>& specs,
                                   std::vector<counted>& chans, double t, tally& sum) {
    std::map<std::size_t, figures> row;
    for (auto& c : chans) {
        auto f = read_figures(c.ch);
        if (!f)
            return f.error();
        figures d = *f - c.last;
        c.last = *f;
        row[c.spec] += d;
        sum.total[c.spec] += d;
        if (o.per_cpu)
            print_row(t, fmt::format("{}", c.cpu), specs[c.spec].name, d);
    }
    if (!o.per_cpu)
        for (const auto& [i, f] : row)
            print_row(t, fmt::format("{}", chans.size() / specs.size()), specs[i].name, f);
    return {};
}

// The intervals, until --duration or a stop signal.
kring::result<tally> count_intervals(const options& o, const std::vector<source_spec>& specs,
                                     std::vector<counted>& chans, const sigset_t& stop) {
    const auto t0 = std::chrono::steady_clock::now();
    const auto end = t0 + std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(o.duration));
    const auto step = std::chrono::milliseconds(o.interval_ms ? o.interval_ms : 1000);
    auto next = t0 + step;
    tally sum;
    bool stopping = false;
    print_header(o.per_cpu);
    while (!stopping) {
        auto until = next;
        if (o.duration > 0 && end < until)
            until = end;
        if (wait_interval(stop, until))
            stopping = true;
        const auto now = std::chrono::steady_clock::now();
        if (o.duration > 0 && now >= end)
            stopping = true;
        next += step;
        const double t = std::chrono::duration<double>(now - t0).count();
        sum.last_t = t;
        if (auto r = count_interval(o, specs, chans, t, sum); !r)
            return r.error();
        sum.intervals++;
        std::fflush(stdout);
    }
    return sum;
}

void print_totals(const std::vector<source_spec>& specs, std::size_t channels, const tally& sum) {
    const double secs = sum.last_t;
    fmt::print("# total over {:.3f} s\n", secs);
    figures all;
    for (const auto& [i, f] : sum.total) {
        print_row(secs, "all", specs[i].name, f);
        all += f;
    }
    print_summary("stat", {{"channels", channels},
                           {"intervals", sum.intervals},
                           {"produced", all.produced},
                           {"written", all.written},
                           {"lost_no_space", all.no_space},
                           {"lost_too_big", all.too_big},
                           {"lost_paused", all.paused},
                           {"overwritten", all.overwritten},
                           {"throttled", all.throttled}});
}

int run(const context& ctx, const options& o) {
    const auto p = parse_plan(o);
    if (!p)
        return exit_usage;

    // Block the stop signals: they end the wait below, and the totals print.
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    sigprocmask(SIG_BLOCK, &stop, nullptr);

    std::vector<counted> chans;
    for (std::size_t i = 0; i < p->specs.size(); i++) {
        auto opened = open_source(ctx, p->specs[i], p->cpus);
        if (!opened)
            return report(opened.error(), hint(opened.error().code()));
        for (auto& ch : *opened) {
            int cpu = ch.options().cpu.value_or(-1);
            chans.push_back({i, cpu, std::move(ch), {}});
        }
    }
    if (auto s = start_counting(chans); !s)
        return report(s.error());

    auto sum = count_intervals(o, p->specs, chans, stop);
    if (!sum)
        return report(sum.error());
    for (auto& c : chans)
        (void)c.ch.disable();
    print_totals(p->specs, chans.size(), *sum);
    return exit_ok;
}

}  // namespace

void add_stat(CLI::App* sub, context& ctx) {
    static options o;
    sub->add_flag("-a,--all-cpus", o.all_cpus, "every online CPU (the default)");
    sub->add_option("-C,--cpu", o.cpu_list, "only these CPUs (e.g. 0,2-3)");
    sub->add_option("-I,--interval", o.interval_ms, "print every MS milliseconds")
        ->check(CLI::Range(10u, 3600000u))
        ->capture_default_str();
    sub->add_option("-d,--duration", o.duration, "seconds to count (0: until Ctrl-C)")
        ->check(CLI::Range(0.0, 1e6))
        ->capture_default_str();
    sub->add_option("-e,--event", o.events,
                    "what to count: sched, sched:wakeups, timer, timer:HZ "
                    "(repeatable; default sched and timer:1000)");
    sub->add_flag("-A,--per-cpu", o.per_cpu, "one row per CPU instead of their sum");
    sub->footer(
        "stat opens its own channels - one per CPU per event, overwrite rings that\n"
        "nothing consumes - and prints, per interval, the figures of their control\n"
        "pages: records produced and written, and the losses by cause. 'overwritten'\n"
        "counts the records stat's own rings overwrote (nothing reads them); the\n"
        "other loss columns are losses of the producers.\n"
        "\n"
        "Examples:\n"
        "  kring stat -d 5\n"
        "      sched and timer on every CPU, a row a second, for 5 s"
        "\n"
        "  kring stat -C 0-1 -I 200 -e sched\n"
        "      context switches of CPUs 0 and 1 every 200 ms"
        "\n"
        "  sudo kring stat -a -A -e timer:10000 -d 2\n"
        "      a 10 kHz timer, one row per CPU");
    sub->callback([&ctx] { ctx.exit_code = run(ctx, o); });
}

}  // namespace kring_tool
