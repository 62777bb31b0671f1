// What libkring's host suites share: the host ring (tests/common/host_ring.hpp)
// seen through a ring_view as a consumer sees a mapped channel, and the
// records they write into it and check.
#pragma once

#include <cstdint>
#include <cstring>
#include <vector>

#include "ring_test_util.hpp"  // the host ring, the test record
#include "kring/record.hpp"
#include "kring/ring.hpp"

namespace kt {

// A mapped host ring (kt::mapping) as a ring_view.
inline kring::ring_view view_of(const host_ring& r) {
    kring::ring_view v;
    v.ctl = r.ctl;
    v.data = reinterpret_cast<const std::byte*>(r.data());
    v.data_size = r.size();
    v.mirrored = r.mirrored();
    v.overwrite = r.rb.flags & KRING_RING_OVERWRITE;
    v.kind = kring::ring_kind::kring;
    return v;
}

// Check a test record (kt::write_record's format) word by word.
inline bool check_test_record(const kring::record& r, std::uint64_t& seq_out) {
    if (r.type() != kt::kTestType || r.size() < 16)
        return false;
    std::uint64_t seq;
    std::memcpy(&seq, r.bytes().data() + 8, 8);
    for (std::size_t j = 1; 8 + 8 * j < r.size(); j++) {
        std::uint64_t w;
        std::memcpy(&w, r.bytes().data() + 8 + 8 * j, 8);
        if (w != kt::word(seq, j))
            return false;
    }
    seq_out = seq;
    return true;
}

// Write a SAMPLE record with sample_type TIME | SEQ (plus RAW when
// @raw_len) at time @t through the ring core. Returns begin's result.
inline int write_sample(kring_ring* rb, std::uint64_t t, std::uint32_t raw_len = 0) {
    kring_output_handle h;
    unsigned size = 8 + 8 + 8;
    unsigned raw_padded = 0;
    if (raw_len)
        raw_padded = (raw_len + 4 + 7) / 8 * 8;
    size += raw_padded;
    int err = kring_output_begin(&h, rb, size, t);
    if (err)
        return err;
    kring_output_header(&h, KRING_RECORD_SAMPLE, 0);
    kring_output_copy(&h, &t, 8);
    if (raw_len) {
        std::vector<std::uint8_t> raw(raw_padded, 0);
        std::memcpy(raw.data(), &raw_len, 4);
        for (std::uint32_t i = 0; i < raw_len; i++)
            raw[4 + i] = std::uint8_t(i ^ h.seq);
        kring_output_copy(&h, raw.data(), raw_padded);
    }
    std::uint64_t seq = h.seq;
    kring_output_copy(&h, &seq, 8);
    kring_output_end(&h);
    return 0;
}

}  // namespace kt
