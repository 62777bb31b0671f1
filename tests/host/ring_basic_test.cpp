// SPDX-License-Identifier: GPL-2.0
/*
 * kmod/ring.c on the host, single writer: set-up, reserve/commit/wrap at
 * every offset, page-boundary copies, lost accounting and the LOST record,
 * discard, wake-ups, counters, reset.
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
    EXPECT_EQ(r.ctl->size, (__u32)KRING_CTL_SIZE_VER1);
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
 * For every 8-byte start offset of a 2-page ring (and positions near
 * 2^64, where the free-running counters wrap): the first record lands
 * exactly at the offset and touches nothing outside its reservation, and
 * records keep coming intact across the end of the data area.
 */
class RingWrap : public ::testing::TestWithParam<unsigned> {};

TEST_P(RingWrap, EveryOffset) {
    const unsigned size = GetParam(), rsize = (size + 7) & ~7U;
    host_ring r(2);
    const uint64_t n = r.size();

    ASSERT_EQ(r.init_rc, 0);
    for (uint64_t base : {0ULL, ~0ULL - n * 3 + 1}) {
        for (uint64_t off = 0; off < n; off += 8) {
            tally t;
            record_ledger l;
            uint64_t pos = base + off, seq, written = 0;

            kring_ring_reset(&r.rb);
            r.seek(pos);
            for (uint64_t i = 0; i < n; i++)
                *r.byte_at(i) = 0xa5;

            int rc = write_record(&r.rb, size, &seq);
            ASSERT_EQ(rc, 0) << "offset " << off;
            l.note(rc, seq, rec_end::Commit, 0);
            ASSERT_EQ(r.head(), pos + rsize);
            for (uint64_t i = 0; i < n; i++) {
                bool inside = ((i - (pos & (n - 1))) & (n - 1)) < rsize;

                if (!inside && *r.byte_at(i) != 0xa5)
                    FAIL() << "byte " << i << " changed, record at " << off << " size " << size;
            }
            ASSERT_TRUE(consume(r, t));
            written += rsize;
            /* On past the end of the data area and a bit more. */
            while (written < n + 2 * rsize) {
                rc = write_record(&r.rb, size, &seq);
                ASSERT_EQ(rc, 0);
                l.note(rc, seq, rec_end::Commit, 0);
                ASSERT_TRUE(consume(r, t));
                written += rsize;
            }
            ASSERT_EQ(r.tail(), pos + written);
            if (rsize > 8) {
                check_ledger(l, t);
                if (HasFailure())
                    FAIL() << "offset " << off << " base " << base;
            } else {
                ASSERT_EQ(t.bare, l.written.size());
            }
        }
    }
    EXPECT_EQ(kring_host_warnings, 0u);
}

INSTANTIATE_TEST_SUITE_P(Sizes, RingWrap,
                         ::testing::Values(8u, 13u, 16u, 24u, 56u, 64u, 200u, 4088u, 4096u, 4104u,
                                           2 * 4096u - 56u),
                         [](const auto& info) { return "size" + std::to_string(info.param); });

/* Copies in odd pieces across page boundaries, and across many pages. */
TEST(RingCopy, SplitsAtPageBoundaries) {
    host_ring r(4);
    const unsigned sizes[] = {24, 4096, 5000, 12288, 4 * 4096 - 56};
    const unsigned chunks[] = {1, 3, 7, 13, 4095, 4097};

    ASSERT_EQ(r.init_rc, 0);
    for (unsigned size : sizes) {
        for (unsigned chunk : chunks) {
            for (uint64_t off : {0ULL, 8ULL, 4088ULL, 4080ULL, 8184ULL, 16376ULL, 12000ULL}) {
                tally t;
                record_ledger l;
                uint64_t seq;

                kring_ring_reset(&r.rb);
                r.seek(off + 3 * r.size());
                int rc = write_record(&r.rb, size, &seq, chunk);
                ASSERT_EQ(rc, 0);
                l.note(rc, seq, rec_end::Commit, 0);
                ASSERT_TRUE(consume(r, t));
                check_ledger(l, t);
                ASSERT_FALSE(HasFailure())
                    << "size " << size << " chunk " << chunk << " off " << off;
            }
        }
    }
    EXPECT_EQ(kring_host_warnings, 0u);
}

/* What a writer leaves unwritten is zeroed, even across pages. */
TEST(RingCopy, UnwrittenTailIsZeroed) {
    host_ring r(2);
    tally t;
    uint64_t seq;

    ASSERT_EQ(r.init_rc, 0);
    r.seek(4096 - 16);
    for (uint64_t i = 0; i < r.size(); i++)
        *r.byte_at(i) = 0xff;
    ASSERT_EQ(write_record(&r.rb, 200, &seq, 0, rec_end::Partial), 0);
    t.partial_zero = true;
    ASSERT_TRUE(consume(r, t));
    EXPECT_EQ(t.seqs, std::vector<uint64_t>{seq});
}

/* A size that is not a multiple of 8 is rounded up, the header says so. */
TEST(RingCopy, SizeRoundedUp) {
    host_ring r(1);
    kring_output_handle h;

    ASSERT_EQ(kring_output_begin(&h, &r.rb, 13, 0), 0);
    EXPECT_EQ(h.rec_size, 16u);
    kring_output_header(&h, kTestType, 0);
    kring_output_end(&h);
    EXPECT_EQ(r.head(), 16u);
    EXPECT_EQ(reinterpret_cast<kring_record_header*>(r.byte_at(0))->size, 16);
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

/* Lost records by cause, and the LOST record that reports them. */
TEST(RingLost, NoSpaceThenLostRecord) {
    host_ring r(1, 0, 99);
    record_ledger l;
    tally t;
    uint64_t seq, tm;
    int rc;

    ASSERT_EQ(r.init_rc, 0);
    /* 64 records of 64 bytes fill the page exactly. */
    for (int i = 0; i < 64; i++) {
        rc = write_record(&r.rb, 64, &seq, 0, rec_end::Commit, &tm);
        ASSERT_EQ(rc, 0);
        l.note(rc, seq, rec_end::Commit, tm);
    }
    EXPECT_EQ(r.head(), 4096u);
    for (int i = 0; i < 5; i++) {
        rc = write_record(&r.rb, 64, &seq, 0, rec_end::Commit, &tm);
        EXPECT_ERRNO(rc, -ENOSPC);
        l.note(rc, seq, rec_end::Commit, tm);
    }
    EXPECT_EQ(r.ctl->lost_no_space, 5u);
    EXPECT_EQ(r.ctl->records_written, 64u);
    expect_counts_mirrored(r);
    ASSERT_TRUE(consume(r, t));
    EXPECT_EQ(t.records, 64u);
    EXPECT_TRUE(t.losts.empty());

    /* The next record comes with a LOST record, in one reservation. */
    rc = write_record(&r.rb, 64, &seq, 0, rec_end::Commit, &tm);
    ASSERT_EQ(rc, 0);
    l.note(rc, seq, rec_end::Commit, tm);
    EXPECT_EQ(r.head(), 4096u + 56 + 64);
    ASSERT_TRUE(consume(r, t));
    ASSERT_EQ(t.losts.size(), 1u);
    const kring_lost_record& lr = t.losts[0];
    EXPECT_EQ(lr.header.type, (__u32)KRING_RECORD_LOST);
    EXPECT_EQ(lr.header.misc, 0);
    EXPECT_EQ(lr.id, 99u);
    EXPECT_EQ(lr.lost, 5u);
    EXPECT_EQ(lr.first_seq, 64u);
    EXPECT_EQ(lr.last_seq, 68u);
    EXPECT_EQ(lr.first_time, time_of(64));
    EXPECT_EQ(lr.last_time, time_of(68));
    EXPECT_EQ(t.seqs.back(), 69u);
    check_ledger(l, t);
    expect_counts_mirrored(r);
    EXPECT_EQ(r.rb.lost_pending.counter, 0);
}

TEST(RingLost, RecordThatFitsOnlyWithoutItsLostRecordWaits) {
    host_ring r(1);
    record_ledger l;
    tally t;
    uint64_t seq, tm;
    int rc;

    ASSERT_EQ(r.init_rc, 0);
    for (int i = 0; i < 63; i++) {
        ASSERT_EQ(write_record(&r.rb, 64, &seq), 0);
        l.note(0, seq, rec_end::Commit, 0);
    }
    rc = write_record(&r.rb, 128, &seq, 0, rec_end::Commit, &tm); /* 64 free */
    ASSERT_ERRNO(rc, -ENOSPC);
    l.note(rc, seq, rec_end::Commit, tm);
    /* 64 bytes free, a 64-byte record fits, but not with the LOST one. */
    rc = write_record(&r.rb, 64, &seq, 0, rec_end::Commit, &tm);
    ASSERT_ERRNO(rc, -ENOSPC);
    l.note(rc, seq, rec_end::Commit, tm);
    ASSERT_TRUE(consume(r, t));
    rc = write_record(&r.rb, 64, &seq, 0, rec_end::Commit, &tm);
    ASSERT_EQ(rc, 0);
    l.note(rc, seq, rec_end::Commit, tm);
    ASSERT_TRUE(consume(r, t));
    ASSERT_EQ(t.losts.size(), 1u);
    EXPECT_EQ(t.losts[0].lost, 2u);
    check_ledger(l, t);
}

TEST(RingLost, TooBigAndTooSmall) {
    host_ring r(1);
    record_ledger l;
    tally t;
    uint64_t seq, tm;
    int rc;

    ASSERT_EQ(r.init_rc, 0);
    for (unsigned size : {4041u, 4096u, 70000u, 0u, 7u}) {
        rc = write_record(&r.rb, size, &seq, 0, rec_end::Commit, &tm);
        EXPECT_ERRNO(rc, -E2BIG) << size;
        l.note(rc, seq, rec_end::Commit, tm);
    }
    EXPECT_EQ(r.ctl->lost_too_big, 5u);
    /* The largest record fits an empty ring with its LOST record. */
    rc = write_record(&r.rb, 4040, &seq, 0, rec_end::Commit, &tm);
    EXPECT_EQ(rc, 0);
    l.note(rc, seq, rec_end::Commit, tm);
    EXPECT_EQ(r.head(), 4096u);
    ASSERT_TRUE(consume(r, t));
    rc = write_record(&r.rb, 4040, &seq, 0, rec_end::Commit, &tm);
    EXPECT_EQ(rc, 0); /* and alone */
    l.note(rc, seq, rec_end::Commit, tm);
    ASSERT_TRUE(consume(r, t));
    check_ledger(l, t);
    expect_counts_mirrored(r);
}

TEST(RingLost, Paused) {
    host_ring r(1);
    record_ledger l;
    tally t;
    uint64_t seq, tm;
    int rc;

    ASSERT_EQ(r.init_rc, 0);
    kring_ring_set_paused(&r.rb, true);
    EXPECT_EQ(r.ctl->flags, KRING_CTL_F_PAUSED);
    for (int i = 0; i < 3; i++) {
        rc = write_record(&r.rb, 32, &seq, 0, rec_end::Commit, &tm);
        EXPECT_ERRNO(rc, -EAGAIN);
        l.note(rc, seq, rec_end::Commit, tm);
    }
    EXPECT_EQ(r.head(), 0u);
    kring_ring_set_paused(&r.rb, false);
    EXPECT_EQ(r.ctl->flags, 0u);
    rc = write_record(&r.rb, 32, &seq, 0, rec_end::Commit, &tm);
    ASSERT_EQ(rc, 0);
    l.note(rc, seq, rec_end::Commit, tm);
    ASSERT_TRUE(consume(r, t));
    ASSERT_EQ(t.losts.size(), 1u);
    EXPECT_EQ(t.losts[0].lost, 3u);
    EXPECT_EQ(r.ctl->lost_paused, 3u);
    check_ledger(l, t);
    expect_counts_mirrored(r);
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

/* A cancelled reservation becomes a PAD record carrying its seq. */
TEST(RingDiscard, BecomesPad) {
    host_ring r(1);
    record_ledger l;
    tally t;
    uint64_t seq, tm;
    int rc;

    ASSERT_EQ(r.init_rc, 0);
    for (unsigned size : {48u, 8u, 16u, 4000u}) {
        rc = write_record(&r.rb, size, &seq, 0, rec_end::Discard, &tm);
        ASSERT_EQ(rc, 0);
        l.note(rc, seq, rec_end::Discard, tm);
        rc = write_record(&r.rb, 24, &seq, 0, rec_end::Commit, &tm);
        ASSERT_EQ(rc, 0);
        l.note(rc, seq, rec_end::Commit, tm);
        ASSERT_TRUE(consume(r, t));
    }
    EXPECT_EQ(t.pads, 4u);
    /* The 8-byte PAD has no room for its seq. */
    l.discarded.erase(std::find(l.discarded.begin(), l.discarded.end(), 2u));
    check_ledger(l, t);
    EXPECT_EQ(r.ctl->records_discarded, 4u);
    expect_counts_mirrored(r);
}

/* A LOST record reserved together with a discarded record stays. */
TEST(RingDiscard, KeepsItsLostRecord) {
    host_ring r(1);
    record_ledger l;
    tally t;
    uint64_t seq, tm;
    int rc;

    ASSERT_EQ(r.init_rc, 0);
    kring_ring_set_paused(&r.rb, true);
    rc = write_record(&r.rb, 32, &seq, 0, rec_end::Commit, &tm);
    l.note(rc, seq, rec_end::Commit, tm);
    kring_ring_set_paused(&r.rb, false);
    rc = write_record(&r.rb, 32, &seq, 0, rec_end::Discard, &tm);
    ASSERT_EQ(rc, 0);
    l.note(rc, seq, rec_end::Discard, tm);
    ASSERT_TRUE(consume(r, t));
    ASSERT_EQ(t.losts.size(), 1u);
    EXPECT_EQ(t.pads, 1u);
    check_ledger(l, t);
}

/* Wake-ups: watermark bytes, every N records, and need_wakeup. */
struct wake_count {
    static inline int calls;
    static void cb(kring_ring*) { calls++; }
};

TEST(RingWakeup, DefaultWatermarkIsHalfTheBuffer) {
    host_ring r(1);
    uint64_t written = 0;
    tally t;

    ASSERT_EQ(r.init_rc, 0);
    r.rb.wakeup = wake_count::cb;
    wake_count::calls = 0;
    for (int i = 0; i < 1000; i++) {
        ASSERT_EQ(write_record(&r.rb, 40), 0);
        written += 40;
        ASSERT_EQ(wake_count::calls, (int)(written / 2048)) << i;
        ASSERT_TRUE(consume(r, t));
    }
    EXPECT_EQ(r.ctl->wakeups, (__u64)wake_count::calls);
}

TEST(RingWakeup, WatermarkAndEvents) {
    host_ring r(2);
    tally t;

    ASSERT_EQ(r.init_rc, 0);
    r.rb.wakeup = wake_count::cb;

    /* Every 3 records. */
    kring_ring_set_wakeup(&r.rb, 0, 3);
    EXPECT_EQ(r.rb.watermark, 0u);
    wake_count::calls = 0;
    for (int i = 1; i <= 30; i++) {
        ASSERT_EQ(write_record(&r.rb, 16), 0);
        ASSERT_EQ(wake_count::calls, i / 3);
    }
    ASSERT_TRUE(consume(r, t));

    /* 100 bytes: one wake-up per crossing, even when one record crosses several. */
    kring_ring_set_wakeup(&r.rb, 100, 0);
    kring_ring_reset(&r.rb);
    wake_count::calls = 0;
    ASSERT_EQ(write_record(&r.rb, 96), 0);
    EXPECT_EQ(wake_count::calls, 0);
    ASSERT_EQ(write_record(&r.rb, 8), 0); /* 104 >= 100 */
    EXPECT_EQ(wake_count::calls, 1);
    ASSERT_EQ(write_record(&r.rb, 400), 0); /* 504: crosses 200..500 */
    EXPECT_EQ(wake_count::calls, 2);
    ASSERT_EQ(write_record(&r.rb, 8), 0); /* 512, next at 600 */
    EXPECT_EQ(wake_count::calls, 2);
    ASSERT_EQ(write_record(&r.rb, 88), 0); /* 600 */
    EXPECT_EQ(wake_count::calls, 3);
    ASSERT_TRUE(consume(r, t));

    /* Both: whichever comes first. */
    kring_ring_set_wakeup(&r.rb, 1000, 4);
    kring_ring_reset(&r.rb);
    wake_count::calls = 0;
    for (int i = 1; i <= 8; i++)
        ASSERT_EQ(write_record(&r.rb, 8), 0);
    EXPECT_EQ(wake_count::calls, 2);
    ASSERT_EQ(write_record(&r.rb, 1000), 0);
    EXPECT_EQ(wake_count::calls, 3);

    /* Clamped to the data area; 0, 0 is the default. */
    kring_ring_set_wakeup(&r.rb, 1 << 30, 0);
    EXPECT_EQ(r.rb.watermark, r.size());
    kring_ring_set_wakeup(&r.rb, 0, 0);
    EXPECT_EQ(r.rb.watermark, r.size() / 2);
    EXPECT_EQ(r.rb.wakeup_events, 0u);
}

TEST(RingWakeup, OnlyWhenTheConsumerAsks) {
    host_ring r(1);
    tally t;

    ASSERT_EQ(r.init_rc, 0);
    r.rb.wakeup = wake_count::cb;
    kring_ring_set_wakeup(&r.rb, 0, 1);
    wake_count::calls = 0;
    r.ctl->need_wakeup = 0;
    for (int i = 0; i < 10; i++)
        ASSERT_EQ(write_record(&r.rb, 16), 0);
    EXPECT_EQ(wake_count::calls, 0);
    EXPECT_EQ(r.ctl->wakeups, 0u);
    r.ctl->need_wakeup = 1;
    ASSERT_EQ(write_record(&r.rb, 16), 0);
    EXPECT_EQ(wake_count::calls, 1);
    EXPECT_EQ(r.ctl->wakeups, 1u);
    /* No callback set: still counted. */
    r.rb.wakeup = nullptr;
    ASSERT_EQ(write_record(&r.rb, 16), 0);
    EXPECT_EQ(r.ctl->wakeups, 2u);
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
