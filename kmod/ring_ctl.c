// SPDX-License-Identifier: GPL-2.0
/*
 * kring data ring, its control plane: set up, reset, pause, wake-up
 * settings and counters. None of it runs on a writer's path; each function
 * says from where it may be called (any CPU, or only while no writer runs).
 * The writers' side, and the ordering both sides keep (the pairs G-J of the
 * wake-up settings among them), is ring.c (its slow paths ring_slow.c).
 */
#ifdef __KERNEL__
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/log2.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/string.h>
#include <asm/barrier.h>

#include "compat.h"
#endif

#include "ring.h"

/* Zero the counters and their figures in the control page. */
static void ring_clear_counts(struct kring_ring *rb)
{
	struct kring_ctl_page *ctl = rb->ctl;

	rb->seq_base = local64_read(&rb->seq);
	local64_set(&rb->records_written, 0);
	local64_set(&rb->records_discarded, 0);
	local64_set(&rb->lost_no_space, 0);
	local64_set(&rb->lost_too_big, 0);
	local64_set(&rb->lost_paused, 0);
	local64_set(&rb->wakeups, 0);
	local64_set(&rb->nested, 0);
	WRITE_ONCE(rb->ovw_est, 0);
	memset(rb->ovw_ckpt, 0, sizeof(rb->ovw_ckpt));
	WRITE_ONCE(rb->counts_dirty, 0);

	WRITE_ONCE(ctl->records_written, 0);
	WRITE_ONCE(ctl->records_discarded, 0);
	WRITE_ONCE(ctl->lost_no_space, 0);
	WRITE_ONCE(ctl->lost_too_big, 0);
	WRITE_ONCE(ctl->lost_paused, 0);
	WRITE_ONCE(ctl->lost_overwritten, 0);
	WRITE_ONCE(ctl->wakeups, 0);
	WRITE_ONCE(ctl->wakeup_time, 0);
}

/* Zero the positions, the counters and the live figures of the ctl page. */
static void ring_clear(struct kring_ring *rb)
{
	struct kring_ctl_page *ctl = rb->ctl;

	local_set(&rb->head, 0);
	rb->nest = 0;
#ifdef KRING_RING_CHECK_CPU
	rb->writer_cpu = -1;
#endif
	local64_set(&rb->seq, 0);
	local_set(&rb->wakeup_pos, 0);
	local_set(&rb->wakeup_gen, 0);
	rb->wakeup_seen = 0;
	WRITE_ONCE(rb->wake_lo, 0);
	local_set(&rb->wake_len, 0);	/* the first publication sets it */
	local_set(&rb->events, 0);
	local_set(&rb->lost_pending, 0);
	local64_set(&rb->lost_deep, 0);
	memset(rb->lost_slots, 0, sizeof(rb->lost_slots));
	ring_clear_counts(rb);

	WRITE_ONCE(ctl->timestamp_floor, 0);
	WRITE_ONCE(ctl->data_tail, 0);
	WRITE_ONCE(ctl->data_head, 0);
	rb->pub_head = 0;
}

/* ->size_limit for ->max_record, paused or not */
static unsigned int ring_size_limit(const struct kring_ring *rb, bool paused)
{
	return paused ? 0 : rb->max_record - sizeof(struct kring_record_header) + 1;
}

/**
 * kring_ring_init() - set up a ring over allocated pages
 * @rb:		the ring (its contents are overwritten)
 * @ctl:	the control page, zeroed
 * @data_pages:	@nr_pages kernel addresses of zeroed data pages; the array
 *		must outlive the ring. Pages that follow each other in the
 *		kernel's address space (a vmalloc() or vmap() area) make the
 *		data area one piece: a record is then one memcpy() but where
 *		it wraps, and nowhere with KRING_RING_MIRRORED.
 * @nr_pages:	a power of two
 * @flags:	KRING_RING_OVERWRITE for backward, overwritable writing;
 *		KRING_RING_MIRRORED if the area of @data_pages is followed
 *		by a second mapping of the same pages (-EINVAL if the pages
 *		do not follow each other, or if the two mappings span more
 *		than 4 GiB, as a handle counts them in 32 bits)
 * @id:		the id LOST records carry
 *
 * Fills in the control page's version, size, data_offset (one page: the
 * data follows the control page in the mapping), data_size, flags and
 * need_wakeup (1: wake the consumer, as perf does), and leaves perf's time
 * and capability fields to the caller (but sets
 * KRING_CAP_BIT0_IS_DEPRECATED, as perf always does). Wakes at half the
 * data area by default, see kring_ring_set_wakeup(). @rb->wakeup is
 * NULL: set it afterwards.
 *
 * Return: 0, or -EINVAL for a bad argument.
 */
int kring_ring_init(struct kring_ring *rb, struct kring_ctl_page *ctl,
		    void **data_pages, unsigned int nr_pages,
		    unsigned int flags, u64 id)
{
	unsigned long data_size;
	unsigned int i;

	if (!ctl || !data_pages || !is_power_of_2(nr_pages) ||
	    (flags & ~(KRING_RING_OVERWRITE | KRING_RING_MIRRORED)))
		return -EINVAL;
	data_size = (unsigned long)nr_pages << PAGE_SHIFT;
	if (data_size >> PAGE_SHIFT != nr_pages)
		return -EINVAL;

	memset(rb, 0, sizeof(*rb));
	rb->ctl = ctl;
	rb->data_pages = data_pages;
	rb->data = data_pages[0];
	for (i = 1; i < nr_pages; i++)
		if (data_pages[i] != (char *)data_pages[0] + i * PAGE_SIZE)
			rb->data = NULL;
	if ((flags & KRING_RING_MIRRORED) && !rb->data)
		return -EINVAL;
	if (rb->data)
		rb->data_span = (flags & KRING_RING_MIRRORED) ? 2 * data_size : data_size;
	/* The handle counts the bytes of one piece in 32 bits (->size). */
	if (rb->data_span > UINT_MAX)
		return -EINVAL;
	rb->nr_pages = nr_pages;
	rb->data_size = data_size;
	rb->mask = data_size - 1;
	rb->flags = flags;
	rb->id = id;
	rb->ovw_shift = ilog2(data_size) - KRING_OVW_SLICE_SHIFT;
	/*
	 * Forward mode: a record must leave room for the LOST record that
	 * may have to precede it, or a loss could block every later record.
	 */
	if (flags & KRING_RING_OVERWRITE)
		rb->max_record = min_t(unsigned long, KRING_RECORD_MAX_SIZE,
				       data_size);
	else
		rb->max_record = min_t(unsigned long, KRING_RECORD_MAX_SIZE,
				       data_size - KRING_LOST_RECORD_SIZE);
	rb->size_limit = ring_size_limit(rb, false);
	kring_ring_set_wakeup(rb, 0, 0);	/* the default: half the ring */

	ring_clear(rb);
	ctl->version = KRING_CTL_VERSION;
	ctl->compat_version = 0;
	ctl->size = KRING_CTL_SIZE_VER2;
	ctl->capabilities |= KRING_CAP_BIT0_IS_DEPRECATED;
	ctl->data_offset = PAGE_SIZE;
	ctl->data_size = data_size;
	ctl->flags = (flags & KRING_RING_OVERWRITE) ? KRING_CTL_F_OVERWRITE : 0;
	ctl->need_wakeup = 1;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_init);

/**
 * kring_ring_reset() - empty the ring and zero its counters
 * @rb:	the ring
 *
 * Only while no writer runs and the data area is not mapped: zeroes the
 * positions, the sequence numbers, every counter and pending loss, the
 * control page's live figures and data_head/data_tail, and the data
 * pages (backward-mode readers rely on never-written space reading as
 * zero). Keeps the configuration (mode, pause, wake-up settings).
 */
void kring_ring_reset(struct kring_ring *rb)
{
	unsigned int i;

	ring_clear(rb);
	for (i = 0; i < rb->nr_pages; i++)
		memset(rb->data_pages[i], 0, PAGE_SIZE);
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_reset);

/**
 * kring_ring_reset_counters() - zero the counters, keep the contents
 * @rb:	the ring
 *
 * Only while no writer runs; the ring may be mapped. Zeroes the counters
 * and their figures in the control page; sequence numbers continue (so
 * "produced" restarts from the next one), positions and data stay, and
 * losses not yet reported in a LOST record will still be reported.
 */
void kring_ring_reset_counters(struct kring_ring *rb)
{
	ring_clear_counts(rb);
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_reset_counters);

/**
 * kring_ring_set_paused() - stop or resume output
 * @rb:		the ring
 * @paused:	true: every kring_output_begin() fails with -EAGAIN and
 *		counts lost_paused; false: output resumes
 *
 * Any CPU, any time; callers serialize calls for one ring. Writers already
 * past the check finish their record: a caller that needs the ring quiet
 * must wait for them (KRING_IOC_PAUSE_OUTPUT waits a grace period: writers
 * run with preemption disabled).
 * Mirrors the state in the control page's KRING_CTL_F_PAUSED flag.
 */
void kring_ring_set_paused(struct kring_ring *rb, bool paused)
{
	u64 flags = READ_ONCE(rb->ctl->flags);

	WRITE_ONCE(rb->paused, paused);
	WRITE_ONCE(rb->size_limit, ring_size_limit(rb, paused));
	if (paused)
		flags |= KRING_CTL_F_PAUSED;
	else
		flags &= ~KRING_CTL_F_PAUSED;
	WRITE_ONCE(rb->ctl->flags, flags);
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_set_paused);

/**
 * kring_ring_set_wakeup() - when to wake the consumer
 * @rb:			the ring
 * @watermark_bytes:	wake whenever this many more bytes have been written
 *			since the last watermark wake-up (perf's
 *			wakeup_watermark); clamped to the data area; 0: not
 *			by bytes
 * @wakeup_events:	wake every this many records (perf's wakeup_events);
 *			0: not by count
 *
 * Both 0 means a watermark of half the data area, the default. Both
 * non-zero means whichever comes first. A wake-up is issued only if the
 * control page's need_wakeup is non-zero. Any CPU, any time; callers
 * serialise calls for one ring. The writer's next look at the wake-up
 * state after the call uses the new settings: no window set for the old
 * ones outlives it.
 */
void kring_ring_set_wakeup(struct kring_ring *rb, unsigned long watermark_bytes,
			   unsigned int wakeup_events)
{
	if (!watermark_bytes && !wakeup_events)
		watermark_bytes = rb->data_size / 2;
	watermark_bytes = min(watermark_bytes, rb->data_size);
	WRITE_ONCE(rb->watermark, watermark_bytes);
	WRITE_ONCE(rb->ctl->wakeup_watermark, watermark_bytes);
	WRITE_ONCE(rb->wakeup_events, wakeup_events);
	/*
	 * The next publication sets the wake-up window for these settings.
	 * From another CPU the zeroing of ->wake_len may be lost to the
	 * writer CPU's own store of a window (not an atomic update across
	 * CPUs): ->wake_cfg tells that writer, see the ordering at the top.
	 * The caller serialises setters.
	 */
	smp_wmb(); /* G, matches H in ring_wakeup_eval() */
	WRITE_ONCE(rb->wake_cfg, rb->wake_cfg + 1);
	smp_mb(); /* I, matches J in ring_wakeup_eval() */
	local_set(&rb->wake_len, 0);
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_set_wakeup);

/**
 * kring_ring_read_counts() - read the ring's counters
 * @rb:	the ring
 * @c:	filled in
 *
 * Any CPU; exact once the writers are quiet, a recent snapshot otherwise.
 */
void kring_ring_read_counts(struct kring_ring *rb, struct kring_ring_counts *c)
{
	c->produced = local64_read(&rb->seq) - rb->seq_base;
	c->written = local64_read(&rb->records_written);
	c->discarded = local64_read(&rb->records_discarded);
	c->lost_no_space = local64_read(&rb->lost_no_space);
	c->lost_too_big = local64_read(&rb->lost_too_big);
	c->lost_paused = local64_read(&rb->lost_paused);
	c->lost_overwritten = READ_ONCE(rb->ovw_est);
	c->wakeups = local64_read(&rb->wakeups);
	c->nested = local64_read(&rb->nested);
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_read_counts);

/**
 * kring_ring_read_stats() - fill the counters of a KRING_IOC_STATS answer
 * @rb:	the ring
 * @st:	its produced, written, lost_*, wakeups and nested fields are set;
 *	the rest is left alone
 *
 * Any CPU; see kring_ring_read_counts(). Discarded reservations have no field
 * in struct kring_stats: produced - written - lost_* counts them.
 */
void kring_ring_read_stats(struct kring_ring *rb, struct kring_stats *st)
{
	struct kring_ring_counts c;

	kring_ring_read_counts(rb, &c);
	st->produced = c.produced;
	st->written = c.written;
	st->lost_no_space = c.lost_no_space;
	st->lost_too_big = c.lost_too_big;
	st->lost_paused = c.lost_paused;
	st->lost_overwritten = c.lost_overwritten;
	st->wakeups = c.wakeups;
	st->nested = c.nested;
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_read_stats);

/**
 * kring_ring_readable() - has the consumer's wake-up condition been met?
 * @rb:	the ring
 *
 * For poll(), next to the wake-ups themselves. Forward mode: at least the
 * watermark's worth of bytes (any byte when waking by record count only)
 * lies unread between data_tail and the published data_head, or data_tail
 * is nonsense. Backward mode: false; only wake-ups make it readable (there
 * is no tail, so something is always "unread").
 *
 * Any CPU, lockless: poll's wait queue handles the races.
 */
bool kring_ring_readable(struct kring_ring *rb)
{
	u64 head = READ_ONCE(rb->ctl->data_head);
	u64 unread = head - READ_ONCE(rb->ctl->data_tail);
	unsigned long wm = READ_ONCE(rb->watermark);

	if (kring_ring_overwrite(rb))
		return false;
	if (unread > rb->data_size)
		return true;
	return unread && unread >= wm;
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_readable);
