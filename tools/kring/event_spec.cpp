// kring record's events (event_spec.hpp).
#include "event_spec.hpp"

#include <fnmatch.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <set>
#include <sstream>

#include <fmt/core.h>
#include <fmt/format.h>

#include <linux/kring.h>
#include <linux/perf_event.h>

#include "tracefs.hpp"

namespace kring_tool::events {

namespace {

// perf list's names (tools/perf/util/parse-events.c).
constexpr named_event software[] = {
    {"cpu-clock", "", PERF_COUNT_SW_CPU_CLOCK},
    {"task-clock", "", PERF_COUNT_SW_TASK_CLOCK},
    {"page-faults", "faults", PERF_COUNT_SW_PAGE_FAULTS},
    {"context-switches", "cs", PERF_COUNT_SW_CONTEXT_SWITCHES},
    {"cpu-migrations", "migrations", PERF_COUNT_SW_CPU_MIGRATIONS},
    {"minor-faults", "", PERF_COUNT_SW_PAGE_FAULTS_MIN},
    {"major-faults", "", PERF_COUNT_SW_PAGE_FAULTS_MAJ},
    {"alignment-faults", "", PERF_COUNT_SW_ALIGNMENT_FAULTS},
    {"emulation-faults", "", PERF_COUNT_SW_EMULATION_FAULTS},
};
constexpr named_event hardware[] = {
    {"cpu-cycles", "cycles", PERF_COUNT_HW_CPU_CYCLES},
    {"instructions", "", PERF_COUNT_HW_INSTRUCTIONS},
    {"cache-references", "", PERF_COUNT_HW_CACHE_REFERENCES},
    {"cache-misses", "", PERF_COUNT_HW_CACHE_MISSES},
    {"branch-instructions", "branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
    {"branch-misses", "", PERF_COUNT_HW_BRANCH_MISSES},
    {"bus-cycles", "", PERF_COUNT_HW_BUS_CYCLES},
    {"stalled-cycles-frontend", "idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
    {"stalled-cycles-backend", "idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
    {"ref-cycles", "", PERF_COUNT_HW_REF_CPU_CYCLES},
};
constexpr builtin_source builtins[] = {
    {"sched", "context switches, forks and exits (kring's sched source)"},
    {"sched:wakeups", "sched with the wakeups"},
    {"timer", "an hrtimer sampler at 1000 Hz, like cpu-clock (kring's timer source)"},
    {"timer:FREQ", "the timer at FREQ Hz (1..100000)"},
    {"aux", "the emulated hardware tracer into the AUX area"},
    {"producer", "a channel producer modules write into (KRING_CHANNEL_ID)"},
};

bool has_glob(std::string_view s) { return s.find_first_of("*?[") != std::string_view::npos; }

kring::error bad(std::string_view token, std::string_view why) {
    return kring::error(EINVAL, fmt::format("event '{}': {}", token, why));
}

// The -e names outside tracefs: kring's and perf's software and hardware.
std::vector<std::string> named() {
    std::vector<std::string> v = {"sched", "sched:wakeups", "timer", "aux", "producer"};
    for (auto set : {software_events(), hardware_events()})
        for (const auto& e : set) {
            v.emplace_back(e.name);
            if (!e.alias.empty())
                v.emplace_back(e.alias);
        }
    return v;
}

std::string nearest_text(std::string_view token, const std::vector<std::string>& names) {
    auto n = nearest(token, names);
    return n.empty() ? std::string() : fmt::format(" (nearest: {})", fmt::join(n, ", "));
}

// kring's own source @t into @s: true when @t is one; an error for
// timer:N with N out of range.
kring::result<bool> builtin(const std::string& t, event_set& s) {
    if (t == "sched" || t == "sched:wakeups") {
        s.sched = true;
        s.wakeups |= t == "sched:wakeups";
        return true;
    }
    if (t == "timer" || t == "aux" || t == "producer") {
        (t == "timer" ? s.timer : t == "aux" ? s.aux : s.producer) = true;
        return true;
    }
    if (t.rfind("timer:", 0) != 0 || t.size() == 6 ||
        t.find_first_not_of("0123456789", 6) != std::string::npos)
        return false;  // a tracepoint of the timer system, maybe
    errno = 0;
    unsigned long long hz = std::strtoull(t.c_str() + 6, nullptr, 10);
    if (errno || hz < 1 || hz > 100000)
        return bad(t, "the timer's frequency is 1..100000 Hz");
    s.timer = true;
    s.timer_hz = hz;
    return true;
}

// A software or hardware event by perf's name, with :u or :k.
std::optional<event> perf_named(const std::string& t) {
    std::string name = t, mods;
    if (auto c = t.rfind(':'); c != std::string::npos) {
        name = t.substr(0, c);
        mods = t.substr(c + 1);
        if (mods.empty() || mods.find_first_not_of("uk") != std::string::npos)
            return std::nullopt;
    }
    for (auto [set, type] : {std::pair{software_events(), PERF_TYPE_SOFTWARE},
                             std::pair{hardware_events(), PERF_TYPE_HARDWARE}})
        for (const auto& e : set)
            if (name == e.name || (!e.alias.empty() && name == e.alias)) {
                event ev;
                ev.name = t;
                ev.type = type;
                ev.config = e.config;
                // perf's: u alone excludes the kernel, k alone user space.
                ev.exclude_kernel =
                    mods.find('u') != std::string::npos && mods.find('k') == mods.npos;
                ev.exclude_user =
                    mods.find('k') != std::string::npos && mods.find('u') == mods.npos;
                return ev;
            }
    return std::nullopt;
}

// The tracepoint @tp of @root, its id and format read.
kring::result<event> tracepoint(const std::string& root, const tracefs::tracepoint_name& tp) {
    auto id = tracefs::read_id(root, tp);
    if (!id)
        return id.error();
    const std::string path = root + "/events/" + tp.system + "/" + tp.name + "/format";
    auto text = tracefs::read_file(path);
    if (!text)
        return text.error();
    auto f = pd::parse_tp_format(tp.system, std::move(*text));
    if (!f)
        return f.error().with_context(path);
    if (f->id != *id)
        return kring::error(EINVAL,
                            fmt::format("{}: ID {} but the id file says {}", path, f->id, *id));
    event e;
    e.name = tp.full();
    e.type = PERF_TYPE_TRACEPOINT;
    e.config = *id;
    e.format = std::move(*f);
    return e;
}

// SUBSYS:NAME, with globs, into @s.
kring::result<void> tracepoints(const std::string& t, const tracefs_fn& tracefs, event_set& s) {
    const auto c = t.find(':');
    const std::string sys = t.substr(0, c), name = t.substr(c + 1);
    if (sys.empty() || name.empty() || name.find(':') != std::string::npos)
        return bad(t, "not SUBSYS:NAME" + nearest_text(t, named()));
    auto root = tracefs();
    if (!root)
        return root.error().with_context(fmt::format("event '{}'", t));
    auto all = tracefs::list(*root);
    if (!all)
        return all.error().with_context(fmt::format("event '{}'", t));
    std::size_t matched = 0;
    for (const auto& tp : *all) {
        if (::fnmatch(sys.c_str(), tp.system.c_str(), 0) != 0 ||
            ::fnmatch(name.c_str(), tp.name.c_str(), 0) != 0)
            continue;
        matched++;
        auto e = tracepoint(*root, tp);
        if (!e && has_glob(t)) {
            s.notes.push_back(fmt::format("{} left out: {}", tp.full(), e.error().message()));
            continue;
        }
        if (!e)
            return e.error().with_context(fmt::format("event '{}'", t));
        if (std::none_of(s.events.begin(), s.events.end(),
                         [&](const event& x) { return x.name == e->name; }))
            s.events.push_back(std::move(*e));
    }
    if (matched)
        return {};
    if (has_glob(t))
        return bad(
            t, fmt::format("no tracepoint under {}/events matches (kring list lists them)", *root));
    std::vector<std::string> names = named();
    for (const auto& tp : *all)
        names.push_back(tp.full());
    return bad(t, fmt::format("unknown event: no such tracepoint under {}/events{}", *root,
                              nearest_text(t, names)));
}

// Each event's period or frequency, by perf's rules.
void apply_sampling(const sampling& smp, event& e) {
    if (smp.period)
        e.period = *smp.period;
    else if (e.type == PERF_TYPE_TRACEPOINT)
        e.period = 1;
    else
        e.freq = smp.freq.value_or(default_freq);
}

}  // namespace

std::span<const named_event> software_events() { return software; }
std::span<const named_event> hardware_events() { return hardware; }
std::span<const builtin_source> builtin_sources() { return builtins; }

std::vector<std::string> nearest(std::string_view name, const std::vector<std::string>& names,
                                 std::size_t n) {
    // Levenshtein, one row at a time; names far apart in length are not
    // near (a bound, so that thousands of tracepoints cost little).
    const std::size_t max_d = std::max<std::size_t>(2, name.size() / 3);
    std::vector<std::pair<std::size_t, std::string>> found;
    std::vector<std::size_t> row;
    for (const auto& cand : names) {
        if ((cand.size() > name.size() ? cand.size() - name.size() : name.size() - cand.size()) >
            max_d)
            continue;
        row.resize(cand.size() + 1);
        for (std::size_t j = 0; j <= cand.size(); j++)
            row[j] = j;
        for (std::size_t i = 1; i <= name.size(); i++) {
            std::size_t diag = row[0];
            row[0] = i;
            for (std::size_t j = 1; j <= cand.size(); j++) {
                std::size_t up = row[j];
                row[j] = std::min(
                    {row[j] + 1, row[j - 1] + 1, diag + (name[i - 1] == cand[j - 1] ? 0 : 1)});
                diag = up;
            }
        }
        if (row[cand.size()] <= max_d)
            found.emplace_back(row[cand.size()], cand);
    }
    std::stable_sort(found.begin(), found.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    // The nearest only: every name at the least distance.
    std::vector<std::string> out;
    for (auto& [d, s] : found)
        if (d == found.front().first && out.size() < n &&
            std::find(out.begin(), out.end(), s) == out.end())
            out.push_back(std::move(s));
    return out;
}

kring::result<event_set> parse(const std::vector<std::string>& args, const sampling& smp,
                               const tracefs_fn& tracefs) {
    event_set s;
    for (const auto& list : args) {
        std::stringstream ss(list);
        std::string t;
        while (std::getline(ss, t, ',')) {
            if (t.empty())
                return bad(list, "an empty name in the list");
            auto b = builtin(t, s);
            if (!b)
                return b.error();
            if (*b)
                continue;
            if (auto e = perf_named(t)) {
                if (std::none_of(s.events.begin(), s.events.end(),
                                 [&](const event& x) { return x.name == e->name; }))
                    s.events.push_back(std::move(*e));
                continue;
            }
            if (t.find(':') == std::string::npos)
                return bad(t,
                           "unknown event (kring's sources, perf's software and hardware "
                           "events, SUBSYS:NAME tracepoints: kring list)" +
                               nearest_text(t, named()));
            if (auto r = tracepoints(t, tracefs, s); !r)
                return r.error();
        }
    }
    // The sched source writes these tracepoints itself (perf sched reads
    // them): one writer each.
    for (const auto& e : s.events)
        if (s.sched && (e.name == "sched:sched_switch" || e.name == "sched:sched_wakeup" ||
                        e.name == "sched:sched_stat_runtime"))
            return bad(e.name,
                       "-e sched writes it already (from kring's sched source): give one "
                       "or the other");
    for (auto& e : s.events)
        apply_sampling(smp, e);
    if (!s.sched && !s.timer && !s.aux && !s.producer && s.events.empty())
        s.sched = true;
    return s;
}

void configure(const event& e, bool callchain, kring::channel_options& co) {
    co.source = KRING_SOURCE_EVENT;
    co.sample_type = KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_IP | KRING_SAMPLE_TID |
                     KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD;
    if (e.type == PERF_TYPE_TRACEPOINT)
        co.sample_type |= KRING_SAMPLE_RAW;
    if (callchain)
        co.sample_type |= KRING_SAMPLE_CALLCHAIN;
    co.config[0] = e.type | (e.freq ? KRING_EVENT_F_FREQ : 0) |
                   (e.exclude_user ? KRING_EVENT_F_EXCLUDE_USER : 0);
    co.config[1] = e.config;
    co.config[2] = e.freq ? e.freq : e.period;
    co.config[3] = 0;  // with CALLCHAIN: KRING_CALLCHAIN_MAX addresses
    if (e.exclude_kernel)
        co.extra_attr_flags |= KRING_ATTR_F_EXCLUDE_KERNEL;
}

pd::event_attr attr_of(const event& e, std::uint64_t sample_type, std::vector<std::uint64_t> ids) {
    pd::event_attr a = pd::sample_event(e.name, e.type, e.config, sample_type, std::move(ids));
    if (e.freq) {
        a.attr.freq = 1;
        a.attr.sample_freq = e.freq;
    } else {
        a.attr.sample_period = e.period;
    }
    a.attr.exclude_user = e.exclude_user;
    a.attr.exclude_kernel = e.exclude_kernel;
    return a;
}

pd::sample perf_fields_of(const kring::sample_info& s, std::uint64_t id) {
    pd::sample ps;
    ps.id = id;
    ps.ip = s.ip;
    ps.pid = s.pid;
    ps.tid = s.tid;
    ps.time = s.time;
    ps.has_time = true;
    ps.cpu = s.cpu;
    ps.period = s.period;
    ps.callchain = s.callchain;
    return ps;
}

std::vector<std::byte> sample_of(const kring::sample_info& s, std::uint16_t misc, std::uint64_t id,
                                 std::uint64_t sample_type) {
    pd::sample ps = perf_fields_of(s, id);
    ps.raw = s.raw;
    // The channel's cpumode as perf's; a source that leaves it out: the
    // IP's half of the address space says it.
    std::uint16_t mode = misc & PERF_RECORD_MISC_CPUMODE_MASK;
    if (!mode)
        mode = (s.ip >> 63) ? PERF_RECORD_MISC_KERNEL : PERF_RECORD_MISC_USER;
    return pd::make_sample(mode, ps, sample_type);
}

std::string permission_hint(const event& e, bool cpu_wide, bool followed, int paranoid) {
    if (followed && !cpu_wide)
        return "following another user's task needs ptrace read access to it "
               "(CAP_SYS_PTRACE)";
    // perf's levels (kernel/events/core.c, perf_event_open()): raw
    // tracepoint data needs -1, every task of a CPU 0, kernel samples 1.
    int need = e.type == PERF_TYPE_TRACEPOINT ? -1 : cpu_wide ? 0 : e.exclude_kernel ? 2 : 1;
    std::string why = e.type == PERF_TYPE_TRACEPOINT ? "a tracepoint's raw data"
                      : cpu_wide                     ? "every task of a CPU"
                                                     : "kernel samples";
    return fmt::format(
        "{} needs CAP_PERFMON (or CAP_SYS_ADMIN), or kernel.perf_event_paranoid "
        "<= {} (now {}) and kring.paranoid <= {} "
        "(/sys/module/kring/parameters/paranoid)",
        why, need, paranoid, need);
}

}  // namespace kring_tool::events
