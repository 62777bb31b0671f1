/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The data ring's private header, for ring.c and ring_slow.c only.
 *
 * What both need: the inline fast path (the clock, the copies, the
 * reservation loop, the commit and the publication), inlined into the
 * writer body of ring.c and into the slow paths that reserve or publish
 * too, as LTTng's frontend_api.h; and the out-of-line slow paths of
 * ring_slow.c that the fast path calls. ring_slow.c calls nothing in
 * ring.c (docs/ARCHITECTURE.md, "lint layers": no cycle).
 *
 * Builds on the host too, as ring.c (tests/host/kring_host_shim.h).
 */
#ifndef _KRING_RING_INTERNAL_H
#define _KRING_RING_INTERNAL_H

#ifdef __KERNEL__
#include <linux/bug.h>
#include <linux/compiler.h>
#include <linux/errno.h>
#include <linux/export.h>
#include <linux/lockdep.h>
#include <linux/log2.h>
#include <linux/math.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/sched/clock.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <asm/barrier.h>

#include "compat.h"
#endif

#include "ring.h"

/*
 * kring_irq_point(rb) marks a place where an interrupting writer may run.
 * The kernel build compiles it away; the host build's shim can run a
 * nested writer there to test every interleaving.
 */
#ifndef kring_irq_point
#define kring_irq_point(rb) ((void)(rb))
#endif

/*
 * Read the ring's clock (set). The default record clock and the local one
 * are called directly: an indirect call costs a retpoline where they are
 * on, and the clock is on every record's path (ftrace's rb_time_stamp()
 * does the same for its default clock). local_clock() has no indirect call
 * inside either (the TSC, or the architecture's counter, read inline);
 * ktime_get_mono_fast_ns() calls its clocksource's read().
 */
static __always_inline u64 ring_clock(const struct kring_ring *rb)
{
#ifdef __KERNEL__
	if (likely(rb->clock == kring_clock_ns))
		return ktime_get_mono_fast_ns();
	if (rb->clock == kring_clock_local)
		return local_clock();
#endif
	return rb->clock();
}

/* local_try_cmpxchg() for every kernel kring builds against (6.1 has none) */
static inline bool ring_try_cmpxchg(local_t *l, unsigned long *old,
				    unsigned long new)
{
	long prev = local_cmpxchg(l, (long)*old, (long)new);

	if (likely(prev == (long)*old))
		return true;
	*old = prev;
	return false;
}

/*
 * Point the handle at ring position @pos. A contiguous data area (->data)
 * is one piece: @h->size counts the bytes readable from @pos in one piece
 * (to the end of the area, or of its second mapping where the area is
 * mapped twice: then no record ever splits), and a copy splits only where
 * it wraps; otherwise to the end of @pos's page, and @h->page names that
 * page.
 */
static __always_inline void ring_handle_seek(struct kring_output_handle *h,
					     struct kring_ring *rb,
					     unsigned long pos)
{
	unsigned long off;

	if (likely(rb->data)) {
		off = pos & rb->mask;
		h->addr = (char *)rb->data + off;
		h->size = rb->data_span - off;
		return;
	}
	off = pos & (PAGE_SIZE - 1);
	h->page = (pos >> PAGE_SHIFT) & (rb->nr_pages - 1);
	h->addr = (char *)rb->data_pages[h->page] + off;
	h->size = PAGE_SIZE - off;
}

/* ring_slow.c: a copy that crosses a page or the end of the area */
void ring_write_pages(struct kring_output_handle *h,
		      const void *buf, unsigned int len);

/*
 * ring_write_pages(), with the common case inline: @buf's bytes end before
 * the page does (a record crosses into the next page once per page), or
 * in a contiguous data area before the area does (once per lap).
 */
static __always_inline void ring_write(struct kring_output_handle *h,
				       const void *buf, unsigned int len)
{
	if (likely(buf && len < h->size && len <= h->rem)) {
		void *addr = h->addr;

		/* The handle first: a long copy is then a tail call. */
		h->addr = (char *)addr + len;
		h->size -= len;
		h->rem -= len;
		kring_irq_point(h->rb);
		kring_copy(addr, buf, len);
		return;
	}
	ring_write_pages(h, buf, len);
}

/* ring_slow.c: the publication's uncommon cases */
void ring_mirror_counts(struct kring_ring *rb);
void ring_wakeup_eval(struct kring_ring *rb, unsigned long head);

/*
 * May a publication of @head make a wake-up due? Only if @head lies outside
 * the window ring_wakeup_eval() set, or the window was zeroed: one compare
 * for the watermark, the wakeup_events count and new settings.
 */
static __always_inline bool ring_wakeup_pending(const struct kring_ring *rb,
						unsigned long head)
{
	return head - READ_ONCE(rb->wake_lo) >=
	       (unsigned long)local_read(&rb->wake_len);
}

/* ring_slow.c: the writer-CPU check of debug builds */
#ifdef KRING_RING_CHECK_CPU
void ring_cpu_enter(struct kring_ring *rb, unsigned long ip);
void ring_cpu_leave(struct kring_ring *rb);
#else
static inline void ring_cpu_enter(struct kring_ring *rb, unsigned long ip) { }
static inline void ring_cpu_leave(struct kring_ring *rb) { }
#endif

/* A writer enters the ring: its nest level (1: outermost). */
static __always_inline unsigned int ring_enter(struct kring_ring *rb)
{
	unsigned int nest;

	/* Inlined into kring_output_begin() and kring_output_write(): their caller. */
	ring_cpu_enter(rb, (unsigned long)__builtin_return_address(0));

	/*
	 * Not atomic, and need not be: an interrupt between the load and the
	 * store runs writers that leave ->nest as they found it.
	 */
	nest = READ_ONCE(rb->nest) + 1;
	WRITE_ONCE(rb->nest, nest);
	return nest;
}

/* ring_slow.c: ring_publish() out of line */
void ring_publish_slow(struct kring_ring *rb);

/*
 * Finish a writer: the outermost one publishes the counters and data_head
 * and issues a due wake-up; nested ones only step the nest count down.
 *
 * @commit (a constant) is the commit's fast path (kring_output_end()): its
 * common case (no counter to mirror, @head within the wake-up window, no
 * writer interrupting the publication) inline; every other case goes to
 * ring_publish_slow() before data_head is stored, or after ->nest dropped
 * to 0 where the slow path goes round again, and it starts over. A tail
 * call each: the inline part keeps no value across a call. The steps and
 * their order are the same for both.
 */
static __always_inline void ring_publish(struct kring_ring *rb, const bool commit)
{
	/* A commit reads it first; the slow path only to store (a load less per LOST) */
	struct kring_ctl_page *ctl = commit ? rb->ctl : NULL;
	unsigned long head;
	unsigned int nest;

	/*
	 * If this isn't the outermost writer, the outermost one will publish
	 * our record: it is still in flight, below us.
	 */
	nest = READ_ONCE(rb->nest);
	if (nest > 1) {
		WRITE_ONCE(rb->nest, nest - 1);
		return;
	}

again:
	/*
	 * Load ->head only after ->nest says we are the outermost writer: an
	 * interrupting writer that ran before this point has finished, one
	 * that runs after it is caught by the check below.
	 */
	barrier();
	head = local_read(&rb->head);
	kring_irq_point(rb);

	/*
	 * After ->head: a writer that marks counters (or makes a wake-up due)
	 * after this point makes the check at the end fail. A commit whose
	 * @head may make a wake-up due (outside the wake-up window) sees it
	 * here, before data_head is stored: ring_publish_slow() stores it,
	 * then looks (ring_wakeup_eval(): need_wakeup after E).
	 */
	barrier();
	if (commit) {
		if (unlikely(READ_ONCE(rb->counts_dirty) ||
			     ring_wakeup_pending(rb, head))) {
			ring_publish_slow(rb);
			return;
		}
	} else if (unlikely(READ_ONCE(rb->counts_dirty))) {
		ring_mirror_counts(rb);
	}
	if (!commit)
		ctl = rb->ctl;
	WRITE_ONCE(ctl->records_written, local64_read(&rb->records_written));
	kring_irq_point(rb);

	smp_wmb(); /* B, matches C: record stores before the data_head store */
	WRITE_ONCE(ctl->data_head, head);
	WRITE_ONCE(rb->pub_head, head);
	kring_irq_point(rb);

	if (!commit && ring_wakeup_pending(rb, head))
		ring_wakeup_eval(rb, head);

	/*
	 * Publish the head before dropping the nest count: otherwise an
	 * interrupting writer could publish a newer head that our store
	 * would then (temporarily) replace by an older one.
	 */
	barrier();
	WRITE_ONCE(rb->nest, 0);
	ring_cpu_leave(rb);

	/*
	 * Drop the nest count before re-reading ->head and ->counts_dirty, or
	 * we could miss the last interrupting writer's update. A writer that
	 * reserved moved ->head; one that only lost a record (or was refused)
	 * marked its counter for mirroring, after this publication looked at
	 * the mark (ring_mirror_counts() clears it before it reads them).
	 */
	barrier();
	kring_irq_point(rb);
	if (unlikely(head != (unsigned long)local_read(&rb->head) ||
		     READ_ONCE(rb->counts_dirty))) {
		ring_cpu_enter(rb, (unsigned long)__builtin_return_address(0));
		WRITE_ONCE(rb->nest, 1);
		if (commit) {
			ring_publish_slow(rb);
			return;
		}
		goto again;
	}
}

static inline bool ring_has_space(const struct kring_ring *rb, unsigned long head,
				  unsigned long tail, unsigned int size)
{
	/*
	 * @tail is whatever user space wrote. If it is not within one data
	 * area behind @head, there is no sensible space to offer: report none,
	 * so the record is lost and nothing is written.
	 *
	 * One compare: @size is never above the data area (->max_record, and
	 * in forward mode a LOST record besides, is within it, see
	 * kring_ring_init()), so data_size - @size does not wrap, and a used
	 * count above it, garbage or not, leaves no room.
	 */
	return head - tail <= rb->data_size - size;
}

/*
 * Does a backward reservation from ->head @before down to @after cross a
 * slice boundary of the byte count? The counts differ above the slice bits.
 */
static __always_inline bool ring_ovw_crosses(const struct kring_ring *rb,
					     unsigned long before,
					     unsigned long after)
{
	return (-before ^ -after) >> rb->ovw_shift;
}

/* ring_slow.c: a reservation's accounting out of line */
int ring_reserved_slow(struct kring_ring *rb, bool overwrite,
		       unsigned long offset, unsigned long head);

/*
 * The reservation loop of kring_output_begin(): move ->head by @total bytes
 * (forward: if the consumer left the space). On success *@offsetp is
 * ->head before, *@headp after. With @stamp, *@timep is the clock reading
 * of the last round (unchanged without a ring clock); without, the clock
 * is not read (the one-call write: its record carries no ring time).
 *
 * Return: true, or false if there is no space (forward mode).
 */
static __always_inline bool ring_reserve(struct kring_ring *rb, unsigned int total,
					 bool overwrite, bool stamp,
					 unsigned long *offsetp,
					 unsigned long *headp, u64 *timep)
{
	unsigned long offset = local_read(&rb->head), head;

	do {
		head = offset;
		/*
		 * With a ring clock the timestamp is read inside the
		 * reservation loop: a writer that interrupts us between this
		 * read and our cmpxchg moves ->head, our cmpxchg fails and we
		 * read the clock again. So timestamps never decrease in
		 * position order, however writers nest.
		 */
		if (stamp && rb->clock)
			*timep = ring_clock(rb);
		if (!overwrite) {
			unsigned long tail = READ_ONCE(rb->ctl->data_tail);

			if (unlikely(!ring_has_space(rb, head, tail, total)))
				return false;
			/*
			 * The check above is a control dependency separating
			 * the @tail load from the record stores after the
			 * loop: they happen only if it passed.
			 *
			 * A, matches D; the full barrier the consumer issues
			 * after reading the data and before storing the new
			 * tail. See ring_publish().
			 */
			head += total;
		} else {
			/* No tail: write below the newest record. */
			head -= total;
		}
		kring_irq_point(rb);
	} while (!ring_try_cmpxchg(&rb->head, &offset, head));
	/*
	 * The cmpxchg implies barrier(): none of the data stores after it can
	 * be hoisted above the reservation by the compiler.
	 */
	kring_irq_point(rb);
	*offsetp = offset;
	*headp = head;
	return true;
}

/*
 * Does a reservation that moved ->head from @offset to @head need its
 * accounting (ring_reserved_slow())? Backward mode: a record that crosses
 * no slice boundary changes no checkpoint, and the checkpoint the estimate
 * reads is the one the last crossing read (ring_ovw_cross()): nothing to
 * do. Either mode: wakeup_events counts it.
 */
static __always_inline bool ring_reserved_uncommon(const struct kring_ring *rb,
						   bool overwrite,
						   unsigned long offset,
						   unsigned long head)
{
	if (overwrite && ring_ovw_crosses(rb, offset, head))
		return true;
	return READ_ONCE(rb->wakeup_events);
}

/*
 * Point the handle at the first byte of a reservation of @total bytes that
 * moved ->head from @offset to @head, and account it; its last @size bytes
 * are the caller's record (what precedes them, a LOST record). The
 * accounting's uncommon cases are a tail call, so that nothing lives
 * across a call after the reservation loop.
 *
 * Return: 0.
 */
static __always_inline int ring_reserved(struct kring_output_handle *h,
					 struct kring_ring *rb, bool overwrite,
					 unsigned long offset, unsigned long head,
					 unsigned int total, unsigned int size,
					 u64 time)
{
	unsigned long pos = overwrite ? head : offset;
	unsigned long rec_pos = (pos + total - size) & rb->mask;

	h->time = time;
	h->rem = total;
	ring_handle_seek(h, rb, pos);
	h->rec_pos = rec_pos;
	h->rec_size = size;
	if (unlikely(ring_reserved_uncommon(rb, overwrite, offset, head)))
		return ring_reserved_slow(rb, overwrite, offset, head);
	return 0;
}

/* The time of a loss decided before the reservation loop read the clock. */
static inline u64 ring_lost_time(const struct kring_ring *rb, u64 time)
{
	return rb->clock ? ring_clock(rb) : time;
}

/* ring_slow.c: losses, refusals, a record not written to its end */
int ring_begin_fail(struct kring_ring *rb, unsigned int level,
		    int err, u64 seq, u64 time,
		    const struct kring_lost_acc *lost);
int ring_begin_lost(struct kring_output_handle *h,
		    unsigned int level, unsigned int size,
		    u64 time);
int ring_begin_refused(struct kring_ring *rb,
		       unsigned int level, unsigned int size,
		       u64 seq, u64 time);
void ring_end_fill(struct kring_output_handle *h);

/* A record whole in its reservation: count it written and publish. */
static __always_inline void ring_commit(struct kring_ring *rb)
{
	local64_inc(&rb->records_written);
	kring_irq_point(rb);
	ring_publish(rb, true);
}

/* kring_output_end(), inline for kring_output_write() too. */
static __always_inline void ring_end(struct kring_output_handle *h)
{
	struct kring_ring *rb = h->rb;

	if (unlikely(h->rem)) {
		ring_end_fill(h);
		return;
	}
	ring_commit(rb);
}

/*
 * The one-call writes: a record stored whole by one call, with no handle
 * between the reservation and the commit. Both go through one body,
 * ring_output(), with what differs as compile-time constants:
 * @overwrite, the ring's mode, and @stamped: kring_output_write_stamped()
 * (the ring's time read in the reservation loop and stored into the body
 * at @time_off, the body in two pieces, zero padding, the record's
 * sequence number as its last 8 bytes) or kring_output_write() (no ring
 * time, the body in one piece, the padding zeroed). What a record holds
 * besides its header is a struct ring_body; the inline path keeps it in
 * registers, and the uncommon cases (losses to report first, no space, a
 * reservation not in one piece, one to account) go out of line with its
 * address, each one a tail call of the inline path.
 */
struct ring_body {
	void *head;
	const void *tail;
	unsigned int head_len;
	unsigned int tail_len;
	unsigned int time_off;
	bool stamped;
	u64 *timep;
	u64 seq;
	u64 time;
};

/* ring_slow.c: a one-call record after a LOST record, or in pieces */
int ring_body_after_lost(struct kring_ring *rb,
			 struct kring_record_header hdr,
			 const struct ring_body *b);
int ring_body_pieces(struct kring_ring *rb, unsigned long pos,
		     struct kring_record_header hdr,
		     const struct ring_body *b);

#endif /* _KRING_RING_INTERNAL_H */
