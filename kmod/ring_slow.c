// SPDX-License-Identifier: GPL-2.0
/*
 * kring data ring, its slow paths: lost accounting and LOST records,
 * refusals and discards, records not in one piece, the publication's
 * uncommon cases and the wake-ups it issues, the writer-CPU check of
 * debug builds. All out of line, called from the fast path (ring.c and
 * ring_internal.h) when a record is not the common case; see ring.c for
 * the ordering against the consumer and how writers nest.
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

#include "ring_internal.h"

/* struct kring_lost_slot.state */
#define SLOT_ACTIVE	1UL	/* the half writers add to */
#define SLOT_BUSY	2UL	/* a collector owns the other half */

/*
 * The record clocks. A ring's own writers never call them: ring_clock()
 * compares ->clock with them and reads the clock inline; they run where
 * a clock is called through its pointer (kring_clock_fn()). Here, not in
 * ring.c, because ring_slow.c uses nothing of ring.c (lint layers).
 */
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

/* Kernel address of ring position @pos: every index is masked. */
static inline void *ring_addr(const struct kring_ring *rb, unsigned long pos)
{
	if (likely(rb->data))
		return (char *)rb->data + (pos & rb->mask);
	return (char *)rb->data_pages[(pos >> PAGE_SHIFT) & (rb->nr_pages - 1)] +
	       (pos & (PAGE_SIZE - 1));
}

/*
 * Copy @len bytes from @buf (or zeroes if @buf is NULL) into the
 * reservation, page by page (or in two pieces where it wraps, in a
 * contiguous data area). Never writes beyond the reservation.
 */
noinline void ring_write_pages(struct kring_output_handle *h,
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
noinline void ring_mirror_counts(struct kring_ring *rb)
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
noinline void ring_wakeup_eval(struct kring_ring *rb, unsigned long head)
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

#ifdef KRING_RING_CHECK_CPU
/*
 * The outermost writer claims the ring for its CPU, nested ones (same CPU)
 * find it claimed by their own CPU; a writer on another CPU finds it
 * claimed by a foreign one and warns: two CPUs write the ring at once.
 * An atomic compare-and-exchange, so that the check itself is exact. The
 * claimant's caller (@ip) is kept for the warning, which names both.
 */
void ring_cpu_enter(struct kring_ring *rb, unsigned long ip)
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
void ring_cpu_leave(struct kring_ring *rb)
{
	WRITE_ONCE(rb->writer_cpu, -1);
}
#endif

static __always_inline unsigned int ring_get_handle(struct kring_output_handle *h)
{
	return ring_enter(h->rb);
}

/* ring_publish() out of line, for the paths other than a commit. */
noinline void ring_publish_slow(struct kring_ring *rb)
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
 * The accounting of a reservation that crosses a slice boundary (backward
 * mode) or counts for wakeup_events, out of line: ring_reserved()'s tail.
 */
noinline int ring_reserved_slow(struct kring_ring *rb, bool overwrite,
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
 * kring_output_begin() failed with @err (its lost_* counter counted): park
 * the loss of sequence number @seq (with the losses in @lost it collected,
 * if any) for the next LOST record, publish, return @err. @time is the
 * loss's time (the loop's clock reading, or ring_lost_time() for a failure
 * before the loop). No handle: the one-call write has none.
 */
noinline int ring_begin_fail(struct kring_ring *rb, unsigned int level,
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
 * kring_output_begin() in forward mode with losses pending: collect them
 * and reserve room for a LOST record reporting them before the record.
 */
noinline int ring_begin_lost(struct kring_output_handle *h,
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
 * kring_output_begin() refused @size at ->size_limit: paused, or a size no
 * reservation can have. A size that fits was refused by a pause, even if
 * the ring has been resumed since.
 */
noinline int ring_begin_refused(struct kring_ring *rb,
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

/*
 * kring_output_end() of a record the writer did not write to its end. A
 * reservation without its whole header (a refused header, copy or sample,
 * or no write at all) has no size a consumer could step over: it becomes
 * the PAD record kring_output_discard() writes, of the reserved size, and
 * counts as discarded. With its header, the rest is zeroed and committed.
 */
noinline void ring_end_fill(struct kring_output_handle *h)
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
noinline int ring_body_after_lost(struct kring_ring *rb,
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
noinline int ring_body_pieces(struct kring_ring *rb, unsigned long pos,
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
