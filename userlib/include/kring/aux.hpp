// libkring: reading the AUX area (perf ring-buffer documentation, section 3).
//
// Normal mode (read-write mapping): the producer writes AUX bytes at
// aux_head and never beyond aux_tail + aux_size; the consumer reads
// [aux_tail, aux_head) and stores aux_tail with release (D). The AUX
// records in the data ring say which extents were completed, with flags
// (TRUNCATED, PARTIAL, COLLISION, ...):
//
//	kring::aux_reader ax(ch->aux());
//	while (auto rec = rd.next())
//	        if (auto a = kring::parse_aux(*rec)) {
//	                auto ext = ax.extent(*a);      // up to two spans, zero-copy
//	                ...
//	                ax.release(a->aux_offset + a->aux_size);
//	        }
//
// Snapshot mode (read-only mapping): the producer overwrites; take the
// newest bytes with snapshot() while the producer is stopped
// (channel::with_aux_snapshot(), aux_pause() or disable): if aux_head >=
// aux_size all aux_size bytes ending at aux_head are valid (and older data
// was overwritten when aux_head > aux_size: wrapped), else [0, aux_head).
//
//	ch->with_aux_snapshot([&]() -> kring::result<void> {
//	        auto w = ax.snapshot();          // newest bytes, w.wrapped
//	        ...copy or decode w...
//	        return {};
//	});
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "kring/barrier.hpp"
#include "kring/record.hpp"
#include "kring/ring.hpp"

namespace kring {

// Bytes of the AUX area, at most two contiguous pieces (the second when
// the range wraps around the end of the area), oldest first.
struct aux_extent {
    std::span<const std::byte> first, second;
    std::uint64_t position = 0;  // free-running AUX position of first[0]
    std::uint64_t flags = 0;     // KRING_AUX_FLAG_* of the AUX record, if any
    bool wrapped = false;        // snapshot: aux_head > aux_size, older data was overwritten
    std::size_t size() const noexcept { return first.size() + second.size(); }
    // Copy the extent into @out (at least size() bytes); returns size().
    std::size_t copy_to(std::byte* out) const noexcept;
};

class aux_reader {
public:
    // Over an invalid view (aux_view::valid() false) every call gives an
    // empty extent and corrupted() is true.
    explicit aux_reader(const aux_view& v) noexcept : v_(v), corrupt_(!v.valid()) {}

    // Normal mode: the unread bytes [aux_tail, aux_head). Load-acquire of
    // aux_head (C). An inconsistent head (more than aux_size ahead of the
    // tail) gives an empty extent and corrupted() == true.
    aux_extent available() noexcept;
    // The bytes of an AUX record's extent, with its flags; empty (and
    // corrupted()) when the extent does not lie within the area's last
    // aux_size bytes before aux_head.
    aux_extent extent(const aux_info& a) noexcept;
    // Normal mode: free every AUX byte below @pos: store-release of
    // aux_tail (D). Ignored if @pos goes backwards or beyond aux_head.
    void release(std::uint64_t pos) noexcept;
    // Snapshot mode: the newest bytes ending at aux_head.
    aux_extent snapshot() noexcept;

    std::uint64_t head() const noexcept {
        return v_.valid() ? barrier::load_head(v_.ctl->aux_head) : 0;
    }
    std::uint64_t tail() const noexcept {
        return v_.valid() ? barrier::load_relaxed(v_.ctl->aux_tail) : 0;
    }
    bool corrupted() const noexcept { return corrupt_; }
    const aux_view& view() const noexcept { return v_; }

private:
    aux_extent range(std::uint64_t from, std::uint64_t len) const noexcept;

    aux_view v_;
    bool corrupt_ = false;
};

}  // namespace kring
