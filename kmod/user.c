// SPDX-License-Identifier: GPL-2.0
/*
 * Per-user accounting: the channels each user holds open and the pages of
 * kring buffers it has mapped, charged at every level of its user
 * namespace chain (user.h).
 *
 * A user is a kuid in a user namespace. Its entry holds a reference on the
 * entry of the level above, the namespace's owner (the euid of the task
 * that made it) in the parent namespace, and so on up to the initial user
 * namespace. A charge raises the count of every entry of the chain, and
 * only if each stays within the limit: a user with a range of subordinate
 * ids maps them into a namespace it owns, but every channel opened and
 * every page mapped under those ids is charged to it too, in the parent
 * namespace, so all of them together stay within its own limit. This is
 * what the kernel's ucounts do for inotify instances and user namespaces
 * (inc_ucount()); they are not open to modules (neither inc_ucount() nor
 * alloc_ucounts() is exported, and their types are a fixed enum), hence
 * these entries of kring's own.
 *
 * Entries live in one hash table under one spinlock, a leaf lock
 * (docs/ARCHITECTURE.md): nothing is allocated, no capability is asked and
 * nothing sleeps under it. An entry goes when its last reference does: a
 * channel or a charge of pages holds one on its user's entry, an entry one
 * on the entry above it and on its user namespace.
 *
 * Context: process, for every function here.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/hashtable.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uidgid.h>
#include <linux/user_namespace.h>

#include "user.h"

/*
 * struct kring_user - one user's counts in one user namespace
 * @node:	in kring_users, under kring_users_lock
 * @ns:		the user namespace (a reference)
 * @uid:	the user
 * @up:		@ns's owner in @ns's parent (a reference), NULL in the
 *		initial user namespace
 * @refs:	channels and charges of this user, entries whose @up this is
 * @count:	what this user and every user of the namespaces it owns
 *		(and theirs, and so on) hold, by enum kring_user_res
 */
struct kring_user {
	struct hlist_node node;
	struct user_namespace *ns;
	kuid_t uid;
	struct kring_user *up;
	unsigned int refs;
	unsigned long count[KRING_USER_NR_RES];
};

static DEFINE_HASHTABLE(kring_users, 6);
static DEFINE_SPINLOCK(kring_users_lock);

static unsigned long kring_user_key(struct user_namespace *ns, kuid_t uid)
{
	return (unsigned long)ns ^ __kuid_val(uid);
}

static struct kring_user *kring_user_find(struct user_namespace *ns, kuid_t uid)
{
	struct kring_user *u;

	lockdep_assert_held(&kring_users_lock);
	hash_for_each_possible(kring_users, u, node, kring_user_key(ns, uid))
		if (u->ns == ns && uid_eq(u->uid, uid))
			return u;
	return NULL;
}

/**
 * kring_user_get() - the calling task's user entry, with a reference
 *
 * The user is the task's real uid in its user namespace, as perf's
 * per-user locked memory is the real uid's (current_user()). Creates the
 * entries of the chain that do not exist yet.
 *
 * Return: the entry, or NULL when no memory could be had.
 */
struct kring_user *kring_user_get(void)
{
	struct user_namespace *ns = current_user_ns();
	kuid_t uid = current_uid();
	struct kring_user *first = NULL, *u, **link = &first;
	struct hlist_node *tmp;
	HLIST_HEAD(spare);
	int i;

	spin_lock(&kring_users_lock);
	u = kring_user_find(ns, uid);
	if (u)
		u->refs++;
	spin_unlock(&kring_users_lock);
	if (u)
		return u;

	/*
	 * At most one new entry per level: the namespace's own and one for
	 * each ancestor (its level counts them; the chain cannot change, the
	 * task's credentials hold the namespace and it holds its parents).
	 */
	for (i = 0; i <= ns->level; i++) {
		u = kzalloc(sizeof(*u), GFP_KERNEL_ACCOUNT);
		if (!u)
			goto out;
		hlist_add_head(&u->node, &spare);
	}

	spin_lock(&kring_users_lock);
	for (;;) {
		u = kring_user_find(ns, uid);
		if (u) {
			/* This level exists, and with it every one above. */
			u->refs++;
			*link = u;
			break;
		}
		u = hlist_entry(spare.first, struct kring_user, node);
		hlist_del(&u->node);
		u->ns = get_user_ns(ns);
		u->uid = uid;
		u->refs = 1;	/* the caller's, or the entry below's */
		hash_add(kring_users, &u->node, kring_user_key(ns, uid));
		*link = u;
		link = &u->up;
		if (ns == &init_user_ns)
			break;
		uid = ns->owner;
		ns = ns->parent;
	}
	spin_unlock(&kring_users_lock);
out:
	hlist_for_each_entry_safe(u, tmp, &spare, node)
		kfree(u);
	return first;
}

/**
 * kring_user_put() - drop a reference taken by kring_user_get()
 * @u:	the entry, may be NULL
 *
 * The last reference frees the entry, and drops its reference on the one
 * above. A charge must be undone before its reference goes.
 */
void kring_user_put(struct kring_user *u)
{
	struct hlist_node *tmp;
	HLIST_HEAD(dead);
	int i;

	spin_lock(&kring_users_lock);
	while (u && !--u->refs) {
		hash_del(&u->node);
		hlist_add_head(&u->node, &dead);
		u = u->up;
	}
	spin_unlock(&kring_users_lock);

	hlist_for_each_entry_safe(u, tmp, &dead, node) {
		for (i = 0; i < KRING_USER_NR_RES; i++)
			WARN_ONCE(u->count[i], "kring: user %u freed holding %lu of resource %d\n",
				  __kuid_val(u->uid), u->count[i], i);
		put_user_ns(u->ns);
		kfree(u);
	}
}

/*
 * What every level of @u's chain can still take of @res below @max. A
 * count above @max (the limit lowered since) leaves nothing, as perf
 * clamps its user->locked_vm to the limit.
 */
static unsigned long kring_user_room_locked(struct kring_user *u, enum kring_user_res res,
					    unsigned long max)
{
	unsigned long room = max;

	lockdep_assert_held(&kring_users_lock);
	for (; u; u = u->up)
		room = min(room, max - min(u->count[res], max));
	return room;
}

/**
 * kring_user_room() - how much of @res @u could be charged now
 * @u:		the user's entry
 * @res:	what
 * @max:	the limit of every level (ULONG_MAX: none)
 *
 * Return: the least room left below @max at any level of @u's chain. Only
 * an estimate for the caller's decision: another charge may take it first.
 */
unsigned long kring_user_room(struct kring_user *u, enum kring_user_res res, unsigned long max)
{
	unsigned long room;

	spin_lock(&kring_users_lock);
	room = kring_user_room_locked(u, res, max);
	spin_unlock(&kring_users_lock);
	return room;
}

/**
 * kring_user_charge() - charge up to @n of @res to every level of @u's chain
 * @u:		the user's entry
 * @res:	what
 * @n:		how much is wanted
 * @max:	the limit of every level (ULONG_MAX: none)
 *
 * Charges as much of @n as every level holds below @max, all levels alike,
 * in one step: no level ever passes @max, and no level's count ever wraps
 * (what is charged is at most @max less a count).
 *
 * Return: what was charged, 0 to @n; kring_user_uncharge() undoes it.
 */
unsigned long kring_user_charge(struct kring_user *u, enum kring_user_res res,
				unsigned long n, unsigned long max)
{
	struct kring_user *p;

	spin_lock(&kring_users_lock);
	n = min(n, kring_user_room_locked(u, res, max));
	for (p = u; p; p = p->up)
		p->count[res] += n;
	spin_unlock(&kring_users_lock);
	return n;
}

/**
 * kring_user_uncharge() - undo a charge of @n of @res to @u's chain
 * @u:		the user's entry the charge was made to
 * @res:	what
 * @n:		what kring_user_charge() returned
 */
void kring_user_uncharge(struct kring_user *u, enum kring_user_res res, unsigned long n)
{
	struct kring_user *p;

	spin_lock(&kring_users_lock);
	for (p = u; p; p = p->up) {
		WARN_ON_ONCE(p->count[res] < n);
		p->count[res] -= min(n, p->count[res]);
	}
	spin_unlock(&kring_users_lock);
}

/*
 * kring.max_user_channels bounds the channels one user holds open, as
 * fs.inotify.max_user_instances bounds inotify instances. Each channel may
 * cost every CPU work the user does not pay for: a channel bound to a CPU
 * ticks there in hard irq context (its floor tick, its timer), and an
 * enabled capture channel is visited by the scheduler events that concern
 * it (capture.c; kring.max_user_captures bounds those). The limit makes
 * that work a constant per user. A user with CAP_PERFMON (or
 * CAP_SYS_ADMIN) is not bound, as with perf's limits.
 */
static unsigned int kring_max_user_channels = 1024;
module_param_named(max_user_channels, kring_max_user_channels, uint, 0644);
MODULE_PARM_DESC(max_user_channels,
		 "channels one user without CAP_PERFMON may hold open (0: no limit)");

/**
 * kring_user_channel_add() - count one more open channel for the caller
 *
 * Charged to the caller's user and to the owner of every user namespace
 * above it: ids mapped into a namespace share their owner's limit.
 *
 * Return: the user charged, for kring_user_channel_del(); ERR_PTR(-EMFILE)
 * beyond kring.max_user_channels, ERR_PTR(-ENOMEM).
 */
struct kring_user *kring_user_channel_add(void)
{
	unsigned int max = READ_ONCE(kring_max_user_channels);
	struct kring_user *u;

	u = kring_user_get();
	if (!u)
		return ERR_PTR(-ENOMEM);
	/*
	 * At the limit only, ask for the capability, so that an ordinary
	 * open is not audited as a denial; and outside the lock (capable()
	 * may sleep).
	 */
	if (!kring_user_charge(u, KRING_USER_CHANNELS, 1, max ?: ULONG_MAX)) {
		if (!perfmon_capable()) {
			kring_user_put(u);
			return ERR_PTR(-EMFILE);
		}
		kring_user_charge(u, KRING_USER_CHANNELS, 1, ULONG_MAX);
	}
	return u;
}

/* A channel's file is released: one channel less for its opener @u. */
void kring_user_channel_del(struct kring_user *u)
{
	kring_user_uncharge(u, KRING_USER_CHANNELS, 1);
	kring_user_put(u);
}

/*
 * kring.max_user_captures bounds the capture channels one user has enabled
 * whose source hooks the scheduler (sched, and the timer and AUX tracer
 * sources following tasks), as fs.inotify.max_user_watches bounds watches.
 * The probes find a channel from the tasks of an event and the CPU it runs
 * on (capture.c), so another user's channels cost an event nothing; the
 * limit bounds what one user's channels cost the events of its own tasks,
 * of a CPU its channels are bound to, and the neighbours of its tasks in
 * the table of followed tasks. CAP_PERFMON (or CAP_SYS_ADMIN) is not
 * bound.
 */
static unsigned int kring_max_user_captures = 128;
module_param_named(max_user_captures, kring_max_user_captures, uint, 0644);
MODULE_PARM_DESC(max_user_captures,
		 "capture channels hooking the scheduler one user without CAP_PERFMON may have enabled (0: no limit)");

/**
 * kring_user_capture_add() - count one more enabled capture channel for @u
 * @u:	the user who opened the channel
 *
 * Context: process, may sleep (the capability is asked at the limit).
 * Return: 0, or -ENOSPC beyond kring.max_user_captures.
 */
int kring_user_capture_add(struct kring_user *u)
{
	unsigned int max = READ_ONCE(kring_max_user_captures);

	if (kring_user_charge(u, KRING_USER_CAPTURES, 1, max ?: ULONG_MAX))
		return 0;
	/* Audited only here, where a no refuses the enable. */
	if (!perfmon_capable())
		return -ENOSPC;
	kring_user_charge(u, KRING_USER_CAPTURES, 1, ULONG_MAX);
	return 0;
}

/* One enabled capture channel less for @u. */
void kring_user_capture_del(struct kring_user *u)
{
	kring_user_uncharge(u, KRING_USER_CAPTURES, 1);
}

/**
 * kring_users_exit() - module exit, every channel and buffer gone
 *
 * Every entry went with the last channel or charge of its user: one left
 * is a reference leaked. Warn, and free what is left (the module's text and
 * table are about to go).
 */
void kring_users_exit(void)
{
	struct kring_user *u;
	struct hlist_node *tmp;
	int bkt;

	hash_for_each_safe(kring_users, bkt, tmp, u, node) {
		WARN_ONCE(1, "kring: user %u still has %u references at exit\n",
			  __kuid_val(u->uid), u->refs);
		hash_del(&u->node);
		put_user_ns(u->ns);
		kfree(u);
	}
}
