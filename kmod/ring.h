/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kring data ring: the producer side of one perf-style ring buffer.
 *
 * A struct kring_ring writes records into 2^n data pages (one contiguous
 * area, or separate pages) and publishes them to a consumer through a
 * struct kring_ctl_page (perf's struct perf_event_mmap_page layout, see
 * uapi/linux/kring.h). Writing a record is
 *
 *	struct kring_output_handle h;
 *
 *	if (kring_output_begin(&h, rb, size, time))
 *		return;				(counted as lost)
 *	kring_output_header(&h, KRING_RECORD_SAMPLE, 0);
 *	kring_output_copy(&h, body, size - 8);
 *	kring_output_end(&h);			(or kring_output_discard())
 *
 * or, for a record of one piece, kring_output_write(rb, type, misc, body,
 * len, time): the same four steps in one call.
 *
 * Context rules, as perf's: all writers of one ring run on ONE CPU at a
 * time (a per-CPU ring, or a per-task ring written only by its task's
 * CPU), with preemption disabled from kring_output_begin() to
 * kring_output_end(). On that CPU writers may nest in any context - task,
 * softirq, hardirq, NMI - and the ring stays consistent: reservations are
 * local cmpxchgs, and only the outermost writer publishes data_head.
 * Nothing here sleeps or takes a lock. Configuration calls
 * (kring_ring_set_paused(), kring_ring_set_wakeup()) and the readers
 * (kring_ring_read_counts(), kring_ring_read_stats(), kring_ring_readable())
 * may come from any CPU at any time, serialized among themselves by the
 * caller; kring_ring_init(), kring_ring_reset() and
 * kring_ring_reset_counters() only while no writer runs.
 *
 * This file and ring*.c also build in user space with
 * tests/host/kring_host_shim.h (docs/ARCHITECTURE.md, "The ring core runs on
 * the host too").
 */
#ifndef _KRING_RING_H
#define _KRING_RING_H

#ifdef __KERNEL__
#include <linux/types.h>
#include <asm/local.h>
#include <asm/local64.h>
#include <linux/kring.h>
#else
#include "kring_host_shim.h"
#include <linux/kring.h>
#endif
/* struct kring_output_handle: the producer SDK's, its layout is API */
#include <kring/output.h>

/*
 * One writer CPU at a time (see above) is the caller's duty. Debug kernels
 * and the host build (but for the benchmark's, KRING_HOST_STOCK) check it:
 * a ring entered on one CPU while a writer on another is in flight warns.
 * kring_ring_cpu() names the CPU.
 */
#ifdef __KERNEL__
#if defined(CONFIG_PROVE_LOCKING) || defined(CONFIG_DEBUG_PREEMPT) || defined(CONFIG_KCSAN)
#define KRING_RING_CHECK_CPU	1
#endif
#define kring_ring_cpu()	raw_smp_processor_id()
#elif !defined(KRING_HOST_STOCK)
#define KRING_RING_CHECK_CPU	1
#endif

/* kring_ring_init() flags */
#define KRING_RING_OVERWRITE	0x1	/* backward, overwritable writing */
/*
 * The data pages are one contiguous area mapped twice in a row: the byte
 * at data + data_size + i is the byte at data + i. Every reservation is
 * then one piece in the kernel's address space (kring_output_ptr()).
 */
#define KRING_RING_MIRRORED	0x2

/*
 * Deepest nesting of writers on one ring that keeps full LOST-record
 * information (task, softirq, hardirq and NMI need four). Deeper writers
 * still work; their lost records are counted, but not in the sequence
 * ranges of LOST records (and the kernel warns once).
 */
#define KRING_RING_MAX_NEST	8

/* Size of a KRING_RECORD_LOST record: header, perf's body, kring's range. */
#define KRING_LOST_RECORD_SIZE	((unsigned int)sizeof(struct kring_lost_record))

/* Backward mode: checkpoints for the lost_overwritten estimate. */
#define KRING_OVW_SLICES	16	/* per data area */
#define KRING_OVW_CKPTS		32	/* power of two > KRING_OVW_SLICES */
#define KRING_OVW_SLICE_SHIFT	4	/* ilog2(KRING_OVW_SLICES) */

/**
 * struct kring_lost_acc - losses not yet reported in a LOST record
 * @count:	number of lost records (0: the rest is meaningless)
 * @first_seq:	lowest sequence number among them
 * @last_seq:	highest sequence number among them
 * @first_time:	lowest timestamp among them
 * @last_time:	highest timestamp among them
 */
struct kring_lost_acc {
	u64 count;
	u64 first_seq;
	u64 last_seq;
	u64 first_time;
	u64 last_time;
};

/**
 * struct kring_lost_slot - losses of the writers at one nesting depth
 * @state:	bit 0: which of @acc the writers at this depth add to;
 *		bit 1: a collector owns the other one (see ring_slow.c)
 * @acc:	the two halves
 */
struct kring_lost_slot {
	local_t state;
	struct kring_lost_acc acc[2];
};

/**
 * struct kring_ring - one data ring
 * @head:		reservation position (free-running byte count; in
 *			backward mode it decreases from 0)
 * @nest:		writers of this ring currently between begin and end
 * @counts_dirty:	a counter other than @records_written changed since
 *			the control page's copies were last brought up to date
 * @pub_head:		the last data_head published (the kernel's copy: the
 *			control page's may be written by the consumer); a
 *			reservation is unpublished while @head differs from it
 * @seq:		next sequence number to give out
 * @seq_base:		@seq when the counters were last zeroed
 * @wakeup_pos:		position of the last watermark crossing (bytes written)
 * @wakeup_gen:		bumped whenever a wakeup_events count falls due
 * @wakeup_seen:	@wakeup_gen as the outermost writer last acted on it
 * @wake_lo:		the wake-up window, see ring_wakeup_pending(): the
 *			outermost writer publishes ->head values within
 *			[@wake_lo, @wake_lo + @wake_len) without looking at
 *			the wake-up state
 * @wake_len:		its length; zeroed (a wakeup_events count due, new
 *			wake-up settings) to make the next publication look
 * @events:		records since the last wakeup_events wake-up
 * @lost_pending:	records sitting in @lost_slots and @lost_deep
 * @lost_deep:		records lost by writers deeper than KRING_RING_MAX_NEST
 * @lost_slots:		per-depth unreported losses, see ring_slow.c
 * @records_written:	committed records
 * @records_discarded:	cancelled reservations
 * @lost_no_space:	records dropped: no space (forward mode)
 * @lost_too_big:	records dropped: can never fit
 * @lost_paused:	records dropped: paused
 * @wakeups:		wake-ups issued
 * @nested:		kring_output_begin() calls while another writer of the
 *			ring was in flight (nested writers)
 * @writer_cpu:		KRING_RING_CHECK_CPU: the CPU of the writers in
 *			flight, -1 for none
 * @writer_ip:		KRING_RING_CHECK_CPU: where the outermost writer in
 *			flight called the ring from, named by the warning
 * @cpu_conflicts:	KRING_RING_CHECK_CPU, kernel: entries from a CPU
 *			while a writer on another was in flight, each one
 *			counted, the first warned about
 * @cpu_conflicts_quiet: KRING_RING_CHECK_CPU, kernel: count them without
 *			the warning; set only by the KUnit case that forces
 *			one (a console WARNING fails a guest run)
 * @ovw_est:		backward mode: lost_overwritten estimate
 * @ovw_ckpt:		backward mode: records begun at each slice boundary
 * @ctl:		the control page (kernel address)
 * @data_pages:		the data pages (kernel addresses), @nr_pages of them
 * @data:		@data_pages[0] if the pages follow each other in the
 *			kernel's address space (one contiguous data area),
 *			else NULL (the copies go page by page)
 * @data_span:		bytes readable in one piece from @data: @data_size,
 *			twice that where the area is mapped twice in a row
 *			(KRING_RING_MIRRORED); 0 without @data
 * @nr_pages:		number of data pages, a power of two
 * @data_size:		@nr_pages * PAGE_SIZE
 * @mask:		@data_size - 1
 * @max_record:		largest record size kring_output_begin() accepts
 * @size_limit:		0 while paused, else @max_record - 7: a begin goes on
 *			only if its size - 8 is below it (one compare for the
 *			pause and both size limits)
 * @ovw_shift:		log2 of a backward-mode checkpoint slice
 * @flags:		KRING_RING_* flags
 * @paused:		every begin fails with -EAGAIN while set
 * @watermark:		wake-up after this many bytes (0: not by bytes)
 * @wakeup_events:	wake-up after this many records (0: not by count)
 * @wake_cfg:		bumped by kring_ring_set_wakeup() after new settings:
 *			ring_wakeup_eval() reads it before them and again
 *			after setting the window, see kring_ring_set_wakeup()
 * @id:			the id LOST records carry (perf's lost_event.id)
 * @wakeup:		called by the outermost writer when a wake-up is due
 *			and the consumer asked for it (need_wakeup). Runs in
 *			the writer's context (possibly NMI): it must only
 *			queue the real wake-up, e.g. with irq_work_queue().
 *			May be NULL. Set it after kring_ring_init().
 * @clock:		if set, kring_output_begin() ignores its @time argument
 *			and reads this clock inside the reservation loop, so
 *			that record timestamps never decrease in ring order
 *			even when writers nest. NMI-safe. May be NULL.
 * @priv:		the owner's pointer, unused by the ring
 *
 * Everything above @ctl is written by the producers of the ring's CPU
 * (and @wake_len zeroed by kring_ring_set_wakeup()); the rest is set up by
 * kring_ring_init() (and @paused, @size_limit, @watermark,
 * @wakeup_events and @wake_cfg by their setters).
 */
struct kring_ring {
	local_t head;
	unsigned int nest;
	unsigned int counts_dirty;
	unsigned long pub_head;
	local64_t seq;
	u64 seq_base;
	local_t wakeup_pos;
	local_t wakeup_gen;
	unsigned long wakeup_seen;
	unsigned long wake_lo;
	local_t wake_len;
	local_t events;
	local_t lost_pending;
	local64_t lost_deep;
	struct kring_lost_slot lost_slots[KRING_RING_MAX_NEST];

	local64_t records_written;
	local64_t records_discarded;
	local64_t lost_no_space;
	local64_t lost_too_big;
	local64_t lost_paused;
	local64_t wakeups;
	local64_t nested;
#ifdef KRING_RING_CHECK_CPU
	int writer_cpu;
	unsigned long writer_ip;
#ifdef __KERNEL__
	atomic_t cpu_conflicts;
	bool cpu_conflicts_quiet;
#endif
#endif

	u64 ovw_est;
	u64 ovw_ckpt[KRING_OVW_CKPTS];

	struct kring_ctl_page *ctl;
	void **data_pages;
	void *data;
	unsigned long data_span;
	unsigned int nr_pages;
	unsigned long data_size;
	unsigned long mask;
	unsigned int max_record;
	unsigned int size_limit;
	unsigned int ovw_shift;
	unsigned int flags;
	int paused;
	unsigned long watermark;
	unsigned int wakeup_events;
	unsigned long wake_cfg;
	u64 id;
	void (*wakeup)(struct kring_ring *rb);
	u64 (*clock)(void);
	void *priv;
};

/**
 * struct kring_ring_counts - a snapshot of a ring's counters
 * @produced:		sequence numbers given out (every kring_output_begin())
 * @written:		records committed
 * @discarded:		reservations cancelled
 * @lost_no_space:	see struct kring_ctl_page
 * @lost_too_big:	see struct kring_ctl_page
 * @lost_paused:	see struct kring_ctl_page
 * @lost_overwritten:	see struct kring_ctl_page (an estimate)
 * @wakeups:		wake-ups issued
 * @nested:		kring_output_begin() calls made while another writer
 *			of the ring was in flight
 *
 * Once the writers are quiet, @produced == @written + @discarded +
 * @lost_no_space + @lost_too_big + @lost_paused.
 */
struct kring_ring_counts {
	u64 produced;
	u64 written;
	u64 discarded;
	u64 lost_no_space;
	u64 lost_too_big;
	u64 lost_paused;
	u64 lost_overwritten;
	u64 wakeups;
	u64 nested;
};

#ifdef __KERNEL__
/*
 * The record clock of every ring unless its channel chose another
 * (kring_clock_fn(), clock.c): NMI-safe CLOCK_MONOTONIC nanoseconds.
 */
u64 kring_clock_ns(void);
/* KRING_CLOCK_LOCAL's: local_clock(), perf's and ftrace's default clock. */
u64 kring_clock_local(void);
#endif

/* Backward, overwritable writing (KRING_RING_OVERWRITE)? */
static inline bool kring_ring_overwrite(const struct kring_ring *rb)
{
	return rb->flags & KRING_RING_OVERWRITE;
}

int kring_ring_init(struct kring_ring *rb, struct kring_ctl_page *ctl,
		    void **data_pages, unsigned int nr_pages,
		    unsigned int flags, u64 id);
void kring_ring_reset(struct kring_ring *rb);
void kring_ring_set_paused(struct kring_ring *rb, bool paused);
void kring_ring_set_wakeup(struct kring_ring *rb, unsigned long watermark_bytes,
			   unsigned int wakeup_events);
void kring_ring_reset_counters(struct kring_ring *rb);
void kring_ring_read_counts(struct kring_ring *rb, struct kring_ring_counts *c);
void kring_ring_read_stats(struct kring_ring *rb, struct kring_stats *st);
bool kring_ring_readable(struct kring_ring *rb);

int kring_output_begin(struct kring_output_handle *h, struct kring_ring *rb,
		       unsigned int size, u64 time);
void kring_output_end(struct kring_output_handle *h);
void kring_output_discard(struct kring_output_handle *h);
int kring_output_write(struct kring_ring *rb, u32 type, u16 misc,
		       const void *body, unsigned int len, u64 time);
/* kring_output_write_stamped(): no time in @head; the longest @head. */
#define KRING_WRITE_NO_TIME	(~0U)
#define KRING_WRITE_HEAD_MAX	256U
int kring_output_write_stamped(struct kring_ring *rb, u32 type, u16 misc,
			       void *head, unsigned int head_len,
			       const void *tail, unsigned int tail_len,
			       unsigned int time_off, u64 *timep);
bool kring_ring_flush_lost(struct kring_ring *rb);

#endif /* _KRING_RING_H */
