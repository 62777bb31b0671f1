// SPDX-License-Identifier: GPL-2.0
/*
 * kmod/ring.c on the host, single writer: set-up, overlong copies, clock
 * reads, counters and reset. Wrap at every offset, page-boundary copies,
 * lost accounting, discard and wake-ups are cases shared with KUnit
 * (tests/common/ring_cases.h, run by ring_cases_test.cpp).
 */
#include "ring_test_util.hpp"
#include "errno_assert.hpp"

using namespace kt;

namespace {

TEST(RingInit, RejectsBadArguments) {
    kring_ring rb;
    kring_ctl_page ctl = {};
    void* pages[4] = {};

    EXPECT_ERRNO(kring_ring_init(&rb, &ctl, pages, 0, 0, 1), -EINVAL);
    EXPECT_ERRNO(kring_ring_init(&rb, &ctl, pages, 3, 0, 1), -EINVAL);
    EXPECT_ERRNO(kring_ring_init(&rb, &ctl, pages, 4, 0x2, 1), -EINVAL);
    EXPECT_ERRNO(kring_ring_init(&rb, nullptr, pages, 4, 0, 1), -EINVAL);
    EXPECT_ERRNO(kring_ring_init(&rb, &ctl, nullptr, 4, 0, 1), -EINVAL);
}

TEST(RingInit, FillsControlPage) {
    host_ring r(4, 0, 7);

    ASSERT_EQ(r.init_rc, 0);
    EXPECT_EQ(r.ctl->version, (__u32)KRING_CTL_VERSION);
    EXPECT_EQ(r.ctl->compat_version, 0u);
    EXPECT_EQ(r.ctl->size, (__u32)KRING_CTL_SIZE_VER2);
    EXPECT_EQ(r.ctl->capabilities, KRING_CAP_BIT0_IS_DEPRECATED);
    EXPECT_EQ(r.ctl->data_offset, (__u64)kPage);
    EXPECT_EQ(r.ctl->data_size, 4ULL * kPage);
    EXPECT_EQ(r.ctl->flags, 0u);
    EXPECT_EQ(r.ctl->need_wakeup, 1u);
    EXPECT_EQ(r.ctl->data_head, 0u);
    EXPECT_EQ(r.rb.max_record, 4 * kPage - KRING_LOST_RECORD_SIZE);
    EXPECT_EQ(r.rb.watermark, 2 * kPage);

    host_ring o(1, KRING_RING_OVERWRITE);
    EXPECT_EQ(o.ctl->flags, KRING_CTL_F_OVERWRITE);
    EXPECT_EQ(o.rb.max_record, kPage);

    host_ring big(32);
    EXPECT_EQ(big.rb.max_record, (unsigned)KRING_RECORD_MAX_SIZE);
}

/*
 * Writing more than the reservation has left is refused at the entry,
 * before anything is computed from the count: nothing written, nothing
 * warned, the handle unchanged; what fits still goes in, and the end call
 * zeroes the rest.
 */
TEST(RingCopy, OverlongCopyIsRefused) {
    host_ring r(1);
    kring_output_handle h;
    std::vector<uint8_t> big(100, 0x77);
    unsigned long w = kring_host_warnings;

    for (uint64_t i = 0; i < r.size(); i++)
        *r.byte_at(i) = 0xa5;
    ASSERT_EQ(kring_output_begin(&h, &r.rb, 32, 0), 0);
    EXPECT_ERRNO(kring_output_copy(&h, big.data(), 33), -E2BIG);
    EXPECT_ERRNO(kring_output_copy(&h, big.data(), ~0u), -E2BIG);
    EXPECT_ERRNO(kring_output_copy(&h, big.data(), ~0u - 7), -E2BIG);
    EXPECT_EQ(h.rem, 32u);
    EXPECT_EQ(*r.byte_at(0), 0xa5);
    EXPECT_EQ(kring_output_header(&h, kTestType, 0), 0);
    EXPECT_EQ(kring_output_copy(&h, big.data(), 24), 0);
    EXPECT_ERRNO(kring_output_copy(&h, big.data(), 1), -E2BIG);
    EXPECT_ERRNO(kring_output_header(&h, kTestType, 0), -E2BIG);
    EXPECT_EQ(kring_output_copy(&h, big.data(), 0), 0);
    kring_output_end(&h);
    EXPECT_EQ(kring_host_warnings, w);
    EXPECT_EQ(reinterpret_cast<kring_record_header*>(r.byte_at(0))->size, 32);
    EXPECT_EQ(*r.byte_at(31), 0x77);
    EXPECT_EQ(*r.byte_at(32), 0xa5);
}

/*
 * With a ring clock, a record costs one clock read (inside the reservation
 * loop), and a record refused before that loop reads the clock for its
 * LOST record's times.
 */
uint64_t g_clock_reads;
uint64_t counting_clock(void) { return 1000 + 10 * ++g_clock_reads; }

TEST(RingClock, OneReadPerRecordAndOneForALoss) {
    host_ring r(1);
    tally t;
    kring_output_handle h;

    ASSERT_EQ(r.init_rc, 0);
    r.rb.clock = counting_clock;
    g_clock_reads = 0;
    ASSERT_EQ(write_record(&r.rb, 32), 0);
    EXPECT_EQ(g_clock_reads, 1u) << "clock reads for one record";
    kring_ring_set_paused(&r.rb, true);
    EXPECT_ERRNO(kring_output_begin(&h, &r.rb, 32, 0), -EAGAIN);
    EXPECT_EQ(g_clock_reads, 2u);
    const uint64_t lost_time = 1000 + 10 * g_clock_reads;
    EXPECT_ERRNO(kring_output_begin(&h, &r.rb, 1u << 20, 0), -EAGAIN); /* paused first */
    kring_ring_set_paused(&r.rb, false);
    EXPECT_ERRNO(kring_output_begin(&h, &r.rb, 1u << 20, 0), -E2BIG);
    EXPECT_EQ(g_clock_reads, 4u);
    ASSERT_EQ(kring_output_begin(&h, &r.rb, 16, 0), 0);
    EXPECT_EQ(g_clock_reads, 5u);
    EXPECT_EQ(h.time, 1050u);
    kring_output_header(&h, kTestType, 0);
    kring_output_copy(&h, &h.seq, 8);
    kring_output_end(&h);
    ASSERT_TRUE(consume(r, t));
    ASSERT_EQ(t.losts.size(), 1u);
    EXPECT_EQ(t.losts[0].lost, 3u);
    EXPECT_EQ(t.losts[0].first_time, lost_time);
    EXPECT_EQ(t.losts[0].last_time, 1040u);
}

TEST(RingState, ResetAndResetCounters) {
    host_ring r(1);
    tally t;
    uint64_t seq;

    ASSERT_EQ(r.init_rc, 0);
    EXPECT_FALSE(kring_ring_readable(&r.rb));
    for (int i = 0; i < 32; i++)
        write_record(&r.rb, 64);
    EXPECT_TRUE(kring_ring_readable(&r.rb)); /* watermark: 2048 */
    r.set_tail(64);
    EXPECT_FALSE(kring_ring_readable(&r.rb));
    kring_ring_set_wakeup(&r.rb, 0, 1);
    EXPECT_TRUE(kring_ring_readable(&r.rb)); /* by count: any byte */
    r.set_tail(~0ULL);
    EXPECT_TRUE(kring_ring_readable(&r.rb)); /* nonsense tail */
    kring_ring_set_wakeup(&r.rb, 0, 0);
    r.set_tail(0);
    for (int i = 0; i < 38; i++)
        write_record(&r.rb, 64);
    EXPECT_EQ(r.ctl->lost_no_space, 6u);

    kring_ring_reset_counters(&r.rb);
    kring_ring_counts c;
    kring_ring_read_counts(&r.rb, &c);
    EXPECT_EQ(c.produced, 0u);
    EXPECT_EQ(c.written, 0u);
    EXPECT_EQ(r.ctl->lost_no_space, 0u);
    EXPECT_EQ(r.ctl->records_written, 0u);
    EXPECT_EQ(r.head(), 4096u); /* contents stay */
    ASSERT_TRUE(consume(r, t));
    EXPECT_FALSE(kring_ring_readable(&r.rb));
    ASSERT_EQ(write_record(&r.rb, 64, &seq), 0);
    EXPECT_EQ(seq, 70u); /* sequence numbers go on */
    ASSERT_TRUE(consume(r, t));
    EXPECT_EQ(t.losts.back().lost, 6u); /* and pending losses are reported */
    kring_ring_read_counts(&r.rb, &c);
    EXPECT_EQ(c.produced, 1u);
    EXPECT_EQ(c.written, 1u);

    kring_stats st;

    memset(&st, 0xff, sizeof(st));
    kring_ring_read_stats(&r.rb, &st);
    EXPECT_EQ(st.produced, 1u);
    EXPECT_EQ(st.written, 1u);
    EXPECT_EQ(st.lost_no_space, 0u);
    EXPECT_EQ(st.lost_too_big, 0u);
    EXPECT_EQ(st.lost_paused, 0u);
    EXPECT_EQ(st.lost_overwritten, 0u);
    EXPECT_EQ(st.wakeups, 0u);
    EXPECT_EQ(st.nested, 0u);
    EXPECT_EQ(st.size, 0xffffffffu); /* left to the caller */

    kring_ring_reset(&r.rb);
    kring_ring_read_counts(&r.rb, &c);
    EXPECT_EQ(c.produced, 0u);
    EXPECT_EQ(r.ctl->data_head, 0u);
    EXPECT_EQ(r.ctl->data_tail, 0u);
    for (uint64_t i = 0; i < r.size(); i++)
        ASSERT_EQ(*r.byte_at(i), 0);
    ASSERT_EQ(write_record(&r.rb, 64, &seq), 0);
    EXPECT_EQ(seq, 0u);
}

}  // namespace
