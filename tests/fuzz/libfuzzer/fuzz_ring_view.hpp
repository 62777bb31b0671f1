// libFuzzer harnesses: a data ring whose control page and data area hold
// whatever the fuzzer chose, laid out as a mapping is (a contiguous data
// area, mirrored or not), each in its own heap block so that AddressSanitizer
// reports any read beyond it.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>

#include "fuzz_input.hpp"
#include "kring/record.hpp"
#include "kring/ring.hpp"

namespace kf {

struct fuzz_ring {
    std::unique_ptr<kring_ctl_page> ctl = std::make_unique<kring_ctl_page>();
    std::unique_ptr<std::byte[]> data;
    kring::ring_view view;

    // Layout, positions and bytes from @in. Positions are often plausible
    // (tail near head) and sometimes anything.
    explicit fuzz_ring(input& in) {
        const std::uint64_t size = std::uint64_t(256) << in.below(6);  // 256 B .. 8 KiB
        const bool mirrored = in.chance(30);
        data = std::make_unique<std::byte[]>(mirrored ? 2 * size : size);
        std::memset(ctl.get(), 0, sizeof(*ctl));
        std::uint64_t tail = in.take<std::uint64_t>();
        if (in.chance(70))
            tail &= in.chance(50) ? 0xfff8 : ~std::uint64_t(7);
        std::uint64_t head = in.chance(80) ? tail + (in.take<std::uint32_t>() % (2 * size)) & ~7ull
                                           : in.take<std::uint64_t>();
        ctl->data_head = head;
        ctl->data_tail = tail;
        ctl->data_offset = 4096;
        ctl->data_size = size;
        ctl->records_written = in.take<std::uint32_t>();
        ctl->lost_no_space = in.take<std::uint16_t>();
        auto b = in.bytes(size);
        if (!b.empty())
            std::memcpy(data.get(), b.data(), b.size());
        if (mirrored)
            std::memcpy(data.get() + size, data.get(), size);
        view.ctl = ctl.get();
        view.data = data.get();
        view.data_size = size;
        view.mirrored = mirrored;
        view.overwrite = in.chance(25);
        view.kind = in.chance(80) ? kring::ring_kind::kring : kring::ring_kind::perf;
    }

    // Whether @r's bytes lie in the data area (or the reader's own copy).
    bool holds(const kring::record& r) const {
        const std::byte* end = data.get() + (view.mirrored ? 2 : 1) * view.data_size;
        return r.copied() || (r.bytes().data() >= data.get() && r.bytes().data() + r.size() <= end);
    }
};

}  // namespace kf
