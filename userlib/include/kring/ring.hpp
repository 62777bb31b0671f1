// libkring: views over a mapped data ring and AUX area.
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
//
// An aux_view is the same for a channel's AUX area (docs/AUX.md).
#pragma once

#include <cstddef>
#include <cstdint>

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

// A mapped AUX area: the bytes and the control page's aux_* fields.
struct aux_view {
    kring_ctl_page* ctl = nullptr;
    const std::byte* data = nullptr;
    std::uint64_t size = 0;  // a power of two
    bool snapshot = false;   // read-only mapping: the producer overwrites
    bool valid() const noexcept { return ctl && data && size && !(size & (size - 1)); }
};

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

}  // namespace kring
