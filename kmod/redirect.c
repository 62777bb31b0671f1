// SPDX-License-Identifier: GPL-2.0
/*
 * Set-output (KRING_IOC_SET_OUTPUT): a channel's records redirected into
 * another channel's buffer, as perf_event_set_output() does. The graph's
 * rules and locks are in docs/ARCHITECTURE.md ("Set-output graph"). This
 * file makes the links, on the ioctl; what the rest of a channel's life
 * does with them (the writers a target counts, the unlink at release) is
 * channel.c's, below it.
 */
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/lockdep.h>
#include <linux/rculist.h>
#include <linux/slab.h>

#include "compat.h"
#include "channel.h"
#include "source.h"

/* Whether @ch is configured with a source set-output can redirect. */
static bool kring_channel_redirectable(struct kring_channel *ch)
{
	return ch->configured && kring_source_can(ch->source, KRING_SRC_REDIRECTABLE);
}

/*
 * The locks of @a and of @b (NULL: @a's alone), the lower id first: the
 * one rule under which kring holds two channel locks (set-output).
 */
static void kring_channel_lock_two(struct kring_channel *a, struct kring_channel *b)
{
	if (b && b->id < a->id)
		swap(a, b);
	mutex_lock(&a->lock);
	if (b)
		mutex_lock_nested(&b->lock, SINGLE_DEPTH_NESTING);
}

static void kring_channel_unlock_two(struct kring_channel *a, struct kring_channel *b)
{
	if (b)
		mutex_unlock(&b->lock);
	mutex_unlock(&a->lock);
}

/*
 * perf's constraints: the channels sharing a buffer are bound to the same
 * CPU, or follow the same single task without inherit (the buffer's
 * write_lock serialises what still runs on two CPUs: wakeups written on
 * the waker's CPU, AUX records from an ioctl). Both locks held.
 */
static int kring_redirect_compatible(struct kring_channel *ch, struct kring_channel *t)
{
	lockdep_assert_held(&ch->lock);
	lockdep_assert_held(&t->lock);
	if (!t->configured || t->attr.clockid != ch->attr.clockid)
		return -EINVAL;
	if (ch->attr.cpu >= 0)
		return t->attr.cpu == ch->attr.cpu ? 0 : -EINVAL;
	if (t->attr.cpu != -1 || !kring_channel_redirectable(t) ||
	    t->follow_task != ch->follow_task ||
	    (ch->attr.flags & KRING_ATTR_F_INHERIT) || (t->attr.flags & KRING_ATTR_F_INHERIT))
		return -EINVAL;
	return 0;
}

/**
 * kring_redirect_set() - KRING_IOC_SET_OUTPUT
 * @ch:	the channel whose records are redirected
 * @fd:	a kring file descriptor (the target), or -1 to undo
 *
 * Runs under @ch's lock and the target's (kring_channel_lock_two(), as
 * perf_event_set_output() takes both events' mutexes), and no other lock
 * of anyone's: a channel's @out is set only under both locks, and a
 * channel's @redirected list grows only under its lock, so two calls that
 * could build a cycle or a chain (A to B while B to A, or A to B while B
 * to C) share a channel and are serialised by its lock: a target is never
 * redirected itself, and a channel that is a target is never redirected.
 * The link is allocated before any lock is taken, and nothing here waits
 * for a grace period (struct kring_redirect_link).
 *
 * Return: 0; -EBADF for a bad descriptor; -EINVAL for a target that is not
 * a configured kring channel, is @ch, is itself redirected or breaks the
 * constraints above, for a channel that is the target of another, or for
 * a channel whose source cannot be redirected; -EBUSY while @ch is enabled
 * or mapped; -ENOMEM.
 */
long kring_redirect_set(struct kring_channel *ch, int fd)
{
	struct kring_channel *target = NULL, *old = NULL;
	struct kring_redirect_link *link = NULL;
	struct file *file = NULL;
	long ret;

	if (fd != -1) {
		file = fget(fd);
		if (!file)
			return -EBADF;
		target = kring_channel_from_file(file);
		if (!target || target == ch) {
			ret = -EINVAL;
			goto out_fput;
		}
		link = kzalloc(sizeof(*link), GFP_KERNEL_ACCOUNT);
		if (!link) {
			ret = -ENOMEM;
			goto out_fput;
		}
		link->ch = ch;
	}
	kring_channel_lock_two(ch, target);
	if (target) {
		bool is_target;

		spin_lock(&ch->out_lock);
		is_target = !list_empty(&ch->redirected);
		spin_unlock(&ch->out_lock);
		ret = -EINVAL;
		if (is_target || rcu_access_pointer(target->out))
			goto out_unlock;
	}
	if (!kring_channel_redirectable(ch)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (ch->enabled || rcu_access_pointer(ch->buf)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (target) {
		ret = kring_redirect_compatible(ch, target);
		if (ret)
			goto out_unlock;
	}
	old = kring_channel_out_unlink(ch);
	if (target) {
		refcount_inc(&target->refs);	/* the file holds one */
		spin_lock(&target->out_lock);
		list_add_tail_rcu(&link->node, &target->redirected);
		spin_unlock(&target->out_lock);
		ch->out_link = link;
		link = NULL;
		/* Disabled: no writer reads it until the channel is enabled again. */
		rcu_assign_pointer(ch->out, target);
	}
	ret = 0;
out_unlock:
	kring_channel_unlock_two(ch, target);
	kring_channel_put(old);
	kfree(link);
out_fput:
	if (file)
		fput(file);
	return ret;
}
