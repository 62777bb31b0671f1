// SPDX-License-Identifier: GPL-2.0
/*
 * SAMPLE records: perf's body layout for the sample_type bits kring
 * supports, in perf's order, then kring's sequence number (see the layout
 * comment at KRING_RAW_PADDED in uapi/linux/kring.h). Every SAMPLE carries
 * its sequence number: KRING_SAMPLE_SEQ is added to whatever sample_type
 * the caller passes, as the kernel adds it to every channel's sample_type.
 */
#include <linux/build_bug.h>
#include <linux/errno.h>
#include <linux/kernel.h>
#include <linux/string.h>

#include <kring/output.h>

#include "compat.h"
#include "ring.h"
#include "sample.h"

/* Bytes of a SAMPLE record but RAW's data, its padding and its size word. */
static unsigned int sample_fixed_size(u64 sample_type)
{
	return sizeof(struct kring_record_header) +
	       8 * hweight64((sample_type | KRING_SAMPLE_SEQ) &
			     (KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_IP |
			      KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
			      KRING_SAMPLE_ID | KRING_SAMPLE_CPU |
			      KRING_SAMPLE_PERIOD | KRING_SAMPLE_SEQ));
}

/*
 * The size of a SAMPLE record of @sample_type with @raw_size bytes of RAW
 * data and a call chain of @chain_nr entries (CALLCHAIN only), each size
 * bounded before its arithmetic; 0 when one is above its bound or the
 * record would be above KRING_RECORD_MAX_SIZE.
 */
static unsigned int sample_size(u64 sample_type, u32 raw_size, u32 chain_nr)
{
	unsigned int size = sample_fixed_size(sample_type);

	/* RAW's bound leaves room for every other field but CALLCHAIN. */
	BUILD_BUG_ON(9 * 8 + sizeof(u32) + KRING_RAW_PADDED(KRING_SAMPLE_RAW_MAX) !=
		     KRING_RECORD_MAX_SIZE);
	if (sample_type & KRING_SAMPLE_RAW) {
		/* The producer's size, bounded before the padding's arithmetic. */
		if (raw_size > KRING_SAMPLE_RAW_MAX)
			return 0;
		size += sizeof(u32) + KRING_RAW_PADDED(raw_size);
	}
	if (sample_type & KRING_SAMPLE_CALLCHAIN) {
		if (chain_nr > KRING_CALLCHAIN_MAX + 2)
			return 0;
		size += 8 + 8 * chain_nr;
		if (size > KRING_RECORD_MAX_SIZE)
			return 0;
	}
	return size;
}

/**
 * kring_sample_size() - bytes of a SAMPLE record, header included
 * @sample_type: KRING_SAMPLE_* bits (KRING_SAMPLE_SEQ is implied; bits
 *		kring does not know are ignored)
 * @raw_size: bytes of RAW data (ignored without KRING_SAMPLE_RAW), at most
 *		KRING_SAMPLE_RAW_MAX
 *
 * Return: the size to pass to a begin call (8-byte aligned, at most
 * KRING_RECORD_MAX_SIZE), or 0 when @raw_size is above KRING_SAMPLE_RAW_MAX:
 * no record carries it, and a begin refuses size 0 (-E2BIG, counted in
 * lost_too_big). KRING_SAMPLE_CALLCHAIN, which no producer channel
 * takes (only kring's timer source writes it), is ignored:
 * kring_sample_data_size() counts a call chain.
 */
unsigned int kring_sample_size(u64 sample_type, u32 raw_size)
{
	return sample_size(sample_type & ~KRING_SAMPLE_CALLCHAIN, raw_size, 0);
}
EXPORT_SYMBOL_GPL(kring_sample_size);

/**
 * kring_sample_data_size() - bytes of the SAMPLE record of @d
 * @sample_type: KRING_SAMPLE_* bits
 * @d:		the fields: RAW's and CALLCHAIN's sizes count
 *
 * Return: as kring_sample_size(), and 0 for a call chain of more than
 * KRING_CALLCHAIN_MAX + 2 entries.
 */
unsigned int kring_sample_data_size(u64 sample_type, const struct kring_sample_data *d)
{
	return sample_size(sample_type, d->raw_size, d->chain_nr);
}
EXPORT_SYMBOL_IF_KUNIT(kring_sample_data_size);

/*
 * Whether @d fits a whole, untouched reservation @h of exactly its
 * kring_sample_size(): the guard of kring_output_sample(), before any
 * byte of the sample is written. Return: 0, or the refusal's errno.
 */
static int sample_check(const struct kring_output_handle *h, u64 sample_type,
			const struct kring_sample_data *d)
{
	unsigned int size;

	if (sample_type & KRING_SAMPLE_RAW) {
		if (d->raw_size > KRING_SAMPLE_RAW_MAX)
			return -E2BIG;
		if (d->raw_size && !d->raw)
			return -EINVAL;
	}
	if (sample_type & KRING_SAMPLE_CALLCHAIN) {
		if (d->chain_nr > KRING_CALLCHAIN_MAX + 2)
			return -E2BIG;
		if (d->chain_nr && !d->chain)
			return -EINVAL;
	}
	size = sample_size(sample_type, d->raw_size, d->chain_nr);
	if (h->rem != h->rec_size || h->rec_size != size)
		return -EINVAL;
	return 0;
}

/*
 * The fixed fields of a SAMPLE of @sample_type at @p, in perf's order
 * (SEQ, the last field, is not one of them). *@time_off, if not NULL, gets
 * TIME's offset from @p (KRING_WRITE_NO_TIME without it). Return: the
 * bytes stored, at most 7 * 8.
 */
static __always_inline unsigned int sample_fields(u8 *p, u64 sample_type,
						  const struct kring_sample_data *d,
						  unsigned int *time_off)
{
	unsigned int n = 0;
	u32 pair[2];

	if (time_off)
		*time_off = KRING_WRITE_NO_TIME;
	if (sample_type & KRING_SAMPLE_IDENTIFIER) {
		memcpy(p + n, &d->id, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_IP) {
		memcpy(p + n, &d->ip, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_TID) {
		pair[0] = d->pid;
		pair[1] = d->tid;
		memcpy(p + n, pair, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_TIME) {
		if (time_off)
			*time_off = n;
		memcpy(p + n, &d->time, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_ID) {
		memcpy(p + n, &d->id, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_CPU) {
		pair[0] = d->cpu;
		pair[1] = 0;
		memcpy(p + n, pair, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_PERIOD) {
		memcpy(p + n, &d->period, 8);
		n += 8;
	}
	return n;
}

/**
 * kring_output_sample() - write a whole SAMPLE record into a reservation
 * @h:		handle from a begin call of
 *		kring_sample_data_size(@sample_type, @d) bytes, nothing
 *		written yet
 * @sample_type: KRING_SAMPLE_* bits (KRING_SAMPLE_SEQ is implied)
 * @d:		the fields; the sequence number comes from @h
 *
 * The caller still ends the record with the end call, whatever this
 * returns.
 *
 * Return: 0; -E2BIG when RAW's @d->raw_size is above KRING_SAMPLE_RAW_MAX;
 * -EINVAL when @h is not a whole, untouched reservation of exactly
 * kring_sample_size() bytes, or RAW data of a size above 0 has no
 * address. A refused sample is written nowhere: the end call turns the
 * untouched reservation into a KRING_RECORD_PAD record, counted as
 * discarded, which consumers skip (a touched one is left as it is).
 * With KRING_SAMPLE_CALLCHAIN, -E2BIG for more than
 * KRING_CALLCHAIN_MAX + 2 entries and -EINVAL for entries without an
 * address, as for RAW.
 */
int kring_output_sample(struct kring_output_handle *h, u64 sample_type,
			const struct kring_sample_data *d)
{
	/*
	 * The record in place where the reservation is one piece (a
	 * channel's always is, kring_output_ptr()); else in at most three
	 * copies (each one call, whatever its size): header, the fixed fields
	 * and RAW's size word; RAW's data; RAW's padding and the sequence
	 * number (with a call chain two more, its count and its entries,
	 * after the fixed fields, and RAW's size word in a copy of its own).
	 */
	u8 stage[sizeof(struct kring_record_header) + 7 * 8 + sizeof(u32)];
	u8 tail[8 + 8] = { 0 };
	struct kring_record_header hdr = {
		.type = KRING_RECORD_SAMPLE,
		.size = h->rec_size,
	};
	unsigned int n = 0, t = 0;
	u8 *rec, *head;
	int ret;

	sample_type |= KRING_SAMPLE_SEQ;
	/*
	 * Every size checked first, none derived from another: RAW's size
	 * against its bound, then the record's against the reservation. Past
	 * this point the bytes written (fields, RAW's data, its padding, the
	 * sequence number) add up to @h->rem exactly, in place or in copies.
	 */
	ret = sample_check(h, sample_type, d);
	if (unlikely(ret))
		return ret;	/* untouched: the end call makes it a PAD record */
	rec = kring_output_ptr(h);
	head = rec ?: stage;
	memcpy(head, &hdr, sizeof(hdr));
	n = sizeof(hdr) + sample_fields(head + sizeof(hdr), sample_type, d, NULL);
	if (sample_type & KRING_SAMPLE_CALLCHAIN) {
		u64 nr = d->chain_nr;

		if (rec) {
			memcpy(rec + n, &nr, 8);
			memcpy(rec + n + 8, d->chain, 8 * nr);
			n += 8 + 8 * nr;
		} else {
			kring_output_copy(h, head, n);
			kring_output_copy(h, &nr, 8);
			kring_output_copy(h, d->chain, 8 * nr);
			n = 0;
		}
	}
	if (sample_type & KRING_SAMPLE_RAW) {
		u32 padded = KRING_RAW_PADDED(d->raw_size);

		memcpy(head + n, &padded, sizeof(padded));
		n += sizeof(padded);
		/* The padding (under 8 bytes) is zero; tail[] starts zeroed. */
		t = padded - d->raw_size;
	}
	if (rec) {
		if ((sample_type & KRING_SAMPLE_RAW) && d->raw_size) {
			kring_copy(rec + n, d->raw, d->raw_size);
			n += d->raw_size;
		}
		memcpy(rec + n, tail, t);
		memcpy(rec + n + t, &h->seq, 8);
		return 0;
	}
	if (n)
		kring_output_copy(h, head, n);
	if ((sample_type & KRING_SAMPLE_RAW) && d->raw_size)
		kring_output_copy(h, d->raw, d->raw_size);
	memcpy(tail + t, &h->seq, 8);
	kring_output_copy(h, tail, t + 8);
	return 0;
}
EXPORT_SYMBOL_GPL(kring_output_sample);

/*
 * kring_output_write_sample() of a SAMPLE with a call chain, through a handle
 * (kring_output_sample() writes call chains). Out of line: the handle is
 * zeroed on every call where the stack is (CONFIG_INIT_STACK_ALL_ZERO).
 */
static noinline int sample_write_handle(struct kring_ring *rb, u64 sample_type,
					struct kring_sample_data *d)
{
	struct kring_output_handle h;
	int ret;

	ret = kring_output_begin(&h, rb, kring_sample_data_size(sample_type, d), 0);
	if (ret)
		return ret;
	d->time = h.time;
	/* A refusal leaves the reservation untouched: the end pads it. */
	ret = kring_output_sample(&h, sample_type, d);
	kring_output_end(&h);
	return ret;
}

/**
 * kring_output_write_sample() - write one SAMPLE record into a ring in one call
 * @rb:		the ring; the caller is its writer (ring.h's context rules)
 * @sample_type: KRING_SAMPLE_* bits (KRING_SAMPLE_SEQ is implied)
 * @d:		the fields; @d->time is set to the record's time
 *
 * The fixed fields and RAW's size word are assembled on the stack and
 * kring_output_write_stamped() writes them, RAW's data, its padding and
 * the sequence number in one call, the ring's time stored into TIME: the
 * record kring_output_sample() writes, without a handle. RAW's size is
 * bounded before its arithmetic: above KRING_SAMPLE_RAW_MAX the record is
 * refused as too big (counted in lost_too_big). A SAMPLE with a call chain
 * goes through a handle and kring_output_sample().
 *
 * Return: as kring_output_write_stamped(); -EINVAL, counted nowhere, for
 * RAW data of a size above 0 or call chain entries without an address.
 * With a call chain, as kring_output_sample() otherwise (a refused sample
 * is a PAD record, counted as discarded).
 */
int kring_output_write_sample(struct kring_ring *rb, u64 sample_type,
			      struct kring_sample_data *d)
{
	/*
	 * Every byte copied is stored first: no zeroing on every call. Its
	 * words aligned: an unaligned store costs a slow path in an emulator
	 * and on some cores, and kring_copy() copies aligned words only.
	 */
	u8 head[7 * 8 + sizeof(u32)] __aligned(8) __uninitialized;
	unsigned int n, time_off, raw_len = 0;

	/* The addresses first, for every path: refused, counted nowhere. */
	if (unlikely((sample_type & KRING_SAMPLE_RAW) && d->raw_size && !d->raw))
		return -EINVAL;
	if (unlikely(sample_type & KRING_SAMPLE_CALLCHAIN)) {
		if (unlikely(d->chain_nr && !d->chain))
			return -EINVAL;
		return sample_write_handle(rb, sample_type, d);
	}
	n = sample_fields(head, sample_type, d, &time_off);
	if (sample_type & KRING_SAMPLE_RAW) {
		u32 padded;

		/* Above the bound: a length no record takes, refused as too big. */
		if (unlikely(d->raw_size > KRING_SAMPLE_RAW_MAX))
			return kring_output_write_stamped(rb, KRING_RECORD_SAMPLE, 0, head, n,
							  d->raw, UINT_MAX, time_off,
							  &d->time);
		padded = KRING_RAW_PADDED(d->raw_size);
		memcpy(head + n, &padded, sizeof(padded));
		n += sizeof(padded);
		raw_len = d->raw_size;
	}
	return kring_output_write_stamped(rb, KRING_RECORD_SAMPLE, 0, head, n,
					  d->raw, raw_len, time_off, &d->time);
}
EXPORT_SYMBOL_IF_KUNIT(kring_output_write_sample);
