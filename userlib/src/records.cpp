// libkring: the record parsers and the record-header rule.
#include "kring/record.hpp"

#include <cstring>

#include <linux/perf_event.h>

#include "wire.hpp"

namespace kring {

std::optional<lost_info> parse_lost(const record& r, ring_kind kind) noexcept {
    if (r.type() != KRING_RECORD_LOST || r.size() < 24)
        return std::nullopt;
    lost_info l;
    const std::byte* b = r.bytes().data();
    std::memcpy(&l.id, b + 8, 8);
    std::memcpy(&l.lost, b + 16, 8);
    if (kind == ring_kind::kring && r.size() >= sizeof(kring_lost_record)) {
        kring_lost_record k;
        std::memcpy(&k, b, sizeof(k));
        l.has_range = true;
        l.first_seq = k.first_seq;
        l.last_seq = k.last_seq;
        l.first_time = k.first_time;
        l.last_time = k.last_time;
    }
    return l;
}

std::optional<aux_info> parse_aux(const record& r, ring_kind kind) noexcept {
    if (r.type() != KRING_RECORD_AUX || r.size() < 32)
        return std::nullopt;
    aux_info a;
    const std::byte* b = r.bytes().data();
    std::memcpy(&a.aux_offset, b + 8, 8);
    std::memcpy(&a.aux_size, b + 16, 8);
    std::memcpy(&a.flags, b + 24, 8);
    if (kind == ring_kind::kring && r.size() >= sizeof(kring_aux_record)) {
        kring_aux_record k;
        std::memcpy(&k, b, sizeof(k));
        a.has_time = true;
        a.time = k.time;
        a.seq = k.seq;
    }
    return a;
}

std::optional<sample_info> parse_sample(const record& r, std::uint64_t st) noexcept {
    if (r.type() != KRING_RECORD_SAMPLE)
        return std::nullopt;
    detail::byte_cursor c{r.bytes().data() + 8, r.bytes().data() + r.size()};
    detail::sample_body b;
    if (!detail::parse_sample_body(c, st, b))
        return std::nullopt;
    sample_info s;
    s.identifier = b.identifier;
    s.ip = b.ip;
    s.pid = b.pid;
    s.tid = b.tid;
    s.time = b.time;
    s.id = b.id;
    s.cpu = b.cpu;
    s.period = b.period;
    s.callchain = {b.callchain};
    s.raw = b.raw;
    s.seq = b.seq;
    return s;
}

std::optional<std::uint64_t> record_time(const record& r, std::uint64_t st) noexcept {
    switch (r.type()) {
        case KRING_RECORD_SAMPLE: {
            if (!(st & KRING_SAMPLE_TIME))
                return std::nullopt;
            // TIME follows IDENTIFIER, IP and TID: no need to parse the rest.
            std::size_t at = 8 + 8 * (!!(st & KRING_SAMPLE_IDENTIFIER) + !!(st & KRING_SAMPLE_IP) +
                                      !!(st & KRING_SAMPLE_TID));
            if (r.size() < at + 8)
                return std::nullopt;
            std::uint64_t t;
            std::memcpy(&t, r.bytes().data() + at, 8);
            return t;
        }
        case KRING_RECORD_AUX:
            if (auto a = parse_aux(r); a && a->has_time)
                return a->time;
            return std::nullopt;
        case KRING_RECORD_ITRACE_START:
            if (r.size() >= sizeof(kring_itrace_start_record)) {
                kring_itrace_start_record k;
                std::memcpy(&k, r.bytes().data(), sizeof(k));
                return k.time;
            }
            return std::nullopt;
        default:
            return std::nullopt;
    }
}

const char* describe(header_fault f) noexcept {
    switch (f) {
        case header_fault::none:
            return "valid record header";
        case header_fault::zero_size:
            return "record of size 0";
        case header_fault::bad_size:
            return "record size not a multiple of 8";
        case header_fault::beyond_end:
            return "record extends beyond data_head";
        case header_fault::unknown_type:
            return "unknown record type";
    }
    return "invalid record header";
}

}  // namespace kring
