// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kring_ring": the data-ring core (kmod/ring.c) in the kernel,
 * through its exported producer API: reserve/commit/wrap at every offset,
 * copies across pages, nested writers (simulated, and a real hrtimer
 * interrupting a task-context writer), lost accounting and the LOST
 * record, backward writing, discard, wake-up arithmetic and garbage tails.
 *
 * Test records: tests/common/test_record.h, shared with the host suites.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/hrtimer.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "compat.h"
#include "ring.h"
#include "test_record.h"

struct test_ring {
	struct kring_ring rb;
	struct kring_ctl_page *ctl;
	void **pages;
	unsigned int nr;
};

static void test_free_page(void *addr)
{
	free_page((unsigned long)addr);
}

static struct test_ring *test_ring_new(struct kunit *test, unsigned int nr,
				       unsigned int flags)
{
	struct test_ring *tr = kunit_kzalloc(test, sizeof(*tr), GFP_KERNEL);
	unsigned int i;
	void *p;

	KUNIT_ASSERT_NOT_NULL(test, tr);
	tr->nr = nr;
	tr->pages = kunit_kcalloc(test, nr, sizeof(void *), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tr->pages);
	for (i = 0; i <= nr; i++) {
		p = (void *)get_zeroed_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p);
		KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, test_free_page, p));
		if (i < nr)
			tr->pages[i] = p;
		else
			tr->ctl = p;
	}
	KUNIT_ASSERT_EQ(test, 0, kring_ring_init(&tr->rb, tr->ctl, tr->pages, nr,
						 flags, 42));
	return tr;
}

static u8 *test_byte(struct test_ring *tr, u64 pos)
{
	return (u8 *)tr->pages[(pos >> PAGE_SHIFT) & (tr->nr - 1)] +
	       (pos & (PAGE_SIZE - 1));
}

static void test_read(struct test_ring *tr, u64 pos, void *dst, size_t len)
{
	u8 *out = dst;

	while (len) {
		size_t n = min_t(size_t, len, PAGE_SIZE - (pos & (PAGE_SIZE - 1)));

		memcpy(out, test_byte(tr, pos), n);
		out += n;
		pos += n;
		len -= n;
	}
}

/* As if the consumer had read everything up to @pos (empty, quiet ring). */
static void test_seek(struct test_ring *tr, u64 pos)
{
	local_set(&tr->rb.head, pos);
	local_set(&tr->rb.wakeup_pos, pos);
	tr->ctl->data_head = pos;
	tr->ctl->data_tail = pos;
}

enum test_end { END_COMMIT, END_DISCARD };

/*
 * Write one test record in copies of @chunk bytes (0: one copy); returns
 * kring_output_begin()'s result, *@seq the sequence number either way.
 */
static int test_write(struct kring_ring *rb, unsigned int size, u64 *seq,
		      unsigned int chunk, enum test_end end)
{
	struct kring_output_handle h;
	u64 w, j, words;
	unsigned int done;
	int err;

	preempt_disable();
	err = kring_output_begin(&h, rb, size, kring_test_time(local64_read(&rb->seq)));
	if (seq)
		*seq = h.seq;
	if (err)
		goto out;
	kring_output_header(&h, KRING_TEST_RECORD_TYPE, 0);
	words = (h.rec_size - 8) / 8;
	for (j = 0; j < words; j++) {
		w = j ? kring_test_word(h.seq, j) : h.seq;
		if (!chunk) {
			kring_output_copy(&h, &w, 8);
			continue;
		}
		for (done = 0; done < 8; done += chunk)
			kring_output_copy(&h, (u8 *)&w + done, min(chunk, 8 - done));
	}
	if (end == END_DISCARD)
		kring_output_discard(&h);
	else
		kring_output_end(&h);
out:
	preempt_enable();
	return err;
}

struct tally {
	u64 records;
	u64 pads;
	u64 lost;
	u64 losts;
	u64 last_seq;		/* of the last test record */
	struct kring_lost_record last_lost;
	bool bad;
};

/* Check the record at @pos; return its size, or 0 if it is malformed. */
static unsigned int test_check(struct kunit *test, struct test_ring *tr, u64 pos,
			       u64 limit, struct tally *t)
{
	struct kring_record_header hdr;
	u64 seq, w, j;

	test_read(tr, pos, &hdr, sizeof(hdr));
	if (hdr.size < 8 || hdr.size % 8 || hdr.size > limit) {
		KUNIT_FAIL(test, "bad record size %u at %llu", hdr.size, pos);
		t->bad = true;
		return 0;
	}
	switch (hdr.type) {
	case KRING_TEST_RECORD_TYPE:
		t->records++;
		if (hdr.size == 8)
			break;
		test_read(tr, pos + 8, &seq, 8);
		t->last_seq = seq;
		for (j = 1; j < (hdr.size - 8) / 8; j++) {
			test_read(tr, pos + 8 * (j + 1), &w, 8);
			if (w != kring_test_word(seq, j)) {
				KUNIT_FAIL(test, "seq %llu word %llu corrupt at %llu",
					   seq, j, pos);
				t->bad = true;
				return 0;
			}
		}
		break;
	case KRING_RECORD_PAD:
		t->pads++;
		break;
	case KRING_RECORD_LOST:
		KUNIT_EXPECT_EQ(test, hdr.size, (u16)sizeof(t->last_lost));
		test_read(tr, pos, &t->last_lost, sizeof(t->last_lost));
		KUNIT_EXPECT_EQ(test, t->last_lost.id, 42ULL);
		KUNIT_EXPECT_LE(test, t->last_lost.first_seq, t->last_lost.last_seq);
		t->lost += t->last_lost.lost;
		t->losts++;
		break;
	default:
		KUNIT_FAIL(test, "unknown record type %u at %llu", hdr.type, pos);
		t->bad = true;
		return 0;
	}
	return hdr.size;
}

/* Forward consumer: read tail..head (acquire, C), release (D). */
static bool test_consume(struct kunit *test, struct test_ring *tr, struct tally *t)
{
	u64 head = smp_load_acquire(&tr->ctl->data_head); /* C, pairs with B */
	u64 tail = tr->ctl->data_tail;
	unsigned int n;

	if (head - tail > tr->rb.data_size) {
		KUNIT_FAIL(test, "head %llu too far ahead of tail %llu", head, tail);
		return false;
	}
	while (tail != head) {
		n = test_check(test, tr, tail, head - tail, t);
		if (!n)
			return false;
		tail += n;
	}
	smp_store_release(&tr->ctl->data_tail, tail); /* D, pairs with A */
	return true;
}

static void test_expect_accounting(struct kunit *test, struct test_ring *tr)
{
	struct kring_ring_counts c;

	kring_ring_read_counts(&tr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.produced, c.written + c.discarded + c.lost_no_space +
			c.lost_too_big + c.lost_paused);
	KUNIT_EXPECT_EQ(test, tr->ctl->records_written, c.written);
	KUNIT_EXPECT_EQ(test, tr->ctl->records_discarded, c.discarded);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_no_space, c.lost_no_space);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_too_big, c.lost_too_big);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_paused, c.lost_paused);
}

/* ---- reserve / commit / wrap at every offset ---------------------------- */

static const unsigned int wrap_sizes[] = { 8, 13, 16, 24, 56, 64, 200, 2048, 4040 };

static void wrap_size_desc(const unsigned int *size, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "size %u", *size);
}

KUNIT_ARRAY_PARAM(wrap_size, wrap_sizes, wrap_size_desc);

/*
 * The offsets a wrap case visits: on a 4 KiB page every one (every 8th
 * byte), as the area is one page. A larger page's area is walked where it
 * matters, in time linear in its size rather than quadratic: every offset
 * of its last 8 KiB, where each record size meets the end at each of its
 * residues, and one every 4072 bytes before (a 64 KiB area took minutes
 * under emulation when walked whole).
 */
static u64 wrap_next_off(u64 off, u64 n)
{
	if (n <= SZ_8K || off + SZ_8K >= n)
		return off + 8;
	return min(off + 4072, n - SZ_8K);
}

static void ring_wrap_every_offset(struct kunit *test)
{
	const unsigned int size = *(const unsigned int *)test->param_value;
	const unsigned int rsize = round_up(size, 8U);
	struct test_ring *tr = test_ring_new(test, 1, 0);
	const u64 n = tr->rb.data_size;
	u64 off, pos, i, j, span, written, seq;

	for (off = 0; off < n; off = wrap_next_off(off, n)) {
		struct tally t = {};
		u64 want = 0;

		/* Alternate low positions and ones about to wrap 2^64. */
		pos = (off & 8) ? off : (u64)-3 * n + off;
		kring_ring_reset(&tr->rb);
		test_seek(tr, pos);
		memset(tr->pages[0], 0xa5, PAGE_SIZE);

		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, size, &seq, 0, END_COMMIT), 0);
		want++;
		KUNIT_ASSERT_EQ(test, tr->ctl->data_head, pos + rsize);
		/*
		 * Nothing outside the record was written: the whole area, or
		 * in a large page's last 8 KiB (visited densely) 4 KiB either
		 * side of the record.
		 */
		span = n;
		if (n > SZ_8K && off + SZ_8K >= n)
			span = min_t(u64, n, rsize + SZ_8K);
		for (j = 0; j < span; j++) {
			bool inside;

			i = span == n ? j : (pos - SZ_4K + j) & (n - 1);
			inside = ((i - (pos & (n - 1))) & (n - 1)) < rsize;
			if (!inside && *test_byte(tr, i) != 0xa5) {
				KUNIT_FAIL(test, "byte %llu written, record at %llu", i, off);
				return;
			}
		}
		KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
		/* On across the end of the data area. */
		for (written = rsize; written < n - off + rsize; written += rsize) {
			KUNIT_ASSERT_EQ(test, test_write(&tr->rb, size, &seq, 0,
							 END_COMMIT), 0);
			want++;
			KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
		}
		KUNIT_ASSERT_EQ(test, t.records, want);
		KUNIT_ASSERT_EQ(test, tr->ctl->data_tail, pos + written);
		if (rsize > 8)
			KUNIT_ASSERT_EQ(test, t.last_seq, seq);
		cond_resched();
	}
	test_expect_accounting(test, tr);
}

/* ---- copies across pages ------------------------------------------------ */

static void ring_page_boundary_copies(struct kunit *test)
{
	static const unsigned int sizes[] = { 24, 4096, 5000, 12288, 4 * 4096 - 56 };
	static const unsigned int chunks[] = { 0, 1, 3, 5, 7 };
	static const u64 offs[] = { 0, 8, 4088, 4080, 8184, 16376, 12000 };
	struct test_ring *tr = test_ring_new(test, 4, 0);
	unsigned int s, c, o;
	u64 seq;

	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (c = 0; c < ARRAY_SIZE(chunks); c++) {
			for (o = 0; o < ARRAY_SIZE(offs); o++) {
				struct tally t = {};

				kring_ring_reset(&tr->rb);
				test_seek(tr, offs[o] + 3 * tr->rb.data_size);
				KUNIT_ASSERT_EQ(test, test_write(&tr->rb, sizes[s], &seq,
								 chunks[c], END_COMMIT), 0);
				KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
				KUNIT_ASSERT_EQ(test, t.records, 1ULL);
				KUNIT_ASSERT_EQ(test, t.last_seq, seq);
			}
		}
	}
}

/* Unwritten bytes of a reservation are zeroed; sizes round up to 8. */
static void ring_unwritten_tail_zeroed(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, 0);
	struct kring_output_handle h;
	u64 w, i;

	memset(tr->pages[0], 0xff, PAGE_SIZE);
	memset(tr->pages[1], 0xff, PAGE_SIZE);
	test_seek(tr, PAGE_SIZE - 16);
	preempt_disable();
	KUNIT_ASSERT_EQ(test, kring_output_begin(&h, &tr->rb, 197, 0), 0);
	KUNIT_EXPECT_EQ(test, h.rec_size, 200U);
	kring_output_header(&h, KRING_TEST_RECORD_TYPE, 0);
	kring_output_end(&h);
	preempt_enable();
	for (i = 8; i < 200; i += 8) {
		test_read(tr, PAGE_SIZE - 16 + i, &w, 8);
		KUNIT_EXPECT_EQ(test, w, 0ULL);
	}
}

/* ---- nesting ------------------------------------------------------------ */

/* Writers interrupting a writer: only the outermost publishes data_head. */
static void ring_nesting_simulated(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	struct kring_output_handle a, b;
	struct kring_ring_counts c;
	struct tally t = {};
	const u64 start = PAGE_SIZE - 24;
	u64 w, j;

	test_seek(tr, start);
	preempt_disable();
	KUNIT_ASSERT_EQ(test, kring_output_begin(&a, &tr->rb, 64, 1), 0);
	kring_output_header(&a, KRING_TEST_RECORD_TYPE, 0);
	kring_output_copy(&a, &a.seq, 8);

	/* "softirq": a whole record inside A */
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 40, NULL, 0, END_COMMIT), 0);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, start);
	KUNIT_EXPECT_EQ(test, tr->rb.nest, 1U);

	/* "hardirq" B, interrupted by an "NMI" record */
	KUNIT_ASSERT_EQ(test, kring_output_begin(&b, &tr->rb, 16, 2), 0);
	KUNIT_EXPECT_EQ(test, tr->rb.nest, 2U);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 32, NULL, 3, END_COMMIT), 0);
	kring_output_header(&b, KRING_TEST_RECORD_TYPE, 0);
	kring_output_copy(&b, &b.seq, 8);
	kring_output_end(&b);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, start);

	for (j = 1; j < 7; j++) {
		w = kring_test_word(a.seq, j);
		kring_output_copy(&a, &w, 8);
	}
	kring_output_end(&a);
	preempt_enable();

	KUNIT_EXPECT_EQ(test, tr->rb.nest, 0U);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, start + 64 + 40 + 16 + 32);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.records, 4ULL);
	KUNIT_EXPECT_EQ(test, t.last_seq, 3ULL);	/* reservation order */
	kring_ring_read_counts(&tr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.nested, 3ULL);
}

/* A nested writer's loss is reported by a later record. */
static void ring_nesting_loss(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	/* What leaves room for a 16-byte record and no more: 4000 on 4 KiB */
	const unsigned int big = PAGE_SIZE - 96;
	struct kring_output_handle a;
	struct tally t = {};
	u64 seq, w, j;

	preempt_disable();
	KUNIT_ASSERT_EQ(test, kring_output_begin(&a, &tr->rb, big, 0), 0);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 200, &seq, 0, END_COMMIT), -ENOSPC);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 16, NULL, 0, END_COMMIT), 0);
	kring_output_header(&a, KRING_TEST_RECORD_TYPE, 0);
	kring_output_copy(&a, &a.seq, 8);
	for (j = 1; j < (big - 8) / 8; j++) {
		w = kring_test_word(a.seq, j);
		kring_output_copy(&a, &w, 8);
	}
	kring_output_end(&a);
	preempt_enable();
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.losts, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.lost, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_seq, seq);
	KUNIT_EXPECT_EQ(test, t.records, 2ULL);
	test_expect_accounting(test, tr);
}

/*
 * A real interrupt: an hrtimer pinned to this CPU writes records in hardirq
 * context (a hard one: on PREEMPT_RT the others expire in a thread, which
 * never interrupts a writer with preemption disabled) while this task
 * writes records with preemption disabled (so both run on one CPU, as the
 * ring requires) and consumes them. Ten bursts of
 * 20 ms, and more until a timer record has nested in a task record: when
 * the timer fires is up to the host (bounded by a minute, which only a
 * timer that never fires reaches).
 */
struct irq_ctx {
	struct hrtimer timer;
	struct test_ring *tr;
	u64 fired;
	u64 failed;
};

static enum hrtimer_restart ring_irq_writer(struct hrtimer *timer)
{
	struct irq_ctx *ctx = container_of(timer, struct irq_ctx, timer);

	ctx->fired++;
	if (test_write(&ctx->tr->rb, 24 + 8 * (ctx->fired % 8), NULL, 0, END_COMMIT))
		ctx->failed++;
	hrtimer_forward_now(timer, ns_to_ktime(20 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void ring_nesting_hardirq(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	struct irq_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	struct kring_ring_counts c;
	struct tally t = {};
	u64 end, give_up, i = 0;
	int burst;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->tr = tr;
	kring_hrtimer_setup(&ctx->timer, ring_irq_writer, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_PINNED_HARD);

	give_up = ktime_get_ns() + 60 * NSEC_PER_SEC;
	for (burst = 0; burst < 10 || (!local64_read(&tr->rb.nested) && ktime_get_ns() < give_up);
	     burst++) {
		preempt_disable();
		hrtimer_start(&ctx->timer, ns_to_ktime(20 * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
		end = ktime_get_ns() + 20 * NSEC_PER_MSEC;
		while (ktime_get_ns() < end && !t.bad) {
			/* chunked: long enough to be interrupted mid-record */
			test_write(&tr->rb, 16 + 8 * (i++ % 32), NULL, 1, END_COMMIT);
			if (!(i % 16))
				test_consume(test, tr, &t);
		}
		hrtimer_cancel(&ctx->timer);
		preempt_enable();
		cond_resched();
	}
	/* Empty the ring, then flush pending losses with one more record. */
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 16, NULL, 0, END_COMMIT), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));

	kring_ring_read_counts(&tr->rb, &c);
	kunit_info(test, "%llu task records, %llu timer records (%llu lost), %llu nested, %llu lost in all",
		   i, ctx->fired, ctx->failed, c.nested, c.lost_no_space);
	KUNIT_EXPECT_GT(test, ctx->fired, 0ULL);
	KUNIT_EXPECT_GT(test, c.nested, 0ULL);
	KUNIT_EXPECT_EQ(test, c.produced, i + ctx->fired + 1);
	KUNIT_EXPECT_EQ(test, t.records, c.written);
	KUNIT_EXPECT_EQ(test, t.lost, c.lost_no_space);
	KUNIT_EXPECT_EQ(test, t.records + t.lost, c.produced);
	KUNIT_EXPECT_EQ(test, local_read(&tr->rb.lost_pending), 0L);
	test_expect_accounting(test, tr);
}

/* ---- lost accounting ---------------------------------------------------- */

static void ring_lost_record(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	const u64 fill = PAGE_SIZE / 64;
	struct tally t = {};
	u64 seq;
	int i;

	/* One page of 64-byte records fills the one-page ring. */
	for (i = 0; i < (int)fill; i++)
		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 64, NULL, 0, END_COMMIT), 0);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 64, NULL, 0, END_COMMIT),
				-ENOSPC);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_no_space, 5ULL);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.losts, 0ULL);

	/* The next record comes after a LOST record, in one reservation. */
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 64, &seq, 0, END_COMMIT), 0);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, (u64)PAGE_SIZE + 56 + 64);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_ASSERT_EQ(test, t.losts, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.header.type, (u32)KRING_RECORD_LOST);
	KUNIT_EXPECT_EQ(test, t.last_lost.lost, 5ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_seq, fill);
	KUNIT_EXPECT_EQ(test, t.last_lost.last_seq, fill + 4);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_time, kring_test_time(fill));
	KUNIT_EXPECT_EQ(test, t.last_lost.last_time, kring_test_time(fill + 4));
	KUNIT_EXPECT_EQ(test, t.last_seq, fill + 5);
	KUNIT_EXPECT_EQ(test, seq, fill + 5);
	test_expect_accounting(test, tr);
}

static void ring_lost_causes(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	/* The largest record a one-page ring takes: 4040 on 4 KiB pages */
	const unsigned int max = min_t(unsigned long, KRING_RECORD_MAX_SIZE,
				       PAGE_SIZE - KRING_LOST_RECORD_SIZE);
	struct tally t = {};

	KUNIT_EXPECT_EQ(test, tr->rb.max_record, max);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, max + 1, NULL, 0, END_COMMIT), -E2BIG);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 70000, NULL, 0, END_COMMIT), -E2BIG);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 4, NULL, 0, END_COMMIT), -E2BIG);
	kring_ring_set_paused(&tr->rb, true);
	KUNIT_EXPECT_EQ(test, tr->ctl->flags, KRING_CTL_F_PAUSED);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 64, NULL, 0, END_COMMIT), -EAGAIN);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, 0ULL);
	kring_ring_set_paused(&tr->rb, false);
	KUNIT_EXPECT_EQ(test, tr->ctl->flags, 0ULL);
	/* the largest record still fits an empty ring with its LOST record */
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, max, NULL, 0, END_COMMIT), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.last_lost.lost, 4ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_seq, 0ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.last_seq, 3ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_too_big, 3ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_paused, 1ULL);
	test_expect_accounting(test, tr);
}

/* ---- backward writing --------------------------------------------------- */

static unsigned int back_size(u64 i)
{
	return 16 + 8 * ((i * 7919) % 40);
}

static void ring_backward(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, KRING_RING_OVERWRITE);
	u64 i, k, pos, head, bytes = 0, fit, nfit;
	struct tally t;

	tr->ctl->data_tail = 12345;		/* ignored */
	for (i = 0; i < 2000; i++) {
		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, back_size(i), NULL, 0,
						 END_COMMIT), 0);
		bytes += back_size(i);
		KUNIT_ASSERT_EQ(test, tr->ctl->data_head, -bytes);
		if (i % 61)
			continue;

		/* perf's overwrite reader: from data_head up to one area. */
		memset(&t, 0, sizeof(t));
		head = smp_load_acquire(&tr->ctl->data_head); /* C, pairs with B */
		for (pos = head; pos - head < tr->rb.data_size;) {
			struct kring_record_header hdr;

			test_read(tr, pos, &hdr, sizeof(hdr));
			if (!hdr.size || pos - head + hdr.size > tr->rb.data_size)
				break;
			KUNIT_ASSERT_NE(test, test_check(test, tr, pos, hdr.size, &t),
					0U);
			/* newest first, consecutive */
			KUNIT_ASSERT_EQ(test, t.last_seq, i - (t.records - 1));
			pos += hdr.size;
		}
		for (k = i + 1, fit = 0, nfit = 0; k-- > 0; nfit++) {
			if (fit + back_size(k) > tr->rb.data_size)
				break;
			fit += back_size(k);
		}
		KUNIT_ASSERT_EQ(test, t.records, nfit);
		KUNIT_EXPECT_LE(test, tr->ctl->lost_overwritten, i + 1 - nfit);
	}
	KUNIT_EXPECT_GT(test, tr->ctl->lost_overwritten, 0ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_no_space, 0ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_tail, 12345ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->flags, KRING_CTL_F_OVERWRITE);
}

/* ---- discard ------------------------------------------------------------ */

static void ring_discard(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	struct kring_record_header hdr;
	struct tally t = {};
	u64 seq, pad_seq;

	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 48, &seq, 0, END_DISCARD), 0);
	test_read(tr, 0, &hdr, sizeof(hdr));
	KUNIT_EXPECT_EQ(test, hdr.type, (u32)KRING_RECORD_PAD);
	KUNIT_EXPECT_EQ(test, hdr.size, 48);
	test_read(tr, 8, &pad_seq, 8);
	KUNIT_EXPECT_EQ(test, pad_seq, seq);
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 8, NULL, 0, END_DISCARD), 0);
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 24, NULL, 0, END_COMMIT), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.pads, 2ULL);
	KUNIT_EXPECT_EQ(test, t.records, 1ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->records_discarded, 2ULL);
	test_expect_accounting(test, tr);
}

/* ---- wake-ups ----------------------------------------------------------- */

static int wake_calls;

static void test_wakeup(struct kring_ring *rb)
{
	wake_calls++;
}

static void ring_watermark(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, 0);
	struct tally t = {};
	u64 written = 0;
	int i;

	tr->rb.wakeup = test_wakeup;
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, PAGE_SIZE);	/* half */
	wake_calls = 0;
	for (i = 0; i < (int)(10 * PAGE_SIZE / 40); i++) {	/* ten wake-ups */
		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 40, NULL, 0, END_COMMIT), 0);
		written += 40;
		KUNIT_ASSERT_EQ(test, wake_calls, (int)(written / PAGE_SIZE));
		KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	}
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeups, (u64)wake_calls);

	/* poll's view: readable once the watermark's worth is unread */
	KUNIT_EXPECT_FALSE(test, kring_ring_readable(&tr->rb));
	for (written = 0; written + 40 <= PAGE_SIZE - 16; written += 40)
		test_write(&tr->rb, 40, NULL, 0, END_COMMIT);	/* 16 to 55 short */
	KUNIT_EXPECT_FALSE(test, kring_ring_readable(&tr->rb));
	test_write(&tr->rb, PAGE_SIZE - written, NULL, 0, END_COMMIT);	/* a page */
	KUNIT_EXPECT_TRUE(test, kring_ring_readable(&tr->rb));
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));

	/* 100 bytes: one wake-up per crossing, however many it crosses */
	kring_ring_set_wakeup(&tr->rb, 100, 0);
	kring_ring_reset(&tr->rb);
	wake_calls = 0;
	test_write(&tr->rb, 96, NULL, 0, END_COMMIT);
	KUNIT_EXPECT_EQ(test, wake_calls, 0);
	test_write(&tr->rb, 8, NULL, 0, END_COMMIT);		/* 104 */
	KUNIT_EXPECT_EQ(test, wake_calls, 1);
	test_write(&tr->rb, 400, NULL, 0, END_COMMIT);	/* 504 */
	KUNIT_EXPECT_EQ(test, wake_calls, 2);
	test_write(&tr->rb, 8, NULL, 0, END_COMMIT);		/* 512 */
	KUNIT_EXPECT_EQ(test, wake_calls, 2);
	test_write(&tr->rb, 88, NULL, 0, END_COMMIT);		/* 600 */
	KUNIT_EXPECT_EQ(test, wake_calls, 3);

	/* every 3 records, and only when the consumer asks */
	kring_ring_set_wakeup(&tr->rb, 0, 3);
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, 0UL);
	kring_ring_reset(&tr->rb);
	wake_calls = 0;
	for (i = 1; i <= 30; i++) {
		test_write(&tr->rb, 16, NULL, 0, END_COMMIT);
		KUNIT_EXPECT_EQ(test, wake_calls, i / 3);
	}
	WRITE_ONCE(tr->ctl->need_wakeup, 0);
	for (i = 0; i < 30; i++)
		test_write(&tr->rb, 16, NULL, 0, END_COMMIT);
	KUNIT_EXPECT_EQ(test, wake_calls, 10);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeups, 10ULL);

	/* clamped; 0, 0 is the default */
	kring_ring_set_wakeup(&tr->rb, 1UL << 30, 0);
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, tr->rb.data_size);
	kring_ring_set_wakeup(&tr->rb, 0, 0);
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, tr->rb.data_size / 2);
}

/* ---- garbage data_tail -------------------------------------------------- */

static void ring_garbage_tail(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, 0);
	u64 head, tail, moved, ok = 0, lost = 0;
	int i, rc;

	for (i = 0; i < 20000; i++) {
		head = tr->ctl->data_head;
		switch (get_random_u32() % 6) {
		case 0:
			tail = get_random_u64();
			break;
		case 1:
			tail = head + 1 + get_random_u32() % 64;
			break;
		case 2:
			tail = head - tr->rb.data_size - 1 - get_random_u32() % 64;
			break;
		case 3:
			tail = head - get_random_u32() % tr->rb.data_size;
			break;
		case 4:
			tail = head;
			break;
		default:
			tail = 1ULL << 63;
			break;
		}
		WRITE_ONCE(tr->ctl->data_tail, tail);
		rc = test_write(&tr->rb, 8 + get_random_u32() % 4000, NULL, 0, END_COMMIT);
		KUNIT_ASSERT_TRUE(test, rc == 0 || rc == -ENOSPC);
		moved = tr->ctl->data_head - head;
		if (rc == 0) {
			ok++;
			KUNIT_ASSERT_LE(test, head - tail + moved, tr->rb.data_size);
		} else {
			lost++;
			KUNIT_ASSERT_EQ(test, moved, 0ULL);
		}
	}
	KUNIT_EXPECT_GT(test, ok, 0ULL);
	KUNIT_EXPECT_GT(test, lost, 0ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->records_written, ok);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_no_space, lost);
}

static struct kunit_case kring_ring_cases[] = {
	KUNIT_CASE_PARAM(ring_wrap_every_offset, wrap_size_gen_params),
	KUNIT_CASE(ring_page_boundary_copies),
	KUNIT_CASE(ring_unwritten_tail_zeroed),
	KUNIT_CASE(ring_nesting_simulated),
	KUNIT_CASE(ring_nesting_loss),
	KUNIT_CASE(ring_nesting_hardirq),
	KUNIT_CASE(ring_lost_record),
	KUNIT_CASE(ring_lost_causes),
	KUNIT_CASE(ring_backward),
	KUNIT_CASE(ring_discard),
	KUNIT_CASE(ring_watermark),
	KUNIT_CASE(ring_garbage_tail),
	{}
};

static struct kunit_suite kring_ring_suite = {
	.name = "kring_ring",
	.test_cases = kring_ring_cases,
};

kunit_test_suite(kring_ring_suite);
