// SPDX-License-Identifier: GPL-2.0
/*
 * kring data ring: reservations, copies that cross pages, commit, nesting,
 * lost accounting, wake-ups, forward and backward (overwrite) writing.
 *
 * Modelled on perf's kernel/events/ring_buffer.c; the same file builds in
 * user space with tests/host/kring_host_shim.h (docs/ARCHITECTURE.md, "The
 * ring core runs on the host too"), so it uses only READ_ONCE/WRITE_ONCE,
 * the smp_*() barriers, barrier(), local_t/local64_t operations,
 * memcpy/memset and a few helpers.
 *
 * Ordering against the consumer, which runs on any CPU:
 *
 *   kernel				user
 *
 *   if (LOAD ->data_tail) {		LOAD ->data_head
 *			(A)		smp_rmb()	(C)
 *	STORE $data			LOAD $data
 *	smp_wmb()	(B)		smp_mb()	(D)
 *	STORE ->data_head		STORE ->data_tail
 *   }
 *
 * Where A pairs with D, and B pairs with C.
 *
 * (A) is a control dependency: the data stores happen only if the space
 * check on the loaded data_tail passed (kring_output_begin()). (D) must be
 * a full barrier because it orders the consumer's data LOADs before its
 * tail STORE. (B) orders two stores, so a write barrier suffices
 * (ring_publish()); (C) orders two loads. The consumer may use
 * smp_load_acquire() for C and smp_store_release() for D.
 *
 * The wake-up handshake adds one more pair (ring_publish()):
 *
 *   kernel				user, before sleeping
 *
 *	STORE ->data_head		STORE ->need_wakeup = 1
 *	smp_mb()	(E)		smp_mb()	(F)
 *	LOAD ->need_wakeup		LOAD ->data_head
 *
 * E pairs with F: at least one side sees the other's store, so either the
 * kernel wakes the consumer or the consumer sees the new data and does not
 * sleep.
 *
 * New wake-up settings from any CPU (kring_ring_set_wakeup()) against the
 * outermost writer's wake-up window (ring_wakeup_eval()):
 *
 *   setter				writer, setting the window
 *
 *	STORE ->watermark ...		LOAD ->wake_cfg
 *	smp_wmb()	(G)		smp_rmb()	(H)
 *	STORE ->wake_cfg		LOAD ->watermark ...
 *	smp_mb()	(I)		STORE ->wake_len
 *	STORE ->wake_len = 0		smp_mb()	(J)
 *					LOAD ->wake_cfg again
 *
 * G pairs with H: a writer that sees the new ->wake_cfg sees the settings.
 * I pairs with J: either the setter's zero lands after the writer's window
 * (the next publication looks again) or the writer's second load sees the
 * new ->wake_cfg and zeroes its own window: an old window never outlives
 * the call.
 *
 * Against writers that interrupt each other on the ring's one CPU, only
 * compiler ordering matters: an interrupt runs to completion between two
 * instructions of the writer it interrupted, so writers nest like a stack.
 * Reservations are local cmpxchgs on ->head; ->nest counts the writers in
 * flight and only the outermost publishes data_head, re-checking for writers
 * that interrupted it, as perf_output_put_handle() does.
 *
 * Lost records. A writer that cannot reserve space records its loss, and
 * the next writer that reserves space reports all losses it can see in a
 * KRING_RECORD_LOST record placed right before its own record, in the same
 * reservation (perf's __perf_output_begin()). The LOST record carries the
 * count and the range of sequence numbers and timestamps, so its several
 * words must be collected and cleared consistently although any step may
 * be interrupted by another writer that loses or reports records itself.
 * Losses are therefore kept per nesting depth (struct kring_lost_slot):
 *
 *  - a writer at depth d (->nest after its increment) adds its loss to
 *    slot d. Only the writer currently at depth d touches slot d's active
 *    half: deeper writers use deeper slots and shallower ones are suspended
 *    under it.
 *  - a writer at depth d reports the losses of slots d and deeper: deeper
 *    writers have all finished, shallower ones may be half-way through an
 *    update of their slot. To take a slot it flips the slot's active half
 *    with one local cmpxchg that also marks the slot busy; writers that
 *    interrupt it from then on add to the other half, and a collector that
 *    interrupts it skips the busy slot. It then reads and clears the old
 *    half at leisure.
 *  - if its own reservation then fails, it puts what it collected, plus its
 *    own loss, into its own slot d.
 *
 * So every loss is in exactly one slot or one writer's hands at any time,
 * and the count reported in LOST records is exact: records produced (one
 * sequence number per kring_output_begin()) == written + discarded + lost.
 * Backward (overwrite) mode writes no LOST records.
 */
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

/* struct kring_lost_slot.state */
#define SLOT_ACTIVE	1UL	/* the half writers add to */
#define SLOT_BUSY	2UL	/* a collector owns the other half */

#ifdef __KERNEL__
u64 kring_clock_ns(void)
{
	return ktime_get_mono_fast_ns();
}

u64 kring_clock_local(void)
{
	return local_clock();
}
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

/* Kernel address of ring position @pos: every index is masked. */
static inline void *ring_addr(const struct kring_ring *rb, unsigned long pos)
{
	if (likely(rb->data))
		return (char *)rb->data + (pos & rb->mask);
	return (char *)rb->data_pages[(pos >> PAGE_SHIFT) & (rb->nr_pages - 1)] +
	       (pos & (PAGE_SIZE - 1));
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

/*
 * Copy @len bytes from @buf (or zeroes if @buf is NULL) into the
 * reservation, page by page (or in two pieces where it wraps, in a
 * contiguous data area). Never writes beyond the reservation.
 */
static noinline void ring_write_pages(struct kring_output_handle *h,
				      const void *buf, unsigned int len)
{
	struct kring_ring *rb = h->rb;

	if (WARN_ON_ONCE(len > h->rem))
		len = h->rem;
	h->rem -= len;

	while (len) {
		unsigned int n = min(len, h->size);

		if (buf) {
			memcpy(h->addr, buf, n);
			buf = (const char *)buf + n;
		} else {
			memset(h->addr, 0, n);
		}
		len -= n;
		h->addr = (char *)h->addr + n;
		h->size -= n;
		if (!h->size && rb->data) {
			/* The end of the data area: wrap to its start. */
			h->addr = rb->data;
			h->size = rb->data_span;
		} else if (!h->size) {
			h->page = (h->page + 1) & (rb->nr_pages - 1);
			h->addr = rb->data_pages[h->page];
			h->size = PAGE_SIZE;
		}
		kring_irq_point(rb);
	}
}

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

/* Add the losses in @src to @dst, a writer's own accumulator. */
static void lost_acc_merge(struct kring_lost_acc *dst,
			   const struct kring_lost_acc *src)
{
	if (!src->count)
		return;
	if (!dst->count) {
		*dst = *src;
		return;
	}
	dst->count += src->count;
	dst->first_seq = min(dst->first_seq, src->first_seq);
	dst->last_seq = max(dst->last_seq, src->last_seq);
	dst->first_time = min(dst->first_time, src->first_time);
	dst->last_time = max(dst->last_time, src->last_time);
}

/*
 * lost_acc_merge() into a slot's active half @dst: its count is written
 * once, marked, after the other fields. A collector this writer
 * interrupted may be looking at that count (ring_lost_collect()); the
 * other fields only the half's owner reads, after claiming it.
 */
static void lost_slot_add(struct kring_lost_acc *dst,
			  const struct kring_lost_acc *src)
{
	u64 count = dst->count;

	if (!src->count)
		return;
	if (!count) {
		dst->first_seq = src->first_seq;
		dst->last_seq = src->last_seq;
		dst->first_time = src->first_time;
		dst->last_time = src->last_time;
	} else {
		dst->first_seq = min(dst->first_seq, src->first_seq);
		dst->last_seq = max(dst->last_seq, src->last_seq);
		dst->first_time = min(dst->first_time, src->first_time);
		dst->last_time = max(dst->last_time, src->last_time);
	}
	WRITE_ONCE(dst->count, count + src->count);
}

/*
 * Park the losses in @acc in the slot of depth @level (0-based), which
 * belongs to the calling writer. See the comment at the top of the file.
 */
static void ring_lost_park(struct kring_ring *rb, unsigned int level,
			   const struct kring_lost_acc *acc)
{
	struct kring_lost_slot *slot;

	if (unlikely(level >= KRING_RING_MAX_NEST)) {
		/* Too deep for a slot: keep the count only. */
		local64_add(acc->count, &rb->lost_deep);
	} else {
		slot = &rb->lost_slots[level];
		lost_slot_add(&slot->acc[local_read(&slot->state) & SLOT_ACTIVE],
			      acc);
	}
	kring_irq_point(rb);
	barrier();
	local_add(acc->count, &rb->lost_pending);
}

/*
 * Take every loss parked at depth @level (0-based) and deeper into @acc.
 * Slots that an interrupted collector owns are left to it.
 */
static void ring_lost_collect(struct kring_ring *rb, unsigned int level,
			      struct kring_lost_acc *acc)
{
	unsigned int i;
	s64 deep;

	for (i = level; i < KRING_RING_MAX_NEST; i++) {
		struct kring_lost_slot *slot = &rb->lost_slots[i];
		unsigned long state = local_read(&slot->state);
		struct kring_lost_acc *old;
		bool claimed = false;
		u64 count;

		/*
		 * A look at the active half's count, marked: a writer that
		 * interrupts us may be adding to that half right now
		 * (lost_slot_add() marks its store). Only a half claimed
		 * below is read in full.
		 */
		while (!(state & SLOT_BUSY) &&
		       READ_ONCE(slot->acc[state & SLOT_ACTIVE].count)) {
			kring_irq_point(rb);
			/* Claim: flip the active half and mark the slot busy. */
			if (ring_try_cmpxchg(&slot->state, &state,
					     (state ^ SLOT_ACTIVE) | SLOT_BUSY)) {
				claimed = true;
				break;
			}
		}
		if (!claimed)
			continue;

		/*
		 * Writers at depth i now add to the other half; the one we
		 * flipped away from is ours until we drop SLOT_BUSY (whatever
		 * interrupting collectors left in it, possibly nothing).
		 */
		old = &slot->acc[state & SLOT_ACTIVE];
		kring_irq_point(rb);
		count = old->count;
		lost_acc_merge(acc, old);
		memset(old, 0, sizeof(*old));
		local_sub(count, &rb->lost_pending);
		barrier();
		local_set(&slot->state, (state ^ SLOT_ACTIVE) & SLOT_ACTIVE);
		kring_irq_point(rb);
	}

	if (unlikely(local64_read(&rb->lost_deep))) {
		deep = local64_xchg(&rb->lost_deep, 0);
		acc->count += deep;
		local_sub(deep, &rb->lost_pending);
	}
}

static inline void ring_mirror(__u64 *field, u64 val)
{
	/* Leave the line clean when nothing changed. */
	if (READ_ONCE(*field) != val)
		WRITE_ONCE(*field, val);
}

/*
 * A counter other than records_written changed: the outermost writer is to
 * copy them all into the control page (ring_publish()). Writers that
 * interrupt the outermost one take a sequence number, which makes it go
 * round again and see the mark.
 */
static inline void ring_mark_counts(struct kring_ring *rb)
{
	WRITE_ONCE(rb->counts_dirty, 1);
}

/*
 * Copy the counters marked by ring_mark_counts() into the control page;
 * outermost writer only.
 */
static noinline void ring_mirror_counts(struct kring_ring *rb)
{
	struct kring_ctl_page *ctl = rb->ctl;

	/* Clear the mark before reading what it stands for. */
	WRITE_ONCE(rb->counts_dirty, 0);
	barrier();
	kring_irq_point(rb);
	ring_mirror(&ctl->records_discarded,
		    local64_read(&rb->records_discarded));
	ring_mirror(&ctl->lost_no_space, local64_read(&rb->lost_no_space));
	ring_mirror(&ctl->lost_too_big, local64_read(&rb->lost_too_big));
	ring_mirror(&ctl->lost_paused, local64_read(&rb->lost_paused));
	ring_mirror(&ctl->lost_overwritten, READ_ONCE(rb->ovw_est));
	ring_mirror(&ctl->wakeups, local64_read(&rb->wakeups));
	kring_irq_point(rb);
}

/* A wake-up is due: does the consumer want it? Outermost writer only. */
static void ring_wakeup_issue(struct kring_ring *rb)
{
	smp_mb(); /* E, matches F: data_head store before need_wakeup load */
	if (!READ_ONCE(rb->ctl->need_wakeup))
		return;

	local64_inc(&rb->wakeups);
	WRITE_ONCE(rb->ctl->wakeups, local64_read(&rb->wakeups));
	/* When it became due, for the consumer to measure how late it comes */
	WRITE_ONCE(rb->ctl->wakeup_time, ktime_get_mono_fast_ns());
	if (rb->wakeup)
		rb->wakeup(rb);
}

/* Half the positions: a window that no publication leaves in practice. */
#define WAKE_FAR	(ULONG_MAX / 4)

/*
 * The outermost writer has stored data_head @head outside the wake-up
 * window (ring_wakeup_pending()): is a wake-up due, by the watermark or by
 * a wakeup_events count (->wakeup_gen moved)? Set the window anew: from
 * the watermark's stamp to its next crossing, both in bytes written.
 *
 * Writers that interrupt this one are nested: they neither publish nor
 * read the window, they only bump ->wakeup_gen and then zero ->wake_len
 * (ring_wakeup_events()). So the window is set first and ->wakeup_gen
 * read again after it: a bump before that read zeroes the window here, a
 * later one is followed by its writer's own zeroing. Either way the next
 * publication looks again (the outermost writer's re-check goes round for
 * that writer's record).
 */
static noinline void ring_wakeup_eval(struct kring_ring *rb, unsigned long head)
{
	bool overwrite = kring_ring_overwrite(rb);
	unsigned long written = overwrite ? -head : head;
	unsigned long cfg = READ_ONCE(rb->wake_cfg);
	unsigned long wm, gen, stamp, lo, len;
	bool due = false;

	smp_rmb(); /* H, matches G: the settings of @cfg, or newer ones */
	wm = READ_ONCE(rb->watermark);
	gen = local_read(&rb->wakeup_gen);
	kring_irq_point(rb);
	/*
	 * A writer that interrupted us after our ->head load (before ->wakeup_gen's
	 * just now) may have made a count due for a record beyond @head: leave
	 * everything to the next round of the publication, which the re-check of
	 * ->head makes, with a data_head that holds that record. A count made
	 * due after this load is not taken here.
	 */
	barrier();
	if (unlikely((unsigned long)local_read(&rb->head) != head)) {
		local_set(&rb->wake_len, 0);
		return;
	}
	if (gen != rb->wakeup_seen) {
		rb->wakeup_seen = gen;
		due = true;
	}
	if (wm) {
		stamp = local_read(&rb->wakeup_pos);
		/* Signed: a stamp ahead of the bytes written (a seek) is no crossing. */
		if ((long)(written - stamp) >= (long)wm) {
			stamp += (written - stamp) / wm * wm;
			local_set(&rb->wakeup_pos, stamp);
			due = true;
		}
		/* Not due while the bytes written stay in [stamp, stamp + wm). */
		lo = overwrite ? -(stamp + wm) + 1 : stamp;
		len = wm;
	} else {
		lo = head - WAKE_FAR;
		len = 2 * WAKE_FAR;
	}
	kring_irq_point(rb);
	WRITE_ONCE(rb->wake_lo, lo);
	local_set(&rb->wake_len, len);
	kring_irq_point(rb);
	/*
	 * The window before ->wakeup_gen, as ring_wakeup_events() the
	 * reverse; before ->wake_cfg: J, matches I in kring_ring_set_wakeup().
	 */
	smp_mb();
	if ((unsigned long)local_read(&rb->wakeup_gen) != rb->wakeup_seen ||
	    READ_ONCE(rb->wake_cfg) != cfg)
		local_set(&rb->wake_len, 0);
	kring_irq_point(rb);
	if (due)
		ring_wakeup_issue(rb);
}

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

#ifdef KRING_RING_CHECK_CPU
/*
 * The outermost writer claims the ring for its CPU, nested ones (same CPU)
 * find it claimed by their own CPU; a writer on another CPU finds it
 * claimed by a foreign one and warns: two CPUs write the ring at once.
 * An atomic compare-and-exchange, so that the check itself is exact. The
 * claimant's caller (@ip) is kept for the warning, which names both.
 */
static void ring_cpu_enter(struct kring_ring *rb, unsigned long ip)
{
	int cpu = kring_ring_cpu(), old = -1;

#ifdef __KERNEL__
	old = cmpxchg(&rb->writer_cpu, -1, cpu);
	if (old == -1)
		WRITE_ONCE(rb->writer_ip, ip);
	if (old == -1 || old == cpu)
		return;
	/* Counted for the KUnit case that forces one (ring_kunit.c), which reads it */
	atomic_inc(&rb->cpu_conflicts);
	WARN_ONCE(!READ_ONCE(rb->cpu_conflicts_quiet),
		  "kring: ring entered from %pS on CPU %d while %pS writes it on CPU %d\n",
		  (void *)ip, cpu, (void *)READ_ONCE(rb->writer_ip), old);
#else
	if (__atomic_compare_exchange_n(&rb->writer_cpu, &old, cpu, false,
					__ATOMIC_RELAXED, __ATOMIC_RELAXED))
		rb->writer_ip = ip;
	WARN_ON_ONCE(old != -1 && old != cpu);
#endif
}

/*
 * The outermost writer is done (after ->nest dropped to 0: a writer that
 * interrupts in between is outermost itself and leaves the same way).
 */
static void ring_cpu_leave(struct kring_ring *rb)
{
	WRITE_ONCE(rb->writer_cpu, -1);
}
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

/*
 * Enter as a writer (*@level: its nesting depth) and take the record's
 * sequence number, counting a nested writer.
 */
static __always_inline u64 ring_enter_seq(struct kring_ring *rb, unsigned int *level)
{
	u64 seq;

	*level = ring_enter(rb);
	kring_irq_point(rb);
	seq = local64_inc_return(&rb->seq) - 1;
	kring_irq_point(rb);
	if (unlikely(*level > 1)) {
		local64_inc(&rb->nested);
		WARN_ON_ONCE(*level > KRING_RING_MAX_NEST);
	}
	return seq;
}

static __always_inline unsigned int ring_get_handle(struct kring_output_handle *h)
{
	return ring_enter(h->rb);
}

static noinline void ring_publish_slow(struct kring_ring *rb);

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

/* ring_publish() out of line, for the paths other than a commit. */
static noinline void ring_publish_slow(struct kring_ring *rb)
{
	ring_publish(rb, false);
}

/* Write the LOST record reporting @lost at the handle's position. */
static void ring_write_lost(struct kring_output_handle *h,
			    const struct kring_lost_acc *lost)
{
	struct kring_lost_record rec = {
		.header = {
			.type = KRING_RECORD_LOST,
			.size = KRING_LOST_RECORD_SIZE,
		},
		.id = h->rb->id,
		.lost = lost->count,
		.first_seq = lost->first_seq,
		.last_seq = lost->last_seq,
		.first_time = lost->first_time,
		.last_time = lost->last_time,
	};

	ring_write(h, &rec, sizeof(rec));
}

static bool ring_has_space(const struct kring_ring *rb, unsigned long head,
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
 * Count a record for wakeup_events (@we, not 0): every @we-th makes a
 * wake-up due, which the outermost writer's publication then sees (the
 * window zeroed after ->wakeup_gen moved, ring_wakeup_eval()).
 */
static noinline void ring_wakeup_events(struct kring_ring *rb, unsigned int we)
{
	unsigned long ev = local_read(&rb->events), next;
	bool due;

	do {
		next = ev + 1;
		due = next >= we;
		if (due)
			next = 0;
	} while (!ring_try_cmpxchg(&rb->events, &ev, next));
	if (due) {
		local_inc(&rb->wakeup_gen);
		barrier();
		local_set(&rb->wake_len, 0);
	}
}

/* Count a reservation for wakeup_events, if set. */
static __always_inline void ring_wakeup_account(struct kring_ring *rb)
{
	unsigned int we = READ_ONCE(rb->wakeup_events);

	if (unlikely(we))
		ring_wakeup_events(rb, we);
}

/*
 * Backward mode: keep a lower bound of the records overwritten. For each
 * slice boundary (1/16 of the data area) the byte count crosses, note how
 * many records had begun before it; every record begun more than one data
 * area before the current byte count is (partly) overwritten.
 *
 * Records begun are counted only here, from the sequence numbers given
 * out: less those refused (paused, too big), and less one for each writer
 * this one interrupted (->nest, where interrupting writers left it), which
 * may not have reserved yet. A lower bound, exact without nesting.
 */
static noinline void ring_ovw_cross(struct kring_ring *rb, unsigned long b0,
				    unsigned long b1)
{
	unsigned long j = (b0 >> rb->ovw_shift) + 1;
	unsigned long last = b1 >> rb->ovw_shift;
	/*
	 * Signed, and never below 0: an interrupted writer that was refused
	 * (counted in lost_*) and is still in flight (counted in ->nest) is
	 * subtracted twice, and one that has no sequence number yet once.
	 */
	s64 n = (s64)(local64_read(&rb->seq) - rb->seq_base -
		      local64_read(&rb->lost_paused) -
		      local64_read(&rb->lost_too_big)) - (READ_ONCE(rb->nest) - 1);
	u64 begun = n > 0 ? n : 0;

	/* A record (at most the data area) crosses at most 17 boundaries. */
	for (; j <= last; j++)
		WRITE_ONCE(rb->ovw_ckpt[j & (KRING_OVW_CKPTS - 1)], begun);

	if (b1 > rb->data_size) {
		j = (b1 - rb->data_size) >> rb->ovw_shift;
		begun = READ_ONCE(rb->ovw_ckpt[j & (KRING_OVW_CKPTS - 1)]);
		if (begun > READ_ONCE(rb->ovw_est)) {
			WRITE_ONCE(rb->ovw_est, begun);
			ring_mark_counts(rb);
		}
	}
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

/*
 * The accounting of a reservation that crosses a slice boundary (backward
 * mode) or counts for wakeup_events, out of line: ring_reserved()'s tail.
 */
static noinline int ring_reserved_slow(struct kring_ring *rb, bool overwrite,
				       unsigned long offset, unsigned long head)
{
	if (!overwrite) {
		ring_wakeup_account(rb);
		return 0;
	}
	if (ring_ovw_crosses(rb, offset, head))
		ring_ovw_cross(rb, -offset, -head);
	ring_wakeup_account(rb);
	return 0;
}

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
 * The accounting of a reservation that moved ->head from @offset to @head,
 * for the handle API: the uncommon cases are a tail call.
 *
 * Return: 0.
 */
static __always_inline int ring_reserved_account(struct kring_ring *rb, bool overwrite,
						 unsigned long offset, unsigned long head)
{
	if (unlikely(ring_reserved_uncommon(rb, overwrite, offset, head)))
		return ring_reserved_slow(rb, overwrite, offset, head);
	return 0;
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
	return ring_reserved_account(rb, overwrite, offset, head);
}

/* The time of a loss decided before the reservation loop read the clock. */
static inline u64 ring_lost_time(const struct kring_ring *rb, u64 time)
{
	return rb->clock ? ring_clock(rb) : time;
}

/*
 * kring_output_begin() failed with @err (its lost_* counter counted): park
 * the loss of sequence number @seq (with the losses in @lost it collected,
 * if any) for the next LOST record, publish, return @err. @time is the
 * loss's time (the loop's clock reading, or ring_lost_time() for a failure
 * before the loop). No handle: the one-call write has none.
 */
static noinline int ring_begin_fail(struct kring_ring *rb, unsigned int level,
				    int err, u64 seq, u64 time,
				    const struct kring_lost_acc *lost)
{
	ring_mark_counts(rb);	/* a lost_* counter moved */
	if (!kring_ring_overwrite(rb)) {
		struct kring_lost_acc acc = { 0 }, self;

		if (lost)
			acc = *lost;
		self = (struct kring_lost_acc) {
			.count = 1,
			.first_seq = seq,
			.last_seq = seq,
			.first_time = time,
			.last_time = time,
		};

		lost_acc_merge(&acc, &self);
		ring_lost_park(rb, level - 1, &acc);
	}
	kring_irq_point(rb);
	ring_publish_slow(rb);
	return err;
}

/*
 * A reservation found no space (forward mode): count the loss, park it
 * with @time for the next LOST record, publish. The nest level is read
 * again from ->nest, where interrupting writers left it.
 */
static __always_inline int ring_no_space(struct kring_ring *rb, u64 seq, u64 time)
{
	local64_inc(&rb->lost_no_space);
	return ring_begin_fail(rb, READ_ONCE(rb->nest), -ENOSPC, seq, time, NULL);
}

/*
 * kring_output_begin() in forward mode with losses pending: collect them
 * and reserve room for a LOST record reporting them before the record.
 */
static noinline int ring_begin_lost(struct kring_output_handle *h,
				    unsigned int level, unsigned int size,
				    u64 time)
{
	struct kring_ring *rb = h->rb;
	struct kring_lost_acc lost = { 0 };
	unsigned long offset, head;
	unsigned int total = size;

	/*
	 * A full ring stays full for many records: do not take the pending
	 * losses only to park them again: add ours to them.
	 */
	if (!ring_has_space(rb, local_read(&rb->head),
			    READ_ONCE(rb->ctl->data_tail),
			    size + KRING_LOST_RECORD_SIZE)) {
		local64_inc(&rb->lost_no_space);
		return ring_begin_fail(rb, level, -ENOSPC, h->seq,
				       ring_lost_time(rb, time), NULL);
	}

	ring_lost_collect(rb, level - 1, &lost);
	if (lost.count)
		total += KRING_LOST_RECORD_SIZE;
	if (unlikely(!ring_reserve(rb, total, false, true, &offset, &head, &time))) {
		local64_inc(&rb->lost_no_space);
		return ring_begin_fail(rb, level, -ENOSPC, h->seq, time, &lost);
	}
	ring_reserved(h, rb, false, offset, head, total, size, time);
	if (unlikely(lost.count))
		ring_write_lost(h, &lost);
	return 0;
}

/*
 * The pause and both size limits in one compare, see ->size_limit: the
 * bound of a producer's @size, before anything is computed from it. The
 * subtraction is in size_t, which holds every unsigned int: a size below a
 * header wraps far above any limit and is refused, and only sizes of 8 to
 * ->max_record (at most KRING_RECORD_MAX_SIZE) pass, to be rounded up.
 */
static __always_inline bool ring_size_refused(const struct kring_ring *rb,
					      unsigned int size)
{
	return unlikely(size - sizeof(struct kring_record_header) >=
			READ_ONCE(rb->size_limit));
}

/*
 * kring_output_begin() refused @size at ->size_limit: paused, or a size no
 * reservation can have. A size that fits was refused by a pause, even if
 * the ring has been resumed since.
 */
static noinline int ring_begin_refused(struct kring_ring *rb,
				       unsigned int level, unsigned int size,
				       u64 seq, u64 time)
{
	if (READ_ONCE(rb->paused) ||
	    (size >= sizeof(struct kring_record_header) &&
	     size <= rb->max_record)) {
		local64_inc(&rb->lost_paused);
		return ring_begin_fail(rb, level, -EAGAIN, seq,
				       ring_lost_time(rb, time), NULL);
	}
	local64_inc(&rb->lost_too_big);
	return ring_begin_fail(rb, level, -E2BIG, seq, ring_lost_time(rb, time), NULL);
}

/**
 * kring_output_copy() - write the next @len bytes of the record
 * @h:		handle from a successful kring_output_begin()
 * @buf:	the bytes
 * @len:	how many, at most what the reservation has left (@h->rem)
 *
 * Splits the copy only where the reservation is not one piece (a ring over
 * separate pages, or a contiguous one at its wrap without the second
 * mapping of KRING_RING_MIRRORED).
 *
 * Return: 0; -E2BIG when @len is more than the reservation has left:
 * nothing is written, and the end call zeroes what stays unwritten.
 */
int kring_output_copy(struct kring_output_handle *h, const void *buf,
		      unsigned int len)
{
	/*
	 * A producer's count: bounded here, at the entry, before anything is
	 * computed from it (ring_write() then never cuts a copy).
	 */
	if (unlikely(len > h->rem))
		return -E2BIG;
	ring_write(h, buf, len);
	return 0;
}
EXPORT_SYMBOL_GPL(kring_output_copy);

/**
 * kring_output_header() - write the record header
 * @h:		handle from a successful kring_output_begin(), nothing
 *		written yet
 * @type:	KRING_RECORD_*
 * @misc:	header misc bits
 *
 * The header's size is @h->rec_size.
 *
 * Return: 0; -E2BIG when less than a header is left of the reservation
 * (nothing is written).
 */
int kring_output_header(struct kring_output_handle *h, u32 type, u16 misc)
{
	struct kring_record_header hdr = {
		.type = type,
		.misc = misc,
		.size = h->rec_size,
	};

	if (unlikely(h->rem < sizeof(hdr)))
		return -E2BIG;
	ring_write(h, &hdr, sizeof(hdr));
	return 0;
}
EXPORT_SYMBOL_GPL(kring_output_header);

/*
 * kring_output_end() of a record the writer did not write to its end. A
 * reservation without its whole header (a refused header, copy or sample,
 * or no write at all) has no size a consumer could step over: it becomes
 * the PAD record kring_output_discard() writes, of the reserved size, and
 * counts as discarded. With its header, the rest is zeroed and committed.
 */
static noinline void ring_end_fill(struct kring_output_handle *h)
{
	struct kring_ring *rb = h->rb;

	if (h->rec_size - h->rem < sizeof(struct kring_record_header)) {
		kring_output_discard(h);
		return;
	}
	ring_write_pages(h, NULL, h->rem);
	local64_inc(&rb->records_written);
	kring_irq_point(rb);
	ring_publish(rb, false);
}

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

/**
 * kring_output_end() - commit the record
 * @h:	handle from a successful kring_output_begin()
 *
 * Bytes of the reservation the writer did not write are zeroed; a
 * reservation whose header was not written whole becomes a PAD record
 * instead, counted as discarded (kring_output_discard()). The outermost
 * writer publishes data_head and, when due, calls @rb->wakeup.
 */
void kring_output_end(struct kring_output_handle *h)
{
	ring_end(h);
}
EXPORT_SYMBOL_IF_KUNIT(kring_output_end);

/**
 * kring_output_discard() - cancel the record
 * @h:	handle from a successful kring_output_begin()
 *
 * Turns the reservation into a KRING_RECORD_PAD record (carrying @h->seq
 * when it has room for it), counts it in records_discarded and ends it.
 * A LOST record reserved with it stays valid.
 */
void kring_output_discard(struct kring_output_handle *h)
{
	struct kring_ring *rb = h->rb;
	struct kring_record_header hdr = {
		.type = KRING_RECORD_PAD,
		.size = h->rec_size,
	};
	u64 seq = h->seq;

	memcpy(ring_addr(rb, h->rec_pos), &hdr, sizeof(hdr));
	if (h->rec_size >= sizeof(hdr) + sizeof(seq))
		memcpy(ring_addr(rb, h->rec_pos + sizeof(hdr)), &seq, sizeof(seq));
	h->rem = 0;
	local64_inc(&rb->records_discarded);
	ring_mark_counts(rb);
	kring_irq_point(rb);
	ring_publish_slow(rb);
}
EXPORT_SYMBOL_IF_KUNIT(kring_output_discard);

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

/* The record's length before its padding: header, body, trailer. */
static __always_inline unsigned int ring_body_end(const struct ring_body *b)
{
	return sizeof(struct kring_record_header) + b->head_len + b->tail_len +
	       (b->stamped ? sizeof(u64) : 0);
}

/*
 * The record through the handle @h (its reservation, time and sequence
 * number): the time into the head first, then the header, the body, the
 * zero padding and the sequence number, and the end.
 */
static void ring_body_handle(struct kring_output_handle *h,
			     struct kring_record_header hdr,
			     const struct ring_body *b)
{
	if (b->stamped && b->time_off != KRING_WRITE_NO_TIME)
		memcpy((char *)b->head + b->time_off, &h->time, sizeof(h->time));
	if (b->timep)
		*b->timep = h->time;
	ring_write(h, &hdr, sizeof(hdr));
	ring_write(h, b->head, b->head_len);
	ring_write(h, b->tail, b->tail_len);
	ring_write(h, NULL, hdr.size - ring_body_end(b));	/* zeroes */
	if (b->stamped)
		ring_write(h, &h->seq, sizeof(h->seq));
	ring_end(h);
}

/*
 * With losses to report first (forward mode): the LOST record and the
 * record in one reservation, through a handle. The writer's nest level is
 * read again from ->nest, where writers that interrupted it left it.
 */
static noinline int ring_body_after_lost(struct kring_ring *rb,
					 struct kring_record_header hdr,
					 const struct ring_body *b)
{
	struct kring_output_handle h = { .rb = rb, .seq = b->seq, .time = b->time };
	int err = ring_begin_lost(&h, READ_ONCE(rb->nest), hdr.size, b->time);

	if (err)
		return err;
	ring_body_handle(&h, hdr, b);
	return 0;
}

/*
 * Into a reservation at (masked) ring position @pos that is not one piece
 * (separate pages, as kring's tests build them, or the wrap of an area not
 * mapped twice).
 */
static noinline int ring_body_pieces(struct kring_ring *rb, unsigned long pos,
				     struct kring_record_header hdr,
				     const struct ring_body *b)
{
	struct kring_output_handle h = {
		.rb = rb, .rem = hdr.size, .rec_size = hdr.size,
		.seq = b->seq, .time = b->time,
	};

	ring_handle_seek(&h, rb, pos);
	h.rec_pos = pos;
	ring_body_handle(&h, hdr, b);
	return 0;
}

/*
 * The record into its accounted reservation at ring position @pos, and its
 * commit: in place where the reservation is one piece, as a channel's
 * always is. The body's parts are arguments: the inline path keeps them in
 * registers, and builds a struct ring_body only to go out of line.
 */
static __always_inline int ring_body_at(struct kring_ring *rb, unsigned long pos,
					struct kring_record_header hdr,
					void *head, unsigned int head_len,
					const void *tail, unsigned int tail_len,
					unsigned int time_off, u64 *timep,
					u64 seq, u64 time, const bool stamped)
{
	const unsigned int size = hdr.size;
	char *addr;

	pos &= rb->mask;
	/* Without a contiguous area ->data_span is 0: in pieces too. */
	if (unlikely(pos + size > rb->data_span)) {
		const struct ring_body b = {
			.head = head, .head_len = head_len, .tail = tail,
			.tail_len = tail_len, .time_off = time_off,
			.stamped = stamped, .timep = timep, .seq = seq, .time = time,
		};

		return ring_body_pieces(rb, pos, hdr, &b);
	}
	addr = (char *)rb->data + pos;
	if (stamped && time_off != KRING_WRITE_NO_TIME)
		memcpy((char *)head + time_off, &time, sizeof(time));
	if (timep)
		*timep = time;
	kring_irq_point(rb);
	/*
	 * The padding, if any, is in the last word before the trailer:
	 * zeroed first, stored over by the body where it is not padding.
	 */
	if (stamped)
		memset(addr + size - 2 * sizeof(u64), 0, sizeof(u64));
	else if (head_len & (KRING_RECORD_ALIGN - 1))
		memset(addr + size - KRING_RECORD_ALIGN, 0, KRING_RECORD_ALIGN);
	memcpy(addr, &hdr, sizeof(hdr));
	kring_copy(addr + sizeof(hdr), head, head_len);
	if (stamped) {
		kring_copy(addr + sizeof(hdr) + head_len, tail, tail_len);
		memcpy(addr + size - sizeof(seq), &seq, sizeof(seq));
	}
	ring_commit(rb);
	return 0;
}

/*
 * After a reservation from @offset to @head that counts for wakeup_events
 * or crosses a slice boundary (backward mode): its accounting, then the
 * record.
 */
static noinline int ring_body_accounted(struct kring_ring *rb, unsigned long offset,
					unsigned long head,
					struct kring_record_header hdr,
					const struct ring_body *b)
{
	bool overwrite = kring_ring_overwrite(rb);

	ring_reserved_slow(rb, overwrite, offset, head);
	return ring_body_at(rb, overwrite ? head : offset, hdr, b->head, b->head_len,
			    b->tail, b->tail_len, b->time_off, b->timep, b->seq, b->time,
			    b->stamped);
}

/* What a write through ring_output() is. */
enum ring_kind {
	RING_BEGIN,	/* kring_output_begin(): a reservation for a handle */
	RING_WRITE,	/* kring_output_write(): no ring time, no trailer */
	RING_STAMPED,	/* kring_output_write_stamped() */
};

/*
 * The one writer body: every record kring writes goes through it, for one
 * mode (@overwrite) and one @kind, constants in each copy. It takes the
 * record's sequence number, bounds its @size (0 for one no record can
 * have), reserves it (with a LOST record first when losses wait to be
 * reported), and then either points @h at the reservation (RING_BEGIN,
 * whose writer stores the record and ends it) or stores the record in
 * place and commits it. @time is the time of a loss; RING_BEGIN and
 * RING_STAMPED read the ring's time in the reservation loop, where
 * timestamps cannot go backwards in position order however writers nest.
 * Nothing but @rb, @h, the position and the record's parts lives across
 * the clock call; the nest level a failure after the reservation loop
 * needs is read again from ->nest, where writers that interrupted us left
 * it.
 */
static __always_inline int ring_output(struct kring_ring *rb, struct kring_output_handle *h,
				       struct kring_record_header hdr,
				       void *body, unsigned int body_len,
				       const void *tail, unsigned int tail_len,
				       unsigned int time_off, u64 *timep, u64 time,
				       unsigned int size, const bool overwrite,
				       const enum ring_kind kind)
{
	const bool stamp = kind != RING_WRITE;
	unsigned long offset, head;
	unsigned int level;
	u64 seq;

	seq = ring_enter_seq(rb, &level);
	if (kind == RING_BEGIN) {
		h->rb = rb;
		h->seq = seq;
	}
	if (ring_size_refused(rb, size))
		return ring_begin_refused(rb, level, size, seq, time);
	size = round_up(size, KRING_RECORD_ALIGN);
	hdr.size = size;

	/* Losses to report first: a LOST record goes in the same reservation. */
	if (!overwrite && unlikely(local_read(&rb->lost_pending))) {
		const struct ring_body b = {
			.head = body, .head_len = body_len, .tail = tail,
			.tail_len = tail_len, .time_off = time_off,
			.stamped = kind == RING_STAMPED, .timep = timep,
			.seq = seq, .time = time,
		};

		if (kind == RING_BEGIN)
			return ring_begin_lost(h, level, size, time);
		return ring_body_after_lost(rb, hdr, &b);
	}

	/* A handle keeps the number: not live across the clock call. */
	if (unlikely(!ring_reserve(rb, size, overwrite, stamp, &offset, &head, &time)))
		return ring_no_space(rb, kind == RING_BEGIN ? h->seq : seq,
				     stamp ? time : ring_lost_time(rb, time));
	if (kind == RING_BEGIN)
		return ring_reserved(h, rb, overwrite, offset, head, size, size, time);
	if (unlikely(ring_reserved_uncommon(rb, overwrite, offset, head))) {
		const struct ring_body b = {
			.head = body, .head_len = body_len, .tail = tail,
			.tail_len = tail_len, .time_off = time_off,
			.stamped = kind == RING_STAMPED, .timep = timep,
			.seq = seq, .time = time,
		};

		return ring_body_accounted(rb, offset, head, hdr, &b);
	}
	return ring_body_at(rb, overwrite ? head : offset, hdr, body, body_len, tail,
			    tail_len, time_off, timep, seq, time, kind == RING_STAMPED);
}

/**
 * kring_output_begin() - reserve space for one record
 * @h:		handle to fill in
 * @rb:		the ring
 * @size:	the whole record, header included; rounded up to 8 bytes
 * @time:	the record's timestamp (reported in LOST records if lost)
 *
 * Must be called with preemption disabled, on the one CPU that writes @rb
 * (see ring.h); may nest in any context on that CPU. On success the
 * caller writes exactly the record (the header first, with size
 * @h->rec_size, e.g. via kring_output_header()) with kring_output_copy()
 * and finishes with kring_output_end() or kring_output_discard().
 *
 * Every call takes a sequence number (@h->seq) whether it succeeds or not;
 * a failure is counted in one lost_* counter and reported in the next
 * KRING_RECORD_LOST record (forward mode), and needs no end call.
 *
 * Return: 0; -ENOSPC if the consumer has not freed enough space (forward
 * mode), -E2BIG if @size is larger than the ring can ever hold (or
 * smaller than a header), -EAGAIN if the ring is paused.
 */
int kring_output_begin(struct kring_output_handle *h, struct kring_ring *rb,
		       unsigned int size, u64 time)
{
	const struct kring_record_header hdr = { 0 };

	lockdep_assert_preemption_disabled();
	if (kring_ring_overwrite(rb))
		return ring_output(rb, h, hdr, NULL, 0, NULL, 0, KRING_WRITE_NO_TIME, NULL,
				   time, size, true, RING_BEGIN);
	return ring_output(rb, h, hdr, NULL, 0, NULL, 0, KRING_WRITE_NO_TIME, NULL,
			   time, size, false, RING_BEGIN);
}
EXPORT_SYMBOL_IF_KUNIT(kring_output_begin);

/**
 * kring_output_write() - write one whole record: a header and its body
 * @rb:		the ring
 * @type:	KRING_RECORD_* of the header
 * @misc:	its misc bits
 * @body:	the bytes after the header (may be NULL when @len is 0)
 * @len:	how many: at most KRING_RECORD_MAX_SIZE less a header
 * @time:	as kring_output_begin(): the time of a loss; a ring with a
 *		clock reads it only when a record is lost
 *
 * kring_output_begin(), kring_output_header(), kring_output_copy() and
 * kring_output_end() in one call, with their context rules and their
 * accounting: the record is the header and @len bytes rounded up to 8,
 * the padding zeroed. The record carries no ring time (it has no handle
 * to carry one out): one that needs a time has it in @body, so the ring
 * does not read its clock for a record it writes (a lost one's time is
 * read when it is lost). @len is bounded before anything is computed from
 * it: a length no record can carry goes to the reservation as a size
 * below a header, which it refuses as too big. The reservation and the
 * publication are kring_output_begin()'s and kring_output_end()'s steps
 * (inline), the record stored in place in between; no handle: its state
 * stays in registers, and the uncommon cases (a refusal, no space, losses
 * to report first, a reservation not in one piece) go out of line with it
 * as arguments.
 *
 * Return: as kring_output_begin(); -EINVAL, counted nowhere and taking no
 * sequence number, for @len above 0 without @body.
 */
int kring_output_write(struct kring_ring *rb, u32 type, u16 misc,
		       const void *body, unsigned int len, u64 time)
{
	struct kring_record_header hdr = { .type = type, .misc = misc };
	unsigned int size;

	if (unlikely(len && !body))
		return -EINVAL;
	lockdep_assert_preemption_disabled();
	/* The bound first: only then is the header added. */
	size = likely(len <= KRING_RECORD_MAX_SIZE - sizeof(struct kring_record_header)) ?
	       len + sizeof(struct kring_record_header) : 0;
	if (kring_ring_overwrite(rb))
		return ring_output(rb, NULL, hdr, (void *)body, len, NULL, 0,
				   KRING_WRITE_NO_TIME, NULL, time, size, true, RING_WRITE);
	return ring_output(rb, NULL, hdr, (void *)body, len, NULL, 0,
			   KRING_WRITE_NO_TIME, NULL, time, size, false, RING_WRITE);
}
EXPORT_SYMBOL_IF_KUNIT(kring_output_write);

/**
 * kring_output_write_stamped() - write one whole record of two pieces,
 *	stamped with the ring's time and numbered with its sequence number
 * @rb:		the ring
 * @type:	KRING_RECORD_* of the header
 * @misc:	its misc bits
 * @head:	the first bytes after the header; the ring stores the record's
 *		time into it at @time_off before copying it (caller's memory)
 * @head_len:	how many: at most KRING_WRITE_HEAD_MAX
 * @tail:	the bytes after @head (may be NULL when @tail_len is 0)
 * @tail_len:	how many: at most KRING_RECORD_MAX_SIZE
 * @time_off:	where in @head the time goes (8 bytes, within @head_len), or
 *		KRING_WRITE_NO_TIME
 * @timep:	if not NULL, gets the record's time
 *
 * The record is the header, @head, @tail, zeroes to the next multiple of
 * 8 and the record's sequence number (8 bytes): a SAMPLE's layout, whose
 * last field is its sequence number (sample.c). As kring_output_begin()
 * with one exported call and no handle: the time is read in the
 * reservation loop (timestamps never decrease in position order however
 * writers nest), the sequence number is the one the record takes, the
 * context rules and the accounting are the same. Both lengths are bounded
 * before anything is computed from them: a record above the ring's or
 * kring's limit is refused as too big.
 *
 * Return: as kring_output_begin(); -EINVAL, counted nowhere and taking no
 * sequence number, for a length above 0 without its address, @head_len
 * above KRING_WRITE_HEAD_MAX or a @time_off outside @head.
 */
int kring_output_write_stamped(struct kring_ring *rb, u32 type, u16 misc,
			       void *head, unsigned int head_len,
			       const void *tail, unsigned int tail_len,
			       unsigned int time_off, u64 *timep)
{
	struct kring_record_header hdr = { .type = type, .misc = misc };
	unsigned int size;

	if (unlikely((head_len && !head) || (tail_len && !tail) ||
		     head_len > KRING_WRITE_HEAD_MAX ||
		     (time_off != KRING_WRITE_NO_TIME &&
		      (time_off > head_len || head_len - time_off < sizeof(u64)))))
		return -EINVAL;
	lockdep_assert_preemption_disabled();
	/* The bounds first: only then are the header and the number added. */
	size = likely(tail_len <= KRING_RECORD_MAX_SIZE) ?
	       head_len + tail_len + 2 * sizeof(u64) : 0;
	if (kring_ring_overwrite(rb))
		return ring_output(rb, NULL, hdr, head, head_len, tail, tail_len,
				   time_off, timep, 0, size, true, RING_STAMPED);
	return ring_output(rb, NULL, hdr, head, head_len, tail, tail_len,
			   time_off, timep, 0, size, false, RING_STAMPED);
}
EXPORT_SYMBOL_IF_KUNIT(kring_output_write_stamped);

/**
 * kring_ring_flush_lost() - report pending losses without a new record
 * @rb:	the ring (forward mode; backward rings never report losses)
 *
 * A loss is normally reported by a LOST record in front of the next record
 * that fits. A producer that goes idle calls this instead, so the consumer
 * learns of its last losses: it writes a LOST record alone, if there is
 * room, and takes no sequence number. Same context rules as
 * kring_output_begin().
 *
 * Return: true when no loss is left unreported, false when there was no
 * room (call again after the consumer has read).
 */
bool kring_ring_flush_lost(struct kring_ring *rb)
{
	struct kring_lost_acc lost = { 0 };
	struct kring_output_handle h = { .rb = rb };
	unsigned long offset, head, tail;
	unsigned int level;
	bool done = true;

	lockdep_assert_preemption_disabled();
	if (kring_ring_overwrite(rb) || !local_read(&rb->lost_pending))
		return true;

	level = ring_get_handle(&h);
	ring_lost_collect(rb, level - 1, &lost);
	if (!lost.count)
		goto out;

	offset = local_read(&rb->head);
	do {
		head = offset;
		tail = READ_ONCE(rb->ctl->data_tail);
		if (!ring_has_space(rb, head, tail, KRING_LOST_RECORD_SIZE)) {
			/* Keep them for the next writer (or call). */
			ring_lost_park(rb, level - 1, &lost);
			done = false;
			goto out;
		}
		/* A, matches D: as in kring_output_begin(). */
		head += KRING_LOST_RECORD_SIZE;
	} while (!ring_try_cmpxchg(&rb->head, &offset, head));
	ring_wakeup_account(rb);

	h.rem = KRING_LOST_RECORD_SIZE;
	ring_handle_seek(&h, rb, offset);
	ring_write_lost(&h, &lost);
out:
	ring_publish_slow(rb);
	return done && !local_read(&rb->lost_pending);
}
EXPORT_SYMBOL_IF_KUNIT(kring_ring_flush_lost);
