// kring record's tracepoint events: the running kernel's sched_switch,
// sched_wakeup and sched_stat_runtime formats, read from tracefs at record time, and the tracing
// data perf needs to read their samples (the formats, payloads and
// tracing data are the perf.data component's: kring/perf_data.hpp). With
// them perf sched (latency, timehist, map) reads a kring recording.
#pragma once

#include <cstddef>
#include <optional>
#include <vector>

#include "kring/perf_data.hpp"
#include "kring/result.hpp"

namespace kring_tool::record {

// What kring record writes as tracepoints. sched_stat_runtime is
// derived: each run of a task on a CPU, from the switch that put it there
// to the switch that took it off, both recorded (perf sched latency's
// Runtime column sums these).
struct sched_tracepoints {
    kring::perf_data::tp_format sched_switch, sched_wakeup;
    std::optional<kring::perf_data::tp_format> sched_stat_runtime;  // where tracefs has it
    std::vector<std::byte> tracing_data;  // perf's tracing data for all of them
};

// The sched tracepoints of the running kernel from tracefs
// (/sys/kernel/tracing, else /sys/kernel/debug/tracing); an error saying
// why not (no tracefs, no permission: the caller records without them).
kring::result<sched_tracepoints> read_sched_tracepoints();

}  // namespace kring_tool::record
