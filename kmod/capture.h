/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The capture layer (kmod/capture.c): which tasks and CPUs the sched, timer
 * and AUX tracer sources record,
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

struct kring_capture;

/* What a source does with the events the capture layer hands it. */
struct kring_capture_ops {
	/* context switch on this CPU; rq lock held, irqs off */
	void (*sched_switch)(struct kring_capture *cap, bool preempt,
			     struct task_struct *prev, struct task_struct *next,
			     unsigned int prev_state);
	/* @parent forked @child / @p exits; preemption disabled */
	void (*fork)(struct kring_capture *cap, struct task_struct *parent,
		     struct task_struct *child);
	void (*exit)(struct kring_capture *cap, struct task_struct *p);
	/* current wakes @p (sched_waking, sched_wakeup_new); any context */
	void (*wakeup)(struct kring_capture *cap, struct task_struct *p);
	/*
	 * CPU @cpu is going offline or came back online; called on that CPU
	 * (cpuhp thread) with ch->lock held, for channels bound to @cpu and
	 * unbound ones.
	 */
	void (*cpu_offline)(struct kring_capture *cap, unsigned int cpu);
	void (*cpu_online)(struct kring_capture *cap, unsigned int cpu);
};

/*
 * struct kring_capture - the capture state of one sched, timer or AUX tracer channel
 * @ch:		the channel (source_priv points here)
 * @ops:	the source's event handlers
 * @cpu:	the CPU the channel is bound to, -1 for any
 * @tid:	the followed task's id (init pid namespace), 0: every task
 * @root:	the followed task's struct pid (a reference): compared instead
 *		of @tid, so a recycled task id never matches another task
 * @inherit:	follow the tasks @tid forks, and theirs
 * @node:	in the list of enabled channels (kring_capture_list), RCU
 * @follow:	followed task ids, 0 = free slot; @follow[0] is @tid
 * @follow_dropped: children that did not fit in @follow
 * @hp_gen:	CPU hotplug pass that last visited @cap (hotplug callbacks
 *		are serialised by the hotplug core)
 * @floor_timer: bound channels: raises the timestamp floor on the channel's
 *		CPU every kring.floor_tick_us, so a quiet buffer's floor moves
 * @floor_stop:	tells @floor_timer not to restart
 * @owner:	the credentials of the task that configured the channel, for
 *		the check before every record of a followed task
 *		(kring_perm_task())
 * @owner_ptrace: the owner had CAP_SYS_PTRACE: it may follow any task
 * @see_all:	the owner may see the other tasks in its records (the other
 *		side of a switch, a waker); see kring_perm_see_all()
 * @revoked:	a followed task became one the owner may not observe (a
 *		setuid exec: kring_perm_task()): nothing is followed any
 *		more (KRING_STATS_F_REVOKED)
 */
struct kring_capture {
	struct kring_channel *ch;
	const struct kring_capture_ops *ops;
	int cpu;
	pid_t tid;
	struct pid *root;
	bool inherit;
	struct list_head node;
	pid_t follow[KRING_FOLLOW_MAX];
	atomic_t follow_dropped;
	u64 hp_gen;
	struct hrtimer floor_timer;
	bool floor_stop;
	const struct cred *owner;
	bool owner_ptrace;
	bool see_all;
	bool revoked;
};

/* capture.c */
int kring_capture_module_init(void);
void kring_capture_module_exit(void);
bool kring_capture_available(void);
bool kring_capture_wakeups_available(void);
int kring_capture_init(struct kring_capture *cap, struct kring_channel *ch,
		       const struct kring_capture_ops *ops);
void kring_capture_enable(struct kring_capture *cap);
void kring_capture_disable(struct kring_capture *cap);
void kring_capture_release(struct kring_capture *cap);
long kring_ioctl_set_output(struct kring_channel *ch, int fd);
bool kring_channel_redirected(struct kring_channel *ch);
void kring_output_release(struct kring_channel *ch);
bool kring_capture_follows(struct kring_capture *cap, const struct task_struct *t);

/* perm.c */
int kring_perm_check(const struct kring_attr *attr, struct task_struct *target);
bool kring_perm_see_all(void);
bool kring_perm_task(const struct kring_capture *cap, const struct task_struct *p);

/*
 * kring_capture_may_see() - whether @cap's records may name @t
 * @cap: a channel's capture state
 * @t: a task on the other side of an event (a switch, a wakeup)
 *
 * Context: any.
 */
static inline bool kring_capture_may_see(struct kring_capture *cap, const struct task_struct *t)
{
	return cap->see_all || kring_capture_follows(cap, t);
}

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

/* sources */
extern const struct kring_source_ops kring_sched_source;
extern const struct kring_source_ops kring_timer_source;

#endif /* _KRING_CAPTURE_H */
