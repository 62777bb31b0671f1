// libFuzzer: libkring's time-ordered merger over several corrupt rings
// (garbage records, times, floors and positions). It must report
// corruption as a value and hand out only records of its sources.
#include <memory>
#include <vector>

#include "fuzz_ring_view.hpp"
#include "kring/merger.hpp"

namespace {

std::uint64_t fake_now(void* ctx) { return *static_cast<std::uint64_t*>(ctx); }

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kf::input in(data, size);
    const unsigned n = 1 + in.below(3);
    std::uint64_t now = in.take<std::uint64_t>();
    kring::merge_options mo;
    mo.window_ns = in.take<std::uint32_t>();
    mo.now = fake_now;
    mo.now_ctx = &now;
    std::vector<std::unique_ptr<kf::fuzz_ring>> rings;
    std::vector<std::unique_ptr<kring::reader>> readers;
    kring::merger m(mo);
    for (unsigned i = 0; i < n; i++) {
        rings.push_back(std::make_unique<kf::fuzz_ring>(in));
        rings.back()->view.overwrite = false;
        rings.back()->ctl->timestamp_floor = in.take<std::uint64_t>();
        readers.push_back(std::make_unique<kring::reader>(rings.back()->view));
        std::uint64_t type = KRING_SAMPLE_TIME;
        if (in.chance(30))
            type = in.take<std::uint64_t>();
        KF_CHECK(m.add(*readers.back(), type) == i);
    }
    auto emit = [&](std::size_t src, const kring::record& r, std::uint64_t) {
        KF_CHECK(src < n);
        KF_CHECK(rings[src]->holds(r));
    };
    for (int round = 0; round < 4; round++) {
        switch (in.below(4)) {
            case 0:
                (void)m.flush(emit);
                break;
            case 1:
                m.finish(in.below(n));
                [[fallthrough]];
            default:
                (void)m.drain(emit);
                break;
        }
        now += in.take<std::uint32_t>();
        for (unsigned i = 0; i < n; i++)
            if (readers[i]->corrupted())
                readers[i]->reset_corruption();
    }
    return 0;
}
