// libkring: the forward and overwrite readers.
#include "kring/reader.hpp"

#include <cerrno>
#include <cstdio>
#include <string>

namespace kring {

reader::reader(const ring_view& v, reader_options o) : v_(v), o_(o), mask_(v.data_size - 1) {
    if (!v_.valid()) {
        fail(corruption_reason::invalid_view, "invalid ring view", 0, {});
        return;
    }
    if (!v_.mirrored)
        scratch_.reset(new std::byte[max_record_size]);
    // Start where the previous consumer (or the kernel's reset) left off.
    tail_ = cursor_ = head_ = barrier::load_relaxed(v_.ctl->data_tail);
    if (v_.overwrite)
        fail(corruption_reason::overwrite_ring,
             "a forward reader cannot read an overwrite ring (use overwrite_reader)", 0, {});
    else if (tail_ & 7)  // records are 8-byte aligned: a header would straddle the end
        fail(corruption_reason::unaligned_tail, "data_tail is not 8-byte aligned", tail_, {});
}

bool reader::fail(corruption_reason why, const char* what, std::uint64_t pos,
                  const kring_record_header& h, header_fault f) noexcept {
    corrupt_ = true;
    bad_.reason = why;
    bad_.fault = f;
    bad_.position = pos;
    bad_.head = head_;
    bad_.header = h;
    bad_.what = what;
    return false;
}

bool reader::refill() noexcept {
    if (corrupt_)
        return false;
    if (cursor_ != head_)
        return true;
    const std::uint64_t h = barrier::load_head(v_.ctl->data_head);  // C, pairs with B
    if (h == head_)
        return false;
    if (h - tail_ > v_.data_size || (h & 7) || h - cursor_ > v_.data_size) {
        head_ = h;
        return fail(corruption_reason::head_out_of_range,
                    "data_head is not within data_size bytes ahead of data_tail", cursor_, {});
    }
    head_ = h;
    return true;
}

void reader::bad_record(const kring_record_header& h, header_fault f) noexcept {
    fail(corruption_reason::bad_header, describe(f), cursor_, h, f);
}

record reader::copy_wrapped(std::uint64_t off, std::uint64_t pos, std::uint32_t size) noexcept {
    // At most one record per batch wraps: the scratch copy stays valid
    // until release().
    const std::size_t first = v_.data_size - off;
    std::memcpy(scratch_.get(), v_.data + off, first);
    std::memcpy(scratch_.get() + first, v_.data, size - first);
    record r({scratch_.get(), size}, pos, true);
    if (r.type() == KRING_RECORD_LOST)
        note_lost(r);
    return r;
}

void reader::note_lost(const record& r) noexcept {
    if (auto l = parse_lost(r, v_.kind)) {
        lost_seen_ += l->lost;
        lost_records_++;
    }
}

void reader::release() noexcept {
    if (cursor_ == tail_)
        return;
    tail_ = cursor_;
    barrier::store_tail(v_.ctl->data_tail, tail_);  // D, pairs with A
}

void reader::release_to(std::uint64_t pos) noexcept {
    if (pos - tail_ > cursor_ - tail_ || pos == tail_ || (pos & 7))
        return;
    tail_ = pos;
    barrier::store_tail(v_.ctl->data_tail, tail_);  // D, pairs with A
}

std::uint64_t reader::pending_bytes() const noexcept {
    if (!v_.ctl)
        return 0;
    return barrier::load_head(v_.ctl->data_head) - tail_;
}

kring::error reader::corruption_error() const {
    char buf[192];
    std::snprintf(
        buf, sizeof(buf), "corrupt data ring: %s at position %llu (head %llu, type %u, size %u)",
        bad_.what, static_cast<unsigned long long>(bad_.position),
        static_cast<unsigned long long>(bad_.head), bad_.header.type, unsigned(bad_.header.size));
    return kring::error(EBADMSG, buf);
}

void reader::reset_corruption() noexcept {
    if (!corrupt_ || !v_.valid())
        return;
    corrupt_ = false;
    // Resynchronise at the head: everything published so far is dropped.
    cursor_ = head_;
    if (head_ - tail_ > v_.data_size || (head_ & 7) || (cursor_ & 7)) {
        // Back to data_tail, rounded down to a record boundary (another
        // process sharing the mapping may have written anything there).
        head_ = cursor_ = barrier::load_relaxed(v_.ctl->data_tail) & ~std::uint64_t(7);
        tail_ = cursor_;
    }
    release();
}

overwrite_reader::overwrite_reader(const ring_view& v, reader_options o) : v_(v), o_(o) {
    if (!v_.mirrored)
        scratch_.reset(new std::byte[max_record_size]);
}

record overwrite_reader::at(std::uint64_t pos, const kring_record_header& h) noexcept {
    const std::uint64_t off = pos & (v_.data_size - 1);
    if (off + h.size <= v_.data_size || v_.mirrored)
        return record({v_.data + off, h.size}, pos, false);
    const std::size_t first = v_.data_size - off;
    std::memcpy(scratch_.get(), v_.data + off, first);
    std::memcpy(scratch_.get() + first, v_.data, h.size - first);
    return record({scratch_.get(), h.size}, pos, true);
}

}  // namespace kring
