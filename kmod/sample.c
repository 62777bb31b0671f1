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
	static const u8 zeros[8];
	u32 pair[2];

	sample_type |= KRING_SAMPLE_SEQ;
	kring_output_header(h, KRING_RECORD_SAMPLE, 0);
	if (sample_type & KRING_SAMPLE_IDENTIFIER)
		kring_output_copy(h, &d->id, 8);
	if (sample_type & KRING_SAMPLE_IP)
		kring_output_copy(h, &d->ip, 8);
	if (sample_type & KRING_SAMPLE_TID) {
		pair[0] = d->pid;
		pair[1] = d->tid;
		kring_output_copy(h, pair, 8);
	}
	if (sample_type & KRING_SAMPLE_TIME)
		kring_output_copy(h, &d->time, 8);
	if (sample_type & KRING_SAMPLE_ID)
		kring_output_copy(h, &d->id, 8);
	if (sample_type & KRING_SAMPLE_CPU) {
		pair[0] = d->cpu;
		pair[1] = 0;
		kring_output_copy(h, pair, 8);
	}
	if (sample_type & KRING_SAMPLE_PERIOD)
		kring_output_copy(h, &d->period, 8);
	if (sample_type & KRING_SAMPLE_RAW) {
		u32 padded = KRING_RAW_PADDED(d->raw_size);

		kring_output_copy(h, &padded, sizeof(padded));
		if (d->raw_size)
			kring_output_copy(h, d->raw, d->raw_size);
		kring_output_copy(h, zeros, padded - d->raw_size);
	}
	if (sample_type & KRING_SAMPLE_SEQ)
		kring_output_copy(h, &h->seq, 8);
}
EXPORT_SYMBOL_GPL(kring_output_sample);
