/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared between the files of kring.ko (and its KUnit tests).
 */
#ifndef _KRING_INTERNAL_H
#define _KRING_INTERNAL_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/irq_work.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/timekeeping.h>
#include <linux/kring.h>

#include "ring.h"
#include "kring_producer.h"

struct file;
struct vm_area_struct;
struct kring_channel;
struct kring_user_lock;
struct kring_aux;

/*
 * struct kring_charge - locked memory charged for a buffer's pages, the way
 * perf charges it: first the user's allowance, the rest as the mm's
 * pinned_vm against RLIMIT_MEMLOCK.
 */
struct kring_charge {
	struct kring_user_lock *user_lock;
	struct mm_struct *mm;
	unsigned long charged_user;
	unsigned long charged_pinned;
};

/* Largest data area: 2^KRING_MAX_DATA_ORDER pages. */
#define KRING_MAX_DATA_ORDER	16

/*
 * struct kring_buffer - the memory behind one channel's mapping
 *
 * Allocated by the first mmap, detached from the channel by the last
 * munmap, freed after an RCU grace period when its last reference goes:
 * producers find it with rcu_dereference(ch->buf) inside rcu_read_lock().
 */
struct kring_buffer {
	refcount_t refs;
	struct kring_ring ring;
	struct kring_ctl_page *ctl;
	struct page *ctl_page;
	struct page **data_pages;
	void **data_addrs;
	unsigned int nr_pages;
	bool overwrite;
	bool mirrored;
	struct kring_channel *owner;	/* wakeups go to its waiters */
	/* locked-memory charge, undone when the buffer is freed */
	struct kring_charge charge;
	/* the AUX area (aux.c), NULL until mapped; producers read it under RCU */
	struct kring_aux __rcu *aux;
	struct rcu_head rcu;
};

struct kring_source_ops;

/*
 * struct kring_channel - one open /dev/kring file
 * @lock:	serialises configuration, enable state and buffer attach/detach
 * @buf:	the mapped buffer (RCU), NULL while unmapped
 * @mmap_count:	vmas mapping @buf
 * @wakeup_work: defers consumer wakeups out of producer context (NMI-safe)
 * @wait:	poll/epoll waiters
 * @poll_pending: a wakeup happened since poll last reported readiness
 */
struct kring_channel {
	refcount_t refs;		/* the file, kring_channel_get() users */
	struct rcu_head rcu;
	struct mutex lock;		/* see the comment above */
	u64 id;
	bool configured;
	bool enabled;
	bool paused;
	struct kring_attr attr;
	struct kring_buffer __rcu *buf;
	atomic_t mmap_count;
	struct irq_work wakeup_work;
	wait_queue_head_t wait;
	atomic_t poll_pending;
	unsigned long watermark;
	unsigned int wakeup_events;
	const struct kring_source_ops *source;
	void *source_priv;
};

/*
 * struct kring_source_ops - a built-in event producer
 * @configure:	validate attr->config[] etc.; -errno refuses at configure time
 * @start:	begin producing into @ch (called with ch->lock held)
 * @stop:	stop and wait until no producer runs (ch->lock held)
 * @release:	free what configure allocated
 */
struct kring_source_ops {
	const char *name;
	int (*configure)(struct kring_channel *ch);
	int (*start)(struct kring_channel *ch);
	void (*stop)(struct kring_channel *ch);
	void (*release)(struct kring_channel *ch);
};

/* The clock of record timestamps: NMI-safe monotonic nanoseconds. */
static inline u64 kring_clock_ns(void)
{
	return ktime_get_mono_fast_ns();
}

/* channel.c */
extern const struct file_operations kring_fops;
void kring_abi_info_fill(struct kring_abi_info *info);
int kring_abi_info_copy_size(__u32 user_size);
int kring_attr_validate(const struct kring_attr *attr);
void kring_channel_attach(struct kring_channel *ch, struct kring_buffer *buf);
void kring_channel_unmapped(struct kring_channel *ch);

/* mmap.c */
int kring_mmap(struct file *file, struct vm_area_struct *vma);
struct kring_buffer *kring_buffer_alloc(unsigned int order, bool overwrite, u64 id);
void kring_buffer_put(struct kring_buffer *buf);
int kring_charge_pages(struct kring_charge *c, struct mm_struct *mm, unsigned long pages);
void kring_uncharge_pages(struct kring_charge *c);
void kring_vma_setup(struct vm_area_struct *vma);

/* sources/synthetic.c */
extern const struct kring_source_ops kring_synthetic_source;

#endif /* _KRING_INTERNAL_H */
