// SPDX-License-Identifier: GPL-2.0
/*
 * The AUX area: a second buffer of a channel for bulk data written by
 * hardware-like producers, announced by KRING_RECORD_AUX records in the
 * data ring (perf's AUX area, Documentation/userspace-api/perf_ring_buffer.rst
 * section 3; docs/AUX.md).
 *
 * The consumer stores aux_offset/aux_size in the control page and maps
 * that range of the channel's file. The pages are allocated zeroed, in the
 * largest physically contiguous chunks the allocator gives (a hardware
 * producer writes whole chunks), charged to locked memory like the data
 * ring, inserted lazily by the fault handler and never writable from user
 * space. A read-write mapping is normal mode (the producer honours
 * aux_tail), a read-only one snapshot mode (the producer overwrites).
 * The area lives until its last mapping goes; producers find it under RCU.
 *
 * Above channel.c in its layer: file.c sends it the mmap of aux_offset,
 * ioctl.c the AUX ioctls, and it calls down into the channel (its vma count,
 * kring_channel_vma_gone(); its pollers, kring_channel_wakeup()), which
 * never calls here.
 *
 * Producer protocol, perf's (section 3.2):
 *
 *	producer			consumer
 *	LOAD ->aux_tail			LOAD ->aux_head
 *	smp_mb()		(A)	smp_rmb()		(C)
 *	STORE $data			LOAD $data
 *	smp_wmb()		(B)	smp_mb()		(D)
 *	STORE ->aux_head		STORE ->aux_tail
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/log2.h>
#include <linux/gfp.h>
#include <linux/irq_work.h>

#include <linux/cpu.h>

#include "compat.h"
#include "channel.h"
#include "source.h"
#include "aux.h"

/* Largest chunk tried: 2 MiB with 4 KiB pages, below every MAX_ORDER. */
#define KRING_AUX_MAX_CHUNK_ORDER	9

/**
 * kring_aux_check_request() - validate an AUX mapping request
 * @aux_offset:	the control page's aux_offset
 * @aux_size:	the control page's aux_size
 * @pgoff:	the mapping's offset in pages
 * @len:	the mapping's length in bytes
 * @data_len:	bytes of the data-ring mapping (control page included)
 *
 * Return: 0 when the mapping is exactly [aux_offset, aux_offset + aux_size),
 * page aligned, at or past the end of the data ring, and a power-of-two
 * number of pages no larger than 2^KRING_AUX_MAX_ORDER; otherwise -EINVAL.
 */
int kring_aux_check_request(u64 aux_offset, u64 aux_size, unsigned long pgoff,
			    unsigned long len, unsigned long data_len)
{
	u64 pages = aux_size >> PAGE_SHIFT;

	if (aux_offset & ~PAGE_MASK || aux_size & ~PAGE_MASK)
		return -EINVAL;
	if (aux_offset != (u64)pgoff << PAGE_SHIFT || aux_size != len)
		return -EINVAL;
	if (aux_offset < data_len)
		return -EINVAL;
	if (!pages || !is_power_of_2(pages) || ilog2(pages) > KRING_AUX_MAX_ORDER)
		return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kring_aux_check_request);

void kring_aux_free(struct kring_aux *aux)
{
	unsigned int i;

	if (!aux)
		return;
	if (aux->pages) {
		for (i = 0; i < aux->nr_pages; i++)
			if (aux->pages[i])
				kring_free_page(aux->pages[i]);
		kvfree(aux->pages);
	}
	kvfree(aux->addrs);
	kfree(aux);
}

static void kring_aux_free_rcu(struct rcu_head *head)
{
	kring_aux_free(container_of(head, struct kring_aux, rcu));
}

/* @nr zeroed pages in chunks as large as the allocator gives cheaply. */
static struct kring_aux *kring_aux_alloc(unsigned int nr)
{
	struct kring_aux *aux;
	unsigned int i = 0, j, order;
	struct page *page;

	aux = kzalloc(sizeof(*aux), GFP_KERNEL_ACCOUNT);
	if (!aux)
		return ERR_PTR(-ENOMEM);
	aux->nr_pages = nr;
	aux->size = (u64)nr << PAGE_SHIFT;
	aux->chunk_order = KRING_AUX_MAX_CHUNK_ORDER;
	aux->pages = kvcalloc(nr, sizeof(*aux->pages), GFP_KERNEL_ACCOUNT);
	aux->addrs = kvcalloc(nr, sizeof(*aux->addrs), GFP_KERNEL_ACCOUNT);
	if (!aux->pages || !aux->addrs)
		goto nomem;
	while (i < nr) {
		order = min_t(unsigned int, ilog2(nr - i), KRING_AUX_MAX_CHUNK_ORDER);
		for (;;) {
			gfp_t gfp = GFP_KERNEL_ACCOUNT | __GFP_ZERO;

			if (order)
				gfp |= __GFP_NOWARN | __GFP_NORETRY;
			page = kring_alloc_pages(gfp, order);
			if (page || !order)
				break;
			order--;
		}
		if (!page)
			goto nomem;
		/* Every page gets its own reference: freed one by one. */
		split_page(page, order);
		for (j = 0; j < (1U << order); j++) {
			aux->pages[i + j] = page + j;
			aux->addrs[i + j] = page_address(page + j);
		}
		aux->chunk_order = min(aux->chunk_order, order);
		i += 1U << order;
	}
	return aux;

nomem:
	kring_aux_free(aux);
	return ERR_PTR(-ENOMEM);
}

/* ---- vm_operations of the AUX mapping ---------------------------------- */

/*
 * The AUX area of an AUX vma. aux->mmap_count counts the vmas mapping it;
 * it rises from 0 only in kring_aux_mmap() under ch->lock and falls to 0
 * only under ch->lock (atomic_dec_and_mutex_lock(), as perf_mmap_close()
 * does for its aux_mmap_count), where the area is detached: while a vma
 * exists, buf->aux is its area.
 */
static struct kring_aux *kring_vma_aux(struct vm_area_struct *vma)
{
	struct kring_buffer *buf = vma->vm_private_data;

	return rcu_dereference_protected(buf->aux, true);
}

static void kring_aux_vm_open(struct vm_area_struct *vma)
{
	struct kring_channel *ch = vma->vm_file->private_data;
	struct kring_buffer *buf = vma->vm_private_data;

	/* A copy of a live vma: both counts are above 0 and stay so. */
	refcount_inc(&buf->refs);
	atomic_inc(&kring_vma_aux(vma)->mmap_count);
	atomic_inc(&ch->mmap_count);
}

static void kring_aux_vm_close(struct vm_area_struct *vma)
{
	struct kring_channel *ch = vma->vm_file->private_data;
	struct kring_buffer *buf = vma->vm_private_data;
	struct kring_aux *aux = kring_vma_aux(vma);

	if (atomic_dec_and_mutex_lock(&aux->mmap_count, &ch->lock)) {
		RCU_INIT_POINTER(buf->aux, NULL);
		mutex_unlock(&ch->lock);
		kring_uncharge_pages(&aux->charge);
		/* A producer may still be between begin and end. */
		call_rcu(&aux->rcu, kring_aux_free_rcu);
	}
	kring_channel_vma_gone(ch);
	kring_buffer_put(buf);
}

static vm_fault_t kring_aux_vm_fault(struct vm_fault *vmf)
{
	struct kring_aux *aux = kring_vma_aux(vmf->vma);
	unsigned long idx = vmf->pgoff - aux->pgoff;

	/* AUX pages are the producer's: never writable from user space. */
	if (vmf->flags & FAULT_FLAG_WRITE)
		return VM_FAULT_SIGBUS;
	if (vmf->pgoff < aux->pgoff || idx >= aux->nr_pages)
		return VM_FAULT_SIGBUS;
	return vmf_insert_pfn_prot(vmf->vma, vmf->address, page_to_pfn(aux->pages[idx]),
				   vm_get_page_prot(VM_READ | VM_SHARED));
}

static vm_fault_t kring_aux_vm_pfn_mkwrite(struct vm_fault *vmf)
{
	return VM_FAULT_SIGBUS;
}

static int kring_aux_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int kring_aux_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct kring_aux_vm_ops = {
	.open = kring_aux_vm_open,
	.close = kring_aux_vm_close,
	.fault = kring_aux_vm_fault,
	.pfn_mkwrite = kring_aux_vm_pfn_mkwrite,
	.may_split = kring_aux_vm_may_split,
	.mremap = kring_aux_vm_mremap,
};

/**
 * kring_aux_mmap() - mmap of the AUX area at aux_offset
 * @file: the channel
 * @vma: exactly [aux_offset, aux_offset + aux_size) of the control page
 *
 * Return: 0; -EINVAL when the data ring is not mapped, the request does not
 * match the control page (kring_aux_check_request()), an existing AUX area
 * has another offset, size or mode, or the mapping is private or
 * executable; -EPERM beyond the locked-memory limits; -ENOMEM.
 */
int kring_aux_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kring_channel *ch = file->private_data;
	unsigned long len = vma->vm_end - vma->vm_start, data_len;
	bool overwrite = !(vma->vm_flags & VM_WRITE);
	struct kring_buffer *buf;
	struct kring_aux *aux;
	int ret;

	if (!(vma->vm_flags & VM_SHARED) || (vma->vm_flags & VM_EXEC))
		return -EINVAL;

	mutex_lock(&ch->lock);
	ret = -EINVAL;
	buf = rcu_dereference_protected(ch->buf, lockdep_is_held(&ch->lock));
	if (!buf)
		goto out;	/* the data ring is mapped first */
	data_len = (1UL + (unsigned long)buf->nr_pages * (buf->mirrored ? 2 : 1)) << PAGE_SHIFT;
	/* The control page is user-writable: validate what it says. */
	ret = kring_aux_check_request(READ_ONCE(buf->ctl->aux_offset),
				      READ_ONCE(buf->ctl->aux_size),
				      vma->vm_pgoff, len, data_len);
	if (ret)
		goto out;

	aux = rcu_dereference_protected(buf->aux, lockdep_is_held(&ch->lock));
	if (aux) {
		ret = -EINVAL;
		if (aux->pgoff != vma->vm_pgoff || aux->size != len || aux->overwrite != overwrite)
			goto out;
	} else {
		struct kring_charge charge = {};

		/* Charged before it is allocated: see kring_channel_mmap(). */
		ret = kring_charge_pages(&charge, vma->vm_mm, len >> PAGE_SHIFT);
		if (ret)
			goto out;
		aux = kring_aux_alloc(len >> PAGE_SHIFT);
		if (IS_ERR(aux)) {
			kring_uncharge_pages(&charge);
			ret = PTR_ERR(aux);
			goto out;
		}
		aux->charge = charge;
		aux->pgoff = vma->vm_pgoff;
		aux->overwrite = overwrite;
		aux->watermark = ch->attr.aux_watermark ?: aux->size / 2;
		WRITE_ONCE(buf->ctl->aux_head, 0);
		WRITE_ONCE(buf->ctl->aux_tail, 0);
		/*
		 * AUX records come from the ioctl's CPU too (a snapshot): from
		 * now on the data ring's producers take its write_lock
		 * (buffer.h). They run with preemption off, so once a grace
		 * period has passed every one that found the flag clear is
		 * done, before anyone can find the area and write its record.
		 */
		if (!buf->lock_producers) {
			WRITE_ONCE(buf->lock_producers, true);
			synchronize_rcu();
		}
		/* Initialised before producers can find it: pairs with rcu_dereference. */
		rcu_assign_pointer(buf->aux, aux);
	}

	kring_vma_setup(vma);
	vma->vm_ops = &kring_aux_vm_ops;
	refcount_inc(&buf->refs);
	vma->vm_private_data = buf;
	atomic_inc(&aux->mmap_count);
	atomic_inc(&ch->mmap_count);
	ret = 0;
out:
	mutex_unlock(&ch->lock);
	return ret;
}

/* ---- producer API (<kring/producer.h>) ------------------------------- */

/*
 * Write a KRING_RECORD_AUX into the data ring; a ring without room counts it
 * lost. The buffer's write lock: the AUX producer, an ioctl publishing a
 * snapshot and the sideband channels redirected into this buffer may run
 * on different CPUs.
 */
static void kring_aux_record(struct kring_buffer *buf, struct kring_aux *aux,
			     u64 offset, u64 size, u64 flags)
{
	struct kring_output_handle h;
	struct kring_aux_record rec;
	unsigned long irqflags;

	raw_spin_lock_irqsave(&buf->write_lock, irqflags);
	if (kring_output_begin(&h, &buf->ring, sizeof(rec), 0)) {
		raw_spin_unlock_irqrestore(&buf->write_lock, irqflags);
		return;
	}
	kring_output_header(&h, KRING_RECORD_AUX, 0);
	rec.aux_offset = offset;
	rec.aux_size = size;
	rec.flags = flags;
	rec.time = h.time;
	rec.seq = h.seq;
	kring_output_copy(&h, &rec.aux_offset, sizeof(rec) - sizeof(rec.header));
	kring_output_end(&h);
	raw_spin_unlock_irqrestore(&buf->write_lock, irqflags);
	WRITE_ONCE(aux->records, aux->records + 1);
	WRITE_ONCE(aux->bytes, aux->bytes + size);
	if (flags & KRING_AUX_FLAG_TRUNCATED)
		WRITE_ONCE(aux->nr_truncated, aux->nr_truncated + 1);
}

/**
 * kring_aux_output_begin() - start writing an extent of a channel's AUX area
 * @h:	handle, filled in: @h->head is the AUX position the extent starts
 *	at, @h->size the bytes the producer may write from there (up to
 *	aux_tail in normal mode, the whole area in snapshot mode; 0 when the
 *	consumer left no room, and the extent is then already TRUNCATED),
 *	@h->chunk_order the log2 of the pages of the smallest physically
 *	contiguous chunk of the area
 * @ch:	the channel
 *
 * One producer at a time: a nested begin is refused. Every successful
 * begin is closed by kring_aux_output_end(), even with nothing written.
 *
 * Context: preemption disabled from here to kring_aux_output_end() (an
 * RCU read-side section: the area is freed after a grace period); not NMI
 * (the AUX record is written under the buffer's write lock).
 * Return: 0; -EAGAIN while the channel is disabled, -ENODEV when it has no
 * AUX area mapped, -EBUSY when a producer is already writing.
 */
int kring_aux_output_begin(struct kring_aux_handle *h, struct kring_channel *ch)
{
	struct kring_buffer *buf;
	struct kring_aux *aux;
	u64 tail;

	if (!READ_ONCE(ch->enabled))
		return -EAGAIN;
	buf = rcu_dereference_sched(ch->buf);
	if (!buf)
		return -ENODEV;
	aux = rcu_dereference_sched(buf->aux);
	if (!aux)
		return -ENODEV;
	if (atomic_cmpxchg_acquire(&aux->nest, 0, 1))
		return -EBUSY;

	h->ch = ch;
	h->buf = buf;
	h->aux = aux;
	h->head = aux->head;
	h->flags = 0;
	h->chunk_order = aux->chunk_order;
	if (aux->overwrite) {
		h->size = aux->size;
		return 0;
	}
	tail = READ_ONCE(buf->ctl->aux_tail);
	/*
	 * (A): the consumer's reads of the bytes below aux_tail happen before
	 * we overwrite them. Pairs with the consumer's smp_mb() / store-release
	 * of aux_tail (D).
	 */
	smp_mb();
	/* A garbage aux_tail leaves no room: nothing is written. */
	h->size = kring_aux_space(h->head, tail, aux->size);
	if (!h->size)
		h->flags |= KRING_AUX_FLAG_TRUNCATED;
	return 0;
}
EXPORT_SYMBOL_GPL(kring_aux_output_begin);

/**
 * kring_aux_output_copy() - copy bytes into the extent
 * @h:		handle from kring_aux_output_begin()
 * @offset:	offset in the extent (from @h->head)
 * @src:	bytes
 * @len:	their count; @offset + @len must not exceed @h->size
 *
 * Return: 0, or -ENOSPC (nothing copied) beyond @h->size.
 */
int kring_aux_output_copy(struct kring_aux_handle *h, u64 offset, const void *src, u64 len)
{
	struct kring_aux *aux = h->aux;
	u64 pos, n;

	/* Both bounded before any arithmetic: no sum of the two can wrap. */
	if (offset > h->size || len > h->size - offset)
		return -ENOSPC;
	pos = h->head + offset;
	while (len) {
		n = kring_aux_contig(pos, len, PAGE_SIZE);
		memcpy(aux->addrs[(pos >> PAGE_SHIFT) & (aux->nr_pages - 1)] +
		       (pos & ~PAGE_MASK), src, n);
		src += n;
		pos += n;
		len -= n;
	}
	return 0;
}
EXPORT_SYMBOL_GPL(kring_aux_output_copy);

/**
 * kring_aux_output_flag() - add KRING_AUX_FLAG_* bits to the extent's record
 * @h:		handle
 * @flags:	TRUNCATED, PARTIAL or COLLISION (OVERWRITE is kring's to set)
 */
void kring_aux_output_flag(struct kring_aux_handle *h, u64 flags)
{
	h->flags |= flags & (KRING_AUX_FLAG_TRUNCATED | KRING_AUX_FLAG_PARTIAL |
			     KRING_AUX_FLAG_COLLISION);
}
EXPORT_SYMBOL_GPL(kring_aux_output_flag);

/**
 * kring_aux_output_skip() - leave @size bytes at the start of the extent unused
 * @h:		handle
 * @size:	bytes (hardware alignment, say); no record covers them
 *
 * Return: 0, or -ENOSPC when @size exceeds the room left.
 */
int kring_aux_output_skip(struct kring_aux_handle *h, u64 size)
{
	if (size > h->size)
		return -ENOSPC;
	h->head += size;
	h->size -= size;
	return 0;
}
EXPORT_SYMBOL_GPL(kring_aux_output_skip);

/**
 * kring_aux_output_end() - finish the extent begun by kring_aux_output_begin()
 * @h:		handle
 * @size:	bytes written from @h->head (clamped to @h->size)
 *
 * Normal mode: publishes aux_head after the producer's writes (barrier B)
 * and writes a KRING_RECORD_AUX {h->head, size, flags} into the data ring
 * (an empty extent only when it carries a flag, and a run of empty
 * TRUNCATED extents only once); wakes the consumer every aux_watermark
 * bytes. Snapshot mode: the data stays unpublished until
 * KRING_IOC_AUX_SNAPSHOT.
 */
void kring_aux_output_end(struct kring_aux_handle *h, u64 size)
{
	struct kring_aux *aux = h->aux;
	struct kring_buffer *buf = h->buf;

	size = min(size, h->size);
	aux->head = h->head + size;
	if (!aux->overwrite) {
		/* (B): the AUX bytes before aux_head; pairs with the consumer's (C). */
		smp_wmb();
		WRITE_ONCE(buf->ctl->aux_head, aux->head);
		if (kring_aux_announce(size, h->flags, aux->truncated)) {
			kring_aux_record(buf, aux, h->head, size, h->flags);
			aux->truncated = h->flags & KRING_AUX_FLAG_TRUNCATED;
		}
		if (aux->head - aux->wakeup_head >= aux->watermark) {
			aux->wakeup_head = aux->head;
			kring_channel_wakeup(h->ch);
		}
	}
	/* The next producer sees this one's state: pairs with begin's acquire. */
	atomic_set_release(&aux->nest, 0);
}
EXPORT_SYMBOL_GPL(kring_aux_output_end);

/**
 * kring_aux_snapshot() - publish a snapshot-mode area
 * @ch: the channel, ch->lock held, its AUX producer stopped
 *
 * Publishes aux_head (barrier B) and writes a KRING_RECORD_AUX with
 * KRING_AUX_FLAG_OVERWRITE covering the newest data: the aux_size bytes
 * before aux_head, or all since the start when it has not wrapped.
 *
 * Return: 0, -EINVAL without a snapshot-mode AUX area.
 */
int kring_aux_snapshot(struct kring_channel *ch)
{
	struct kring_buffer *buf;
	struct kring_aux *aux;
	u64 start;

	lockdep_assert_held(&ch->lock);
	buf = rcu_dereference_protected(ch->buf, lockdep_is_held(&ch->lock));
	aux = buf ? rcu_dereference_protected(buf->aux, lockdep_is_held(&ch->lock)) : NULL;
	if (!aux || !aux->overwrite)
		return -EINVAL;
	kring_aux_snapshot_window(aux->head, aux->size, &start);
	/* (B): pairs with the consumer's load-acquire of aux_head (C). */
	smp_wmb();
	WRITE_ONCE(buf->ctl->aux_head, aux->head);
	kring_aux_record(buf, aux, start, aux->head - start, KRING_AUX_FLAG_OVERWRITE);
	return 0;
}

/* The aux_* figures of struct kring_stats (ch->lock held). */
void kring_aux_read_stats(struct kring_buffer *buf, struct kring_stats *st)
{
	struct kring_aux *aux = rcu_dereference_protected(buf->aux, true);

	if (!aux)
		return;
	st->aux_bytes = READ_ONCE(aux->bytes);
	st->aux_records = READ_ONCE(aux->records);
	st->aux_truncated = READ_ONCE(aux->nr_truncated);
	st->aux_chunk_order = aux->chunk_order;
}

/* Whether @ch has a snapshot-mode (read-only) AUX area; ch->lock held. */
static bool kring_aux_mode_snapshot(struct kring_channel *ch)
{
	struct kring_buffer *buf;
	struct kring_aux *aux;

	lockdep_assert_held(&ch->lock);
	buf = rcu_dereference_protected(ch->buf, lockdep_is_held(&ch->lock));
	aux = buf ? rcu_dereference_protected(buf->aux, lockdep_is_held(&ch->lock)) : NULL;
	return aux && aux->overwrite;
}

/**
 * kring_aux_ioctl() - KRING_IOC_AUX_SNAPSHOT, _PAUSE and _RESUME
 * @ch:		the channel
 * @cmd:	the ioctl
 *
 * Dispatched to the channel's source (struct kring_source_ops: @aux_pause,
 * @aux_resume). A snapshot stops the AUX producer and publishes the area;
 * the producer stays stopped while the consumer copies the window, until
 * KRING_IOC_AUX_RESUME (as perf record disables a PT event around a
 * snapshot).
 *
 * Return: 0; -EINVAL for an unconfigured channel or, for a snapshot, one
 * without a read-only AUX mapping; -EOPNOTSUPP when the channel's AUX
 * producer is not kring's (KRING_SRC_OWNS_AUX: another module's producer
 * is controlled by that module); a snapshot's kring_aux_snapshot() error.
 */
long kring_aux_ioctl(struct kring_channel *ch, unsigned int cmd)
{
	const struct kring_source_ops *src;
	long ret = 0;

	cpus_read_lock();	/* RESUME may start the producer: as kring_ioctl_enable() */
	mutex_lock(&ch->lock);
	if (!ch->configured) {
		ret = -EINVAL;
		goto out;
	}
	src = ch->source;
	if (!kring_source_can(src, KRING_SRC_OWNS_AUX)) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	switch (cmd) {
	case KRING_IOC_AUX_PAUSE:
		src->aux_pause(ch);	/* -EINVAL: not snapshot mode, fine */
		break;
	case KRING_IOC_AUX_RESUME:
		ret = src->aux_resume(ch);
		break;
	case KRING_IOC_AUX_SNAPSHOT:
		if (!kring_aux_mode_snapshot(ch)) {
			ret = -EINVAL;
			break;
		}
		ret = src->aux_pause(ch);
		break;
	default:
		ret = -ENOTTY;
	}
out:
	mutex_unlock(&ch->lock);
	cpus_read_unlock();
	return ret;
}
