// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kring_clock": clock.c, the arithmetic of perf's time conversion
 * fields and the timestamp floor's rules.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/gfp.h>
#include <linux/math64.h>

#include "compat.h"
#include "capture.h"

struct tsc_case {
	u32 khz;
	const char *desc;
};

static const struct tsc_case tsc_cases[] = {
	{ 1000, "1 MHz" },
	{ 19200, "19.2 MHz (arch timer)" },
	{ 1000000, "1 GHz" },
	{ 2112003, "2.112003 GHz" },
	{ 3700000, "3.7 GHz" },
	{ 5000000, "5 GHz" },
};

static void tsc_case_desc(const struct tsc_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(tsc, tsc_cases, tsc_case_desc);

/* The conversion of one second's worth of cycles is one second (+-1 ppm). */
static void capture_tsc_mult_shift(struct kunit *test)
{
	const struct tsc_case *c = test->param_value;
	u64 cycles = (u64)c->khz * 1000;
	u32 mult;
	u16 shift;
	u64 ns;

	KUNIT_ASSERT_EQ(test, kring_tsc_mult_shift(c->khz, &mult, &shift), 0);
	KUNIT_EXPECT_GT(test, shift, (u16)0);
	KUNIT_EXPECT_LE(test, shift, (u16)32);
	ns = kring_cyc_to_ns(cycles, mult, shift, 0);
	KUNIT_EXPECT_LE(test, abs_diff(ns, (u64)NSEC_PER_SEC), 1000ULL);
	/* Far from zero (a machine up for a year) the split form still holds. */
	ns = kring_cyc_to_ns(cycles * 86400 * 365, mult, shift, 0);
	KUNIT_EXPECT_LE(test, abs_diff(ns, (u64)NSEC_PER_SEC * 86400 * 365),
			(u64)NSEC_PER_SEC * 86400 * 365 / 1000000);
	KUNIT_EXPECT_EQ(test, kring_tsc_mult_shift(0, &mult, &shift), -EINVAL);
}

/* time_zero makes the reading it was computed from convert to "now". */
static void capture_time_zero(struct kunit *test)
{
	static const u64 cycs[] = { 0, 1, 123456789, 1ULL << 40, ~0ULL >> 4 };
	u64 now = 5000000000ULL;
	unsigned int i;
	u32 mult;
	u16 shift;

	KUNIT_ASSERT_EQ(test, kring_tsc_mult_shift(2400000, &mult, &shift), 0);
	for (i = 0; i < ARRAY_SIZE(cycs); i++) {
		u64 zero = kring_time_zero(now, cycs[i], mult, shift);

		KUNIT_EXPECT_EQ(test, kring_cyc_to_ns(cycs[i], mult, shift, zero), now);
		/* 2.4 GHz: 2400 cycles later is one microsecond later. */
		KUNIT_EXPECT_LE(test, abs_diff(kring_cyc_to_ns(cycs[i] + 2400, mult, shift, zero),
					       now + 1000), 1ULL);
	}
}

static void capture_clock_ids(struct kunit *test)
{
	KUNIT_EXPECT_TRUE(test, kring_clock_valid(KRING_CLOCK_DEFAULT));
	KUNIT_EXPECT_TRUE(test, kring_clock_valid(KRING_CLOCK_MONOTONIC));
	KUNIT_EXPECT_TRUE(test, kring_clock_valid(KRING_CLOCK_MONOTONIC_RAW));
	KUNIT_EXPECT_TRUE(test, kring_clock_valid(KRING_CLOCK_BOOTTIME));
	KUNIT_EXPECT_TRUE(test, kring_clock_valid(KRING_CLOCK_LOCAL));
	KUNIT_EXPECT_FALSE(test, kring_clock_valid(2));		/* process CPU time */
	KUNIT_EXPECT_FALSE(test, kring_clock_valid(0xffffffff));
}

/* ---- timestamp floor -------------------------------------------------- */

static u64 fake_now;

static u64 fake_clock(void)
{
	return fake_now;
}

struct floor_ring {
	struct kring_ring rb;
	struct kring_ctl_page *ctl;
	void *pages[2];
};

static void floor_free_page(void *addr)
{
	free_page((unsigned long)addr);
}

static struct floor_ring *floor_ring_new(struct kunit *test)
{
	struct floor_ring *fr = kunit_kzalloc(test, sizeof(*fr), GFP_KERNEL);
	unsigned int i;
	void *p;

	KUNIT_ASSERT_NOT_NULL(test, fr);
	for (i = 0; i < 3; i++) {
		p = (void *)get_zeroed_page(GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(test, p);
		KUNIT_ASSERT_EQ(test, 0, kunit_add_action_or_reset(test, floor_free_page, p));
		if (i < 2)
			fr->pages[i] = p;
		else
			fr->ctl = p;
	}
	KUNIT_ASSERT_EQ(test, 0, kring_ring_init(&fr->rb, fr->ctl, fr->pages, 2, 0, 1));
	fr->rb.clock = fake_clock;
	return fr;
}

/* The floor follows the clock, never goes down, and 0 means "none yet". */
static void capture_floor_follows_clock(struct kunit *test)
{
	struct floor_ring *fr = floor_ring_new(test);

	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 0ULL);
	fake_now = 1000;
	kring_floor_advance(&fr->rb);
	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 1000ULL);
	fake_now = 900;		/* a clock read that lost a race: no step back */
	kring_floor_advance(&fr->rb);
	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 1000ULL);
	fake_now = 2000;
	kring_floor_advance(&fr->rb);
	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 2000ULL);
}

/*
 * A writer interrupted between its clock read and its commit holds the
 * floor back: the record it commits later has an older time.
 */
static void capture_floor_waits_for_writer(struct kunit *test)
{
	struct floor_ring *fr = floor_ring_new(test);
	struct kring_output_handle h;
	u64 rec_time;

	fake_now = 100;
	preempt_disable();
	KUNIT_ASSERT_EQ(test, kring_output_begin(&h, &fr->rb, 16, 0), 0);
	rec_time = h.time;
	fake_now = 500;		/* "an interrupt" runs here ... */
	kring_floor_advance(&fr->rb);
	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 0ULL);
	kring_output_header(&h, KRING_RECORD_SAMPLE, 0);
	kring_output_copy(&h, &rec_time, 8);
	kring_output_end(&h);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, rec_time, 100ULL);
	/* Once the writer committed, the floor may pass its time. */
	kring_floor_advance(&fr->rb);
	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 500ULL);
	/* and every later record is at or above it */
	preempt_disable();
	KUNIT_ASSERT_EQ(test, kring_output_begin(&h, &fr->rb, 16, 0), 0);
	KUNIT_EXPECT_GE(test, h.time, fr->ctl->timestamp_floor);
	kring_output_discard(&h);
	preempt_enable();
}

/*
 * A record committed by a writer that interrupted the outermost writer's
 * publication (after it read ->head) is published by that writer's re-check
 * of ->head, which comes after it dropped ->nest to 0. A floor tick in
 * between finds ->nest at 0 yet must hold the floor back: that record is
 * committed but unpublished, with an older time. (Found by the relacy
 * model's floor-ignores-pending variant, tests/model/ring_model.cpp.)
 * Built here by hand: the outermost writer's state at that instant is
 * ->nest == 0 with the nested record reserved past the published head.
 */
static void capture_floor_waits_for_publication(struct kunit *test)
{
	struct floor_ring *fr = floor_ring_new(test);
	struct kring_output_handle outer, inner;
	u64 inner_time;

	fake_now = 100;
	preempt_disable();
	KUNIT_ASSERT_EQ(test, kring_output_begin(&outer, &fr->rb, 16, 0), 0);
	kring_output_header(&outer, KRING_RECORD_SAMPLE, 0);
	kring_output_copy(&outer, &fake_now, 8);
	fake_now = 200;
	KUNIT_ASSERT_EQ(test, kring_output_begin(&inner, &fr->rb, 16, 0), 0);
	inner_time = inner.time;
	kring_output_header(&inner, KRING_RECORD_SAMPLE, 0);
	kring_output_copy(&inner, &inner_time, 8);
	kring_output_end(&inner);	/* nested: not published */
	KUNIT_EXPECT_EQ(test, READ_ONCE(fr->ctl->data_head), 0ULL);

	fr->rb.nest = 0;		/* the outermost writer dropped ->nest ... */
	fake_now = 500;			/* ... and the floor tick comes */
	kring_floor_advance(&fr->rb);
	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 0ULL);
	fr->rb.nest = 1;

	kring_output_end(&outer);
	preempt_enable();
	KUNIT_EXPECT_EQ(test, inner_time, 200ULL);
	KUNIT_EXPECT_EQ(test, READ_ONCE(fr->ctl->data_head), 32ULL);
	kring_floor_advance(&fr->rb);
	KUNIT_EXPECT_EQ(test, fr->ctl->timestamp_floor, 500ULL);
}

static struct kunit_case kring_capture_cases[] = {
	KUNIT_CASE_PARAM(capture_tsc_mult_shift, tsc_gen_params),
	KUNIT_CASE(capture_time_zero),
	KUNIT_CASE(capture_clock_ids),
	KUNIT_CASE(capture_floor_follows_clock),
	KUNIT_CASE(capture_floor_waits_for_writer),
	KUNIT_CASE(capture_floor_waits_for_publication),
	{}
};

static struct kunit_suite kring_clock_suite = {
	.name = "kring_clock",
	.test_cases = kring_capture_cases,
};

kunit_test_suite(kring_clock_suite);
