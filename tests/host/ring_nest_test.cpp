// SPDX-License-Identifier: GPL-2.0
/*
 * Writers nesting on one CPU, as task, softirq, hardirq and NMI do.
 *
 * The explicit ones (a second writer's begin/copy/end inside the first's)
 * are cases shared with KUnit (ring_nesting_* in tests/common/ring_cases.h).
 * Here: deeper than the slots, a second CPU, and the exhaustive ones, which
 * use the shim's kring_irq_point() hook to run an interrupting writer at
 * every point of ring.c where an interrupt can arrive, and a second-level
 * one at every point of that writer, checking at each step that the
 * published data_head never moves backwards and never exposes an
 * incomplete record, and at the end that every record is accounted for
 * exactly.
 */
#include <functional>

#include "ring_test_util.hpp"
#include "errno_assert.hpp"

using namespace kt;

namespace {

/*
 * Deeper than KRING_RING_MAX_NEST: still exact counts (the kernel warns
 * once; sequence ranges do not cover the deepest writers' losses).
 */
TEST(RingNest, DeeperThanTheSlots) {
    constexpr int n = KRING_RING_MAX_NEST + 3;
    host_ring r(4);
    kring_output_handle h[n];
    unsigned long w = kring_host_warnings;
    record_ledger l;
    tally t;
    uint64_t seq, tm;
    int rc;

    ASSERT_EQ(r.init_rc, 0);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(kring_output_begin(&h[i], &r.rb, 48, 0), 0);
        l.note(0, h[i].seq, rec_end::Commit, 0);
        kring_output_header(&h[i], kTestType, 0);
        kring_output_copy(&h[i], &h[i].seq, 8);
        for (uint64_t j = 1; j < 5; j++) {
            uint64_t v = word(h[i].seq, j);

            kring_output_copy(&h[i], &v, 8);
        }
        if (i == 3 || i == n - 1) {
            /* An interrupt that loses a record, at depth i + 2. */
            rc = write_record(&r.rb, 50000, &seq, 0, rec_end::Commit, &tm);
            EXPECT_ERRNO(rc, -E2BIG);
            l.note(rc, seq, rec_end::Commit, tm);
        }
    }
    for (int i = n - 1; i >= 0; i--)
        kring_output_end(&h[i]);
    /* depths 9, 10, 11 and the loss at depth 12 */
    EXPECT_EQ(kring_host_warnings, w + 4);
    kring_host_warnings = w;
    ASSERT_TRUE(consume(r, t));
    rc = write_record(&r.rb, 16, &seq, 0, rec_end::Commit, &tm);
    ASSERT_EQ(rc, 0);
    l.note(rc, seq, rec_end::Commit, tm);
    ASSERT_TRUE(consume(r, t));
    /*
     * The depth-5 loss is reported by the next depth-5 writer, with its
     * range; the depth-12 one by the final record, with its count only.
     */
    ASSERT_EQ(t.losts.size(), 2u);
    EXPECT_EQ(t.losts[0].lost, 1u);
    EXPECT_EQ(t.losts[0].first_seq, l.lost[0].first);
    EXPECT_EQ(t.losts[0].last_seq, l.lost[0].first);
    EXPECT_EQ(t.losts[1].lost, 1u);
    EXPECT_EQ(t.records, (uint64_t)n + 1);
    EXPECT_EQ(r.rb.lost_pending.counter, 0);
    kring_ring_counts c;
    kring_ring_read_counts(&r.rb, &c);
    EXPECT_EQ(c.nested, (uint64_t)n - 1 + 2);
}

/* ---- every interleaving ---------------------------------------------- */

struct injector {
    static constexpr int kDepth = 3; /* outer writer + 2 interrupts */
    int inject_at[kDepth] = {-1, -1, -1};
    int seen[kDepth] = {};
    int depth = 0;
    host_ring* r = nullptr;
    record_ledger* ledger = nullptr;
    uint64_t last_head = 0;
    bool backward = false;
    std::function<void(int)> writer;

    static inline injector* cur;
    static void hook(kring_ring*) { cur->point(); }

    void check_published() {
        uint64_t head = r->head();
        tally t;

        if (!backward) {
            EXPECT_GE((int64_t)(head - last_head), 0) << "data_head went back";
            uint64_t pos = r->tail();

            while (pos != head) {
                unsigned n = check_record(*r, pos, t, head - pos);

                if (!n)
                    break;
                pos += n;
            }
        } else {
            EXPECT_LE((int64_t)(head - last_head), 0) << "data_head went back";
            walk_backward(*r, t);
        }
        last_head = head;
    }

    void point() {
        int d = depth;

        check_published();
        if (d + 1 >= kDepth)
            return;
        if (seen[d]++ == inject_at[d]) {
            depth++;
            seen[depth] = 0;
            writer(depth);
            depth--;
        }
    }
};

struct scenario {
    const char* name;
    unsigned flags;
    unsigned free_bytes; /* forward: free space before the outer writer */
    unsigned pre_lost;   /* losses pending before the outer writer:
                          * bit 0 one lost at depth 1, bit 1 one at
                          * depth 2 (in the second lost slot) */
    unsigned sizes[3];   /* record size per depth */
    rec_end ends[3];
};

void PrintTo(const scenario& s, std::ostream* os) { *os << s.name; }

class RingInterleave : public ::testing::TestWithParam<scenario> {};

/* Run the scenario once, interrupting at the given points. */
void run_once(const scenario& sc, host_ring& r, int at0, int at1, int* points) {
    record_ledger l;
    injector inj;
    tally t;
    uint64_t seq, tm;
    int rc;

    kring_ring_reset(&r.rb);
    if (sc.flags & KRING_RING_OVERWRITE) {
        /* Wrap a few times so that old records are overwritten. */
        for (int i = 0; i < 30; i++) {
            ASSERT_EQ(write_record(&r.rb, 200 + 8 * i, &seq), 0);
            l.note(0, seq, rec_end::Commit, 0);
        }
    } else {
        /* Leave free_bytes free (after the 16-byte pre_lost & 2 pad). */
        uint64_t pad = sc.pre_lost & 2 ? 16 : 0;
        uint64_t fill = r.size() - std::min<uint64_t>(r.size(), sc.free_bytes + pad);

        while (fill) {
            unsigned n = (unsigned)std::min<uint64_t>(fill, 2000);

            ASSERT_EQ(write_record(&r.rb, n, &seq), 0);
            l.note(0, seq, rec_end::Commit, 0);
            fill -= n;
        }
    }
    if (sc.pre_lost & 2) {
        /* Lost by an interrupt of a writer that then discards. */
        kring_output_handle h;

        ASSERT_EQ(kring_output_begin(&h, &r.rb, 16, 0), 0);
        l.note(0, h.seq, rec_end::Discard, 0);
        rc = write_record(&r.rb, 5000, &seq, 0, rec_end::Commit, &tm);
        ASSERT_ERRNO(rc, -E2BIG);
        l.note(rc, seq, rec_end::Commit, tm);
        kring_output_discard(&h);
    }
    if (sc.pre_lost & 1) {
        rc = write_record(&r.rb, 5000, &seq, 0, rec_end::Commit, &tm);
        ASSERT_ERRNO(rc, -E2BIG);
        l.note(rc, seq, rec_end::Commit, tm);
    }

    /* A wake-up is due after every record: exercise that path too. */
    kring_ring_set_wakeup(&r.rb, 0, 1);
    r.rb.wakeup = [](kring_ring* rb) { (*static_cast<int*>(rb->priv))++; };
    int wakes = 0;
    size_t before = l.written.size() + l.discarded.size();
    uint64_t wakeups_before = r.ctl->wakeups;

    r.rb.priv = &wakes;
    inj.r = &r;
    inj.ledger = &l;
    inj.backward = sc.flags & KRING_RING_OVERWRITE;
    inj.inject_at[0] = at0;
    inj.inject_at[1] = at1;
    inj.last_head = r.head();
    inj.writer = [&](int d) {
        uint64_t s, tt;
        int rc2 = write_record(&r.rb, sc.sizes[d], &s, 8, sc.ends[d], &tt);

        l.note(rc2, s, sc.ends[d], tt);
    };
    injector::cur = &inj;
    kring_host_irq_hook = injector::hook;
    inj.writer(0);
    kring_host_irq_hook = nullptr;
    if (points) {
        points[0] = inj.seen[0];
        points[1] = inj.seen[1];
    }

    /* The outer writer woke the consumer for whatever was reserved. */
    if (l.written.size() + l.discarded.size() > before) {
        EXPECT_GE(wakes, 1);
    }
    EXPECT_EQ(r.ctl->wakeups - wakeups_before, (uint64_t)wakes);
    r.rb.wakeup = nullptr;

    /* Everything reserved is published, nobody is left in flight. */
    EXPECT_EQ(r.rb.nest, 0u);
    EXPECT_EQ(r.head(), (uint64_t)r.rb.head.counter);
    inj.check_published();

    /*
     * The control page's counters are the ring's, whichever writer moved
     * them and wherever it interrupted the outermost one.
     */
    expect_counts_mirrored(r);

    if (!inj.backward) {
        ASSERT_TRUE(consume(r, t));
        /* A last record reports whatever losses are still pending. */
        rc = write_record(&r.rb, 16, &seq, 0, rec_end::Commit, &tm);
        ASSERT_EQ(rc, 0);
        l.note(rc, seq, rec_end::Commit, tm);
        ASSERT_TRUE(consume(r, t));
        EXPECT_EQ(r.rb.lost_pending.counter, 0);
        check_ledger(l, t);
    } else {
        /* The newest records, newest first, back to the outer writer's. */
        ASSERT_TRUE(walk_backward(r, t));
        std::vector<uint64_t> newest = l.written;

        std::sort(newest.rbegin(), newest.rend());
        ASSERT_LE(t.seqs.size(), newest.size());
        newest.resize(t.seqs.size());
        std::vector<uint64_t> seen = t.seqs;

        std::sort(seen.rbegin(), seen.rend());
        EXPECT_EQ(seen, newest);
        EXPECT_GE(t.seqs.size(), 3u);
    }
    kring_ring_counts c;
    kring_ring_read_counts(&r.rb, &c);
    if (inj.backward) {
        /* lost_overwritten stays a lower bound, however writers nested. */
        EXPECT_LE(c.lost_overwritten, l.written.size() + l.discarded.size() - t.seqs.size());
        EXPECT_GT(c.lost_overwritten, 0u);
    }
    EXPECT_EQ(c.produced,
              c.written + c.discarded + c.lost_no_space + c.lost_too_big + c.lost_paused);
    EXPECT_EQ(c.produced, l.written.size() + l.discarded.size() + l.lost.size());
}

TEST_P(RingInterleave, EveryPoint) {
    const scenario& sc = GetParam();
    host_ring r(1, sc.flags);
    int n[2] = {}, runs = 0;

    ASSERT_EQ(r.init_rc, 0);
    /* How many points the outer writer passes when nobody interrupts. */
    run_once(sc, r, -1, -1, n);
    ASSERT_GT(n[0], 5);
    for (int at0 = 0; at0 < n[0]; at0++) {
        int m[2] = {};

        /* How many its interrupter passes when nobody interrupts it. */
        run_once(sc, r, at0, -1, m);
        ASSERT_GT(m[1], 3);
        for (int at1 = 0; at1 < m[1]; at1++) {
            run_once(sc, r, at0, at1, nullptr);
            runs++;
            if (HasFailure())
                FAIL() << sc.name << ": interrupt at " << at0 << ", nested at " << at1;
        }
    }
    RecordProperty("runs", runs);
    printf("%s: %d interleavings\n", sc.name, runs);
    EXPECT_EQ(kring_host_warnings, 0u);
}

constexpr rec_end C = rec_end::Commit, D = rec_end::Discard, O = rec_end::OneCall;

const scenario kScenarios[] = {
    {"roomy", 0, 4096, 0, {40, 24, 16}, {C, C, C}},
    {"roomy_pending_loss", 0, 4096, 1, {40, 24, 16}, {C, C, C}},
    {"roomy_pending_deep_loss", 0, 4096, 2, {40, 24, 16}, {C, C, C}},
    {"roomy_pending_losses", 0, 4096, 3, {40, 24, 16}, {C, C, C}},
    {"room_for_two", 0, 56 + 40 + 24, 1, {40, 24, 16}, {C, C, C}},
    {"room_for_two_deep", 0, 56 + 40 + 24, 3, {40, 24, 16}, {C, C, C}},
    {"room_for_one", 0, 56 + 40, 1, {40, 24, 16}, {C, C, C}},
    {"room_for_one_deep", 0, 56 + 40, 2, {40, 24, 16}, {C, C, C}},
    {"room_for_one_no_loss", 0, 40, 0, {40, 24, 16}, {C, C, C}},
    {"room_for_small", 0, 56 + 24, 1, {40, 24, 16}, {C, D, C}},
    {"full", 0, 8, 3, {40, 24, 16}, {C, C, C}},
    {"discards", 0, 4096, 3, {40, 24, 16}, {D, C, D}},
    {"backward", KRING_RING_OVERWRITE, 0, 0, {40, 24, 16}, {C, C, C}},
    {"backward_discard", KRING_RING_OVERWRITE, 0, 0, {48, 32, 16}, {C, D, C}},
    /* The innermost writer in one call (kring_output_write()). */
    {"one_call_roomy", 0, 4096, 3, {40, 24, 16}, {C, C, O}},
    {"one_call_room_for_two", 0, 56 + 40 + 24, 1, {40, 24, 16}, {C, C, O}},
    {"one_call_room_for_one", 0, 56 + 40, 2, {40, 24, 16}, {C, C, O}},
    {"one_call_discards", 0, 4096, 3, {40, 24, 16}, {D, C, O}},
    {"one_call_backward", KRING_RING_OVERWRITE, 0, 0, {40, 24, 16}, {C, C, O}},
};

INSTANTIATE_TEST_SUITE_P(Scenarios, RingInterleave, ::testing::ValuesIn(kScenarios),
                         [](const auto& info) { return std::string(info.param.name); });

}  // namespace

/*
 * One writer CPU at a time: a writer that enters the ring on another CPU
 * while one is in flight is caught (a warning); nested writers on the
 * writer's own CPU, and a second CPU after the first is done, are not.
 */
TEST(RingNest, SecondCpuWhileInFlightWarns) {
    host_ring r(4);
    kring_output_handle outer, inner;
    unsigned long w = kring_host_warnings;
    uint64_t seq, tm;

    ASSERT_EQ(r.init_rc, 0);
    kring_host_cpu = 0;
    ASSERT_EQ(kring_output_begin(&outer, &r.rb, 16, 0), 0);
    kring_output_header(&outer, kTestType, 0);
    kring_output_copy(&outer, &outer.seq, 8);
    /* An interrupt on the same CPU nests: no warning. */
    ASSERT_EQ(write_record(&r.rb, 16, &seq, 0, rec_end::Commit, &tm), 0);
    EXPECT_EQ(kring_host_warnings, w);
    /* Another CPU enters while the outer writer is in flight. */
    kring_host_cpu = 1;
    ASSERT_EQ(kring_output_begin(&inner, &r.rb, 16, 0), 0);
    EXPECT_EQ(kring_host_warnings, w + 1);
    kring_output_discard(&inner);
    kring_host_cpu = 0;
    kring_output_end(&outer);
    /* Done: the next writer may be anywhere. */
    kring_host_cpu = 1;
    ASSERT_EQ(write_record(&r.rb, 16, &seq, 0, rec_end::Commit, &tm), 0);
    EXPECT_EQ(kring_host_warnings, w + 1);
    kring_host_cpu = 0;
    kring_host_warnings = w;
}
