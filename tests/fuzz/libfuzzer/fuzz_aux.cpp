// libFuzzer: libkring's AUX reader with corrupt aux_* control fields and
// AUX records whose extents point anywhere. Extents must lie within the
// area; a bad one is reported, never read.
#include <memory>
#include <vector>

#include "fuzz_input.hpp"
#include "kring/aux.hpp"
#include "kring/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kf::input in(data, size);
    auto ctl = std::make_unique<kring_ctl_page>();
    std::memset(ctl.get(), 0, sizeof(*ctl));
    std::uint64_t asize = std::uint64_t(64) << in.below(8);
    if (in.chance(5))
        asize = in.take<std::uint16_t>();  // not a power of two, or 0
    auto area = std::make_unique<std::byte[]>(asize ? asize : 1);
    std::uint64_t tail = in.take<std::uint64_t>();
    ctl->aux_tail = tail;
    ctl->aux_head = in.chance(80) ? tail + in.take<std::uint32_t>() % (2 * asize + 1)
                                  : in.take<std::uint64_t>();
    ctl->aux_size = asize;
    ctl->aux_offset = in.take<std::uint64_t>();
    kring::aux_view v;
    v.ctl = ctl.get();
    v.data = area.get();
    v.size = asize;
    v.snapshot = in.chance(30);
    kring::aux_reader ax(v);
    const std::byte* end = area.get() + asize;
    auto inside = [&](const kring::aux_extent& e) {
        for (auto s : {e.first, e.second})
            if (!s.empty())
                KF_CHECK(s.data() >= area.get() && s.data() + s.size() <= end);
        KF_CHECK(e.size() <= asize);
        std::vector<std::byte> out(e.size());
        KF_CHECK(e.copy_to(out.data()) == e.size());
    };
    for (int round = 0; round < 4 && in.left(); round++) {
        switch (in.below(4)) {
            case 0:
                inside(ax.available());
                break;
            case 1:
                inside(ax.snapshot());
                break;
            case 2:
                ax.release(in.take<std::uint64_t>());
                break;
            default: {
                // An AUX record: header plus whatever body bytes follow.
                std::vector<std::byte> rec(8 + 8 * in.below(8));
                auto b = in.bytes(rec.size());
                if (!b.empty())
                    std::memcpy(rec.data(), b.data(), b.size());
                kring_record_header h{KRING_RECORD_AUX, 0, static_cast<std::uint16_t>(rec.size())};
                std::memcpy(rec.data(), &h, sizeof(h));
                if (auto a = kring::parse_aux(kring::record({rec.data(), rec.size()}, 0, false)))
                    inside(ax.extent(*a));
            }
        }
        if (in.chance(30))
            ctl->aux_head += in.take<std::uint16_t>();
    }
    return 0;
}
