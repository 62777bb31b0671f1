// kring script: every record of a perf.data file, one line each, in time
// order across CPUs. The format is stable (docs/TOOL.md):
//
//	<s.ns> cpu=<n> <event> pid=<p> tid=<t> comm=<c> <key>=<value> ...
//
// with "-" for what a record does not say; --json writes one JSON object
// per record instead, with the same keys.
#include <cstdio>
#include <string>
#include <variant>
#include <vector>

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include "command.hpp"
#include "recording.hpp"
#include "trace_model.hpp"

namespace kring_tool {
namespace {

struct options {
    std::string input = "perf.data";
    bool json = false;
};

struct field {
    const char* key;
    std::variant<std::uint64_t, std::string, std::int64_t> value;
    bool hex = false;
};

const char* cpumode(std::uint16_t misc) {
    switch (misc & PERF_RECORD_MISC_CPUMODE_MASK) {
        case PERF_RECORD_MISC_KERNEL:
            return "kernel";
        case PERF_RECORD_MISC_USER:
            return "user";
        case PERF_RECORD_MISC_HYPERVISOR:
            return "hypervisor";
        case PERF_RECORD_MISC_GUEST_KERNEL:
            return "guest-kernel";
        case PERF_RECORD_MISC_GUEST_USER:
            return "guest-user";
        default:
            return "unknown";
    }
}

// The event-specific fields of @e, in their fixed order.
std::vector<field> fields_of(const trace_event& e) {
    switch (e.kind) {
        case event_kind::sample:
            return {{"evname", e.event_name.empty() ? std::string("?") : e.event_name},
                    {"ip", e.a, true},
                    {"period", e.b},
                    {"mode", std::string(cpumode(e.misc))}};
        case event_kind::tracepoint: {
            std::vector<field> v = {
                {"evname", e.event_name.empty() ? std::string("?") : e.event_name}};
            if (!e.tp_decoded)
                v.push_back({"decoded", std::uint64_t(0)});
            for (const auto& f : e.tp) {
                if (const auto* n = std::get_if<std::int64_t>(&f.value))
                    v.push_back({f.name.c_str(), *n});
                else
                    v.push_back({f.name.c_str(), std::get<std::string>(f.value)});
            }
            return v;
        }
        case event_kind::wakeup:
            return {{"waker_pid", std::uint64_t(e.other.pid)},
                    {"waker_tid", std::uint64_t(e.other.tid)},
                    {"last_cpu", std::uint64_t(e.idx)}};
        case event_kind::switch_out:
            if (e.cpu_wide)
                return {{"next_pid", std::uint64_t(e.other.pid)},
                        {"next_tid", std::uint64_t(e.other.tid)},
                        {"preempt", std::uint64_t(e.preempt)}};
            return {{"preempt", std::uint64_t(e.preempt)}};
        case event_kind::switch_in:
            if (e.cpu_wide)
                return {{"prev_pid", std::uint64_t(e.other.pid)},
                        {"prev_tid", std::uint64_t(e.other.tid)}};
            return {};
        case event_kind::comm:
            return {{"exec", std::uint64_t(e.exec)}};
        case event_kind::fork:
        case event_kind::exit:
            return {{"ppid", std::uint64_t(e.other.pid)}, {"ptid", std::uint64_t(e.other.tid)}};
        case event_kind::mmap:
            return {
                {"start", e.a, true}, {"len", e.b, true}, {"pgoff", e.c, true}, {"file", e.text}};
        case event_kind::lost:
            return {{"id", e.a}, {"lost", e.b}};
        case event_kind::aux:
            return {{"offset", e.a, true}, {"size", e.b}, {"flags", aux_flag_names(e.c)}};
        case event_kind::auxtrace:
            return {{"size", e.a},
                    {"offset", e.b, true},
                    {"ref", e.c, true},
                    {"idx", std::uint64_t(e.idx)},
                    {"packets", e.packets},
                    {"gaps", e.gaps},
                    {"decoded", std::uint64_t(!e.bad)}};
        case event_kind::itrace_start:
        case event_kind::finished_round:
            return {};
        case event_kind::other:
            break;
    }
    return {{"type", record_type_name(e.type)}, {"size", std::uint64_t(e.size)}};
}

std::string text_line(const trace_event& e) {
    std::string s = e.has_time ? format_time(e.time) : std::string("-");
    s += e.cpu >= 0 ? fmt::format(" cpu={}", e.cpu) : std::string(" cpu=-");
    s += ' ';
    s += event_name(e.kind);
    if (e.has_task)
        s += fmt::format(" pid={} tid={} comm={}", e.task.pid, e.task.tid, escape_token(e.comm));
    else
        s += " pid=- tid=- comm=-";
    for (const auto& f : fields_of(e)) {
        if (const auto* n = std::get_if<std::uint64_t>(&f.value))
            s += f.hex ? fmt::format(" {}={:#x}", f.key, *n) : fmt::format(" {}={}", f.key, *n);
        else if (const auto* i = std::get_if<std::int64_t>(&f.value))
            s += fmt::format(" {}={}", f.key, *i);
        else
            s += fmt::format(" {}={}", f.key, escape_token(std::get<std::string>(f.value)));
    }
    return s;
}

std::string json_line(const trace_event& e) {
    nlohmann::ordered_json j;
    j["time"] = e.has_time ? nlohmann::ordered_json(e.time) : nlohmann::ordered_json(nullptr);
    j["cpu"] = e.cpu >= 0 ? nlohmann::ordered_json(e.cpu) : nlohmann::ordered_json(nullptr);
    j["event"] = event_name(e.kind);
    if (e.has_task) {
        j["pid"] = e.task.pid;
        j["tid"] = e.task.tid;
        j["comm"] = e.comm;
    } else {
        j["pid"] = nullptr;
        j["tid"] = nullptr;
        j["comm"] = nullptr;
    }
    for (const auto& f : fields_of(e)) {
        if (const auto* n = std::get_if<std::uint64_t>(&f.value))
            j[f.key] = f.hex ? nlohmann::ordered_json(fmt::format("{:#x}", *n))
                             : nlohmann::ordered_json(*n);
        else if (const auto* i = std::get_if<std::int64_t>(&f.value))
            j[f.key] = *i;
        else
            j[f.key] = std::get<std::string>(f.value);
    }
    j["offset"] = e.offset;
    // A comm or file name is bytes: invalid UTF-8 becomes U+FFFD.
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

int show(const options& o, const trace_model& m) {
    std::string out;
    for (const auto& e : m.events) {
        out += o.json ? json_line(e) : text_line(e);
        out += '\n';
        if (out.size() >= (1u << 16)) {
            std::fwrite(out.data(), 1, out.size(), stdout);
            out.clear();
        }
    }
    std::fwrite(out.data(), 1, out.size(), stdout);
    std::fflush(stdout);
    if (std::ferror(stdout))
        return report(kring::error::from_errno(EIO, "write to stdout"));
    if (!o.json)  // JSON lines stay JSON to the end
        print_summary("script",
                      {{"records", m.events.size()}, {"truncated", m.truncation ? 1 : 0}});
    return exit_ok;
}

}  // namespace

void add_script(CLI::App* sub, context& ctx) {
    static options o;
    add_recording_file(sub, o.input);
    add_recording_input(sub, o.input);
    sub->add_flag("--json", o.json, "one JSON object per line (and no summary line)");
    sub->footer(
        "Line format (stable; docs/TOOL.md):\n"
        "  <s.ns> cpu=<n> <event> pid=<p> tid=<t> comm=<c> <key>=<value> ...\n"
        "events: sample, wakeup, tracepoint, switch-out, switch-in, comm, fork, exit, mmap,\n"
        "lost, aux, "
        "itrace-start, auxtrace, finished-round, other; \"-\" where a record does not\n"
        "say. A truncated file: one warning line on stderr, the records before the\n"
        "damage, exit status 1.\n"
        "\n"
        "Examples:\n"
        "  kring script | grep ' switch-out '\n"
        "      the switches out, one per line"
        "\n"
        "  kring script run1.data --json | jq -c 'select(.event == \"sample\")'\n"
        "      the samples as JSON");
    sub->callback([&ctx] {
        ctx.exit_code = show_recording(o.input, [](const trace_model& m) { return show(o, m); });
    });
}

}  // namespace kring_tool
