// SPDX-License-Identifier: GPL-2.0
/*
 * SAMPLE records: perf's body layout for the sample_type bits kring
 * supports, in perf's order, then kring's sequence number (see the layout
 * comment at KRING_RAW_PADDED in uapi/linux/kring.h). Every SAMPLE carries
 * its sequence number: KRING_SAMPLE_SEQ is added to whatever sample_type
 * the caller passes, as the kernel adds it to every channel's sample_type.
 */
#include <linux/kernel.h>
#include <linux/string.h>

#include <kring/producer.h>

#include "compat.h"

/**
 * kring_sample_size() - bytes of a SAMPLE record, header included
 * @sample_type: KRING_SAMPLE_* bits (KRING_SAMPLE_SEQ is implied)
 * @raw_size: bytes of RAW data (ignored without KRING_SAMPLE_RAW)
 *
 * Return: the size to pass to kring_output_begin().
 */
unsigned int kring_sample_size(u64 sample_type, u32 raw_size)
{
	unsigned int size = sizeof(struct kring_record_header);

	sample_type |= KRING_SAMPLE_SEQ;
	size += 8 * hweight64(sample_type & (KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_IP |
					    KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
					    KRING_SAMPLE_ID | KRING_SAMPLE_CPU |
					    KRING_SAMPLE_PERIOD | KRING_SAMPLE_SEQ));
	if (sample_type & KRING_SAMPLE_RAW)
		size += sizeof(u32) + KRING_RAW_PADDED(raw_size);
	return size;
}
EXPORT_SYMBOL_GPL(kring_sample_size);

/**
 * kring_output_sample() - write a whole SAMPLE record into a reservation
 * @h:		handle from kring_output_begin() with
 *		kring_sample_size(@sample_type, @d->raw_size) bytes
 * @sample_type: KRING_SAMPLE_* bits (KRING_SAMPLE_SEQ is implied)
 * @d:		the fields; the sequence number comes from @h
 *
 * The caller still ends the record with kring_output_end().
 */
void kring_output_sample(struct kring_output_handle *h, u64 sample_type,
			 const struct kring_sample_data *d)
{
	/*
	 * The record in place where the reservation is one piece (a
	 * channel's always is, kring_output_ptr()); else in at most three
	 * copies (each one call, whatever its size): header, the fixed fields
	 * and RAW's size word; RAW's data; RAW's padding and the sequence
	 * number.
	 */
	u8 stage[sizeof(struct kring_record_header) + 7 * 8 + sizeof(u32)];
	u8 tail[8 + 8] = { 0 };
	struct kring_record_header hdr = {
		.type = KRING_RECORD_SAMPLE,
		.size = h->rec_size,
	};
	unsigned int n = 0, t = 0;
	u8 *rec = NULL, *head;
	u32 pair[2];

	sample_type |= KRING_SAMPLE_SEQ;
	/*
	 * In place only into a whole, untouched reservation of exactly the
	 * record's size; anything else takes the copies, which never write
	 * past the reservation and zero what is left of it.
	 */
	if (h->rem == h->rec_size &&
	    h->rem == kring_sample_size(sample_type, d->raw_size))
		rec = kring_output_ptr(h);
	head = rec ?: stage;
	memcpy(head, &hdr, sizeof(hdr));
	n = sizeof(hdr);
	if (sample_type & KRING_SAMPLE_IDENTIFIER) {
		memcpy(head + n, &d->id, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_IP) {
		memcpy(head + n, &d->ip, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_TID) {
		pair[0] = d->pid;
		pair[1] = d->tid;
		memcpy(head + n, pair, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_TIME) {
		memcpy(head + n, &d->time, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_ID) {
		memcpy(head + n, &d->id, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_CPU) {
		pair[0] = d->cpu;
		pair[1] = 0;
		memcpy(head + n, pair, 8);
		n += 8;
	}
	if (sample_type & KRING_SAMPLE_PERIOD) {
		memcpy(head + n, &d->period, 8);
		n += 8;
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
			memcpy(rec + n, d->raw, d->raw_size);
			n += d->raw_size;
		}
		memcpy(rec + n, tail, t);
		memcpy(rec + n + t, &h->seq, 8);
		return;
	}
	kring_output_copy(h, head, n);
	if ((sample_type & KRING_SAMPLE_RAW) && d->raw_size)
		kring_output_copy(h, d->raw, d->raw_size);
	memcpy(tail + t, &h->seq, 8);
	kring_output_copy(h, tail, t + 8);
}
EXPORT_SYMBOL_GPL(kring_output_sample);
