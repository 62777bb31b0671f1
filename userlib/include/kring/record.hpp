// libkring: records and their parsers.
//
// A record is a view of one record's bytes, header included, as a reader
// returns it. The parsers turn one into a typed struct, checking every
// length against the record's size: a record too short for what it
// announces gives nullopt, never a read past its end.
//
//	if (auto s = kring::parse_sample(rec, sample_type)) use(s->time, s->raw);
//	else if (auto l = kring::parse_lost(rec)) count(l->lost);
//	else if (auto a = kring::parse_aux(rec)) read(aux_reader.extent(*a));
//
// check_header() is the one validity rule for a record header, applied by
// every reader in libkring (forward, overwrite, and so the merger).
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include <linux/kring.h>

#include "kring/callchain.hpp"
#include "kring/ring.hpp"

namespace kring {

// The largest record (uapi: a __u16 size that is a multiple of 8).
inline constexpr std::size_t max_record_size = KRING_RECORD_MAX_SIZE;

// The record types a reader accepts by default: perf's kernel record types
// (1..63) and kring's own (KRING_RECORD_KRING_BASE .. + 0xffff). Anything
// else is reported as corruption.
inline bool default_known_type(std::uint32_t type) noexcept {
    return (type >= 1 && type < 64) ||
           (type >= KRING_RECORD_KRING_BASE && type < KRING_RECORD_KRING_BASE + 0x10000);
}

// What is wrong with a record header, if anything.
enum class header_fault : std::uint8_t {
    none,
    zero_size,     // size 0: never written, or a broken producer
    bad_size,      // smaller than the header or not a multiple of 8
    beyond_end,    // larger than the published bytes left
    unknown_type,  // not a type the reader accepts
};

// The validity rule for a record header @h with @available published bytes
// from its start: a size of at least the header, a multiple of 8, within
// @available, and a type @known_type accepts (nullptr: default_known_type).
inline header_fault check_header(const kring_record_header& h, std::uint64_t available,
                                 bool (*known_type)(std::uint32_t) noexcept = nullptr) noexcept {
    if (h.size < sizeof(h) || (h.size & 7)) [[unlikely]]
        return h.size == 0 ? header_fault::zero_size : header_fault::bad_size;
    if (h.size > available) [[unlikely]]
        return header_fault::beyond_end;
    if (!(known_type ? known_type(h.type) : default_known_type(h.type))) [[unlikely]]
        return header_fault::unknown_type;
    return header_fault::none;
}

// A static description of @f ("record of size 0", ...).
const char* describe(header_fault f) noexcept;

// One record: its bytes, contiguous, header included. Valid until the reader
// that returned it releases it (see reader::release()).
class record {
public:
    record() = default;
    record(std::span<const std::byte> bytes, std::uint64_t position, bool copied) noexcept
        : bytes_(bytes), pos_(position), copied_(copied) {}

    std::span<const std::byte> bytes() const noexcept { return bytes_; }
    // The body after the 8-byte header.
    std::span<const std::byte> body() const noexcept { return bytes_.subspan(8); }
    kring_record_header header() const noexcept {
        kring_record_header h;
        std::memcpy(&h, bytes_.data(), sizeof(h));
        return h;
    }
    std::uint32_t type() const noexcept { return header().type; }
    std::uint16_t misc() const noexcept { return header().misc; }
    std::size_t size() const noexcept { return bytes_.size(); }
    // Free-running ring position of the header (data_tail's units).
    std::uint64_t position() const noexcept { return pos_; }
    // The record wrapped around the end of a non-mirrored data area and was
    // copied into the reader's scratch buffer.
    bool copied() const noexcept { return copied_; }

private:
    std::span<const std::byte> bytes_;
    std::uint64_t pos_ = 0;
    bool copied_ = false;
};

// KRING_RECORD_LOST (perf's PERF_RECORD_LOST, plus kring's ranges).
struct lost_info {
    std::uint64_t id = 0;
    std::uint64_t lost = 0;  // records dropped, exact
    bool has_range = false;  // kring's extension present
    std::uint64_t first_seq = 0, last_seq = 0;
    std::uint64_t first_time = 0, last_time = 0;
};
// kring's range fields are read only from a kring ring (a perf LOST record
// may carry sample_id fields there instead).
std::optional<lost_info> parse_lost(const record& r, ring_kind kind = ring_kind::kring) noexcept;

// KRING_RECORD_AUX (perf's PERF_RECORD_AUX, plus kring's time and seq).
struct aux_info {
    std::uint64_t aux_offset = 0;  // free-running AUX position of the extent
    std::uint64_t aux_size = 0;
    std::uint64_t flags = 0;  // KRING_AUX_FLAG_*
    bool has_time = false;    // kring's extension present
    std::uint64_t time = 0, seq = 0;
    bool truncated() const noexcept { return flags & KRING_AUX_FLAG_TRUNCATED; }
    bool overwrite() const noexcept { return flags & KRING_AUX_FLAG_OVERWRITE; }
    bool partial() const noexcept { return flags & KRING_AUX_FLAG_PARTIAL; }
    bool collision() const noexcept { return flags & KRING_AUX_FLAG_COLLISION; }
};
std::optional<aux_info> parse_aux(const record& r, ring_kind kind = ring_kind::kring) noexcept;

// KRING_RECORD_SAMPLE, parsed by the sample_type the channel was configured
// with (perf's order: IDENTIFIER, IP, TID, TIME, ID, CPU, PERIOD, RAW, then
// kring's SEQ). Fields absent from sample_type stay 0; raw views the record.
struct sample_info {
    std::uint64_t identifier = 0, ip = 0, time = 0, id = 0, period = 0, seq = 0;
    std::uint32_t pid = 0, tid = 0, cpu = 0;
    callchain_view callchain;  // KRING_SAMPLE_CALLCHAIN
    std::span<const std::byte> raw;
};
// nullopt when the fields sample_type announces run past the record.
std::optional<sample_info> parse_sample(const record& r, std::uint64_t sample_type) noexcept;

// The timestamp of a record, if it carries one: SAMPLE with TIME, kring's
// AUX and ITRACE_START records. LOST and PAD records have none.
std::optional<std::uint64_t> record_time(const record& r, std::uint64_t sample_type) noexcept;

}  // namespace kring
