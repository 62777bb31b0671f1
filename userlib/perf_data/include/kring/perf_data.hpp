// libkring's perf.data component: perf.data files, the file format of
// `perf record`, written and read, so that a kring recording opens in
// perf's own tools (perf script, perf report) and in the viewers that
// import perf.data. Its own library on top of libkring's records: link
// kring::perf_data (CMake) or -lkring_perf_data (kring.pc).
//
// The layout (tools/perf/Documentation/perf.data-file-format.txt):
//
//	+---------------------------+ 0
//	| perf_file_header          |  "PERFILE2", sizes, the three sections
//	+---------------------------+  below, the feature bitmap (256 bits)
//	| attrs: per event          |
//	|   perf_event_attr         |
//	|   perf_file_section ids   |--> u64 ids[]: the event's sample ids
//	+---------------------------+
//	| data: perf records        |  8-byte header {type, misc, size};
//	|   ...                     |  AUXTRACE records are followed by their
//	|                           |  payload (not counted in header.size)
//	+---------------------------+
//	| feature sections          |  one perf_file_section per set feature
//	|                           |  bit, in bit order, then their bodies
//	+---------------------------+
//
// A stream (perf's pipe format, create_pipe(): perf record -o -, perf
// report -i -) is the 16-byte header {magic, 16}, then the attrs as
// PERF_RECORD_HEADER_ATTR records, the records, and perf's features as
// PERF_RECORD_HEADER_FEATURE records at the end; file::open("-") and
// from_bytes() read either form.
//
// A writer is written once, front to back: create(), write() records in
// the order they are to be read, finish() writes the features and the
// final header. Until finish() the header says data size 0 and no
// features: a file whose writer died reads as truncated, never as wrong.
//
//	auto w = kring::perf_data::writer::create("perf.data", attrs);
//	w->write(bytes_of_a_perf_record);
//	w->finish(kring::perf_data::features::from_system(argc, argv));
//
//	auto f = kring::perf_data::file::open("perf.data");
//	f->for_each([&](const kring::perf_data::record_view& r) { ... });
//	if (f->truncated()) warn(f->truncation_info()->what);
#pragma once

#include <linux/perf_event.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kring/callchain.hpp"
#include "kring/fd.hpp"
#include "kring/result.hpp"

namespace kring::perf_data {

// perf's user-space record types (tools/perf/util/event.h): they exist in
// files only, never in a ring.
enum user_record_type : std::uint32_t {
    record_header_attr = 64,
    record_finished_round = 68,
    record_id_index = 69,
    record_auxtrace_info = 70,
    record_auxtrace = 71,
    record_auxtrace_error = 72,
    record_time_conv = 79,
    record_finished_init = 82,
    record_header_tracing_data = 66,
};

// perf's feature bits (tools/perf/util/header.h, HEADER_*).
enum feature_bit : unsigned {
    feat_tracing_data = 1,
    feat_build_id = 2,
    feat_hostname = 3,
    feat_osrelease = 4,
    feat_version = 5,
    feat_arch = 6,
    feat_nrcpus = 7,
    feat_cpudesc = 8,
    feat_cpuid = 9,
    feat_total_mem = 10,
    feat_cmdline = 11,
    feat_event_desc = 12,
    feat_cpu_topology = 13,
    feat_auxtrace = 18,
    feat_sample_time = 21,
    feat_clockid = 23,
    // kring's own section: a bit far above perf's (perf reads only the bits
    // it knows, and this section comes last), holding a kring_section.
    feat_kring = 250,
    // The AUXTRACE records of writer::write_auxtrace(), payloads included:
    // perf 6.1 stops at an AUXTRACE record in the data section when no
    // decoder of its own knows the AUX data, so they are kept here, each
    // with the data position it was written at; file::for_each() hands them
    // out in that place, as if they were in the data section.
    feat_kring_auxtrace = 251,
};

// One event of the file: its attribute, a name (for EVENT_DESC) and the
// ids its records carry (SAMPLE_IDENTIFIER / sample_id's ID).
struct event_attr {
    perf_event_attr attr{};
    std::string name;
    std::vector<std::uint64_t> ids;
};

// An event of @type/@config sampled on every record (sample_period 1,
// sample_id_all) with @sample_type and the ids @ids: how kring record
// declares each of its events.
inline event_attr sample_event(std::string name, std::uint32_t type, std::uint64_t config,
                               std::uint64_t sample_type, std::vector<std::uint64_t> ids = {}) {
    event_attr a;
    a.name = std::move(name);
    a.attr.size = sizeof(perf_event_attr);
    a.attr.type = type;
    a.attr.config = config;
    a.attr.sample_type = sample_type;
    a.attr.sample_id_all = 1;
    a.attr.sample_period = 1;
    a.ids = std::move(ids);
    return a;
}

// The per-CPU topology entry of HEADER_CPU_TOPOLOGY.
struct cpu_topology_entry {
    std::uint32_t core_id = 0, socket_id = 0, die_id = 0;
};

// kring's own feature section: what perf's records cannot say. One entry
// per ring that was recorded, with the loss by cause (kring_stats) and the
// LOST records' sequence ranges, and the AUX figures.
struct kring_ring_info {
    std::int32_t cpu = -1;     // -1: per-thread
    std::int32_t pid = -1;     // -1: every task
    std::uint32_t source = 0;  // enum kring_source
    std::uint64_t id = 0;      // the sample id of its records
    std::uint64_t produced = 0, written = 0;
    std::uint64_t lost_no_space = 0, lost_too_big = 0, lost_paused = 0, lost_overwritten = 0;
    std::uint64_t throttled = 0, wakeups = 0, nested = 0;
    std::uint64_t aux_bytes = 0, aux_records = 0, aux_truncated = 0, aux_snapshots = 0;
    struct lost_range {
        std::uint64_t lost = 0, first_seq = 0, last_seq = 0, first_time = 0, last_time = 0;
    };
    std::vector<lost_range> lost_ranges;
};
struct kring_section {
    std::uint32_t version = 1;
    std::uint32_t clockid = 0;  // KRING_CLOCK_* of the record times
    std::vector<kring_ring_info> rings;
};
std::vector<std::byte> encode(const kring_section& s);
// nullopt on a malformed or truncated section.
std::optional<kring_section> decode_kring_section(std::span<const std::byte> bytes);

// What the feature sections hold. Empty fields are not written (their bit
// stays clear), except those perf requires.
struct features {
    std::string hostname, osrelease, version, arch, cpudesc, cpuid;
    std::uint32_t nr_cpus_available = 0, nr_cpus_online = 0;
    std::uint64_t total_mem_kb = 0;
    std::vector<std::string> cmdline;
    // CPU topology: sibling lists ("0-1") and one entry per CPU.
    std::vector<std::string> core_siblings, thread_siblings;
    std::vector<cpu_topology_entry> cpus;
    // perf's HEADER_CLOCKID: one u64, which perf reads as the clock's
    // resolution in ns (perf report --header: "clockid frequency").
    std::optional<std::uint64_t> clockid;
    std::optional<std::pair<std::uint64_t, std::uint64_t>> sample_time;  // first, last
    std::optional<kring_section> kring;
    // perf's tracing data (HEADER_TRACING_DATA, or a stream's
    // PERF_RECORD_HEADER_TRACING_DATA): the tracepoint formats of the
    // file's PERF_TYPE_TRACEPOINT events. Read back by file; a writer
    // takes it through writer::write_tracing_data().
    std::vector<std::byte> tracing_data;

    // Filled from uname(), /proc/cpuinfo, /proc/meminfo and /sys: what a
    // perf record on this machine would write. @argv: the command line.
    static features from_system(int argc, const char* const* argv);
};

// A record as it lies in the file: header, body, and for AUXTRACE the
// payload that follows it.
struct record_view {
    std::uint64_t offset = 0;             // file offset of the header
    std::span<const std::byte> bytes;     // header.size bytes
    std::span<const std::byte> auxtrace;  // AUXTRACE payload (else empty)
    std::uint32_t type() const noexcept;
    std::uint16_t misc() const noexcept;
};

class writer {
public:
    // Create (truncate) @path with @attrs. Errors: the errno of the open
    // or write, with the path in the message. "-" is create_pipe() on
    // standard output.
    static result<writer> create(const std::string& path, std::vector<event_attr> attrs);
    // perf's pipe format on @fd (a pipe, a socket, anything written front
    // to back and never sought; perf record -o - writes it, perf report
    // -i - reads it): the attrs as records up front, each FINISHED_ROUND
    // record sends what is buffered, finish() appends perf's features as
    // records. kring's own sections are not in a
    // stream (perf refuses features it does not know there), and AUXTRACE
    // payloads follow their records, as in perf's own streams.
    static result<writer> create_pipe(int fd, std::vector<event_attr> attrs);

    writer(writer&&) noexcept;
    writer& operator=(writer&&) noexcept;
    ~writer();

    // Append one record (its header's size must be bytes.size(), a
    // multiple of 8). EINVAL for a malformed one.
    result<void> write(std::span<const std::byte> bytes);
    // Append a PERF_RECORD_AUXTRACE for @payload (padded to 8 bytes). It is
    // kept in a temporary file until finish() puts it in the
    // feat_kring_auxtrace section (a writer that never finishes loses it);
    // readers see it in for_each() after the records written before it.
    result<void> write_auxtrace(std::span<const std::byte> payload, std::uint64_t offset,
                                std::uint64_t reference, std::uint32_t idx, std::uint32_t tid,
                                std::uint32_t cpu);
    // Write the feature sections and the final header; the file is then
    // complete. Further write()s are EINVAL.
    result<void> finish(const features& f);
    // perf's tracing data for the tracepoint events (see features): in a
    // stream a PERF_RECORD_HEADER_TRACING_DATA record with the data after
    // it, written now, once, before the first write() (else EINVAL); in a
    // file the HEADER_TRACING_DATA section finish() writes, the last data
    // given before it.
    result<void> write_tracing_data(std::span<const std::byte> data);
    // An event declared after the file was created (a file only: EINVAL in
    // a stream): finish() writes every attr after the data section, where
    // the header then points (perf reads the attrs wherever it points).
    result<void> add_attr(event_attr a);

    std::uint64_t data_size() const noexcept;
    const std::vector<event_attr>& attrs() const noexcept;

private:
    struct impl;
    explicit writer(std::unique_ptr<impl> p);
    std::unique_ptr<impl> p_;
};

// A truncated or damaged file is read up to the last whole record.
struct truncation {
    std::uint64_t offset = 0;  // where the first unreadable byte is
    std::string what;          // "record of size 0 at offset ...", ...
};

class file {
public:
    // Read @path's header, attrs and features. EINVAL (with a message) for
    // a file that is not perf.data (wrong magic, header sizes); a file
    // whose data section or features are cut short opens, truncated().
    // "-" reads a stream (or a file) from standard input to its end.
    static result<file> open(const std::string& path);
    // The same for a file's bytes held in memory (the file keeps them).
    static result<file> from_bytes(std::vector<std::byte> bytes);

    file(file&&) noexcept;
    file& operator=(file&&) noexcept;
    ~file();

    const std::vector<event_attr>& attrs() const noexcept;
    const features& feats() const noexcept;
    // The event whose ids include @id; nullptr when none does.
    const event_attr* attr_by_id(std::uint64_t id) const noexcept;
    // The event a record belongs to: a SAMPLE by its IDENTIFIER (or the
    // only attr), another kernel record by its sample_id trailer. nullptr
    // when it cannot be told.
    const event_attr* attr_of(const record_view& r) const noexcept;

    // Every record of the data section in file order; stops early at the
    // first record that cannot be read (truncated() tells).
    // f returns void.
    result<void> for_each(const std::function<void(const record_view&)>& f) const;

    bool truncated() const noexcept;
    const std::optional<truncation>& truncation_info() const noexcept;

private:
    struct impl;
    explicit file(std::unique_ptr<impl> p);
    static result<file> from_owned(std::vector<std::byte> bytes, const std::string& name);
    std::unique_ptr<impl> p_;
};

// Parsers of perf's kernel records as they lie in a file (each checks
// lengths against the record; nullopt for a record too short).
struct sample {
    std::uint64_t id = 0, ip = 0, time = 0, period = 0;
    std::uint32_t pid = 0, tid = 0, cpu = 0;
    bool has_time = false;
    callchain_view callchain;  // PERF_SAMPLE_CALLCHAIN
    std::span<const std::byte> raw;
};
// By the attr's sample_type (perf's order; the fields kring writes:
// IDENTIFIER, IP, TID, TIME, ID, CPU, PERIOD, CALLCHAIN, RAW).
std::optional<sample> parse_sample(const record_view& r, std::uint64_t sample_type) noexcept;

// The sample_id trailer of a non-SAMPLE kernel record (attr.sample_id_all).
struct sample_id {
    std::uint32_t pid = 0, tid = 0, cpu = 0;
    std::uint64_t time = 0, id = 0;
    bool has_time = false;
};
std::optional<sample_id> parse_sample_id(const record_view& r, std::uint64_t sample_type) noexcept;

struct comm_info {
    std::uint32_t pid = 0, tid = 0;
    std::string comm;
    bool exec = false;  // PERF_RECORD_MISC_COMM_EXEC
};
std::optional<comm_info> parse_comm(const record_view& r) noexcept;

struct switch_info {
    bool out = false;                                    // PERF_RECORD_MISC_SWITCH_OUT
    bool preempt = false;                                // PERF_RECORD_MISC_SWITCH_OUT_PREEMPT
    std::uint32_t next_prev_pid = 0, next_prev_tid = 0;  // CPU-wide only
};
std::optional<switch_info> parse_switch(const record_view& r) noexcept;

struct task_info {  // PERF_RECORD_FORK / PERF_RECORD_EXIT
    std::uint32_t pid = 0, ppid = 0, tid = 0, ptid = 0;
    std::uint64_t time = 0;
};
std::optional<task_info> parse_task(const record_view& r) noexcept;

struct lost_info {  // PERF_RECORD_LOST
    std::uint64_t id = 0, lost = 0;
};
std::optional<lost_info> parse_lost(const record_view& r) noexcept;

struct aux_record_info {  // PERF_RECORD_AUX
    std::uint64_t aux_offset = 0, aux_size = 0, flags = 0;
};
std::optional<aux_record_info> parse_aux(const record_view& r) noexcept;

struct auxtrace_info {  // PERF_RECORD_AUXTRACE (the payload is record_view::auxtrace)
    std::uint64_t size = 0, offset = 0, reference = 0;
    std::uint32_t idx = 0, tid = 0, cpu = 0;
};
std::optional<auxtrace_info> parse_auxtrace(const record_view& r) noexcept;

// PERF_RECORD_MMAP and PERF_RECORD_MMAP2: the mapping, and MMAP2's file
// identity, which is the device and inode or, with
// PERF_RECORD_MISC_MMAP_BUILD_ID, the file's build id in their place.
struct mmap_info {
    bool mmap2 = false;
    std::uint32_t pid = 0, tid = 0;
    std::uint64_t start = 0, len = 0, pgoff = 0;
    std::uint32_t maj = 0, min = 0;  // MMAP2 without a build id
    std::uint64_t ino = 0, ino_generation = 0;
    std::uint32_t prot = 0, flags = 0;   // MMAP2
    std::vector<std::uint8_t> build_id;  // MMAP2 with a build id: at most 20 bytes
    std::string filename;
};
constexpr std::size_t max_build_id_size = 20;  // perf's BUILD_ID_SIZE
// EINVAL naming the record's offset and what is wrong: another type, a
// record shorter than its fixed part, a build id size beyond 20, a file
// name without its NUL within the record.
result<mmap_info> parse_mmap(const record_view& r);

struct itrace_start_info {  // PERF_RECORD_ITRACE_START
    std::uint32_t pid = 0, tid = 0;
};
// EINVAL naming the record's offset: another type, or shorter than its
// pid and tid.
result<itrace_start_info> parse_itrace_start(const record_view& r);

// Builders of perf records, each returning the record's bytes (8-byte
// aligned, header.size set). @id: the sample_id trailer to append, built
// for @sample_type (nullopt: none).
std::vector<std::byte> make_comm(std::uint32_t pid, std::uint32_t tid, std::string_view comm,
                                 bool exec, const std::optional<sample_id>& id,
                                 std::uint64_t sample_type);
std::vector<std::byte> make_mmap2(std::uint32_t pid, std::uint32_t tid, std::uint64_t start,
                                  std::uint64_t len, std::uint64_t pgoff, std::uint32_t maj,
                                  std::uint32_t min, std::uint64_t ino, std::uint32_t prot,
                                  std::uint32_t flags, std::string_view filename, bool user,
                                  const std::optional<sample_id>& id, std::uint64_t sample_type);
std::vector<std::byte> make_task(std::uint32_t type /* PERF_RECORD_FORK or _EXIT */,
                                 const task_info& t, const std::optional<sample_id>& id,
                                 std::uint64_t sample_type);
std::vector<std::byte> make_switch_cpu_wide(bool out, bool preempt, std::uint32_t next_prev_pid,
                                            std::uint32_t next_prev_tid, const sample_id& id,
                                            std::uint64_t sample_type);
std::vector<std::byte> make_lost(std::uint64_t id, std::uint64_t lost,
                                 const std::optional<sample_id>& sid, std::uint64_t sample_type);
std::vector<std::byte> make_aux(std::uint64_t aux_offset, std::uint64_t aux_size,
                                std::uint64_t flags, const std::optional<sample_id>& id,
                                std::uint64_t sample_type);
std::vector<std::byte> make_itrace_start(std::uint32_t pid, std::uint32_t tid,
                                         const std::optional<sample_id>& id,
                                         std::uint64_t sample_type);
std::vector<std::byte> make_sample(std::uint16_t misc, const sample& s, std::uint64_t sample_type);
std::vector<std::byte> make_finished_round();

// ---------------------------------------------------------------------------
// Tracepoints: a tracepoint's format as tracefs serves it, the RAW
// payload of its samples built field by field at the format's offsets,
// and perf's tracing data (HEADER_TRACING_DATA) that lets perf read them.

// One field of a tracepoint's format ("field:TYPE NAME; offset:N;
// size:N; signed:N;").
struct tp_field {
    std::uint32_t offset = 0, size = 0;
};

// A tracepoint's format file as tracefs serves it, and what the payload
// builder needs of it.
struct tp_format {
    std::string system, name;  // "sched", "sched_switch"
    std::uint32_t id = 0;      // its ID: the attr's config, common_type
    std::uint32_t size = 0;    // the payload: where its last field ends
    std::map<std::string, tp_field, std::less<>> fields;
    std::string text;  // the file, as read: the tracing data holds it
};

// The format file @text of @system: its name, ID and fields; an error
// naming what does not read as a format.
result<tp_format> parse_tp_format(std::string system, std::string text);

// A payload of @f, zeroed, with common_type set: fields set by name;
// a field the format lacks is skipped (formats differ between kernels),
// a value is cut to the field's size (a string to its bytes, NUL-padded).
class tp_payload {
public:
    explicit tp_payload(const tp_format& f);
    tp_payload& set(std::string_view field, std::int64_t v);
    tp_payload& set_str(std::string_view field, std::string_view s);
    // @b at @offset, cut to the payload (a producer's described bytes
    // behind the common header).
    tp_payload& set_bytes(std::uint32_t offset, std::span<const std::byte> b);
    const std::vector<std::byte>& bytes() const noexcept { return b_; }

private:
    const tp_format& f_;
    std::vector<std::byte> b_;
};

// A record layout as KRING_IOC_GET_FORMATS serves it (kring's rendering
// of ftrace's event format language, docs/PRODUCER.md section 5: its ID
// the kring record type, its offsets from the record's body, or from a
// SAMPLE's RAW data), re-rendered as the tracepoint @system:<name> that
// perf and libtraceevent read: ID @id (a tracepoint ID: perf matches it
// against the attr's config and the payload's common_type, a u16), the
// 8-byte common header ahead of the fields (common_type, common_flags,
// common_preempt_count, common_pid, as the kernel's events have it),
// every field's offset shifted by 8, the print fmt as it was.
struct kring_tracepoint {
    std::uint32_t record_type = 0;  // the block's ID: the record type it describes
    std::uint32_t body_size = 0;    // the bytes described: where its last field ends
    tp_format format;               // the tracepoint; format.size = 8 + body_size
};
// An error naming the line that is not a block of kring's rendering (a
// field named common_*, a line of another shape, offsets beyond a u16
// payload, more than 64 fields).
result<kring_tracepoint> kring_format_as_tracepoint(std::string_view block, std::string system,
                                                    std::uint16_t id);

// perf's tracing data (tools/perf/util/trace-event-info.c, version 0.6):
// the header files and the event formats, no ftrace formats, kallsyms,
// printk formats or saved command lines.
// What perf's tracing data holds that a decoder needs: the event formats
// by system, and the machine's long size and byte order.
struct tracing_events {
    bool big_endian = false;
    std::uint8_t long_size = 8;
    std::uint32_t page_size = 0;
    std::vector<std::pair<std::string, std::string>> events;  // system, format text
};
// Reads perf's tracing data (tracing_data()'s layout, which perf writes
// too); EINVAL naming what runs past its end or does not read.
result<tracing_events> parse_tracing_data(std::span<const std::byte> data);

std::vector<std::byte> tracing_data(std::string_view header_page, std::string_view header_event,
                                    const std::vector<const tp_format*>& events,
                                    std::uint32_t page_size);

}  // namespace kring::perf_data
