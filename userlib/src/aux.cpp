// libkring: the AUX reader.
#include "kring/aux.hpp"

#include <cstring>

namespace kring {

std::size_t aux_extent::copy_to(std::byte* out) const noexcept {
    if (!first.empty())
        std::memcpy(out, first.data(), first.size());
    if (!second.empty())
        std::memcpy(out + first.size(), second.data(), second.size());
    return size();
}

aux_extent aux_reader::range(std::uint64_t from, std::uint64_t len) const noexcept {
    aux_extent e;
    e.position = from;
    if (!len)
        return e;
    const std::uint64_t off = from & (v_.size - 1);
    const std::uint64_t n1 = len < v_.size - off ? len : v_.size - off;
    e.first = {v_.data + off, std::size_t(n1)};
    if (len > n1)
        e.second = {v_.data, std::size_t(len - n1)};
    return e;
}

aux_extent aux_reader::available() noexcept {
    if (!v_.valid())
        return {};
    const std::uint64_t head = barrier::load_head(v_.ctl->aux_head);  // C, pairs with B
    const std::uint64_t tail = barrier::load_relaxed(v_.ctl->aux_tail);
    if (head - tail > v_.size) {
        corrupt_ = true;
        return {};
    }
    return range(tail, head - tail);
}

aux_extent aux_reader::extent(const aux_info& a) noexcept {
    if (!v_.valid())
        return {};
    const std::uint64_t head = barrier::load_head(v_.ctl->aux_head);  // C, pairs with B
    // The extent must end at or before the head and start no more than
    // aux_size bytes before it (else the producer has written over it).
    if (head - a.aux_offset > v_.size || a.aux_size > head - a.aux_offset) {
        corrupt_ = true;
        return {};
    }
    aux_extent e = range(a.aux_offset, a.aux_size);
    e.flags = a.flags;
    return e;
}

void aux_reader::release(std::uint64_t pos) noexcept {
    if (!v_.valid())
        return;
    const std::uint64_t tail = barrier::load_relaxed(v_.ctl->aux_tail);
    const std::uint64_t head = barrier::load_head(v_.ctl->aux_head);
    if (pos - tail > head - tail)
        return;
    barrier::store_tail(v_.ctl->aux_tail, pos);  // D, pairs with A
}

aux_extent aux_reader::snapshot() noexcept {
    if (!v_.valid())
        return {};
    const std::uint64_t head = barrier::load_head(v_.ctl->aux_head);  // C, pairs with B
    if (head >= v_.size) {
        aux_extent e = range(head - v_.size, v_.size);
        e.wrapped = head > v_.size;  // older data overwritten (exactly full: not)
        return e;
    }
    return range(0, head);
}

}  // namespace kring
