// libkring: the record parsers and the record-header rule.
#include "kring/record.hpp"

#include <cstring>

#include <linux/perf_event.h>

#include "wire.hpp"

namespace kring {

// kring's sample_type bits are perf's, so one walk reads both.
static_assert(KRING_SAMPLE_IP == PERF_SAMPLE_IP && KRING_SAMPLE_TID == PERF_SAMPLE_TID &&
              KRING_SAMPLE_TIME == PERF_SAMPLE_TIME && KRING_SAMPLE_ID == PERF_SAMPLE_ID &&
              KRING_SAMPLE_CPU == PERF_SAMPLE_CPU && KRING_SAMPLE_PERIOD == PERF_SAMPLE_PERIOD &&
              KRING_SAMPLE_RAW == PERF_SAMPLE_RAW &&
              KRING_SAMPLE_IDENTIFIER == PERF_SAMPLE_IDENTIFIER);

namespace detail {

bool byte_cursor::string(std::string& s) noexcept {
    std::uint32_t len;
    if (left() < sizeof(len))
        return false;
    std::memcpy(&len, p, sizeof(len));
    if (left() - sizeof(len) < len)
        return false;
    const auto* c = reinterpret_cast<const char*>(p + sizeof(len));
    s.assign(c, strnlen(c, len));
    p += sizeof(len) + len;
    return true;
}

bool parse_sample_body(byte_cursor& c, std::uint64_t st, sample_body& s) noexcept {
    std::uint32_t res;
    if ((st & KRING_SAMPLE_IDENTIFIER) && !c.get(s.identifier))
        return false;
    if ((st & KRING_SAMPLE_IP) && !c.get(s.ip))
        return false;
    if ((st & KRING_SAMPLE_TID) && !(c.get(s.pid) && c.get(s.tid)))
        return false;
    if ((st & KRING_SAMPLE_TIME) && !c.get(s.time))
        return false;
    if ((st & PERF_SAMPLE_ADDR) && !c.get(s.addr))
        return false;
    if ((st & KRING_SAMPLE_ID) && !c.get(s.id))
        return false;
    if ((st & PERF_SAMPLE_STREAM_ID) && !c.get(s.stream_id))
        return false;
    if ((st & KRING_SAMPLE_CPU) && !(c.get(s.cpu) && c.get(res)))
        return false;
    if ((st & KRING_SAMPLE_PERIOD) && !c.get(s.period))
        return false;
    if (st & PERF_SAMPLE_READ) {
        s.stopped_at_read = true;
        return true;
    }
    if (st & PERF_SAMPLE_CALLCHAIN) {
        std::uint64_t nr;
        if (!c.get(nr) || c.left() / 8 < nr)
            return false;
        s.callchain = std::span<const std::byte>(c.p, nr * 8);
        c.p += nr * 8;
    }
    if (st & KRING_SAMPLE_RAW) {
        std::uint32_t n;
        if (!c.get(n))
            return false;
        // kring writes n data bytes with size KRING_RAW_PADDED(n); perf's n
        // already counts its padding (KRING_RAW_PADDED(n) == n).
        const std::uint64_t padded = KRING_RAW_PADDED(std::uint64_t(n));
        if (c.left() < padded)
            return false;
        s.raw = std::span<const std::byte>(c.p, n);
        c.p += padded;
    }
    if ((st & KRING_SAMPLE_SEQ) && !c.get(s.seq))
        return false;
    return true;
}

}  // namespace detail

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
