// SPDX-License-Identifier: GPL-2.0
/*
 * Record clocks, the control page's time conversion fields and the
 * timestamp floor.
 *
 * Every clock here is NMI-safe, since the ring core reads the channel's
 * clock inside its reservation loop in any writer context.
 *
 * TSC conversion (x86): with a constant, non-stop TSC whose frequency the
 * kernel knows (tsc_khz), the control page carries perf's time_shift,
 * time_mult and time_zero such that for a TSC reading cyc
 *
 *	quot = cyc >> time_shift;
 *	rem  = cyc & ((1 << time_shift) - 1);
 *	time = time_zero + quot * time_mult + ((rem * time_mult) >> time_shift);
 *
 * is the record clock (KRING_CLOCK_LOCAL and KRING_CLOCK_MONOTONIC_RAW,
 * the clocks that run at the TSC's rate without adjustment), and
 * KRING_CAP_USER_TIME and KRING_CAP_USER_TIME_ZERO say so. For the other
 * clocks (NTP-slewed, or suspend-aware) and other TSCs both bits are 0.
 */
#include <linux/kernel.h>
#include <linux/ktime.h>
#include <linux/math64.h>
#include <linux/timekeeping.h>
#include <linux/irqflags.h>
#ifdef CONFIG_X86
#include <asm/tsc.h>
#include <asm/cpufeature.h>
#endif

#include "compat.h"
#include "buffer.h"

static u64 kring_clock_raw(void)
{
	return ktime_get_raw_fast_ns();
}

static u64 kring_clock_boot(void)
{
	return ktime_get_boot_fast_ns();
}

bool kring_clock_valid(u32 clockid)
{
	return !!kring_clock_fn(clockid);
}
EXPORT_SYMBOL_IF_KUNIT(kring_clock_valid);

/**
 * kring_clock_fn() - the function reading a KRING_CLOCK_* clock
 * @clockid: kring_attr.clockid
 *
 * Return: the clock, or NULL for an unknown id.
 */
kring_clock_t kring_clock_fn(u32 clockid)
{
	switch (clockid) {
	case KRING_CLOCK_DEFAULT:
	case KRING_CLOCK_MONOTONIC:
		return kring_clock_ns;	/* the ring core's (ring_slow.c) */
	case KRING_CLOCK_MONOTONIC_RAW:
		return kring_clock_raw;
	case KRING_CLOCK_BOOTTIME:
		return kring_clock_boot;
	case KRING_CLOCK_LOCAL:
		return kring_clock_local;	/* the ring core's, called directly too */
	default:
		return NULL;
	}
}

/**
 * kring_tsc_mult_shift() - perf's time_mult/time_shift for a counter
 * @khz:	counter frequency in kHz
 * @mult:	out: multiplier
 * @shift:	out: shift, as large as @mult allows (precision)
 *
 * ns = cyc * mult >> shift, computed as in the file comment.
 *
 * Return: 0, or -EINVAL for a zero frequency.
 */
int kring_tsc_mult_shift(u32 khz, u32 *mult, u16 *shift)
{
	u16 s;

	if (!khz)
		return -EINVAL;
	for (s = 32; s > 0; s--) {
		u64 m = div_u64((u64)NSEC_PER_MSEC << s, khz);

		if (m <= U32_MAX) {
			*mult = m;
			*shift = s;
			return 0;
		}
	}
	*mult = div_u64(NSEC_PER_MSEC, khz);
	*shift = 0;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kring_tsc_mult_shift);

/* perf's conversion of a counter reading, see the file comment. */
u64 kring_cyc_to_ns(u64 cyc, u32 mult, u16 shift, u64 zero)
{
	u64 quot = shift ? cyc >> shift : cyc;
	u64 rem = shift ? cyc & ((1ULL << shift) - 1) : 0;

	return zero + quot * mult + ((rem * mult) >> shift);
}
EXPORT_SYMBOL_IF_KUNIT(kring_cyc_to_ns);

/* time_zero making the conversion of @cyc read @now (mod 2^64). */
u64 kring_time_zero(u64 now, u64 cyc, u32 mult, u16 shift)
{
	return now - kring_cyc_to_ns(cyc, mult, shift, 0);
}
EXPORT_SYMBOL_IF_KUNIT(kring_time_zero);

/*
 * The counter user space reads to tell the time in a channel's clock:
 * kring_user_counter_khz() is its frequency when it runs in step with
 * @clockid, 0 when there is none (then no cap_user_time). x86: a
 * constant, non-stop TSC whose frequency the kernel knows. Elsewhere none
 * yet (perf's arm64 counterpart is the architected timer's virtual count).
 */
#ifdef CONFIG_X86
static u32 kring_user_counter_khz(u32 clockid)
{
	if (clockid != KRING_CLOCK_LOCAL && clockid != KRING_CLOCK_MONOTONIC_RAW)
		return 0;
	if (!boot_cpu_has(X86_FEATURE_TSC) || !boot_cpu_has(X86_FEATURE_CONSTANT_TSC) ||
	    !boot_cpu_has(X86_FEATURE_NONSTOP_TSC))
		return 0;
	return tsc_khz;
}

static u64 kring_read_user_counter(void)
{
	return rdtsc_ordered();
}
#else
static u32 kring_user_counter_khz(u32 clockid)
{
	return 0;
}

static u64 kring_read_user_counter(void)
{
	return 0;
}
#endif

/**
 * kring_clock_setup_ctl() - fill a control page's time fields
 * @ctl:	the control page of a buffer being attached
 * @clockid:	the channel's valid KRING_CLOCK_* id
 */
void kring_clock_setup_ctl(struct kring_ctl_page *ctl, u32 clockid)
{
	kring_clock_t clock = kring_clock_fn(clockid);
	unsigned long flags;
	u64 caps, cyc, now;
	u32 mult, khz;
	u16 shift;

	caps = READ_ONCE(ctl->capabilities) &
	       ~(KRING_CAP_USER_TIME | KRING_CAP_USER_TIME_ZERO | KRING_CAP_USER_TIME_SHORT);
	WRITE_ONCE(ctl->time_shift, 0);
	WRITE_ONCE(ctl->time_mult, 0);
	WRITE_ONCE(ctl->time_zero, 0);
	WRITE_ONCE(ctl->time_offset, 0);
	khz = kring_user_counter_khz(clockid);
	if (clock && khz && !kring_tsc_mult_shift(khz, &mult, &shift)) {
		/* One pair of readings, as close together as we can make them. */
		local_irq_save(flags);
		cyc = kring_read_user_counter();
		now = clock();
		local_irq_restore(flags);
		WRITE_ONCE(ctl->lock, 0);
		WRITE_ONCE(ctl->time_shift, shift);
		WRITE_ONCE(ctl->time_mult, mult);
		WRITE_ONCE(ctl->time_zero, kring_time_zero(now, cyc, mult, shift));
		caps |= KRING_CAP_USER_TIME | KRING_CAP_USER_TIME_ZERO;
	}
	WRITE_ONCE(ctl->capabilities, caps);
}

/**
 * kring_clock_refresh_ctl() - bring a control page's time_zero up to date
 * @ctl:	a control page filled by kring_clock_setup_ctl()
 * @clockid:	the channel's KRING_CLOCK_* id
 *
 * time_mult/time_shift come from the counter's frequency, the clock runs at its own rate:
 * the two drift apart by their rate difference times the time since
 * time_zero was taken. A fresh (TSC, clock) pair every so often bounds
 * that. The update follows perf's userpage protocol: ->lock is raised
 * before and after the fields change, and a consumer reads the fields
 * between two equal loads of ->lock (as it reads perf's page).
 *
 * Context: any but NMI, one caller at a time per page (the buffer's write
 * lock).
 */
void kring_clock_refresh_ctl(struct kring_ctl_page *ctl, u32 clockid)
{
	kring_clock_t clock = kring_clock_fn(clockid);
	unsigned long flags;
	u32 mult, seq, khz;
	u16 shift;
	u64 cyc, now;

	if (!clock || !(READ_ONCE(ctl->capabilities) & KRING_CAP_USER_TIME_ZERO))
		return;
	khz = kring_user_counter_khz(clockid);
	if (!khz || kring_tsc_mult_shift(khz, &mult, &shift))
		return;
	local_irq_save(flags);
	cyc = kring_read_user_counter();
	now = clock();
	local_irq_restore(flags);
	seq = READ_ONCE(ctl->lock);
	WRITE_ONCE(ctl->lock, seq + 1);
	smp_wmb(); /* the odd count before the fields: pairs with the reader's first load of lock */
	WRITE_ONCE(ctl->time_shift, shift);
	WRITE_ONCE(ctl->time_mult, mult);
	WRITE_ONCE(ctl->time_zero, kring_time_zero(now, cyc, mult, shift));
	smp_wmb(); /* the fields before the even count: pairs with the reader's second load */
	WRITE_ONCE(ctl->lock, seq + 2);
}

/**
 * kring_floor_advance() - raise a ring's timestamp floor to "now"
 * @rb: a ring with a clock, written by the calling CPU (or under the
 *	caller's lock, which every writer of the ring takes)
 *
 * The floor promises that every record committed after it is published has
 * TIME >= floor. The ring core reads a record's time inside its reservation
 * loop, so on this CPU any writer that begins after our clock read gets a
 * time >= ours. The one that could break the promise is a writer we
 * interrupted between its clock read and its commit: then rb->nest is
 * non-zero and we leave the floor alone. A record can also be committed but
 * not yet published with rb->nest already zero: a writer that interrupted
 * the outermost one's publication (after it read ->head, before it dropped
 * ->nest) is published by that writer's re-check, after we return. Then
 * ->head differs from ->pub_head, and we leave the floor alone too (the
 * relacy model, tests/model/ring_model.cpp, finds this case when the check
 * is removed). We read the clock first and nest and head second (program
 * order on one CPU is all an interrupting writer can observe, so a
 * compiler barrier suffices); a writer that starts after the checks reads
 * the clock after us. A writer (an NMI) that interrupts us anywhere in
 * here runs to its end before we resume: its record is published before
 * our store, which is all the promise needs.
 *
 * Context: preemption or interrupts disabled, on the ring's CPU.
 */
void kring_floor_advance(struct kring_ring *rb)
{
	struct kring_ctl_page *ctl = rb->ctl;
	u64 now;

	if (!rb->clock)
		return;
	now = rb->clock();
	barrier();
	if (READ_ONCE(rb->nest) ||
	    (unsigned long)local_read(&rb->head) != READ_ONCE(rb->pub_head))
		return;
	if (now <= READ_ONCE(ctl->timestamp_floor))
		return;
	/*
	 * Release: pairs with the consumer's load-acquire of timestamp_floor
	 * before it loads data_head, so a consumer that sees this floor also
	 * sees the data_head of every record committed before it (whose
	 * times may be lower).
	 */
	smp_store_release(&ctl->timestamp_floor, now);
}
EXPORT_SYMBOL_IF_KUNIT(kring_floor_advance);
