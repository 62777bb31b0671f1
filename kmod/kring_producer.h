/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kring's in-kernel producer API: how another module writes records into a
 * kring channel that user space opened, configured (KRING_SOURCE_NONE or any
 * source) and mapped.
 *
 * User space reads the channel's id with KRING_IOC_ID and hands it to the
 * producing module (a module parameter, a sysfs file, an ioctl of its own).
 * The module takes a reference with kring_channel_get() and writes:
 *
 *	struct kring_output_handle h;
 *
 *	preempt_disable();		(or be in irq/softirq/NMI context)
 *	if (!kring_channel_output_begin(&h, ch, size)) {
 *		kring_output_copy(&h, &hdr, sizeof(hdr));
 *		kring_output_copy(&h, body, size - sizeof(hdr));
 *		kring_channel_output_end(&h);
 *	}
 *	preempt_enable();
 *
 * or, for perf-style SAMPLE records (struct kring_sample_data, ring.h),
 * kring_channel_write_sample(). Writers
 * of one channel may nest (task, softirq, hardirq, NMI) on one CPU; one
 * channel must not have writers on two CPUs at once (as with perf's
 * buffers: bind the producer to the channel's CPU or serialise it).
 *
 * A record that does not fit is dropped and counted, and the consumer sees a
 * LOST record before the next one that fits: producers never block.
 */
#ifndef _KRING_PRODUCER_H
#define _KRING_PRODUCER_H

#include <linux/types.h>
#include <linux/kring.h>

#include "ring.h"

struct kring_channel;

/**
 * struct kring_sample_data - the fields of a KRING_RECORD_SAMPLE
 * @id:		IDENTIFIER and ID
 * @ip:		IP
 * @pid:	TID (first word)
 * @tid:	TID (second word)
 * @time:	TIME
 * @cpu:	CPU
 * @period:	PERIOD
 * @raw:	RAW data, @raw_size bytes (may be NULL when @raw_size is 0)
 * @raw_size:	RAW data size
 *
 * The sequence number comes from the output handle.
 */
struct kring_sample_data {
	u64 id;
	u64 ip;
	u32 pid;
	u32 tid;
	u64 time;
	u32 cpu;
	u64 period;
	const void *raw;
	u32 raw_size;
};

unsigned int kring_sample_size(u64 sample_type, u32 raw_size);
void kring_output_sample(struct kring_output_handle *h, u64 sample_type,
			 const struct kring_sample_data *d);

struct kring_channel *kring_channel_get(u64 id);
void kring_channel_put(struct kring_channel *ch);
int kring_channel_output_begin(struct kring_output_handle *h,
			       struct kring_channel *ch, unsigned int size);
void kring_channel_output_end(struct kring_output_handle *h);
int kring_channel_write_sample(struct kring_channel *ch,
			       struct kring_sample_data *data);

#endif /* _KRING_PRODUCER_H */
