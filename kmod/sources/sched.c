// SPDX-License-Identifier: GPL-2.0
/*
 * The sched source: a SAMPLE record per context switch, fork and exit that
 * the channel's mode selects (kmod/capture.c), with a struct kring_sched_raw
 * as RAW payload.
 *
 * Per-CPU channels record every switch of their CPU; followed modes record
 * the switches in and out of the followed tasks (on the channel's CPU, or
 * anywhere for per-thread channels) and their forks and exits. The task
 * on the other side of a switch or a wakeup is shown only to an owner who
 * may see every task (kring_perm_see_all()): for others that side, and
 * every field that tells of it, is blanked where each record is built
 * (kring_sched_record()). For an owner who may see every task, every
 * switch on a bound channel's CPU also raises its timestamp floor, so an
 * idle channel's floor keeps moving while its CPU schedules.
 */
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "../compat.h"
#include "../capture.h"
#include "sources.h"

/* The sides of a record: prev_* (switched out, parent, exiting task, waker), next_*. */
#define KRING_SCHED_PREV	BIT(0)
#define KRING_SCHED_NEXT	BIT(1)

/* raw.cpu and the SAMPLE's cpu of a record whose CPU is not shown */
#define KRING_SCHED_CPU_HIDDEN	U32_MAX

/*
 * Which side each field of a record tells of, beyond the two sides' names
 * (pid, tid, prio, comm, each its side's own): a field is written when
 * the channel's owner may see one of the sides it belongs to, else it is
 * blanked (docs/SECURITY.md has this table). The SAMPLE's TID and TIME
 * and the record's kind are the followed task's the record is about, its
 * ID the channel's; IP is 0, PERIOD 1.
 *
 *   flags	KRING_SCHED_F_PREEMPT says how prev left its CPU
 *   state	prev_state: prev's state (switch), exit code (exit), the CPU
 *		the woken task last ran on (wakeup)
 *   cpu	where the event ran: a switch runs where both sides are, a
 *		wakeup where the waker is
 */
struct kring_sched_owners {
	u8 flags;
	u8 state;
	u8 cpu;
};

static const struct kring_sched_owners kring_sched_owners[] = {
	[KRING_SCHED_SWITCH] = {
		.flags = KRING_SCHED_PREV,
		.state = KRING_SCHED_PREV,
		.cpu = KRING_SCHED_PREV | KRING_SCHED_NEXT,
	},
	[KRING_SCHED_FORK] = {
		.flags = KRING_SCHED_PREV,
		.state = KRING_SCHED_PREV,
		.cpu = KRING_SCHED_PREV,
	},
	[KRING_SCHED_EXIT] = {
		.flags = KRING_SCHED_PREV,
		.state = KRING_SCHED_PREV,
		.cpu = KRING_SCHED_PREV,
	},
	[KRING_SCHED_WAKEUP] = {
		.flags = KRING_SCHED_PREV,
		.state = KRING_SCHED_NEXT,
		.cpu = KRING_SCHED_PREV,
	},
};

/* Name @t on one side of @raw (@next: the next_* fields, else prev_*). */
static void kring_sched_name(const struct kring_capture *cap, struct kring_sched_raw *raw,
			     bool next, struct task_struct *t)
{
	char *comm = next ? raw->next_comm : raw->prev_comm;

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

/*
 * Build and write one record about @who, a followed task, on the CPU the
 * event runs on: @kind with @flags and @state, between @prev and @next
 * (NULL: none). @shown says which sides (KRING_SCHED_PREV, _NEXT) the
 * channel's owner may see: a hidden side's names and every field that
 * tells of it (kring_sched_owners[]) are blank, 0 or, for the CPU,
 * KRING_SCHED_CPU_HIDDEN; a hidden side reads as the idle task's, which
 * such an owner does not see either. A record whose CPU is hidden is not
 * written into a channel bound to a CPU, whose CPU would tell.
 */
static void kring_sched_record(struct kring_capture *cap, u16 kind, u16 flags, u64 state,
			       struct task_struct *prev, struct task_struct *next,
			       struct task_struct *who, unsigned int shown)
{
	const struct kring_sched_owners *own = &kring_sched_owners[kind];
	struct kring_sample_data d = {};
	struct kring_sched_raw raw = {};

	raw.kind = kind;
	raw.cpu = smp_processor_id();
	if (!(own->cpu & shown)) {
		if (cap->cpu >= 0)
			return;
		raw.cpu = KRING_SCHED_CPU_HIDDEN;
	}
	if (own->flags & shown)
		raw.flags = flags;
	if (own->state & shown)
		raw.prev_state = state;
	if (prev && (shown & KRING_SCHED_PREV))
		kring_sched_name(cap, &raw, false, prev);
	if (next && (shown & KRING_SCHED_NEXT))
		kring_sched_name(cap, &raw, true, next);
	d.ip = 0;
	/* The followed task's ids as its side of the record has them. */
	if (who == prev && (shown & KRING_SCHED_PREV)) {
		d.pid = raw.prev_pid;
		d.tid = raw.prev_tid;
	} else if (who == next && (shown & KRING_SCHED_NEXT)) {
		d.pid = raw.next_pid;
		d.tid = raw.next_tid;
	} else {
		kring_capture_ids(cap, who, &d.pid, &d.tid);
	}
	d.cpu = raw.cpu;
	d.period = 1;
	d.raw = &raw;
	d.raw_size = sizeof(raw);
	kring_capture_emit(cap, &d);
}

static bool kring_sched_here(const struct kring_capture *cap)
{
	return cap->cpu < 0 || cap->cpu == smp_processor_id();
}

/* KRING_SCHED_PREV or _NEXT if the channel's owner may see @t, else 0. */
static unsigned int kring_sched_shows(struct kring_capture *cap, const struct task_struct *t,
				      unsigned int side)
{
	return kring_capture_may_see(cap, t) ? side : 0;
}

static void kring_sched_switch(struct kring_capture *cap, bool preempt,
			       struct task_struct *prev, struct task_struct *next,
			       unsigned int prev_state)
{
	struct task_struct *who;
	unsigned int shown;

	if (!kring_sched_here(cap))
		return;
	/* Each side's follow check once: it also runs the permission check. */
	if (kring_capture_follows(cap, prev)) {
		who = prev;
		shown = KRING_SCHED_PREV | kring_sched_shows(cap, next, KRING_SCHED_NEXT);
	} else if (kring_capture_follows(cap, next)) {
		who = next;
		shown = KRING_SCHED_NEXT | (cap->see_all ? KRING_SCHED_PREV : 0);
	} else {
		/*
		 * Not ours, but time moves on for this CPU's buffer: for an
		 * owner who may see every task, as each move of the floor
		 * times a switch of this CPU. Other owners' floors move with
		 * the floor tick and their own records.
		 */
		if (cap->cpu >= 0 && cap->see_all)
			kring_capture_tick(cap);
		return;
	}
	kring_sched_record(cap, KRING_SCHED_SWITCH, preempt ? KRING_SCHED_F_PREEMPT : 0,
			   prev_state, prev, next, who, shown);
}

static void kring_sched_fork(struct kring_capture *cap, struct task_struct *parent,
			     struct task_struct *child)
{
	/* The fork probe runs after the child was added when inheriting. */
	if (!kring_sched_here(cap) || !kring_capture_follows(cap, parent))
		return;
	/* A child of a followed task has its parent's credentials. */
	kring_sched_record(cap, KRING_SCHED_FORK, 0, 0, parent, child, parent,
			   KRING_SCHED_PREV | KRING_SCHED_NEXT);
}

static void kring_sched_exit(struct kring_capture *cap, struct task_struct *p)
{
	if (!kring_sched_here(cap) || !kring_capture_follows(cap, p))
		return;
	kring_sched_record(cap, KRING_SCHED_EXIT, 0, p->exit_code, p, NULL, p, KRING_SCHED_PREV);
}

static void kring_sched_wakeup(struct kring_capture *cap, struct task_struct *p)
{
	/* @p may run elsewhere still: kring_capture_follows_woken(). */
	if (!(cap->ch->attr.config[0] & KRING_SCHED_CFG_WAKEUPS) ||
	    !kring_sched_here(cap) || !kring_capture_follows_woken(cap, p))
		return;
	kring_sched_record(cap, KRING_SCHED_WAKEUP, 0, task_cpu(p), current, p, p,
			   KRING_SCHED_NEXT | kring_sched_shows(cap, current, KRING_SCHED_PREV));
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
	return kring_capture_enable(ch->source_priv);
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

/* struct kring_sched_raw, the RAW data of every sched SAMPLE. */
static const struct kring_format_field kring_sched_fields[] = {
	KRING_FORMAT_FIELD(struct kring_sched_raw, kind, __u16),
	KRING_FORMAT_FIELD(struct kring_sched_raw, flags, __u16),
	KRING_FORMAT_FIELD(struct kring_sched_raw, cpu, __u32),
	KRING_FORMAT_FIELD(struct kring_sched_raw, prev_pid, __u32),
	KRING_FORMAT_FIELD(struct kring_sched_raw, prev_tid, __u32),
	KRING_FORMAT_FIELD(struct kring_sched_raw, next_pid, __u32),
	KRING_FORMAT_FIELD(struct kring_sched_raw, next_tid, __u32),
	KRING_FORMAT_FIELD(struct kring_sched_raw, prev_prio, __s32),
	KRING_FORMAT_FIELD(struct kring_sched_raw, next_prio, __s32),
	KRING_FORMAT_FIELD(struct kring_sched_raw, prev_state, __u64),
	KRING_FORMAT_ARRAY(struct kring_sched_raw, prev_comm, char, 16),
	KRING_FORMAT_ARRAY(struct kring_sched_raw, next_comm, char, 16),
};

static const struct kring_format kring_sched_format = {
	.name = "kring_sched",
	.type = KRING_RECORD_SAMPLE,
	.size = sizeof(struct kring_sched_raw),
	.fields = kring_sched_fields,
	.nr_fields = ARRAY_SIZE(kring_sched_fields),
	.print_fmt =
		"\"kind=%u %s -> %s\", REC->kind, REC->prev_comm, REC->next_comm",
};

static const struct kring_format * const kring_sched_formats[] = {
	&kring_sched_format, NULL,
};

const struct kring_source_ops kring_sched_source = {
	.name = "sched",
	.caps = KRING_SRC_FOLLOWS_TASKS | KRING_SRC_REDIRECTABLE,
	.features = KRING_FEAT_SCHED | KRING_FEAT_CAPTURE,
	.available = kring_capture_available,
	.prepare = kring_capture_attach,
	.sample_type = KRING_SAMPLE_RAW,
	.formats = kring_sched_formats,
	.configure = kring_sched_configure,
	.start = kring_sched_start,
	.stop = kring_sched_stop,
	.release = kring_sched_release,
	.capture = kring_sched_capture,
};
