// SPDX-License-Identifier: GPL-2.0
/*
 * The capture layer: which tasks and CPUs a sched, timer or AUX tracer channel
 * records
 * (per-CPU, per-thread, "default" with inherit), and the scheduler
 * tracepoints that drive them.
 *
 * The sched tracepoints are not exported to modules on Debian's kernels:
 * they are found by name with for_each_kernel_tracepoint() when the module
 * loads, as lttng-modules does. The probes are attached when the first
 * channel of a source that needs them is configured, and stay until the
 * module goes: a loaded kring that nobody captures with costs the scheduler
 * nothing, and loading or unloading it patches no kernel text (attaching
 * the first probe to a tracepoint flips its static key, which rewrites
 * every call site while the other CPUs run them). Their probes walk the RCU list of enabled
 * channels with preemption disabled, which they do themselves: up to 6.x a
 * tracepoint calls its probes so, but newer kernels (7.x) call them
 * preemptible, under SRCU, and kring's writers need their CPU and the
 * channel list its RCU read side (sched_switch also runs with the
 * runqueue lock held and interrupts off). Nothing here sleeps or takes a
 * lock that the scheduler could take inside it.
 *
 * Followed tasks are matched by their task_struct, never by an id, as
 * perf's events stay with theirs. The channel holds a reference on the
 * task it was configured for, so no other task ever matches it; and a
 * thread other than its process's leader that execs, which takes the
 * leader's id in de_thread() (exchange_tids()), is still the task it was.
 * With inherit, the children forked while the channel is enabled are kept
 * in a small per-channel array of task pointers, claimed with cmpxchg by
 * the fork probe (on any CPU) and cleared by the exit probe, before the
 * task can be freed, so they need no reference. A child that finds no free
 * slot is counted and not followed.
 */
#include <linux/tracepoint.h>
#include <linux/rculist.h>
#include <linux/debugfs.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/file.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/fs.h>
#include <linux/cred.h>
#include <linux/capability.h>
#include <linux/binfmts.h>
#include <linux/hrtimer.h>
#include <linux/math64.h>

#include "compat.h"
#include "capture.h"
#include "source.h"
#include "sample.h"
#include "buffer.h"

static unsigned int kring_floor_tick_us = 10000;
module_param_named(floor_tick_us, kring_floor_tick_us, uint, 0444);
MODULE_PARM_DESC(floor_tick_us,
		 "period of the timestamp floor's refresh on a quiet bound channel (0: only when records are written)");

static LIST_HEAD(kring_capture_list);	/* enabled channels, RCU */
static DEFINE_MUTEX(kring_capture_mutex);	/* serialises list changes */

/* Channels the probes handed an event, for tests: debugfs kring/capture_visits. */
static DEFINE_PER_CPU(unsigned long, kring_capture_visits);

static void kring_visit(void)
{
	this_cpu_inc(kring_capture_visits);
}

/* ---- probes ------------------------------------------------------------ */

static void kring_probe_switch(void *data, bool preempt, struct task_struct *prev,
			       struct task_struct *next, unsigned int prev_state)
{
	struct kring_capture *cap;

	preempt_disable_notrace();	/* see the top of this file */
	list_for_each_entry_rcu(cap, &kring_capture_list, node)
		if (cap->ops->sched_switch) {
			kring_visit();
			cap->ops->sched_switch(cap, preempt, prev, next, prev_state);
		}
	preempt_enable_notrace();
}

static void kring_follow_add(struct kring_capture *cap, struct task_struct *child)
{
	unsigned int i;

	for (i = 1; i < KRING_FOLLOW_MAX; i++)
		if (!cmpxchg(&cap->follow[i], NULL, child))
			return;
	atomic_inc(&cap->follow_dropped);
}

/*
 * Forget @p, which exits, in @cap's follow list. Its slot holds no
 * reference: cleared here, in @p's own exit, before @p can be freed
 * (release_task(), then a grace period), it never names freed memory that
 * a new task could reuse.
 */
static void kring_follow_forget(struct kring_capture *cap, struct task_struct *p)
{
	unsigned int i;

	for (i = 1; i < KRING_FOLLOW_MAX && cap->task; i++)
		if (READ_ONCE(cap->follow[i]) == p)
			cmpxchg(&cap->follow[i], p, NULL);
}

static void kring_probe_fork(void *data, struct task_struct *parent,
			     struct task_struct *child)
{
	struct kring_capture *cap;

	preempt_disable_notrace();
	list_for_each_entry_rcu(cap, &kring_capture_list, node) {
		if (cap->inherit && kring_capture_follows(cap, parent))
			kring_follow_add(cap, child);
		if (cap->ops->fork) {
			kring_visit();
			cap->ops->fork(cap, parent, child);
		}
	}
	preempt_enable_notrace();
}

static void kring_probe_exit(void *data, struct task_struct *p)
{
	struct kring_capture *cap;

	preempt_disable_notrace();
	list_for_each_entry_rcu(cap, &kring_capture_list, node) {
		if (cap->ops->exit) {
			kring_visit();
			cap->ops->exit(cap, p);
		}
		/* Forget the children that exit, before they are freed. */
		kring_follow_forget(cap, p);
	}
	preempt_enable_notrace();
}

/* Stop following, for good: the owner may not observe a followed task. */
static void kring_capture_revoke(struct kring_capture *cap)
{
	WRITE_ONCE(cap->revoked, true);
	WRITE_ONCE(cap->ch->revoked, true);
}

/*
 * A task execs (after the new credentials and mm are in place): a channel
 * whose owner may not observe the new image stops following, even if no
 * event of the task is recorded before it runs.
 *
 * A followed thread other than its process's leader that execs has taken
 * the leader's id (de_thread(), exchange_tids(); @old_pid was its own) and
 * is followed on under it: the follow list holds tasks, not ids, and the
 * leader, killed by the exec, left it at its exit.
 */
static void kring_probe_exec(void *data, struct task_struct *p, pid_t old_pid,
			     struct linux_binprm *bprm)
{
	struct kring_capture *cap;

	preempt_disable_notrace();
	list_for_each_entry_rcu(cap, &kring_capture_list, node) {
		kring_visit();
		kring_capture_follows(cap, p);	/* revokes if need be */
	}
	preempt_enable_notrace();
}

static void kring_probe_wakeup(void *data, struct task_struct *p)
{
	struct kring_capture *cap;

	preempt_disable_notrace();
	list_for_each_entry_rcu(cap, &kring_capture_list, node)
		if (cap->ops->wakeup) {
			kring_visit();
			cap->ops->wakeup(cap, p);
		}
	preempt_enable_notrace();
}

/* ---- tracepoint lookup ------------------------------------------------- */

static bool kring_tps_ok;		/* the mandatory tracepoints exist */
static bool kring_tps_attached;		/* and carry our probes */
static DEFINE_MUTEX(kring_tps_mutex);	/* serialises attaching them */

struct kring_tp {
	const char *name;
	void *probe;
	bool optional;		/* wakeup records only */
	struct tracepoint *tp;
	bool registered;
};

static struct kring_tp kring_tps[] = {
	{ .name = "sched_switch", .probe = kring_probe_switch },
	{ .name = "sched_process_fork", .probe = kring_probe_fork },
	{ .name = "sched_process_exit", .probe = kring_probe_exit },
	{ .name = "sched_process_exec", .probe = kring_probe_exec },
	/* waking, not wakeup: it runs in the waker's context */
	{ .name = "sched_waking", .probe = kring_probe_wakeup, .optional = true },
	{ .name = "sched_wakeup_new", .probe = kring_probe_wakeup, .optional = true },
};

/**
 * kring_capture_wakeups_available() - whether wakeup records can be written
 *
 * Return: true if both wakeup tracepoints are attached.
 */
bool kring_capture_wakeups_available(void)
{
	return READ_ONCE(kring_tps_attached) && kring_tps[4].registered &&
	       kring_tps[5].registered;
}

static void kring_tp_find(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kring_tps); i++)
		if (!strcmp(tp->name, kring_tps[i].name))
			kring_tps[i].tp = tp;
}

static int kring_hp_state;
static u64 kring_hp_gen;	/* serialised by the hotplug core */

/* Set or clear KRING_CTL_F_CPU_OFFLINE (under ch->lock, like the pause flag). */
static void kring_capture_flag_offline(struct kring_capture *cap, bool offline)
{
	struct kring_channel *ch = cap->ch;
	struct kring_buffer *buf;
	u64 flags;

	lockdep_assert_held(&ch->lock);
	buf = rcu_dereference_protected(ch->buf, lockdep_is_held(&ch->lock));
	if (!buf)
		return;
	flags = READ_ONCE(buf->ctl->flags);
	if (offline)
		flags |= KRING_CTL_F_CPU_OFFLINE;
	else
		flags &= ~KRING_CTL_F_CPU_OFFLINE;
	WRITE_ONCE(buf->ctl->flags, flags);
}

/*
 * Start @cap's floor tick on the next multiple of its period on the
 * monotonic clock; hrtimer_forward_now() keeps it there. So the floor ticks
 * of every channel bound to a CPU expire together and cost that CPU one
 * interrupt per period, however many channels there are (each still runs
 * its callback).
 */
static void kring_floor_tick_start(struct kring_capture *cap)
{
	u64 period = (u64)kring_floor_tick_us * NSEC_PER_USEC;
	u64 next = (div64_u64(ktime_to_ns(ktime_get()), period) + 1) * period;

	hrtimer_start(&cap->floor_timer, ns_to_ktime(next), HRTIMER_MODE_ABS_PINNED_HARD);
}

/*
 * A bound channel's CPU goes offline or comes back: flag it in the
 * channel's own control page and let the source stop or restart what runs
 * on that CPU.
 */
static void kring_capture_hotplug(struct kring_capture *cap, unsigned int cpu, bool online)
{
	lockdep_assert_held(&cap->ch->lock);
	if (cap->cpu == cpu && online && kring_floor_tick_us && !READ_ONCE(cap->floor_stop))
		kring_floor_tick_start(cap);
	else if (cap->cpu == cpu && !online)
		hrtimer_cancel(&cap->floor_timer);
	if (cap->cpu == cpu)
		kring_capture_flag_offline(cap, !online);
	if (online && cap->ops->cpu_online)
		cap->ops->cpu_online(cap, cpu);
	else if (!online && cap->ops->cpu_offline)
		cap->ops->cpu_offline(cap, cpu);
}

/*
 * Visit every enabled channel bound to @cpu (or unbound) once. ch->lock is
 * a mutex, so the walk drops the RCU read lock for each visit, holding a
 * reference on the channel, and starts again; @hp_gen marks the visited.
 * The hotplug core holds its lock around us: nothing under ch->lock waits
 * for CPU hotplug.
 */
static int kring_cpu_event(unsigned int cpu, bool online)
{
	struct kring_channel *ch;
	struct kring_capture *cap;
	u64 gen = ++kring_hp_gen;

again:
	rcu_read_lock();
	list_for_each_entry_rcu(cap, &kring_capture_list, node) {
		if (cap->hp_gen == gen)
			continue;
		cap->hp_gen = gen;
		if (cap->cpu >= 0 && cap->cpu != cpu)
			continue;
		ch = cap->ch;
		if (!refcount_inc_not_zero(&ch->refs))
			continue;
		rcu_read_unlock();
		mutex_lock(&ch->lock);
		/* Still enabled: still listed, @cap still allocated. */
		if (ch->enabled && ch->source->capture(ch) == cap)
			kring_capture_hotplug(cap, cpu, online);
		mutex_unlock(&ch->lock);
		kring_channel_put(ch);
		goto again;
	}
	rcu_read_unlock();
	return 0;
}

static int kring_cpu_online(unsigned int cpu)
{
	return kring_cpu_event(cpu, true);
}

static int kring_cpu_offline(unsigned int cpu)
{
	return kring_cpu_event(cpu, false);
}

/**
 * kring_capture_available() - whether the sched tracepoints were found
 *
 * Return: false if the sched and timer sources cannot follow tasks on this
 * kernel (they are then refused at configure time).
 */
bool kring_capture_available(void)
{
	return kring_tps_ok;
}

static void kring_tps_unregister(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(kring_tps); i++) {
		if (!kring_tps[i].registered)
			continue;
		tracepoint_probe_unregister(kring_tps[i].tp, kring_tps[i].probe, NULL);
		kring_tps[i].registered = false;
	}
	/* No probe runs any more once this returns. */
	tracepoint_synchronize_unregister();
}

/**
 * kring_capture_attach() - attach the probes to the sched tracepoints
 *
 * The ->prepare of the sources that use the capture layer, called by the
 * configure ioctl before it takes any lock of the channel: attaching flips
 * static keys, which takes the CPU hotplug lock, and the hotplug callbacks
 * take ch->lock inside it. Once attached, the probes stay until the module
 * goes; a failed attach leaves none and is tried again by the next
 * configure.
 *
 * Context: process, may sleep; no kring lock held.
 * Return: 0 (also when this kernel lacks the tracepoints: the source's
 * configure refuses then); the error of tracepoint_probe_register()
 * (-ENOMEM).
 */
int kring_capture_attach(void)
{
	unsigned int i;
	int ret = 0;

	if (!kring_tps_ok)
		return 0;
	/* Pairs with the release store below: the flags are settled. */
	if (smp_load_acquire(&kring_tps_attached))
		return 0;
	mutex_lock(&kring_tps_mutex);
	if (kring_tps_attached)
		goto out;
	for (i = 0; i < ARRAY_SIZE(kring_tps); i++) {
		if (!kring_tps[i].tp)
			continue;	/* optional, reported at load */
		ret = tracepoint_probe_register(kring_tps[i].tp, kring_tps[i].probe, NULL);
		if (ret && kring_tps[i].optional) {
			pr_info("kring: cannot attach to %s (%d): no wakeup records\n",
				kring_tps[i].name, ret);
			ret = 0;
			continue;
		}
		if (ret) {
			pr_warn("kring: cannot attach to %s (%d)\n", kring_tps[i].name, ret);
			kring_tps_unregister();
			goto out;
		}
		kring_tps[i].registered = true;
	}
	/* Pairs with the acquire load above. */
	smp_store_release(&kring_tps_attached, true);
out:
	mutex_unlock(&kring_tps_mutex);
	return ret;
}

static int kring_capture_visits_get(void *data, u64 *val)
{
	unsigned int cpu;

	*val = 0;
	for_each_possible_cpu(cpu)
		*val += per_cpu(kring_capture_visits, cpu);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kring_capture_visits_fops, kring_capture_visits_get, NULL, "%llu\n");

int kring_capture_module_init(void)
{
	unsigned int i;
	int ret;

	/* Diagnostics for the tests: the probes' visits, summed over CPUs. */
	debugfs_create_file_unsafe("capture_visits", 0444, kring_debugfs_dir(), NULL,
				   &kring_capture_visits_fops);

	for_each_kernel_tracepoint(kring_tp_find, NULL);
	for (i = 0; i < ARRAY_SIZE(kring_tps); i++) {
		if (kring_tps[i].tp)
			continue;
		if (kring_tps[i].optional) {
			pr_info("kring: tracepoint %s not found: no wakeup records\n",
				kring_tps[i].name);
			continue;
		}
		/* Not fatal: the other sources still work. */
		pr_warn("kring: tracepoint %s not found: sched and timer sources disabled\n",
			kring_tps[i].name);
		return 0;
	}
	kring_tps_ok = true;
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "kring:online",
					kring_cpu_online, kring_cpu_offline);
	if (ret < 0)
		pr_warn("kring: no CPU hotplug notification (%d)\n", ret);
	else
		kring_hp_state = ret;
	return 0;
}

void kring_capture_module_exit(void)
{
	if (kring_hp_state > 0)
		cpuhp_remove_state_nocalls(kring_hp_state);
	kring_hp_state = 0;
	kring_tps_unregister();
	kring_tps_attached = false;
	kring_tps_ok = false;
}

/* ---- channels ---------------------------------------------------------- */

/*
 * The floor tick, on the channel's CPU in hard irq context: a buffer whose
 * CPU is idle or runs nothing the channel records still gets a floor that
 * follows the clock (see kring_floor_advance() for why this is safe while
 * other writers of the buffer may be interrupted).
 */
static enum hrtimer_restart kring_floor_tick(struct hrtimer *t)
{
	struct kring_capture *cap = container_of(t, struct kring_capture, floor_timer);

	if (READ_ONCE(cap->floor_stop) || smp_processor_id() != cap->cpu)
		return HRTIMER_NORESTART;
	kring_capture_tick(cap);
	hrtimer_forward_now(t, ns_to_ktime(kring_floor_tick_us * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void kring_floor_tick_arm(void *arg)
{
	kring_floor_tick_start(arg);
}

/**
 * kring_capture_init() - set up the capture state of a channel
 * @cap:	zeroed
 * @ch:		the channel being configured (ch->attr validated)
 * @ops:	the source's handlers
 *
 * Resolves attr.pid (0: the caller) in the caller's pid namespace and runs
 * the permission checks.
 *
 * Return: 0, -EOPNOTSUPP if this kernel lacks the tracepoints, -ESRCH for
 * no such task, -EINVAL for a CPU that is not online, or the refusal of
 * kring_perm_check().
 */
int kring_capture_init(struct kring_capture *cap, struct kring_channel *ch,
		       const struct kring_capture_ops *ops)
{
	const struct kring_attr *attr = &ch->attr;
	struct task_struct *task = NULL;
	int ret;

	if (!kring_capture_available())
		return -EOPNOTSUPP;
	if (attr->cpu >= 0 && !cpu_online(attr->cpu))
		return -EINVAL;
	if (attr->pid == -1 && attr->cpu < 0)
		return -EINVAL;		/* neither a CPU nor a task */
	if (attr->pid > 0) {
		struct pid *pid = find_get_pid(attr->pid);

		task = get_pid_task(pid, PIDTYPE_PID);
		put_pid(pid);
		if (!task)
			return -ESRCH;
	} else if (attr->pid == 0) {
		task = current;
		get_task_struct(task);
	}
	ret = kring_perm_check(ch->source, attr, task);
	if (ret)
		goto out;
	cap->ch = ch;
	cap->ops = ops;
	cap->cpu = attr->cpu;
	cap->tid = task ? task->pid : 0;
	cap->task = task;	/* keeps the reference */
	cap->follow[0] = task;
	ch->follow_task = task;
	task = NULL;
	cap->inherit = attr->flags & KRING_ATTR_F_INHERIT;
	cap->owner = get_current_cred();
	cap->pid_ns = get_pid_ns(task_active_pid_ns(current));
	cap->owner_ptrace = has_capability_noaudit(current, CAP_SYS_PTRACE);
	cap->see_all = kring_perm_see_all();
	INIT_LIST_HEAD(&cap->node);
	kring_hrtimer_setup(&cap->floor_timer, kring_floor_tick, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_PINNED_HARD);
out:
	if (task)
		put_task_struct(task);
	return ret;
}

/*
 * Start handing events to @cap. The caller holds cpus_read_lock() and then
 * ch->lock (kring_ioctl_enable()), the order of the hotplug callbacks,
 * which take ch->lock inside the hotplug lock: no CPU comes or goes until
 * the source has started, and one that does afterwards finds @cap listed.
 * A CPU the channel is bound to may have gone offline since configure:
 * the control page says so at once, and its cpu_online callback starts
 * what runs there (the floor tick below only arms on an online CPU).
 */
void kring_capture_enable(struct kring_capture *cap)
{
	lockdep_assert_held(&cap->ch->lock);
	mutex_lock(&kring_capture_mutex);
	list_add_tail_rcu(&cap->node, &kring_capture_list);
	mutex_unlock(&kring_capture_mutex);
	WRITE_ONCE(cap->floor_stop, false);
	if (cap->cpu >= 0) {
		bool online = cpu_online(cap->cpu);

		kring_capture_flag_offline(cap, !online);
		if (online && kring_floor_tick_us)
			smp_call_function_single(cap->cpu, kring_floor_tick_arm, cap, 1);
	}
}

/* Stop, and wait until no probe still uses @cap (ch->lock held). */
void kring_capture_disable(struct kring_capture *cap)
{
	unsigned int i;

	WRITE_ONCE(cap->floor_stop, true);
	mutex_lock(&kring_capture_mutex);
	list_del_rcu(&cap->node);
	mutex_unlock(&kring_capture_mutex);
	/*
	 * Probes disable preemption: an RCU read side. Hotplug
	 * callbacks act under ch->lock, which our caller holds, and see
	 * @floor_stop: none re-arms the floor tick after this.
	 */
	synchronize_rcu();
	hrtimer_cancel(&cap->floor_timer);
	/* Children are followed only while enabled. */
	for (i = 1; i < KRING_FOLLOW_MAX; i++)
		WRITE_ONCE(cap->follow[i], NULL);
}

/**
 * kring_capture_follows() - whether @cap records @t
 * @cap: the channel's capture state
 * @t: a task
 *
 * Context: any.
 * Return: true for every task when @cap follows none, else whether @t is
 * the followed task or (inherit) one of its descendants, whatever ids an
 * exec gave them, and the owner may still observe it (kring_perm_task();
 * the first task that fails revokes the channel).
 */
bool kring_capture_follows(struct kring_capture *cap, const struct task_struct *t)
{
	unsigned int i;

	if (!cap->task)
		return true;
	if (READ_ONCE(cap->revoked))
		return false;
	if (!t->pid)
		return false;	/* idle */
	if (t != cap->task) {
		if (!cap->inherit)
			return false;
		for (i = 1; i < KRING_FOLLOW_MAX; i++)
			if (READ_ONCE(cap->follow[i]) == t)
				break;
		if (i == KRING_FOLLOW_MAX)
			return false;
	}
	if (!kring_perm_task(cap->owner, cap->owner_ptrace, t)) {
		kring_capture_revoke(cap);
		return false;
	}
	return true;
}

/* Drop what the capture state holds (the channel is being released). */
void kring_capture_release(struct kring_capture *cap)
{
	if (cap->task)
		put_task_struct(cap->task);
	cap->task = NULL;
	if (cap->owner)
		put_cred(cap->owner);
	cap->owner = NULL;
	if (cap->pid_ns)
		put_pid_ns(cap->pid_ns);
	cap->pid_ns = NULL;
}

/**
 * kring_capture_emit() - write one capture sample and advance the floor
 * @cap:	the channel's capture state
 * @d:		its fields but id and time, which are filled in here; NULL
 *		writes no record and only advances the timestamp floor
 *
 * The one path every capture record takes, laid out by the channel's
 * sample_type as configure completed it (struct kring_source_ops.sample_type
 * adds what the source always writes). The buffer the channel writes
 * into (its own or its set-output target's) is locked with its write_lock,
 * so this CPU is its only writer; a record that does not fit is counted
 * lost by the ring core. RAW's size is bounded before any arithmetic, as
 * for a producer module: above KRING_SAMPLE_RAW_MAX kring_sample_size()
 * answers 0, which the begin refuses (-E2BIG, counted in lost_too_big),
 * and kring_sample_write() writes only what its reservation was checked
 * to hold. Then the buffer's timestamp floor is raised
 * (kring_floor_advance(); docs/CAPTURE.md): always on a call without a
 * record, after a record on a bound channel or with a clock synchronised
 * across CPUs (not KRING_CLOCK_LOCAL).
 *
 * Context: preemption disabled (the buffer lives until we return: RCU),
 * not NMI.
 */
void kring_capture_emit(struct kring_capture *cap, struct kring_sample_data *d)
{
	struct kring_channel *ch = cap->ch;
	struct kring_buffer *buf;
	unsigned long flags;

	buf = kring_out_lock(ch, &flags);
	if (!buf)
		return;
	if (d) {
		d->id = ch->id;
		/* -EINVAL: a source's RAW data without an address */
		WARN_ON_ONCE(kring_sample_write(&buf->ring, ch->attr.sample_type, d) == -EINVAL);
	}
	if (!d || cap->cpu >= 0 || ch->attr.clockid != KRING_CLOCK_LOCAL)
		kring_floor_advance(&buf->ring);
	kring_out_unlock(buf, flags);
}
EXPORT_SYMBOL_IF_KUNIT(kring_capture_emit);
