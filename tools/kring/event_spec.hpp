// kring record's events (-e): kring's own sources by their names, and any
// event perf opens by name - the tracepoints of tracefs (SUBSYS:NAME, with
// globs), perf's software and hardware events - recorded through the
// event source (KRING_SOURCE_EVENT); what a channel of one asks for, the
// attr the file declares for it and its samples as perf writes them.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kring/channel.hpp"
#include "kring/perf_data.hpp"
#include "kring/record.hpp"
#include "kring/result.hpp"

namespace kring_tool::events {

namespace pd = kring::perf_data;

// One of perf's software or hardware events: its name, perf's other name
// for it ("" when none), its config (PERF_COUNT_SW_*, PERF_COUNT_HW_*).
struct named_event {
    std::string_view name, alias;
    std::uint64_t config;
};
std::span<const named_event> software_events();
std::span<const named_event> hardware_events();

// kring's own sources as -e names them, with what each records. These
// names come first: a name that is both (timer:FREQ against the timer:
// tracepoints, whose names are never a number) is kring's.
struct builtin_source {
    std::string_view name, what;
};
std::span<const builtin_source> builtin_sources();

// An event of the event source.
struct event {
    std::string name;        // perf's: "irq:irq_handler_entry", "page-faults", "cycles:u"
    std::uint32_t type = 0;  // PERF_TYPE_TRACEPOINT, _SOFTWARE or _HARDWARE
    std::uint64_t config = 0;
    std::uint64_t period = 0;  // a sample every @period events, or
    std::uint64_t freq = 0;    // @freq samples a second (the kernel adapts the period)
    bool exclude_user = false, exclude_kernel = false;  // :k, :u
    std::optional<pd::tp_format> format;                // a tracepoint's, from tracefs
};

// -c and -F. Without either, perf's defaults: a tracepoint samples every
// hit (period 1), a software or hardware event 4000 times a second.
struct sampling {
    std::optional<std::uint64_t> period;  // -c: every event
    std::optional<std::uint64_t> freq;    // -F: software and hardware events
};
inline constexpr std::uint64_t default_freq = 4000;

// What -e asked for: kring's sources, and the event source's events.
struct event_set {
    bool sched = false, wakeups = false, timer = false, aux = false, producer = false;
    std::uint64_t timer_hz = 1000;
    std::vector<event> events;
    std::vector<std::string> notes;  // what a glob left out, and why
};

// The tracefs root, asked only when a tracepoint is (tracefs::root()).
using tracefs_fn = std::function<kring::result<std::string>()>;

// Every -e value (each a comma list). Errors name the token and why, in
// one line: EINVAL for what is not an event (unknown, with the nearest
// names; a glob matching nothing; a bad frequency; a tracepoint also
// written by -e sched), tracefs's error (not mounted, not readable) else.
// Nothing asked: sched.
kring::result<event_set> parse(const std::vector<std::string>& args, const sampling& smp,
                               const tracefs_fn& tracefs);

// The names of @names nearest to @name (the fewest edits, at most a third
// of its length or 2), at most @n.
std::vector<std::string> nearest(std::string_view name, const std::vector<std::string>& names,
                                 std::size_t n = 3);

// The channel of @e: its source, config[] and capture flags into @co, and
// its sample fields (IDENTIFIER, IP, TID, TIME, CPU, PERIOD; RAW for a
// tracepoint; CALLCHAIN with @callchain).
void configure(const event& e, bool callchain, kring::channel_options& co);

// The file's attr of @e, as perf record declares the same event, for
// samples of @sample_type (the channel's perf-defined bits) with @ids.
pd::event_attr attr_of(const event& e, std::uint64_t sample_type, std::vector<std::uint64_t> ids);

// perf's sample fields of a kring SAMPLE @s, with id @id: every field but
// RAW (the timer source's RAW is kring's own payload, not perf's).
pd::sample perf_fields_of(const kring::sample_info& s, std::uint64_t id);

// The perf SAMPLE of one of the event's samples @s (its channel's @misc),
// with id @id and the attr's @sample_type.
std::vector<std::byte> sample_of(const kring::sample_info& s, std::uint16_t misc, std::uint64_t id,
                                 std::uint64_t sample_type);

// Why the kernel refused @e with EACCES or EPERM, and what lets it: the
// capability, or the kernel.perf_event_paranoid level (now @paranoid) and
// kring.paranoid; @cpu_wide: every task of a CPU; @followed: a task.
std::string permission_hint(const event& e, bool cpu_wide, bool followed, int paranoid);

}  // namespace kring_tool::events
