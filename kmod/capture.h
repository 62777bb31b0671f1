/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Capture modes shared by the sched and timer sources (kmod/modes.c),
 * permission checks (kmod/perm.c) and record clocks (kmod/clock.c).
 */
#ifndef _KRING_CAPTURE_H
#define _KRING_CAPTURE_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/sched.h>
#include <linux/hrtimer.h>

#include "kring_internal.h"

/* Tasks a followed-mode channel can track: the task and its descendants. */
#define KRING_FOLLOW_MAX	64

struct kring_cap;

/* What a source does with the events the mode layer hands it. */
struct kring_cap_ops {
	/* context switch on this CPU; rq lock held, irqs off */
	void (*sched_switch)(struct kring_cap *cap, bool preempt,
			     struct task_struct *prev, struct task_struct *next,
			     unsigned int prev_state);
	/* @parent forked @child / @p exits; preemption disabled */
	void (*fork)(struct kring_cap *cap, struct task_struct *parent,
		     struct task_struct *child);
	void (*exit)(struct kring_cap *cap, struct task_struct *p);
	/* current wakes @p (sched_waking, sched_wakeup_new); any context */
	void (*wakeup)(struct kring_cap *cap, struct task_struct *p);
	/*
	 * CPU @cpu is going offline or came back online; called on that CPU
	 * (cpuhp thread) with ch->lock held, for channels bound to @cpu and
	 * unbound ones.
	 */
	void (*cpu_offline)(struct kring_cap *cap, unsigned int cpu);
	void (*cpu_online)(struct kring_cap *cap, unsigned int cpu);
};

/*
 * struct kring_cap - the mode of one sched or timer channel
 * @ch:		the channel (source_priv points here)
 * @ops:	the source's event handlers
 * @cpu:	the CPU the channel is bound to, -1 for any
 * @tid:	the followed task's id (init pid namespace), 0: every task
 * @root:	the followed task's struct pid (a reference): compared instead
 *		of @tid, so a recycled task id never matches another task
 * @inherit:	follow the tasks @tid forks, and theirs
 * @lock:	serialises the source's writers (the ring core wants one
 *		writing CPU at a time, and an unbound channel is written
 *		wherever the followed task runs); taken with irqs off, may
 *		nest inside the scheduler's rq lock, never the reverse
 * @node:	in the list of enabled channels (kring_cap_list), RCU
 * @follow:	followed task ids, 0 = free slot; @follow[0] is @tid
 * @follow_dropped: children that did not fit in @follow
 * @out:	KRING_IOC_SET_OUTPUT target (a reference), NULL: own buffer;
 *		changed only while the channel is disabled
 * @hp_gen:	CPU hotplug pass that last visited @cap (hotplug callbacks
 *		are serialised by the hotplug core)
 * @floor_timer: bound channels: raises the timestamp floor on the channel's
 *		CPU every kring.floor_tick_us, so a quiet buffer's floor moves
 * @floor_stop:	tells @floor_timer not to restart
 */
struct kring_cap {
	struct kring_channel *ch;
	const struct kring_cap_ops *ops;
	int cpu;
	pid_t tid;
	struct pid *root;
	bool inherit;
	raw_spinlock_t lock;
	struct list_head node;
	pid_t follow[KRING_FOLLOW_MAX];
	atomic_t follow_dropped;
	struct kring_channel *out;
	u64 hp_gen;
	struct hrtimer floor_timer;
	bool floor_stop;
};

/*
 * The buffer @cap writes into: its own or its set-output target's.
 * Context: preemption disabled (the buffer is freed after an RCU grace
 * period once detached).
 */
static inline struct kring_buffer *kring_cap_buf(struct kring_cap *cap)
{
	struct kring_channel *dst = READ_ONCE(cap->out);

	return rcu_dereference_sched((dst ? dst : cap->ch)->buf);
}

/* modes.c */
int kring_modes_init(void);
void kring_modes_exit(void);
bool kring_modes_available(void);
bool kring_modes_wakeups_available(void);
int kring_cap_init(struct kring_cap *cap, struct kring_channel *ch,
		   const struct kring_cap_ops *ops);
void kring_cap_enable(struct kring_cap *cap);
void kring_cap_disable(struct kring_cap *cap);
void kring_cap_release(struct kring_cap *cap);
long kring_ioctl_set_output(struct kring_channel *ch, int fd);
bool kring_channel_redirected(struct kring_channel *ch);
bool kring_cap_follows(const struct kring_cap *cap, const struct task_struct *t);

/* perm.c */
int kring_perm_check(const struct kring_attr *attr, struct task_struct *target);

/* clock.c */
typedef u64 (*kring_clock_t)(void);
bool kring_clock_valid(u32 clockid);
kring_clock_t kring_clock_fn(u32 clockid);
void kring_clock_setup_ctl(struct kring_ctl_page *ctl, u32 clockid);
void kring_floor_advance(struct kring_ring *rb);
int kring_tsc_mult_shift(u32 khz, u32 *mult, u16 *shift);
u64 kring_cyc_to_ns(u64 cyc, u32 mult, u16 shift, u64 zero);
u64 kring_time_zero(u64 now, u64 cyc, u32 mult, u16 shift);

/* sources */
extern const struct kring_source_ops kring_sched_source;
extern const struct kring_source_ops kring_timer_source;

#endif /* _KRING_CAPTURE_H */
