// SPDX-License-Identifier: GPL-2.0
/*
 * The synthetic source: a generator thread bound to the channel's CPU that
 * writes SAMPLE records whose RAW payload (struct kring_synth_payload)
 * carries the record's sequence number and a checksum of its bytes, so a
 * consumer can prove that every record arrived intact or was reported lost.
 *
 * With KRING_SYNTH_F_NEST an hrtimer on the same CPU writes records from
 * hardirq context too, and every eighth task-context record holds its
 * reservation open for a while (interrupts enabled) so that timer writes
 * land between its begin and its end: the nesting the ring core must get
 * right, exercised for real. When the timer lands is up to the host, so
 * each such record also forces one nested write: it queues an irq_work on
 * its own CPU (a self-IPI, taken as soon as interrupts are on) and does
 * not end before that work has written its record, whenever the timer
 * fires. KRING_SYNTH_F_SOFTIRQ adds a timer_list on
 * that CPU writing from softirq context every jiffy (its writes, on irq
 * exit, can land inside the task's open reservations, and the hrtimer's
 * inside its own): task, softirq and hardirq writers nest three deep.
 *
 * The ring wants one writer CPU at a time: both writers write only while
 * they run on the channel's CPU (checked with preemption off). The thread
 * is a per-CPU kthread and is parked while its CPU is offline, as
 * smpboot's threads are: a CPU hotplug callback parks it before the CPU
 * goes (it stops its timers first) and unparks it, bound again, once the
 * CPU is back. Hotplug never has to break its affinity (which PREEMPT_RT's
 * migrate_disable() accounting does not survive: a thread that rebinds
 * itself there trips affine_move_task()'s WARN).
 *
 * A test and benchmark source: it needs CAP_PERFMON or CAP_SYS_ADMIN
 * unless kring.test_sources=1 (perm.c).
 */
#include <linux/kthread.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/delay.h>
#include <linux/sched.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/cpumask.h>
#include <linux/cpuhotplug.h>
#include <linux/list.h>
#include <linux/mutex.h>

#include <linux/kring_test.h>

#include "../compat.h"
#include "../channel.h"
#include "sources.h"

#define KRING_SYNTH_DEFAULT_PAYLOAD	64
#define KRING_SYNTH_MAX_PAYLOAD		32768
#define KRING_SYNTH_NEST_PERIOD_NS	(100 * NSEC_PER_USEC)
#define KRING_SYNTH_NEST_WINDOW_US	50
#define KRING_SYNTH_MAX_LAG_NS		(10 * NSEC_PER_MSEC)
/*
 * How long an open record waits for its forced nested write. A self-IPI
 * arrives at once; an architecture without one runs irq_work from the next
 * tick. Only a lost interrupt reaches this, and the record then ends
 * without that nest.
 */
#define KRING_SYNTH_NEST_WAIT_NS	(100 * NSEC_PER_MSEC)

struct kring_synth {
	struct kring_channel *ch;
	struct task_struct *thread;
	struct list_head node;	/* on kring_synth_threads while ->thread runs */
	struct hrtimer timer;
	struct irq_work nest_work;	/* the forced nested write */
	struct timer_list soft_timer;
	bool soft_stop;		/* the softirq writer does not re-arm */
	u64 rate;
	u32 payload;
	u64 flags;
	u64 limit;
	/*
	 * Records every writer (task, hrtimer, irq_work, softirq) began since
	 * the thread started, against @limit: config[3] counts them all, so
	 * once the ring has handed out @limit sequence numbers no writer
	 * begins another.
	 */
	atomic64_t emitted;
	/*
	 * Payload scratch, one per writer context: the thread's records can be
	 * interrupted by the softirq's and the timer's, the softirq's by the
	 * timer's, never the other way round. The hardirq writers (hrtimer and
	 * irq_work) never interrupt each other and share ->timer_buf.
	 */
	u8 *task_buf;
	u8 *soft_buf;
	u8 *timer_buf;
};

/*
 * The generators that run, for the hotplug callbacks that park and unpark
 * them. Taken after cpus_read_lock() (ENABLE) or without it (release);
 * the callbacks take it with the hotplug lock held for writing.
 */
static LIST_HEAD(kring_synth_threads);
static DEFINE_MUTEX(kring_synth_mutex);
static int kring_synth_hp_state;

/* Fill @buf with the payload of record @seq (struct kring_synth_payload). */
static void kring_synth_fill(u8 *buf, u32 len, u64 seq, u32 cpu)
{
	struct kring_synth_payload *p = (struct kring_synth_payload *)buf;
	u8 *data = buf + sizeof(*p);
	u32 i, n = len - sizeof(*p);

	for (i = 0; i < n; i++)
		data[i] = kring_synth_byte(seq, i);
	p->seq = seq;
	p->cpu = cpu;
	p->len = len;
	p->checksum = kring_synth_checksum(seq, data, n);
}

/*
 * Force one nested write: queue the irq_work on this CPU and wait,
 * interrupts enabled, until its callback has run (irq_work_sync() without
 * sleeping: the caller holds a reservation with preemption disabled).
 */
static void kring_synth_nest_now(struct kring_synth *sy)
{
	u64 end = ktime_get_ns() + KRING_SYNTH_NEST_WAIT_NS;

	irq_work_queue(&sy->nest_work);
	while (irq_work_is_busy(&sy->nest_work) && ktime_get_ns() < end)
		cpu_relax();
}

/*
 * Write one record into the channel's ring. @window holds the reservation
 * open for a while, interrupts enabled, so that timer records nest in it,
 * and forces one nested write in it. Context: preemption disabled.
 */
static int kring_synth_emit(struct kring_synth *sy, u8 *buf, bool window)
{
	struct kring_channel *ch = sy->ch;
	u64 type = ch->attr.sample_type;
	struct kring_sample_data d = {};
	struct kring_output_handle h;
	struct kring_buffer *b;
	int ret;

	/*
	 * The ring's one writer CPU: the thread is parked and the timers are
	 * cancelled before their CPU goes, so no writer runs elsewhere; this
	 * keeps it so should one ever do.
	 */
	if (smp_processor_id() != ch->attr.cpu)
		return -EXDEV;
	rcu_read_lock();
	b = rcu_dereference(ch->buf);
	if (!b) {
		rcu_read_unlock();
		return -ENODEV;
	}
	/* Past the limit: refused before the ring hands out a number. */
	if (sy->limit && atomic64_inc_return(&sy->emitted) > sy->limit) {
		ret = -ENOSPC;
		goto out;
	}
	/* The channel's ring clock stamps the record. */
	ret = kring_output_begin(&h, &b->ring, kring_sample_size(type, sy->payload), 0);
	if (ret)
		goto out;
	if (window) {	/* the ring counts the records nested in here */
		kring_synth_nest_now(sy);
		udelay(KRING_SYNTH_NEST_WINDOW_US);
	}
	d.id = ch->id;
	d.ip = 0;	/* no code address: nothing of the kernel's layout leaks */
	d.pid = task_tgid_nr(current);
	d.tid = task_pid_nr(current);
	d.time = h.time;
	d.cpu = smp_processor_id();
	d.period = 1;
	d.raw = buf;
	d.raw_size = sy->payload;
	kring_synth_fill(buf, sy->payload, h.seq, d.cpu);
	kring_output_sample(&h, type, &d);
	kring_output_end(&h);
out:
	rcu_read_unlock();
	return ret;
}

/* True when the ring has no unreported loss left (or is not mapped). */
static bool kring_synth_flush_lost(struct kring_synth *sy)
{
	struct kring_buffer *b;
	bool done = true;

	preempt_disable();
	/* The ring's one writer CPU, as in kring_synth_emit(). */
	if (smp_processor_id() != sy->ch->attr.cpu) {
		preempt_enable();
		return false;
	}
	rcu_read_lock();
	b = rcu_dereference(sy->ch->buf);
	if (b)
		done = kring_ring_flush_lost(&b->ring);
	rcu_read_unlock();
	preempt_enable();
	return done;
}

/* The forced nested writer, in hardirq context on the channel's CPU. */
static void kring_synth_nest_work(struct irq_work *w)
{
	struct kring_synth *sy = container_of(w, struct kring_synth, nest_work);

	kring_synth_emit(sy, sy->timer_buf, false);
}

static enum hrtimer_restart kring_synth_timer(struct hrtimer *t)
{
	struct kring_synth *sy = container_of(t, struct kring_synth, timer);

	int ret = kring_synth_emit(sy, sy->timer_buf, false);

	/*
	 * Off its CPU (see kring_synth_emit()): stop; the thread re-arms it.
	 * At the limit: stop for good.
	 */
	if (ret == -EXDEV || ret == -ENOSPC)
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(KRING_SYNTH_NEST_PERIOD_NS));
	return HRTIMER_RESTART;
}

/*
 * Stop the softirq writer: after timer_delete_sync() its callback is not
 * running and, having seen ->soft_stop, did not re-arm it.
 */
static void kring_synth_soft_cancel(struct kring_synth *sy)
{
	WRITE_ONCE(sy->soft_stop, true);
	timer_delete_sync(&sy->soft_timer);
}

/* The softirq writer: one record per jiffy on the channel's CPU. */
static void kring_synth_soft(struct timer_list *t)
{
	struct kring_synth *sy = kring_timer_container_of(sy, t, soft_timer);
	int ret;

	/*
	 * A ring's writers run with preemption disabled (kring_output_begin()
	 * checks): softirq context is preemptible on PREEMPT_RT, where the
	 * timer softirq runs in a thread.
	 */
	preempt_disable();
	ret = kring_synth_emit(sy, sy->soft_buf, false);
	preempt_enable();
	/* Off its CPU (see kring_synth_emit()): stop; the thread re-arms it. */
	if (ret == -EXDEV || ret == -ENOSPC)
		return;
	if (!READ_ONCE(sy->soft_stop))
		mod_timer(&sy->soft_timer, jiffies + 1);
}

/* Stop the thread's timers: none runs or is queued after this. */
static void kring_synth_quiesce(struct kring_synth *sy, bool nest, bool soft)
{
	if (nest) {
		hrtimer_cancel(&sy->timer);
		irq_work_sync(&sy->nest_work);	/* one that outlived its wait */
	}
	if (soft)
		kring_synth_soft_cancel(sy);
}

static int kring_synth_thread(void *arg)
{
	struct kring_synth *sy = arg;
	bool nest = sy->flags & KRING_SYNTH_F_NEST;
	bool soft = sy->flags & KRING_SYNTH_F_SOFTIRQ;
	ktime_t next = ktime_get();
	u64 n = 0;
	int ret;

	while (!kthread_should_stop()) {
		if (kthread_should_park()) {
			/* Its CPU goes offline: nothing of ours may stay there. */
			kring_synth_quiesce(sy, nest, soft);
			kthread_parkme();
			WRITE_ONCE(sy->soft_stop, false);	/* re-armed below */
			continue;
		}
		/* Every writer's records count (->emitted): the timers' too. */
		if (sy->limit && atomic64_read(&sy->emitted) >= sy->limit) {
			if (nest) {
				hrtimer_cancel(&sy->timer);
				nest = false;
			}
			if (soft) {
				kring_synth_soft_cancel(sy);
				soft = false;
			}
			/* Report the last losses, then idle until stopped. */
			if (!kring_synth_flush_lost(sy)) {
				usleep_range(1000, 2000);
				continue;
			}
			set_current_state(TASK_INTERRUPTIBLE);
			if (!kthread_should_stop() && !kthread_should_park())
				schedule();
			__set_current_state(TASK_RUNNING);
			continue;
		}
		if (nest && !hrtimer_active(&sy->timer))
			hrtimer_start(&sy->timer, ns_to_ktime(KRING_SYNTH_NEST_PERIOD_NS),
				      HRTIMER_MODE_REL_PINNED_HARD);
		/*
		 * TIMER_PINNED: queued on this CPU. mod_timer() is safe against
		 * the callback re-arming it meanwhile.
		 */
		if (soft && !timer_pending(&sy->soft_timer))
			mod_timer(&sy->soft_timer, jiffies + 1);

		preempt_disable();
		ret = kring_synth_emit(sy, sy->task_buf, nest && !(n & 7));
		preempt_enable();
		if (ret == -ENODEV || ret == -EXDEV) {	/* not mapped, or off its CPU */
			usleep_range(1000, 2000);
			continue;
		}
		n++;
		if (sy->rate) {
			ktime_t now = ktime_get();

			next = ktime_add_ns(next, div64_u64(NSEC_PER_SEC, sy->rate));
			if (ktime_after(next, now)) {
				set_current_state(TASK_INTERRUPTIBLE);
				schedule_hrtimeout(&next, HRTIMER_MODE_ABS);
				continue;
			}
			/*
			 * Behind: a rate this CPU cannot sustain, or time spent
			 * off the CPU. Do not burst to catch up, and fall
			 * through to yield like the unpaced loop: a thread that
			 * never yields locks its CPU up and stalls hotplug.
			 */
			if (ktime_sub(now, next) > KRING_SYNTH_MAX_LAG_NS)
				next = now;
		}
		if (!(n & 31))
			cond_resched();
	}
	kring_synth_quiesce(sy, sy->flags & KRING_SYNTH_F_NEST, soft);
	return 0;
}

static int kring_synth_configure(struct kring_channel *ch)
{
	const struct kring_attr *attr = &ch->attr;
	struct kring_synth *sy;
	u64 payload = attr->config[1] ? attr->config[1] : KRING_SYNTH_DEFAULT_PAYLOAD;

	if (attr->cpu < 0)
		return -EINVAL;		/* the generator runs on one CPU */
	if (!cpu_online(attr->cpu))
		return -ENODEV;
	if (payload < sizeof(struct kring_synth_payload) || payload > KRING_SYNTH_MAX_PAYLOAD)
		return -EINVAL;
	if (attr->config[2] & ~(KRING_SYNTH_F_NEST | KRING_SYNTH_F_SOFTIRQ))
		return -EINVAL;
	sy = kzalloc(sizeof(*sy), GFP_KERNEL_ACCOUNT);
	if (!sy)
		return -ENOMEM;
	sy->task_buf = kmalloc(payload, GFP_KERNEL_ACCOUNT);
	sy->soft_buf = kmalloc(payload, GFP_KERNEL_ACCOUNT);
	sy->timer_buf = kmalloc(payload, GFP_KERNEL_ACCOUNT);
	if (!sy->task_buf || !sy->soft_buf || !sy->timer_buf) {
		kfree(sy->task_buf);
		kfree(sy->soft_buf);
		kfree(sy->timer_buf);
		kfree(sy);
		return -ENOMEM;
	}
	sy->ch = ch;
	sy->rate = attr->config[0];
	sy->payload = payload;
	sy->flags = attr->config[2];
	sy->limit = attr->config[3];
	/* A hard timer on PREEMPT_RT too: it must interrupt the thread's writes. */
	kring_hrtimer_setup(&sy->timer, kring_synth_timer, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_PINNED_HARD);
	/* Hard: on PREEMPT_RT too it runs in hardirq, not in a thread. */
	sy->nest_work = IRQ_WORK_INIT_HARD(kring_synth_nest_work);
	timer_setup(&sy->soft_timer, kring_synth_soft, TIMER_PINNED);
	ch->source_priv = sy;
	return 0;
}

static int kring_synth_start(struct kring_channel *ch)
{
	struct kring_synth *sy = ch->source_priv;
	struct task_struct *t;

	if (!cpu_online(ch->attr.cpu))
		return -ENODEV;
	WRITE_ONCE(sy->soft_stop, false);
	/* The limit counts from each start; no writer runs before the thread. */
	atomic64_set(&sy->emitted, 0);
	t = kthread_create_on_cpu(kring_synth_thread, sy, ch->attr.cpu, "kring_synth/%u");
	if (IS_ERR(t))
		return PTR_ERR(t);
	sy->thread = t;
	/* Our caller holds cpus_read_lock(): the CPU stays until it is listed. */
	mutex_lock(&kring_synth_mutex);
	list_add(&sy->node, &kring_synth_threads);
	mutex_unlock(&kring_synth_mutex);
	wake_up_process(t);
	return 0;
}

static void kring_synth_stop(struct kring_channel *ch)
{
	struct kring_synth *sy = ch->source_priv;

	if (sy->thread) {
		/* Unlisted first: no callback parks or unparks it after this. */
		mutex_lock(&kring_synth_mutex);
		list_del(&sy->node);
		mutex_unlock(&kring_synth_mutex);
		/* Parked (its CPU offline): kthread_stop() unparks it to end. */
		kthread_stop(sy->thread);
		sy->thread = NULL;
	}
}

/*
 * CPU hotplug, with the hotplug lock held for writing: park the generators
 * of a CPU before it goes, on that CPU (teardown of CPUHP_AP_ONLINE_DYN);
 * unpark them, bound to it again, once it is back. Bound again by us: a
 * generator that woke after its CPU began to go, before it was parked,
 * was moved to another CPU with its mask widened (a kthread that is not
 * per-CPU may not stay on a dying CPU), and kthread_unpark() restores the
 * binding of smpboot's per-CPU threads only. Parked, it is not running,
 * so its mask changes under no migrate-disabled section of its own.
 */
static int kring_synth_cpu_event(unsigned int cpu, bool online)
{
	struct kring_synth *sy;

	mutex_lock(&kring_synth_mutex);
	list_for_each_entry(sy, &kring_synth_threads, node) {
		if (sy->ch->attr.cpu != cpu)
			continue;
		if (online) {
			set_cpus_allowed_ptr(sy->thread, cpumask_of(cpu));
			kthread_unpark(sy->thread);
		} else {
			kthread_park(sy->thread);
		}
	}
	mutex_unlock(&kring_synth_mutex);
	return 0;
}

static int kring_synth_cpu_online(unsigned int cpu)
{
	return kring_synth_cpu_event(cpu, true);
}

static int kring_synth_cpu_offline(unsigned int cpu)
{
	return kring_synth_cpu_event(cpu, false);
}

/**
 * kring_synth_module_init() - register the generators' hotplug callbacks
 *
 * Return: 0, or the error of cpuhp_setup_state_nocalls().
 */
int kring_synth_module_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "kring/synth:online",
					kring_synth_cpu_online, kring_synth_cpu_offline);
	if (ret < 0)
		return ret;
	kring_synth_hp_state = ret;
	return 0;
}

void kring_synth_module_exit(void)
{
	if (kring_synth_hp_state > 0)
		cpuhp_remove_state_nocalls(kring_synth_hp_state);
	kring_synth_hp_state = 0;
}

static void kring_synth_release(struct kring_channel *ch)
{
	struct kring_synth *sy = ch->source_priv;

	kfree(sy->task_buf);
	kfree(sy->soft_buf);
	kfree(sy->timer_buf);
	kfree(sy);
	ch->source_priv = NULL;
}

/* struct kring_synth_payload, the start of every synthetic SAMPLE's RAW data. */
static const struct kring_format_field kring_synth_fields[] = {
	KRING_FORMAT_FIELD(struct kring_synth_payload, seq, __u64),
	KRING_FORMAT_FIELD(struct kring_synth_payload, cpu, __u32),
	KRING_FORMAT_FIELD(struct kring_synth_payload, len, __u32),
	KRING_FORMAT_FIELD(struct kring_synth_payload, checksum, __u64),
};

static const struct kring_format kring_synth_format = {
	.name = "kring_synthetic",
	.type = KRING_RECORD_SAMPLE,
	.size = sizeof(struct kring_synth_payload),
	.fields = kring_synth_fields,
	.nr_fields = ARRAY_SIZE(kring_synth_fields),
	.print_fmt =
		"\"seq=%llu cpu=%u len=%u\", REC->seq, REC->cpu, REC->len",
};

static const struct kring_format * const kring_synth_formats[] = {
	&kring_synth_format, NULL,
};

const struct kring_source_ops kring_synthetic_source = {
	.name = "synthetic",
	.caps = KRING_SRC_TEST_ONLY,
	.features = KRING_FEAT_SYNTHETIC,
	.sample_type = KRING_SAMPLE_RAW,
	.formats = kring_synth_formats,
	.configure = kring_synth_configure,
	.start = kring_synth_start,
	.stop = kring_synth_stop,
	.release = kring_synth_release,
};
