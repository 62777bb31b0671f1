// kring record's conversion: kring records of the recorded rings into
// perf.data records (docs/TOOL.md, "kring record"), and the rings
// themselves. cmd_record.cpp opens the rings and drives the recorder; the
// recorder turns what the merger hands it into the file's records.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include <linux/kring.h>
#include <linux/perf_event.h>

#include "kring/aux.hpp"
#include "kring/channel.hpp"
#include "kring/merger.hpp"
#include "kring/perf_data.hpp"
#include "kring/reader.hpp"
#include "kring/record.hpp"
#include "event_spec.hpp"
#include "tracepoints.hpp"

namespace kring_tool::record {

namespace pd = kring::perf_data;

// The sample_type of the file's events (docs/TOOL.md): every one has
// IDENTIFIER, and the non-SAMPLE records' trailer is TID, TIME, CPU,
// IDENTIFIER for all of them.
constexpr std::uint64_t st_sched =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
constexpr std::uint64_t st_wakeup = st_sched | PERF_SAMPLE_RAW;
constexpr std::uint64_t st_timer = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr std::uint64_t st_aux = st_sched;
// The trailer of every non-SAMPLE record (the same for every event).
constexpr std::uint64_t st_trailer = st_sched;
// A wakeup's id: its sched ring's id with this bit set.
constexpr std::uint64_t wakeup_id_bit = 1ull << 62;
// The sched tracepoints' samples (sched:sched_switch, sched:sched_wakeup):
// their sched ring's id with these bits set.
constexpr std::uint64_t tp_switch_id_bit = 1ull << 61;
constexpr std::uint64_t tp_wakeup_id_bit = 1ull << 60;
constexpr std::uint64_t tp_runtime_id_bit = 1ull << 58;
// Their sample_type, as perf record -e sched:sched_switch writes it.
constexpr std::uint64_t st_tracepoint = st_sched | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;

// The producer channel (-e producer): its records' tracepoint samples
// carry its ring's id with this bit set and their event's index in bits
// 32 up; its LOST records the ring's id (event kring:producer).
constexpr std::uint64_t producer_id_bit = 1ull << 59;

enum class kind { sched, timer, aux, producer, event };

// One recorded ring: a channel, its reader, and what it is.
struct ring {
    kind k;
    kring::channel ch;
    kring::reader rd;
    std::optional<kring::aux_reader> ax;
    std::uint64_t id = 0;
    std::uint64_t sample_type = 0;  // the layout of its SAMPLEs (channel's report)
    int cpu = -1, pid = -1;
    std::uint32_t source = 0;
    std::size_t index = 0;  // perf's AUXTRACE idx
    // An event source's ring: its event (the index in event_set::events)
    // and the sample_type of the file's attr for it.
    std::size_t ev = 0;
    std::uint64_t out_st = 0;
    // Snapshot windows copied, waiting for their AUX record.
    std::deque<std::vector<std::byte>> windows;
    std::uint64_t snapshots = 0, aux_bytes_written = 0;
    std::uint64_t last_aux_end = 0, last_aux_size = 0;  // the last AUX record's extent
    std::vector<pd::kring_ring_info::lost_range> lost_ranges;
    // A producer channel: GET_FORMATS is asked once per record type it
    // has no format for (bounded: producer_asks_max types).
    std::set<std::uint32_t> asked;

    ring(kind kk, kring::channel c) : k(kk), ch(std::move(c)), rd(ch.ring()) {
        if (ch.aux().valid())
            ax.emplace(ch.aux());
    }
    ring(const ring&) = delete;
    ring& operator=(const ring&) = delete;
};

std::string kind_name(kind k);

// A tracepoint event @name (ID @id) whose samples carry @ids, as perf
// record -e SYSTEM:NAME declares it (st_tracepoint).
pd::event_attr tracepoint_attr(std::string name, std::uint32_t id, std::vector<std::uint64_t> ids);

// The conversion: every record of every ring, in the merger's order, into
// the file @w; counts what it saw. A write error stops the writing and is
// kept in write_error (flush() returns it).
struct recorder {
    const bool snapshot;                // --snapshot: AUX payloads come from snapshot windows
    std::uint64_t timer_st = st_timer;  // the timer samples' layout (-g: CALLCHAIN)
    // The running kernel's sched tracepoints: each switch and wakeup is
    // written as their sample too (perf sched reads those).
    std::optional<sched_tracepoints> tp;
    std::uint64_t tp_samples = 0, runtimes = 0;
    // The event source's tracepoints (-e SUBSYS:NAME): their formats go
    // into the tracing data.
    std::vector<const pd::tp_format*> event_formats;
    std::uint64_t event_samples = 0;
    // Per CPU, the task a recorded switch put there and when: the start of
    // the run the next switch out of that task on that CPU ends. A LOST
    // record forgets them all (the switches between are unknown).
    std::map<std::uint32_t, std::pair<std::uint32_t, std::uint64_t>> on_cpu;
    std::vector<std::unique_ptr<ring>> rings;
    std::optional<pd::writer> w;
    kring::merger merger;
    std::set<std::tuple<std::uint32_t, std::uint32_t, std::string>> comms_seen;
    std::vector<std::byte> buf;
    // Figures.
    std::uint64_t records = 0, written_records = 0, lost = 0, bad = 0;
    std::uint64_t switches = 0, samples = 0, forks = 0, exits = 0, wakeups = 0;
    std::uint64_t aux_records = 0, auxtrace_bytes = 0, snapshot_requests = 0, dup_aux = 0;
    std::uint64_t first_time = 0, last_time = 0;
    // The producer channel's described record types, each a tracepoint
    // kring:<name> declared in the file (writer::add_attr()) when first
    // met; the records of types it never described, by type; those
    // shorter than their description.
    struct producer_event {
        pd::kring_tracepoint tp;
        std::uint64_t id = 0;  // its samples' id
    };
    std::map<std::uint32_t, producer_event> producer_events;
    std::map<std::uint32_t, std::uint64_t> producer_undescribed;  // the first types
    std::uint64_t producer_undescribed_total = 0, producer_records = 0, producer_short = 0;
    std::uint32_t next_tp_id = producer_tp_id_base;
    std::string producer_format_error;  // the first GET_FORMATS failure, or a refused format
    kring::error write_error{0, ""};
    bool write_failed = false;

    recorder(bool snapshot_mode, kring::merge_options mo);

    void put(const std::vector<std::byte>& b);

    void note_time(std::uint64_t t);

    void comm_once(std::uint32_t pid, std::uint32_t tid, const char* comm16,
                   const pd::sample_id& at);

    void on_sched(ring& r, const kring::sample_info& s);
    // on_sched's kinds: a switch's perf records, its sched_stat_runtime
    // and sched_switch tracepoints; a fork's, an exit's, a wakeup's.
    void on_switch(ring& r, const kring::sample_info& s, const kring_sched_raw& raw,
                   const pd::sample_id& sid);
    void put_runtime(ring& r, const kring::sample_info& s, const kring_sched_raw& raw);
    void put_sched_switch(ring& r, const kring::sample_info& s, const kring_sched_raw& raw);
    void on_fork(const kring::sample_info& s, const kring_sched_raw& raw, pd::sample_id sid);
    void on_exit(const kring::sample_info& s, const kring_sched_raw& raw, pd::sample_id sid);
    void on_wakeup(ring& r, const kring::sample_info& s, const kring_sched_raw& raw);
    void put_tracepoint(std::uint64_t id, std::uint32_t pid, std::uint32_t tid, std::uint64_t time,
                        std::uint32_t cpu, std::span<const std::byte> payload);

    void on_timer(ring& r, const kring::sample_info& s);

    // An event source's sample (@misc: its record's), as perf's.
    void on_event(ring& r, const kring::sample_info& s, std::uint16_t misc);

    void on_aux(ring& r, const kring::aux_info& a);

    // A producer channel's record: a sample of its type's tracepoint, or
    // counted as undescribed (or short).
    void on_producer(ring& r, const kring::record& rec);
    // The event of @type's records, asking the channel for its formats
    // when @type is new; nullptr when it describes none.
    const producer_event* producer_event_of(ring& r, std::uint32_t type);
    // perf's tracing data for every tracepoint the file has (the sched
    // ones, the event source's, the producer's); empty when there are none.
    std::vector<std::byte> tracing_data() const;

    void on_record(ring& r, const kring::record& rec);

    // One pass: every record the merger can emit in order now, then
    // FINISHED_ROUND if anything was written.
    kring::result<void> flush(bool all);

    // Snapshot mode: copy every AUX ring's newest window (the AUX record
    // follows in the data ring); @restart false leaves the tracers stopped.
    kring::result<void> aux_snapshot(bool restart);

    static std::string ring_name(const ring& r);
};

}  // namespace kring_tool::record
