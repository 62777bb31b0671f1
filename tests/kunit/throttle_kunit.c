// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kring_throttle": throttle.c's rule on a clock the test
 * drives. Which samples of a window run (kring.max_sample_rate,
 * kring.cpu_time_max_percent, limits off), and a refused periodic source's
 * deferral to the next window, with every period it does not tick counted.
 * The guest tests check the wiring (Security.*Throttled*); the arithmetic
 * is checked here, where no host's pace can change the answer.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/hrtimer.h>
#include <linux/math64.h>

#include "compat.h"
#include "capture.h"

#define WIN	KRING_THROTTLE_WINDOW_NS
/* A window-aligned time far from zero: window 1000 (10 s of uptime). */
#define BASE	(1000 * WIN)

/*
 * Samples at @hz from @from for @ns, each taking @cost ns: how many ran,
 * and the most in one window.
 */
static u64 throttle_run(struct kunit *test, struct kring_throttle *th, u64 from, u64 ns,
			u64 hz, u64 cost, unsigned int rate, unsigned int pct, u64 *max_per_win)
{
	u64 step = div64_u64(NSEC_PER_SEC, hz), ran = 0, in_win = 0, win = U64_MAX, t;

	*max_per_win = 0;
	for (t = from; t < from + ns; t += step) {
		if (div64_u64(t, WIN) != win) {
			win = div64_u64(t, WIN);
			in_win = 0;
		}
		if (!kring_throttle_admit(th, t, rate, pct))
			continue;
		th->busy_ns += cost;		/* kring_throttle_exit() */
		ran++;
		*max_per_win = max(*max_per_win, ++in_win);
	}
	return ran;
}

/* max_sample_rate: rate / 100 samples in each 10 ms window, never more. */
static void throttle_rate(struct kunit *test)
{
	static const unsigned int rates[] = { 100, 500, 1000, 100000 };
	struct kring_throttle th = {};
	u64 most, ran;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rates); i++) {
		/* A 200 kHz source for one second, samples of no cost. */
		ran = throttle_run(test, &th, BASE + i * NSEC_PER_SEC, NSEC_PER_SEC, 200000, 0,
				   rates[i], 0, &most);
		KUNIT_EXPECT_EQ_MSG(test, ran, (u64)rates[i], "rate %u", rates[i]);
		KUNIT_EXPECT_EQ_MSG(test, most, (u64)rates[i] / 100, "rate %u", rates[i]);
	}
	/* A source slower than the limit loses nothing. */
	ran = throttle_run(test, &th, BASE + 9 * NSEC_PER_SEC, NSEC_PER_SEC, 400, 0, 500, 0,
			   &most);
	KUNIT_EXPECT_EQ(test, ran, 400ULL);
}

/* Below one sample per window, the first sample of each window runs. */
static void throttle_first_of_window_runs(struct kunit *test)
{
	struct kring_throttle th = {};
	u64 most, ran;

	ran = throttle_run(test, &th, BASE, NSEC_PER_SEC, 20000, 0, 1, 0, &most);
	KUNIT_EXPECT_EQ(test, ran, 100ULL);
	KUNIT_EXPECT_EQ(test, most, 1ULL);
	/* A sample longer than the whole budget runs, the next one does not. */
	ran = throttle_run(test, &th, BASE + 2 * NSEC_PER_SEC, NSEC_PER_SEC, 20000, 2 * WIN, 0,
			   25, &most);
	KUNIT_EXPECT_EQ(test, ran, 100ULL);
	KUNIT_EXPECT_EQ(test, most, 1ULL);
}

/*
 * cpu_time_max_percent: a window runs samples until their time reaches
 * pct % of it, overrunning by at most the last one.
 */
static void throttle_cpu_time(struct kunit *test)
{
	static const struct {
		unsigned int pct;
		u64 cost;
	} cases[] = {
		{ 1, 30000 },		/* 100 us budget, 30 us samples: 4 run */
		{ 1, 1000 },		/* 100 of 1 us */
		{ 1, 99999 },		/* 2 */
		{ 25, 7000 },		/* 2.5 ms budget: 358 */
		{ 99, 1000000 },	/* 9.9 ms: 10 */
	};
	struct kring_throttle th = {};
	unsigned int i;
	u64 most, ran;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		u64 budget = div64_u64(WIN * cases[i].pct, 100);
		u64 per_win = DIV_ROUND_UP_ULL(budget, cases[i].cost);

		/* A 1 MHz source for 100 ms: it could run 10^4 per window. */
		ran = throttle_run(test, &th, BASE + i * NSEC_PER_SEC, 10 * WIN, 1000000,
				   cases[i].cost, 0, cases[i].pct, &most);
		KUNIT_EXPECT_EQ_MSG(test, most, per_win, "pct %u cost %llu", cases[i].pct,
				    cases[i].cost);
		KUNIT_EXPECT_EQ_MSG(test, ran, 10 * per_win, "pct %u cost %llu", cases[i].pct,
				    cases[i].cost);
		KUNIT_EXPECT_LT(test, (most - 1) * cases[i].cost, budget);
	}
}

/* 0 turns each limit off, and so does a share of 100 % or more. */
static void throttle_off(struct kunit *test)
{
	static const unsigned int pcts[] = { 0, 100, 101, UINT_MAX };
	struct kring_throttle th = {};
	unsigned int i;
	u64 most, ran;

	for (i = 0; i < ARRAY_SIZE(pcts); i++) {
		ran = throttle_run(test, &th, BASE + i * WIN, WIN, 10000000, WIN, 0, pcts[i],
				   &most);
		KUNIT_EXPECT_EQ_MSG(test, ran, 100000ULL, "pct %u", pcts[i]);
	}
	/* The largest rate is no limit either, and nothing overflows. */
	ran = throttle_run(test, &th, BASE + 10 * WIN, WIN, 10000000, 0, UINT_MAX, 0, &most);
	KUNIT_EXPECT_EQ(test, ran, 100000ULL);
}

/* Windows far from zero, and at the clock's end, count as any other. */
static void throttle_clock_extremes(struct kunit *test)
{
	static const u64 starts[] = { 0, 1, WIN - 1, U64_MAX - 3 * WIN, U64_MAX - WIN / 2 };
	unsigned int i, j;

	for (i = 0; i < ARRAY_SIZE(starts); i++) {
		struct kring_throttle th = {};
		u64 t = starts[i], ran = 0;

		/* 500/s: 5 per window; 20 samples 1 ns apart in one window. */
		for (j = 0; j < 20 && t + j >= t; j++)
			ran += kring_throttle_admit(&th, t + j, 500, 0);
		if (div64_u64(t, WIN) == div64_u64(t + 19, WIN))
			KUNIT_EXPECT_EQ_MSG(test, ran, 5ULL, "from %llu", t);
		else
			KUNIT_EXPECT_LE_MSG(test, ran, 10ULL, "from %llu", t);
	}
}

static enum hrtimer_restart throttle_timer_fn(struct hrtimer *t)
{
	return HRTIMER_NORESTART;
}

/*
 * Skips @t from @late ns past its expiry at @now; the timer source forwards
 * past the tick first (@forwarded), the AUX tracer does not.
 */
static void throttle_skip_one(struct kunit *test, struct hrtimer *t, u64 period, u64 now,
			      u64 late, bool forwarded)
{
	u64 eff = max_t(u64, period, hrtimer_resolution), e0 = now - late;
	u64 next = (div64_u64(now, WIN) + 1) * WIN, passed = 0, n, e1;

	hrtimer_set_expires(t, ns_to_ktime(e0));
	if (forwarded)
		passed = hrtimer_forward(t, ns_to_ktime(now), ns_to_ktime(period));
	n = kring_throttle_skip(t, ns_to_ktime(now), period, passed);
	e1 = ktime_to_ns(hrtimer_get_expires(t));
	KUNIT_EXPECT_EQ_MSG(test, e1 - e0, n * eff, "period %llu at %llu late %llu%s", period,
			    now, late, forwarded ? " forwarded" : "");
	KUNIT_EXPECT_GT_MSG(test, e1, next, "period %llu at %llu late %llu", period, now, late);
	KUNIT_EXPECT_LE_MSG(test, e1 - eff, next, "period %llu at %llu late %llu", period, now,
			    late);
	KUNIT_EXPECT_GE(test, n, 1ULL);
}

/*
 * A refused periodic source ticks next in the next window, and the ticks
 * it does not take are all counted: the expiry moves by exactly the count
 * times the period, to the first tick after the window starts.
 */
static void throttle_skip_counts_every_period(struct kunit *test)
{
	static const u64 periods[] = { 1, 50000, 1000000, 3000000, WIN, 25000000 };
	static const u64 at[] = { 0, 1, 49999, 5000000, WIN - 1 };
	static const u64 late[] = { 0, 1, 3 * 50000 + 7, 25000000 };
	struct hrtimer *t = kunit_kzalloc(test, sizeof(*t), GFP_KERNEL);
	unsigned int p, a, l;

	KUNIT_ASSERT_NOT_NULL(test, t);
	kring_hrtimer_setup(t, throttle_timer_fn, CLOCK_MONOTONIC, HRTIMER_MODE_REL_HARD);
	for (p = 0; p < ARRAY_SIZE(periods); p++) {
		for (a = 0; a < ARRAY_SIZE(at); a++) {
			for (l = 0; l < ARRAY_SIZE(late); l++) {
				throttle_skip_one(test, t, periods[p], BASE + at[a], late[l],
						  false);
				throttle_skip_one(test, t, periods[p], BASE + at[a], late[l],
						  true);
			}
		}
	}
}

static struct kunit_case kring_throttle_cases[] = {
	KUNIT_CASE(throttle_rate),
	KUNIT_CASE(throttle_first_of_window_runs),
	KUNIT_CASE(throttle_cpu_time),
	KUNIT_CASE(throttle_off),
	KUNIT_CASE(throttle_clock_extremes),
	KUNIT_CASE(throttle_skip_counts_every_period),
	{}
};

static struct kunit_suite kring_throttle_suite = {
	.name = "kring_throttle",
	.test_cases = kring_throttle_cases,
};

kunit_test_suite(kring_throttle_suite);
