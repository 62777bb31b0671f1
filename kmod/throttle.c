// SPDX-License-Identifier: GPL-2.0
/*
 * Throttling of the work kring's sources do in hard interrupt context (the
 * timer source's samples, the AUX tracer's ticks), perf's two protections
 * made per CPU and across every channel:
 *
 *  - kring.max_sample_rate: at most this many samples per second on one
 *    CPU (perf's kernel.perf_event_max_sample_rate, default 100000);
 *  - kring.cpu_time_max_percent: at most this share of one CPU's time
 *    spent writing them (perf's kernel.perf_cpu_time_max_percent, 25).
 *
 * Both are enforced over fixed windows of KRING_THROTTLE_WINDOW_NS,
 * aligned on the monotonic clock: once a CPU's window has used its budget
 * of samples or of time, every further sample in that window is dropped
 * and counted in its channel's throttled count (KRING_IOC_STATS). The first
 * sample of a window always runs, so a window overruns its time budget by
 * at most one sample. 0 turns a limit off.
 *
 * The state is per CPU and touched only in hard irq context with
 * interrupts off, by one handler at a time (hard irq handlers do not nest):
 * it needs no lock.
 */
#include <linux/ktime.h>
#include <linux/hrtimer.h>
#include <linux/timekeeping.h>
#include <linux/percpu.h>
#include <linux/moduleparam.h>
#include <linux/math64.h>

#include "compat.h"
#include "capture.h"

static unsigned int kring_max_sample_rate = 100000;
module_param_named(max_sample_rate, kring_max_sample_rate, uint, 0644);
MODULE_PARM_DESC(max_sample_rate,
		 "samples per second one CPU may write for all timer and AUX tracer channels (0: no limit)");

static unsigned int kring_cpu_time_max_percent = 25;
module_param_named(cpu_time_max_percent, kring_cpu_time_max_percent, uint, 0644);
MODULE_PARM_DESC(cpu_time_max_percent,
		 "share of one CPU's time those samples may take, in percent (0 or 100: no limit)");

static DEFINE_PER_CPU(struct kring_throttle, kring_throttle);

/**
 * kring_throttle_admit() - the rule of kring_throttle_enter(), on any state
 * @th:		a CPU's state
 * @now:	the time, in ns of the monotonic clock
 * @rate:	kring.max_sample_rate
 * @pct:	kring.cpu_time_max_percent
 *
 * Return: true if one more sample may run at @now (and counts it).
 */
bool kring_throttle_admit(struct kring_throttle *th, u64 now,
			  unsigned int rate, unsigned int pct)
{
	u64 win = div64_u64(now, KRING_THROTTLE_WINDOW_NS);
	u64 max_samples = div64_u64((u64)rate * KRING_THROTTLE_WINDOW_NS, NSEC_PER_SEC);

	if (win != th->window) {
		th->window = win;
		th->samples = 0;
		th->busy_ns = 0;
	}
	if (rate && th->samples >= max_t(u64, 1, max_samples))
		return false;
	if (pct && pct < 100 && th->busy_ns >= div64_u64(KRING_THROTTLE_WINDOW_NS * pct, 100))
		return false;
	th->samples++;
	return true;
}
EXPORT_SYMBOL_IF_KUNIT(kring_throttle_admit);

/**
 * kring_throttle_enter() - may this CPU write one more sample now?
 * @t0: set to the start time, for kring_throttle_exit()
 *
 * Context: hard irq, interrupts off.
 * Return: true to write it; false when the CPU's window is spent (the
 * caller counts the sample as throttled and writes nothing).
 */
bool kring_throttle_enter(u64 *t0)
{
	*t0 = ktime_get_mono_fast_ns();
	return kring_throttle_admit(this_cpu_ptr(&kring_throttle), *t0,
				    READ_ONCE(kring_max_sample_rate),
				    READ_ONCE(kring_cpu_time_max_percent));
}

/**
 * kring_throttle_defer() - a periodic source was refused: tick next window
 * @t:		its hrtimer, in its callback (not enqueued)
 * @period:	its period in ns
 * @passed:	the ticks the caller already forwarded @t past (the refused
 *		one included: hrtimer_forward_now()'s answer), 0 if it did not
 *
 * A source that kring_throttle_enter() refused does not tick again before
 * the CPU's next window: every tick in between would be refused too, and a
 * throttled CPU takes no more of them, as perf stops a throttled event's
 * hrtimer until the next tick unthrottles it. So the interrupts a
 * throttled timer costs are one per window, whatever its period. @t is
 * forwarded past the tick refused (unless the caller did already), then to
 * its first tick in the next window (of CLOCK_MONOTONIC, the clock of the
 * sources' hrtimers).
 *
 * Context: hard irq, the hrtimer's callback.
 * Return: the ticks @t will not run: the refused one, those it expired
 * late by (a timer held up, e.g. on a loaded host, skips periods) and
 * those to the next window; what the caller counts as throttled, so that
 * every period of the source is either in a sample's PERIOD or throttled.
 */
u64 kring_throttle_defer(struct hrtimer *t, u64 period, u64 passed)
{
	return kring_throttle_skip(t, ktime_get(), period, passed);
}

/**
 * kring_throttle_skip() - kring_throttle_defer() at a given time
 * @t:		as there, or any hrtimer not enqueued
 * @now:	the time on @t's clock (CLOCK_MONOTONIC)
 * @period:	as there
 * @passed:	as there
 *
 * Return: as kring_throttle_defer().
 */
u64 kring_throttle_skip(struct hrtimer *t, ktime_t now, u64 period, u64 passed)
{
	u64 next = (div64_u64(ktime_to_ns(now), KRING_THROTTLE_WINDOW_NS) + 1) *
		   KRING_THROTTLE_WINDOW_NS;

	passed += hrtimer_forward(t, now, ns_to_ktime(period));
	return max_t(u64, passed, 1) + hrtimer_forward(t, ns_to_ktime(next), ns_to_ktime(period));
}
EXPORT_SYMBOL_IF_KUNIT(kring_throttle_skip);

/**
 * kring_throttle_exit() - the sample begun at @t0 is written
 * @t0: from kring_throttle_enter()
 *
 * Context: as kring_throttle_enter(), on the same CPU.
 */
void kring_throttle_exit(u64 t0)
{
	this_cpu_ptr(&kring_throttle)->busy_ns += ktime_get_mono_fast_ns() - t0;
}
