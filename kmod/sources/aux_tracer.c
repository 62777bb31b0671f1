// SPDX-License-Identifier: GPL-2.0
/*
 * KRING_SOURCE_AUX_TRACER: an emulated hardware tracer (a PT/ETM-like unit)
 * writing a packet stream straight into the channel's AUX area through the
 * exported AUX producer API, as a trace driver would.
 *
 * CPU mode (cpu = N, pid = -1): every millisecond an hrtimer pinned to
 * CPU N "runs the unit": it begins an AUX extent, writes the packets of
 * that millisecond (a SYNC packet first, another every config[2] packets,
 * DATA packets between; struct kring_aux_packet in uapi/linux/kring_test.h,
 * described to consumers as the format kring_aux_packet) and ends the
 * extent. When the extent is full the unit stops (perf's pmu
 * stop): the rest of the millisecond's packets are dropped, their sequence
 * numbers skipped, and the extent's AUX record carries TRUNCATED; the next
 * tick starts it again (pmu start) with a SYNC packet. So the discontinuity
 * is real and a consumer sees it in the packet sequence. When CPU N goes
 * offline the unit stops there and the channel's control page says
 * KRING_CTL_F_CPU_OFFLINE (kmod/capture.c's hotplug walk); it starts again
 * when the CPU returns.
 *
 * Task mode (pid = P, cpu = -1 or N; kmod/capture.c follows P and, with
 * inherit, its children): the unit traces only while a followed task runs,
 * as perf starts and stops a per-thread PT event at context switches. A
 * followed task switched in starts the unit on that CPU; every tick that
 * interrupts it and the switch that takes it off the CPU write the packets
 * of the time it ran since (config[0] per millisecond of run time, at most
 * four ticks' worth per extent) as one extent, their times spread over
 * that run time. The first start of each followed task after an enable
 * writes an ITRACE_START record with its pid/tid. Writers on different CPUs
 * (ticks, context switches) are serialised by tr->lock, which nests inside
 * the scheduler's rq lock and is taken with irqs off.
 *
 * Control (disable, KRING_IOC_AUX_PAUSE/SNAPSHOT) first marks the unit
 * halted under tr->lock, then cancels the timers, which waits for a running
 * tick: after the ioctl returns no packet is being written, and none is
 * until KRING_IOC_AUX_RESUME (or the next enable). In snapshot mode every
 * stop publishes aux_head with an OVERWRITE record.
 */
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/sched.h>

#include <linux/kring_test.h>

#include "../compat.h"
#include "../capture.h"
#include "../aux.h"
#include "sources.h"

#define KRING_AUX_TICK_NS	NSEC_PER_MSEC
#define KRING_AUX_MAX_PER_TICK	4096
#define KRING_AUX_MAX_PAYLOAD	4096
#define KRING_AUX_MAX_TICKS	4	/* task mode: run time one extent covers */
/*
 * Bytes of packets one tick builds (in hard irq context) and so, times
 * KRING_AUX_MAX_TICKS, the most one context switch writes with the
 * runqueue lock held: configurations beyond it are refused.
 */
#define KRING_AUX_MAX_TICK_BYTES	16384
#define KRING_AUX_DEF_PER_TICK	64	/* config[0] 0 */
#define KRING_AUX_DEF_PAYLOAD	32	/* config[1] 0 */
#define KRING_AUX_DEF_SYNC	16	/* config[2] 0 */
#define KRING_AUX_PKT_HDR	((u32)sizeof(struct kring_aux_packet))

struct kring_aux_tracer;

/* The unit on one CPU. */
struct kring_aux_tracer_cpu {
	struct hrtimer timer;
	struct kring_aux_tracer *tr;
	unsigned int cpu;
	u64 since;		/* task mode: tracing the task since, 0 = not */
	u64 rem;		/* task mode: run time not yet turned into packets */
};

struct kring_aux_tracer {
	struct kring_capture cap;	/* used when @follow */
	struct kring_channel *ch;
	bool task_mode;
	bool follow;		/* @cap is used: task mode, or CPU mode's hotplug */
	int cpu;		/* CPU mode: the unit's CPU */
	raw_spinlock_t lock;	/* task mode writers; see the comment on top */
	bool halted;		/* under @lock: stopped, paused or snapshotting */
	u64 seq;		/* next packet sequence number */
	u64 limit;		/* stop after this many packets, 0 = never */
	u32 per_tick;
	u32 payload;
	u32 sync_every;
	/* ITRACE_START written for these tids (-1: CPU mode); see _started() */
	pid_t started[KRING_FOLLOW_MAX];
	unsigned int nr_started;
	bool paused;		/* KRING_IOC_AUX_PAUSE */
	u8 *pkt;		/* one packet being built */
	struct kring_aux_tracer_cpu *cpus;	/* nr_cpu_ids of them */
};

/* An ITRACE_START record: tracing starts, CPU-wide (pid/tid -1) or for @t. */
static bool kring_aux_tracer_itrace(struct kring_aux_tracer *tr, struct task_struct *t)
{
	struct kring_itrace_start_record rec;
	struct kring_output_handle h;
	struct kring_buffer *buf;
	unsigned long flags;

	/* Sidebands redirected into this buffer write on other CPUs. */
	buf = kring_out_lock(tr->ch, &flags);
	if (!buf)
		return false;
	if (kring_output_begin(&h, &buf->ring, sizeof(rec), 0)) {
		kring_out_unlock(buf, flags);
		return false;
	}
	kring_output_header(&h, KRING_RECORD_ITRACE_START, 0);
	rec.pid = (u32)-1;
	rec.tid = (u32)-1;
	if (t)
		kring_capture_ids(&tr->cap, t, &rec.pid, &rec.tid);
	rec.time = h.time;
	rec.seq = h.seq;
	kring_output_copy(&h, &rec.pid, sizeof(rec) - sizeof(rec.header));
	kring_output_end(&h);
	kring_out_unlock(buf, flags);
	return true;
}

/*
 * Tracing starts for @t (NULL: the CPU): the first time since the enable,
 * say so with an ITRACE_START, once per task as perf does once per
 * (inherited) event. Task mode holds tr->lock; CPU mode's only writer is
 * its CPU's tick. Past KRING_FOLLOW_MAX tasks, later ones are not named.
 */
static void kring_aux_tracer_started(struct kring_aux_tracer *tr, struct task_struct *t)
{
	pid_t tid = t ? task_pid_nr(t) : -1;
	unsigned int i;

	for (i = 0; i < tr->nr_started; i++)
		if (tr->started[i] == tid)
			return;
	if (tr->nr_started < ARRAY_SIZE(tr->started) && kring_aux_tracer_itrace(tr, t))
		tr->started[tr->nr_started++] = tid;
}

static u32 kring_aux_tracer_build(struct kring_aux_tracer *tr, bool sync, unsigned int cpu,
				  u64 time)
{
	struct kring_aux_packet *p = (struct kring_aux_packet *)tr->pkt;
	u32 i, len = sync ? KRING_AUX_PKT_HDR : KRING_AUX_PKT_HDR + tr->payload;

	p->magic = sync ? KRING_AUX_SYNC_MAGIC : 0;
	p->type = sync ? KRING_AUX_PKT_SYNC : KRING_AUX_PKT_DATA;
	p->len = len;
	p->cpu = cpu;
	p->seq = tr->seq;
	p->time = time;
	for (i = 0; i < len - KRING_AUX_PKT_HDR; i++)
		tr->pkt[KRING_AUX_PKT_HDR + i] = kring_synth_byte(tr->seq, i);
	return len;
}

/*
 * One extent of @n packets written on @cpu, for task @t (task mode) or the
 * CPU (NULL). @span: the run time in ns the packets stand for, ending at
 * @at (ktime_get_mono_fast_ns()); their times are spread evenly over it
 * (when the traced code ran), or, with 0, read as each packet is written.
 * False once the packet limit is reached.
 */
static bool kring_aux_tracer_emit(struct kring_aux_tracer *tr, u64 n, unsigned int cpu,
				  struct task_struct *t, u64 span, u64 at)
{
	struct kring_aux_handle h;
	u64 (*clock)(void);
	u64 off = 0, i, end = 0;
	u32 len;

	if (tr->limit && tr->seq >= tr->limit)
		return false;
	kring_aux_tracer_started(tr, t);
	/* Not enabled yet, or no AUX area mapped: the unit does not run. */
	if (!n || kring_aux_output_begin(&h, tr->ch))
		return true;
	/* Packets carry the channel's record clock, as AUX records do. */
	clock = h.buf->ring.clock ?: kring_clock_ns;
	if (span) {
		/*
		 * Packets carry the record clock, the span was measured on the
		 * monotonic one: read both, and go back by the time since @at.
		 * A writer held up between the flush and here (an interrupt, a
		 * descheduled virtual CPU) must not move the packets past the
		 * run time they stand for.
		 */
		end = clock();
		end -= min(ktime_get_mono_fast_ns() - at, end);
	}
	if (tr->limit)
		n = min(n, tr->limit - tr->seq);
	for (i = 0; i < n; i++) {
		bool sync = i == 0 || !(tr->seq % tr->sync_every);

		len = sync ? KRING_AUX_PKT_HDR : KRING_AUX_PKT_HDR + tr->payload;
		if (len > h.size - off) {
			/* Full: the unit stops, this extent's other packets are lost. */
			kring_aux_output_flag(&h, KRING_AUX_FLAG_TRUNCATED);
			tr->seq += n - i;
			break;
		}
		kring_aux_tracer_build(tr, sync, cpu,
				       span ? end - span + div64_u64(span * (i + 1), n) : clock());
		kring_aux_output_copy(&h, off, tr->pkt, len);
		off += len;
		tr->seq++;
	}
	kring_aux_output_end(&h, off);
	return !(tr->limit && tr->seq >= tr->limit);
}

/*
 * Task mode, tr->lock held: the packets of the time the followed task ran
 * on @tc's CPU since the last extent; @now 0 when it was not traced there.
 */
static void kring_aux_tracer_flush(struct kring_aux_tracer_cpu *tc, u64 now,
				   struct task_struct *t)
{
	struct kring_aux_tracer *tr = tc->tr;
	u64 span, n;

	if (!tc->since)
		return;
	span = min(now - tc->since, (u64)KRING_AUX_MAX_TICKS * KRING_AUX_TICK_NS);
	n = div64_u64_rem(span * tr->per_tick + tc->rem, KRING_AUX_TICK_NS, &tc->rem);
	kring_aux_tracer_emit(tr, n, tc->cpu, t, span, now);
	tc->since = now;
}

static enum hrtimer_restart kring_aux_tracer_timer(struct hrtimer *t)
{
	struct kring_aux_tracer_cpu *tc = container_of(t, struct kring_aux_tracer_cpu, timer);
	struct kring_aux_tracer *tr = tc->tr;
	unsigned long flags;
	u64 t0;

	if (smp_processor_id() != tc->cpu)
		return HRTIMER_NORESTART;
	/* A throttled tick writes nothing: the next extent starts with SYNC. */
	if (!kring_throttle_enter(&t0)) {
		/* This tick and the ones skipped count as throttled. */
		atomic64_add(kring_throttle_defer(t, KRING_AUX_TICK_NS, 0), &tr->ch->throttled);
		return HRTIMER_RESTART;
	}
	if (!tr->task_mode) {
		if (!kring_aux_tracer_emit(tr, tr->per_tick, tc->cpu, NULL, 0, 0)) {
			kring_throttle_exit(t0);
			return HRTIMER_NORESTART;
		}
	} else {
		raw_spin_lock_irqsave(&tr->lock, flags);
		if (!tr->halted && kring_capture_follows(&tr->cap, current)) {
			u64 now = ktime_get_mono_fast_ns();

			if (tc->since)
				kring_aux_tracer_flush(tc, now, current);
			else
				tc->since = now;	/* was running before the start */
		} else {
			tc->since = 0;
		}
		raw_spin_unlock_irqrestore(&tr->lock, flags);
	}
	kring_throttle_exit(t0);
	hrtimer_forward_now(t, ns_to_ktime(KRING_AUX_TICK_NS));
	return HRTIMER_RESTART;
}

/* Task mode: the unit follows the task on and off the CPU (rq lock held). */
static void kring_aux_tracer_switch(struct kring_capture *cap, bool preempt,
				    struct task_struct *prev, struct task_struct *next,
				    unsigned int prev_state)
{
	struct kring_aux_tracer *tr = container_of(cap, struct kring_aux_tracer, cap);
	unsigned int cpu = smp_processor_id();
	struct kring_aux_tracer_cpu *tc = &tr->cpus[cpu];
	bool out, in;
	u64 now;

	if (cap->cpu >= 0 && cap->cpu != cpu)
		return;
	out = kring_capture_follows(cap, prev);
	in = kring_capture_follows(cap, next);
	if (!out && !in)
		return;
	raw_spin_lock(&tr->lock);
	if (!tr->halted) {
		now = ktime_get_mono_fast_ns();
		if (out)
			kring_aux_tracer_flush(tc, now, prev);	/* pmu stop */
		tc->since = in ? now : 0;			/* pmu start */
		if (in)
			kring_aux_tracer_started(tr, next);
	}
	raw_spin_unlock(&tr->lock);
}

/* On the timer's CPU (IPI): a pinned timer stays there. */
static void kring_aux_tracer_arm(void *arg)
{
	struct kring_aux_tracer_cpu *tc = arg;

	hrtimer_start(&tc->timer, ns_to_ktime(KRING_AUX_TICK_NS), HRTIMER_MODE_REL_PINNED_HARD);
}

static void kring_aux_tracer_cpu_online(struct kring_capture *cap, unsigned int cpu)
{
	struct kring_aux_tracer *tr = container_of(cap, struct kring_aux_tracer, cap);

	if (!READ_ONCE(tr->halted) && (cap->cpu < 0 || cap->cpu == (int)cpu))
		kring_aux_tracer_arm(&tr->cpus[cpu]);
}

static void kring_aux_tracer_cpu_offline(struct kring_capture *cap, unsigned int cpu)
{
	struct kring_aux_tracer *tr = container_of(cap, struct kring_aux_tracer, cap);

	hrtimer_cancel(&tr->cpus[cpu].timer);
	tr->cpus[cpu].since = 0;
}

static const struct kring_capture_ops kring_aux_tracer_capture_ops = {
	.sched_switch = kring_aux_tracer_switch,
	.cpu_online = kring_aux_tracer_cpu_online,
	.cpu_offline = kring_aux_tracer_cpu_offline,
};

/* CPU mode: hotplug only, no hook on every context switch. */
static const struct kring_capture_ops kring_aux_tracer_cpu_ops = {
	.cpu_online = kring_aux_tracer_cpu_online,
	.cpu_offline = kring_aux_tracer_cpu_offline,
};

/* Start the unit (cpus_read_lock() and ch->lock held). */
static int kring_aux_tracer_run(struct kring_aux_tracer *tr)
{
	unsigned int cpu;

	raw_spin_lock_irq(&tr->lock);
	tr->halted = false;
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		tr->cpus[cpu].since = 0;
	raw_spin_unlock_irq(&tr->lock);
	if (!tr->task_mode) {
		/* Offline: its cpu_online callback arms it when it returns. */
		if (tr->follow && !cpu_online(tr->cpu))
			return 0;
		return smp_call_function_single(tr->cpu, kring_aux_tracer_arm,
						&tr->cpus[tr->cpu], 1);
	}
	/*
	 * The caller holds cpus_read_lock() (taken before ch->lock, as the
	 * hotplug callbacks do): the online mask is settled. A CPU that comes
	 * online later is armed by its cpu_online callback (the cap is on the
	 * list and the unit no longer halted); one going offline later is
	 * cancelled by its cpu_offline callback.
	 */
	for_each_online_cpu(cpu)
		if (tr->cap.cpu < 0 || tr->cap.cpu == cpu)
			smp_call_function_single(cpu, kring_aux_tracer_arm, &tr->cpus[cpu], 1);
	return 0;
}

/*
 * Stop the unit and wait for a running tick. In snapshot mode what it wrote
 * is published (aux_head and an OVERWRITE record), as perf's driver does at
 * every pmu stop. ch->lock held.
 */
static int kring_aux_tracer_halt(struct kring_aux_tracer *tr)
{
	unsigned int cpu;

	/* No writer starts after this; one that started has finished. */
	raw_spin_lock_irq(&tr->lock);
	tr->halted = true;
	raw_spin_unlock_irq(&tr->lock);
	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		hrtimer_cancel(&tr->cpus[cpu].timer);
	return kring_aux_snapshot(tr->ch);
}

static int kring_aux_tracer_configure(struct kring_channel *ch)
{
	const struct kring_attr *a = &ch->attr;
	u64 per_tick = a->config[0] ?: KRING_AUX_DEF_PER_TICK;
	u64 payload = a->config[1] ?: KRING_AUX_DEF_PAYLOAD;
	struct kring_aux_tracer *tr;
	unsigned int cpu;
	int ret;

	if (a->pid == -1 && (a->cpu < 0 || !cpu_online(a->cpu)))
		return -EINVAL;
	if (per_tick > KRING_AUX_MAX_PER_TICK || payload > KRING_AUX_MAX_PAYLOAD ||
	    payload % 8 || a->config[2] > U32_MAX ||
	    per_tick * (KRING_AUX_PKT_HDR + payload) > KRING_AUX_MAX_TICK_BYTES)
		return -EINVAL;
	tr = kzalloc(sizeof(*tr), GFP_KERNEL_ACCOUNT);
	if (!tr)
		return -ENOMEM;
	tr->ch = ch;
	tr->cpu = a->cpu;
	tr->halted = true;
	raw_spin_lock_init(&tr->lock);
	tr->per_tick = per_tick;
	tr->payload = payload;
	tr->sync_every = a->config[2] ?: KRING_AUX_DEF_SYNC;
	tr->limit = a->config[3];
	ret = -ENOMEM;
	tr->pkt = kmalloc(KRING_AUX_PKT_HDR + tr->payload, GFP_KERNEL_ACCOUNT);
	tr->cpus = kcalloc(nr_cpu_ids, sizeof(*tr->cpus), GFP_KERNEL_ACCOUNT);
	if (!tr->pkt || !tr->cpus)
		goto err_free;
	/*
	 * Task mode: capture.c finds the task, checks permissions and hands us
	 * its context switches. CPU mode uses it for hotplug only, where the
	 * kernel offers the tracepoints capture.c needs; elsewhere the unit
	 * simply stops for good if its CPU goes offline.
	 */
	tr->task_mode = a->pid != -1;
	if (tr->task_mode || kring_capture_available()) {
		ret = kring_capture_init(&tr->cap, ch,
					 tr->task_mode ? &kring_aux_tracer_capture_ops :
							 &kring_aux_tracer_cpu_ops);
		if (ret)
			goto err_free;
		tr->follow = true;
	}
	for (cpu = 0; cpu < nr_cpu_ids; cpu++) {
		tr->cpus[cpu].tr = tr;
		tr->cpus[cpu].cpu = cpu;
		kring_hrtimer_setup(&tr->cpus[cpu].timer, kring_aux_tracer_timer, CLOCK_MONOTONIC,
				    HRTIMER_MODE_REL_PINNED_HARD);
	}
	ch->source_priv = tr;
	return 0;

err_free:
	kfree(tr->cpus);
	kfree(tr->pkt);
	kfree(tr);
	return ret;
}

static int kring_aux_tracer_start(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;
	int ret;

	tr->nr_started = 0;	/* no writer yet: timers and hooks start below */
	if (tr->follow) {
		ret = kring_capture_enable(&tr->cap);
		if (ret)
			return ret;
	}
	ret = tr->paused ? 0 : kring_aux_tracer_run(tr);
	/* A failed start is not stopped: give back what was enabled. */
	if (ret && tr->follow)
		kring_capture_disable(&tr->cap);
	return ret;
}

static void kring_aux_tracer_stop(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;

	if (tr->follow)
		kring_capture_disable(&tr->cap);	/* no hook or hotplug call after this */
	kring_aux_tracer_halt(tr);	/* -EINVAL: not snapshot mode, fine */
}

static void kring_aux_tracer_release(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;
	unsigned int cpu;

	for (cpu = 0; cpu < nr_cpu_ids; cpu++)
		hrtimer_cancel(&tr->cpus[cpu].timer);
	if (tr->follow)
		kring_capture_release(&tr->cap);
	kfree(tr->cpus);
	kfree(tr->pkt);
	kfree(tr);
	ch->source_priv = NULL;
}

static struct kring_capture *kring_aux_tracer_capture(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;

	return tr && tr->follow ? &tr->cap : NULL;
}

/* KRING_IOC_AUX_PAUSE, and _SNAPSHOT with a snapshot-mode area (aux.c). */
static int kring_aux_tracer_pause(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;

	tr->paused = true;
	return kring_aux_tracer_halt(tr);
}

/* KRING_IOC_AUX_RESUME (aux.c). */
static int kring_aux_tracer_resume(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;
	int ret = 0;

	if (tr->paused && ch->enabled)
		ret = kring_aux_tracer_run(tr);
	tr->paused = false;
	return ret;
}

/* struct kring_aux_packet, the header every packet of the AUX area starts with. */
static const struct kring_format_field kring_aux_packet_fields[] = {
	KRING_FORMAT_FIELD(struct kring_aux_packet, magic, __u64),
	KRING_FORMAT_FIELD(struct kring_aux_packet, type, __u16),
	KRING_FORMAT_FIELD(struct kring_aux_packet, len, __u16),
	KRING_FORMAT_FIELD(struct kring_aux_packet, cpu, __u32),
	KRING_FORMAT_FIELD(struct kring_aux_packet, seq, __u64),
	KRING_FORMAT_FIELD(struct kring_aux_packet, time, __u64),
};

static const struct kring_format kring_aux_packet_format = {
	.name = "kring_aux_packet",
	.type = KRING_RECORD_AUX,
	.size = sizeof(struct kring_aux_packet),
	.fields = kring_aux_packet_fields,
	.nr_fields = ARRAY_SIZE(kring_aux_packet_fields),
	.print_fmt = "\"type=%u len=%u cpu=%u seq=%llu\", REC->type, REC->len, REC->cpu, REC->seq",
};

static const struct kring_format * const kring_aux_tracer_formats[] = {
	&kring_aux_packet_format, NULL,
};

const struct kring_source_ops kring_aux_tracer_source = {
	.name = "aux-tracer",
	/* CPU mode writes synthetic packets only: no task is named. */
	.caps = KRING_SRC_FOLLOWS_TASKS | KRING_SRC_OWNS_AUX | KRING_SRC_CPU_WIDE_OPEN |
		KRING_SRC_TEST_ONLY,
	.features = KRING_FEAT_AUX_TRACER,
	.prepare = kring_capture_attach,
	.formats = kring_aux_tracer_formats,
	.configure = kring_aux_tracer_configure,
	.start = kring_aux_tracer_start,
	.stop = kring_aux_tracer_stop,
	.release = kring_aux_tracer_release,
	.capture = kring_aux_tracer_capture,
	.aux_pause = kring_aux_tracer_pause,
	.aux_resume = kring_aux_tracer_resume,
};
