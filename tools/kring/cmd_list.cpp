// kring list: the events kring record -e takes, in perf list's shape:
// perf's software and hardware events, the tracepoints of tracefs by
// subsystem, kring's own sources; an optional glob filters them.
#include <fnmatch.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "event_spec.hpp"
#include "kring/device.hpp"
#include "tracefs.hpp"

namespace kring_tool {
namespace {

// Where the kernel lists the CPU's PMU; without it (QEMU TCG) perf's
// hardware events cannot be opened.
constexpr const char* cpu_pmu = "/sys/bus/event_source/devices/cpu";

struct list_options {
    std::string glob;
};

// A name the filter lets through: a glob as given, a plain word anywhere
// in the name (perf list's habit).
bool wanted(const std::string& glob, std::string_view name) {
    if (glob.empty())
        return true;
    const std::string pat =
        glob.find_first_of("*?[") == std::string::npos ? "*" + glob + "*" : glob;
    return ::fnmatch(pat.c_str(), std::string(name).c_str(), 0) == 0;
}

void line(std::string_view name, std::string_view what) {
    fmt::print("  {:<50} [{}]\n", name, what);
}

std::uint64_t list_named(const list_options& o, std::span<const events::named_event> set,
                         std::string_view what) {
    std::uint64_t n = 0;
    for (const auto& e : set) {
        if (!wanted(o.glob, e.name) && (e.alias.empty() || !wanted(o.glob, e.alias)))
            continue;
        line(e.alias.empty() ? std::string(e.name) : fmt::format("{} OR {}", e.name, e.alias),
             what);
        n++;
    }
    return n;
}

int run(const context& ctx, const list_options& o) {
    fmt::print("List of pre-defined events (to be used in kring record -e):\n\n");
    std::uint64_t sw = list_named(o, events::software_events(), "Software event");
    const bool pmu = ::access(cpu_pmu, F_OK) == 0;
    std::uint64_t hw =
        list_named(o, events::hardware_events(),
                   pmu ? "Hardware event" : "Hardware event, needs a PMU: this machine has none");
    std::uint64_t tps = 0;
    auto root = tracefs::root(true);
    auto all = root ? tracefs::list(*root)
                    : kring::result<std::vector<tracefs::tracepoint_name>>(root.error());
    if (all) {
        for (const auto& t : *all)
            if (wanted(o.glob, t.full())) {
                line(t.full(), "Tracepoint event");
                tps++;
            }
    } else {
        fmt::print(stderr, "kring: note: no tracepoints listed: {}\n", all.error().message());
    }
    fmt::print("\nkring's own sources (their names come first in -e):\n");
    std::uint64_t own = 0;
    for (const auto& b : events::builtin_sources())
        if (wanted(o.glob, b.name)) {
            line(b.name, b.what);
            own++;
        }
    // perf's events go through the event source: say when this module
    // lacks it (no device: nothing to say).
    if (auto dev = kring::device::open(ctx.device);
        dev && !(dev->abi().features & KRING_FEAT_EVENT))
        fmt::print(stderr,
                   "kring: note: the module behind {} has no event source (feature 'event'): "
                   "only kring's own sources can be recorded with it\n",
                   ctx.device);
    print_summary("list",
                  {{"software", sw}, {"hardware", hw}, {"tracepoints", tps}, {"kring", own}});
    return exit_ok;
}

}  // namespace

void add_list(CLI::App* sub, context& ctx) {
    static list_options o;
    sub->footer(
        "Tracepoints come from tracefs (mounted on /sys/kernel/tracing when kring runs as "
        "root and finds it unmounted; KRING_TRACEFS names another root). Hardware events "
        "need the CPU's PMU (/sys/bus/event_source/devices/cpu).\n"
        "\n"
        "Examples:\n"
        "  kring list\n"
        "      every event\n"
        "  kring list 'sched:*'\n"
        "      the sched tracepoints\n"
        "  kring list faults\n"
        "      every event whose name holds 'faults'");
    sub->add_option("glob", o.glob,
                    "only the events this glob matches (a word without * ? [ matches anywhere "
                    "in the name)");
    sub->callback([&ctx] { ctx.exit_code = run(ctx, o); });
}

}  // namespace kring_tool
