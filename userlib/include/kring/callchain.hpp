// libkring: a sample's call chain as it lies in the record.
//
// KRING_SAMPLE_CALLCHAIN (perf's PERF_SAMPLE_CALLCHAIN) is a u64 count and
// that many u64 entries, innermost first: return addresses, each part
// opened by a context marker (KRING_CONTEXT_KERNEL, KRING_CONTEXT_USER;
// perf's PERF_CONTEXT_* values). callchain_view reads them in place; the
// record's bytes need no alignment.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

namespace kring {

struct callchain_view {
    std::span<const std::byte> bytes;  // 8 * size() bytes

    std::size_t size() const noexcept { return bytes.size() / 8; }
    bool empty() const noexcept { return bytes.size() < 8; }
    std::uint64_t operator[](std::size_t i) const noexcept {
        std::uint64_t v;
        std::memcpy(&v, bytes.data() + 8 * i, 8);
        return v;
    }
    std::vector<std::uint64_t> to_vector() const {
        std::vector<std::uint64_t> v(size());
        if (!v.empty())
            std::memcpy(v.data(), bytes.data(), 8 * v.size());
        return v;
    }
    // Whether @ip is a context marker (perf's PERF_CONTEXT_MAX and above:
    // the top 4095 values), not an address.
    static bool is_marker(std::uint64_t ip) noexcept { return ip >= std::uint64_t(-4095); }
};

}  // namespace kring
