// SPDX-License-Identifier: GPL-2.0
/*
 * A data area mapped twice in a row (KRING_RING_MIRRORED, as kring.ko maps
 * a channel's): every reservation is one piece, records that wrap included,
 * and kring_output_ptr() writes them in place. Over separate pages it
 * gives an address only where the rest of the record fits in its page.
 */
#include <random>

#include "ring_test_util.hpp"
#include "errno_assert.hpp"

namespace {

using namespace kt;

TEST(RingMirror, RefusedOverPagesThatDoNotFollowEachOther) {
    host_ring r(4, KRING_RING_MIRRORED | KRING_RING_OVERWRITE);
    EXPECT_EQ(r.init_rc, 0);
    /* guarded pages: each between PROT_NONE pages, never contiguous */
    guarded_page ctl, a, b;
    void* pages[2] = {a.addr(), b.addr()};
    kring_ring rb;
    EXPECT_EQ(kring_ring_init(&rb, static_cast<kring_ctl_page*>(ctl.addr()), pages, 2,
                              KRING_RING_MIRRORED, 1),
              -EINVAL);
}

// Forward mode, records of random sizes over many laps: every one is
// written in place (never split, wrapped or not) and reads back whole.
TEST(RingMirror, ForwardRecordsWrittenInPlaceAcrossTheWrap) {
    host_ring r(2, KRING_RING_MIRRORED);
    ASSERT_EQ(r.init_rc, 0);
    std::mt19937 rng(7);
    tally t;
    uint64_t wrapped = 0, written = 0, refused = 0;

    for (int i = 0; i < 20000; i++) {
        unsigned size = 8 * (2 + rng() % 120);
        uint64_t head = static_cast<uint64_t>(local_read(&r.rb.head));
        int err = write_record_in_place(&r.rb, size);

        if (err == -ENOSPC) {
            refused++;
            ASSERT_TRUE(consume(r, t));
            continue;
        }
        ASSERT_EQ(err, 0) << "record " << i << " of " << size << " bytes";
        written++;
        wrapped += (head & (r.size() - 1)) + size > r.size();
        if (rng() % 4 == 0) {
            ASSERT_TRUE(consume(r, t));
        }
    }
    ASSERT_TRUE(consume(r, t));
    kring_ring_flush_lost(&r.rb);
    ASSERT_TRUE(consume(r, t));
    EXPECT_EQ(t.records, written);
    EXPECT_EQ(t.lost, refused);
    EXPECT_GT(wrapped, 100u) << "too few records crossed the end of the data area";
    for (size_t i = 1; i < t.seqs.size(); i++)
        ASSERT_LT(t.seqs[i - 1], t.seqs[i]);
    expect_counts_mirrored(r);
}

// Backward mode: the newest records, walked from data_head, are whole,
// the ones across the end of the area among them.
TEST(RingMirror, BackwardRecordsWrittenInPlaceAcrossTheWrap) {
    host_ring r(2, KRING_RING_MIRRORED | KRING_RING_OVERWRITE);
    ASSERT_EQ(r.init_rc, 0);
    std::mt19937 rng(11);

    for (int i = 0; i < 5000; i++)
        ASSERT_EQ(write_record_in_place(&r.rb, 8 * (2 + rng() % 60)), 0);
    tally t;
    ASSERT_TRUE(walk_backward(r, t));
    EXPECT_GT(t.records, 20u);
    EXPECT_EQ(t.seqs.front(), 4999u);
    for (size_t i = 1; i < t.seqs.size(); i++)
        ASSERT_EQ(t.seqs[i - 1], t.seqs[i] + 1);
}

// The copy path still works on a mirrored area, in any chunking, and a
// pointer after a partial copy covers exactly the rest.
TEST(RingMirror, CopyThenPointerForTheRest) {
    host_ring r(1, KRING_RING_MIRRORED);
    ASSERT_EQ(r.init_rc, 0);
    r.seek(kPage - 24);
    kring_output_handle h;
    ASSERT_EQ(kring_output_begin(&h, &r.rb, 64, 0), 0);
    kring_output_header(&h, kTestType, 0);
    uint64_t seq = h.seq;
    kring_output_copy(&h, &seq, 8);
    auto* p = static_cast<uint64_t*>(kring_output_ptr(&h));
    ASSERT_NE(p, nullptr);
    EXPECT_EQ(h.rem, 0u);
    for (int j = 0; j < 6; j++)
        p[j] = word(seq, j + 1);
    kring_output_end(&h);
    tally t;
    ASSERT_TRUE(consume(r, t));
    EXPECT_EQ(t.records, 1u);
    EXPECT_EQ(t.seqs, std::vector<uint64_t>{seq});
}

// Separate pages: an address where the record fits in the rest of its
// page, none where it would cross into the next (the copy goes on then,
// and nothing counted as written).
TEST(RingMirror, SeparatePagesGiveAnAddressOnlyWithinAPage) {
    host_ring r(2);
    ASSERT_EQ(r.init_rc, 0);
    EXPECT_EQ(write_record_in_place(&r.rb, 64), 0);
    r.seek(kPage - 32);
    EXPECT_ERRNO(write_record_in_place(&r.rb, 64), -EFAULT);
    tally t;
    ASSERT_TRUE(consume(r, t));
    EXPECT_EQ(t.records, 1u);
    EXPECT_EQ(t.lost, 0u);
}

}  // namespace
