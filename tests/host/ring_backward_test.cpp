// SPDX-License-Identifier: GPL-2.0
/*
 * Backward (overwrite) writing, perf's write_backward, beyond the case
 * shared with KUnit (ring_backward in tests/common/ring_cases.h: the newest
 * records survive intact): nothing is reported lost, a partly filled
 * ring's walk, and the overwritten estimate under nesting.
 */
#include "ring_test_util.hpp"
#include "errno_assert.hpp"

using namespace kt;

namespace {

TEST(RingBackward, NoLostRecords) {
    host_ring r(1, KRING_RING_OVERWRITE);
    tally t;

    ASSERT_EQ(r.init_rc, 0);
    EXPECT_ERRNO(write_record(&r.rb, 4104), -E2BIG);
    kring_ring_set_paused(&r.rb, true);
    EXPECT_ERRNO(write_record(&r.rb, 64), -EAGAIN);
    kring_ring_set_paused(&r.rb, false);
    EXPECT_EQ(write_record(&r.rb, 4096), 0); /* the whole area */
    EXPECT_EQ(write_record(&r.rb, 64), 0);
    ASSERT_TRUE(walk_backward(r, t));
    EXPECT_EQ(t.seqs, std::vector<uint64_t>{3});
    EXPECT_TRUE(t.losts.empty());
    EXPECT_EQ(r.ctl->lost_too_big, 1u);
    EXPECT_EQ(r.ctl->lost_paused, 1u);
    EXPECT_EQ(r.rb.lost_pending.counter, 0);
}

/* Before the first lap, the walk ends at the never-written zeroes. */
TEST(RingBackward, PartlyFilled) {
    host_ring r(2, KRING_RING_OVERWRITE);
    tally t;

    ASSERT_EQ(r.init_rc, 0);
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(write_record(&r.rb, 24 + 8 * i), 0);
    ASSERT_TRUE(walk_backward(r, t));
    EXPECT_EQ(t.seqs, (std::vector<uint64_t>{9, 8, 7, 6, 5, 4, 3, 2, 1, 0}));
    EXPECT_EQ(r.ctl->lost_overwritten, 0u);
    EXPECT_FALSE(kring_ring_readable(&r.rb)); /* wake-ups only */
}

}  // namespace

namespace {

/*
 * The writers of RingBackward.EstimateNeverUnderflows: an outer writer
 * interrupted before it takes a sequence number, a writer in that
 * interrupt refused by a pause and interrupted before it publishes, and
 * the innermost one writing a record across a slice boundary.
 */
struct underflow_writers {
    static inline int stage = 0;

    static void hook(kring_ring* rb) {
        if (stage == 0 && rb->nest == 1 && local64_read(&rb->seq) == 0) {
            stage = 1;  // the outer writer, no sequence number yet
            kring_ring_set_paused(rb, true);
            uint64_t seq;
            EXPECT_ERRNO(write_record(rb, 16, &seq), -EAGAIN);
        } else if (stage == 1 && rb->nest == 2 && local64_read(&rb->lost_paused) == 1) {
            stage = 2;  // the refused writer, still in flight
            kring_ring_set_paused(rb, false);
            EXPECT_EQ(write_record(rb, 264), 0);  // crosses a 256-byte slice boundary
        }
    }
};

}  // namespace

// lost_overwritten is a lower bound of the records overwritten, counted
// from sequence numbers less the writers refused and less those still in
// flight: a refused writer still in flight and one with no sequence number
// yet must not take it below zero (it would wrap to 2^64 - 1, and the
// estimate only ever grows).
TEST(RingBackward, EstimateNeverUnderflows) {
    host_ring r(1, KRING_RING_OVERWRITE);
    ASSERT_EQ(r.init_rc, 0);
    underflow_writers::stage = 0;
    kring_host_irq_hook = underflow_writers::hook;
    int err = write_record(&r.rb, 16);
    kring_host_irq_hook = nullptr;
    EXPECT_EQ(err, 0);
    ASSERT_EQ(underflow_writers::stage, 2) << "the nested writers did not run";
    /* Two more laps: the estimate reads the checkpoint the crossing left. */
    for (int i = 0; i < 100; i++)
        ASSERT_EQ(write_record(&r.rb, 96), 0);
    kring_ring_counts c;
    kring_ring_read_counts(&r.rb, &c);
    EXPECT_GT(c.lost_overwritten, 0u);
    EXPECT_LE(c.lost_overwritten, c.written);
    EXPECT_EQ(r.ctl->lost_overwritten, c.lost_overwritten);
}
