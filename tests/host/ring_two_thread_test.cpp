// SPDX-License-Identifier: GPL-2.0
/*
 * (i) The ring core as the producer in one thread and a minimal consumer in
 * another: load-acquire of data_head (C), store-release of data_tail (D),
 * and the need_wakeup handshake (F) before sleeping. Every record is
 * checked word by word; at the end the accounting must be exact: every
 * sequence number was delivered once, or lies in the range of a LOST
 * record, and delivered + lost == produced.
 *
 * Built twice: normally (KRING_TWO_THREAD_RECORDS = 10^7) and under
 * ThreadSanitizer with the shim's acquire/release once-accesses.
 */
#include <semaphore.h>
#include <time.h>

#include <thread>

#include "ring_test_util.hpp"

#ifndef KRING_TWO_THREAD_RECORDS
#define KRING_TWO_THREAD_RECORDS 10000000ULL
#endif

using namespace kt;

namespace {

unsigned size_of(uint64_t seq) {
    return 16 + 8 * (unsigned)((seq * 0x9E3779B97F4A7C15ULL >> 59) % 31);
}

struct shared_state {
    host_ring ring;
    sem_t wake;
    std::atomic<bool> done{false};
    std::atomic<uint64_t> produced{0};

    explicit shared_state(unsigned pages) : ring(pages) { sem_init(&wake, 0, 0); }
    ~shared_state() { sem_destroy(&wake); }
};

shared_state* g_shared;

void wake_cb(kring_ring*) { sem_post(&g_shared->wake); }

void producer(shared_state* s, uint64_t n) {
    kring_ring* rb = &s->ring.rb;
    uint64_t seq = 0;

    for (uint64_t i = 0; i < n; i++) {
        /*
         * A kernel producer never waits; this one gives the consumer
         * a chance after a loss, so that both deliveries and losses
         * are plentiful however the two threads are scheduled.
         */
        if (write_record(rb, size_of(i), &seq))
            std::this_thread::yield();
        if (seq != i)
            abort();
    }
    /* Flush: the last losses go out with a record that fits. */
    while (write_record(rb, size_of(seq + 1), &seq))
        std::this_thread::yield();
    s->produced.store(seq + 1, std::memory_order_relaxed);
    s->done.store(true, std::memory_order_release);
    sem_post(&s->wake);
}

struct consumer_result {
    uint64_t delivered = 0, lost = 0, sleeps = 0, bad = 0;
    std::vector<uint8_t> seen;
    std::vector<kring_lost_record> losts;
};

/* Consume one record at @pos; wrapped records are copied out once. */
unsigned consume_one(host_ring& r, uint64_t pos, uint64_t limit, consumer_result& res,
                     std::vector<uint64_t>& scratch) {
    kring_record_header hdr;

    r.read(pos, &hdr, sizeof(hdr));
    if (hdr.size < 8 || hdr.size % 8 || hdr.size > limit) {
        res.bad++;
        return 0;
    }
    if (hdr.type == KRING_RECORD_LOST) {
        kring_lost_record l;

        r.read(pos, &l, sizeof(l));
        res.lost += l.lost;
        res.losts.push_back(l);
        return hdr.size;
    }
    if (hdr.type != kTestType || hdr.size < 16) {
        res.bad++;
        return 0;
    }
    const uint64_t* w;
    uint64_t off = pos & (kPage - 1);

    if (off + hdr.size <= kPage) {
        w = reinterpret_cast<const uint64_t*>(r.byte_at(pos) + 8);
    } else {
        scratch.resize(hdr.size / 8);
        r.read(pos + 8, scratch.data(), hdr.size - 8);
        w = scratch.data();
    }
    uint64_t seq = w[0];

    if (seq >= res.seen.size() || res.seen[seq] || hdr.size != size_of(seq)) {
        res.bad++;
        return hdr.size;
    }
    for (unsigned j = 1; j < (hdr.size - 8U) / 8; j++) {
        if (w[j] != word(seq, j)) {
            res.bad++;
            return hdr.size;
        }
    }
    res.seen[seq] = 1;
    res.delivered++;
    return hdr.size;
}

void consumer(shared_state* s, consumer_result& res) {
    host_ring& r = s->ring;
    kring_ctl_page* ctl = r.ctl;
    std::vector<uint64_t> scratch;
    uint64_t tail = r.tail();
    unsigned idle = 0;

    /* Busy-poll at first: no wake-ups wanted. */
    std::atomic_ref<__u64>(ctl->need_wakeup).store(0, std::memory_order_relaxed);
    for (;;) {
        uint64_t head = load_acquire(ctl->data_head); /* C */

        if (head == tail) {
            if (s->done.load(std::memory_order_acquire) && load_acquire(ctl->data_head) == tail)
                break;
            if (++idle < 64) {
                std::this_thread::yield();
                continue;
            }
            /*
             * Sleep: ask for a wake-up, full barrier (F, pairs with
             * the kernel's E), look again, then wait.
             */
#ifndef KRING_HOST_TSAN
            std::atomic_ref<__u64>(ctl->need_wakeup).store(1, std::memory_order_relaxed);
            std::atomic_thread_fence(std::memory_order_seq_cst);
#else
            /* TSan knows no fences: a full-barrier RMW instead. */
            std::atomic_ref<__u64>(ctl->need_wakeup).exchange(1, std::memory_order_seq_cst);
#endif
            if (load_acquire(ctl->data_head) == tail && !s->done.load(std::memory_order_acquire)) {
                struct timespec ts;

                clock_gettime(CLOCK_REALTIME, &ts);
                ts.tv_nsec += 2000000;
                if (ts.tv_nsec >= 1000000000) {
                    ts.tv_sec++;
                    ts.tv_nsec -= 1000000000;
                }
                sem_timedwait(&s->wake, &ts);
                res.sleeps++;
            }
            std::atomic_ref<__u64>(ctl->need_wakeup).store(0, std::memory_order_relaxed);
            idle = 0;
            continue;
        }
        idle = 0;
        if (head - tail > r.size()) {
            res.bad++;
            break;
        }
        while (tail != head) {
            unsigned n = consume_one(r, tail, head - tail, res, scratch);

            if (!n)
                break;
            tail += n;
        }
        if (tail != head)
            break;
        store_release(ctl->data_tail, tail); /* D */
    }
}

TEST(RingTwoThreads, ExactAccounting) {
    const uint64_t n = KRING_TWO_THREAD_RECORDS;
    shared_state s(16);
    consumer_result res;

    ASSERT_EQ(s.ring.init_rc, 0);
    g_shared = &s;
    s.ring.rb.wakeup = wake_cb;
    kring_ring_set_wakeup(&s.ring.rb, 0, 0);
    res.seen.assign(n + 1000000, 0);

    std::thread c(consumer, &s, std::ref(res));
    std::thread p(producer, &s, n);

    p.join();
    c.join();

    const uint64_t produced = s.produced.load();
    kring_ring_counts cnt;

    kring_ring_read_counts(&s.ring.rb, &cnt);
    EXPECT_EQ(res.bad, 0u);
    EXPECT_EQ(cnt.produced, produced);
    EXPECT_EQ(res.delivered + res.lost, produced);
    EXPECT_EQ(res.delivered, cnt.written);
    EXPECT_EQ(res.lost, cnt.lost_no_space);
    EXPECT_EQ(s.ring.ctl->records_written, cnt.written);
    EXPECT_EQ(s.ring.ctl->lost_no_space, cnt.lost_no_space);
    EXPECT_EQ(s.ring.rb.lost_pending.counter, 0);

    /*
     * One writer, no nesting: LOST ranges are exact, contiguous, disjoint
     * and cover precisely the seqs never delivered.
     */
    std::vector<uint8_t> covered(produced, 0);
    for (const auto& l : res.losts) {
        ASSERT_LT(l.last_seq, produced);
        ASSERT_EQ(l.last_seq - l.first_seq + 1, l.lost);
        EXPECT_EQ(l.first_time, time_of(l.first_seq));
        EXPECT_EQ(l.last_time, time_of(l.last_seq));
        for (uint64_t q = l.first_seq; q <= l.last_seq; q++) {
            ASSERT_FALSE(covered[q]) << "seq " << q << " in two LOST records";
            covered[q] = 1;
        }
    }
    uint64_t missing = 0;

    for (uint64_t q = 0; q < produced; q++)
        if (!res.seen[q] == !covered[q])
            missing++;
    EXPECT_EQ(missing, 0u) << "seqs neither delivered nor lost, or both";
    RecordProperty("produced", (int)produced);
    RecordProperty("lost", (int)res.lost);
    RecordProperty("sleeps", (int)res.sleeps);
    printf(
        "produced %lu, delivered %lu, lost %lu in %zu LOST records, "
        "%lu wake-ups, %lu consumer sleeps\n",
        (unsigned long)produced, (unsigned long)res.delivered, (unsigned long)res.lost,
        res.losts.size(), (unsigned long)cnt.wakeups, (unsigned long)res.sleeps);
}

}  // namespace
