// SPDX-License-Identifier: GPL-2.0
/*
 * The sched source: a SAMPLE record per context switch, fork and exit that
 * the channel's mode selects (kmod/capture.c), with a struct kring_sched_raw
 * as RAW payload.
 *
 * Per-CPU channels record every switch of their CPU; followed modes record
 * the switches in and out of the followed tasks (on the channel's CPU, or
 * anywhere for per-thread channels) and their forks and exits. The task
 * on the other side of a switch or a wakeup is named only to an owner who
 * may see every task (kring_perm_see_all()); others get zeros there. Every switch
 * on a bound channel's CPU also raises its timestamp floor, so an idle
 * channel's floor keeps moving while its CPU schedules.
 */
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../compat.h"
#include "../capture.h"
#include "sources.h"

/*
 * Name @t on one side of a record (@next: the next_* fields, else prev_*):
 * pid, tid, prio and comm, or (!@show) zeros and an empty comm for a task
 * the channel's owner may not see (the caller zeroed @raw).
 */
static void kring_sched_name(const struct kring_capture *cap, struct kring_sched_raw *raw,
			     bool next, struct task_struct *t, bool show)
{
	char *comm = next ? raw->next_comm : raw->prev_comm;

	if (!show)
		return;
	if (next) {
		kring_capture_ids(cap, t, &raw->next_pid, &raw->next_tid);
		raw->next_prio = t->prio;
	} else {
		kring_capture_ids(cap, t, &raw->prev_pid, &raw->prev_tid);
		raw->prev_prio = t->prio;
	}
	memcpy(comm, t->comm, sizeof(t->comm) < 16 ? sizeof(t->comm) : 16);
	comm[15] = '\0';
}

/* Write one record about @who; @raw is complete but for its cpu. */
static void kring_sched_emit(struct kring_capture *cap, struct task_struct *who,
			     struct kring_sched_raw *raw)
{
	struct kring_sample_data d = {};

	raw->cpu = smp_processor_id();
	d.ip = 0;
	kring_capture_ids(cap, who, &d.pid, &d.tid);
	d.cpu = raw->cpu;
	d.period = 1;
	d.raw = raw;
	d.raw_size = sizeof(*raw);
	kring_capture_emit(cap, &d);
}

static bool kring_sched_here(const struct kring_capture *cap)
{
	return cap->cpu < 0 || cap->cpu == smp_processor_id();
}

static void kring_sched_switch(struct kring_capture *cap, bool preempt,
			       struct task_struct *prev, struct task_struct *next,
			       unsigned int prev_state)
{
	struct kring_sched_raw raw;
	struct task_struct *who;
	bool show_prev, show_next;

	if (!kring_sched_here(cap))
		return;
	/* Each side's follow check once: it also runs the permission check. */
	if (kring_capture_follows(cap, prev)) {
		who = prev;
		show_prev = true;
		show_next = kring_capture_may_see(cap, next);
	} else if (kring_capture_follows(cap, next)) {
		who = next;
		show_prev = cap->see_all;
		show_next = true;
	} else {
		/* Not ours, but time moves on for this CPU's buffer. */
		if (cap->cpu >= 0)
			kring_capture_tick(cap);
		return;
	}
	memset(&raw, 0, sizeof(raw));
	raw.kind = KRING_SCHED_SWITCH;
	raw.flags = preempt ? KRING_SCHED_F_PREEMPT : 0;
	raw.prev_state = prev_state;
	kring_sched_name(cap, &raw, false, prev, show_prev);
	kring_sched_name(cap, &raw, true, next, show_next);
	kring_sched_emit(cap, who, &raw);
}

static void kring_sched_fork(struct kring_capture *cap, struct task_struct *parent,
			     struct task_struct *child)
{
	struct kring_sched_raw raw;

	/* The fork probe runs after the child was added when inheriting. */
	if (!kring_sched_here(cap) || !kring_capture_follows(cap, parent))
		return;
	memset(&raw, 0, sizeof(raw));
	raw.kind = KRING_SCHED_FORK;
	kring_sched_name(cap, &raw, false, parent, true);	/* followed: checked above */
	/* A child of a followed task has its parent's credentials. */
	kring_sched_name(cap, &raw, true, child, true);
	kring_sched_emit(cap, parent, &raw);
}

static void kring_sched_exit(struct kring_capture *cap, struct task_struct *p)
{
	struct kring_sched_raw raw;

	if (!kring_sched_here(cap) || !kring_capture_follows(cap, p))
		return;
	memset(&raw, 0, sizeof(raw));
	raw.kind = KRING_SCHED_EXIT;
	raw.prev_state = p->exit_code;
	kring_sched_name(cap, &raw, false, p, true);	/* followed: checked above */
	kring_sched_emit(cap, p, &raw);
}

static void kring_sched_wakeup(struct kring_capture *cap, struct task_struct *p)
{
	struct kring_sched_raw raw;

	if (!(cap->ch->attr.config[0] & KRING_SCHED_CFG_WAKEUPS) ||
	    !kring_sched_here(cap) || !kring_capture_follows(cap, p))
		return;
	memset(&raw, 0, sizeof(raw));
	raw.kind = KRING_SCHED_WAKEUP;
	raw.prev_state = task_cpu(p);
	kring_sched_name(cap, &raw, false, current, kring_capture_may_see(cap, current));
	kring_sched_name(cap, &raw, true, p, true);	/* followed: checked above */
	kring_sched_emit(cap, p, &raw);
}

static const struct kring_capture_ops kring_sched_capture_ops = {
	.sched_switch = kring_sched_switch,
	.fork = kring_sched_fork,
	.exit = kring_sched_exit,
	.wakeup = kring_sched_wakeup,
};

static int kring_sched_configure(struct kring_channel *ch)
{
	struct kring_capture *cap;
	unsigned int i;
	int ret;

	if (ch->attr.config[0] & ~KRING_SCHED_CFG_WAKEUPS)
		return -EINVAL;
	if ((ch->attr.config[0] & KRING_SCHED_CFG_WAKEUPS) && !kring_capture_wakeups_available())
		return -EOPNOTSUPP;
	for (i = 1; i < ARRAY_SIZE(ch->attr.config); i++)
		if (ch->attr.config[i])
			return -EINVAL;
	cap = kzalloc(sizeof(*cap), GFP_KERNEL_ACCOUNT);
	if (!cap)
		return -ENOMEM;
	ret = kring_capture_init(cap, ch, &kring_sched_capture_ops);
	if (ret) {
		kfree(cap);
		return ret;
	}
	ch->source_priv = cap;
	return 0;
}

static int kring_sched_start(struct kring_channel *ch)
{
	kring_capture_enable(ch->source_priv);
	return 0;
}

static void kring_sched_stop(struct kring_channel *ch)
{
	kring_capture_disable(ch->source_priv);
}

static void kring_sched_release(struct kring_channel *ch)
{
	kring_capture_release(ch->source_priv);
	kfree(ch->source_priv);
	ch->source_priv = NULL;
}

static struct kring_capture *kring_sched_capture(struct kring_channel *ch)
{
	return ch->source_priv;
}

const struct kring_source_ops kring_sched_source = {
	.name = "sched",
	.caps = KRING_SRC_FOLLOWS_TASKS | KRING_SRC_REDIRECTABLE,
	.features = KRING_FEAT_SCHED | KRING_FEAT_CAPTURE,
	.available = kring_capture_available,
	.prepare = kring_capture_attach,
	.sample_type = KRING_SAMPLE_RAW,
	.configure = kring_sched_configure,
	.start = kring_sched_start,
	.stop = kring_sched_stop,
	.release = kring_sched_release,
	.capture = kring_sched_capture,
};
