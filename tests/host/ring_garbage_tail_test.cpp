// SPDX-License-Identifier: GPL-2.0
/*
 * data_tail is written by user space and trusted for nothing but the
 * space check: whatever it holds, the ring writes only inside its data
 * pages (each sits between PROT_NONE guard pages: a stray write faults),
 * leaves the rest of the control page alone, and its own positions stay
 * sane.
 */
#include <random>

#include "ring_test_util.hpp"

using namespace kt;

namespace {

TEST(RingGarbageTail, NeverWritesOutside) {
    host_ring r(2);
    std::mt19937_64 rng(1234);
    kring_ctl_page before;
    uint64_t head, ok = 0, lost = 0;

    ASSERT_EQ(r.init_rc, 0);
    memset(r.ctl->__reserved, 0x5a, sizeof(r.ctl->__reserved));
    memset(r.ctl->__reserved_kring, 0x5a, sizeof(r.ctl->__reserved_kring));
    r.ctl->aux_head = 1;
    r.ctl->aux_size = 2;
    r.ctl->time_mult = 3;
    before = *r.ctl;

    for (int i = 0; i < 200000; i++) {
        head = r.head();
        uint64_t tail;

        switch (rng() % 8) {
            case 0:
                tail = rng();
                break;
            case 1:
                tail = head + 1 + rng() % 64;
                break; /* ahead of head */
            case 2:
                tail = head - r.size() - 1 - rng() % 64;
                break; /* too far back */
            case 3:
                tail = head - r.size() + rng() % 64;
                break; /* nearly full */
            case 4:
                tail = head - rng() % r.size();
                break; /* unaligned */
            case 5:
                tail = ~0ULL - rng() % 16;
                break;
            case 6:
                tail = head;
                break;
            default:
                tail = 1ULL << 63;
                break;
        }
        r.set_tail(tail);
        unsigned size = 8 + (unsigned)(rng() % (r.rb.max_record - 8));

        int rc = write_record(&r.rb, size);
        if (rc == 0)
            ok++;
        else
            lost++;
        ASSERT_TRUE(rc == 0 || rc == -ENOSPC) << rc;
        /* The head moved by the record (and maybe a LOST record) or not at all. */
        uint64_t moved = r.head() - head;

        ASSERT_TRUE(moved == 0 || moved <= r.size()) << moved;
        if (rc == 0) {
            ASSERT_LE(head - tail + moved, r.size()) << "wrote over unread data";
        }
    }
    EXPECT_GT(ok, 1000u);
    EXPECT_GT(lost, 1000u);

    /* Only the kernel-written fields changed. */
    kring_ctl_page now = *r.ctl;

    now.data_head = before.data_head;
    now.data_tail = before.data_tail;
    now.records_written = before.records_written;
    now.lost_no_space = before.lost_no_space;
    now.wakeups = before.wakeups;
    EXPECT_EQ(memcmp(&now, &before, sizeof(now)), 0);
    EXPECT_EQ(kring_host_warnings, 0u);

    kring_ring_counts c;
    kring_ring_read_counts(&r.rb, &c);
    EXPECT_EQ(c.produced, 200000u);
    EXPECT_EQ(c.written, ok);
    EXPECT_EQ(c.lost_no_space, lost);
}

}  // namespace
