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
#include <linux/rwsem.h>
#include <linux/spinlock.h>
#include <linux/list.h>
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
 *
 * @write_lock serialises the writers that kring itself runs on more than
 * one CPU into one buffer: capture sources (sched, timer, floor ticks) of
 * the channel and of every channel redirected into it, and AUX records.
 * The ring core wants one writer CPU at a time (ring.h); this lock makes
 * it so for every buffer a set-output group or an unbound channel shares.
 * Taken with interrupts off, never in NMI, innermost of all locks but the
 * scheduler's (it nests inside the runqueue lock in sched_switch).
 */
struct kring_buffer {
	refcount_t refs;
	raw_spinlock_t write_lock;
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
	unsigned long time_refreshed;	/* jiffies of the last kring_clock_refresh_ctl() */
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
 * @out:	KRING_IOC_SET_OUTPUT target (a reference), NULL: own buffer.
 *		Changed only under kring_output_rwsem (write) while the
 *		channel is disabled and unmapped; writers read it under RCU.
 * @out_node:	in @out's @redirected list
 * @redirected:	channels whose @out is this one (RCU list, changed under
 *		kring_output_rwsem): their pollers are woken with ours
 */
struct kring_channel {
	refcount_t refs;		/* the file, kring_channel_get() users */
	struct rcu_head rcu;
	struct mutex lock;		/* see the comment above */
	u64 id;
	bool configured;
	bool enabled;
	bool paused;
	bool revoked;			/* see struct kring_cap */
	atomic64_t throttled;		/* samples dropped by throttle.c */
	struct kring_attr attr;
	struct kring_buffer __rcu *buf;
	atomic_t mmap_count;
	struct irq_work wakeup_work;
	struct irq_work free_work;	/* kring_channel_put() in NMI */
	wait_queue_head_t wait;
	atomic_t poll_pending;
	unsigned long watermark;
	unsigned int wakeup_events;
	const struct kring_source_ops *source;
	void *source_priv;
	struct kring_channel __rcu *out;
	struct list_head out_node;
	struct list_head redirected;
};

/*
 * struct kring_source_ops - a built-in event producer
 * @configure:	validate attr->config[] etc.; -errno refuses at configure time
 * @start:	begin producing into @ch (called with ch->lock held)
 * @stop:	stop and wait until no producer runs (ch->lock held)
 * @release:	free what configure allocated
 * @redirectable: KRING_IOC_SET_OUTPUT may send its records to another
 *		channel's buffer (its writers take the buffer's write_lock;
 *		its source_priv starts with a struct kring_cap)
 * @test_only:	a generator for tests and benchmarks: needs CAP_PERFMON or
 *		CAP_SYS_ADMIN unless kring.test_sources=1
 * @sample_type: KRING_SAMPLE_* bits every SAMPLE of the source carries,
 *		whatever attr.sample_type says; configure adds them to the
 *		channel's sample_type (with KRING_SAMPLE_SEQ)
 */
struct kring_source_ops {
	const char *name;
	bool redirectable;
	bool test_only;
	u64 sample_type;
	int (*configure)(struct kring_channel *ch);
	int (*start)(struct kring_channel *ch);
	void (*stop)(struct kring_channel *ch);
	void (*release)(struct kring_channel *ch);
};

/*
 * kring_output_rwsem: set-output graph changes and RESET take it for
 * writing, enable and disable for reading, always before any channel's
 * lock. So the graph (every @out and @redirected) is stable under either
 * side, and a RESET never runs while a writer of the buffer is enabled.
 */
extern struct rw_semaphore kring_output_rwsem;

/*
 * The buffer @ch's records go to: its own or its set-output target's.
 * Context: preemption disabled (an RCU read side: buffers and channels are
 * freed after a grace period).
 */
static inline struct kring_buffer *kring_channel_out_buf(struct kring_channel *ch)
{
	struct kring_channel *dst = rcu_dereference_sched(ch->out);

	return rcu_dereference_sched((dst ? dst : ch)->buf);
}

/*
 * kring_out_lock() - the buffer @ch writes into, its write_lock held
 * (interrupts off), or NULL when there is none; kring_out_unlock() ends it.
 * Context: preemption disabled, not NMI.
 */
static inline struct kring_buffer *kring_out_lock(struct kring_channel *ch,
						  unsigned long *flags)
{
	struct kring_buffer *buf = kring_channel_out_buf(ch);

	if (buf)
		raw_spin_lock_irqsave(&buf->write_lock, *flags);
	return buf;
}

static inline void kring_out_unlock(struct kring_buffer *buf, unsigned long flags)
{
	raw_spin_unlock_irqrestore(&buf->write_lock, flags);
}

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
void kring_channel_vma_gone(struct kring_channel *ch);
void kring_channels_exit(void);

/* mmap.c */
int kring_mmap(struct file *file, struct vm_area_struct *vma);
struct kring_buffer *kring_buffer_alloc(unsigned int order, bool overwrite, u64 id);
void kring_buffer_put(struct kring_buffer *buf);
int kring_charge_pages(struct kring_charge *c, struct mm_struct *mm, unsigned long pages);
void kring_uncharge_pages(struct kring_charge *c);
void kring_vma_setup(struct vm_area_struct *vma);

/* perm.c */
int kring_perm_source(const struct kring_source_ops *src);

/* throttle.c */
#define KRING_THROTTLE_WINDOW_NS	(10 * NSEC_PER_MSEC)
bool kring_throttle_enter(u64 *t0);
void kring_throttle_exit(u64 t0);

/* sources/synthetic.c */
extern const struct kring_source_ops kring_synthetic_source;

#endif /* _KRING_INTERNAL_H */
