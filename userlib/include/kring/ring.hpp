// libkring: views over a mapped data ring and the records in it.
//
// A ring_view describes memory libkring does not own: the control page
// (kring's struct kring_ctl_page, or perf's struct perf_event_mmap_page,
// whose consumer fields sit at the same offsets) and the data area. A
// kring::channel or kring::perf_ring owns the mapping and hands out views;
// tests may build one over memory of their own.
//
//	ctl ──► +------------------+ offset 0 of the mapping
//	        | control page     |  data_head (1024), data_tail (1032) ...
//	data ─► +------------------+ ctl->data_offset
//	        | data area        |  data_size = 2^n pages
//	        +------------------+
//	        | data area again  |  only if mirrored (KRING_ATTR_F_MIRROR)
//	        +------------------+
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>

#include <linux/kring.h>

namespace kring {

enum class ring_kind : std::uint8_t {
    kring,  // a kring channel: the control page carries kring's live figures
    perf,   // a perf_event_open buffer: only perf's fields are meaningful
};

struct ring_view {
    kring_ctl_page* ctl = nullptr;
    const std::byte* data = nullptr;  // start of the data area
    std::uint64_t data_size = 0;      // a power of two
    bool mirrored = false;            // data area mapped twice in a row
    bool overwrite = false;           // backward, overwritable writing
    ring_kind kind = ring_kind::kring;

    bool valid() const noexcept {
        return ctl && data && data_size >= 8 && !(data_size & (data_size - 1));
    }
};

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
    std::uint64_t lost = 0;         // records dropped, exact
    bool has_range = false;         // kring's extension present
    std::uint64_t first_seq = 0, last_seq = 0;
    std::uint64_t first_time = 0, last_time = 0;
};
// kring's range fields are read only from a kring ring (a perf LOST record
// may carry sample_id fields there instead).
std::optional<lost_info> parse_lost(const record& r, ring_kind kind = ring_kind::kring) noexcept;

// KRING_RECORD_AUX (perf's PERF_RECORD_AUX, plus kring's time and seq).
struct aux_info {
    std::uint64_t aux_offset = 0;   // free-running AUX position of the extent
    std::uint64_t aux_size = 0;
    std::uint64_t flags = 0;        // KRING_AUX_FLAG_*
    bool has_time = false;          // kring's extension present
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
    std::span<const std::byte> raw;
};
// nullopt when the fields sample_type announces run past the record.
std::optional<sample_info> parse_sample(const record& r, std::uint64_t sample_type) noexcept;

// The timestamp of a record, if it carries one: SAMPLE with TIME, kring's
// AUX and ITRACE_START records. LOST and PAD records have none.
std::optional<std::uint64_t> record_time(const record& r, std::uint64_t sample_type) noexcept;

// kring's loss-by-cause counters from the control page (all zero for perf
// buffers, which only report losses through LOST records).
struct loss_counters {
    std::uint64_t records_written = 0;
    std::uint64_t records_discarded = 0;
    std::uint64_t lost_no_space = 0;
    std::uint64_t lost_too_big = 0;
    std::uint64_t lost_paused = 0;
    std::uint64_t lost_overwritten = 0;
    std::uint64_t lost() const noexcept {
        return lost_no_space + lost_too_big + lost_paused + lost_overwritten;
    }
};
loss_counters read_loss_counters(const ring_view& v) noexcept;

// The record types a reader accepts by default: perf's kernel record types
// (1..63) and kring's own (KRING_RECORD_KRING_BASE .. + 0xffff). Anything
// else is reported as corruption.
inline bool default_known_type(std::uint32_t type) noexcept {
    return (type >= 1 && type < 64) ||
           (type >= KRING_RECORD_KRING_BASE && type < KRING_RECORD_KRING_BASE + 0x10000);
}

}  // namespace kring
