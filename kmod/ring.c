// SPDX-License-Identifier: GPL-2.0
/*
 * kring data ring: reservations, copies that cross pages, commit, nesting,
 * lost accounting, wake-ups, forward and backward (overwrite) writing.
 *
 * Modelled on perf's kernel/events/ring_buffer.c; the same files build in
 * user space with tests/host/kring_host_shim.h (docs/ARCHITECTURE.md, "The
 * ring core runs on the host too"), so they use only READ_ONCE/WRITE_ONCE,
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
 * The slow paths (lost accounting and LOST records, refusals, discards,
 * records not in one piece, the wake-ups) are in ring_slow.c, out of line;
 * the inline fast path they share with the writer body here is in
 * ring_internal.h.
 */

#include "ring_internal.h"

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

/*
 * The record's parts as a struct ring_body, for a writer that goes out of
 * line with its address; inline, the parts stay in registers.
 */
static __always_inline struct ring_body ring_body_of(void *head, unsigned int head_len,
						     const void *tail, unsigned int tail_len,
						     unsigned int time_off, u64 *timep,
						     u64 seq, u64 time, const bool stamped)
{
	return (struct ring_body) {
		.head = head, .head_len = head_len, .tail = tail,
		.tail_len = tail_len, .time_off = time_off,
		.stamped = stamped, .timep = timep, .seq = seq, .time = time,
	};
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
		const struct ring_body b = ring_body_of(head, head_len, tail, tail_len,
							time_off, timep, seq, time, stamped);

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
		const struct ring_body b = ring_body_of(body, body_len, tail, tail_len,
							time_off, timep, seq, time,
							kind == RING_STAMPED);

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
		const struct ring_body b = ring_body_of(body, body_len, tail, tail_len,
							time_off, timep, seq, time,
							kind == RING_STAMPED);

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
