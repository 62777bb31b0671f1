// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites "kring_producer" and "kring_producer_channel": every size
 * and count the producer API (<kring/producer.h>) and the capture path
 * (kring_capture_emit()) take, at its extremes - 0, 1, the bound - 1, the
 * bound, the bound + 1, 2^32 - k, 2^64 - k where the type has them - with
 * the errno each refusal gives, the valid extremes written whole, and
 * nothing written out of bounds: a ring over vmalloc'ed pages between
 * guard pages whose bytes must stay as set, the records read back one by
 * one, the ring's accounting identity.
 *
 * "kring_producer" builds its rings itself, on every kernel;
 * "kring_producer_channel" writes into channels of /dev/kring mapped with
 * kunit_vm_mmap() (Linux 6.10 on), as a producer module would.
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/fcntl.h>
#include <linux/fdtable.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/irq_work.h>
#include <linux/limits.h>
#include <linux/log2.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/poll.h>
#include <linux/delay.h>
#include <linux/preempt.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <kring/producer.h>

#include "compat.h"
#include "ring.h"
#include "channel.h"
#include "capture.h"
#include "kunit_dev.h"

#define GUARD_BYTE	0x5a
#define TEST_TYPE	(KRING_RECORD_KRING_BASE + 0x301)

/* Data pages a ring needs for a record of KRING_RECORD_MAX_SIZE. */
#define MAX_RECORD_PAGES \
	roundup_pow_of_two(DIV_ROUND_UP(KRING_RECORD_MAX_SIZE + KRING_LOST_RECORD_SIZE, \
					PAGE_SIZE))

/* RAW sizes: 0, 1, around the bound, around u16, 2^32 - k. */
static const u32 raw_sizes[] = {
	0, 1, 7, 8,
	KRING_SAMPLE_RAW_MAX - 1, KRING_SAMPLE_RAW_MAX, KRING_SAMPLE_RAW_MAX + 1,
	KRING_RECORD_MAX_SIZE, U16_MAX, U16_MAX + 1, S32_MAX,
	U32_MAX - 8, U32_MAX - 7, U32_MAX - 3, U32_MAX - 1, U32_MAX,
};

/* Body lengths of a one-call write: ok up to a record less its header. */
static const u32 body_lens[] = {
	0, 1, 7, 8, 9, 16,
	KRING_RECORD_MAX_SIZE - 9, KRING_RECORD_MAX_SIZE - 8, KRING_RECORD_MAX_SIZE - 7,
	KRING_RECORD_MAX_SIZE, U16_MAX, U16_MAX + 1, S32_MAX,
	U32_MAX - 8, U32_MAX - 7, U32_MAX - 1, U32_MAX,
};

/* Sample types: without RAW, RAW alone, RAW with every field, every bit. */
#define ALL_FIELDS	(KRING_SAMPLE_ACCEPTED & ~KRING_SAMPLE_RAW)
static const u64 sample_types[] = {
	KRING_SAMPLE_TID,
	KRING_SAMPLE_RAW,
	KRING_SAMPLE_RAW | KRING_SAMPLE_TID | KRING_SAMPLE_SEQ,
	KRING_SAMPLE_ACCEPTED,
	~0ULL,
};

/* Record sizes a begin takes: ok between a header and @max. */
static const u64 record_sizes[] = {
	0, 1, 7, 8, 9, 16,
	KRING_RECORD_MAX_SIZE - 1, KRING_RECORD_MAX_SIZE, KRING_RECORD_MAX_SIZE + 1,
	U16_MAX, U16_MAX + 1, S32_MAX,
	U32_MAX - 8, U32_MAX - 7, U32_MAX - 1, U32_MAX,
};

/* Bytes of a SAMPLE record of @type but RAW's size word, data and padding. */
static unsigned int fixed_size(u64 type)
{
	return 8 + 8 * hweight64((type | KRING_SAMPLE_SEQ) & ALL_FIELDS);
}

/* kring_sample_size(), computed in 64 bits: 0 where RAW exceeds its bound. */
static u64 expected_sample_size(u64 type, u64 raw)
{
	if (!(type & KRING_SAMPLE_RAW))
		return fixed_size(type);
	if (raw > KRING_SAMPLE_RAW_MAX)
		return 0;
	return fixed_size(type) + 4 + KRING_RAW_PADDED(raw);
}

/* A byte pattern for RAW data and record bodies. */
static u8 pattern(u64 i)
{
	return (u8)(i * 131 + 7);
}

/* ---- a ring between guard pages ---------------------------------------- */

/*
 * The data pages lie in one vmalloc() area, each between guard pages
 * (scattered: every other page, so the ring copies page by page) or all in
 * a row between two (contiguous: the ring writes in place, but where a
 * record wraps). vmalloc()'s own unmapped guard page follows the area.
 */
struct guarded_ring {
	struct kring_ring rb;
	struct kring_ctl_page *ctl;
	u8 *area;
	unsigned int area_pages;
	void **pages;
	unsigned int nr;
	bool scattered;
};

struct layout {
	bool scattered;
	const char *desc;
};

static const struct layout layouts[] = {
	{ false, "contiguous" },
	{ true, "scattered" },
};

static void layout_desc(const struct layout *l, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", l->desc);
}

KUNIT_ARRAY_PARAM(layout, layouts, layout_desc);

static void vfree_action(void *p)
{
	vfree(p);
}

static unsigned int data_page_index(const struct guarded_ring *gr, unsigned int i)
{
	return gr->scattered ? 2 * i + 1 : i + 1;
}

static struct guarded_ring *guarded_ring_new(struct kunit *test, bool scattered)
{
	struct guarded_ring *gr = kunit_kzalloc(test, sizeof(*gr), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, gr);
	gr->nr = MAX_RECORD_PAGES;
	gr->scattered = scattered;
	gr->area_pages = scattered ? 2 * gr->nr + 1 : gr->nr + 2;
	gr->area = vmalloc(gr->area_pages * PAGE_SIZE);
	KUNIT_ASSERT_NOT_NULL(test, gr->area);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, vfree_action, gr->area), 0);
	memset(gr->area, GUARD_BYTE, gr->area_pages * PAGE_SIZE);
	gr->pages = kunit_kcalloc(test, gr->nr, sizeof(void *), GFP_KERNEL);
	gr->ctl = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, gr->pages);
	KUNIT_ASSERT_NOT_NULL(test, gr->ctl);
	for (i = 0; i < gr->nr; i++) {
		gr->pages[i] = gr->area + data_page_index(gr, i) * PAGE_SIZE;
		memset(gr->pages[i], 0, PAGE_SIZE);
	}
	KUNIT_ASSERT_EQ(test, kring_ring_init(&gr->rb, gr->ctl, gr->pages, gr->nr, 0, 42), 0);
	KUNIT_ASSERT_EQ(test, gr->rb.max_record, KRING_RECORD_MAX_SIZE);
	KUNIT_ASSERT_TRUE(test, scattered ? !gr->rb.data : !!gr->rb.data);
	return gr;
}

/* Every byte outside the data pages is still the guard byte. */
static void expect_guards(struct kunit *test, struct guarded_ring *gr)
{
	unsigned int p, i = 0;

	for (p = 0; p < gr->area_pages; p++) {
		if (i < gr->nr && p == data_page_index(gr, i)) {
			i++;
			continue;
		}
		KUNIT_EXPECT_PTR_EQ_MSG(test, memchr_inv(gr->area + p * PAGE_SIZE,
							 GUARD_BYTE, PAGE_SIZE), NULL,
					"guard page %u of %u written", p, gr->area_pages);
	}
}

static void ring_read(struct guarded_ring *gr, u64 pos, void *dst, size_t len)
{
	u8 *out = dst;

	while (len) {
		size_t off = pos & (PAGE_SIZE - 1);
		size_t n = min_t(size_t, len, PAGE_SIZE - off);

		memcpy(out, (u8 *)gr->pages[(pos >> PAGE_SHIFT) & (gr->nr - 1)] + off, n);
		out += n;
		pos += n;
		len -= n;
	}
}

/* As if the consumer had read everything up to @pos (empty, quiet ring). */
static void ring_seek(struct guarded_ring *gr, u64 pos)
{
	local_set(&gr->rb.head, pos);
	local_set(&gr->rb.wakeup_pos, pos);
	local_set(&gr->rb.wake_len, 0);
	gr->rb.pub_head = pos;
	gr->ctl->data_head = pos;
	gr->ctl->data_tail = pos;
}

/* The consumer reads everything published (one thread: C and D as form). */
static void ring_consume(struct guarded_ring *gr)
{
	u64 head = smp_load_acquire(&gr->ctl->data_head); /* C, pairs with B */

	smp_store_release(&gr->ctl->data_tail, head); /* D, pairs with A */
}

static void expect_accounting(struct kunit *test, struct kring_ring *rb)
{
	struct kring_ring_counts c;

	kring_ring_read_counts(rb, &c);
	KUNIT_EXPECT_EQ(test, c.produced, c.written + c.discarded + c.lost_no_space +
			c.lost_too_big + c.lost_paused);
}

/*
 * Check the SAMPLE record of @size bytes at @rec (read back whole): its
 * header, RAW's size word, data and zero padding, its sequence number.
 */
static void expect_sample(struct kunit *test, const u8 *rec, u64 type, u32 raw,
			  const u8 *src, u64 seq)
{
	const struct kring_record_header *hdr = (const void *)rec;
	unsigned int size = expected_sample_size(type, raw);
	unsigned int at = fixed_size(type) - 8, i;
	u32 padded;
	u64 s;

	KUNIT_EXPECT_EQ(test, hdr->type, (u32)KRING_RECORD_SAMPLE);
	KUNIT_ASSERT_EQ(test, hdr->size, (u16)size);
	memcpy(&s, rec + size - 8, 8);
	KUNIT_EXPECT_EQ(test, s, seq);
	if (!(type & KRING_SAMPLE_RAW))
		return;
	memcpy(&padded, rec + at, 4);
	KUNIT_EXPECT_EQ(test, padded, KRING_RAW_PADDED(raw));
	KUNIT_EXPECT_EQ(test, memcmp(rec + at + 4, src, raw), 0);
	for (i = raw; i < padded; i++)
		KUNIT_EXPECT_EQ(test, rec[at + 4 + i], (u8)0);
}

/* RAW source data, the largest RAW with room to spare. */
static u8 *raw_source(struct kunit *test)
{
	u8 *src = kunit_kmalloc(test, U16_MAX + 1, GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, src);
	for (i = 0; i <= U16_MAX; i++)
		src[i] = pattern(i);
	return src;
}

/* ---- kring_sample_size() ----------------------------------------------- */

/*
 * RAW is bounded before the padding's arithmetic: exact up to
 * KRING_SAMPLE_RAW_MAX (a record that fits the header's u16 size, 8-byte
 * aligned), 0 beyond, never a small size wrapped around 2^32.
 */
static void producer_sample_size_bounds(struct kunit *test)
{
	unsigned int i, j;

	KUNIT_EXPECT_EQ(test, kring_sample_size(KRING_SAMPLE_ACCEPTED, KRING_SAMPLE_RAW_MAX),
			KRING_RECORD_MAX_SIZE);
	for (i = 0; i < ARRAY_SIZE(sample_types); i++) {
		for (j = 0; j < ARRAY_SIZE(raw_sizes); j++) {
			u64 type = sample_types[i];
			u32 raw = raw_sizes[j];
			unsigned int size = kring_sample_size(type, raw);

			KUNIT_EXPECT_EQ_MSG(test, (u64)size, expected_sample_size(type, raw),
					    "type %#llx raw %u", type, raw);
			KUNIT_EXPECT_LE(test, size, KRING_RECORD_MAX_SIZE);
			KUNIT_EXPECT_EQ(test, size % KRING_RECORD_ALIGN, 0U);
		}
	}
}

/* ---- kring_output_begin(), _copy(), _header() --------------------------- */

/*
 * A begin takes sizes from a header to the ring's largest record: the
 * others are -E2BIG and counted too big, the ring untouched.
 */
static void producer_begin_sizes(struct kunit *test)
{
	const struct layout *l = test->param_value;
	struct guarded_ring *gr = guarded_ring_new(test, l->scattered);
	struct kring_output_handle h;
	unsigned int i, refused = 0;
	struct kring_ring_counts c;
	int ret;

	for (i = 0; i < ARRAY_SIZE(record_sizes); i++) {
		u64 size = record_sizes[i];
		bool ok = size >= 8 && size <= KRING_RECORD_MAX_SIZE;
		u64 head = gr->ctl->data_head;
		struct kring_record_header hdr;

		preempt_disable();
		ret = kring_output_begin(&h, &gr->rb, size, 0);
		if (!ret) {
			kring_output_header(&h, TEST_TYPE, 0);
			kring_output_end(&h);
		}
		preempt_enable();
		KUNIT_EXPECT_EQ_MSG(test, ret, ok ? 0 : -E2BIG, "size %llu", size);
		refused += !ok;
		if (ret)
			continue;
		/* A LOST record (the refusals before) comes first. */
		if (gr->ctl->data_head - head > round_up(size, 8))
			head += KRING_LOST_RECORD_SIZE;
		ring_read(gr, head, &hdr, sizeof(hdr));
		KUNIT_EXPECT_EQ(test, hdr.type, (u32)TEST_TYPE);
		KUNIT_EXPECT_EQ(test, hdr.size, (u16)round_up(size, 8));
		KUNIT_EXPECT_EQ(test, gr->ctl->data_head, head + round_up(size, 8));
		ring_consume(gr);
	}
	kring_ring_read_counts(&gr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.lost_too_big, (u64)refused);
	expect_accounting(test, &gr->rb);
	expect_guards(test, gr);
}

/*
 * A copy or header beyond what the reservation has left is refused whole
 * (-E2BIG, nothing written, the handle unchanged, no warning); up to it,
 * everything goes in, across the end of the data area.
 */
static void producer_copy_bounds(struct kunit *test)
{
	static const u32 too_long[] = { 97, 98, 256, S32_MAX, U32_MAX - 7, U32_MAX };
	const struct layout *l = test->param_value;
	struct guarded_ring *gr = guarded_ring_new(test, l->scattered);
	const unsigned int size = 96;
	int over[ARRAY_SIZE(too_long)] = {}, r_hdr = 1, r_zero = 1, r_one = 1, r_rest = 1;
	unsigned int rem_after = 0, i;
	int r_more = 1, r_hdr2 = 1;
	struct kring_output_handle h;
	u64 pos = gr->rb.data_size - 40;
	u8 body[96], back[96];
	int ret;

	for (i = 0; i < sizeof(body); i++)
		body[i] = pattern(i);
	ring_seek(gr, pos);
	preempt_disable();
	ret = kring_output_begin(&h, &gr->rb, size, 0);
	if (!ret) {
		for (i = 0; i < ARRAY_SIZE(too_long); i++)
			over[i] = kring_output_copy(&h, body, too_long[i]);
		rem_after = h.rem;
		r_hdr = kring_output_header(&h, TEST_TYPE, 0);
		r_zero = kring_output_copy(&h, body + 8, 0);
		r_one = kring_output_copy(&h, body + 8, 1);
		r_rest = kring_output_copy(&h, body + 9, size - 9);
		r_more = kring_output_copy(&h, body, 1);
		r_hdr2 = kring_output_header(&h, TEST_TYPE, 0);
		kring_output_end(&h);
	}
	preempt_enable();
	KUNIT_ASSERT_EQ(test, ret, 0);
	for (i = 0; i < ARRAY_SIZE(too_long); i++)
		KUNIT_EXPECT_EQ_MSG(test, over[i], -E2BIG, "copy of %u", too_long[i]);
	KUNIT_EXPECT_EQ(test, rem_after, size);
	KUNIT_EXPECT_EQ(test, r_hdr, 0);
	KUNIT_EXPECT_EQ(test, r_zero, 0);
	KUNIT_EXPECT_EQ(test, r_one, 0);
	KUNIT_EXPECT_EQ(test, r_rest, 0);
	KUNIT_EXPECT_EQ(test, r_more, -E2BIG);
	KUNIT_EXPECT_EQ(test, r_hdr2, -E2BIG);

	KUNIT_EXPECT_EQ(test, gr->ctl->data_head, pos + size);
	ring_read(gr, pos, back, size);
	KUNIT_EXPECT_EQ(test, ((struct kring_record_header *)back)->size, (u16)size);
	KUNIT_EXPECT_EQ(test, memcmp(back + 8, body + 8, size - 8), 0);
	expect_accounting(test, &gr->rb);
	expect_guards(test, gr);
}

/* ---- kring_output_sample() ---------------------------------------------- */

/*
 * A producer's two steps, size and sample, at every RAW extreme: written
 * whole up to KRING_SAMPLE_RAW_MAX, refused by the begin (-E2BIG, too big)
 * beyond; and the sample itself refused, into a PAD record, when it does
 * not match its reservation - never written past it.
 */
static void producer_sample_bounds(struct kunit *test)
{
	static const u64 types[] = {
		KRING_SAMPLE_RAW,
		KRING_SAMPLE_RAW | KRING_SAMPLE_TID | KRING_SAMPLE_SEQ,
		KRING_SAMPLE_ACCEPTED,
	};
	const struct layout *l = test->param_value;
	struct guarded_ring *gr = guarded_ring_new(test, l->scattered);
	u8 *src = raw_source(test);
	u8 *rec = kunit_kmalloc(test, KRING_RECORD_MAX_SIZE, GFP_KERNEL);
	struct kring_sample_data d = { .pid = 1, .tid = 2, .raw = src };
	struct kring_record_header hdr;
	struct kring_output_handle h;
	unsigned int i, j, refused = 0;
	struct kring_ring_counts c;
	int ret, sret = 1;
	u64 head, seq;

	KUNIT_ASSERT_NOT_NULL(test, rec);
	for (i = 0; i < ARRAY_SIZE(types); i++) {
		for (j = 0; j < ARRAY_SIZE(raw_sizes); j++) {
			u64 type = types[i];
			u32 raw = raw_sizes[j];
			bool ok = raw <= KRING_SAMPLE_RAW_MAX;

			d.raw_size = raw;
			head = gr->ctl->data_head;
			sret = -1;
			preempt_disable();
			ret = kring_output_begin(&h, &gr->rb, kring_sample_size(type, raw), 0);
			seq = h.seq;
			if (!ret) {
				sret = kring_output_sample(&h, type, &d);
				kring_output_end(&h);
			}
			preempt_enable();
			KUNIT_EXPECT_EQ_MSG(test, ret, ok ? 0 : -E2BIG,
					    "type %#llx raw %u", type, raw);
			refused += !ok;
			ring_consume(gr);
			if (ret || !ok)
				continue;
			KUNIT_EXPECT_EQ(test, sret, 0);
			if (gr->ctl->data_head - head > expected_sample_size(type, raw))
				head += KRING_LOST_RECORD_SIZE;
			KUNIT_EXPECT_EQ(test, gr->ctl->data_head,
					head + expected_sample_size(type, raw));
			ring_read(gr, head, rec, expected_sample_size(type, raw));
			expect_sample(test, rec, type, raw, src, seq);
		}
	}
	kring_ring_read_counts(&gr->rb, &c);
	KUNIT_EXPECT_EQ(test, c.lost_too_big, (u64)refused);

	/* Samples that do not match their reservation: PAD, nothing else. */
	for (j = 0; j < ARRAY_SIZE(raw_sizes); j++) {
		struct {
			unsigned int size;
			u32 raw;
			const void *data;
			bool touch;
			int err;
		} bad[] = {
			/* 16: what RAW alone of 2^32 - 8 used to wrap to */
			{ 16, raw_sizes[j], src, false,
			  raw_sizes[j] > KRING_SAMPLE_RAW_MAX ? -E2BIG : -EINVAL },
			{ kring_sample_size(KRING_SAMPLE_RAW, 100), 101, src, false, -EINVAL },
			{ kring_sample_size(KRING_SAMPLE_RAW, 8), 8, NULL, false, -EINVAL },
			{ kring_sample_size(KRING_SAMPLE_RAW, 8), 8, src, true, -EINVAL },
		};
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(bad); k++) {
			if (k && j)
				break;
			d.raw = bad[k].data;
			d.raw_size = bad[k].raw;
			head = gr->ctl->data_head;
			sret = 1;
			preempt_disable();
			ret = kring_output_begin(&h, &gr->rb, bad[k].size, 0);
			if (!ret) {
				if (bad[k].touch)
					kring_output_header(&h, TEST_TYPE, 0);
				sret = kring_output_sample(&h, KRING_SAMPLE_RAW, &d);
				kring_output_end(&h);
			}
			preempt_enable();
			KUNIT_ASSERT_EQ(test, ret, 0);
			KUNIT_EXPECT_EQ_MSG(test, sret, bad[k].err, "case %u raw %u", k,
					    bad[k].raw);
			if (gr->ctl->data_head - head > bad[k].size)
				head += KRING_LOST_RECORD_SIZE;
			KUNIT_EXPECT_EQ(test, gr->ctl->data_head, head + bad[k].size);
			ring_read(gr, head, &hdr, sizeof(hdr));
			KUNIT_EXPECT_EQ(test, hdr.type,
					bad[k].touch ? (u32)TEST_TYPE : (u32)KRING_RECORD_PAD);
			KUNIT_EXPECT_EQ(test, hdr.size, (u16)bad[k].size);
			ring_consume(gr);
		}
	}
	d.raw = src;

	/* Without RAW in the type, raw_size means nothing, whatever it is. */
	d.raw_size = U32_MAX - 7;
	head = gr->ctl->data_head;
	sret = 1;
	preempt_disable();
	ret = kring_output_begin(&h, &gr->rb, kring_sample_size(KRING_SAMPLE_TID, U32_MAX - 7), 0);
	seq = h.seq;
	if (!ret) {
		sret = kring_output_sample(&h, KRING_SAMPLE_TID, &d);
		kring_output_end(&h);
	}
	preempt_enable();
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, sret, 0);
	if (gr->ctl->data_head - head > 24)
		head += KRING_LOST_RECORD_SIZE;
	ring_read(gr, head, rec, 24);
	expect_sample(test, rec, KRING_SAMPLE_TID, 0, src, seq);

	expect_accounting(test, &gr->rb);
	expect_guards(test, gr);
}

static struct kunit_case producer_cases[] = {
	KUNIT_CASE(producer_sample_size_bounds),
	KUNIT_CASE_PARAM(producer_begin_sizes, layout_gen_params),
	KUNIT_CASE_PARAM(producer_copy_bounds, layout_gen_params),
	KUNIT_CASE_PARAM(producer_sample_bounds, layout_gen_params),
	{}
};

static struct kunit_suite producer_suite = {
	.name = "kring_producer",
	.test_cases = producer_cases,
};

#ifdef KRING_HAVE_KUNIT_VM_MMAP

/* ---- channels of /dev/kring --------------------------------------------- */

struct chan {
	struct kunit_dev dev;
	unsigned long addr;		/* the control page */
	u8 __user *data;
	unsigned long data_size;
	u64 id;
	u64 type;
	struct kring_channel *ch;
};

static int chan_init(struct kunit *test)
{
	struct chan *c = kunit_kzalloc(test, sizeof(*c), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, c);
	test->priv = c;
	kunit_dev_open(test, &c->dev);
	return 0;
}

static void chan_exit(struct kunit *test)
{
	struct chan *c = test->priv;

	if (c && c->ch)
		kring_channel_put(c->ch);
	if (c)
		kunit_dev_close(&c->dev);
}

static long chan_ioctl(struct kunit *test, unsigned int cmd, void *arg, size_t len)
{
	struct chan *c = test->priv;

	return kunit_dev_ioctl(&c->dev, cmd, arg, len);
}

static u64 ctl_read(struct kunit *test, size_t off)
{
	struct chan *c = test->priv;
	u64 v = ~0ULL;

	KUNIT_EXPECT_EQ(test, copy_from_user(&v, (void __user *)(c->addr + off), 8), 0UL);
	return v;
}

static void ctl_write(struct kunit *test, size_t off, u64 v)
{
	struct chan *c = test->priv;

	KUNIT_EXPECT_EQ(test, copy_to_user((void __user *)(c->addr + off), &v, 8), 0UL);
}

#define CTL(field)	offsetof(struct kring_ctl_page, field)

/*
 * Configure a KRING_SOURCE_NONE channel of @type, map it with room for the
 * largest record, enable it and take it as a producer module would.
 */
static void chan_setup(struct kunit *test, u64 type)
{
	struct kring_attr attr = {
		.size = sizeof(attr),
		.source = KRING_SOURCE_NONE,
		.sample_type = type,
		.cpu = -1,
		.pid = -1,
	};
	struct chan *c = test->priv;

	c->type = type;
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_CONFIGURE, &attr, sizeof(attr)), 0L);
	c->data_size = MAX_RECORD_PAGES * PAGE_SIZE;
	c->addr = kunit_vm_mmap(test, c->dev.file, 0, PAGE_SIZE + c->data_size,
				PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(c->addr));
	c->data = (u8 __user *)(c->addr + PAGE_SIZE);
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_ID, &c->id, sizeof(c->id)), 0L);
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_ENABLE, NULL, 0), 0L);
	c->ch = kring_channel_get(c->id);
	KUNIT_ASSERT_NOT_NULL(test, c->ch);
}

/* @len bytes at ring position @pos, through the consumer's mapping. */
static void chan_read(struct kunit *test, u64 pos, void *dst, size_t len)
{
	struct chan *c = test->priv;
	unsigned long off = pos & (c->data_size - 1);
	size_t first = min_t(size_t, len, c->data_size - off);

	KUNIT_ASSERT_EQ(test, copy_from_user(dst, c->data + off, first), 0UL);
	KUNIT_ASSERT_EQ(test, copy_from_user((u8 *)dst + first, c->data, len - first), 0UL);
}

/*
 * Consume what was published since @tail: every record well formed and in
 * the data area, exactly @size bytes of them not LOST (0: none; the last
 * one read into @rec). Returns the records the LOST records among them
 * report, -1 for a malformed record.
 */
static s64 chan_consume(struct kunit *test, u64 tail, u64 size, u8 *rec)
{
	struct chan *c = test->priv;
	u64 head = ctl_read(test, CTL(data_head)), seen = 0;
	struct kring_record_header hdr;
	struct kring_lost_record lost;
	s64 losts = 0;

	KUNIT_EXPECT_LE(test, head - tail, (u64)c->data_size);
	while (tail != head) {
		chan_read(test, tail, &hdr, sizeof(hdr));
		if (hdr.size < 8 || hdr.size % 8 || hdr.size > head - tail) {
			KUNIT_FAIL(test, "bad record size %u at %llu", hdr.size, tail);
			return -1;
		}
		if (hdr.type == KRING_RECORD_LOST) {
			KUNIT_ASSERT_EQ(test, hdr.size, (u16)sizeof(lost));
			chan_read(test, tail, &lost, sizeof(lost));
			losts += lost.lost;
		} else {
			if (rec)
				chan_read(test, tail, rec, hdr.size);
			seen += hdr.size;
		}
		tail += hdr.size;
	}
	KUNIT_EXPECT_EQ(test, seen, size);
	ctl_write(test, CTL(data_tail), head);
	return losts;
}

static void expect_chan_accounting(struct kunit *test, u64 too_big)
{
	struct kring_stats st = { .size = sizeof(st) };

	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_STATS, &st, sizeof(st)), 0L);
	KUNIT_EXPECT_EQ(test, st.lost_too_big, too_big);
	KUNIT_EXPECT_EQ(test, st.lost_no_space, 0ULL);
	KUNIT_EXPECT_EQ(test, st.produced, st.written + st.lost_no_space +
			st.lost_too_big + st.lost_paused);
}

/*
 * kring_channel_write_sample() at every RAW extreme: the largest RAW
 * written whole; beyond it -E2BIG, counted too big and reported in a
 * LOST record, the ring untouched (2^32 - 8 once oopsed in memcpy);
 * RAW data without an address -EINVAL, counted nowhere.
 */
static void producer_channel_write_sample(struct kunit *test)
{
	const u64 type = KRING_SAMPLE_RAW | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
			 KRING_SAMPLE_SEQ;
	struct chan *c = test->priv;
	u8 *src = raw_source(test);
	u8 *rec = kunit_kmalloc(test, KRING_RECORD_MAX_SIZE, GFP_KERNEL);
	struct kring_sample_data d = { .pid = 3, .tid = 4 };
	unsigned int j, refused = 0;
	u64 tail = 0, seq, s0 = 0, word, last_time = 0;
	s64 n, losts = 0;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, rec);
	chan_setup(test, type);
	for (j = 0; j < ARRAY_SIZE(raw_sizes); j++) {
		u32 raw = raw_sizes[j];
		bool ok = raw <= KRING_SAMPLE_RAW_MAX;

		d.raw = src;
		d.raw_size = raw;
		preempt_disable();
		ret = kring_channel_write_sample(c->ch, &d);
		preempt_enable();
		KUNIT_EXPECT_EQ_MSG(test, ret, ok ? 0 : -E2BIG, "raw %u", raw);
		refused += !ok;
		n = chan_consume(test, tail, ok ? expected_sample_size(type, raw) : 0, rec);
		KUNIT_ASSERT_GE(test, n, 0LL);
		losts += n;
		if (ok) {
			memcpy(&seq, rec + expected_sample_size(type, raw) - 8, 8);
			expect_sample(test, rec, type, raw, src, seq);
			/* every call numbered, the refused ones too */
			if (!j)
				s0 = seq;
			KUNIT_EXPECT_EQ_MSG(test, seq, s0 + j, "raw %u", raw);
			memcpy(&word, rec + 8, 8);		/* TID */
			KUNIT_EXPECT_EQ(test, word, 3ULL | 4ULL << 32);
			memcpy(&word, rec + 16, 8);		/* TIME, the ring's */
			KUNIT_EXPECT_EQ(test, word, d.time);
			KUNIT_EXPECT_GE(test, d.time, last_time);
			KUNIT_EXPECT_NE(test, d.time, 0ULL);
			last_time = d.time;
		}
		tail = ctl_read(test, CTL(data_head));
	}
	d.raw = NULL;
	d.raw_size = 8;
	preempt_disable();
	ret = kring_channel_write_sample(c->ch, &d);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, ret, -EINVAL);
	KUNIT_EXPECT_EQ(test, chan_consume(test, tail, 0, NULL), 0LL);
	tail = ctl_read(test, CTL(data_head));

	/* The next record that fits reports every refusal in a LOST record. */
	d.raw = src;
	d.raw_size = 8;
	preempt_disable();
	ret = kring_channel_write_sample(c->ch, &d);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, ret, 0);
	losts += chan_consume(test, tail, expected_sample_size(type, 8), NULL);
	KUNIT_EXPECT_EQ(test, losts, (s64)refused);
	expect_chan_accounting(test, refused);
}

/*
 * kring_channel_write() at every length extreme: up to KRING_RECORD_MAX_SIZE
 * less a header written whole, with its type and misc and its padding
 * zeroed, from task context without the caller disabling preemption; the
 * longer ones (2^32 - k too, which once could have wrapped) -E2BIG,
 * counted too big and reported in a LOST record; a body without an
 * address -EINVAL, counted nowhere; a disabled channel -EAGAIN.
 */
static void producer_channel_write(struct kunit *test)
{
	struct chan *c = test->priv;
	u8 *src = raw_source(test);
	u8 *rec = kunit_kmalloc(test, KRING_RECORD_MAX_SIZE, GFP_KERNEL);
	unsigned int i, refused = 0;
	s64 n, losts = 0;
	u64 tail = 0;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, rec);
	chan_setup(test, KRING_SAMPLE_TID);
	for (i = 0; i < ARRAY_SIZE(body_lens); i++) {
		u32 len = body_lens[i];
		bool ok = len <= KRING_RECORD_MAX_SIZE - 8;
		u32 size = ok ? round_up(len + 8, 8) : 0;
		struct kring_record_header hdr;
		u32 j;

		ret = kring_channel_write(c->ch, TEST_TYPE, 0x4000 | i, src, len);
		KUNIT_EXPECT_EQ_MSG(test, ret, ok ? 0 : -E2BIG, "len %u", len);
		refused += !ok;
		n = chan_consume(test, tail, size, rec);
		KUNIT_ASSERT_GE(test, n, 0LL);
		losts += n;
		tail = ctl_read(test, CTL(data_head));
		if (!ok)
			continue;
		memcpy(&hdr, rec, sizeof(hdr));
		KUNIT_EXPECT_EQ(test, hdr.type, (u32)TEST_TYPE);
		KUNIT_EXPECT_EQ(test, hdr.misc, (u16)(0x4000 | i));
		KUNIT_EXPECT_EQ(test, hdr.size, (u16)size);
		KUNIT_EXPECT_EQ_MSG(test, memcmp(rec + 8, src, len), 0, "len %u", len);
		for (j = 8 + len; j < size; j++)
			KUNIT_EXPECT_EQ_MSG(test, rec[j], 0, "len %u padding %u", len, j);
	}
	KUNIT_EXPECT_EQ(test, kring_channel_write(c->ch, TEST_TYPE, 0, NULL, 8), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_channel_write(c->ch, TEST_TYPE, 0, NULL, U32_MAX), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_channel_write(c->ch, TEST_TYPE, 0, NULL, 0), 0);
	losts += chan_consume(test, tail, 8, NULL);
	tail = ctl_read(test, CTL(data_head));
	KUNIT_EXPECT_EQ(test, losts, (s64)refused);
	expect_chan_accounting(test, refused);

	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_DISABLE, NULL, 0), 0L);
	KUNIT_EXPECT_EQ(test, kring_channel_write(c->ch, TEST_TYPE, 0, src, 8), -EAGAIN);
	KUNIT_EXPECT_EQ(test, chan_consume(test, tail, 0, NULL), 0LL);
	expect_chan_accounting(test, refused);
}

/*
 * kring_channel_output_begin() at every size extreme: between a header and
 * KRING_RECORD_MAX_SIZE written in place, whole; the others -E2BIG and
 * counted too big.
 */
static void producer_channel_output_begin(struct kunit *test)
{
	struct chan *c = test->priv;
	unsigned int i, j, refused = 0;
	u64 tail = 0;

	chan_setup(test, KRING_SAMPLE_TID);
	for (i = 0; i < ARRAY_SIZE(record_sizes); i++) {
		u64 size = record_sizes[i];
		bool ok = size >= 8 && size <= KRING_RECORD_MAX_SIZE;
		struct kring_output_handle h;
		struct kring_record_header hdr;
		u8 *at = NULL;
		int ret;

		preempt_disable();
		ret = kring_channel_output_begin(&h, c->ch, size);
		if (!ret) {
			at = kring_output_ptr(&h);
			if (at) {
				hdr = (struct kring_record_header) {
					.type = TEST_TYPE, .size = h.rec_size,
				};
				memcpy(at, &hdr, sizeof(hdr));
				for (j = 8; j < h.rec_size; j++)
					at[j] = pattern(j);
			}
			kring_channel_output_end(&h);
		}
		preempt_enable();
		KUNIT_EXPECT_EQ_MSG(test, ret, ok ? 0 : -E2BIG, "size %llu", size);
		refused += !ok;
		if (!ret)
			KUNIT_EXPECT_NOT_NULL(test, at);
		KUNIT_ASSERT_GE(test, chan_consume(test, tail, ok ? round_up(size, 8) : 0, NULL),
				0LL);
		tail = ctl_read(test, CTL(data_head));
	}
	expect_chan_accounting(test, refused);
}

/*
 * Every refusal inside a reservation, then its end: a copy longer than
 * the reservation, a header after half a header, a SAMPLE that does not
 * match its reservation, and a record the producer gives up
 * (kring_channel_output_discard() after its header). Each reservation
 * becomes a PAD record of its size, counted as discarded, and the valid
 * record written after it is read whole: a producer's bug stays inside
 * its reservation.
 */
static void producer_channel_refusals_end(struct kunit *test)
{
	enum { COPY, HEADER, SAMPLE, DISCARD, NR };
	static const unsigned int sizes[NR] = { 32, 8, 24, 40 };
	struct kring_sample_data d = { .raw_size = 8 };
	struct chan *c = test->priv;
	u64 body[2] = { 0x1122334455667788ULL, 0 }, tail = 0;
	struct kring_output_handle h;
	enum { REC = 24 };	/* the valid record: header and body */
	u8 rec[40 + REC];	/* the largest reservation and the record */
	unsigned int i;
	int ret, refused;

	chan_setup(test, KRING_SAMPLE_RAW);
	d.raw = body;
	for (i = 0; i < NR; i++) {
		refused = 1;
		preempt_disable();
		ret = kring_channel_output_begin(&h, c->ch, sizes[i]);
		if (!ret) {
			switch (i) {
			case COPY:
				refused = kring_output_copy(&h, rec, sizes[i] + 8);
				break;
			case HEADER:
				kring_output_copy(&h, rec, 4);
				refused = kring_output_header(&h, TEST_TYPE, 0);
				break;
			case SAMPLE:	/* RAW of 8 needs 32 bytes with SEQ */
				refused = kring_output_sample(&h, KRING_SAMPLE_RAW, &d);
				break;
			case DISCARD:
				kring_output_header(&h, TEST_TYPE, 0);
				refused = -ECANCELED;
				break;
			}
			if (i == DISCARD)
				kring_channel_output_discard(&h);
			else
				kring_channel_output_end(&h);
		}
		preempt_enable();
		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_EXPECT_EQ_MSG(test, refused, i == SAMPLE ? -EINVAL :
				    i == DISCARD ? -ECANCELED : -E2BIG, "case %u", i);
		body[1] = i;
		KUNIT_ASSERT_EQ(test, kring_channel_write(c->ch, TEST_TYPE, 0, body,
							  sizeof(body)), 0);
		KUNIT_ASSERT_GE_MSG(test, chan_consume(test, tail, sizes[i] + REC, rec),
				    0LL, "case %u", i);
		KUNIT_EXPECT_EQ(test, ((struct kring_record_header *)rec)->type, (u32)TEST_TYPE);
		KUNIT_EXPECT_EQ(test, memcmp(rec + 8, body, sizeof(body)), 0);
		tail += sizes[i] + REC;
		KUNIT_EXPECT_EQ_MSG(test, ctl_read(test, CTL(data_head)), tail, "case %u", i);
		KUNIT_EXPECT_EQ(test, ctl_read(test, CTL(records_discarded)), (u64)i + 1);
		KUNIT_EXPECT_EQ(test, ctl_read(test, CTL(records_written)), (u64)i + 1);
	}
}

struct foreign_write {
	struct kring_channel *ch;
	int ret;
};

static void __maybe_unused foreign_writer(void *arg)
{
	struct foreign_write *f = arg;
	u64 body = 7;

	f->ret = kring_channel_write(f->ch, TEST_TYPE, 0, &body, sizeof(body));
}

/*
 * A channel only producers write takes no lock: its one writer CPU at a
 * time is the producer's rule, and debug kernels (KRING_RING_CHECK_CPU)
 * catch a break of it. Forced here through the producer API itself: a
 * record in flight on this CPU while another CPU writes one (an IPI we
 * wait for). The entry is counted (the ring is marked quiet, the warning
 * is what real misuse prints) and both records are read whole.
 */
static void producer_channel_check_cpu(struct kunit *test)
{
#ifdef KRING_RING_CHECK_CPU
	struct chan *c = test->priv;
	struct foreign_write f = { .ret = 1 };
	struct kring_output_handle h;
	struct kring_buffer *buf;
	int ret, other, call = 1;
	u8 rec[16];

	chan_setup(test, KRING_SAMPLE_TID);
	f.ch = c->ch;
	buf = rcu_access_pointer(c->ch->buf);
	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_ASSERT_FALSE(test, buf->lock_producers);
	buf->ring.cpu_conflicts_quiet = true;
	preempt_disable();
	other = cpumask_any_but(cpu_online_mask, smp_processor_id());
	ret = other < nr_cpu_ids ? kring_channel_output_begin(&h, c->ch, 16) : -ENODEV;
	if (!ret) {
		kring_output_header(&h, TEST_TYPE, 0);
		kring_output_copy(&h, &h.seq, 8);
		call = smp_call_function_single(other, foreign_writer, &f, 1);
		kring_channel_output_end(&h);
	}
	preempt_enable();
	if (ret == -ENODEV)
		kunit_skip(test, "needs a second online CPU");
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, call, 0);
	KUNIT_EXPECT_EQ(test, f.ret, 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&buf->ring.cpu_conflicts), 1);
	KUNIT_EXPECT_EQ(test, chan_consume(test, 0, 32, rec), 0LL);
#else
	kunit_skip(test, "KRING_RING_CHECK_CPU is off in this kernel");
#endif
}

/*
 * kring_capture_emit(), the capture sources' one path, takes the same
 * bound: RAW beyond KRING_SAMPLE_RAW_MAX is lost as too big.
 */
static void producer_capture_emit(struct kunit *test)
{
	const u64 type = KRING_SAMPLE_RAW | KRING_SAMPLE_TID | KRING_SAMPLE_SEQ;
	struct chan *c = test->priv;
	struct kring_capture *cap = kunit_kzalloc(test, sizeof(*cap), GFP_KERNEL);
	u8 *src = raw_source(test);
	u8 *rec = kunit_kmalloc(test, KRING_RECORD_MAX_SIZE, GFP_KERNEL);
	struct kring_sample_data d = { .raw = src };
	unsigned int j, refused = 0;
	u64 tail = 0, seq;

	KUNIT_ASSERT_NOT_NULL(test, cap);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	chan_setup(test, type);
	cap->ch = c->ch;
	cap->cpu = -1;
	for (j = 0; j < ARRAY_SIZE(raw_sizes); j++) {
		u32 raw = raw_sizes[j];
		bool ok = raw <= KRING_SAMPLE_RAW_MAX;

		d.raw_size = raw;
		preempt_disable();
		kring_capture_emit(cap, &d);
		preempt_enable();
		refused += !ok;
		KUNIT_ASSERT_GE(test, chan_consume(test, tail,
						   ok ? expected_sample_size(type, raw) : 0, rec),
				0LL);
		if (ok) {
			memcpy(&seq, rec + expected_sample_size(type, raw) - 8, 8);
			expect_sample(test, rec, type, raw, src, seq);
		}
		tail = ctl_read(test, CTL(data_head));
	}
	expect_chan_accounting(test, refused);
}

/*
 * The AUX calls at their u64 extremes: a copy or skip beyond the extent's
 * room -ENOSPC (no sum of offset and length wraps), the end's size
 * clamped, only the producer's flags taken; the bytes land where they were
 * asked to, in the area, and nowhere else.
 */
static void producer_aux_bounds(struct kunit *test)
{
	struct chan *c = test->priv;
	const u64 aux_size = 4 * PAGE_SIZE;
	const u64 bad[][2] = {
		{ 0, aux_size + 1 }, { 1, aux_size }, { aux_size, 1 }, { aux_size + 1, 0 },
		{ 1, U64_MAX }, { U64_MAX, 1 }, { U64_MAX, 0 }, { U64_MAX - 7, 16 },
		{ 8, U64_MAX - 7 }, { U32_MAX, 1 }, { 0, 1ULL << 32 },
	};
	int r_bad[ARRAY_SIZE(bad)] = {}, r_edge[3] = {}, r_skip[3] = {}, ret;
	struct kring_aux_record rec;
	struct kring_aux_handle h;
	unsigned long aux_addr;
	u64 h_size = 0, h_head = ~0ULL;
	u8 *src, *back;
	unsigned int i;

	src = kunit_kmalloc(test, aux_size, GFP_KERNEL);
	back = kunit_kmalloc(test, aux_size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, src);
	KUNIT_ASSERT_NOT_NULL(test, back);
	for (i = 0; i < aux_size; i++)
		src[i] = pattern(i);
	chan_setup(test, KRING_SAMPLE_TID);
	ctl_write(test, CTL(aux_offset), PAGE_SIZE + c->data_size);
	ctl_write(test, CTL(aux_size), aux_size);
	aux_addr = kunit_vm_mmap(test, c->dev.file, 0, aux_size, PROT_READ | PROT_WRITE,
				 MAP_SHARED, PAGE_SIZE + c->data_size);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(aux_addr));

	preempt_disable();
	ret = kring_aux_output_begin(&h, c->ch);
	if (!ret) {
		h_size = h.size;
		for (i = 0; i < ARRAY_SIZE(bad); i++)
			r_bad[i] = kring_aux_output_copy(&h, bad[i][0], src, bad[i][1]);
		r_skip[0] = kring_aux_output_skip(&h, U64_MAX);
		r_skip[1] = kring_aux_output_skip(&h, aux_size + 1);
		/* The valid extremes: nothing at the end, all from the start. */
		r_edge[0] = kring_aux_output_copy(&h, aux_size, src, 0);
		r_edge[1] = kring_aux_output_copy(&h, 0, src, aux_size);
		r_edge[2] = kring_aux_output_copy(&h, aux_size - 1, src, 1);
		r_skip[2] = kring_aux_output_skip(&h, 0);
		kring_aux_output_flag(&h, U64_MAX);
		h_head = h.head;
		kring_aux_output_end(&h, U64_MAX);
	}
	preempt_enable();
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, h_size, aux_size);
	KUNIT_EXPECT_EQ(test, h_head, 0ULL);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, r_bad[i], -ENOSPC, "offset %llu len %llu",
				    bad[i][0], bad[i][1]);
	KUNIT_EXPECT_EQ(test, r_skip[0], -ENOSPC);
	KUNIT_EXPECT_EQ(test, r_skip[1], -ENOSPC);
	KUNIT_EXPECT_EQ(test, r_skip[2], 0);
	for (i = 0; i < ARRAY_SIZE(r_edge); i++)
		KUNIT_EXPECT_EQ(test, r_edge[i], 0);

	/* The end clamped U64_MAX to the extent: the whole area, announced. */
	KUNIT_EXPECT_EQ(test, ctl_read(test, CTL(aux_head)), aux_size);
	KUNIT_ASSERT_EQ(test, ctl_read(test, CTL(data_head)), (u64)sizeof(rec));
	chan_read(test, 0, &rec, sizeof(rec));
	KUNIT_EXPECT_EQ(test, rec.header.type, (u32)KRING_RECORD_AUX);
	KUNIT_EXPECT_EQ(test, rec.aux_offset, 0ULL);
	KUNIT_EXPECT_EQ(test, rec.aux_size, aux_size);
	KUNIT_EXPECT_EQ(test, rec.flags, (u64)(KRING_AUX_FLAG_TRUNCATED | KRING_AUX_FLAG_PARTIAL |
					       KRING_AUX_FLAG_COLLISION));
	KUNIT_ASSERT_EQ(test, copy_from_user(back, (void __user *)aux_addr, aux_size), 0UL);
	src[aux_size - 1] = src[0];
	KUNIT_EXPECT_EQ(test, memcmp(back, src, aux_size), 0);
	expect_chan_accounting(test, 0);
}

/*
 * Taking a channel: by id (0 and 2^64 - 1 name none), and by a descriptor
 * of the current process, which must be an open /dev/kring file.
 */
static void producer_channel_get(struct kunit *test)
{
	const u64 type = KRING_SAMPLE_TID | KRING_SAMPLE_SEQ;
	struct kring_sample_data d = { .pid = 5, .tid = 6 };
	struct kring_channel *ch, *none;
	struct chan *c = test->priv;
	struct file *other;
	int fd, ofd, ret;

	chan_setup(test, type);
	KUNIT_EXPECT_PTR_EQ(test, c->ch, (struct kring_channel *)c->dev.file->private_data);
	KUNIT_EXPECT_NULL(test, kring_channel_get(0));
	KUNIT_EXPECT_NULL(test, kring_channel_get(U64_MAX));
	KUNIT_EXPECT_NULL(test, kring_channel_get(c->id + (1ULL << 32)));
	kring_channel_put(NULL);

	/* A descriptor of this (kernel) thread's file table. */
	fd = get_unused_fd_flags(O_CLOEXEC);
	KUNIT_ASSERT_GE(test, fd, 0);
	fd_install(fd, get_file(c->dev.file));
	ch = kring_channel_get_fd(fd);
	KUNIT_EXPECT_PTR_EQ(test, ch, c->ch);
	KUNIT_EXPECT_NULL(test, __kring_channel_get_fd(fd, KRING_PRODUCER_API_VERSION + 1));
	if (ch) {
		preempt_disable();
		ret = kring_channel_write_sample(ch, &d);
		preempt_enable();
		KUNIT_EXPECT_EQ(test, ret, 0);
		kring_channel_put(ch);
	}
	KUNIT_EXPECT_EQ(test, chan_consume(test, 0, kring_sample_size(type, 0), NULL), 0LL);
	KUNIT_EXPECT_EQ(test, close_fd(fd), 0);
	/* Closed: the number names nothing any more. */
	none = kring_channel_get_fd(fd);
	KUNIT_EXPECT_NULL(test, none);
	kring_channel_put(none);

	/* Another file than /dev/kring. */
	other = filp_open("/dev/null", O_RDONLY, 0);
	if (!IS_ERR(other)) {
		ofd = get_unused_fd_flags(O_CLOEXEC);
		KUNIT_ASSERT_GE(test, ofd, 0);
		fd_install(ofd, other);
		none = kring_channel_get_fd(ofd);
		KUNIT_EXPECT_NULL(test, none);
		kring_channel_put(none);
		KUNIT_EXPECT_EQ(test, close_fd(ofd), 0);
	}
	KUNIT_EXPECT_NULL(test, kring_channel_get_fd(-1));
	KUNIT_EXPECT_NULL(test, kring_channel_get_fd(INT_MIN));
	KUNIT_EXPECT_NULL(test, kring_channel_get_fd(INT_MAX));
}

/* Up to a minute for the wakeup irq_work to run: only a defect waits that long. */
static bool wakeup_ran(struct kring_channel *ch)
{
	unsigned int i;

	for (i = 0; i < 3000 && !atomic_read(&ch->poll_pending); i++)
		msleep(20);
	return atomic_read(&ch->poll_pending);
}

/*
 * A wakeup due on every record (wakeup_events 1, need_wakeup set) queues
 * the wakeup irq_work once per poll, not once per record: once it ran,
 * records that find it due queue nothing until a poll took it in. (On
 * PREEMPT_RT that irq_work runs in a SCHED_FIFO thread: one per record
 * from a busy writer starved the CPU's normal threads, CPU hotplug's
 * among them.) Interrupts stay off from each write to the look at the
 * irq_work, so it cannot run in between.
 */
static void producer_channel_wakeup_per_poll(struct kunit *test)
{
	struct kring_wakeup w = { .watermark = 0, .events = 1 };
	struct kring_sample_data d = { .pid = 3, .tid = 4 };
	struct chan *c = test->priv;
	unsigned int i, queued = 0;
	unsigned long flags;
	u64 wakeups;
	int ret;

	chan_setup(test, KRING_SAMPLE_TID);
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_SET_WAKEUP, &w, sizeof(w)), 0L);
	ctl_write(test, CTL(need_wakeup), 1);
	preempt_disable();
	ret = kring_channel_write_sample(c->ch, &d);
	preempt_enable();
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_TRUE_MSG(test, wakeup_ran(c->ch), "the first wakeup never ran");

	wakeups = ctl_read(test, CTL(wakeups));
	for (i = 0; i < 100; i++) {
		local_irq_save(flags);
		ret = kring_channel_write_sample(c->ch, &d);
		queued += irq_work_is_pending(&c->ch->wakeup_work);
		local_irq_restore(flags);
		KUNIT_EXPECT_EQ(test, ret, 0);
	}
	KUNIT_EXPECT_EQ_MSG(test, ctl_read(test, CTL(wakeups)) - wakeups, 100ULL,
			    "a wakeup was not due on every record");
	KUNIT_EXPECT_EQ_MSG(test, queued, 0U, "wakeups queued with no poll since the last");

	/* A poll takes the wakeup in; the next record wakes it again. */
	KUNIT_EXPECT_TRUE(test, vfs_poll(c->dev.file, NULL) & EPOLLIN);
	local_irq_save(flags);
	ret = kring_channel_write_sample(c->ch, &d);
	queued = irq_work_is_pending(&c->ch->wakeup_work);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, queued, 1U, "no wakeup after a poll");
	KUNIT_EXPECT_TRUE(test, wakeup_ran(c->ch));
	expect_chan_accounting(test, 0);
}

/* Sample types of kring_channel_write_raw()'s layouts (SEQ is added) */
static const u64 raw_types[] = {
	KRING_SAMPLE_RAW,
	KRING_SAMPLE_TIME | KRING_SAMPLE_RAW,
	KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW,
	KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD | KRING_SAMPLE_RAW,
	KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_IP | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
		KRING_SAMPLE_ID | KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD | KRING_SAMPLE_RAW,
	KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_PERIOD,
};

static void raw_type_desc(const u64 *type, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "sample_type %#llx", *type);
}

KUNIT_ARRAY_PARAM(raw_type, raw_types, raw_type_desc);

/*
 * The fixed fields of SAMPLE @rec of @type, in perf's order, as
 * kring_channel_write_raw() fills them on @cpu; *@time gets TIME's.
 */
static void expect_raw_fields(struct kunit *test, const u8 *rec, u64 type, unsigned int cpu,
			      u64 *time)
{
	struct chan *c = test->priv;
	const u64 want[] = {
		c->id,					/* IDENTIFIER */
		0,					/* IP: no kernel address */
		(u64)(u32)task_tgid_nr(current) |
			(u64)(u32)task_pid_nr(current) << 32,	/* TID */
		0,					/* TIME: the ring's */
		c->id,					/* ID */
		cpu,					/* CPU, then 4 bytes of 0 */
		1,					/* PERIOD */
	};
	const u64 bits[] = {
		KRING_SAMPLE_IDENTIFIER, KRING_SAMPLE_IP, KRING_SAMPLE_TID, KRING_SAMPLE_TIME,
		KRING_SAMPLE_ID, KRING_SAMPLE_CPU, KRING_SAMPLE_PERIOD,
	};
	unsigned int i, at = 8;
	u64 word;

	*time = 0;
	for (i = 0; i < ARRAY_SIZE(bits); i++) {
		if (!(type & bits[i]))
			continue;
		memcpy(&word, rec + at, 8);
		at += 8;
		if (bits[i] == KRING_SAMPLE_TIME)
			*time = word;
		else
			KUNIT_EXPECT_EQ_MSG(test, word, want[i], "field %u", i);
	}
}

/*
 * kring_channel_write_raw() on every layout of raw_types[]: the fields other
 * than RAW from the context, each checked in place (IDENTIFIER and ID the
 * channel's id, IP 0, TID the task's tgid and pid, TIME the ring's, never
 * decreasing, CPU this one, PERIOD 1), every call numbered; RAW at every
 * extreme as kring_channel_write_sample(): above the bound -E2BIG, counted
 * too big and reported in a LOST record; without an address -EINVAL,
 * counted nowhere. Without RAW in the sample_type the data is not written
 * and nothing is refused.
 */
static void producer_channel_write_raw(struct kunit *test)
{
	const u64 type = *(const u64 *)test->param_value | KRING_SAMPLE_SEQ;
	const bool has_raw = type & KRING_SAMPLE_RAW;
	struct chan *c = test->priv;
	u8 *src = raw_source(test);
	u8 *rec = kunit_kmalloc(test, KRING_RECORD_MAX_SIZE, GFP_KERNEL);
	u64 tail = 0, seq, s0 = 0, time, last_time = 0;
	unsigned int j, refused = 0, cpu;
	s64 n, losts = 0;
	int ret;

	KUNIT_ASSERT_NOT_NULL(test, rec);
	chan_setup(test, type);
	for (j = 0; j < ARRAY_SIZE(raw_sizes); j++) {
		u32 raw = raw_sizes[j];
		bool ok = !has_raw || raw <= KRING_SAMPLE_RAW_MAX;
		u64 size = expected_sample_size(type, raw);

		preempt_disable();
		cpu = smp_processor_id();
		ret = kring_channel_write_raw(c->ch, src, raw);
		preempt_enable();
		KUNIT_EXPECT_EQ_MSG(test, ret, ok ? 0 : -E2BIG, "raw %u", raw);
		refused += !ok;
		n = chan_consume(test, tail, ok ? size : 0, rec);
		KUNIT_ASSERT_GE(test, n, 0LL);
		losts += n;
		tail = ctl_read(test, CTL(data_head));
		if (!ok)
			continue;
		memcpy(&seq, rec + size - 8, 8);
		expect_sample(test, rec, type, raw, src, seq);
		if (!j)
			s0 = seq;
		KUNIT_EXPECT_EQ_MSG(test, seq, s0 + j, "raw %u", raw);
		expect_raw_fields(test, rec, type, cpu, &time);
		if (type & KRING_SAMPLE_TIME) {
			KUNIT_EXPECT_NE(test, time, 0ULL);
			KUNIT_EXPECT_GE(test, time, last_time);
			last_time = time;
		}
	}
	preempt_disable();
	ret = kring_channel_write_raw(c->ch, NULL, 8);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, ret, has_raw ? -EINVAL : 0);
	KUNIT_EXPECT_EQ(test, chan_consume(test, tail, has_raw ? 0 : expected_sample_size(type, 0),
					   NULL), 0LL);
	tail = ctl_read(test, CTL(data_head));

	/* The next record that fits reports every refusal in a LOST record. */
	preempt_disable();
	ret = kring_channel_write_raw(c->ch, NULL, 0);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, ret, 0);
	losts += chan_consume(test, tail, expected_sample_size(type, 0), NULL);
	KUNIT_EXPECT_EQ(test, losts, (s64)refused);
	expect_chan_accounting(test, refused);
}

static struct kunit_case producer_channel_cases[] = {
	KUNIT_CASE(producer_channel_get),
	KUNIT_CASE(producer_channel_output_begin),
	KUNIT_CASE(producer_channel_refusals_end),
	KUNIT_CASE(producer_channel_check_cpu),
	KUNIT_CASE(producer_channel_write),
	KUNIT_CASE(producer_aux_bounds),
	KUNIT_CASE(producer_capture_emit),
	KUNIT_CASE(producer_channel_write_sample),
	KUNIT_CASE_PARAM(producer_channel_write_raw, raw_type_gen_params),
	KUNIT_CASE(producer_channel_wakeup_per_poll),
	{}
};

static struct kunit_suite producer_channel_suite = {
	.name = "kring_producer_channel",
	.init = chan_init,
	.exit = chan_exit,
	.test_cases = producer_channel_cases,
};

kunit_test_suites(&producer_suite, &producer_channel_suite);

#else

kunit_test_suite(producer_suite);

#endif /* KRING_HAVE_KUNIT_VM_MMAP */
