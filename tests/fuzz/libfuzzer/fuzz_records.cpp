// libFuzzer: libkring's record parsers (parse_sample, parse_lost, parse_aux,
// record_time) on arbitrary record bytes and sample_types, for kring and
// perf rings. A parser may refuse a record; it must never read outside it,
// and what it returns must lie within it.
#include <cstdint>
#include <vector>

#include "fuzz_input.hpp"
#include "kring/record.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kf::input in(data, size);
    const auto sample_type = in.take<std::uint64_t>();
    auto body = in.bytes(70000);
    // The record's own bytes, exactly: ASan reports a read past them.
    if (body.size() < sizeof(kring_record_header))
        return 0;  // a reader never hands out a record shorter than its header
    std::vector<std::byte> rec(body.size());
    std::memcpy(rec.data(), body.data(), body.size());
    const kring::record r({rec.data(), rec.size()}, 0, false);
    for (auto kind : {kring::ring_kind::kring, kring::ring_kind::perf}) {
        if (auto l = kring::parse_lost(r, kind); l && l->has_range)
            KF_CHECK(kind == kring::ring_kind::kring);
        (void)kring::parse_aux(r, kind);
    }
    if (auto s = kring::parse_sample(r, sample_type)) {
        if (!s->raw.empty()) {
            KF_CHECK(s->raw.data() >= rec.data());
            KF_CHECK(s->raw.data() + s->raw.size() <= rec.data() + rec.size());
        }
    }
    (void)kring::record_time(r, sample_type);
    (void)kring::describe(static_cast<kring::header_fault>(in.below(16)));
    return 0;
}
