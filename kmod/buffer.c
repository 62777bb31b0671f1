// SPDX-License-Identifier: GPL-2.0
/*
 * The memory behind a channel's mapping: the control page and the data
 * pages, their locked-memory charge and their vm_operations (the channel's
 * mmap, kring_channel_mmap(), checks the request and attaches the buffer;
 * the AUX area, mapped at aux_offset, is aux.c's).
 *
 *	offset 0:  [ control page ][ data page 0 ] ... [ data page 2^n - 1 ]
 *	mirrored:  [ control page ][ data 0 .. 2^n - 1 ][ data 0 .. 2^n - 1 ]
 *
 * The buffer is allocated (zeroed) by the first mmap, whose length gives
 * its size, and freed when the last mapping goes away, as perf does. Pages
 * are inserted lazily by the fault handler. The control page is writable
 * in a read-write mapping (the consumer writes data_tail there); data pages
 * never are: a write fault on one is SIGBUS. A read-only mapping means
 * backward, overwritable writing.
 *
 * The mapping is VM_PFNMAP (the pages are ours, not page cache), so the
 * core asks ->pfn_mkwrite before it makes a present page writable; that is
 * where data pages are refused. Splitting the mapping (partial munmap,
 * mprotect of a part) and mremap are refused; VM_DONTCOPY keeps it out of
 * children; VM_DONTEXPAND and VM_DONTDUMP as for every perf-like buffer.
 */
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/capability.h>
#include <linux/minmax.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/log2.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <linux/debugfs.h>
#include <linux/atomic.h>

#include "compat.h"
#include "buffer.h"
#include "user.h"

/*
 * Per-user allowance of locked pages, in KiB per online CPU: perf's
 * default, 512 KiB of data and a control page (516 on 4 KiB pages, 576 on
 * 64 KiB pages, where 516 would not hold one 8-page ring).
 */
static unsigned int mlock_kb = 512 + (PAGE_SIZE / 1024);
module_param(mlock_kb, uint, 0644);
MODULE_PARM_DESC(mlock_kb,
		 "KiB per online CPU a user may map in kring buffers before RLIMIT_MEMLOCK applies");

/*
 * Charge @pages locked pages for a new buffer the way perf_mmap() does: the
 * user's allowance first, the excess against RLIMIT_MEMLOCK through the
 * mm's pinned_vm, unless the caller has CAP_IPC_LOCK. The allowance is
 * kring's counterpart of perf's user->locked_vm, charged to the user and
 * to the owner of every user namespace above it (user.c): subordinate ids
 * in a namespace share their owner's allowance.
 */
int kring_charge_pages(struct kring_charge *c, struct mm_struct *mm, unsigned long pages)
{
	unsigned long user_limit, lock_limit, extra;
	struct kring_user *u;
	s64 pinned;

	u = kring_user_get();
	if (!u)
		return -ENOMEM;
	user_limit = (READ_ONCE(mlock_kb) >> (PAGE_SHIFT - 10)) * num_online_cpus();
	lock_limit = rlimit(RLIMIT_MEMLOCK) >> PAGE_SHIFT;

	/* mlock_kb may have been lowered since: as perf, clamp (user.c). */
	extra = pages - min(pages, kring_user_room(u, KRING_USER_LOCKED, user_limit));

	/* capable() may sleep (audit): asked outside the lock, only beyond the limit. */
	pinned = atomic64_read(&mm->pinned_vm) + extra;
	if (pinned > lock_limit && !capable(CAP_IPC_LOCK)) {
		kring_user_put(u);
		return -EPERM;
	}

	/* Charge what the allowance still holds now, the rest as pinned. */
	extra = pages - kring_user_charge(u, KRING_USER_LOCKED, pages, user_limit);
	atomic64_add(extra, &mm->pinned_vm);
	c->user = u;
	c->charged_user = pages - extra;
	c->charged_pinned = extra;
	mmgrab(mm);
	c->mm = mm;
	return 0;
}

void kring_uncharge_pages(struct kring_charge *c)
{
	if (c->user) {
		kring_user_uncharge(c->user, KRING_USER_LOCKED, c->charged_user);
		kring_user_put(c->user);
		c->user = NULL;
	}
	if (c->mm) {
		atomic64_sub(c->charged_pinned, &c->mm->pinned_vm);
		mmdrop(c->mm);
		c->mm = NULL;
	}
}

/*
 * The pages kring holds for rings (control, data and AUX pages), counted
 * where each is allocated and where each is freed, so that a page lost
 * apart from its buffer shows: /sys/kernel/debug/kring/pages reads the
 * count, and module exit warns about any left.
 */
static atomic_long_t kring_pages = ATOMIC_LONG_INIT(0);

/**
 * kring_alloc_pages() - alloc_pages() for a ring, counted
 * @gfp:	allocation flags
 * @order:	log2 of the number of pages
 *
 * Return: the first page, or NULL. Each page is freed on its own with
 * kring_free_page() (after split_page() when @order is above 0).
 */
struct page *kring_alloc_pages(gfp_t gfp, unsigned int order)
{
	struct page *page = alloc_pages(gfp, order);

	if (page)
		atomic_long_add(1L << order, &kring_pages);
	return page;
}

/* Free one page from kring_alloc_pages(). */
void kring_free_page(struct page *page)
{
	__free_page(page);
	atomic_long_dec(&kring_pages);
}

static void kring_buffer_free_pages(struct kring_buffer *buf)
{
	unsigned int i;

	if (buf->data)
		vunmap(buf->data);
	if (buf->data_pages) {
		for (i = 0; i < buf->nr_pages; i++)
			if (buf->data_pages[i])
				kring_free_page(buf->data_pages[i]);
		kvfree(buf->data_pages);
	}
	kvfree(buf->data_addrs);
	if (buf->ctl_page)
		kring_free_page(buf->ctl_page);
}

/*
 * Buffers are freed from a workqueue of kring's own, after an RCU grace
 * period: vunmap() sleeps, so not from the RCU callback itself, and module
 * exit drains the queue (kring_buffer_module_exit()) before the text goes.
 */
static struct workqueue_struct *kring_free_wq;

static void kring_buffer_free_work(struct work_struct *work)
{
	struct kring_buffer *buf = container_of(to_rcu_work(work), struct kring_buffer,
						free_work);

	kring_buffer_free_pages(buf);
	kfree(buf);
}

static int kring_pages_get(void *data, u64 *val)
{
	*val = atomic_long_read(&kring_pages);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kring_pages_fops, kring_pages_get, NULL, "%llu\n");

static struct dentry *kring_debugfs;

/* kring's debugfs directory, for the diagnostics of other files (may be an ERR_PTR). */
struct dentry *kring_debugfs_dir(void)
{
	return kring_debugfs;
}

int kring_buffer_module_init(void)
{
	kring_free_wq = alloc_workqueue("kring_free", WQ_UNBOUND, 0);
	if (!kring_free_wq)
		return -ENOMEM;
	/* Diagnostics only: without debugfs, kring works the same. */
	kring_debugfs = debugfs_create_dir("kring", NULL);
	debugfs_create_file_unsafe("pages", 0444, kring_debugfs, NULL, &kring_pages_fops);
	return 0;
}

/**
 * kring_queue_rcu_work() - run @rwork on kring's workqueue after a grace period
 * @rwork: initialised with INIT_RCU_WORK(); the work may sleep
 *
 * For what a channel must not do before the RCU readers that may still see
 * it are done, without waiting for them: module exit drains the queue
 * (kring_buffer_module_exit()) before the text goes.
 */
void kring_queue_rcu_work(struct rcu_work *rwork)
{
	queue_rcu_work(kring_free_wq, rwork);
}

/*
 * Module exit, every buffer's last reference dropped: wait for the grace
 * periods the frees wait for (their RCU callbacks queue the work), then
 * for the work itself.
 */
void kring_buffer_module_exit(void)
{
	debugfs_remove_recursive(kring_debugfs);
	rcu_barrier();
	destroy_workqueue(kring_free_wq);
	WARN(atomic_long_read(&kring_pages), "kring: %ld ring pages not freed at exit\n",
	     atomic_long_read(&kring_pages));
}

/*
 * Drop a reference; the last one frees after an RCU grace period, so a
 * producer inside rcu_read_lock() never sees the pages go.
 *
 * Context: process (every caller is an mmap path: a vma closed, a mapping
 * refused).
 */
void kring_buffer_put(struct kring_buffer *buf)
{
	if (buf && refcount_dec_and_test(&buf->refs)) {
		kring_uncharge_pages(&buf->charge);
		queue_rcu_work(kring_free_wq, &buf->free_work);
	}
}
EXPORT_SYMBOL_IF_KUNIT(kring_buffer_put);

/**
 * kring_buffer_alloc() - allocate a zeroed buffer of 2^order data pages
 * @order:	log2 of the number of data pages
 * @overwrite:	backward, overwritable writing
 * @id:		channel id written into LOST records
 *
 * Return: the buffer with one reference, or an ERR_PTR.
 */
struct kring_buffer *kring_buffer_alloc(unsigned int order, bool overwrite, u64 id)
{
	struct kring_buffer *buf;
	unsigned int i, nr = 1U << order;
	struct page **twice;
	int ret;

	if (order > KRING_MAX_DATA_ORDER)
		return ERR_PTR(-EINVAL);
	buf = kzalloc(sizeof(*buf), GFP_KERNEL_ACCOUNT);
	if (!buf)
		return ERR_PTR(-ENOMEM);
	refcount_set(&buf->refs, 1);
	INIT_RCU_WORK(&buf->free_work, kring_buffer_free_work);
	raw_spin_lock_init(&buf->write_lock);
	buf->nr_pages = nr;
	buf->overwrite = overwrite;

	buf->ctl_page = kring_alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_ZERO, 0);
	buf->data_pages = kvcalloc(nr, sizeof(*buf->data_pages), GFP_KERNEL_ACCOUNT);
	buf->data_addrs = kvcalloc(nr, sizeof(*buf->data_addrs), GFP_KERNEL_ACCOUNT);
	if (!buf->ctl_page || !buf->data_pages || !buf->data_addrs) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < nr; i++) {
		buf->data_pages[i] = kring_alloc_pages(GFP_KERNEL_ACCOUNT | __GFP_ZERO, 0);
		if (!buf->data_pages[i]) {
			ret = -ENOMEM;
			goto err_free;
		}
	}
	/*
	 * The data pages mapped twice in a row in the kernel's address space,
	 * as BPF's ring buffer does: every reservation is then one piece (the
	 * ring core writes a record with one memcpy(), a producer can write
	 * one in place, see kring_output_ptr()), wrapped or not.
	 */
	twice = kvmalloc_array(2 * nr, sizeof(*twice), GFP_KERNEL);
	if (!twice) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < 2 * nr; i++)
		twice[i] = buf->data_pages[i & (nr - 1)];
	buf->data = vmap(twice, 2 * nr, VM_MAP, PAGE_KERNEL);
	kvfree(twice);
	if (!buf->data) {
		ret = -ENOMEM;
		goto err_free;
	}
	for (i = 0; i < nr; i++)
		buf->data_addrs[i] = (char *)buf->data + ((unsigned long)i << PAGE_SHIFT);
	buf->ctl = page_address(buf->ctl_page);
	ret = kring_ring_init(&buf->ring, buf->ctl, buf->data_addrs, nr,
			      KRING_RING_MIRRORED | (overwrite ? KRING_RING_OVERWRITE : 0), id);
	if (ret)
		goto err_free;
	return buf;

err_free:
	kring_buffer_free_pages(buf);
	kfree(buf);
	return ERR_PTR(ret);
}
EXPORT_SYMBOL_IF_KUNIT(kring_buffer_alloc);

/* ---- vm_operations ---------------------------------------------------- */

/*
 * Each vma holds a reference on the buffer it maps (vm_private_data), so
 * the fault handler needs no lock: the vma cannot go away under a fault.
 * The owner (the channel) counts its vmas, data ring and AUX area, and
 * detaches the buffer when the last one goes (struct
 * kring_buffer_owner_ops, kring_channel_vma_gone()).
 */
static void kring_vm_open(struct vm_area_struct *vma)
{
	struct kring_buffer *buf = vma->vm_private_data;

	refcount_inc(&buf->refs);
	buf->owner_ops->vma_open(buf->owner);
}

static void kring_vm_close(struct vm_area_struct *vma)
{
	struct kring_buffer *buf = vma->vm_private_data;

	buf->owner_ops->vma_close(buf->owner);
	kring_buffer_put(buf);
}

static vm_fault_t kring_vm_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct kring_buffer *buf = vma->vm_private_data;
	unsigned long pgoff = vmf->pgoff;
	struct page *page;
	pgprot_t prot;

	if (pgoff == 0) {
		page = buf->ctl_page;
		/* The consumer writes data_tail and need_wakeup here. */
		prot = vm_get_page_prot(vma->vm_flags & (VM_READ | VM_WRITE | VM_SHARED));
	} else {
		/* Data pages are never writable from user space. */
		if (vmf->flags & FAULT_FLAG_WRITE)
			return VM_FAULT_SIGBUS;
		pgoff -= 1;
		if (pgoff >= (unsigned long)buf->nr_pages * (buf->mirrored ? 2 : 1))
			return VM_FAULT_SIGBUS;
		page = buf->data_pages[pgoff & (buf->nr_pages - 1)];
		prot = vm_get_page_prot(VM_READ | VM_SHARED);
	}
	return vmf_insert_pfn_prot(vma, vmf->address, page_to_pfn(page), prot);
}

/* A present read-only page is about to become writable: data pages never. */
static vm_fault_t kring_vm_pfn_mkwrite(struct vm_fault *vmf)
{
	return vmf->pgoff == 0 ? 0 : VM_FAULT_SIGBUS;
}

static int kring_vm_may_split(struct vm_area_struct *vma, unsigned long addr)
{
	return -EINVAL;
}

static int kring_vm_mremap(struct vm_area_struct *vma)
{
	return -EINVAL;
}

static const struct vm_operations_struct kring_vm_ops = {
	.open = kring_vm_open,
	.close = kring_vm_close,
	.fault = kring_vm_fault,
	.pfn_mkwrite = kring_vm_pfn_mkwrite,
	.may_split = kring_vm_may_split,
	.mremap = kring_vm_mremap,
};

/*
 * Flags of every kring mapping: our own pages (PFNMAP), not inherited, not
 * grown, not dumped, never executable, and a read-only mapping may not
 * become writable later.
 */
void kring_vma_setup(struct vm_area_struct *vma)
{
	if (!(vma->vm_flags & VM_WRITE))
		kring_vm_flags_clear(vma, VM_MAYWRITE);
	kring_vm_flags_set(vma, VM_PFNMAP | VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	kring_vm_flags_clear(vma, VM_MAYEXEC);
}

/**
 * kring_buffer_geometry() - the data pages of a data-ring mapping
 * @pages:	the mapping's length in pages (control page included)
 * @mirror:	KRING_ATTR_F_MIRROR: the data pages are mapped twice
 * @data_pages:	set to the number of data pages
 *
 * Return: 0 for 1 + 2^n pages (1 + 2 * 2^n mirrored) with n at most
 * KRING_MAX_DATA_ORDER, else -EINVAL.
 */
int kring_buffer_geometry(unsigned long pages, bool mirror, unsigned long *data_pages)
{
	unsigned long n;

	if (pages < 2)
		return -EINVAL;
	n = pages - 1;
	if (mirror) {
		if (n & 1)
			return -EINVAL;
		n /= 2;
	}
	if (!is_power_of_2(n) || ilog2(n) > KRING_MAX_DATA_ORDER)
		return -EINVAL;
	*data_pages = n;
	return 0;
}

/**
 * kring_buffer_map() - make @vma a mapping of @buf's data ring
 * @buf:	the buffer, attached to its owner
 * @vma:	checked by kring_buffer_geometry(); takes a buffer reference
 *
 * The owner counts the new vma itself (under its lock).
 */
void kring_buffer_map(struct kring_buffer *buf, struct vm_area_struct *vma)
{
	kring_vma_setup(vma);
	vma->vm_ops = &kring_vm_ops;
	refcount_inc(&buf->refs);
	vma->vm_private_data = buf;
}
