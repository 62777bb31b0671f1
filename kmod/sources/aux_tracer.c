// SPDX-License-Identifier: GPL-2.0
/*
 * KRING_SOURCE_AUX_TRACER: an emulated hardware tracer (a PT/ETM-like unit)
 * on one CPU, writing a packet stream straight into the channel's AUX area
 * through the exported AUX producer API, as a trace driver would.
 *
 * Every millisecond an hrtimer pinned to the CPU "runs the unit": it
 * begins an AUX extent, writes the packets of that millisecond (a SYNC
 * packet first, another every config[2] packets, DATA packets between;
 * struct kring_aux_packet in uapi/linux/kring.h) and ends the extent. When
 * the extent is full the unit stops (perf's pmu stop): the rest of the
 * millisecond's packets are dropped, their sequence numbers skipped, and
 * the extent's AUX record carries TRUNCATED; the next tick starts it again
 * (pmu start) with a SYNC packet. So the discontinuity is real and a
 * consumer sees it in the packet sequence.
 *
 * Control (disable, KRING_IOC_AUX_PAUSE/RESUME/SNAPSHOT) cancels the
 * timer first, which waits for a running tick: after the ioctl returns no
 * packet is being written. In snapshot mode every stop (disable, pause,
 * snapshot) publishes aux_head with an OVERWRITE record.
 */
#include <linux/hrtimer.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/cpumask.h>

#include "../kring_internal.h"
#include "../aux.h"

#define KRING_AUX_TICK_NS	NSEC_PER_MSEC
#define KRING_AUX_MAX_PER_TICK	4096
#define KRING_AUX_MAX_PAYLOAD	4096
#define KRING_AUX_PKT_HDR	((u32)sizeof(struct kring_aux_packet))

struct kring_aux_tracer {
	struct kring_channel *ch;
	struct hrtimer timer;
	int cpu;
	u64 seq;		/* next packet sequence number */
	u64 limit;		/* stop after this many packets, 0 = never */
	u32 per_tick;
	u32 payload;
	u32 sync_every;
	bool itrace_done;	/* ITRACE_START written */
	bool paused;		/* KRING_IOC_AUX_PAUSE */
	u8 *pkt;		/* one packet being built */
};

/* An ITRACE_START record: tracing starts, CPU-wide (pid/tid -1). */
static bool kring_aux_tracer_itrace(struct kring_aux_tracer *tr)
{
	struct kring_itrace_start_record rec;
	struct kring_output_handle h;

	if (kring_channel_output_begin(&h, tr->ch, sizeof(rec)))
		return false;
	kring_output_header(&h, KRING_RECORD_ITRACE_START, 0);
	rec.pid = (u32)-1;
	rec.tid = (u32)-1;
	rec.time = h.time;
	rec.seq = h.seq;
	kring_output_copy(&h, &rec.pid, sizeof(rec) - sizeof(rec.header));
	kring_channel_output_end(&h);
	return true;
}

static u32 kring_aux_tracer_build(struct kring_aux_tracer *tr, bool sync)
{
	struct kring_aux_packet *p = (struct kring_aux_packet *)tr->pkt;
	u32 i, len = sync ? KRING_AUX_PKT_HDR : KRING_AUX_PKT_HDR + tr->payload;

	p->magic = sync ? KRING_AUX_SYNC_MAGIC : 0;
	p->type = sync ? KRING_AUX_PKT_SYNC : KRING_AUX_PKT_DATA;
	p->len = len;
	p->cpu = tr->cpu;
	p->seq = tr->seq;
	p->time = ktime_get_mono_fast_ns();
	for (i = 0; i < len - KRING_AUX_PKT_HDR; i++)
		tr->pkt[KRING_AUX_PKT_HDR + i] = kring_synth_byte(tr->seq, i);
	return len;
}

/* One millisecond of tracing; false once the packet limit is reached. */
static bool kring_aux_tracer_tick(struct kring_aux_tracer *tr)
{
	struct kring_aux_handle h;
	u64 off = 0, n, i;
	u32 len;

	if (tr->limit && tr->seq >= tr->limit)
		return false;
	if (!tr->itrace_done)
		tr->itrace_done = kring_aux_tracer_itrace(tr);
	/* Not enabled yet, or no AUX area mapped: the unit does not run. */
	if (kring_aux_output_begin(&h, tr->ch))
		return true;
	n = tr->per_tick;
	if (tr->limit)
		n = min(n, tr->limit - tr->seq);
	for (i = 0; i < n; i++) {
		bool sync = i == 0 || !(tr->seq % tr->sync_every);

		len = sync ? KRING_AUX_PKT_HDR : KRING_AUX_PKT_HDR + tr->payload;
		if (len > h.size - off) {
			/* Full: the unit stops, this tick's other packets are lost. */
			kring_aux_output_flag(&h, KRING_AUX_FLAG_TRUNCATED);
			tr->seq += n - i;
			break;
		}
		kring_aux_tracer_build(tr, sync);
		kring_aux_output_copy(&h, off, tr->pkt, len);
		off += len;
		tr->seq++;
	}
	kring_aux_output_end(&h, off);
	return !(tr->limit && tr->seq >= tr->limit);
}

static enum hrtimer_restart kring_aux_tracer_timer(struct hrtimer *t)
{
	struct kring_aux_tracer *tr = container_of(t, struct kring_aux_tracer, timer);

	if (!kring_aux_tracer_tick(tr))
		return HRTIMER_NORESTART;
	hrtimer_forward_now(t, ns_to_ktime(KRING_AUX_TICK_NS));
	return HRTIMER_RESTART;
}

/* Runs on the tracer's CPU: a pinned timer stays there. */
static void kring_aux_tracer_arm(void *arg)
{
	struct kring_aux_tracer *tr = arg;

	hrtimer_start(&tr->timer, ns_to_ktime(KRING_AUX_TICK_NS), HRTIMER_MODE_REL_PINNED);
}

static int kring_aux_tracer_run(struct kring_aux_tracer *tr)
{
	return smp_call_function_single(tr->cpu, kring_aux_tracer_arm, tr, 1);
}

static int kring_aux_tracer_configure(struct kring_channel *ch)
{
	const struct kring_attr *a = &ch->attr;
	struct kring_aux_tracer *tr;

	if (a->cpu < 0 || !cpu_online(a->cpu) || a->pid != -1)
		return -EINVAL;
	if (a->config[0] > KRING_AUX_MAX_PER_TICK || a->config[1] > KRING_AUX_MAX_PAYLOAD ||
	    a->config[1] % 8 || a->config[2] > U32_MAX)
		return -EINVAL;
	tr = kzalloc(sizeof(*tr), GFP_KERNEL_ACCOUNT);
	if (!tr)
		return -ENOMEM;
	tr->ch = ch;
	tr->cpu = a->cpu;
	tr->per_tick = a->config[0] ?: 64;
	tr->payload = a->config[1] ?: 32;
	tr->sync_every = a->config[2] ?: 16;
	tr->limit = a->config[3];
	tr->pkt = kmalloc(KRING_AUX_PKT_HDR + tr->payload, GFP_KERNEL_ACCOUNT);
	if (!tr->pkt) {
		kfree(tr);
		return -ENOMEM;
	}
	hrtimer_init(&tr->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED);
	tr->timer.function = kring_aux_tracer_timer;
	ch->source_priv = tr;
	return 0;
}

static int kring_aux_tracer_start(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;

	tr->itrace_done = false;
	return tr->paused ? 0 : kring_aux_tracer_run(tr);
}

/*
 * Stop the unit and wait for a running tick. In snapshot mode what it wrote
 * is published (aux_head and an OVERWRITE record), as perf's driver does at
 * every pmu stop. ch->lock held.
 */
static int kring_aux_tracer_halt(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;

	hrtimer_cancel(&tr->timer);
	return kring_aux_snapshot(ch);
}

static void kring_aux_tracer_stop(struct kring_channel *ch)
{
	kring_aux_tracer_halt(ch);	/* -EINVAL: not snapshot mode, fine */
}

static void kring_aux_tracer_release(struct kring_channel *ch)
{
	struct kring_aux_tracer *tr = ch->source_priv;

	hrtimer_cancel(&tr->timer);
	kfree(tr->pkt);
	kfree(tr);
	ch->source_priv = NULL;
}

const struct kring_source_ops kring_aux_tracer_source = {
	.name = "aux-tracer",
	.configure = kring_aux_tracer_configure,
	.start = kring_aux_tracer_start,
	.stop = kring_aux_tracer_stop,
	.release = kring_aux_tracer_release,
};

/**
 * kring_aux_ioctl() - KRING_IOC_AUX_SNAPSHOT, _PAUSE and _RESUME
 * @ch:		the channel
 * @cmd:	the ioctl
 *
 * Return: 0; -EINVAL for an unconfigured channel or, for a snapshot, one
 * without a read-only AUX mapping; -EOPNOTSUPP when the channel's AUX
 * producer is not kring's tracer (another module's producer is controlled
 * by that module).
 */
long kring_aux_ioctl(struct kring_channel *ch, unsigned int cmd)
{
	struct kring_aux_tracer *tr;
	long ret = 0;

	mutex_lock(&ch->lock);
	if (!ch->configured) {
		ret = -EINVAL;
		goto out;
	}
	if (ch->source != &kring_aux_tracer_source) {
		ret = -EOPNOTSUPP;
		goto out;
	}
	tr = ch->source_priv;
	switch (cmd) {
	case KRING_IOC_AUX_PAUSE:
		tr->paused = true;
		kring_aux_tracer_halt(ch);
		break;
	case KRING_IOC_AUX_RESUME:
		if (tr->paused && ch->enabled)
			ret = kring_aux_tracer_run(tr);
		tr->paused = false;
		break;
	case KRING_IOC_AUX_SNAPSHOT:
		/* Stop the unit, publish, restart: the tick never sees it. */
		ret = kring_aux_tracer_halt(ch);
		if (ch->enabled && !tr->paused)
			kring_aux_tracer_run(tr);
		break;
	default:
		ret = -ENOTTY;
	}
out:
	mutex_unlock(&ch->lock);
	return ret;
}
