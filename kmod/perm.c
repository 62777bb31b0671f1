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
 * caller's real uid and gid match the target's uids and gids and the
 * target is dumpable, or CAP_SYS_PTRACE. Refusals are -EACCES.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/coredump.h>

#include "capture.h"

static int kring_paranoid = 2;
module_param_named(paranoid, kring_paranoid, int, 0644);
MODULE_PARM_DESC(paranoid,
		 "like perf_event_paranoid: -1 open, 1 per-CPU capture needs CAP_PERFMON, 2 also kernel samples (default)");

static bool kring_privileged(void)
{
	return capable(CAP_PERFMON) || capable(CAP_SYS_ADMIN);
}

/* Whether the caller may observe @task (see the comment at the top). */
static bool kring_may_follow(struct task_struct *task)
{
	const struct cred *cred = current_cred(), *tcred;
	bool ok = false;
	int dumpable = 0;
	struct mm_struct *mm;

	if (same_thread_group(task, current))
		return true;
	rcu_read_lock();
	tcred = __task_cred(task);
	if (uid_eq(cred->uid, tcred->euid) && uid_eq(cred->uid, tcred->suid) &&
	    uid_eq(cred->uid, tcred->uid) && gid_eq(cred->gid, tcred->egid) &&
	    gid_eq(cred->gid, tcred->sgid) && gid_eq(cred->gid, tcred->gid))
		ok = true;
	rcu_read_unlock();
	mm = get_task_mm(task);
	if (mm) {
		dumpable = get_dumpable(mm);
		mmput(mm);
	}
	if (ok && (!mm || dumpable == SUID_DUMP_USER))
		return true;
	return capable(CAP_SYS_PTRACE);
}

/**
 * kring_perm_check() - may the caller configure this capture?
 * @attr:	the validated attr
 * @target:	the followed task, or NULL for none
 *
 * Return: 0 or -EACCES.
 */
int kring_perm_check(const struct kring_attr *attr, struct task_struct *target)
{
	int paranoid = READ_ONCE(kring_paranoid);

	if (target && !kring_may_follow(target))
		return -EACCES;
	/* The emulated tracer's CPU mode writes synthetic packets only. */
	if (!target && attr->source == KRING_SOURCE_AUX_TRACER)
		return 0;
	if (!target && paranoid >= 1 && !kring_privileged())
		return -EACCES;
	if (attr->source == KRING_SOURCE_TIMER &&
	    !(attr->flags & KRING_ATTR_F_EXCLUDE_KERNEL) &&
	    paranoid >= 2 && !kring_privileged())
		return -EACCES;
	return 0;
}
