// libkring: reading a data ring.
//
// kring::reader consumes a forward (non-overwrite) ring, kring's or perf's:
//
//	kring::reader rd(channel.ring());
//	while (auto rec = rd.next()) {        // zero-copy view, valid until release()
//	        if (rec->type() == KRING_RECORD_LOST) ...
//	}
//	if (rd.corrupted()) ... rd.corruption_error().message()
//	rd.release();                          // ONE store-release of data_tail
//
// or, the same in one call, rd.drain([](const kring::record& r) { ... }).
//
// next() loads data_head with acquire (C) only when it has consumed
// everything below the head it knew; release() stores data_tail with release
// (D) once for all the records returned since the previous release. A
// record that wraps around the end of the data area is returned in place
// when the area is mirrored, else copied once into the reader's scratch
// buffer (allocated when the reader is made); at most one record per batch
// wraps, so every view stays valid until release(). PAD records are
// skipped; LOST records are returned like any other (and counted, see
// lost_seen()).
//
// Malformed data (a header check_header() refuses: a size of 0, not a
// multiple of 8, or beyond the published head; an unknown type; or a head
// more than data_size ahead of the tail) stops the reader: next() returns nothing and corrupted()
// is true until reset_corruption(). It never reads outside the mapping and never loops. A reader
// made over an invalid view (ring_view::valid() false) is corrupted from the start: every call
// returns nothing or an error.
//
// Nothing here allocates after construction, takes a lock or makes a
// system call. One reader per ring, used by one thread at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>

#include "kring/barrier.hpp"
#include "kring/record.hpp"
#include "kring/result.hpp"
#include "kring/ring.hpp"

namespace kring {

struct reader_options {
    // Which record types are data (anything else is corruption); nullptr:
    // default_known_type().
    bool (*known_type)(std::uint32_t type) noexcept = nullptr;
    // Skip KRING_RECORD_PAD records (cancelled reservations).
    bool skip_pad = true;
};

// Why a reader stopped.
enum class corruption_reason : std::uint8_t {
    none,
    invalid_view,       // the ring_view is not valid(): nothing to read
    overwrite_ring,     // a forward reader over an overwrite (backward) ring
    unaligned_tail,     // data_tail is not 8-byte aligned
    head_out_of_range,  // data_head is not within data_size ahead of data_tail
    bad_header,         // a record header breaks check_header(): see fault
};

struct corruption_info {
    corruption_reason reason = corruption_reason::none;
    header_fault fault = header_fault::none;  // for corruption_reason::bad_header
    std::uint64_t position = 0;               // ring position of the bad header
    std::uint64_t head = 0;                   // data_head at the time
    kring_record_header header{};
    const char* what = "";  // static description of reason (and fault)
};

class reader {
public:
    explicit reader(const ring_view& v, reader_options o = {});
    reader(reader&&) noexcept = default;
    reader& operator=(reader&&) noexcept = default;

    // The next record, or nullopt when none is published (or the reader is
    // corrupted: check corrupted()).
    std::optional<record> next() noexcept;

    // Release every record returned so far: one store-release of data_tail
    // (D). Views returned before it become invalid.
    void release() noexcept;
    // Release only the records before ring position @pos (the position of
    // a record returned by next() that the caller still holds, or the
    // cursor); later ones stay valid. Ignored outside [tail, cursor].
    void release_to(std::uint64_t pos) noexcept;
    // Position of the next record next() would read.
    std::uint64_t cursor() const noexcept { return cursor_; }

    // Read every published record, call f(const record&) for each, release
    // once. Returns the number of records, or EBADMSG on corruption (the
    // records before the bad one were handed to f and released).
    template <class F>
    result<std::size_t> drain(F&& f, std::size_t max = std::numeric_limits<std::size_t>::max());

    bool corrupted() const noexcept { return corrupt_; }
    const corruption_info& corruption() const noexcept { return bad_; }
    kring::error corruption_error() const;
    // Skip the rest of the published data and carry on (after reporting).
    void reset_corruption() noexcept;

    // Sum of the counts of the LOST records this reader returned.
    std::uint64_t lost_seen() const noexcept { return lost_seen_; }
    std::uint64_t lost_records_seen() const noexcept { return lost_records_; }
    // The control page's loss-by-cause counters (kring rings).
    loss_counters losses() const noexcept { return read_loss_counters(v_); }

    // Bytes published and not yet released (loads data_head).
    std::uint64_t pending_bytes() const noexcept;
    // Whether data_head has moved beyond what this reader consumed.
    bool has_data() const noexcept {
        return v_.ctl && barrier::load_head(v_.ctl->data_head) != cursor_;
    }
    std::uint64_t tail() const noexcept { return tail_; }
    const ring_view& view() const noexcept { return v_; }

private:
    bool fail(corruption_reason why, const char* what, std::uint64_t pos,
              const kring_record_header& h, header_fault f = header_fault::none) noexcept;
    // Slow paths of next(), out of line.
    bool refill() noexcept;
    void bad_record(const kring_record_header& h, header_fault f) noexcept;
    record copy_wrapped(std::uint64_t off, std::uint64_t pos, std::uint32_t size) noexcept;
    void note_lost(const record& r) noexcept;

    ring_view v_;
    reader_options o_;
    std::unique_ptr<std::byte[]> scratch_;
    std::uint64_t mask_ = 0;
    std::uint64_t tail_ = 0;    // last released position
    std::uint64_t cursor_ = 0;  // next record to read
    std::uint64_t head_ = 0;    // last head loaded
    std::uint64_t lost_seen_ = 0, lost_records_ = 0;
    bool corrupt_ = false;
    corruption_info bad_;
};

inline std::optional<record> reader::next() noexcept {
    for (;;) {
        if (cursor_ == head_ || corrupt_) [[unlikely]] {
            if (!refill())
                return std::nullopt;
        }
        const std::uint64_t off = cursor_ & mask_;
        kring_record_header h;
        std::memcpy(&h, v_.data + off, sizeof(h));  // 8-byte aligned: never split
        if (const header_fault f = check_header(h, head_ - cursor_, o_.known_type);
            f != header_fault::none) [[unlikely]] {
            bad_record(h, f);
            return std::nullopt;
        }
        const std::uint64_t pos = cursor_;
        cursor_ += h.size;
        if (h.type == KRING_RECORD_PAD && o_.skip_pad)
            continue;
        if (off + h.size > v_.data_size && !v_.mirrored) [[unlikely]]
            return copy_wrapped(off, pos, h.size);
        record r({v_.data + off, h.size}, pos, false);
        if (h.type == KRING_RECORD_LOST) [[unlikely]]
            note_lost(r);
        return r;
    }
}

template <class F>
result<std::size_t> reader::drain(F&& f, std::size_t max) {
    // next()'s loop with the positions in locals: the callback cannot make
    // the compiler reload them from *this for every record.
    std::size_t n = 0;
    while (n < max && refill()) {
        std::uint64_t c = cursor_;
        const std::uint64_t h = head_;
        header_fault bad = header_fault::none;
        while (c != h && n < max) {
            const std::uint64_t off = c & mask_;
            kring_record_header hd;
            std::memcpy(&hd, v_.data + off, sizeof(hd));
            bad = check_header(hd, h - c, o_.known_type);
            if (bad != header_fault::none) [[unlikely]]
                break;
            const std::uint64_t pos = c;
            c += hd.size;
            if (hd.type == KRING_RECORD_PAD && o_.skip_pad)
                continue;
            if (off + hd.size > v_.data_size && !v_.mirrored) [[unlikely]] {
                f(static_cast<const record&>(copy_wrapped(off, pos, hd.size)));
            } else {
                const record r({v_.data + off, hd.size}, pos, false);
                if (hd.type == KRING_RECORD_LOST) [[unlikely]]
                    note_lost(r);
                f(r);
            }
            n++;
        }
        cursor_ = c;
        if (bad != header_fault::none) {
            kring_record_header hd;
            std::memcpy(&hd, v_.data + (c & mask_), sizeof(hd));
            bad_record(hd, bad);
            break;
        }
    }
    release();
    if (corrupt_)
        return corruption_error();
    return n;
}

// Reads a backward (overwrite) ring as perf's tool does: with output paused
// (channel::pause_output(), perf_ring::pause_output(): they return once the
// writers in flight are done, see docs/LIBKRING.md), walk from data_head -
// the newest record - to older ones until a never-written header, the end of
// the data area or a record whose end newer records overwrote.
// read() hands every record, newest first, to f; a view is valid during the
// call only. Returns the number of records or EBADMSG (a malformed header
// inside the window).
class overwrite_reader {
public:
    explicit overwrite_reader(const ring_view& v, reader_options o = {});

    template <class F>
    result<std::size_t> read(F&& f);

private:
    // Record at @pos with header @h, contiguous.
    record at(std::uint64_t pos, const kring_record_header& h) noexcept;

    ring_view v_;
    reader_options o_;
    std::unique_ptr<std::byte[]> scratch_;
};

template <class F>
result<std::size_t> overwrite_reader::read(F&& f) {
    if (!v_.valid())
        return kring::error(EINVAL, "overwrite ring: invalid ring view");
    const std::uint64_t head = barrier::load_head(v_.ctl->data_head);  // C
    const std::uint64_t size = v_.data_size;
    std::uint64_t pos = head;
    std::size_t n = 0;
    if (head & 7)
        return kring::error(EBADMSG, "overwrite ring: data_head not 8-byte aligned");
    while (pos - head < size) {
        kring_record_header h;
        std::memcpy(&h, v_.data + (pos & (size - 1)), sizeof(h));
        if (h.size == 0)
            break;  // never written: the ring has not wrapped yet
        if (pos - head + h.size > size)
            break;  // its end was overwritten by newer records
        if (check_header(h, size - (pos - head), o_.known_type) != header_fault::none)
            return kring::error(
                EBADMSG, "overwrite ring: malformed record at position " + std::to_string(pos));
        if (!(o_.skip_pad && h.type == KRING_RECORD_PAD)) {
            f(static_cast<const record&>(at(pos, h)));
            n++;
        }
        pos += h.size;
    }
    return n;
}

}  // namespace kring
