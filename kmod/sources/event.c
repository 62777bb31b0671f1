// SPDX-License-Identifier: GPL-2.0
/*
 * The event source: any event perf_event_open() opens by type and config
 * (a tracepoint, a probe made a tracepoint through tracefs, a software or
 * hardware event), counted by an in-kernel perf counter
 * (perf_event_create_kernel_counter()) on the CPU or task the channel
 * covers: one counter, whose attr is the channel's (cpu = N, pid = -1: the
 * CPU; pid = P: the task, on any CPU or on cpu N; with
 * KRING_ATTR_F_INHERIT perf's attr.inherit, whose inherited counters keep
 * this overflow handler and its context). Each overflow writes one SAMPLE
 * into the channel, from perf's own sample: IP from the regs, the current
 * task, the CPU, the sample's period and, for a tracepoint asked for RAW,
 * the raw record perf would write.
 *
 * The counter is made when the channel is configured, in the caller's
 * context and with no lock held (the open op: its creation takes the CPU
 * hotplug lock, which nests outside ch->lock); the permission checks of
 * perf_event_open(), which an in-kernel counter skips, are made before
 * (kring_perm_event()). It counts from then on until it is released, by a
 * work item, again with no lock held: enable and disable only open and
 * close its handler (@stopping), disable waiting for every handler in
 * flight. perf_event_enable() and _disable() would take perf's context
 * mutex under ch->lock, and perf holds that mutex around copies to user
 * memory (a read() of a perf fd), which take mmap_lock, which mmap holds
 * around ch->lock: a cycle. The cost is the handler's call, which returns
 * at once, for each overflow while the channel is disabled.
 *
 * CPU hotplug: perf removes a CPU's counters from it when it goes offline
 * (__perf_event_exit_context()) and never puts them back, for its own
 * per-CPU events as for this one: a per-CPU channel whose CPU went offline
 * records nothing more (its control page says the CPU is offline only
 * for the sources of the capture layer); a counter on an offline CPU
 * cannot be made (-EINVAL at configure).
 */
#include <linux/perf_event.h>
#include <linux/slab.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/cpumask.h>
#include <linux/workqueue.h>
#include <linux/rcupdate.h>
#include <linux/hardirq.h>
#include <linux/err.h>

#include "../compat.h"
#include "../channel.h"
#include "../sample.h"
#include "sources.h"

#define KRING_EVENT_F_ALL	(KRING_EVENT_F_FREQ | KRING_EVENT_F_EXCLUDE_USER | \
				 KRING_EVENT_F_EXCLUDE_HV | KRING_EVENT_F_EXCLUDE_IDLE)

/* perf's default kernel.perf_event_max_sample_rate, if it cannot be read */
#define KRING_EVENT_MAX_FREQ	100000

static struct workqueue_struct *kring_event_wq;

/**
 * struct kring_event - an event channel's counter
 * @ch:		the channel, set at configure (@stopping is set until enable)
 * @pe:		the counter (NULL only while being made)
 * @task:	the followed task (a reference), NULL for a CPU-wide counter
 * @pid_ns:	the owner's pid namespace, for the ids a SAMPLE carries
 * @cpu:	the channel's CPU, -1 for any
 * @raw:	RAW asked for (a tracepoint's raw record)
 * @stopping:	no handler writes: the channel is not enabled
 * @dropped:	overflows that wrote nothing: the buffer's lock held when
 *		an NMI came, or a raw record perf did not give in one piece
 * @free_work:	releases the counter with no lock held (kring_event_free())
 */
struct kring_event {
	struct kring_channel *ch;
	struct perf_event *pe;
	struct task_struct *task;
	struct pid_namespace *pid_ns;
	int cpu;
	bool raw;
	bool stopping;
	atomic64_t dropped;
	struct work_struct free_work;
};

/*
 * The raw record of a tracepoint's sample: perf_tp_event() hands one
 * fragment (the trace entry, its size such that the record with perf's
 * u32 size word ends 8-aligned), marked by PERF_SAMPLE_RAW in
 * sample_flags (6.1: data->raw set with the flag; from 6.3:
 * perf_sample_save_raw_data(), which also computes raw->size and the
 * fragment's padding; data->raw is not initialised without the flag).
 * raw->size is not read: 6.1 computes it only in perf's own output path.
 * Fragments in a chain or copied by a callback are BPF's output, not a
 * tracepoint's: refused.
 */
static bool kring_event_raw(const struct perf_sample_data *data, struct kring_sample_data *d)
{
	const struct perf_raw_record *raw;

	if (!(data->sample_flags & PERF_SAMPLE_RAW))
		return false;
	raw = data->raw;
	if (!raw || !perf_raw_frag_last(&raw->frag) || raw->frag.copy)
		return false;
	d->raw = raw->frag.data;
	d->raw_size = raw->frag.size;
	return true;
}

/*
 * Write @d into the buffer the channel writes into (its own or its
 * set-output target's), under the buffer's write_lock, so that the ring
 * has one writer CPU at a time (a task's counter overflows on whatever
 * CPU the task runs). In NMI (a hardware counter) the lock is only tried,
 * as the producer API does: the NMI may have interrupted its holder on
 * this CPU; a record that cannot be written is counted in @dropped. The
 * timestamp floor is raised as kring_capture_emit() raises it, but not
 * from NMI.
 * Context: preemption or interrupts disabled (the buffer lives until we
 * return: RCU).
 */
static void kring_event_emit(struct kring_event *ev, struct kring_sample_data *d)
{
	struct kring_channel *ch = ev->ch;
	struct kring_buffer *buf = kring_channel_out_buf(ch);
	unsigned long flags;

	if (!buf)
		return;
	d->id = ch->id;
	if (in_nmi()) {
		if (!raw_spin_trylock(&buf->write_lock)) {
			atomic64_inc(&ev->dropped);
			return;
		}
		kring_output_write_sample(&buf->ring, ch->attr.sample_type, d);
		raw_spin_unlock(&buf->write_lock);
		return;
	}
	raw_spin_lock_irqsave(&buf->write_lock, flags);
	kring_output_write_sample(&buf->ring, ch->attr.sample_type, d);
	if (ev->cpu >= 0 || ch->attr.clockid != KRING_CLOCK_LOCAL)
		kring_floor_advance(&buf->ring);
	raw_spin_unlock_irqrestore(&buf->write_lock, flags);
}

/*
 * The counter's overflow handler (and its inherited counters'): perf
 * calls it with preemption or interrupts disabled, in NMI for a hardware
 * counter, on the CPU the event happened on.
 */
static void kring_event_overflow(struct perf_event *pe, struct perf_sample_data *data,
				 struct pt_regs *regs)
{
	struct kring_event *ev = pe->overflow_handler_context;
	struct kring_sample_data d = {};
	struct task_struct *t = current;

	/* Pairs with the WRITE_ONCE() and grace period of kring_event_stop(). */
	if (READ_ONCE(ev->stopping))
		return;
	if (ev->raw && !kring_event_raw(data, &d)) {
		atomic64_inc(&ev->dropped);
		return;
	}
	d.ip = instruction_pointer(regs);
	if (likely(ev->pid_ns == &init_pid_ns)) {
		d.pid = READ_ONCE(t->tgid);
		d.tid = READ_ONCE(t->pid);
	} else {
		d.pid = task_tgid_nr_ns(t, ev->pid_ns);
		d.tid = task_pid_nr_ns(t, ev->pid_ns);
	}
	d.cpu = smp_processor_id();
	d.period = data->period;
	kring_event_emit(ev, &d);
}

/* perf's attr for the channel's @attr (validated by kring_event_check()). */
static void kring_event_attr(const struct kring_attr *attr, struct perf_event_attr *pa)
{
	u64 c0 = attr->config[0];
	bool exclude_kernel = attr->flags & KRING_ATTR_F_EXCLUDE_KERNEL;

	memset(pa, 0, sizeof(*pa));
	pa->type = KRING_EVENT_TYPE(c0);
	pa->size = sizeof(*pa);
	pa->config = attr->config[1];
	pa->inherit = !!(attr->flags & KRING_ATTR_F_INHERIT);
	pa->exclude_kernel = exclude_kernel;
	pa->exclude_callchain_kernel = exclude_kernel;
	pa->exclude_user = !!(c0 & KRING_EVENT_F_EXCLUDE_USER);
	pa->exclude_hv = !!(c0 & KRING_EVENT_F_EXCLUDE_HV);
	pa->exclude_idle = !!(c0 & KRING_EVENT_F_EXCLUDE_IDLE);
	pa->freq = !!(c0 & KRING_EVENT_F_FREQ);
	if (pa->freq)
		pa->sample_freq = attr->config[2];
	else
		pa->sample_period = attr->config[2];
	if (attr->sample_type & KRING_SAMPLE_RAW)
		pa->sample_type = PERF_SAMPLE_RAW;
}

/*
 * config[] bounded before use (uapi/linux/kring.h, block 4): a type of
 * the four, known flags, a period of 1..2^63-1 (perf refuses bit 63) or a
 * frequency of 1..kernel.perf_event_max_sample_rate, no call chains yet
 * (config[3] 0), RAW only for a tracepoint, a CPU or a task.
 */
static int kring_event_check(const struct kring_attr *attr)
{
	u64 c0 = attr->config[0];
	u32 type = KRING_EVENT_TYPE(c0);
	int max_freq;

	if (c0 & ~(KRING_EVENT_F_ALL | 0xffffffffULL))
		return -EINVAL;
	if (type != PERF_TYPE_HARDWARE && type != PERF_TYPE_SOFTWARE &&
	    type != PERF_TYPE_TRACEPOINT && type != PERF_TYPE_HW_CACHE)
		return -EINVAL;
	if (c0 & KRING_EVENT_F_FREQ) {
		if (kring_perm_sysctl("/proc/sys/kernel/perf_event_max_sample_rate",
				      &max_freq) || max_freq < 1)
			max_freq = KRING_EVENT_MAX_FREQ;
		if (!attr->config[2] || attr->config[2] > (u64)max_freq)
			return -EINVAL;
	} else if (!attr->config[2] || (attr->config[2] >> 63)) {
		return -EINVAL;
	}
	if (attr->config[3])
		return -EINVAL;
	if ((attr->sample_type & KRING_SAMPLE_RAW) && type != PERF_TYPE_TRACEPOINT)
		return -EINVAL;
	if (attr->pid == -1 && attr->cpu < 0)
		return -EINVAL;		/* neither a CPU nor a task */
	if (attr->cpu >= 0 && !cpu_online(attr->cpu))
		return -EINVAL;
	return 0;
}

/* The trial's counter, disabled, never overflows. */
static void kring_event_none(struct perf_event *pe, struct perf_sample_data *data,
			     struct pt_regs *regs)
{
}

/*
 * kring_perm_event()'s trial: the same tracepoint with RAW on the caller's
 * own task, made and released at once (disabled: it never counts). The
 * kernel's perf_trace_event_perm() runs in the caller's context and lets
 * it only for an event exempt from the RAW rule per task.
 */
static int kring_event_raw_trial(void *arg)
{
	struct perf_event_attr pa;
	struct perf_event *pe;

	kring_event_attr(arg, &pa);
	pa.inherit = 0;
	pa.disabled = 1;
	pe = perf_event_create_kernel_counter(&pa, -1, current, kring_event_none, NULL);
	if (IS_ERR(pe))
		return PTR_ERR(pe);
	perf_event_release_kernel(pe);
	return 0;
}

static struct task_struct *kring_event_task(pid_t pid)
{
	struct task_struct *task;
	struct pid *p;

	if (pid == -1)
		return NULL;
	if (pid == 0) {
		get_task_struct(current);
		return current;
	}
	p = find_get_pid(pid);
	task = get_pid_task(p, PIDTYPE_PID);
	put_pid(p);
	return task ?: ERR_PTR(-ESRCH);
}

/* Free what kring_event_open() made. Context: process, no lock held. */
static void kring_event_free(struct kring_event *ev)
{
	if (!IS_ERR_OR_NULL(ev->pe))
		perf_event_release_kernel(ev->pe);
	/*
	 * Handlers run with preemption or interrupts off: one that began
	 * before its counter left its CPU has returned after a grace period.
	 */
	synchronize_rcu();
	if (ev->task)
		put_task_struct(ev->task);
	if (ev->pid_ns)
		put_pid_ns(ev->pid_ns);
	kfree(ev);
}

static void kring_event_free_work(struct work_struct *work)
{
	kring_event_free(container_of(work, struct kring_event, free_work));
}

/*
 * Check, then make the counter in the caller's context: perf's
 * own checks inside the creation (a tracepoint's RAW rule,
 * perf_trace_event_perm()) run for the caller as they would in
 * perf_event_open().
 */
static int kring_event_open(const struct kring_attr *attr, void **priv)
{
	bool raw = attr->sample_type & KRING_SAMPLE_RAW;
	struct perf_event_attr pa;
	struct kring_event *ev;
	int ret;

	ret = kring_event_check(attr);
	if (ret)
		return ret;
	ev = kzalloc(sizeof(*ev), GFP_KERNEL_ACCOUNT);
	if (!ev)
		return -ENOMEM;
	ev->cpu = attr->cpu;
	ev->raw = raw;
	ev->stopping = true;
	atomic64_set(&ev->dropped, 0);
	INIT_WORK(&ev->free_work, kring_event_free_work);
	ev->task = kring_event_task(attr->pid);
	if (IS_ERR(ev->task)) {
		ret = PTR_ERR(ev->task);
		ev->task = NULL;
		goto err;
	}
	ev->pid_ns = get_pid_ns(task_active_pid_ns(current));
	ret = kring_perm_event(attr, ev->task, raw, kring_event_raw_trial, (void *)attr);
	if (ret)
		goto err;
	kring_event_attr(attr, &pa);
	ev->pe = perf_event_create_kernel_counter(&pa, attr->cpu, ev->task,
						  kring_event_overflow, ev);
	if (IS_ERR(ev->pe)) {
		ret = PTR_ERR(ev->pe);
		goto err;
	}
	*priv = ev;
	return 0;

err:
	kring_event_free(ev);
	return ret;
}

static void kring_event_close(void *priv)
{
	kring_event_free(priv);
}

static int kring_event_configure(struct kring_channel *ch)
{
	struct kring_event *ev = ch->source_priv;

	if (WARN_ON_ONCE(!ev))
		return -EINVAL;
	ev->ch = ch;
	ch->follow_task = ev->task;
	return 0;
}

/* The handler writes from now on (its READ_ONCE() pairs with this store). */
static int kring_event_start(struct kring_channel *ch)
{
	struct kring_event *ev = ch->source_priv;

	WRITE_ONCE(ev->stopping, false);
	return 0;
}

/*
 * Close the handler (and its inherited counters'), and wait for those in
 * flight: handlers run with preemption or interrupts off, an RCU read
 * side; after the grace period every handler that read @stopping clear has
 * returned, and every later one reads it set (the store is ordered before
 * the grace period begins).
 */
static void kring_event_stop(struct kring_channel *ch)
{
	struct kring_event *ev = ch->source_priv;

	WRITE_ONCE(ev->stopping, true);
	synchronize_rcu();
}

/*
 * ch->lock held, stopped: the counter is released by a work item, since
 * its release takes the CPU hotplug lock (static keys), which nests
 * outside ch->lock, and perf's context mutex (kring_event_stop()).
 */
static void kring_event_release(struct kring_channel *ch)
{
	struct kring_event *ev = ch->source_priv;

	ch->source_priv = NULL;
	ch->follow_task = NULL;
	if (ev)
		queue_work(kring_event_wq, &ev->free_work);
}

int kring_event_module_init(void)
{
	kring_event_wq = alloc_workqueue("kring_event", WQ_UNBOUND, 0);
	return kring_event_wq ? 0 : -ENOMEM;
}

/* Every channel is gone: wait for the releases they queued. */
void kring_event_module_exit(void)
{
	destroy_workqueue(kring_event_wq);
}

const struct kring_source_ops kring_event_source = {
	.name = "event",
	.caps = KRING_SRC_FOLLOWS_TASKS | KRING_SRC_REDIRECTABLE,
	.features = KRING_FEAT_EVENT,
	.open = kring_event_open,
	.close = kring_event_close,
	.configure = kring_event_configure,
	.start = kring_event_start,
	.stop = kring_event_stop,
	.release = kring_event_release,
};
