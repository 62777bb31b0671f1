/* SPDX-License-Identifier: GPL-2.0 */
/*
 * SAMPLE records in one call (sample.c): a channel's producers write
 * theirs through kring_channel_write_sample(), which uses it; the handle
 * API's kring_output_sample() stays for call chains and producer modules
 * that write into their own reservations.
 */
#ifndef _KRING_SAMPLE_H
#define _KRING_SAMPLE_H

#include <linux/types.h>

#include <kring/output.h>

struct kring_ring;

int kring_output_write_sample(struct kring_ring *rb, u64 sample_type,
			      struct kring_sample_data *d);

#endif /* _KRING_SAMPLE_H */
