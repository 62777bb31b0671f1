/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layer 4 of kring.ko, capture (docs/ARCHITECTURE.md): which tasks and CPUs
 * the sched, timer and AUX tracer sources record, the scheduler and CPU
 * hotplug events that drive them and the one path that writes their
 * samples (capture.c), and the throttling of hard-irq work (throttle.c).
 * Built on the channel layer (channel.h); the sources above it hand it
 * their handlers in a struct kring_capture_ops.
 */
#ifndef _KRING_CAPTURE_H
#define _KRING_CAPTURE_H

#include <linux/types.h>
#include <linux/list.h>
#include <linux/list_nulls.h>
#include <linux/spinlock.h>
#include <linux/sched.h>
#include <linux/hrtimer.h>
#include <linux/pid_namespace.h>

#include "channel.h"

/* Tasks a followed-mode channel can track: the task and its descendants. */
#define KRING_FOLLOW_MAX	64

struct kring_capture;

/*
 * One task a channel follows, in the table of followed tasks (capture.c),
 * found by the probes from the task alone.
 * @node:	in the bucket of @task, RCU; unhashed while free
 * @task:	the task, NULL for a free slot
 * @cap:	the channel's capture state
 * @gp:		free slots: the grace period after which readers that may
 *		still walk @node are gone and the slot may name another task
 *		(poll_state_synchronize_rcu())
 */
struct kring_follow {
	struct hlist_nulls_node node;
	struct task_struct *task;
	struct kring_capture *cap;
	unsigned long gp;
};

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
 * @ch:		the channel (its source reaches @cap through ops->capture())
 * @ops:	the source's event handlers
 * @cpu:	the CPU the channel is bound to, -1 for any
 * @tid:	the followed task's id (init pid namespace) at configure time,
 *		0: every task
 * @task:	the followed task (a reference), NULL for none: tasks are
 *		compared, never ids, so a recycled id never matches another
 *		task, and a thread that execs (and takes its leader's id in
 *		de_thread()) is the same task, as perf's events stay with it
 * @inherit:	follow the tasks @task forks, and theirs
 * @node:	in the list of enabled channels (kring_capture_list), RCU,
 *		walked by CPU hotplug only
 * @cpu_node:	in its CPU's list of enabled channels the probes visit on
 *		every event there (@on_cpu_list), RCU
 * @on_cpu_list: @cpu_node is used: a channel bound to a CPU that names no
 *		task, or whose owner sees every task (see kring_capture_enable())
 * @follow:	followed tasks, each in the table of followed tasks while
 *		enabled; @follow[0] is @task. The others hold no reference:
 *		the exit probe frees a task's slot before the task can be
 *		freed (kring_probe_exit())
 * @follow_lock: orders the fork probe's claims of @follow slots against
 *		kring_capture_disable() (@stopping)
 * @stopping:	set by kring_capture_disable(): no slot is claimed any more
 * @charged:	the channel counts against its user's kring.max_user_captures
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
	struct task_struct *task;
	bool inherit;
	struct list_head node;
	struct list_head cpu_node;
	bool on_cpu_list;
	struct kring_follow follow[KRING_FOLLOW_MAX];
	raw_spinlock_t follow_lock;
	bool stopping;
	bool charged;
	atomic_t follow_dropped;
	u64 hp_gen;
	struct hrtimer floor_timer;
	bool floor_stop;
	const struct cred *owner;
	struct pid_namespace *pid_ns;	/* the owner's, for the pids it reads */
	bool owner_ptrace;
	bool see_all;
	bool revoked;
};

/*
 * @t's process and thread ids as the channel's owner sees them: in the pid
 * namespace it configured the channel from, as perf reports pids in its
 * event's namespace (perf_event_pid()); 0 for a task outside it.
 * A thread's id changes under a running probe when another thread of its
 * process execs: de_thread() swaps the exec'ing thread's id and its
 * leader's (exchange_tids(), whose WRITE_ONCE() of ->pid the READ_ONCE()
 * below pairs with) while the dying leader may still be switching out on
 * another CPU. A record reads each task's ids once (kring_sched_record()
 * takes the followed task's from its side of the record), so that it
 * never names one task by two ids.
 * Context: any (the lookup is RCU).
 */
static inline void kring_capture_ids(const struct kring_capture *cap, struct task_struct *t,
				     u32 *pid, u32 *tid)
{
	if (likely(cap->pid_ns == &init_pid_ns)) {
		*pid = READ_ONCE(t->tgid);
		*tid = READ_ONCE(t->pid);
		return;
	}
	*pid = task_tgid_nr_ns(t, cap->pid_ns);
	*tid = task_pid_nr_ns(t, cap->pid_ns);
}

/* capture.c */
int kring_capture_module_init(void);
void kring_capture_module_exit(void);
int kring_capture_attach(void);
bool kring_capture_available(void);
bool kring_capture_wakeups_available(void);
int kring_capture_init(struct kring_capture *cap, struct kring_channel *ch,
		       const struct kring_capture_ops *ops);
int kring_capture_enable(struct kring_capture *cap);
void kring_capture_disable(struct kring_capture *cap);
void kring_capture_release(struct kring_capture *cap);
bool kring_capture_follows(struct kring_capture *cap, const struct task_struct *t);
bool kring_capture_follows_woken(struct kring_capture *cap, const struct task_struct *t);
void kring_capture_emit(struct kring_capture *cap, struct kring_sample_data *d);

/*
 * kring_capture_tick() - advance the timestamp floor of the buffer @cap
 * writes into, without a record (time moves on for a bound channel's CPU)
 * @cap: a channel's capture state
 *
 * Context: preemption disabled, not NMI.
 */
static inline void kring_capture_tick(struct kring_capture *cap)
{
	kring_capture_emit(cap, NULL);
}

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

/* throttle.c */
#define KRING_THROTTLE_WINDOW_NS	(10 * NSEC_PER_MSEC)
bool kring_throttle_enter(u64 *t0);
void kring_throttle_exit(u64 t0);
u64 kring_throttle_defer(struct hrtimer *t, u64 period, u64 passed);

/* One CPU's throttle state; its rule, for the KUnit suite. */
struct kring_throttle {
	u64 window;		/* index of the current window */
	u32 samples;		/* samples that ran in it */
	u64 busy_ns;		/* time they took */
};

bool kring_throttle_admit(struct kring_throttle *th, u64 now,
			  unsigned int rate, unsigned int pct);
u64 kring_throttle_skip(struct hrtimer *t, ktime_t now, u64 period, u64 passed);

#endif /* _KRING_CAPTURE_H */
