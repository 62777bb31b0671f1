// libkring, internal: what every parser of record bytes shares (the ring
// records of records.cpp and the perf.data component's). Not installed.
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
    // perf's do_read_string(): a u32 length, then the string up to its
    // first NUL within that many bytes.
    bool string(std::string& s) noexcept;
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
bool parse_sample_body(byte_cursor& c, std::uint64_t sample_type, sample_body& s) noexcept;

}  // namespace kring::detail
