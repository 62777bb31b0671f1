// libkring's perf.data component, internal: the encodings its writer,
// reader and record codecs share. Not installed.
//
// The encodings are perf's own (tools/perf/util/header.c, session.c and
// event.h of Linux 6.12; read by Debian's perf 6.1):
//
// - The header is written at create() with the attrs and their ids right
//   behind it and data size 0, as perf record does; finish() rewrites it
//   with the data size and the feature bitmap and appends the feature
//   sections behind the data. A header with data size 0 and no feature
//   bits is a writer that never finished: the reader scans its data section
//   up to the end of the file and reports it truncated.
// - Strings in feature sections are do_write_string()'s: a u32 length (the
//   string with its NUL, padded with NULs to 64 bytes) and the bytes.
// - HEADER_CPU_TOPOLOGY: core siblings, thread siblings, per CPU core_id and
//   socket_id, then the dies (their CPU lists and per CPU die_id). The per-CPU
//   part is written only when there is one entry per available CPU
//   (HEADER_NRCPUS), which is how many perf reads.
// - HEADER_CLOCKID holds one u64; perf reads it as the clock's resolution in
//   ns ("clockid frequency").
// - The kring section (bit 250, above every bit perf knows: perf counts it
//   when it reads the section table and never looks at it):
//	u32 version, u32 clockid, u32 nr_rings, u32 ring_size,
//	per ring: ring_size bytes (cpu, pid, source, pad, then 14 u64 in the
//	          order of kring_ring_info), u32 nr_ranges, u32 range_size,
//	          nr_ranges x range_size bytes (5 u64 each)
//   A reader takes the fields it knows from entries at least as large as
//   version 1's and skips the rest; every count is checked against the
//   section's length.
//
// AUX data. What Debian's perf 6.1 does with it (session.c, auxtrace.c;
// tried on files of this writer):
// - A PERF_RECORD_AUXTRACE record in the data section without a decoder
//   set up: perf_event__process_auxtrace() returns -EINVAL, and perf script
//   and perf report stop: "failed to process type: 71 [Invalid argument]",
//   "Error: failed to process sample", exit status non-zero. Only
//   --no-itrace (itrace_synth_opts.dont_decode) makes them skip it.
// - A PERF_RECORD_AUXTRACE_INFO sets a decoder up by its type; a type perf
//   has no decoder of (kring's tracer, PERF_AUXTRACE_UNKNOWN) is -EINVAL the
//   same way ("failed to process type: 70"). Naming a decoder perf has
//   (intel_bts, s390_cpumsf, ...) would make it decode kring's bytes as its
//   own.
// - HEADER_AUXTRACE is only an index of AUXTRACE records for a decoder; the
//   records are still read from the data section.
// - PERF_RECORD_AUX and PERF_RECORD_ITRACE_START are read and counted
//   without a decoder. An AUX record with PERF_AUX_FLAG_TRUNCATED gives
//   "Warning: AUX data lost N times out of M!", PERF_AUX_FLAG_PARTIAL
//   "AUX data had gaps in it", PERF_AUX_FLAG_COLLISION "AUX data detected
//   collision"; PERF_AUX_FLAG_OVERWRITE (snapshots) is silent.
// So a file keeps perf's records and places but moves the AUXTRACE records:
// PERF_RECORD_AUX and ITRACE_START in the data, and each AUXTRACE record
// (header, payload padded to 8 bytes, exactly as perf record writes it)
// in the feat_kring_auxtrace section, a bit perf does not know and skips,
// with the data position it was written at:
//	u32 version (1), u32 0,
//	per record: u64 data position, the 48-byte record, its payload
// write_auxtrace() keeps them in an unnamed temporary file (next to the
// output) until finish() copies them behind the other sections;
// file::for_each() hands each out after the data records written before
// it. A file with AUXTRACE records in its data section (perf record's)
// reads as well.
#pragma once

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstring>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "kring/perf_data.hpp"
#include "wire.hpp"

namespace kring::perf_data::detail {

using cursor = kring::detail::byte_cursor;

constexpr std::uint64_t k_magic = 0x32454c4946524550ULL;  // "PERFILE2"
constexpr std::uint64_t k_magic_swapped = 0x50455246494c4532ULL;
constexpr std::uint64_t k_header_size = 104;
constexpr std::uint64_t k_header_size_v1 = 72;         // without the feature bitmap
constexpr std::uint64_t k_pipe_header_size = 16;       // perf_pipe_file_header: magic, size
constexpr std::uint32_t k_record_header_feature = 80;  // PERF_RECORD_HEADER_FEATURE
constexpr std::size_t k_attr_ver0 = 64;                // PERF_ATTR_SIZE_VER0
constexpr std::size_t k_attr_size = sizeof(perf_event_attr);
constexpr std::size_t k_name_align = 64;  // NAME_ALIGN
constexpr std::size_t k_buffer = 256 * 1024;
constexpr unsigned k_feat_bits = 256;
constexpr std::size_t k_auxtrace_size = 48;  // perf_record_auxtrace
// The kring section's fixed sizes in version 1.
constexpr std::uint32_t k_ring_size_v1 = 16 + 14 * 8;
constexpr std::uint32_t k_range_size_v1 = 5 * 8;

struct file_section {
    std::uint64_t offset = 0, size = 0;
};

struct file_header {
    std::uint64_t magic = 0, size = 0, attr_size = 0;
    file_section attrs, data, event_types;
    std::uint64_t features[4] = {};
};
static_assert(sizeof(file_header) == k_header_size);

constexpr std::uint64_t align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

template <class T>
inline void put(std::vector<std::byte>& out, const T& v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
}

inline void put_bytes(std::vector<std::byte>& out, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
}

inline void pad_to(std::vector<std::byte>& out, std::size_t start, std::size_t align) {
    while ((out.size() - start) % align)
        out.push_back(std::byte{0});
}

// do_write_string(): u32 length (NUL included, padded to NAME_ALIGN), bytes.
inline void put_string(std::vector<std::byte>& out, std::string_view s) {
    const std::uint32_t len =
        static_cast<std::uint32_t>((s.size() + 1 + k_name_align - 1) / k_name_align * k_name_align);
    put(out, len);
    put_bytes(out, s.data(), s.size());
    out.insert(out.end(), len - s.size(), std::byte{0});
}

// The sample_id trailer of sample_id_all: TID, TIME, ID, STREAM_ID, CPU,
// IDENTIFIER, in that order (perf_event__synthesize_id_sample()).
inline void put_sample_id(std::vector<std::byte>& out, const sample_id& id, std::uint64_t st) {
    if (st & PERF_SAMPLE_TID) {
        put(out, id.pid);
        put(out, id.tid);
    }
    if (st & PERF_SAMPLE_TIME)
        put(out, id.time);
    if (st & PERF_SAMPLE_ID)
        put(out, id.id);
    if (st & PERF_SAMPLE_STREAM_ID)
        put(out, id.id);
    if (st & PERF_SAMPLE_CPU) {
        put(out, id.cpu);
        put(out, std::uint32_t{0});
    }
    if (st & PERF_SAMPLE_IDENTIFIER)
        put(out, id.id);
}

inline std::size_t sample_id_size(std::uint64_t st) {
    std::size_t n = 0;
    for (auto bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                     PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER})
        if (st & bit)
            n += 8;
    return n;
}

// A record: header, then what @body appended; size set at the end.
class builder {
public:
    builder(std::uint32_t type, std::uint16_t misc) {
        out_.reserve(64);
        perf_event_header h{type, misc, 0};
        put(out_, h);
    }
    std::vector<std::byte>& out() { return out_; }
    std::vector<std::byte> done() {
        pad_to(out_, 0, 8);
        const auto size = static_cast<std::uint16_t>(
            std::min<std::size_t>(out_.size(), std::numeric_limits<std::uint16_t>::max()));
        std::memcpy(out_.data() + offsetof(perf_event_header, size), &size, sizeof(size));
        return std::move(out_);
    }
    void trailer(const std::optional<sample_id>& id, std::uint64_t st) {
        if (id)
            put_sample_id(out_, *id, st);
    }

private:
    std::vector<std::byte> out_;
};

// A NUL-terminated string padded to 8 bytes, at least one NUL.
inline void put_cstring(std::vector<std::byte>& out, std::string_view s) {
    const std::size_t start = out.size();
    put_bytes(out, s.data(), s.size());
    out.push_back(std::byte{0});
    pad_to(out, start, 8);
}

inline perf_event_header header_of(std::span<const std::byte> b) noexcept {
    perf_event_header h{};
    if (b.size() >= sizeof(h))
        std::memcpy(&h, b.data(), sizeof(h));
    return h;
}

inline error einval(std::string what) { return error(EINVAL, std::move(what)); }

constexpr std::uint32_t k_auxtrace_section_version = 1;

// The encoded body of each feature that @f sets, by bit (features.cpp).
std::map<unsigned, std::vector<std::byte>> encode_features(const features& f,
                                                           const std::vector<event_attr>& attrs);

// Decodes the feature @bit's section @b into @f; false for a malformed one
// (what was decoded of it may stay). (features.cpp)
bool decode_feature(unsigned bit, std::span<const std::byte> b, features& f,
                    std::vector<event_attr>* desc);

}  // namespace kring::perf_data::detail
