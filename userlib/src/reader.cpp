// libkring: the forward and overwrite readers.
#include "kring/reader.hpp"

#include <cerrno>
#include <cstdio>
#include <string>

namespace kring {

namespace {
// The largest record a __u16 header can describe.
constexpr std::size_t max_record = 0xffff;
}  // namespace

reader::reader(const ring_view& v, reader_options o)
    : v_(v), o_(o), mask_(v.data_size - 1) {
    if (!v_.mirrored)
        scratch_.reset(new std::byte[max_record]);
    // Start where the previous consumer (or the kernel's reset) left off.
    tail_ = cursor_ = head_ = barrier::load_relaxed(v_.ctl->data_tail);
}

bool reader::fail(const char* what, std::uint64_t pos, const kring_record_header& h) noexcept {
    corrupt_ = true;
    bad_.position = pos;
    bad_.head = head_;
    bad_.header = h;
    bad_.what = what;
    return false;
}

std::optional<record> reader::next() noexcept {
    if (corrupt_)
        return std::nullopt;
    for (;;) {
        if (cursor_ == head_) {
            std::uint64_t h = barrier::load_head(v_.ctl->data_head);  // C, pairs with B
            if (h == head_)
                return std::nullopt;
            if (h - tail_ > v_.data_size || (h & 7) || h - cursor_ > v_.data_size) {
                head_ = h;
                fail("data_head is not within data_size bytes ahead of data_tail", cursor_, {});
                return std::nullopt;
            }
            head_ = h;
        }
        const std::uint64_t off = cursor_ & mask_;
        kring_record_header h;
        std::memcpy(&h, v_.data + off, sizeof(h));  // 8-byte aligned: never split
        const std::uint64_t avail = head_ - cursor_;
        if (h.size == 0) {
            fail("record of size 0", cursor_, h);
            return std::nullopt;
        }
        if (h.size < sizeof(h) || (h.size & 7)) {
            fail("record size not a multiple of 8", cursor_, h);
            return std::nullopt;
        }
        if (h.size > avail) {
            fail("record extends beyond data_head", cursor_, h);
            return std::nullopt;
        }
        if (!o_.known_type(h.type)) {
            fail("unknown record type", cursor_, h);
            return std::nullopt;
        }
        const std::uint64_t pos = cursor_;
        cursor_ += h.size;
        if (h.type == KRING_RECORD_PAD && o_.skip_pad)
            continue;
        record r;
        if (off + h.size <= v_.data_size || v_.mirrored) {
            r = record({v_.data + off, h.size}, pos, false);
        } else {
            const std::size_t first = v_.data_size - off;
            std::memcpy(scratch_.get(), v_.data + off, first);
            std::memcpy(scratch_.get() + first, v_.data, h.size - first);
            r = record({scratch_.get(), h.size}, pos, true);
        }
        if (h.type == KRING_RECORD_LOST) {
            if (auto l = parse_lost(r, v_.kind)) {
                lost_seen_ += l->lost;
                lost_records_++;
            }
        }
        return r;
    }
}

void reader::release() noexcept {
    if (cursor_ == tail_)
        return;
    tail_ = cursor_;
    barrier::store_tail(v_.ctl->data_tail, tail_);  // D, pairs with A
}

void reader::release_to(std::uint64_t pos) noexcept {
    if (pos - tail_ > cursor_ - tail_ || pos == tail_)
        return;
    tail_ = pos;
    barrier::store_tail(v_.ctl->data_tail, tail_);  // D, pairs with A
}

std::uint64_t reader::pending_bytes() const noexcept {
    return barrier::load_head(v_.ctl->data_head) - tail_;
}

kring::error reader::corruption_error() const {
    char buf[192];
    std::snprintf(buf, sizeof(buf),
                  "corrupt data ring: %s at position %llu (head %llu, type %u, size %u)",
                  bad_.what, static_cast<unsigned long long>(bad_.position),
                  static_cast<unsigned long long>(bad_.head), bad_.header.type,
                  unsigned(bad_.header.size));
    return kring::error(EBADMSG, buf);
}

void reader::reset_corruption() noexcept {
    if (!corrupt_)
        return;
    corrupt_ = false;
    // Resynchronise at the head: everything published so far is dropped.
    cursor_ = head_;
    if (head_ - tail_ > v_.data_size || (head_ & 7)) {
        head_ = cursor_ = barrier::load_relaxed(v_.ctl->data_tail);
        tail_ = cursor_;
    }
    release();
}

overwrite_reader::overwrite_reader(const ring_view& v, reader_options o) : v_(v), o_(o) {
    if (!v_.mirrored)
        scratch_.reset(new std::byte[max_record]);
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
