// kring's internal wire target (kring::wire, header-only, userlib/wire/):
// what every parser of record bytes shares, libkring's ring records
// (userlib/src/records.cpp) and the perf.data component's. Both link it;
// nothing else includes it, and it is not installed.
//
// byte_cursor is the one bounds-checked way to walk bytes: every read is
// checked against what is left, a short read leaves the cursor unchanged.
// parse_sample_body() is the one walk of a SAMPLE body in perf's field
// order, for kring's sample_type bits (a subset of perf's, plus
// KRING_SAMPLE_SEQ) and perf's.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include <linux/kring.h>
#include <linux/perf_event.h>

// kring's sample_type bits are perf's, so one walk reads both.
static_assert(KRING_SAMPLE_IP == PERF_SAMPLE_IP && KRING_SAMPLE_TID == PERF_SAMPLE_TID &&
              KRING_SAMPLE_TIME == PERF_SAMPLE_TIME && KRING_SAMPLE_ID == PERF_SAMPLE_ID &&
              KRING_SAMPLE_CPU == PERF_SAMPLE_CPU && KRING_SAMPLE_PERIOD == PERF_SAMPLE_PERIOD &&
              KRING_SAMPLE_RAW == PERF_SAMPLE_RAW &&
              KRING_SAMPLE_IDENTIFIER == PERF_SAMPLE_IDENTIFIER);

namespace kring::detail {

struct byte_cursor {
    const std::byte* p;
    const std::byte* end;

    std::size_t left() const noexcept { return static_cast<std::size_t>(end - p); }
    template <class T>
    bool get(T& v) noexcept {
        if (left() < sizeof(T))
            return false;
        std::memcpy(&v, p, sizeof(T));
        p += sizeof(T);
        return true;
    }
    bool skip(std::uint64_t n) noexcept {
        if (left() < n)
            return false;
        p += n;
        return true;
    }
    // A NUL-terminated string within what is left, the NUL consumed; false
    // (the cursor unchanged) when there is no NUL.
    bool cstring(std::string& s) {
        const auto* c = reinterpret_cast<const char*>(p);
        const std::size_t n = strnlen(c, left());
        if (n == left())
            return false;
        s.assign(c, n);
        p += n + 1;
        return true;
    }
    // perf's do_read_string(): a u32 length, then the string up to its
    // first NUL within that many bytes.
    bool string(std::string& s) noexcept {
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
};

// The fields of a SAMPLE body. Those sample_type does not announce stay 0.
struct sample_body {
    std::uint64_t identifier = 0, ip = 0, time = 0, addr = 0, id = 0, stream_id = 0;
    std::uint64_t period = 0, seq = 0;
    std::uint32_t pid = 0, tid = 0, cpu = 0;
    std::span<const std::byte> callchain;  // nr u64 entries
    std::span<const std::byte> raw;
    // PERF_SAMPLE_READ was set: its layout depends on read_format, so the
    // walk stopped there (nothing after PERIOD was read).
    bool stopped_at_read = false;
};

// Walks @c over a SAMPLE body (after the record header) in perf's order:
// IDENTIFIER, IP, TID, TIME, ADDR, ID, STREAM_ID, CPU, PERIOD, READ (stops),
// CALLCHAIN, RAW, then kring's SEQ. RAW is a u32 size n and n
// bytes padded to KRING_RAW_PADDED(n), which is n itself for perf's (its
// size counts the padding). False when a field runs past the end.
inline bool parse_sample_body(byte_cursor& c, std::uint64_t st, sample_body& s) noexcept {
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

}  // namespace kring::detail
