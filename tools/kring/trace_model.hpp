// The analysis model of a perf.data file that `kring report`, `kring
// script` and `kring export` share: every record of the file parsed once
// and put in time order across CPUs, the tasks by (pid, tid) with their
// comm, the per-CPU slices of the tasks (from the switch records), the
// samples, the losses and the AUX figures.
//
//	auto m = trace_model::load("perf.data");
//	if (!m) return report(m.error());
//	if (m->truncation) warn_truncated(*m);
//	for (const auto& e : m->events) ...
#pragma once

#include <compare>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "kring/perf_data.hpp"
#include "tracepoint_decode.hpp"
#include "kring/result.hpp"

namespace kring_tool {

struct task_id {
    std::uint32_t pid = 0, tid = 0;
    auto operator<=>(const task_id&) const = default;
};

// What a record is, as the tool names it (kring script's event column).
enum class event_kind : std::uint8_t {
    sample,
    wakeup,      // a sample of kring:sched_wakeup (docs/TOOL.md, The file)
    tracepoint,  // a sample of a PERF_TYPE_TRACEPOINT event (sched:sched_switch, ...)
    switch_out,
    switch_in,
    comm,
    fork,
    exit,
    mmap,
    lost,
    aux,
    itrace_start,
    auxtrace,
    finished_round,
    other,
};
const char* event_name(event_kind k) noexcept;

// One record of the file, parsed.
struct trace_event {
    event_kind kind = event_kind::other;
    std::uint32_t type = 0;  // perf record type (PERF_RECORD_*)
    std::uint16_t misc = 0;
    std::uint32_t size = 0;    // header.size
    std::uint64_t offset = 0;  // file offset of the record
    std::uint64_t time = 0;    // valid when has_time
    bool has_time = false;
    std::int32_t cpu = -1;  // -1: the record does not say
    task_id task;           // the record's task (has_task)
    bool has_task = false;
    std::uint64_t id = 0;  // sample id (has_id)
    bool has_id = false;
    std::string event_name;  // the attr's name (samples)
    std::string comm;        // the task's comm when the record was read
    // By kind:
    //	sample		a = ip, b = period
    //	wakeup		task = the woken task, other = the waker, idx = the
    //			woken task's last CPU
    //	switch_*	other = next (out) / prev (in), when cpu_wide; preempt
    //	comm		text = the new comm, exec
    //	fork, exit	other = parent (ppid, ptid)
    //	mmap		a = start, b = len, c = pgoff, text = filename,
    //			build_id (MMAP2 with PERF_RECORD_MISC_MMAP_BUILD_ID)
    //	lost		a = the LOST record's id, b = records lost
    //	aux		a = aux_offset, b = aux_size, c = flags
    //	auxtrace	a = size, b = offset, c = reference, idx; the
    //			emulated tracer's packets decoded from its first SYNC:
    //			packets, gaps, bad (undecodable)
    std::uint64_t a = 0, b = 0, c = 0;
    std::uint32_t idx = 0;
    std::uint64_t packets = 0, gaps = 0;
    bool bad = false;
    task_id other;
    bool cpu_wide = false, preempt = false, exec = false;
    std::string text;
    // A sample's call chain as perf records it (PERF_SAMPLE_CALLCHAIN:
    // innermost first, context markers included; empty without one).
    std::vector<std::uint64_t> callchain;
    std::vector<std::uint8_t> build_id;
    // A tracepoint's fields, decoded by the recording's formats
    // (tracepoint_decode.hpp); tp_decoded false when they could not be.
    std::vector<tp_field_value> tp;
    bool tp_decoded = false;
};

// A task on a CPU, from its switch-in to its switch-out (or the start or
// end of the recording when those are not in the file: open_start,
// open_end).
struct task_slice {
    std::int32_t cpu = 0;
    task_id task;
    std::uint64_t start = 0, end = 0;
    bool open_start = false, open_end = false;
};

struct task_stats {
    task_id id;
    std::string comm;             // the last one seen
    std::uint64_t switches = 0;   // times switched out
    std::uint64_t preempted = 0;  // of those, preempted
    std::uint64_t runtime = 0;    // ns on CPU (sum of its slices)
    std::uint64_t samples = 0;
    std::uint64_t wakeups = 0;  // times woken up
};

struct trace_model {
    std::string path;
    std::vector<kring::perf_data::event_attr> attrs;
    kring::perf_data::features feats;
    std::optional<kring::perf_data::truncation> truncation;

    std::vector<trace_event> events;                         // time order across CPUs (stable)
    std::map<task_id, task_stats> tasks;                     // every task a record names
    std::map<task_id, std::string> comms;                    // the last comm of each task
    std::map<std::int32_t, std::vector<task_slice>> slices;  // by CPU, in time order
    std::set<std::int32_t> cpus;                             // every CPU a record names

    std::uint64_t first_time = 0, last_time = 0;  // of the records with a time
    bool has_times = false;

    // Totals.
    std::map<std::uint32_t, std::uint64_t> by_type;  // perf record type -> records
    std::map<std::int32_t, std::uint64_t> by_cpu;    // CPU (-1: none) -> records
    std::uint64_t samples = 0, wakeups = 0, switches = 0, switches_in = 0, switches_out = 0;
    std::uint64_t tracepoints = 0;
    std::string tp_undecoded;  // why tracepoints are not decoded ("" when they are)
    // The tracing data's formats refused for fields a RAW cannot hold
    // (tracepoint_decode.hpp): their samples are not decoded.
    std::vector<tracepoint_decoder::refused_format> tp_refused;
    std::uint64_t lost_records = 0, lost = 0;  // PERF_RECORD_LOST: records, sum of lost
    std::uint64_t aux_records = 0, aux_bytes = 0, aux_truncated = 0, aux_overwrite = 0,
                  aux_partial = 0, aux_collision = 0;
    std::uint64_t auxtrace_records = 0, auxtrace_bytes = 0;
    // The emulated tracer's packets in the AUXTRACE data (kring's decoder,
    // aux_packets.hpp): packets, SEQ gaps within an extent, extents that
    // are not packets from their first SYNC on.
    std::uint64_t aux_packets = 0, aux_gaps = 0, aux_undecoded = 0;
    std::uint64_t unparsed = 0;  // records too short for their type

    // Read @path whole. Errors: the file cannot be opened or is not
    // perf.data. A truncated file loads: `truncation` says where it ends.
    static kring::result<trace_model> load(const std::string& path);

    // The comm of @t: the last one seen, "swapper" for the idle task,
    // else ":<tid>" (perf's convention).
    std::string comm_of(task_id t) const;
};

// "<s>.<ns, 9 digits>" of a time in nanoseconds.
std::string format_time(std::uint64_t ns);
// @s with every byte outside printable ASCII, the space, '"', '\\' and '='
// written \xNN: one token of a grep-friendly line.
std::string escape_token(const std::string& s);
// The perf record type's name ("SAMPLE", "SWITCH_CPU_WIDE", ...).
std::string record_type_name(std::uint32_t type);
// "truncated|overwrite|partial|collision" of PERF_AUX_FLAG_* (or "0").
std::string aux_flag_names(std::uint64_t flags);

// The warning of a truncated file: "kring: <path>: truncated at offset N:
// <what> (showing the records before it)" on stderr.
void warn_truncated(const trace_model& m);
// The warning of refused tracepoint formats: "kring: <path>: tracing
// data: format <sys:name> refused: <why> (its samples are not decoded)"
// on stderr, one line however many.
void warn_refused_formats(const trace_model& m);

}  // namespace kring_tool
