// kring record's tracepoint events: the running kernel's sched_switch,
// sched_wakeup and sched_stat_runtime formats, read from tracefs at record
// time, a producer channel's record formats as kring:<name> tracepoints,
// and the tracing data perf needs to read their samples (the formats,
// payloads and tracing data are the perf.data component's:
// kring/perf_data.hpp). With them perf sched (latency, timehist, map)
// reads a kring recording, and perf script a producer's records by field.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kring/perf_data.hpp"
#include "kring/result.hpp"

namespace kring_tool::record {

// The header files of perf's tracing data.
struct tracing_headers {
    std::string page, event;  // events/header_page, events/header_event
};

// What kring record writes as tracepoints. sched_stat_runtime is
// derived: each run of a task on a CPU, from the switch that put it there
// to the switch that took it off, both recorded (perf sched latency's
// Runtime column sums these).
struct sched_tracepoints {
    kring::perf_data::tp_format sched_switch, sched_wakeup;
    std::optional<kring::perf_data::tp_format> sched_stat_runtime;  // where tracefs has it
    tracing_headers headers;                                        // tracefs's
    std::vector<std::byte> tracing_data;  // perf's tracing data for all of them
};

// The sched tracepoints of the running kernel from tracefs (tracefs::root():
// mounted as root when it is not); an error saying why not and what to do
// (no tracefs, no permission: the caller records without them).
kring::result<sched_tracepoints> read_sched_tracepoints();

// tracefs's header files when they can be read, else built-in copies of a
// 6.12 kernel's (x86-64 and arm64 have the same) for this machine's page
// size: a producer's formats need no tracefs.
tracing_headers read_tracing_headers();

// The tracepoint IDs of a producer's formats (kring:<name>): a fixed range
// at the top of the u16 space, above the IDs kernels hand out, of
// KRING_FORMATS_MAX.
constexpr std::uint16_t producer_tp_id_base = 0xff00;

// perf's tracing data holding @events, with @h.
std::vector<std::byte> tracing_data_of(
    const tracing_headers& h, const std::vector<const kring::perf_data::tp_format*>& events);

}  // namespace kring_tool::record
