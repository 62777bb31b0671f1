// SPDX-License-Identifier: GPL-2.0
/*
 * Who may capture what, modelled on perf_event_open() and its
 * perf_event_paranoid sysctl (kring's module parameter "paranoid"):
 *
 *   -1  no restriction beyond the task check below
 *  >=1  per-CPU capture (every task on a CPU, hence system-wide) needs
 *       CAP_PERFMON or CAP_SYS_ADMIN
 *  >=2  kernel-mode timer samples need them too (default; use
 *       KRING_ATTR_F_EXCLUDE_KERNEL without them)
 *
 * Following another task always needs the access ptrace's "read" mode
 * would grant (perf uses ptrace_may_access(PTRACE_MODE_READ_REALCREDS),
 * which is not exported to modules): the same thread group, or the
 * caller's real uid and gid match the target's uids and gids, the target
 * holds no capability the caller lacks (kring_caps_covered()) and is
 * dumpable, or CAP_SYS_PTRACE. LSMs are not consulted (their ptrace hook
 * is not exported either). Refusals are -EACCES.
 *
 * A capability is asked with an audit record only where its absence
 * refuses the request; what decides only what a record shows is asked
 * without one, so an audit log holds the refusals and nothing else.
 *
 * The generators built for tests and benchmarks (synthetic, the emulated
 * AUX tracer) spend CPU time outside the caller's accounting: they need
 * CAP_PERFMON or CAP_SYS_ADMIN unless kring.test_sources=1.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/user_namespace.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "compat.h"
#include "channel.h"
#include "source.h"

static int kring_paranoid = 2;
module_param_named(paranoid, kring_paranoid, int, 0644);
MODULE_PARM_DESC(paranoid,
		 "like perf_event_paranoid: -1 open, 1 per-CPU capture needs CAP_PERFMON, 2 also kernel samples (default)");

static bool kring_test_sources;
module_param_named(test_sources, kring_test_sources, bool, 0644);
MODULE_PARM_DESC(test_sources,
		 "let every user configure the test generators (synthetic, aux-tracer); default: CAP_PERFMON only");

/*
 * CAP_PERFMON or CAP_SYS_ADMIN in the initial user namespace, as
 * perfmon_capable() asks, but without an audit record: the question that
 * decides only what a record shows (kring_perm_see_all()) refuses nothing,
 * and an LSM that confines the caller would log a denial for every
 * configure.
 */
static bool kring_perfmon_noaudit(void)
{
	return ns_capable_noaudit(&init_user_ns, CAP_PERFMON) ||
	       ns_capable_noaudit(&init_user_ns, CAP_SYS_ADMIN);
}

/*
 * The same question where a no refuses the request: audited only then,
 * once, as a denial of CAP_PERFMON, the capability an administrator
 * grants for it.
 */
static bool kring_privileged(void)
{
	return kring_perfmon_noaudit() || capable(CAP_PERFMON);
}

/**
 * kring_perm_source() - may the caller configure a channel of @src?
 * @src: the source, NULL for KRING_SOURCE_NONE
 *
 * Return: 0 or -EACCES (a test generator without privilege).
 */
int kring_perm_source(const struct kring_source_ops *src)
{
	if (kring_source_can(src, KRING_SRC_TEST_ONLY) && !READ_ONCE(kring_test_sources) &&
	    !kring_privileged())
		return -EACCES;
	return 0;
}

/*
 * Whether @tcred holds no capability @cred lacks: in the same user
 * namespace, its permitted set is a subset of @cred's; in another, @cred
 * owns (by its euid) a namespace between them, and so holds every
 * capability there. This is the kernel's cred_cap_issubset() (the rule
 * under which commit_creds() keeps a task dumpable), and what ptrace's
 * cap_ptrace_access_check() grants: a same-user service started with
 * ambient capabilities is not readable by that user's other processes, a
 * sandbox the user made with its own user namespace is.
 */
static bool kring_caps_covered(const struct cred *cred, const struct cred *tcred)
{
	const struct user_namespace *ns = tcred->user_ns;

	if (cred->user_ns == ns)
		return cap_issubset(tcred->cap_permitted, cred->cap_permitted);
	for (; ns != &init_user_ns; ns = ns->parent)
		if (ns->parent == cred->user_ns && uid_eq(ns->owner, cred->euid))
			return true;
	return false;
}

/*
 * Whether @cred's real ids match every uid and gid of @task's credentials,
 * and @task holds no capability @cred lacks (kring_caps_covered()).
 */
static bool kring_same_ids(const struct cred *cred, const struct task_struct *task)
{
	const struct cred *tcred;
	bool ok;

	rcu_read_lock();
	tcred = __task_cred(task);
	ok = uid_eq(cred->uid, tcred->euid) && uid_eq(cred->uid, tcred->suid) &&
	     uid_eq(cred->uid, tcred->uid) && gid_eq(cred->gid, tcred->egid) &&
	     gid_eq(cred->gid, tcred->sgid) && gid_eq(cred->gid, tcred->gid) &&
	     kring_caps_covered(cred, tcred);
	rcu_read_unlock();
	return ok;
}

/*
 * Whether @task's memory may be read by another user with its ids: it has
 * no mm (a task past its exit_mm(), or a kernel thread) or its mm is
 * dumpable. Read under task_lock(), which keeps task->mm, as
 * ptrace_may_access() reads it: no reference is taken, so none is dropped
 * either (the last mmput() tears the mm down, taking its mmap_lock and
 * closing its vmas, which the caller's ch->lock may not nest around:
 * docs/ARCHITECTURE.md).
 */
static bool kring_task_readable(struct task_struct *task)
{
	bool ok;

	task_lock(task);
	ok = kring_task_dumpable(task, task->mm);
	task_unlock(task);
	return ok;
}

/*
 * Whether the caller may observe @task (see the comment at the top).
 * Context: process; the channel's ch->lock may be held.
 */
static bool kring_may_follow(struct task_struct *task)
{
	if (same_thread_group(task, current))
		return true;
	if (kring_same_ids(current_cred(), task) && kring_task_readable(task))
		return true;
	return capable(CAP_SYS_PTRACE);
}

/**
 * kring_perm_see_all() - may the caller's records name tasks it does not follow?
 *
 * A followed-mode channel records its tasks' switches and wakeups; the
 * task on the other side (the one switched to or from, the waker) belongs
 * to someone else. perf shows other tasks only in CPU-wide switch
 * records, which need privilege; kring shows them to CAP_PERFMON or
 * CAP_SYS_ADMIN (or with paranoid = -1); to anyone else that side and
 * every field telling of it is blank (kmod/sources/sched.c). Asked without
 * an audit record: a no refuses nothing.
 *
 * Return: true when the caller may see every task.
 */
bool kring_perm_see_all(void)
{
	return READ_ONCE(kring_paranoid) < 0 || kring_perfmon_noaudit();
}

/**
 * kring_perm_task() - may a channel's owner still observe @p, one of its tasks?
 * @owner: the credentials of the task that configured the channel
 * @owner_ptrace: the owner had CAP_SYS_PTRACE then
 * @p: a task the channel follows, about to be recorded
 * @mm_stable: @p's mm cannot go under us: @p is current, or cannot run
 *	(the next task of a context switch, a child not yet woken); false for
 *	the task a sched_waking probe wakes, which may be running elsewhere
 *
 * The rule of configure time, with the owner's credentials kept from then:
 * its real ids match every id of @p, @p holds no capability the owner
 * lacked and is dumpable, or the owner had
 * CAP_SYS_PTRACE. A task that execs a setuid or setgid image fails both
 * the moment the exec commits its new credentials (commit_creds() makes
 * the mm non-dumpable), as perf stops a task's events there
 * (perf_event_exit_task() in begin_new_exec()); so does a task that makes
 * itself non-dumpable, as it would for ptrace.
 *
 * Dumpability is the mm's (up to 6.x): @p->mm is read without a reference,
 * which is safe only while @p cannot drop it. A task drops its mm itself,
 * in exit_mm() or exec_mmap() (task->mm = NULL or the new mm, then mmput();
 * the mm_struct is not freed after a grace period), and a task being woken
 * may still be running on another CPU between setting its state and
 * calling schedule() (try_to_wake_up() traces sched_waking before it looks
 * at p->on_rq or p->on_cpu): without @mm_stable, only the ids are checked.
 * The credentials are safe to read from any task (__task_cred() under RCU;
 * creds are freed after a grace period). Dumpability is then the one
 * checked at @p's own events: its switch out, which revokes a channel
 * whose task became non-dumpable before it slept, and its switch in, before
 * it runs again.
 *
 * Context: any (RCU read side).
 * Return: true when the channel may go on following @p.
 */
bool kring_perm_task(const struct cred *owner, bool owner_ptrace,
		     const struct task_struct *p, bool mm_stable)
{
	if (owner_ptrace)
		return true;
	if (mm_stable && !kring_task_dumpable(p, READ_ONCE(p->mm)))
		return false;
	return kring_same_ids(owner, p);
}

/**
 * kring_perm_check() - may the caller configure this capture?
 * @src:	the channel's source
 * @attr:	the validated attr
 * @target:	the followed task, or NULL for none
 *
 * Return: 0 or -EACCES.
 */
int kring_perm_check(const struct kring_source_ops *src, const struct kring_attr *attr,
		     struct task_struct *target)
{
	int paranoid = READ_ONCE(kring_paranoid);

	if (target && !kring_may_follow(target))
		return -EACCES;
	/* A CPU-wide channel that names no task (the emulated tracer's). */
	if (!target && kring_source_can(src, KRING_SRC_CPU_WIDE_OPEN))
		return 0;
	if (!target && paranoid >= 1 && !kring_privileged())
		return -EACCES;
	if (kring_source_can(src, KRING_SRC_KERNEL_SAMPLES) &&
	    !(attr->flags & KRING_ATTR_F_EXCLUDE_KERNEL) &&
	    paranoid >= 2 && !kring_privileged())
		return -EACCES;
	return 0;
}

/*
 * Reading a sysctl of the initial namespaces (kring_perm_sysctl()): the
 * file is opened by a kernel worker, whose root is the initial mount
 * namespace's, so that no caller can put a file of its own in its place
 * (a user namespace of its own lets it mount over its /proc).
 */
struct kring_sysctl_read {
	struct work_struct work;
	const char *path;
	int val;
	int ret;
};

static void kring_sysctl_work(struct work_struct *work)
{
	struct kring_sysctl_read *r = container_of(work, struct kring_sysctl_read, work);
	char buf[24];
	struct file *f;
	loff_t pos = 0;
	ssize_t n;

	f = filp_open(r->path, O_RDONLY, 0);
	if (IS_ERR(f)) {
		r->ret = PTR_ERR(f);
		return;
	}
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0) {
		r->ret = n < 0 ? n : -EIO;
		return;
	}
	buf[n] = '\0';
	r->ret = kstrtoint(strim(buf), 10, &r->val);
}

/**
 * kring_perm_sysctl() - an integer sysctl of the kernel, as it reads now
 * @path: under /proc/sys, e.g. "/proc/sys/kernel/perf_event_paranoid"
 * @val: its value
 *
 * perf's sysctls (sysctl_perf_event_paranoid and the others) are not
 * exported to modules: their files are the honest way to read them.
 * Context: process, may sleep; no lock the system workqueue may need.
 * Return: 0, or the -errno of opening, reading or parsing the file.
 */
int kring_perm_sysctl(const char *path, int *val)
{
	struct kring_sysctl_read r = { .path = path, .ret = -EIO };

	INIT_WORK_ONSTACK(&r.work, kring_sysctl_work);
	queue_work(system_unbound_wq, &r.work);
	flush_work(&r.work);
	destroy_work_on_stack(&r.work);
	if (!r.ret)
		*val = r.val;
	return r.ret;
}

/*
 * kernel.perf_event_paranoid, or 3 (Debian's strictest level: only
 * CAP_SYS_ADMIN opens anything) when it cannot be read: failing closed.
 */
static int kring_perf_paranoid(void)
{
	int val;

	if (kring_perm_sysctl("/proc/sys/kernel/perf_event_paranoid", &val))
		return 3;
	return val;
}

/**
 * kring_perm_event() - may the caller open this perf event, as perf_event_open() would?
 * @attr:	the validated attr of an event channel (KRING_SOURCE_EVENT)
 * @target:	the followed task, NULL for a CPU-wide channel (pid -1)
 * @raw_tp:	RAW data of a tracepoint is asked for (PERF_SAMPLE_RAW)
 * @raw_trial:	with @target: opens the same tracepoint with RAW for the
 *		caller's own task and closes it again, 0 when the kernel lets
 *		it (the event is TRACE_EVENT_FL_CAP_ANY: the syscall events,
 *		uprobes), which only the kernel's own check knows
 * @arg:	for @raw_trial
 *
 * A counter made with perf_event_create_kernel_counter() skips every check
 * of perf_event_open(): they are made here, for the caller, in the order
 * sys_perf_event_open() makes them, with its errno, at
 * kernel.perf_event_paranoid or kring.paranoid, whichever is stricter
 * ("privileged" is CAP_PERFMON or CAP_SYS_ADMIN, perfmon_capable()):
 *
 *   > 2   nothing without CAP_SYS_ADMIN (Debian's perf_paranoid_any()): -EACCES
 *   > 1   kernel-mode samples (no exclude_kernel) need privilege: -EACCES
 *   > -1  a tracepoint's RAW data needs privilege (perf_trace_event_perm()),
 *	  but for a task and an event @raw_trial finds exempt: -EPERM
 *   any   another task needs privilege or ptrace read access
 *	  (perf_check_permission(); kring_may_follow()): -EACCES
 *   > 0   a CPU-wide counter needs privilege (perf_allow_cpu()): -EACCES
 *
 * The exemption is the kernel's, at kernel.perf_event_paranoid: where
 * kring.paranoid alone refuses RAW data (the sysctl at -1, which lets
 * every trial pass), no event is exempt. LSMs' perf_event_open hooks are
 * not consulted (not exported).
 * Context: process, may sleep (reads the sysctl); no lock held that
 * perf_event_create_kernel_counter() may not nest in.
 * Return: 0, -EACCES or -EPERM.
 */
int kring_perm_event(const struct kring_attr *attr, struct task_struct *target, bool raw_tp,
		     int (*raw_trial)(void *arg), void *arg)
{
	int sys = kring_perf_paranoid();
	int paranoid = max(sys, READ_ONCE(kring_paranoid));

	if (paranoid > 2 && !capable(CAP_SYS_ADMIN))
		return -EACCES;
	if (!(attr->flags & KRING_ATTR_F_EXCLUDE_KERNEL) && paranoid > 1 && !kring_privileged())
		return -EACCES;
	if (raw_tp && paranoid > -1 && !kring_perfmon_noaudit() &&
	    !(target && sys > -1 && raw_trial && !raw_trial(arg)) && !kring_privileged())
		return -EPERM;
	if (target && !kring_perfmon_noaudit() && !kring_may_follow(target))
		return -EACCES;
	if (!target && paranoid > 0 && !kring_privileged())
		return -EACCES;
	return 0;
}
