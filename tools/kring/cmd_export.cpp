// kring export --chrome: a perf.data file as Chrome trace-event JSON, which
// Perfetto UI, speedscope and chrome://tracing open. One process "CPUs"
// whose threads are the CPUs (tid = CPU number): the task slices from the
// switch records as complete events ("ph":"X", named by comm), the samples
// as instant events ("ph":"i"), and the losses as a counter ("ph":"C", the
// running total of records lost).
//
// kring export --pprof: the CPU samples as a pprof profile (pprof.hpp).
#include <cerrno>
#include <cstdio>
#include <string>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "pprof.hpp"
#include "recording.hpp"
#include "trace_model.hpp"

namespace kring_tool {
namespace {

// The pid of the "CPUs" process.
constexpr int cpus_pid = 0;

struct options {
    std::string input = "perf.data";
    std::string chrome;
    std::string pprof;
    std::string kallsyms;
    bool idle = false;
};

// Trace-event times are microseconds; a double keeps the nanoseconds.
double us(std::uint64_t ns) { return double(ns) / 1000.0; }

int show(const options& o, const trace_model& m) {
    using json = nlohmann::json;
    json events = json::array();
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", cpus_pid},
                      {"tid", 0},
                      {"args", {{"name", "CPUs"}}}});
    for (std::int32_t cpu : m.cpus) {
        events.push_back({{"ph", "M"},
                          {"name", "thread_name"},
                          {"pid", cpus_pid},
                          {"tid", cpu},
                          {"args", {{"name", fmt::format("CPU {}", cpu)}}}});
        events.push_back({{"ph", "M"},
                          {"name", "thread_sort_index"},
                          {"pid", cpus_pid},
                          {"tid", cpu},
                          {"args", {{"sort_index", cpu}}}});
    }
    std::uint64_t slices = 0, instants = 0, counters = 0;
    for (const auto& [cpu, list] : m.slices)
        for (const auto& s : list) {
            if (s.task.pid == 0 && s.task.tid == 0 && !o.idle)
                continue;
            events.push_back({{"ph", "X"},
                              {"cat", "task"},
                              {"name", m.comm_of(s.task)},
                              {"pid", cpus_pid},
                              {"tid", cpu},
                              {"ts", us(s.start)},
                              {"dur", us(s.end - s.start)},
                              {"args", {{"pid", s.task.pid}, {"tid", s.task.tid}}}});
            slices++;
        }
    std::uint64_t lost_total = 0;
    for (const auto& e : m.events) {
        if (e.kind == event_kind::sample && e.cpu >= 0 && e.has_time) {
            events.push_back({{"ph", "i"},
                              {"s", "t"},
                              {"cat", "sample"},
                              {"name", e.event_name.empty() ? std::string("sample") : e.event_name},
                              {"pid", cpus_pid},
                              {"tid", e.cpu},
                              {"ts", us(e.time)},
                              {"args",
                               {{"ip", fmt::format("{:#x}", e.a)},
                                {"pid", e.task.pid},
                                {"tid", e.task.tid},
                                {"comm", e.comm}}}});
            instants++;
        } else if (e.kind == event_kind::lost && e.has_time) {
            lost_total += e.b;
            events.push_back({{"ph", "C"},
                              {"name", "lost records"},
                              {"pid", cpus_pid},
                              {"ts", us(e.time)},
                              {"args", {{"lost", lost_total}}}});
            counters++;
        }
    }
    json doc = {{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}};

    std::FILE* f = o.chrome == "-" ? stdout : std::fopen(o.chrome.c_str(), "w");
    if (!f)
        return report(kring::error::from_errno(errno, "cannot create " + o.chrome));
    const std::string text = doc.dump(-1, ' ', false, json::error_handler_t::replace) + "\n";
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int e = errno;
    const bool closed = f != stdout ? std::fclose(f) == 0 : std::fflush(f) == 0;
    if (!closed || !ok)
        return report(kring::error::from_errno(ok ? errno : e, "cannot write " + o.chrome));
    if (o.chrome != "-")
        print_summary("export", {{"slices", slices},
                                 {"instants", instants},
                                 {"counters", counters},
                                 {"cpus", m.cpus.size()},
                                 {"truncated", m.truncation ? 1 : 0}});
    return exit_ok;
}

// --pprof: a truncated recording is an error and writes nothing, so that
// no partial profile is taken for a whole one.
int export_pprof(const options& o) {
    if (!have_pprof())
        return report(
            "export --pprof: this kring was built without pprof support (libprotobuf, protoc)");
    auto m = trace_model::load(o.input);
    if (!m)
        return report(m.error());
    if (m->truncation)
        return report(fmt::format("{}: truncated at offset {}: {} (no profile written)", o.input,
                                  m->truncation->offset, m->truncation->what));
    return write_pprof({o.pprof, o.kallsyms}, *m);
}

}  // namespace

void add_export(CLI::App* sub, context& ctx) {
    static options o;
    auto* out = sub->add_option_group("output", "what to write (one of)");
    out->add_option("--chrome", o.chrome, "write Chrome trace-event JSON here (- for stdout)");
    out->add_option("--pprof", o.pprof,
                    "write the CPU samples as a gzipped pprof profile here (- for stdout)");
    out->require_option(1);
    sub->add_option("--kallsyms", o.kallsyms,
                    "--pprof: the kernel's symbols, the recording machine's /proc/kallsyms");
    add_recording_file(sub, o.input);
    add_recording_input(sub, o.input);
    sub->add_flag("--idle", o.idle, "also the idle task's slices");
    sub->footer(
        "--chrome: one track per CPU (process \"CPUs\", thread = CPU): the tasks' slices\n"
        "from the switch records, the samples as instant events, the losses as a\n"
        "counter. Open the file in https://ui.perfetto.dev, speedscope or chrome://tracing.\n"
        "\n"
        "--pprof: one pprof sample per thread and stack, values samples/count and\n"
        "cpu/nanoseconds (the samples' periods), labels pid, tid, comm; stacks from\n"
        "the call chains of kring record -g (else the sampled IP), functions from\n"
        "the ELF symbols of the mapped files and --kallsyms. A truncated recording\n"
        "writes no profile. Read it with go tool pprof -top, -traces or -http.\n"
        "\n"
        "Examples:\n"
        "  kring export --chrome trace.json\n"
        "      perf.data into trace.json, for ui.perfetto.dev"
        "\n"
        "  kring export --chrome trace.json run1.data\n"
        "      another recording\n"
        "  kring export --pprof cpu.pb.gz --kallsyms kallsyms run1.data\n"
        "      run1.data's CPU profile, kernel frames named by kallsyms");
    sub->callback([&ctx] {
        if (!o.pprof.empty())
            ctx.exit_code = export_pprof(o);
        else
            ctx.exit_code =
                show_recording(o.input, [](const trace_model& m) { return show(o, m); });
    });
}

}  // namespace kring_tool
