// kring report: what a perf.data file holds - records by type and by CPU,
// the loss by cause and the LOST sequence ranges of kring's own section,
// the AUX figures, and for sched/timer recordings the top tasks by
// switches, time on CPU and samples; --svg draws the per-CPU timeline.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include <linux/kring.h>

#include <fmt/core.h>

#include "command.hpp"
#include "recording.hpp"
#include "svg_timeline.hpp"
#include "trace_model.hpp"

namespace kring_tool {
namespace {

struct options {
    std::string input = "perf.data";
    std::string svg;
    unsigned top = 10;
};

const char* source_name(std::uint32_t s) {
    switch (s) {
        case KRING_SOURCE_NONE:
            return "none";
        case KRING_SOURCE_SYNTHETIC:
            return "synthetic";
        case KRING_SOURCE_SCHED:
            return "sched";
        case KRING_SOURCE_TIMER:
            return "timer";
        case KRING_SOURCE_AUX_TRACER:
            return "aux-tracer";
        default:
            return "?";
    }
}

std::string cpu_name(std::int32_t cpu) {
    return cpu < 0 ? std::string("-") : fmt::format("{}", cpu);
}

kring::result<void> write_file(const std::string& path, const std::string& text) {
    std::FILE* f = std::fopen(path.c_str(), "w");
    if (!f)
        return kring::error::from_errno(errno, "cannot create " + path);
    const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
    const int e = errno;
    if (std::fclose(f) != 0 || !ok)
        return kring::error::from_errno(ok ? errno : e, "cannot write " + path);
    return {};
}

void top_tasks(const trace_model& m, unsigned top, const char* title,
               const std::function<std::uint64_t(const task_stats&)>& key,
               const std::function<std::string(const task_stats&)>& show) {
    std::vector<const task_stats*> v;
    for (const auto& [id, t] : m.tasks)
        if (key(t))
            v.push_back(&t);
    if (v.empty())
        return;
    std::stable_sort(v.begin(), v.end(), [&](auto* a, auto* b) { return key(*a) > key(*b); });
    fmt::print("\ntop tasks by {}\n", title);
    fmt::print("  {:>7} {:>7} {:<16} {}\n", "pid", "tid", "comm", title);
    for (std::size_t i = 0; i < v.size() && i < top; i++)
        fmt::print("  {:>7} {:>7} {:<16} {}\n", v[i]->id.pid, v[i]->id.tid,
                   escape_token(v[i]->comm), show(*v[i]));
    if (v.size() > top)
        fmt::print("  ... and {} more\n", v.size() - top);
}

// The file, its events, the command, the host and the time span.
void print_header(const trace_model& m) {
    std::string names;
    for (const auto& a : m.attrs)
        names += (names.empty() ? "" : ", ") + (a.name.empty() ? std::string("?") : a.name);
    fmt::print("file      {}{}\n", m.path, m.truncation ? " (truncated)" : "");
    fmt::print("events    {}\n", names.empty() ? "none" : names);
    if (!m.feats.cmdline.empty()) {
        std::string cmd;
        for (const auto& a : m.feats.cmdline)
            cmd += (cmd.empty() ? "" : " ") + a;
        fmt::print("command   {}\n", cmd);
    }
    if (!m.feats.osrelease.empty() || !m.feats.hostname.empty())
        fmt::print("host      {} {} {}, {} CPUs online\n", m.feats.hostname, m.feats.osrelease,
                   m.feats.arch, m.feats.nr_cpus_online);
    if (m.has_times)
        fmt::print("time      {} .. {} ({:.6f} s)\n", format_time(m.first_time),
                   format_time(m.last_time), double(m.last_time - m.first_time) / 1e9);
}

void print_record_counts(const trace_model& m) {
    fmt::print("\nrecords by type\n");
    for (const auto& [type, n] : m.by_type)
        fmt::print("  {:<18} {:>10}\n", record_type_name(type), n);
    fmt::print("  {:<18} {:>10}\n", "total", m.events.size());
    fmt::print("\nrecords by CPU\n");
    for (const auto& [cpu, n] : m.by_cpu)
        fmt::print("  {:<18} {:>10}\n",
                   cpu < 0 ? std::string("no cpu") : fmt::format("cpu {}", cpu), n);
}

// kring's own account of a ring loss, summed for the summary line.
struct ring_loss {
    std::uint64_t lost = 0;
    std::uint64_t ranges = 0;
};

ring_loss print_kring_loss(const kring::perf_data::kring_section& k) {
    ring_loss total;
    fmt::print("  by cause, per ring (kring section, version {}):\n", k.version);
    fmt::print("  {:>6} {:>4} {:>7} {:<10} {:>10} {:>10} {:>9} {:>8} {:>7} {:>11} {:>9}\n", "id",
               "cpu", "pid", "source", "produced", "written", "no_space", "too_big", "paused",
               "overwritten", "throttled");
    for (const auto& r : k.rings) {
        fmt::print("  {:>6} {:>4} {:>7} {:<10} {:>10} {:>10} {:>9} {:>8} {:>7} {:>11} {:>9}\n",
                   r.id, cpu_name(r.cpu), r.pid < 0 ? std::string("-") : fmt::format("{}", r.pid),
                   source_name(r.source), r.produced, r.written, r.lost_no_space, r.lost_too_big,
                   r.lost_paused, r.lost_overwritten, r.throttled);
        total.lost += r.lost_no_space + r.lost_too_big + r.lost_paused + r.lost_overwritten;
    }
    for (const auto& r : k.rings)
        for (const auto& lr : r.lost_ranges) {
            if (!total.ranges++)
                fmt::print("  lost sequence ranges:\n");
            fmt::print("    ring {} cpu {}: {} records, seq {}..{}, time {}..{}\n", r.id,
                       cpu_name(r.cpu), lr.lost, lr.first_seq, lr.last_seq,
                       format_time(lr.first_time), format_time(lr.last_time));
        }
    return total;
}

// Losses: the LOST records of the data, and kring's own account.
ring_loss print_loss(const trace_model& m) {
    fmt::print("\nloss\n");
    fmt::print("  LOST records       {:>10} ({} records lost)\n", m.lost_records, m.lost);
    if (m.feats.kring)
        return print_kring_loss(*m.feats.kring);
    fmt::print("  (no kring section: loss by cause unknown)\n");
    return {};
}

void print_aux(const trace_model& m) {
    if (!m.aux_records && !m.auxtrace_records)
        return;
    fmt::print("\naux\n");
    fmt::print("  AUX records        {:>10} ({} bytes)\n", m.aux_records, m.aux_bytes);
    fmt::print("  flags              truncated {}, overwrite {}, partial {}, collision {}\n",
               m.aux_truncated, m.aux_overwrite, m.aux_partial, m.aux_collision);
    fmt::print("  AUXTRACE records   {:>10} ({} bytes of trace data)\n", m.auxtrace_records,
               m.auxtrace_bytes);
    fmt::print(
        "  decoded            {} packets of the emulated tracer, {} gaps within "
        "extents, {} extents not decodable\n",
        m.aux_packets, m.aux_gaps, m.aux_undecoded);
}

void print_top_tasks(const options& o, const trace_model& m) {
    top_tasks(
        m, o.top, "switches", [](const task_stats& t) { return t.switches; },
        [](const task_stats& t) {
            return fmt::format("{} ({} preempted)", t.switches, t.preempted);
        });
    top_tasks(
        m, o.top, "on-CPU time", [](const task_stats& t) { return t.runtime; },
        [](const task_stats& t) { return fmt::format("{:.3f} ms", double(t.runtime) / 1e6); });
    top_tasks(
        m, o.top, "wakeups", [](const task_stats& t) { return t.wakeups; },
        [](const task_stats& t) { return fmt::format("{}", t.wakeups); });
    top_tasks(
        m, o.top, "samples", [](const task_stats& t) { return t.samples; },
        [&](const task_stats& t) {
            return fmt::format("{} ({:.1f}%)", t.samples,
                               100.0 * double(t.samples) / double(m.samples));
        });
}

// The SVG timeline when asked for; the tool's status.
int write_svg(const options& o, const trace_model& m, std::uint64_t slices) {
    if (o.svg.empty())
        return exit_ok;
    if (auto w = write_file(o.svg, render_svg_timeline(m)); !w)
        return report(w.error());
    fmt::print("\nsvg       {}: {} CPU tracks, {} slices\n", o.svg, m.cpus.size(), slices);
    return exit_ok;
}

void print_report_summary(const trace_model& m, std::uint64_t slices, const ring_loss& loss) {
    auto count = [&](std::uint32_t type) {
        auto it = m.by_type.find(type);
        return it == m.by_type.end() ? std::uint64_t(0) : it->second;
    };
    print_summary("report", {{"records", m.events.size()},
                             {"samples", m.samples},
                             {"wakeups", m.wakeups},
                             {"switches", m.switches},
                             {"switch_in", m.switches_in},
                             {"switch_out", m.switches_out},
                             {"comm", count(PERF_RECORD_COMM)},
                             {"fork", count(PERF_RECORD_FORK)},
                             {"exit", count(PERF_RECORD_EXIT)},
                             {"mmap", count(PERF_RECORD_MMAP) + count(PERF_RECORD_MMAP2)},
                             {"lost_records", m.lost_records},
                             {"lost", m.lost},
                             {"aux_records", m.aux_records},
                             {"aux_bytes", m.aux_bytes},
                             {"aux_truncated", m.aux_truncated},
                             {"aux_overwrite", m.aux_overwrite},
                             {"aux_partial", m.aux_partial},
                             {"auxtrace_bytes", m.auxtrace_bytes},
                             {"aux_packets", m.aux_packets},
                             {"aux_gaps", m.aux_gaps},
                             {"aux_undecoded", m.aux_undecoded},
                             {"cpus", m.cpus.size()},
                             {"tasks", m.tasks.size()},
                             {"slices", slices},
                             {"rings", m.feats.kring ? m.feats.kring->rings.size() : 0},
                             {"ring_lost", loss.lost},
                             {"lost_ranges", loss.ranges},
                             {"unparsed", m.unparsed},
                             {"truncated", m.truncation ? 1 : 0}});
}

int show(const options& o, const trace_model& m) {
    print_header(m);
    print_record_counts(m);
    const ring_loss loss = print_loss(m);
    print_aux(m);
    print_top_tasks(o, m);

    std::uint64_t slices = 0;
    for (const auto& [cpu, list] : m.slices)
        slices += list.size();
    const int status = write_svg(o, m, slices);
    print_report_summary(m, slices, loss);
    if (!m.truncation && m.unparsed && status == exit_ok)
        return report(fmt::format("{}: {} records too short for their type", m.path, m.unparsed));
    return status;
}

}  // namespace

void add_report(CLI::App* sub, context& ctx) {
    static options o;
    add_recording_file(sub, o.input);
    sub->add_option("--svg", o.svg, "also draw the per-CPU timeline of the tasks into this SVG");
    sub->add_option("--top", o.top, "tasks per top list")->capture_default_str();
    sub->footer(
        "Prints records by type and by CPU, the loss by cause and the lost sequence\n"
        "ranges (kring's own section), the AUX figures, and the top tasks by switches,\n"
        "time on CPU and samples. A truncated file: one warning line on stderr, then\n"
        "what could be read, exit status 1.\n"
        "\n"
        "Examples:\n"
        "  kring report\n"
        "      perf.data in this directory"
        "\n"
        "  kring report -i run1.data --top 5\n"
        "      five tasks per top list"
        "\n"
        "  kring report trace.data --svg timeline.svg\n"
        "      also the per-CPU timeline");
    add_recording_input(sub, o.input);
    sub->callback([&ctx] {
        ctx.exit_code = show_recording(o.input, [](const trace_model& m) { return show(o, m); });
    });
}

}  // namespace kring_tool
