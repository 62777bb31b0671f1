/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data-ring core's cases (kmod/ring.c), written once and run twice: by
 * KUnit in the kernel (tests/kunit/ring_kunit.c, suite "kring_ring") and by
 * GoogleTest on the host build of ring.c (tests/host/ring_cases_test.cpp,
 * suite "RingCases", through the KUnit subset of tests/host/kunit_host.h).
 * Reserve/commit/wrap at every offset, copies across pages, nested writers,
 * lost accounting and the LOST record, backward writing, discard, wake-up
 * arithmetic and garbage tails.
 *
 * The includer provides, before including this file, <kunit/test.h> (or
 * kunit_host.h), ring.h, test_record.h and:
 *
 *	static void *test_page_new(struct kunit *test);
 *
 * one zeroed page that lives until the case ends, or NULL; the host's sit
 * between PROT_NONE guard pages, so a stray write faults there.
 *
 * Each case is written for any PAGE_SIZE (the kernel's arm64 64 KiB pages
 * included), and a long loop calls cond_resched() (a kernel without
 * preemption would see an RCU stall on a slow machine).
 * kring_ring_cases[] lists them for both runners.
 */
#ifndef _KRING_RING_CASES_H
#define _KRING_RING_CASES_H

struct test_ring {
	struct kring_ring rb;
	struct kring_ctl_page *ctl;
	void **pages;
	unsigned int nr;
};

static void *test_page_new(struct kunit *test);

/* A ring of @nr data pages, its id 42, that lives until the case ends. */
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
		p = test_page_new(test);
		KUNIT_ASSERT_NOT_NULL(test, p);
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

static void test_fill(struct test_ring *tr, u8 byte)
{
	unsigned int i;

	for (i = 0; i < tr->nr; i++)
		memset(tr->pages[i], byte, PAGE_SIZE);
}

/*
 * The position of the first 8 bytes in [@pos, @pos + @len) that are not
 * test_fill(tr, @byte)'s, or @pos + @len; @pos and @len are multiples of 8.
 */
static u64 test_find_written(struct test_ring *tr, u64 pos, u64 len, u8 byte)
{
	const u64 fill = byte * 0x0101010101010101ULL;
	const u64 *p;
	u64 k, n;

	while (len) {
		p = (const u64 *)test_byte(tr, pos);
		n = min_t(u64, len, PAGE_SIZE - (pos & (PAGE_SIZE - 1))) / 8;
		for (k = 0; k < n; k++)
			if (p[k] != fill)
				return pos + 8 * k;
		pos += 8 * n;
		len -= 8 * n;
	}
	return pos;
}

/* As if the consumer had read everything up to @pos (empty, quiet ring). */
static void test_seek(struct test_ring *tr, u64 pos)
{
	local_set(&tr->rb.head, pos);
	local_set(&tr->rb.wakeup_pos, pos);
	local_set(&tr->rb.wake_len, 0);
	tr->ctl->data_head = pos;
	tr->ctl->data_tail = pos;
}

enum test_end { END_COMMIT, END_DISCARD };

/* Words copied or checked at a time. */
#define TEST_BLOCK	32

/*
 * Write one test record; returns kring_output_begin()'s result, *@seq the
 * sequence number either way. The time passed is that of the next sequence
 * number. Without @body the record goes in word by word, each word in
 * copies of @chunk bytes (0: TEST_BLOCK words at a time, from the stack);
 * with @body (room for the largest record) it is made whole there first
 * and copied in pieces of @chunk bytes, which may span words, pages and
 * the end of the area (UINT_MAX: one copy).
 */
static int test_write_from(struct kring_ring *rb, unsigned int size, u64 *seq,
			   unsigned int chunk, enum test_end end, u64 *body)
{
	struct kring_output_handle h;
	u64 w, j, words, block[TEST_BLOCK];
	unsigned int done, n;
	int err;

	preempt_disable();
	err = kring_output_begin(&h, rb, size, kring_test_time(local64_read(&rb->seq)));
	if (seq)
		*seq = h.seq;
	if (err)
		goto out;
	kring_output_header(&h, KRING_TEST_RECORD_TYPE, 0);
	words = (h.rec_size - 8) / 8;
	for (j = 0; body && j < words; j++)
		body[j] = j ? kring_test_word(h.seq, j) : h.seq;
	for (done = 0; body && done < words * 8; done += n) {
		n = min_t(u64, chunk, words * 8 - done);
		kring_output_copy(&h, (u8 *)body + done, n);
	}
	for (j = 0; !body && j < words; j++) {
		w = j ? kring_test_word(h.seq, j) : h.seq;
		if (!chunk) {
			block[j % TEST_BLOCK] = w;
			if (j % TEST_BLOCK == TEST_BLOCK - 1 || j == words - 1)
				kring_output_copy(&h, block, (j % TEST_BLOCK + 1) * 8);
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

static int test_write(struct kring_ring *rb, unsigned int size, u64 *seq,
		      unsigned int chunk, enum test_end end)
{
	return test_write_from(rb, size, seq, chunk, end, NULL);
}

/* What a consumer saw. */
struct tally {
	u64 records;		/* test records */
	u64 bare;		/* test records of 8 bytes, without a seq */
	u64 pads;
	u64 lost;		/* the LOST records' counts added up */
	u64 losts;		/* LOST records */
	u64 last_seq;		/* of the last test record with a seq */
	u64 last_pad_seq;	/* of the last PAD record of 16 bytes or more */
	struct kring_lost_record last_lost;
	bool zeroed;		/* test records past their seq hold zeroes */
	bool bad;
};

/* Check the record at @pos; return its size, or 0 if it is malformed. */
static unsigned int test_check(struct kunit *test, struct test_ring *tr, u64 pos,
			       u64 limit, struct tally *t)
{
	struct kring_record_header hdr;
	u64 seq, j, words, block[TEST_BLOCK];

	test_read(tr, pos, &hdr, sizeof(hdr));
	if (hdr.size < 8 || hdr.size % 8 || hdr.size > limit) {
		KUNIT_FAIL(test, "bad record size %u at %llu (limit %llu)", hdr.size,
			   (unsigned long long)pos, (unsigned long long)limit);
		t->bad = true;
		return 0;
	}
	switch (hdr.type) {
	case KRING_TEST_RECORD_TYPE:
		KUNIT_EXPECT_EQ(test, hdr.misc, 0);
		t->records++;
		if (hdr.size == 8) {
			t->bare++;
			break;
		}
		test_read(tr, pos + 8, &seq, 8);
		t->last_seq = seq;
		words = (hdr.size - 8) / 8;
		for (j = 1; j < words; j++) {
			if (j % TEST_BLOCK == 1)
				test_read(tr, pos + 8 * (j + 1), block,
					  8 * min_t(u64, TEST_BLOCK, words - j));
			if (block[(j - 1) % TEST_BLOCK] !=
			    (t->zeroed ? 0 : kring_test_word(seq, j))) {
				KUNIT_FAIL(test, "seq %llu word %llu corrupt at %llu",
					   (unsigned long long)seq, (unsigned long long)j,
					   (unsigned long long)pos);
				t->bad = true;
				return 0;
			}
		}
		break;
	case KRING_RECORD_PAD:
		t->pads++;
		if (hdr.size >= 16)
			test_read(tr, pos + 8, &t->last_pad_seq, 8);
		break;
	case KRING_RECORD_LOST:
		if (hdr.size != sizeof(t->last_lost)) {
			KUNIT_FAIL(test, "LOST record of %u bytes", hdr.size);
			t->bad = true;
			return 0;
		}
		test_read(tr, pos, &t->last_lost, sizeof(t->last_lost));
		KUNIT_EXPECT_EQ(test, t->last_lost.header.misc, 0);
		KUNIT_EXPECT_EQ(test, t->last_lost.id, tr->rb.id);
		KUNIT_EXPECT_GT(test, t->last_lost.lost, 0ULL);
		KUNIT_EXPECT_LE(test, t->last_lost.first_seq, t->last_lost.last_seq);
		KUNIT_EXPECT_LE(test, t->last_lost.first_time, t->last_lost.last_time);
		t->lost += t->last_lost.lost;
		t->losts++;
		break;
	default:
		KUNIT_FAIL(test, "unknown record type %u at %llu", hdr.type,
			   (unsigned long long)pos);
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
		KUNIT_FAIL(test, "head %llu too far ahead of tail %llu",
			   (unsigned long long)head, (unsigned long long)tail);
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

/* The ring's counters add up, and the control page shows them. */
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
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_overwritten, c.lost_overwritten);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeups, c.wakeups);
}

/* ---- reserve / commit / wrap at every offset ---------------------------- */

/*
 * Record sizes: small ones, ones about a 4 KiB page, and the largest record
 * of a 2-page ring (8136 on 4 KiB pages; with 64 KiB pages, where a record
 * is smaller than a page, the largest record, 65528).
 */
static const unsigned int wrap_sizes[] = {
	8, 13, 16, 24, 56, 64, 200, SZ_4K - 8, SZ_4K, SZ_4K + 8,
	2 * PAGE_SIZE - KRING_LOST_RECORD_SIZE,
};

static void wrap_size_desc(const unsigned int *size, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "size %u", *size);
}

KUNIT_ARRAY_PARAM(wrap_size, wrap_sizes, wrap_size_desc);

/*
 * The offsets a wrap case visits in a 2-page ring: with 4 KiB pages every
 * one (every 8th byte). A larger page's area is walked where it matters,
 * in time linear in its size rather than quadratic: every offset of its
 * last 8 KiB, where each record size meets the end at each of its
 * residues, and one every 4072 bytes before (a 128 KiB area took minutes
 * under emulation when walked whole).
 */
static u64 wrap_next_off(u64 off, u64 n)
{
	if (n <= SZ_8K || off + SZ_8K >= n)
		return off + 8;
	return min_t(u64, off + 4072, n - SZ_8K);
}

/*
 * At every offset, from a low position and from one whose end of the data
 * area is where the free-running positions wrap 2^64: the first record
 * lands exactly there and touches nothing outside its reservation, and
 * records keep coming intact, in order, across the end of the data area.
 */
static void ring_wrap_every_offset(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, 0);
	const unsigned int size = min(*(const unsigned int *)test->param_value,
				      tr->rb.max_record);
	const unsigned int rsize = round_up(size, 8U);
	const u64 n = tr->rb.data_size;
	u64 off, pos, i, after, before, done, end, seq, base;
	int b;

	for (b = 0; b < 2; b++) {
		base = b ? -n : 0;
		for (off = 0; off < n; off = wrap_next_off(off, n)) {
			struct tally t = {};
			u64 want = 0;

			pos = base + off;
			kring_ring_reset(&tr->rb);
			test_seek(tr, pos);
			test_fill(tr, 0xa5);

			KUNIT_ASSERT_EQ(test, test_write(&tr->rb, size, &seq, 0, END_COMMIT), 0);
			want++;
			KUNIT_ASSERT_EQ(test, tr->ctl->data_head, pos + rsize);
			/*
			 * Nothing outside the record was written: the rest of
			 * the area, or in a large page's last 8 KiB (visited
			 * densely) 4 KiB either side of the record.
			 */
			after = n - rsize;
			before = 0;
			if (n > SZ_8K && off + SZ_8K >= n) {
				after = min_t(u64, after, SZ_4K);
				before = min_t(u64, n - rsize - after, SZ_4K);
			}
			i = test_find_written(tr, pos + rsize, after, 0xa5);
			if (i == pos + rsize + after)
				i = test_find_written(tr, pos - before, before, 0xa5);
			if (i != pos) {
				KUNIT_FAIL(test, "bytes at %llu written, record at %llu",
					   (unsigned long long)(i & (n - 1)),
					   (unsigned long long)(pos & (n - 1)));
				return;
			}
			KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
			/*
			 * On across the end of the data area, and one record
			 * more: the records that stay clear of the end are
			 * skipped (read, as test_seek() pretends), so that the
			 * last four cross it as a stream of them would.
			 */
			done = rsize;
			end = (n - off) + 2 * rsize;
			if (end - done > 4 * rsize) {
				done += (end - done - 4 * rsize) / rsize * rsize;
				test_seek(tr, pos + done);
			}
			for (; done < end; done += rsize) {
				KUNIT_ASSERT_EQ(test, test_write(&tr->rb, size, &seq, 0,
								 END_COMMIT), 0);
				want++;
				KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
				if (rsize > 8)
					KUNIT_ASSERT_EQ(test, t.last_seq, seq);
			}
			KUNIT_ASSERT_EQ(test, t.records, want);
			KUNIT_ASSERT_EQ(test, t.bare, rsize > 8 ? 0 : want);
			KUNIT_ASSERT_EQ(test, tr->ctl->data_tail, pos + done);
			cond_resched();
		}
	}
	test_expect_accounting(test, tr);
}

/* ---- copies across pages ------------------------------------------------ */

/*
 * Copies in odd pieces across page boundaries, and across many pages in
 * one copy (a size above the largest record stands for that one).
 */
static void ring_page_boundary_copies(struct kunit *test)
{
	static const unsigned int sizes[] = {
		24, PAGE_SIZE, PAGE_SIZE + 904, 3 * PAGE_SIZE,
		4 * PAGE_SIZE - KRING_LOST_RECORD_SIZE,
	};
	static const unsigned int chunks[] = {
		1, 3, 5, 7, 13, PAGE_SIZE - 1, PAGE_SIZE + 1, UINT_MAX,
	};
	static const u64 offs[] = {
		0, 8, PAGE_SIZE - 8, PAGE_SIZE - 16, 2 * PAGE_SIZE - 8,
		4 * PAGE_SIZE - 8, 3 * PAGE_SIZE - 288,
	};
	struct test_ring *tr = test_ring_new(test, 4, 0);
	u64 *body = kunit_kzalloc(test, tr->rb.max_record, GFP_KERNEL);
	unsigned int s, c, o, size;
	u64 seq;

	KUNIT_ASSERT_NOT_NULL(test, body);
	for (s = 0; s < ARRAY_SIZE(sizes); s++) {
		for (c = 0; c < ARRAY_SIZE(chunks); c++) {
			for (o = 0; o < ARRAY_SIZE(offs); o++) {
				struct tally t = {};

				kring_ring_reset(&tr->rb);
				test_seek(tr, offs[o] + 3 * tr->rb.data_size);
				size = min(sizes[s], tr->rb.max_record);
				KUNIT_ASSERT_EQ(test, test_write_from(&tr->rb, size, &seq,
								      chunks[c], END_COMMIT,
								      body), 0);
				KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
				KUNIT_ASSERT_EQ(test, t.records, 1ULL);
				KUNIT_ASSERT_EQ(test, t.last_seq, seq);
			}
			cond_resched();
		}
	}
	test_expect_accounting(test, tr);
}

/*
 * What a writer leaves unwritten of its reservation is zeroed, across a
 * page boundary too; a size that is not a multiple of 8 rounds up.
 */
static void ring_unwritten_tail_zeroed(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, 0);
	struct kring_output_handle h;
	struct tally t = { .zeroed = true };
	struct kring_record_header hdr;

	test_fill(tr, 0xff);
	test_seek(tr, PAGE_SIZE - 16);
	preempt_disable();
	KUNIT_ASSERT_EQ(test, kring_output_begin(&h, &tr->rb, 197, 0), 0);
	KUNIT_EXPECT_EQ(test, h.rec_size, 200U);
	kring_output_header(&h, KRING_TEST_RECORD_TYPE, 0);
	kring_output_copy(&h, &h.seq, 8);
	kring_output_end(&h);
	preempt_enable();
	test_read(tr, PAGE_SIZE - 16, &hdr, sizeof(hdr));
	KUNIT_EXPECT_EQ(test, hdr.size, 200);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.records, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_seq, h.seq);
}

/* ---- the one-call write ------------------------------------------------- */

/* kring_output_write() of a test record of @len body bytes (a multiple of 8). */
static int test_write_one(struct kring_ring *rb, u64 *body, unsigned int len)
{
	u64 seq = (u64)local64_read(&rb->seq), j;
	int err;

	for (j = 0; j < len / 8; j++)
		body[j] = j ? kring_test_word(seq, j) : seq;
	preempt_disable();
	err = kring_output_write(rb, KRING_TEST_RECORD_TYPE, 0, body, len, kring_test_time(seq));
	preempt_enable();
	return err;
}

/*
 * kring_output_write(): header and body in one call, across the end of the
 * data area; its padding zeroed; every length no record can carry refused
 * as too big (2^32 - k too: no wrap), and reported by the next record.
 */
static void ring_one_call_write(struct kunit *test)
{
	static const unsigned int lens[] = { 0, 8, 16, 24, 72, 200, 1000, 8, 0 };
	static const u8 odd[13] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
	struct test_ring *tr = test_ring_new(test, 2, 0);
	u64 *body = kunit_kzalloc(test, KRING_RECORD_MAX_SIZE, GFP_KERNEL);
	const unsigned int most = tr->rb.max_record - 8;
	const unsigned int too_long[] = {
		most + 1, most + 8, KRING_RECORD_MAX_SIZE - 7, 1U << 31, UINT_MAX - 7, UINT_MAX,
	};
	struct kring_record_header hdr;
	const u64 start = 2 * PAGE_SIZE - 40;
	struct kring_ring_counts c;
	struct tally t = {};
	u8 got[16];
	unsigned int i;
	int err;

	KUNIT_ASSERT_NOT_NULL(test, body);
	test_fill(tr, 0xff);

	/* An odd length with misc bits, straddling the end of the area. */
	test_seek(tr, start - 16);
	preempt_disable();
	KUNIT_EXPECT_EQ(test, kring_output_write(&tr->rb, KRING_TEST_RECORD_TYPE, 0x4001,
						 odd, sizeof(odd), 7), 0);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, start + 8);
	test_read(tr, start - 16, &hdr, sizeof(hdr));
	KUNIT_EXPECT_EQ(test, hdr.type, (u32)KRING_TEST_RECORD_TYPE);
	KUNIT_EXPECT_EQ(test, hdr.misc, 0x4001);
	KUNIT_EXPECT_EQ(test, hdr.size, 24);
	test_read(tr, start - 8, got, sizeof(got));
	KUNIT_EXPECT_EQ(test, memcmp(got, odd, sizeof(odd)), 0);
	for (i = sizeof(odd); i < sizeof(got); i++)
		KUNIT_EXPECT_EQ_MSG(test, got[i], 0, "padding byte %u", i);

	/* Test records of every shape, the first ones across the end. */
	tr->ctl->data_tail = tr->ctl->data_head;
	for (i = 0; i < ARRAY_SIZE(lens); i++)
		KUNIT_EXPECT_EQ_MSG(test, test_write_one(&tr->rb, body, lens[i]), 0,
				    "len %u", lens[i]);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.records, (u64)ARRAY_SIZE(lens));
	KUNIT_EXPECT_EQ(test, t.bare, 2ULL);
	KUNIT_EXPECT_EQ(test, t.last_seq, (u64)local64_read(&tr->rb.seq) - 2);

	/* No address for a body: refused, nothing taken, not even a seq. */
	preempt_disable();
	KUNIT_EXPECT_EQ(test, kring_output_write(&tr->rb, KRING_TEST_RECORD_TYPE, 0, NULL, 8, 0),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kring_output_write(&tr->rb, KRING_TEST_RECORD_TYPE, 0, NULL,
						 UINT_MAX, 0), -EINVAL);
	preempt_enable();
	kring_ring_read_counts(&tr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.produced, (u64)ARRAY_SIZE(lens) + 1);

	/* Too long for any record, or for this ring: too big, reported. */
	for (i = 0; i < ARRAY_SIZE(too_long); i++) {
		preempt_disable();
		err = kring_output_write(&tr->rb, KRING_TEST_RECORD_TYPE, 0, body, too_long[i], 0);
		preempt_enable();
		KUNIT_EXPECT_EQ_MSG(test, err, -E2BIG, "len %u", too_long[i]);
	}
	KUNIT_EXPECT_EQ(test, test_write_one(&tr->rb, body, 8), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.losts, 1ULL);
	KUNIT_EXPECT_EQ(test, t.lost, (u64)ARRAY_SIZE(too_long));
	kring_ring_read_counts(&tr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.lost_too_big, (u64)ARRAY_SIZE(too_long));

	/* The largest body the ring takes, whole. */
	KUNIT_EXPECT_EQ(test, test_write_one(&tr->rb, body, most & ~7U), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.last_seq, (u64)local64_read(&tr->rb.seq) - 1);
	KUNIT_EXPECT_FALSE(test, t.bad);
	test_expect_accounting(test, tr);
}

/* ---- nesting ------------------------------------------------------------ */

/*
 * Writers interrupting a writer that straddles the end of the data area:
 * only the outermost publishes data_head, and the records come in the
 * order their reservations were made.
 */
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
	KUNIT_EXPECT_EQ(test, a.seq, 0ULL);
	KUNIT_EXPECT_EQ(test, b.seq, 2ULL);
	KUNIT_EXPECT_EQ(test, t.last_seq, 3ULL);	/* reservation order */
	kring_ring_read_counts(&tr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.nested, 3ULL);
	KUNIT_EXPECT_EQ(test, c.written, 4ULL);
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
	KUNIT_EXPECT_EQ(test, t.last_lost.first_time, kring_test_time(seq));
	KUNIT_EXPECT_EQ(test, t.records, 2ULL);
	test_expect_accounting(test, tr);
}

/* ---- lost accounting ---------------------------------------------------- */

/* No space, then the LOST record that reports it, in one reservation. */
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
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, (u64)PAGE_SIZE);
	for (i = 0; i < 5; i++)
		KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 64, NULL, 0, END_COMMIT),
				-ENOSPC);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_no_space, 5ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->records_written, fill);
	test_expect_accounting(test, tr);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.records, fill);
	KUNIT_EXPECT_EQ(test, t.losts, 0ULL);

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
	KUNIT_EXPECT_EQ(test, local_read(&tr->rb.lost_pending), 0L);
	test_expect_accounting(test, tr);
}

/* A record that would fit, but not with its LOST record, is lost too. */
static void ring_lost_record_needs_room(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	const u64 fill = PAGE_SIZE / 64 - 1;
	struct tally t = {};
	u64 seq;
	int i;

	for (i = 0; i < (int)fill; i++)
		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 64, NULL, 0, END_COMMIT), 0);
	/* 64 bytes free */
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 128, NULL, 0, END_COMMIT), -ENOSPC);
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 64, NULL, 0, END_COMMIT), -ENOSPC);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 64, &seq, 0, END_COMMIT), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_ASSERT_EQ(test, t.losts, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.lost, 2ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_seq, fill);
	KUNIT_EXPECT_EQ(test, t.last_lost.last_seq, fill + 1);
	KUNIT_EXPECT_EQ(test, t.records, fill + 1);
	KUNIT_EXPECT_EQ(test, t.last_seq, seq);
	test_expect_accounting(test, tr);
}

/* Too big, too small and paused: each lost, counted, and reported. */
static void ring_lost_causes(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	/* The largest record a one-page ring takes: 4040 on 4 KiB pages */
	const unsigned int max = min_t(unsigned long, KRING_RECORD_MAX_SIZE,
				       PAGE_SIZE - KRING_LOST_RECORD_SIZE);
	const unsigned int bad[] = { max + 1, PAGE_SIZE, 70000, 0, 4, 7 };
	struct tally t = {};
	unsigned int i;

	KUNIT_EXPECT_EQ(test, tr->rb.max_record, max);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ(test, test_write(&tr->rb, bad[i], NULL, 0, END_COMMIT), -E2BIG);
	kring_ring_set_paused(&tr->rb, true);
	KUNIT_EXPECT_EQ(test, tr->ctl->flags, KRING_CTL_F_PAUSED);
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 64, NULL, 0, END_COMMIT), -EAGAIN);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, 0ULL);
	kring_ring_set_paused(&tr->rb, false);
	KUNIT_EXPECT_EQ(test, tr->ctl->flags, 0ULL);
	/* the largest record still fits an empty ring with its LOST record */
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, max, NULL, 0, END_COMMIT), 0);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, (u64)max + KRING_LOST_RECORD_SIZE);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.losts, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.lost, 9ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_seq, 0ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.last_seq, 8ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_too_big, 6ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->lost_paused, 3ULL);
	/* and alone */
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, max, NULL, 0, END_COMMIT), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.records, 2ULL);
	KUNIT_EXPECT_EQ(test, t.last_seq, 10ULL);
	test_expect_accounting(test, tr);
}

/* ---- backward writing --------------------------------------------------- */

static unsigned int back_size(u64 i)
{
	return 16 + 8 * ((i * 7919) % 40);
}

/*
 * perf's write_backward: data_head moves down, data_tail is ignored, the
 * newest records survive intact (perf's overwrite reader walks them from
 * data_head), nothing is lost for lack of space, and lost_overwritten is
 * a lower bound short by at most the records of one slice.
 */
static void ring_backward(struct kunit *test)
{
	static const unsigned int nr_pages[] = { 1, 2, 8 };
	u64 *body = kunit_kzalloc(test, 512, GFP_KERNEL);
	u64 i, k, pos, head, bytes, fit, nfit, over;
	struct kring_ring_counts c;
	struct test_ring *tr;
	unsigned int p;
	struct tally t;

	KUNIT_ASSERT_NOT_NULL(test, body);
	for (p = 0; p < ARRAY_SIZE(nr_pages); p++) {
		tr = test_ring_new(test, nr_pages[p], KRING_RING_OVERWRITE);
		KUNIT_EXPECT_EQ(test, tr->ctl->flags, KRING_CTL_F_OVERWRITE);
		tr->ctl->data_tail = 12345;		/* ignored */
		bytes = 0;
		for (i = 0; i < 5000; i++) {
			/*
			 * In one call (kring_output_write()): every record of
			 * the two-page ring, every third of the others.
			 */
			if (p == 1 || i % 3 == 1)
				KUNIT_ASSERT_EQ(test, test_write_one(&tr->rb, body,
								     back_size(i) - 8), 0);
			else
				KUNIT_ASSERT_EQ(test, test_write(&tr->rb, back_size(i), NULL, 0,
								 END_COMMIT), 0);
			bytes += back_size(i);
			KUNIT_ASSERT_EQ(test, tr->ctl->data_head, -bytes);
			if (i % 97)
				continue;

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
			/* as many as fit whole */
			for (k = i + 1, fit = 0, nfit = 0; k-- > 0; nfit++) {
				if (fit + back_size(k) > tr->rb.data_size)
					break;
				fit += back_size(k);
			}
			KUNIT_ASSERT_EQ(test, t.records, nfit);
			over = i + 1 - nfit;
			KUNIT_EXPECT_LE(test, tr->ctl->lost_overwritten, over);
			KUNIT_EXPECT_GE(test, tr->ctl->lost_overwritten +
					tr->rb.data_size / KRING_OVW_SLICES / 16 + 1, over);
			cond_resched();
		}
		kring_ring_read_counts(&tr->rb, &c);
		KUNIT_EXPECT_EQ(test, c.written, 5000ULL);
		KUNIT_EXPECT_EQ(test, c.lost_no_space, 0ULL);
		KUNIT_EXPECT_EQ(test, tr->ctl->records_written, 5000ULL);
		KUNIT_EXPECT_EQ(test, tr->ctl->data_tail, 12345ULL);
		if (tr->rb.data_size < 5000 * 16)
			KUNIT_EXPECT_GT(test, tr->ctl->lost_overwritten, 0ULL);
	}
}

/* ---- discard ------------------------------------------------------------ */

/*
 * A cancelled reservation becomes a PAD record carrying its seq (an 8-byte
 * one has no room for it), and a LOST record reserved with it stays.
 */
static void ring_discard(struct kunit *test)
{
	static const unsigned int sizes[] = { 48, 8, 16, PAGE_SIZE - 96 };
	struct test_ring *tr = test_ring_new(test, 1, 0);
	struct tally t = {};
	u64 seq;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(sizes); i++) {
		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, sizes[i], &seq, 0, END_DISCARD), 0);
		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 24, NULL, 0, END_COMMIT), 0);
		t.last_pad_seq = ~0ULL;
		KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
		KUNIT_EXPECT_EQ(test, t.last_pad_seq, sizes[i] >= 16 ? seq : ~0ULL);
		KUNIT_EXPECT_EQ(test, t.last_seq, seq + 1);
	}
	KUNIT_EXPECT_EQ(test, t.pads, 4ULL);
	KUNIT_EXPECT_EQ(test, t.records, 4ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->records_discarded, 4ULL);

	kring_ring_set_paused(&tr->rb, true);
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 32, NULL, 0, END_COMMIT), -EAGAIN);
	kring_ring_set_paused(&tr->rb, false);
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 32, &seq, 0, END_DISCARD), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.losts, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_seq, seq - 1);
	KUNIT_EXPECT_EQ(test, t.pads, 5ULL);
	KUNIT_EXPECT_EQ(test, t.last_pad_seq, seq);
	test_expect_accounting(test, tr);
}

/*
 * A reservation ended without its whole header - a copy refused (longer
 * than the reservation), a header refused after half a header, nothing
 * written - has no size a reader could step over: the end makes it a PAD
 * record of the reserved size, counted as discarded, and the valid record
 * after it is read (the ring stays readable past a producer's bug).
 */
static void ring_end_without_header(struct kunit *test)
{
	static const struct {
		unsigned int size;	/* reserved */
		unsigned int copy;	/* a first copy of that many bytes */
		bool header;		/* then kring_output_header() */
		int copy_ret, header_ret;
	} cases[] = {
		{ 32, 40, false, -E2BIG, 0 },	/* the whole record, too long */
		{ 8, 4, true, 0, -E2BIG },	/* half a header, then a refused one */
		{ 24, 0, false, 0, 0 },		/* nothing written */
		{ 16, 7, false, 0, 0 },		/* less than a header */
	};
	struct test_ring *tr = test_ring_new(test, 2, 0);
	struct kring_output_handle h;
	struct tally t = {};
	u64 bytes[8] = { 0 }, seq, head, pad_seq;
	unsigned int i;
	int cret, hret;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		head = tr->ctl->data_head;
		cret = 0;
		hret = 0;
		preempt_disable();
		KUNIT_ASSERT_EQ(test, kring_output_begin(&h, &tr->rb, cases[i].size, 0), 0);
		seq = h.seq;
		if (cases[i].copy)
			cret = kring_output_copy(&h, bytes, cases[i].copy);
		if (cases[i].header)
			hret = kring_output_header(&h, KRING_TEST_RECORD_TYPE, 0);
		kring_output_end(&h);
		preempt_enable();
		KUNIT_EXPECT_EQ_MSG(test, cret, cases[i].copy_ret, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, hret, cases[i].header_ret, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, tr->ctl->data_head, head + cases[i].size, "case %u", i);

		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 24, NULL, 0, END_COMMIT), 0);
		t.last_pad_seq = ~0ULL;
		KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
		KUNIT_EXPECT_EQ_MSG(test, t.pads, (u64)i + 1, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, t.records, (u64)i + 1, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, t.last_seq, seq + 1, "case %u", i);
		/* An 8-byte PAD record has no room for its sequence number. */
		pad_seq = ~0ULL;
		if (cases[i].size >= 16)
			pad_seq = seq;
		KUNIT_EXPECT_EQ_MSG(test, t.last_pad_seq, pad_seq, "case %u", i);
		KUNIT_EXPECT_EQ_MSG(test, tr->ctl->data_head, head + cases[i].size + 24,
				    "case %u", i);
	}
	KUNIT_EXPECT_EQ(test, tr->ctl->records_discarded, (u64)ARRAY_SIZE(cases));
	KUNIT_EXPECT_EQ(test, tr->ctl->records_written, (u64)ARRAY_SIZE(cases));
	test_expect_accounting(test, tr);
}

/*
 * The one-call write's record carries no ring time, so a ring with a clock
 * reads it only for a record that is lost: that loss's time in the LOST
 * record. The handle API reads it for every record (the handle's time).
 */
static u64 clock_reads;

static u64 test_counting_clock(void)
{
	return 1000 + ++clock_reads;
}

static void ring_one_call_clock(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	u64 body[4] = { 0 }, first = 0, last = 0, lost = 0, n;
	struct tally t = {};
	int err = 0, i;

	tr->rb.clock = test_counting_clock;
	clock_reads = 0;
	for (i = 0; i < 3; i++)
		KUNIT_EXPECT_EQ(test, test_write_one(&tr->rb, body, sizeof(body)), 0);
	KUNIT_EXPECT_EQ_MSG(test, clock_reads, 0ULL, "the clock read for a record written");

	/* No consumer: the ring fills, then three records are lost. */
	for (n = 0; n < tr->rb.data_size / 8 && lost < 3; n++) {
		u64 before = clock_reads;

		err = test_write_one(&tr->rb, body, sizeof(body));
		if (!err) {
			KUNIT_EXPECT_EQ(test, clock_reads, before);
			continue;
		}
		KUNIT_EXPECT_EQ(test, err, -ENOSPC);
		KUNIT_EXPECT_EQ_MSG(test, clock_reads, before + 1, "one read per lost record");
		if (!lost++)
			first = 1000 + clock_reads;
		last = 1000 + clock_reads;
	}
	KUNIT_ASSERT_EQ(test, lost, 3ULL);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, test_write_one(&tr->rb, body, sizeof(body)), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.losts, 1ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.lost, 3ULL);
	KUNIT_EXPECT_EQ(test, t.last_lost.first_time, first);
	KUNIT_EXPECT_EQ(test, t.last_lost.last_time, last);

	/* The handle API reads it in the reservation, for the handle's time. */
	n = clock_reads;
	KUNIT_EXPECT_EQ(test, test_write(&tr->rb, 16, NULL, 0, END_COMMIT), 0);
	KUNIT_EXPECT_EQ(test, clock_reads, n + 1);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	test_expect_accounting(test, tr);
}

/*
 * The stamped record at @pos: @type's header of @size bytes, @head with the
 * ring's time at @time_off, @tail, zeroes, @seq last. Returns the time.
 */
static u64 test_expect_stamped(struct kunit *test, struct test_ring *tr, u64 pos,
			       unsigned int size, const u8 *head, unsigned int head_len,
			       unsigned int time_off, const u8 *tail,
			       unsigned int tail_len, u64 seq)
{
	struct kring_record_header hdr;
	u8 got[128];
	u64 word, time;
	unsigned int i;

	test_read(tr, pos, &hdr, sizeof(hdr));
	KUNIT_EXPECT_EQ(test, hdr.type, (u32)KRING_TEST_RECORD_TYPE);
	KUNIT_EXPECT_EQ(test, hdr.misc, 0x4001);
	KUNIT_EXPECT_EQ(test, hdr.size, size);
	if (size > sizeof(got))
		return 0;
	test_read(tr, pos, got, size);
	memcpy(&time, got + 8 + time_off, 8);
	for (i = 0; i < head_len; i++)
		if (i < time_off || i >= time_off + 8)
			KUNIT_EXPECT_EQ_MSG(test, got[8 + i], head[i], "head byte %u", i);
	KUNIT_EXPECT_EQ(test, memcmp(got + 8 + head_len, tail, tail_len), 0);
	for (i = 8 + head_len + tail_len; i < size - 8; i++)
		KUNIT_EXPECT_EQ_MSG(test, got[i], 0, "padding byte %u", i);
	memcpy(&word, got + size - 8, 8);
	KUNIT_EXPECT_EQ(test, word, seq);
	return time;
}

/*
 * kring_output_write_stamped(): the header, two pieces, the ring's time in
 * the first, zero padding, the record's sequence number, across the end of
 * the area; refusals of bad arguments taking no number; too big counted
 * and reported; losses reported first (a LOST record in the same
 * reservation); backward mode.
 */
static void ring_stamped_write(struct kunit *test)
{
	static const u8 tail[13] = { 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13 };
	struct test_ring *tr = test_ring_new(test, 2, 0);
	const u64 start = 2 * PAGE_SIZE - 24;
	struct kring_record_header lost_hdr;
	struct kring_ring_counts c;
	u8 head[20], want[20];
	u64 seq, time = 0, t1;
	unsigned int i;
	int err;

	for (i = 0; i < sizeof(head); i++)
		want[i] = 0x40 + i;
	tr->rb.clock = test_counting_clock;
	clock_reads = 0;
	test_fill(tr, 0xff);
	test_seek(tr, start);

	/* 8 + 20 + 13 = 41: 7 bytes of padding, then the number: 56 bytes */
	memcpy(head, want, sizeof(head));
	seq = local64_read(&tr->rb.seq);
	preempt_disable();
	err = kring_output_write_stamped(&tr->rb, KRING_TEST_RECORD_TYPE, 0x4001, head,
					 sizeof(head), tail, sizeof(tail), 8, &time);
	preempt_enable();
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, start + 56);
	KUNIT_EXPECT_EQ(test, clock_reads, 1ULL);
	KUNIT_EXPECT_EQ(test, time, 1001ULL);
	t1 = test_expect_stamped(test, tr, start, 56, want, sizeof(want), 8, tail,
				 sizeof(tail), seq);
	KUNIT_EXPECT_EQ(test, t1, time);

	/* Bad arguments: refused, no number taken, nothing counted. */
	preempt_disable();
	KUNIT_EXPECT_EQ(test, kring_output_write_stamped(&tr->rb, 1, 0, NULL, 8, tail, 8,
							 KRING_WRITE_NO_TIME, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_output_write_stamped(&tr->rb, 1, 0, head, 8, NULL, 8,
							 KRING_WRITE_NO_TIME, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_output_write_stamped(&tr->rb, 1, 0, head,
							 KRING_WRITE_HEAD_MAX + 1, tail, 0,
							 KRING_WRITE_NO_TIME, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_output_write_stamped(&tr->rb, 1, 0, head, 20, tail, 0,
							 13, NULL), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_output_write_stamped(&tr->rb, 1, 0, head, 20, tail, 0,
							 UINT_MAX - 3, NULL), -EINVAL);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, (u64)local64_read(&tr->rb.seq), seq + 1);

	/* Too big for any record (2^32 - 1 too): counted, then reported. */
	preempt_disable();
	KUNIT_EXPECT_EQ(test, kring_output_write_stamped(&tr->rb, 1, 0, head, 20, tail,
							 UINT_MAX, KRING_WRITE_NO_TIME, NULL),
			-E2BIG);
	KUNIT_EXPECT_EQ(test, kring_output_write_stamped(&tr->rb, 1, 0, head, 20, tail,
							 KRING_RECORD_MAX_SIZE, 8, NULL),
			-E2BIG);
	preempt_enable();
	kring_ring_read_counts(&tr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.lost_too_big, 2ULL);
	memcpy(head, want, sizeof(head));
	seq = local64_read(&tr->rb.seq);
	preempt_disable();
	err = kring_output_write_stamped(&tr->rb, KRING_TEST_RECORD_TYPE, 0x4001, head,
					 16, tail, 0, 0, &time);
	preempt_enable();
	KUNIT_ASSERT_EQ(test, err, 0);
	test_read(tr, start + 56, &lost_hdr, sizeof(lost_hdr));
	KUNIT_EXPECT_EQ(test, lost_hdr.type, (u32)KRING_RECORD_LOST);
	KUNIT_EXPECT_EQ(test, lost_hdr.size, KRING_LOST_RECORD_SIZE);
	t1 = test_expect_stamped(test, tr, start + 56 + KRING_LOST_RECORD_SIZE, 32, want, 16,
				 0, tail, 0, seq);
	KUNIT_EXPECT_EQ(test, t1, time);
	KUNIT_EXPECT_GT(test, time, 1001ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, start + 56 + KRING_LOST_RECORD_SIZE + 32);
	tr->ctl->data_tail = tr->ctl->data_head;
	test_expect_accounting(test, tr);

	/* Backward: below the newest record, the same layout. */
	tr = test_ring_new(test, 1, KRING_RING_OVERWRITE);
	memcpy(head, want, sizeof(head));
	seq = local64_read(&tr->rb.seq);
	preempt_disable();
	err = kring_output_write_stamped(&tr->rb, KRING_TEST_RECORD_TYPE, 0x4001, head, 8,
					 tail, 5, KRING_WRITE_NO_TIME, NULL);
	preempt_enable();
	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_EQ(test, tr->ctl->data_head, -32ULL);
	test_expect_stamped(test, tr, -32ULL, 32, want, 8, 8, tail, 5, seq);
}

/* ---- wake-ups ----------------------------------------------------------- */

static int wake_calls;

static void test_wakeup(struct kring_ring *rb)
{
	wake_calls++;
}

/* Watermark bytes, every N records, both, need_wakeup, and poll's view. */
static void ring_watermark(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, 0);
	u64 *body = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	struct tally t = {};
	u64 written = 0, wakeups, t0, t1, due = 0;
	int i;

	KUNIT_ASSERT_NOT_NULL(test, body);
	tr->rb.wakeup = test_wakeup;
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, PAGE_SIZE);	/* half */
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeup_watermark, (u64)PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, tr->ctl->size, (__u32)KRING_CTL_SIZE_VER2);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeup_time, 0ULL);
	wake_calls = 0;
	for (i = 0; i < (int)(10 * PAGE_SIZE / 40); i++) {	/* ten wake-ups */
		t0 = ktime_get_mono_fast_ns();
		KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 40, NULL, 0, END_COMMIT), 0);
		t1 = ktime_get_mono_fast_ns();
		written += 40;
		KUNIT_ASSERT_EQ(test, wake_calls, (int)(written / PAGE_SIZE));
		/* the wake-up's time is stamped when it becomes due, only then */
		if (written % PAGE_SIZE < 40) {
			KUNIT_ASSERT_GE(test, tr->ctl->wakeup_time, t0);
			KUNIT_ASSERT_LE(test, tr->ctl->wakeup_time, t1);
			due = tr->ctl->wakeup_time;
		}
		KUNIT_ASSERT_EQ(test, tr->ctl->wakeup_time, due);
		KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	}
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeups, (u64)wake_calls);
	KUNIT_EXPECT_NE(test, due, 0ULL);

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
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeup_watermark, 100ULL);
	kring_ring_reset(&tr->rb);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeup_time, 0ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeup_watermark, 100ULL);
	wake_calls = 0;
	test_write(&tr->rb, 96, NULL, 0, END_COMMIT);
	KUNIT_EXPECT_EQ(test, wake_calls, 0);
	test_write(&tr->rb, 8, NULL, 0, END_COMMIT);		/* 104 */
	KUNIT_EXPECT_EQ(test, wake_calls, 1);
	test_write_one(&tr->rb, body, 400 - 8);		/* 504, in one call */
	KUNIT_EXPECT_EQ(test, wake_calls, 2);
	test_write(&tr->rb, 8, NULL, 0, END_COMMIT);		/* 512 */
	KUNIT_EXPECT_EQ(test, wake_calls, 2);
	test_write(&tr->rb, 88, NULL, 0, END_COMMIT);		/* 600 */
	KUNIT_EXPECT_EQ(test, wake_calls, 3);

	/* every 3 records, and only when the consumer asks */
	kring_ring_set_wakeup(&tr->rb, 0, 3);
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, 0UL);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeup_watermark, 0ULL);
	kring_ring_reset(&tr->rb);
	wake_calls = 0;
	for (i = 1; i <= 30; i++) {
		/* every other one in one call: it counts the same */
		if (i % 2)
			test_write_one(&tr->rb, body, 8);
		else
			test_write(&tr->rb, 16, NULL, 0, END_COMMIT);
		KUNIT_EXPECT_EQ(test, wake_calls, i / 3);
	}
	WRITE_ONCE(tr->ctl->need_wakeup, 0);
	due = tr->ctl->wakeup_time;
	for (i = 0; i < 30; i++)
		test_write(&tr->rb, 16, NULL, 0, END_COMMIT);
	KUNIT_EXPECT_EQ(test, wake_calls, 10);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeups, 10ULL);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeup_time, due);	/* none issued */
	WRITE_ONCE(tr->ctl->need_wakeup, 1);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));

	/* both: whichever comes first */
	kring_ring_set_wakeup(&tr->rb, 1000, 4);
	kring_ring_reset(&tr->rb);
	wake_calls = 0;
	for (i = 1; i <= 8; i++)
		test_write(&tr->rb, 8, NULL, 0, END_COMMIT);
	KUNIT_EXPECT_EQ(test, wake_calls, 2);
	test_write(&tr->rb, 1000, NULL, 0, END_COMMIT);
	KUNIT_EXPECT_EQ(test, wake_calls, 3);

	/* a live change: the next publication goes by it, no reset needed */
	kring_ring_set_wakeup(&tr->rb, 4000, 0);
	kring_ring_reset(&tr->rb);
	wake_calls = 0;
	test_write(&tr->rb, 200, NULL, 0, END_COMMIT);	/* a window of 4000 */
	KUNIT_EXPECT_EQ(test, wake_calls, 0);
	kring_ring_set_wakeup(&tr->rb, 100, 0);
	test_write(&tr->rb, 8, NULL, 0, END_COMMIT);		/* 208 */
	KUNIT_EXPECT_EQ(test, wake_calls, 1);
	test_write(&tr->rb, 80, NULL, 0, END_COMMIT);		/* 288 */
	KUNIT_EXPECT_EQ(test, wake_calls, 1);
	test_write(&tr->rb, 16, NULL, 0, END_COMMIT);		/* 304 */
	KUNIT_EXPECT_EQ(test, wake_calls, 2);
	kring_ring_set_wakeup(&tr->rb, 4000, 0);		/* raised */
	test_write(&tr->rb, 200, NULL, 0, END_COMMIT);	/* 504 */
	KUNIT_EXPECT_EQ(test, wake_calls, 2);

	/* without a callback a wake-up is still counted */
	tr->rb.wakeup = NULL;
	kring_ring_set_wakeup(&tr->rb, 0, 1);
	wakeups = tr->ctl->wakeups;
	test_write(&tr->rb, 8, NULL, 0, END_COMMIT);
	test_write(&tr->rb, 8, NULL, 0, END_COMMIT);
	KUNIT_EXPECT_EQ(test, tr->ctl->wakeups, wakeups + 2);
	KUNIT_EXPECT_EQ(test, wake_calls, 2);

	/* clamped; 0, 0 is the default */
	kring_ring_set_wakeup(&tr->rb, 1UL << 30, 0);
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, tr->rb.data_size);
	kring_ring_set_wakeup(&tr->rb, 0, 0);
	KUNIT_EXPECT_EQ(test, tr->rb.watermark, tr->rb.data_size / 2);
	KUNIT_EXPECT_EQ(test, tr->rb.wakeup_events, 0U);
}

/* ---- garbage data_tail -------------------------------------------------- */

#ifdef __KERNEL__
#define RING_GARBAGE_ROUNDS	20000	/* under emulation, with KASAN */
#else
#define RING_GARBAGE_ROUNDS	200000
#endif

/*
 * data_tail is written by user space and trusted for nothing but the
 * space check: whatever it holds, the ring writes only inside its data
 * pages and over no unread byte, leaves the rest of the control page
 * alone, and counts every record as written or lost.
 */
static void ring_garbage_tail(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 2, 0);
	struct kring_ctl_page *before = kunit_kzalloc(test, sizeof(*before), GFP_KERNEL);
	u64 head, tail, moved, ok = 0, lost = 0, n = tr->rb.data_size;
	struct kring_ring_counts c;
	int i, rc;

	KUNIT_ASSERT_NOT_NULL(test, before);
	memset(tr->ctl->__reserved, 0x5a, sizeof(tr->ctl->__reserved));
	memset(tr->ctl->__reserved_kring, 0x5a, sizeof(tr->ctl->__reserved_kring));
	tr->ctl->aux_head = 1;
	tr->ctl->aux_size = 2;
	tr->ctl->time_mult = 3;
	*before = *tr->ctl;

	for (i = 0; i < RING_GARBAGE_ROUNDS; i++) {
		head = tr->ctl->data_head;
		switch (get_random_u32() % 8) {
		case 0:
			tail = get_random_u64();
			break;
		case 1:		/* ahead of head */
			tail = head + 1 + get_random_u32() % 64;
			break;
		case 2:		/* too far back */
			tail = head - n - 1 - get_random_u32() % 64;
			break;
		case 3:		/* nearly full */
			tail = head - n + get_random_u32() % 64;
			break;
		case 4:		/* unaligned */
			tail = head - get_random_u32() % n;
			break;
		case 5:
			tail = ~0ULL - get_random_u32() % 16;
			break;
		case 6:
			tail = head;
			break;
		default:
			tail = 1ULL << 63;
			break;
		}
		WRITE_ONCE(tr->ctl->data_tail, tail);
		rc = test_write(&tr->rb, 8 + get_random_u32() % (tr->rb.max_record - 8),
				NULL, 0, END_COMMIT);
		KUNIT_ASSERT_TRUE(test, rc == 0 || rc == -ENOSPC);
		moved = tr->ctl->data_head - head;
		if (rc == 0) {
			ok++;
			KUNIT_ASSERT_LE(test, moved, n);
			KUNIT_ASSERT_LE(test, head - tail + moved, n);
		} else {
			lost++;
			KUNIT_ASSERT_EQ(test, moved, 0ULL);
		}
		if (!(i % 1024))
			cond_resched();
	}
	KUNIT_EXPECT_GT(test, ok, RING_GARBAGE_ROUNDS / 200ULL);
	KUNIT_EXPECT_GT(test, lost, RING_GARBAGE_ROUNDS / 200ULL);

	/* Only the fields the ring writes changed. */
	before->data_head = tr->ctl->data_head;
	before->data_tail = tr->ctl->data_tail;
	before->records_written = tr->ctl->records_written;
	before->lost_no_space = tr->ctl->lost_no_space;
	before->wakeups = tr->ctl->wakeups;
	before->wakeup_time = tr->ctl->wakeup_time;
	KUNIT_EXPECT_EQ(test, memcmp(before, tr->ctl, sizeof(*before)), 0);

	kring_ring_read_counts(&tr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.produced, (u64)RING_GARBAGE_ROUNDS);
	KUNIT_EXPECT_EQ(test, c.written, ok);
	KUNIT_EXPECT_EQ(test, c.lost_no_space, lost);
	test_expect_accounting(test, tr);
}

/*
 * kring_copy(), the one-call writes' copy: every length up to 80 bytes
 * (its word paths end at 64, its 4-byte ones at 32) from and to every
 * offset within 8 bytes: exactly the bytes asked for arrive, in order,
 * and not one byte around them changes.
 */
/*
 * ring_copy_small(): the bytes of @dst (@span) not as @src's copy wants
 * them; the first one reported if @report.
 */
static unsigned int copy_small_bad(struct kunit *test, const u8 *dst, const u8 *src,
				   unsigned int span, unsigned int so, unsigned int dof,
				   unsigned int len, bool report)
{
	unsigned int i, bad = 0;

	for (i = 0; i < span; i++) {
		bool in = i >= 8 + dof && i < 8 + dof + len;
		u8 want = in ? src[i - dof + so] : 0xa5;

		if (dst[i] != want && !bad++ && report)
			KUNIT_FAIL(test, "len %u src+%u dst+%u: byte %u is %#x, not %#x",
				   len, so, dof, i, dst[i], want);
	}
	return bad;
}

static void ring_copy_small(struct kunit *test)
{
	enum { SPAN = 8 + 80 + 8 + 8 };
	u8 *src = kunit_kzalloc(test, SPAN, GFP_KERNEL);
	u8 *dst = kunit_kzalloc(test, SPAN, GFP_KERNEL);
	unsigned int len, so, dof, i, bad = 0;

	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, dst);
	for (i = 0; i < SPAN; i++)
		src[i] = (u8)(i * 7 + 1);
	for (len = 0; len <= 80; len++) {
		for (so = 0; so < 8; so++) {
			for (dof = 0; dof < 8; dof++) {
				memset(dst, 0xa5, SPAN);
				kring_copy(dst + 8 + dof, src + 8 + so, len);
				bad += copy_small_bad(test, dst, src, SPAN, so, dof, len, !bad);
			}
		}
	}
	KUNIT_EXPECT_EQ(test, bad, 0U);
}

/*
 * The cases, as KUnit's case array: the kernel's suite "kring_ring" and the
 * host's runner (kunit_host.h's KUNIT_CASE*()) read this one list.
 */
static struct kunit_case kring_ring_cases[] = {
	KUNIT_CASE_PARAM(ring_wrap_every_offset, wrap_size_gen_params),
	KUNIT_CASE(ring_page_boundary_copies),
	KUNIT_CASE(ring_unwritten_tail_zeroed),
	KUNIT_CASE(ring_one_call_write),
	KUNIT_CASE(ring_one_call_clock),
	KUNIT_CASE(ring_stamped_write),
	KUNIT_CASE(ring_copy_small),
	KUNIT_CASE(ring_nesting_simulated),
	KUNIT_CASE(ring_nesting_loss),
	KUNIT_CASE(ring_lost_record),
	KUNIT_CASE(ring_lost_record_needs_room),
	KUNIT_CASE(ring_lost_causes),
	KUNIT_CASE(ring_backward),
	KUNIT_CASE(ring_discard),
	KUNIT_CASE(ring_end_without_header),
	KUNIT_CASE(ring_watermark),
	KUNIT_CASE(ring_garbage_tail),
	{}
};

#endif /* _KRING_RING_CASES_H */
