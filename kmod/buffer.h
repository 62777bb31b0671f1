/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layer 2 of kring.ko, buffer and mapping (docs/ARCHITECTURE.md): the memory
 * behind a channel's mapping (buffer.c) and the record clocks and control
 * page time fields (clock.c). Built on the ring core (ring.h); knows the
 * channel above it only as an opaque owner it calls back through
 * struct kring_buffer_owner_ops.
 */
#ifndef _KRING_BUFFER_H
#define _KRING_BUFFER_H

#include <linux/types.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/spinlock.h>
#include <linux/timekeeping.h>
#include <linux/workqueue.h>
#include <linux/kring.h>

#include "ring.h"

struct dentry;
struct mm_struct;
struct vm_area_struct;
struct kring_channel;
struct kring_user;
struct kring_aux;

/*
 * struct kring_charge - locked memory charged for a buffer's pages, the way
 * perf charges it: first the user's allowance (user.h: to the user and to
 * every user namespace owner above it), the rest as the mm's pinned_vm
 * against RLIMIT_MEMLOCK.
 */
struct kring_charge {
	struct kring_user *user;
	struct mm_struct *mm;
	unsigned long charged_user;
	unsigned long charged_pinned;
};

/* Largest data area: 2^KRING_MAX_DATA_ORDER pages. */
#define KRING_MAX_DATA_ORDER	16

/**
 * struct kring_buffer_owner_ops - what the mapping layer calls in the owner
 *	of a buffer (the channel it is attached to)
 * @vma_open:	a vma mapping the buffer (data ring or AUX area) was copied
 * @vma_close:	such a vma was closed; the owner's last one detaches the
 *		buffer (the vma's own buffer reference is dropped afterwards)
 */
struct kring_buffer_owner_ops {
	void (*vma_open)(struct kring_channel *owner);
	void (*vma_close)(struct kring_channel *owner);
};

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
 * Taken with interrupts off, innermost of all locks but the scheduler's
 * (it nests inside the runqueue lock in sched_switch); in NMI only by a
 * producer, with a trylock (channel.c).
 *
 * @lock_producers: kring writes this buffer from more than one CPU (its
 * channel has a capture source and no CPU, so the channels redirected
 * into it have none either, or it has an AUX area, whose records an ioctl
 * writes too): the producer API takes @write_lock as kring's own writers
 * do (channel.c, kring_producer_lock()). Set before the buffer is
 * published, or (AUX) before the AUX area is, after a grace period that
 * ends every producer which found it clear; never cleared.
 * @producer_irqflags: the interrupt flags saved by the producer holding
 * @write_lock from kring_channel_output_begin() to its end (under it).
 */
struct kring_buffer {
	refcount_t refs;
	raw_spinlock_t write_lock;
	bool lock_producers;
	unsigned long producer_irqflags;
	struct kring_ring ring;
	struct kring_ctl_page *ctl;
	struct page *ctl_page;
	void *data;			/* the data area, mapped twice in a row (vmap()) */
	struct page **data_pages;	/* its pages, for the mappings */
	void **data_addrs;		/* their kernel addresses, for the ring */
	unsigned int nr_pages;
	bool overwrite;
	bool mirrored;
	struct kring_channel *owner;	/* wakeups go to its waiters */
	const struct kring_buffer_owner_ops *owner_ops;	/* set with @owner */
	/* locked-memory charge, undone when the buffer is freed */
	struct kring_charge charge;
	/* the AUX area (aux.c), NULL until mapped; producers read it under RCU */
	struct kring_aux __rcu *aux;
	unsigned long time_refreshed;	/* jiffies of the last kring_clock_refresh_ctl() */
	struct rcu_work free_work;	/* the free, after a grace period (buffer.c) */
};

/* buffer.c */
int kring_buffer_module_init(void);
struct dentry *kring_debugfs_dir(void);
void kring_buffer_module_exit(void);
void kring_queue_rcu_work(struct rcu_work *rwork);
struct page *kring_alloc_pages(gfp_t gfp, unsigned int order);
void kring_free_page(struct page *page);
struct kring_buffer *kring_buffer_alloc(unsigned int order, bool overwrite, u64 id);
void kring_buffer_put(struct kring_buffer *buf);
int kring_buffer_geometry(unsigned long pages, bool mirror, unsigned long *data_pages);
void kring_buffer_map(struct kring_buffer *buf, struct vm_area_struct *vma);
int kring_charge_pages(struct kring_charge *c, struct mm_struct *mm, unsigned long pages);
void kring_uncharge_pages(struct kring_charge *c);
void kring_vma_setup(struct vm_area_struct *vma);

/* clock.c */
typedef u64 (*kring_clock_t)(void);
bool kring_clock_valid(u32 clockid);
kring_clock_t kring_clock_fn(u32 clockid);
void kring_clock_setup_ctl(struct kring_ctl_page *ctl, u32 clockid);
void kring_clock_refresh_ctl(struct kring_ctl_page *ctl, u32 clockid);
void kring_floor_advance(struct kring_ring *rb);
int kring_tsc_mult_shift(u32 khz, u32 *mult, u16 *shift);
u64 kring_cyc_to_ns(u64 cyc, u32 mult, u16 shift, u64 zero);
u64 kring_time_zero(u64 now, u64 cyc, u32 mult, u16 shift);

#endif /* _KRING_BUFFER_H */
