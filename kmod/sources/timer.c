// SPDX-License-Identifier: GPL-2.0
/*
 * The timer source: like perf's cpu-clock event, an hrtimer on each CPU the
 * channel covers fires every period (hard interrupt context) and samples
 * the interrupted context: instruction pointer, task, CPU, time and
 * user/kernel mode. Per-CPU channels have one timer on their CPU and sample
 * whatever runs there (the idle task too). Channels that follow tasks have
 * one per CPU, armed only where a followed task runs: a followed task
 * switched in arms its CPU's timer, and a timer that finds no followed task
 * running stops (so enable arms every CPU once, and each stops at its first
 * expiry unless a followed task is there).
 *
 * When a CPU goes offline its timers are cancelled there (kmod/capture.c's
 * hotplug callback) and restarted when it comes back; a timer that finds
 * itself on another CPU than its own anyway stops.
 */
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <asm/irq_regs.h>
#include <asm/ptrace.h>

#include "../compat.h"
#include "../capture.h"
#include "sources.h"

#define KRING_TIMER_MAX_HZ	100000
#define KRING_TIMER_MIN_PERIOD	10000	/* ns */

struct kring_timer;

struct kring_timer_cpu {
	struct hrtimer hrtimer;
	struct kring_timer *tm;
	unsigned int cpu;
};

struct kring_timer {
	struct kring_capture cap;
	u64 period;			/* ns */
	bool stopping;
	struct kring_timer_cpu *cpus;	/* nr_cpu_ids of them */
};

static void kring_timer_sample(struct kring_timer *tm, struct pt_regs *regs, u64 overruns)
{
	struct kring_capture *cap = &tm->cap;
	struct kring_channel *ch = cap->ch;
	struct kring_sample_data d = {};
	struct kring_timer_raw raw = {};
	bool user = user_mode(regs);

	if (!user && (ch->attr.flags & KRING_ATTR_F_EXCLUDE_KERNEL))
		return;
	raw.flags = user ? KRING_TIMER_F_USER : 0;
	raw.cpu = smp_processor_id();
	raw.overruns = overruns;
	d.ip = instruction_pointer(regs);
	kring_capture_ids(&tm->cap, current, &d.pid, &d.tid);
	d.cpu = raw.cpu;
	d.period = tm->period * overruns;
	d.raw = &raw;
	d.raw_size = sizeof(raw);
	/* Hard irq context: the buffer lives until we return (RCU). */
	kring_capture_emit(cap, &d);
}

static enum hrtimer_restart kring_timer_fire(struct hrtimer *t)
{
	struct kring_timer_cpu *tc = container_of(t, struct kring_timer_cpu, hrtimer);
	struct kring_timer *tm = tc->tm;
	struct pt_regs *regs = get_irq_regs();
	u64 overruns, t0;

	if (READ_ONCE(tm->stopping) || smp_processor_id() != tc->cpu)
		return HRTIMER_NORESTART;
	/* No followed task here: stop until one is switched in. */
	if (!kring_capture_follows(&tm->cap, current))
		return tm->cap.tid ? HRTIMER_NORESTART : HRTIMER_RESTART;
	overruns = hrtimer_forward_now(t, ns_to_ktime(tm->period));
	if (regs) {
		if (!kring_throttle_enter(&t0)) {
			/* The periods skipped count as throttled samples too. */
			atomic64_add(kring_throttle_defer(t, tm->period, overruns),
				     &tm->cap.ch->throttled);
			return HRTIMER_RESTART;
		}
		kring_timer_sample(tm, regs, overruns ? overruns : 1);
		kring_throttle_exit(t0);
	}
	return HRTIMER_RESTART;
}

/* On the timer's CPU (IPI). */
static void kring_timer_arm(void *arg)
{
	struct kring_timer_cpu *tc = arg;

	hrtimer_start(&tc->hrtimer, ns_to_ktime(tc->tm->period),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * A followed task is switched in on this CPU (rq lock held, irqs off): arm
 * the CPU's timer unless it runs. Its callback cannot be running here now.
 */
static void kring_timer_switch(struct kring_capture *cap, bool preempt,
			       struct task_struct *prev, struct task_struct *next,
			       unsigned int prev_state)
{
	struct kring_timer *tm = container_of(cap, struct kring_timer, cap);
	unsigned int cpu = smp_processor_id();
	struct hrtimer *t = &tm->cpus[cpu].hrtimer;

	if ((cap->cpu >= 0 && cap->cpu != cpu) || READ_ONCE(tm->stopping))
		return;
	if (kring_capture_follows(cap, next) && !hrtimer_is_queued(t))
		hrtimer_start(t, ns_to_ktime(tm->period), HRTIMER_MODE_REL_PINNED_HARD);
}

/* On @cpu itself (cpuhp thread), ch->lock held: see kmod/capture.h. */
static void kring_timer_cpu_online(struct kring_capture *cap, unsigned int cpu)
{
	struct kring_timer *tm = container_of(cap, struct kring_timer, cap);

	/* Followed tasks arm it when they are switched in there. */
	if (!READ_ONCE(tm->stopping) && !cap->tid)
		hrtimer_start(&tm->cpus[cpu].hrtimer, ns_to_ktime(tm->period),
			      HRTIMER_MODE_REL_PINNED_HARD);
}

static void kring_timer_cpu_offline(struct kring_capture *cap, unsigned int cpu)
{
	struct kring_timer *tm = container_of(cap, struct kring_timer, cap);

	hrtimer_cancel(&tm->cpus[cpu].hrtimer);
}

/* Per-CPU channels: no scheduler events, only hotplug. */
static const struct kring_capture_ops kring_timer_cpu_ops = {
	.cpu_online = kring_timer_cpu_online,
	.cpu_offline = kring_timer_cpu_offline,
};

/* Channels that follow tasks: timers armed where the tasks run. */
static const struct kring_capture_ops kring_timer_task_ops = {
	.sched_switch = kring_timer_switch,
	.cpu_online = kring_timer_cpu_online,
	.cpu_offline = kring_timer_cpu_offline,
};

static int kring_timer_configure(struct kring_channel *ch)
{
	const struct kring_attr *attr = &ch->attr;
	struct kring_timer *tm;
	unsigned int cpu;
	u64 period;
	int ret;

	if (attr->config[2] || attr->config[3])
		return -EINVAL;
	if (attr->config[0]) {
		if (attr->config[0] > KRING_TIMER_MAX_HZ)
			return -EINVAL;
		period = div64_u64(NSEC_PER_SEC, attr->config[0]);
	} else {
		period = attr->config[1];
		if (period < KRING_TIMER_MIN_PERIOD || period > NSEC_PER_SEC * 60ULL)
			return -EINVAL;
	}
	tm = kzalloc(sizeof(*tm), GFP_KERNEL_ACCOUNT);
	if (!tm)
		return -ENOMEM;
	tm->period = period;
	tm->cpus = kcalloc(nr_cpu_ids, sizeof(*tm->cpus), GFP_KERNEL_ACCOUNT);
	if (!tm->cpus) {
		ret = -ENOMEM;
		goto err_free;
	}
	ret = kring_capture_init(&tm->cap, ch, attr->pid == -1 ? &kring_timer_cpu_ops :
							     &kring_timer_task_ops);
	if (ret)
		goto err_free;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		tm->cpus[cpu].tm = tm;
		tm->cpus[cpu].cpu = cpu;
		kring_hrtimer_setup(&tm->cpus[cpu].hrtimer, kring_timer_fire, CLOCK_MONOTONIC,
				    HRTIMER_MODE_REL_PINNED_HARD);
	}
	ch->source_priv = tm;
	return 0;

err_free:
	kfree(tm->cpus);
	kfree(tm);
	return ret;
}

static int kring_timer_start(struct kring_channel *ch)
{
	struct kring_timer *tm = ch->source_priv;
	unsigned int cpu;

	WRITE_ONCE(tm->stopping, false);
	kring_capture_enable(&tm->cap);
	for_each_online_cpu(cpu) {
		if (tm->cap.cpu >= 0 && tm->cap.cpu != cpu)
			continue;
		smp_call_function_single(cpu, kring_timer_arm, &tm->cpus[cpu], 1);
	}
	return 0;
}

static void kring_timer_stop(struct kring_channel *ch)
{
	struct kring_timer *tm = ch->source_priv;
	unsigned int cpu;

	WRITE_ONCE(tm->stopping, true);
	/* Off the list first: no hotplug callback re-arms a timer after this. */
	kring_capture_disable(&tm->cap);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		hrtimer_cancel(&tm->cpus[cpu].hrtimer);
}

static void kring_timer_release(struct kring_channel *ch)
{
	struct kring_timer *tm = ch->source_priv;

	kring_capture_release(&tm->cap);
	kfree(tm->cpus);
	kfree(tm);
	ch->source_priv = NULL;
}

static struct kring_capture *kring_timer_capture(struct kring_channel *ch)
{
	struct kring_timer *tm = ch->source_priv;

	return tm ? &tm->cap : NULL;
}

const struct kring_source_ops kring_timer_source = {
	.name = "timer",
	.caps = KRING_SRC_FOLLOWS_TASKS | KRING_SRC_REDIRECTABLE | KRING_SRC_KERNEL_SAMPLES,
	.features = KRING_FEAT_TIMER | KRING_FEAT_CAPTURE,
	.available = kring_capture_available,
	.prepare = kring_capture_attach,
	.configure = kring_timer_configure,
	.start = kring_timer_start,
	.stop = kring_timer_stop,
	.release = kring_timer_release,
	.capture = kring_timer_capture,
};
