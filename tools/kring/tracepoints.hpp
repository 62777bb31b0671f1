// kring record's tracepoint events: the running kernel's sched_switch and
// sched_wakeup formats, read from tracefs at record time, and the tracing
// data perf needs to read their samples (the formats, payloads and
// tracing data are the perf.data component's: kring/perf_data.hpp). With
// them perf sched (latency, timehist, map) reads a kring recording.
#pragma once

#include <cstddef>
#include <vector>

#include "kring/perf_data.hpp"
#include "kring/result.hpp"

namespace kring_tool::record {

// What kring record writes as tracepoints.
struct sched_tracepoints {
    kring::perf_data::tp_format sched_switch, sched_wakeup;
    std::vector<std::byte> tracing_data;  // perf's tracing data for both
};

// The sched tracepoints of the running kernel from tracefs
// (/sys/kernel/tracing, else /sys/kernel/debug/tracing); an error saying
// why not (no tracefs, no permission: the caller records without them).
kring::result<sched_tracepoints> read_sched_tracepoints();

}  // namespace kring_tool::record
