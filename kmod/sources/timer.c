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
 *
 * Call chains (KRING_SAMPLE_CALLCHAIN) are gathered in the timer's hard
 * interrupt into one per-CPU buffer that every channel asking for them
 * shares (the timer callbacks of one CPU never nest), allocated with the
 * first such channel and freed with the last.
 */
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/sched/task_stack.h>
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/uaccess.h>
#include <asm/irq_regs.h>
#include <asm/ptrace.h>

#include "../compat.h"
#include "../capture.h"
#include "sources.h"

#define KRING_TIMER_MAX_HZ	100000
#define KRING_TIMER_MIN_PERIOD	10000	/* ns */

/* The timer interrupt's own frames above the interrupted context's, at most. */
#define KRING_TIMER_IRQ_FRAMES	48

struct kring_chain_buf {
	u64 chain[KRING_CALLCHAIN_MAX + 2];
	unsigned long kstack[KRING_CALLCHAIN_MAX + KRING_TIMER_IRQ_FRAMES];
};

static DEFINE_MUTEX(kring_chain_lock);
static struct kring_chain_buf __percpu *kring_chain_bufs;	/* kring_chain_lock */
static unsigned int kring_chain_users;				/* kring_chain_lock */

static struct kring_chain_buf __percpu *kring_chain_get(void)
{
	struct kring_chain_buf __percpu *b;

	mutex_lock(&kring_chain_lock);
	if (!kring_chain_bufs)
		kring_chain_bufs = alloc_percpu_gfp(struct kring_chain_buf, GFP_KERNEL_ACCOUNT);
	b = kring_chain_bufs;
	if (b)
		kring_chain_users++;
	mutex_unlock(&kring_chain_lock);
	return b;
}

/* After the channel's timers are cancelled: none of them uses it any more. */
static void kring_chain_put(void)
{
	mutex_lock(&kring_chain_lock);
	if (!--kring_chain_users) {
		free_percpu(kring_chain_bufs);
		kring_chain_bufs = NULL;
	}
	mutex_unlock(&kring_chain_lock);
}

struct kring_timer;

/*
 * @left: channels that follow tasks: what was left of the period when the
 * last followed task was switched out for one that is not followed (ns,
 * 0: a whole period). The next followed task switched in resumes it, so
 * the periods the samples cover add up to the followed tasks' CPU time
 * however often they share their CPU (perf's period_left of a task's
 * cpu-clock event). Only this CPU touches it, with interrupts off (the
 * switch hook, the arming IPI).
 */
struct kring_timer_cpu {
	struct hrtimer hrtimer;
	struct kring_timer *tm;
	unsigned int cpu;
	u64 left;
};

struct kring_timer {
	struct kring_capture cap;
	u64 period;			/* ns */
	unsigned int chain_max;		/* addresses per call chain */
	struct kring_chain_buf __percpu *chain;	/* NULL: no call chains */
	bool stopping;
	struct kring_timer_cpu *cpus;	/* nr_cpu_ids of them */
};

/*
 * The kernel part of a call chain: the interrupted kernel context's IP and
 * its callers, at most @max. The unwinder starts in this interrupt: its
 * frames up to the interrupted IP are dropped; an unwinder that does not
 * reach it (or none, without CONFIG_STACKTRACE) leaves the IP alone.
 * Return: the entries written at @out.
 */
static unsigned int kring_chain_kernel(struct kring_chain_buf *b, u64 *out, unsigned int max,
				       struct pt_regs *regs)
{
	unsigned long ip = instruction_pointer(regs);
	unsigned int n, i, k = 0;

	n = kring_stack_trace_save(b->kstack, ARRAY_SIZE(b->kstack));
	for (i = 0; i < n && b->kstack[i] != ip; i++)
		;
	if (i == n) {
		out[0] = ip;
		return 1;
	}
	for (; i < n && k < max; i++)
		out[k++] = b->kstack[i];
	return k;
}

/*
 * The user part: the IP in @regs and the return addresses of the frame
 * records the frame pointer chains, at most @max in all. Each record is
 * read without faulting (copy_from_user_nofault(): in this hard interrupt
 * a page not present ends the walk), must lie at or above the stack
 * pointer, be aligned and sit above the one before (the stack grows
 * down): anything else ends the walk, so a corrupt or hostile stack costs
 * at most @max reads.
 */
static unsigned int kring_chain_user(u64 *out, unsigned int max, struct pt_regs *regs)
{
	unsigned long fp = frame_pointer(regs), floor = user_stack_pointer(regs);
	struct {
		unsigned long next;
		unsigned long ret;
	} frame;
	unsigned int k = 0;

	if (!max)
		return 0;
	out[k++] = instruction_pointer(regs);
	if (!kring_user_regs_native(regs))
		return k;
	while (k < max) {
		if (fp < floor || (fp & (sizeof(long) - 1)))
			break;
		if (copy_from_user_nofault(&frame, (const void __user *)fp, sizeof(frame)))
			break;
		if (!frame.ret)
			break;
		out[k++] = frame.ret;
		floor = fp + sizeof(frame);
		fp = frame.next;
	}
	return k;
}

/*
 * The call chain of the context @regs interrupted, as perf's: the kernel
 * part under KRING_CONTEXT_KERNEL when it was in the kernel, then the
 * task's user part under KRING_CONTEXT_USER when it has a user stack.
 * Return: the entries in @b->chain.
 */
static u32 kring_timer_chain(struct kring_timer *tm, struct kring_chain_buf *b,
			     struct pt_regs *regs, bool user)
{
	unsigned int nr = 0, k = 0;

	if (!user) {
		b->chain[nr++] = KRING_CONTEXT_KERNEL;
		k = kring_chain_kernel(b, b->chain + nr, tm->chain_max, regs);
		nr += k;
		if ((current->flags & KRING_PF_NO_USER_STACK) || !current->mm)
			return nr;
		regs = task_pt_regs(current);
	}
	if (k < tm->chain_max) {
		b->chain[nr++] = KRING_CONTEXT_USER;
		nr += kring_chain_user(b->chain + nr, tm->chain_max - k, regs);
	}
	return nr;
}

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
	if (tm->chain) {
		struct kring_chain_buf *b = this_cpu_ptr(tm->chain);

		d.chain = b->chain;
		d.chain_nr = kring_timer_chain(tm, b, regs, user);
	}
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

	tc->left = 0;
	hrtimer_start(&tc->hrtimer, ns_to_ktime(tc->tm->period),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/*
 * A context switch on this CPU (rq lock held, irqs off; the timer's hard
 * callback cannot be running here now). A followed task switched in for
 * one that is not followed arms the CPU's timer with what was left of the
 * period; a followed task switched out for one that is not followed stops
 * it and keeps what is left (->left): the timer runs while followed tasks
 * do, as perf's per-task cpu-clock event.
 */
static void kring_timer_switch(struct kring_capture *cap, bool preempt,
			       struct task_struct *prev, struct task_struct *next,
			       unsigned int prev_state)
{
	struct kring_timer *tm = container_of(cap, struct kring_timer, cap);
	unsigned int cpu = smp_processor_id();
	struct kring_timer_cpu *tc = &tm->cpus[cpu];
	struct hrtimer *t = &tc->hrtimer;
	bool in, out;
	s64 rem;

	if ((cap->cpu >= 0 && cap->cpu != cpu) || READ_ONCE(tm->stopping))
		return;
	in = kring_capture_follows(cap, next);
	out = kring_capture_follows(cap, prev);
	if (in && !hrtimer_is_queued(t)) {
		hrtimer_start(t, ns_to_ktime(tc->left ?: tm->period),
			      HRTIMER_MODE_REL_PINNED_HARD);
		tc->left = 0;
	} else if (out && !in && hrtimer_try_to_cancel(t) == 1) {
		/* Overdue (interrupts were off): it fires at the next switch in. */
		rem = ktime_to_ns(hrtimer_expires_remaining(t));
		tc->left = clamp_t(s64, rem, 1, tm->period);
	}
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

	if (attr->config[3])
		return -EINVAL;
	/* The call chain's depth: only with call chains, and bounded. */
	if (attr->config[2] > KRING_CALLCHAIN_MAX ||
	    (attr->config[2] && !(attr->sample_type & KRING_SAMPLE_CALLCHAIN)))
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
	if (attr->sample_type & KRING_SAMPLE_CALLCHAIN) {
		tm->chain_max = attr->config[2] ?: KRING_CALLCHAIN_MAX;
		tm->chain = kring_chain_get();
		if (!tm->chain) {
			kfree(tm);
			return -ENOMEM;
		}
	}
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
	if (tm->chain)
		kring_chain_put();
	kfree(tm->cpus);
	kfree(tm);
	return ret;
}

static int kring_timer_start(struct kring_channel *ch)
{
	struct kring_timer *tm = ch->source_priv;
	unsigned int cpu;
	int ret;

	WRITE_ONCE(tm->stopping, false);
	ret = kring_capture_enable(&tm->cap);
	if (ret)
		return ret;
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
	if (tm->chain)
		kring_chain_put();
	kfree(tm->cpus);
	kfree(tm);
	ch->source_priv = NULL;
}

static struct kring_capture *kring_timer_capture(struct kring_channel *ch)
{
	struct kring_timer *tm = ch->source_priv;

	return tm ? &tm->cap : NULL;
}

/* struct kring_timer_raw, the RAW data of a timer SAMPLE when asked for. */
static const struct kring_format_field kring_timer_fields[] = {
	KRING_FORMAT_FIELD(struct kring_timer_raw, flags, __u32),
	KRING_FORMAT_FIELD(struct kring_timer_raw, cpu, __u32),
	KRING_FORMAT_FIELD(struct kring_timer_raw, overruns, __u64),
};

static const struct kring_format kring_timer_format = {
	.name = "kring_timer",
	.type = KRING_RECORD_SAMPLE,
	.size = sizeof(struct kring_timer_raw),
	.fields = kring_timer_fields,
	.nr_fields = ARRAY_SIZE(kring_timer_fields),
	.print_fmt =
		"\"flags=%u cpu=%u overruns=%llu\", REC->flags, REC->cpu, REC->overruns",
};

static const struct kring_format * const kring_timer_formats[] = {
	&kring_timer_format, NULL,
};

const struct kring_source_ops kring_timer_source = {
	.name = "timer",
	.caps = KRING_SRC_FOLLOWS_TASKS | KRING_SRC_REDIRECTABLE | KRING_SRC_KERNEL_SAMPLES |
		KRING_SRC_CALLCHAIN,
	.features = KRING_FEAT_TIMER | KRING_FEAT_CAPTURE | KRING_FEAT_CALLCHAIN,
	.formats = kring_timer_formats,
	.available = kring_capture_available,
	.prepare = kring_capture_attach,
	.configure = kring_timer_configure,
	.start = kring_timer_start,
	.stop = kring_timer_stop,
	.release = kring_timer_release,
	.capture = kring_timer_capture,
};
