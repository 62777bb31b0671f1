/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kring AUX area: the second buffer of a channel, written by hardware-like
 * producers through kring_aux_output_begin()/_end() (<kring/producer.h>),
 * and its ioctls. Part of the channel layer (docs/ARCHITECTURE.md): aux.c
 * maps the area of a channel's buffer and dispatches the AUX ioctls to the
 * channel's source (struct kring_source_ops).
 */
#ifndef _KRING_AUX_H
#define _KRING_AUX_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/rcupdate.h>

#include "channel.h"

struct page;

/*
 * struct kring_aux - the AUX pages of one buffer and their producer state
 * @pages:	@nr_pages pages, each with its own reference (split chunks)
 * @addrs:	their kernel addresses
 * @nr_pages:	a power of two
 * @size:	@nr_pages * PAGE_SIZE
 * @pgoff:	aux_offset in pages: where the AUX area sits in the mapping
 * @chunk_order: log2 of the pages of the smallest physically contiguous
 *		chunk the pages were allocated in
 * @overwrite:	snapshot mode (read-only mapping)
 * @mmap_count:	vmas mapping the area; the last munmap frees it
 * @nest:	1 while a producer holds a handle (nested begin is refused)
 * @head:	producer's free-running write position
 * @wakeup_head: @head at the last consumer wakeup
 * @watermark:	wake the consumer every this many AUX bytes
 * @truncated:	the last record carried TRUNCATED and nothing was written
 *		since: a further empty truncated extent adds no record
 * @bytes, @records, @nr_truncated: kring_stats.aux_bytes, .aux_records,
 *		.aux_truncated
 * @charge:	locked-memory charge of the pages
 * @rcu:	freed after a grace period: producers find it under RCU
 */
struct kring_aux {
	struct page **pages;
	void **addrs;
	unsigned int nr_pages;
	u64 size;
	unsigned long pgoff;
	unsigned int chunk_order;
	bool overwrite;
	atomic_t mmap_count;
	atomic_t nest;
	u64 head;
	u64 wakeup_head;
	u64 watermark;
	bool truncated;
	u64 bytes;
	u64 records;
	u64 nr_truncated;
	struct kring_charge charge;
	struct rcu_head rcu;
};

/*
 * Pure position arithmetic (KUnit tests these at every offset).
 */

/* Bytes the producer may write at @head when the consumer is at @tail in an
 * area of @size bytes; 0 when @tail is not within @size bytes behind @head
 * (a garbage aux_tail stops the producer, it never writes outside).
 */
static inline u64 kring_aux_space(u64 head, u64 tail, u64 size)
{
	u64 used = head - tail;

	return used > size ? 0 : size - used;
}

/* Bytes from AUX position @pos to the end of its page (or of @len). */
static inline u64 kring_aux_contig(u64 pos, u64 len, unsigned long page_size)
{
	u64 in_page = page_size - (pos & (page_size - 1));

	return len < in_page ? len : in_page;
}

/*
 * The snapshot of an area of @size bytes whose producer has written up to
 * free-running position @head: [*start, @head). Returns true when older
 * data was overwritten (the area wrapped).
 */
static inline bool kring_aux_snapshot_window(u64 head, u64 size, u64 *start)
{
	*start = head >= size ? head - size : 0;
	return head > size;
}

/*
 * Whether a normal-mode extent of @size bytes ending with KRING_AUX_FLAG_*
 * @flags gets an AUX record, when the previous record was TRUNCATED
 * (@was_truncated): every extent with data does; an empty one only to carry
 * a flag, and a producer that keeps finding no room reports it once, not
 * at every attempt.
 */
static inline bool kring_aux_announce(u64 size, u64 flags, bool was_truncated)
{
	bool again = was_truncated && (flags & KRING_AUX_FLAG_TRUNCATED);

	return size || (flags && !again);
}

/*
 * Check a mapping request against the control page's aux_offset/aux_size:
 * @pgoff/@len the vma's, @data_len the bytes of the data-ring mapping.
 * Returns 0 or -EINVAL.
 */
int kring_aux_check_request(u64 aux_offset, u64 aux_size, unsigned long pgoff,
			    unsigned long len, unsigned long data_len);

int kring_aux_mmap(struct file *file, struct vm_area_struct *vma);
void kring_aux_free(struct kring_aux *aux);
void kring_aux_read_stats(struct kring_buffer *buf, struct kring_stats *st);
int kring_aux_snapshot(struct kring_channel *ch);
long kring_aux_ioctl(struct kring_channel *ch, unsigned int cmd);

#endif /* _KRING_AUX_H */
