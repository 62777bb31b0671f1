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
 * every call site while the other CPUs run them). Their probes look only
 * at the channels an event concerns: those bound to the CPU it runs on (a
 * per-CPU list) and those following one of its tasks (a hash table keyed
 * by the task_struct), never at another user's channels. They do so with
 * preemption disabled, which they do themselves: up to 6.x a tracepoint
 * calls its probes so, but newer kernels (7.x) call them preemptible,
 * under SRCU, and kring's writers need their CPU and the lists and table
 * their RCU read side (sched_switch also runs with the runqueue lock held
 * and interrupts off). Nothing here sleeps or takes a lock that the
 * scheduler could take inside it: the table's bucket locks are raw
 * spinlocks taken by the fork and exit probes and by enable and disable,
 * never under the runqueue lock.
 *
 * Followed tasks are matched by their task_struct, never by an id, as
 * perf's events stay with theirs. The channel holds a reference on the
 * task it was configured for, so no other task ever matches it; and a
 * thread other than its process's leader that execs, which takes the
 * leader's id in de_thread() (exchange_tids()), is still the task it was.
 * With inherit, the children forked while the channel is enabled are kept
 * in a small per-channel array of slots (struct kring_follow), each in the
 * table under its task while it names one: claimed by the fork probe (on
 * any CPU) under the channel's follow_lock and freed by the exit probe,
 * before the task can be freed, so they need no reference. A freed slot
 * is claimed again only after a grace period, so no walker of its old
 * bucket is led into another. A child that finds no free slot is counted
 * and not followed.
 */
#include <linux/tracepoint.h>
#include <linux/rculist.h>
#include <linux/rculist_nulls.h>
#include <linux/hash.h>
#include <linux/random.h>
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
#include "user.h"
#include "buffer.h"

static unsigned int kring_floor_tick_us = 10000;
module_param_named(floor_tick_us, kring_floor_tick_us, uint, 0444);
MODULE_PARM_DESC(floor_tick_us,
		 "period of the timestamp floor's refresh on a quiet bound channel (0: only when records are written)");

static LIST_HEAD(kring_capture_list);	/* enabled channels, RCU: hotplug */
static DEFINE_MUTEX(kring_capture_mutex);	/* serialises list changes */

/*
 * What the probes look at. An event concerns the channels bound to the CPU
 * it runs on (a per-CPU list) and those following one of its tasks (the
 * table of followed tasks, keyed by the task_struct): the probes visit
 * those and no other, so another user's channels cost an event nothing
 * (but a comparison when one of its tasks shares a bucket). Both are RCU:
 * the probes read them with preemption disabled, the writers are
 * kring_capture_enable() and _disable() (under kring_capture_mutex for the
 * lists) and the fork and exit probes (the table, under its bucket locks).
 */
static DEFINE_PER_CPU(struct list_head, kring_cpu_caps);

#define KRING_FOLLOW_HASH_BITS	12
#define KRING_FOLLOW_LOCK_BITS	6
static struct hlist_nulls_head kring_follow_table[1 << KRING_FOLLOW_HASH_BITS];
/* Bucket b is changed under kring_follow_locks[b % (1 << LOCK_BITS)]. */
static raw_spinlock_t kring_follow_locks[1 << KRING_FOLLOW_LOCK_BITS];
static unsigned long kring_follow_seed __read_mostly;

/* Channels the probes handed an event, for tests: debugfs kring/capture_visits. */
static DEFINE_PER_CPU(unsigned long, kring_capture_visits);

static unsigned int kring_follow_hash(const struct task_struct *t)
{
	return hash_long((unsigned long)t ^ kring_follow_seed, KRING_FOLLOW_HASH_BITS);
}

static raw_spinlock_t *kring_follow_lock(unsigned int b)
{
	return &kring_follow_locks[b & ((1 << KRING_FOLLOW_LOCK_BITS) - 1)];
}

/*
 * The slots in bucket @b (the walker skips those of other tasks). A slot
 * is removed and inserted into another bucket only after a grace period
 * (struct kring_follow's @gp), so a walker never strays into another
 * bucket: it ends on @b's nulls marker, and sees every slot that was
 * there when it started and is still there when it ends. Readers:
 * preemption disabled (an RCU read side).
 */
#define kring_for_each_follow(f, pos, b) \
	hlist_nulls_for_each_entry_rcu(f, pos, &kring_follow_table[b], node)

/* This CPU's list of enabled channels bound to it (preemption disabled). */
static struct list_head *kring_cpu_list(void)
{
	return this_cpu_ptr(&kring_cpu_caps);
}

static void kring_visit(void)
{
	this_cpu_inc(kring_capture_visits);
}

/* Whether @t is one of @cap's followed tasks (no permission check). */
static bool kring_capture_has(const struct kring_capture *cap, const struct task_struct *t)
{
	unsigned int i;

	if (t == cap->task)
		return true;
	if (!cap->inherit)
		return false;
	for (i = 1; i < KRING_FOLLOW_MAX; i++)
		if (READ_ONCE(cap->follow[i].task) == t)
			return true;
	return false;
}

/* Insert @f, which names a task, into its bucket. */
static void kring_follow_insert(struct kring_follow *f)
{
	unsigned int b = kring_follow_hash(f->task);
	raw_spinlock_t *lock = kring_follow_lock(b);

	raw_spin_lock(lock);
	hlist_nulls_add_head_rcu(&f->node, &kring_follow_table[b]);
	raw_spin_unlock(lock);
}

/*
 * Take @f, naming @t, out of the table (if it is still in: the exit probe
 * and kring_capture_disable() may both try). Readers may still walk it:
 * hlist_nulls_del_init_rcu() keeps its next pointer.
 */
static void kring_follow_remove(struct kring_follow *f, const struct task_struct *t)
{
	unsigned int b = kring_follow_hash(t);
	raw_spinlock_t *lock = kring_follow_lock(b);

	raw_spin_lock(lock);
	hlist_nulls_del_init_rcu(&f->node);
	raw_spin_unlock(lock);
}

/* ---- probes ------------------------------------------------------------ */

static void kring_call_switch(struct kring_capture *cap, bool preempt, struct task_struct *prev,
			      struct task_struct *next, unsigned int prev_state)
{
	if (!cap->ops->sched_switch)
		return;
	kring_visit();
	cap->ops->sched_switch(cap, preempt, prev, next, prev_state);
}

static void kring_probe_switch(void *data, bool preempt, struct task_struct *prev,
			       struct task_struct *next, unsigned int prev_state)
{
	struct kring_capture *cap;
	struct hlist_nulls_node *pos;
	struct kring_follow *f;
	unsigned int b;

	preempt_disable_notrace();	/* see the top of this file */
	list_for_each_entry_rcu(cap, kring_cpu_list(), cpu_node)
		kring_call_switch(cap, preempt, prev, next, prev_state);
	/* Each channel once: the ones on the CPU's list were visited above. */
	b = kring_follow_hash(prev);
	kring_for_each_follow(f, pos, b) {
		if (READ_ONCE(f->task) != prev)
			continue;
		cap = f->cap;
		if (!cap->on_cpu_list)
			kring_call_switch(cap, preempt, prev, next, prev_state);
	}
	b = kring_follow_hash(next);
	kring_for_each_follow(f, pos, b) {
		if (READ_ONCE(f->task) != next)
			continue;
		cap = f->cap;
		if (!cap->on_cpu_list && !kring_capture_has(cap, prev))
			kring_call_switch(cap, preempt, prev, next, prev_state);
	}
	preempt_enable_notrace();
}

/*
 * @parent, which @cap follows with inherit, forked @child: follow it too,
 * in a free slot whose grace period has passed. Under @cap's follow_lock:
 * kring_capture_disable() sets @stopping under it and then empties the
 * table of @cap's slots, so none is inserted after that.
 */
static void kring_follow_add(struct kring_capture *cap, struct task_struct *child)
{
	struct kring_follow *f;
	unsigned int i;

	raw_spin_lock(&cap->follow_lock);
	if (cap->stopping)
		goto out;
	for (i = 1; i < KRING_FOLLOW_MAX; i++) {
		f = &cap->follow[i];
		/* Pairs with the release store of kring_follow_forget(): @gp is its own. */
		if (smp_load_acquire(&f->task) || !poll_state_synchronize_rcu(f->gp))
			continue;
		WRITE_ONCE(f->task, child);
		kring_follow_insert(f);
		goto out;
	}
	atomic_inc(&cap->follow_dropped);
out:
	raw_spin_unlock(&cap->follow_lock);
}

/*
 * Forget @p, which exits, in the table: its slots of children hold no
 * reference and are freed here, in @p's own exit, before @p can be freed
 * (release_task(), then a grace period), so they never name freed memory
 * that a new task could reuse. A freed slot names no task at once but is
 * claimed again only after a grace period (@gp): readers that still walk
 * it end in its bucket. A followed task's own slot (@follow[0]) holds a
 * reference and stays until the channel is disabled.
 * Context: the exit probe, interrupts enabled, as
 * start_poll_synchronize_rcu() asks.
 */
static void kring_follow_forget(struct task_struct *p)
{
	unsigned int b = kring_follow_hash(p);
	raw_spinlock_t *lock = kring_follow_lock(b);
	struct hlist_nulls_node *pos;
	struct kring_follow *f;

	raw_spin_lock(lock);
	hlist_nulls_for_each_entry_safe(f, pos, &kring_follow_table[b], node) {
		if (f->task != p || f == &f->cap->follow[0])
			continue;
		hlist_nulls_del_init_rcu(&f->node);
		f->gp = start_poll_synchronize_rcu();
		/* Pairs with the acquire load of kring_follow_add(). */
		smp_store_release(&f->task, NULL);
	}
	raw_spin_unlock(lock);
}

static void kring_probe_fork(void *data, struct task_struct *parent,
			     struct task_struct *child)
{
	struct kring_capture *cap;
	struct hlist_nulls_node *pos;
	struct kring_follow *f;
	unsigned int b = kring_follow_hash(parent);

	preempt_disable_notrace();
	kring_for_each_follow(f, pos, b) {
		if (READ_ONCE(f->task) != parent)
			continue;
		cap = f->cap;
		if (cap->inherit && kring_capture_follows(cap, parent))
			kring_follow_add(cap, child);
		if (cap->ops->fork && !cap->on_cpu_list) {
			kring_visit();
			cap->ops->fork(cap, parent, child);
		}
	}
	list_for_each_entry_rcu(cap, kring_cpu_list(), cpu_node) {
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
	struct hlist_nulls_node *pos;
	struct kring_follow *f;
	unsigned int b = kring_follow_hash(p);
	bool child = false;

	preempt_disable_notrace();
	list_for_each_entry_rcu(cap, kring_cpu_list(), cpu_node) {
		if (cap->ops->exit) {
			kring_visit();
			cap->ops->exit(cap, p);
		}
	}
	kring_for_each_follow(f, pos, b) {
		if (READ_ONCE(f->task) != p)
			continue;
		cap = f->cap;
		child |= f != &cap->follow[0];
		if (cap->ops->exit && !cap->on_cpu_list) {
			kring_visit();
			cap->ops->exit(cap, p);
		}
	}
	/* Forget the children that exit, before they are freed. */
	if (child)
		kring_follow_forget(p);
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
 * is followed on under it: the table holds tasks, not ids, and the
 * leader, killed by the exec, left it at its exit.
 */
static void kring_probe_exec(void *data, struct task_struct *p, pid_t old_pid,
			     struct linux_binprm *bprm)
{
	struct hlist_nulls_node *pos;
	struct kring_follow *f;
	unsigned int b = kring_follow_hash(p);

	preempt_disable_notrace();
	kring_for_each_follow(f, pos, b) {
		if (READ_ONCE(f->task) != p)
			continue;
		kring_visit();
		kring_capture_follows(f->cap, p);	/* revokes if need be */
	}
	preempt_enable_notrace();
}

static void kring_probe_wakeup(void *data, struct task_struct *p)
{
	struct kring_capture *cap;
	struct hlist_nulls_node *pos;
	struct kring_follow *f;
	unsigned int b = kring_follow_hash(p);

	preempt_disable_notrace();
	list_for_each_entry_rcu(cap, kring_cpu_list(), cpu_node) {
		if (cap->ops->wakeup) {
			kring_visit();
			cap->ops->wakeup(cap, p);
		}
	}
	kring_for_each_follow(f, pos, b) {
		if (READ_ONCE(f->task) != p)
			continue;
		cap = f->cap;
		if (cap->ops->wakeup && !cap->on_cpu_list) {
			kring_visit();
			cap->ops->wakeup(cap, p);
		}
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
	u64 sum = 0;

	for_each_possible_cpu(cpu)
		sum += per_cpu(kring_capture_visits, cpu);
	*val = sum;
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(kring_capture_visits_fops, kring_capture_visits_get, NULL, "%llu\n");

int kring_capture_module_init(void)
{
	unsigned int i;
	int ret;

	for_each_possible_cpu(i)
		INIT_LIST_HEAD(per_cpu_ptr(&kring_cpu_caps, i));
	for (i = 0; i < ARRAY_SIZE(kring_follow_table); i++)
		INIT_HLIST_NULLS_HEAD(&kring_follow_table[i], i);
	for (i = 0; i < ARRAY_SIZE(kring_follow_locks); i++)
		raw_spin_lock_init(&kring_follow_locks[i]);
	kring_follow_seed = get_random_long();
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
	unsigned int i;
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
	cap->follow[0].task = task;
	ch->follow_task = task;
	task = NULL;
	cap->inherit = attr->flags & KRING_ATTR_F_INHERIT;
	cap->owner = get_current_cred();
	cap->pid_ns = get_pid_ns(task_active_pid_ns(current));
	cap->owner_ptrace = has_capability_noaudit(current, CAP_SYS_PTRACE);
	cap->see_all = kring_perm_see_all();
	INIT_LIST_HEAD(&cap->node);
	INIT_LIST_HEAD(&cap->cpu_node);
	raw_spin_lock_init(&cap->follow_lock);
	for (i = 0; i < KRING_FOLLOW_MAX; i++)
		cap->follow[i].cap = cap;
	kring_hrtimer_setup(&cap->floor_timer, kring_floor_tick, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_PINNED_HARD);
out:
	if (task)
		put_task_struct(task);
	return ret;
}

/* Whether the probes hand @cap any event (else it gets CPU hotplug only). */
static bool kring_capture_hooked(const struct kring_capture *cap)
{
	const struct kring_capture_ops *ops = cap->ops;

	return ops->sched_switch || ops->fork || ops->exit || ops->wakeup;
}

/*
 * Start handing events to @cap. The caller holds cpus_read_lock() and then
 * ch->lock (kring_ioctl_enable()), the order of the hotplug callbacks,
 * which take ch->lock inside the hotplug lock: no CPU comes or goes until
 * the source has started, and one that does afterwards finds @cap listed.
 * A CPU the channel is bound to may have gone offline since configure:
 * the control page says so at once, and its cpu_online callback starts
 * what runs there (the floor tick below only arms on an online CPU).
 *
 * A channel the probes visit goes on its CPU's list when it is bound to
 * one and names no task, or its owner sees every task (its switch records
 * then time every switch of the CPU: kring_sched_switch()); and, when it
 * follows a task, in the table of followed tasks. It counts against its
 * user's kring.max_user_captures.
 *
 * Return: 0, or -ENOSPC beyond kring.max_user_captures.
 */
int kring_capture_enable(struct kring_capture *cap)
{
	struct kring_channel *ch = cap->ch;
	unsigned int i;
	int ret;

	lockdep_assert_held(&ch->lock);
	cap->charged = false;
	if (kring_capture_hooked(cap) && ch->user) {
		ret = kring_user_capture_add(ch->user);
		if (ret)
			return ret;
		cap->charged = true;
	}
	/* kring_capture_disable() waited for the readers of the last use. */
	for (i = 0; i < KRING_FOLLOW_MAX; i++) {
		cap->follow[i].gp = get_completed_synchronize_rcu();
		if (i)
			WRITE_ONCE(cap->follow[i].task, NULL);
	}
	cap->stopping = false;
	cap->on_cpu_list = kring_capture_hooked(cap) && cap->cpu >= 0 &&
			   (!cap->task || cap->see_all);
	mutex_lock(&kring_capture_mutex);
	list_add_tail_rcu(&cap->node, &kring_capture_list);
	if (cap->on_cpu_list)
		list_add_tail_rcu(&cap->cpu_node, per_cpu_ptr(&kring_cpu_caps, cap->cpu));
	if (cap->task && kring_capture_hooked(cap))
		kring_follow_insert(&cap->follow[0]);
	mutex_unlock(&kring_capture_mutex);
	WRITE_ONCE(cap->floor_stop, false);
	if (cap->cpu >= 0) {
		bool online = cpu_online(cap->cpu);

		kring_capture_flag_offline(cap, !online);
		if (online && kring_floor_tick_us)
			smp_call_function_single(cap->cpu, kring_floor_tick_arm, cap, 1);
	}
	return 0;
}

/*
 * Stop, and wait until no probe still uses @cap (ch->lock held). The fork
 * probe claims no slot once @stopping is set under @follow_lock; then every
 * slot leaves the table, and after the grace period no probe walks them
 * any more.
 */
void kring_capture_disable(struct kring_capture *cap)
{
	struct kring_follow *f;
	struct task_struct *t;
	unsigned int i;

	WRITE_ONCE(cap->floor_stop, true);
	raw_spin_lock(&cap->follow_lock);
	cap->stopping = true;
	raw_spin_unlock(&cap->follow_lock);
	mutex_lock(&kring_capture_mutex);
	list_del_rcu(&cap->node);
	if (cap->on_cpu_list)
		list_del_rcu(&cap->cpu_node);
	for (i = 0; i < KRING_FOLLOW_MAX; i++) {
		f = &cap->follow[i];
		/*
		 * Pairs with the release store of kring_follow_forget(): a
		 * slot freed by an exit is out of the table.
		 */
		t = smp_load_acquire(&f->task);
		if (t)
			kring_follow_remove(f, t);
		/* Children are followed only while enabled. */
		if (i)
			WRITE_ONCE(f->task, NULL);
	}
	mutex_unlock(&kring_capture_mutex);
	/*
	 * Probes disable preemption: an RCU read side. Hotplug
	 * callbacks act under ch->lock, which our caller holds, and see
	 * @floor_stop: none re-arms the floor tick after this.
	 */
	synchronize_rcu();
	hrtimer_cancel(&cap->floor_timer);
	if (cap->charged)
		kring_user_capture_del(cap->ch->user);
	cap->charged = false;
}

static bool kring_capture_check(struct kring_capture *cap, const struct task_struct *t,
				bool mm_stable)
{
	if (!cap->task)
		return true;
	if (READ_ONCE(cap->revoked))
		return false;
	if (!t->pid)
		return false;	/* idle */
	if (!kring_capture_has(cap, t))
		return false;
	if (!kring_perm_task(cap->owner, cap->owner_ptrace, t, mm_stable)) {
		kring_capture_revoke(cap);
		return false;
	}
	return true;
}

/**
 * kring_capture_follows() - whether @cap records @t
 * @cap: the channel's capture state
 * @t: a task whose mm cannot change under us: current, or one that cannot
 *	run (the next task of a context switch, a child not yet woken)
 *
 * Context: any.
 * Return: true for every task when @cap follows none, else whether @t is
 * the followed task or (inherit) one of its descendants, whatever ids an
 * exec gave them, and the owner may still observe it (kring_perm_task();
 * the first task that fails revokes the channel).
 */
bool kring_capture_follows(struct kring_capture *cap, const struct task_struct *t)
{
	return kring_capture_check(cap, t, true);
}

/**
 * kring_capture_follows_woken() - kring_capture_follows() for the task a
 * sched_waking probe wakes, which may still run on another CPU and drop
 * its mm there: its ids are checked, not its dumpability (kring_perm_task())
 * @cap: the channel's capture state
 * @t: the task being woken
 *
 * Context: any.
 * Return: as kring_capture_follows().
 */
bool kring_capture_follows_woken(struct kring_capture *cap, const struct task_struct *t)
{
	return kring_capture_check(cap, t, t == current);
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
 * and kring_output_write_sample() writes only what its reservation was checked
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
		WARN_ON_ONCE(kring_output_write_sample(&buf->ring, ch->attr.sample_type,
						       d) == -EINVAL);
	}
	if (!d || cap->cpu >= 0 || ch->attr.clockid != KRING_CLOCK_LOCAL)
		kring_floor_advance(&buf->ring);
	kring_out_unlock(buf, flags);
}
EXPORT_SYMBOL_IF_KUNIT(kring_capture_emit);
