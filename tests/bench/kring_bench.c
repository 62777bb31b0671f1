// SPDX-License-Identifier: GPL-2.0
/*
 * kring_bench: the producer loop of kring and of ftrace's ring buffer, in
 * one kernel, with one loop shape (tests/bench/producer_bench.cpp drives
 * it; docs/PERFORMANCE.md has the figures).
 *
 * User space writes one command into /sys/kernel/debug/kring_bench/run
 * and reads the result back from the same open file:
 *
 *	ring=kring|ftrace mode=overwrite|forward size=N count=N
 *	[warmup=N] [channel=ID] [pages=N] [consumer_cpu=N] [write=ptr|copy|call]
 *	[hold=NS] [clock=mono|local]
 *	ring=floor mode=overwrite size=N count=N [warmup=N] [pages=N]
 *	[clock=mono|local]
 *	ring=clock count=N
 *	ring=tp sink=none|ftrace|perf|kring|floor count=N [channel=ID] [period=NS]
 *	[write=call|sample]
 *
 * The write runs the loop in the writing task, on its CPU: the task must
 * be pinned to one CPU (-EINVAL otherwise). Each record: reserve, copy
 * @size bytes of payload (every ring's payload copy is kring_copy(), as
 * in kring's one-call write), commit; each ring reads its clock once per
 * record, for the timestamp it keeps (kring: the payload's first word,
 * ftrace: the event header).
 *
 *  - kring: into the channel @channel (KRING_IOC_ID of a channel user
 *    space opened with KRING_SOURCE_NONE, mapped and enabled), through the
 *    exported producer API: kring_channel_output_begin(), the record header
 *    and a kring_copy() of the payload (the timestamp is the handle's
 *    time) into the reservation (kring_output_ptr(), as ftrace's loop
 *    copies into ring_buffer_event_data(); write=copy: one
 *    kring_output_copy() instead), kring_channel_output_end(); write=call:
 *    one kring_channel_write() of the payload instead of all three, the
 *    timestamp read by the loop (clock=: the channel's clock). The
 *    channel's mapping decides the mode (read-only: backward, overwrite);
 *    @mode only names it, and a forward channel's consumer is user space.
 *    With @hold (not a benchmark: a writer in flight, for the guest tests
 *    of what must wait for writers), each record is copied, then its
 *    reservation stays open @hold ns (at most 10 s) before its commit,
 *    busy waiting with preemption off and interrupts on: an RCU read-side
 *    critical section of a known length. An iteration that gets no
 *    reservation (the channel disabled) waits as long, outside. Writing
 *    to /sys/kernel/debug/kring_bench/release ends the holds of the run in
 *    progress (each one at once, from then on).
 *  - ftrace: into a ring buffer of @pages pages per CPU allocated for the
 *    run (RB_FL_OVERWRITE in overwrite mode): ring_buffer_lock_reserve(),
 *    kring_copy() of the payload into ring_buffer_event_data() (its first word
 *    the record's number: ftrace's ring stamps each event in the event's
 *    header, with its own clock read), ring_buffer_unlock_commit(). In forward
 *    mode a kthread bound to @consumer_cpu (default 1) consumes with
 *    ring_buffer_consume() while the loop runs, and drains the rest after.
 *
 *  - floor: what any ring's record costs at least in this loop: a bare
 *    single-producer ring of @pages pages (a power of 2) allocated for the
 *    run, overwrite mode only (no consumer, no space check). Each record:
 *    preempt_disable(), one clock read into the payload's first word
 *    (clock=: ktime_get_mono_fast_ns(), kring's default, or local_clock()),
 *    the header and a kring_copy() of the payload at the head (the area has a
 *    record's worth of slack past its end: no record is split, as in
 *    kring's doubly mapped area), a release store of the head,
 *    preempt_enable(). No nesting, sequence numbers, loss accounting,
 *    wake-ups or counters: the part of a record's cost no ring avoids.
 *
 * @warmup records are written first, untimed; the result counts them.
 * Reading the file gives one line of key=value pairs: ns (the timed loop,
 * local_clock()), total (warmup + count), ok and fail (reservations that
 * succeeded or failed), and for ftrace consumed, lost (what
 * ring_buffer_consume() reported), empty_retries (see bench_drain()),
 * entries, overrun and dropped (the buffer's counters for the writing
 * CPU). ring=clock times @count reads of each clock instead
 * (bench_clock()).
 *
 * ring=tp fires the tracepoint kring_bench:kring_bench_hit @count times
 * from a kthread bound to the writing task's CPU (bench_tp()), and reads
 * back ns, total, ok and fail. The sink is user space's doing for none
 * (the event disabled), ftrace (enabled in tracefs) and perf (a
 * perf_event_open() of the event); for kring this module attaches a probe
 * that writes each hit as a SAMPLE (TIME | RAW, the event's two words as
 * RAW) into channel @channel with kring_channel_write_raw() (write=sample:
 * kring_channel_write_sample() of a struct kring_sample_data the probe
 * zero-initialises, as a producer filling some of its fields does;
 * write=call: the same bytes through kring_channel_write(), its time read
 * by the probe and its last word a number of the probe's own: what the
 * SAMPLE writer costs above a one-call write), and ok/fail count the probe's writes; for
 * floor a probe that writes the same 48 bytes (kring's SAMPLE: header,
 * time, RAW's size word, the two words, its padding, a sequence number)
 * into a bare ring of 16 pages, as ring=floor does: the least any ring's
 * probe costs.
 * With @period the hits are paced, one every @period ns (busy waiting on
 * local_clock(): the rate the end-to-end benchmark asks for).
 */
#include <linux/module.h>
#include <linux/kernel.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/completion.h>
#include <linux/mutex.h>
#include <linux/preempt.h>
#include <linux/sched.h>
#include <linux/sched/clock.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <linux/log2.h>
#include <kring/producer.h>

#include "compat.h"

#define CREATE_TRACE_POINTS
#include "kring_bench_trace.h"

/* A kring-only record type: header, timestamp, payload. */
#define BENCH_RECORD_TYPE	(KRING_RECORD_KRING_BASE + 0x200)
#define BENCH_MAX_SIZE		4096
#define BENCH_MAX_PAGES		4096
#define BENCH_OUT_SIZE		320
#define BENCH_MAX_HOLD_NS	(10 * NSEC_PER_SEC)

enum { BENCH_KRING, BENCH_FTRACE, BENCH_CLOCK, BENCH_TP, BENCH_FLOOR };
enum { SINK_NONE, SINK_FTRACE, SINK_PERF, SINK_KRING, SINK_FLOOR };

struct bench_cmd {
	int ring;		/* BENCH_KRING, BENCH_FTRACE, ..., BENCH_FLOOR */
	int sink;		/* BENCH_TP: SINK_* */
	bool forward;
	unsigned int size;
	u64 count;
	u64 warmup;
	u64 channel;
	unsigned int pages;
	unsigned int consumer_cpu;
	u64 period;		/* BENCH_TP: ns between hits, 0: unpaced */
	bool copy;		/* BENCH_KRING: kring_output_copy(), not in place */
	bool one_call;		/* BENCH_KRING: kring_channel_write() */
	bool sample;		/* BENCH_TP: kring_channel_write_sample() */
	bool local_clock;	/* one_call, floor: the body's time from local_clock() */
	u64 hold;		/* BENCH_KRING: ns each reservation stays open */
};

struct bench_result {
	u64 ns;
	u64 ok;
	u64 fail;
	u64 consumed;
	u64 lost;
	u64 empty_retries;
	unsigned long entries;
	unsigned long overrun;
	unsigned long dropped;
};

/* The kring record: its header, then the payload (timestamp first). */
struct bench_body {
	u64 time;
	u8 rest[BENCH_MAX_SIZE - sizeof(u64)];
};

struct bench_record {
	struct kring_record_header hdr;
	struct bench_body body;
};

/*
 * A record of @size bytes (header included) at @dst, as kring's one-call
 * write stores one: its header, then kring_copy() of the payload.
 */
static __always_inline void bench_copy_record(void *dst, const struct bench_record *rec,
					      unsigned int size)
{
	memcpy(dst, &rec->hdr, sizeof(rec->hdr));
	kring_copy((char *)dst + sizeof(rec->hdr), &rec->body, size - sizeof(rec->hdr));
}

/* One run at a time: the loop owns its CPU's slice of the rings. */
static DEFINE_MUTEX(bench_lock);
static struct dentry *bench_dir;

/* Per open file: the result of the last command written to it. */
struct bench_file {
	char out[BENCH_OUT_SIZE];
	size_t len;
};

static const char * const bench_sinks[] = {
	[SINK_NONE] = "none",
	[SINK_FTRACE] = "ftrace",
	[SINK_PERF] = "perf",
	[SINK_KRING] = "kring",
	[SINK_FLOOR] = "floor",
};

static int bench_parse(char *s, struct bench_cmd *c)
{
	char *tok;
	int err = 0;

	memset(c, 0, sizeof(*c));
	c->ring = -1;
	c->pages = 16;
	c->consumer_cpu = 1;
	while (!err && (tok = strsep(&s, " \t\n"))) {
		char *val;

		if (!*tok)
			continue;
		val = strchr(tok, '=');
		if (!val)
			return -EINVAL;
		*val++ = '\0';
		if (!strcmp(tok, "ring")) {
			if (!strcmp(val, "kring"))
				c->ring = BENCH_KRING;
			else if (!strcmp(val, "ftrace"))
				c->ring = BENCH_FTRACE;
			else if (!strcmp(val, "clock"))
				c->ring = BENCH_CLOCK;
			else if (!strcmp(val, "tp"))
				c->ring = BENCH_TP;
			else if (!strcmp(val, "floor"))
				c->ring = BENCH_FLOOR;
			else
				err = -EINVAL;
		} else if (!strcmp(tok, "sink")) {
			c->sink = match_string(bench_sinks, ARRAY_SIZE(bench_sinks), val);
			if (c->sink < 0)
				err = -EINVAL;
		} else if (!strcmp(tok, "mode")) {
			if (!strcmp(val, "forward"))
				c->forward = true;
			else if (strcmp(val, "overwrite"))
				err = -EINVAL;
		} else if (!strcmp(tok, "size")) {
			err = kstrtouint(val, 0, &c->size);
		} else if (!strcmp(tok, "count")) {
			err = kstrtou64(val, 0, &c->count);
		} else if (!strcmp(tok, "warmup")) {
			err = kstrtou64(val, 0, &c->warmup);
		} else if (!strcmp(tok, "channel")) {
			err = kstrtou64(val, 0, &c->channel);
		} else if (!strcmp(tok, "pages")) {
			err = kstrtouint(val, 0, &c->pages);
		} else if (!strcmp(tok, "consumer_cpu")) {
			err = kstrtouint(val, 0, &c->consumer_cpu);
		} else if (!strcmp(tok, "period")) {
			err = kstrtou64(val, 0, &c->period);
		} else if (!strcmp(tok, "hold")) {
			err = kstrtou64(val, 0, &c->hold);
		} else if (!strcmp(tok, "clock")) {
			if (!strcmp(val, "local"))
				c->local_clock = true;
			else if (strcmp(val, "mono"))
				err = -EINVAL;
		} else if (!strcmp(tok, "write")) {
			if (!strcmp(val, "copy"))
				c->copy = true;
			else if (!strcmp(val, "call"))
				c->one_call = true;
			else if (!strcmp(val, "sample"))
				c->sample = true;
			else if (strcmp(val, "ptr"))
				err = -EINVAL;
		} else {
			err = -EINVAL;
		}
	}
	if (err)
		return err;
	if (c->ring < BENCH_KRING || c->ring > BENCH_FLOOR)
		return -EINVAL;
	if (c->hold > BENCH_MAX_HOLD_NS || (c->hold && c->ring != BENCH_KRING))
		return -EINVAL;
	if (c->sample && c->ring != BENCH_TP)
		return -EINVAL;
	if (c->ring == BENCH_CLOCK || c->ring == BENCH_TP)
		return 0;
	if (c->size < sizeof(u64) || c->size > BENCH_MAX_SIZE ||
	    !IS_ALIGNED(c->size, sizeof(u64)))
		return -EINVAL;
	if (!c->pages || c->pages > BENCH_MAX_PAGES)
		return -EINVAL;
	if (c->ring == BENCH_FLOOR && (c->forward || !is_power_of_2(c->pages)))
		return -EINVAL;
	return 0;
}

/* ---- kring ------------------------------------------------------------- */

/*
 * The timed loop; @copy a constant in each of the two loops below, so
 * that neither tests it per record: the record written in place
 * (kring_output_ptr()), or through kring_output_copy().
 */
static __always_inline u64 bench_kring_loop_as(struct kring_channel *ch,
					       struct bench_record *rec, u64 n,
					       struct bench_result *r, bool copy)
{
	unsigned int size = rec->hdr.size;
	u64 i, t0 = local_clock();

	for (i = 0; i < n; i++) {
		struct kring_output_handle h;

		preempt_disable();
		if (!kring_channel_output_begin(&h, ch, size)) {
			void *p = copy ? NULL : kring_output_ptr(&h);

			rec->body.time = h.time;
			if (likely(p))
				bench_copy_record(p, rec, size);
			else
				kring_output_copy(&h, rec, size);
			kring_channel_output_end(&h);
			r->ok++;
		} else {
			r->fail++;
		}
		preempt_enable();
		if (!(i & 1023))
			cond_resched();
	}
	return local_clock() - t0;
}

static noinline u64 bench_kring_loop(struct kring_channel *ch, struct bench_record *rec,
				     u64 n, struct bench_result *r)
{
	return bench_kring_loop_as(ch, rec, n, r, false);
}

static noinline u64 bench_kring_copy_loop(struct kring_channel *ch, struct bench_record *rec,
					  u64 n, struct bench_result *r)
{
	return bench_kring_loop_as(ch, rec, n, r, true);
}

/*
 * write=call: kring_channel_write(), the header and the body in one call.
 * Its record carries no ring time: the loop reads the channel's clock
 * (clock=mono: the default, clock=local: KRING_CLOCK_LOCAL) into the
 * body's first word, one read per record as in the loops above.
 */
static noinline u64 bench_kring_call_loop(struct kring_channel *ch, struct bench_record *rec,
					  u64 n, struct bench_result *r, bool local)
{
	unsigned int len = rec->hdr.size - sizeof(rec->hdr);
	u64 i, t0 = local_clock();

	for (i = 0; i < n; i++) {
		rec->body.time = local ? local_clock() : ktime_get_mono_fast_ns();
		if (!kring_channel_write(ch, BENCH_RECORD_TYPE, 0, &rec->body, len))
			r->ok++;
		else
			r->fail++;
		if (!(i & 1023))
			cond_resched();
	}
	return local_clock() - t0;
}

/* Set by a write to "release": the holds of the run in progress end. */
static bool bench_released;

static void bench_hold(u64 ns)
{
	u64 end = local_clock() + ns;

	while (!READ_ONCE(bench_released) && local_clock() < end)
		cpu_relax();
}

/* hold=NS: see the comment at the top. */
static u64 bench_kring_hold_loop(struct kring_channel *ch, struct bench_record *rec,
				 u64 n, u64 hold, struct bench_result *r)
{
	unsigned int size = rec->hdr.size;
	u64 i, t0 = local_clock();

	for (i = 0; i < n; i++) {
		struct kring_output_handle h;
		bool ok;

		preempt_disable();
		ok = !kring_channel_output_begin(&h, ch, size);
		if (ok) {
			rec->body.time = h.time;
			kring_output_copy(&h, rec, size);
			bench_hold(hold);
			kring_channel_output_end(&h);
			r->ok++;
		} else {
			r->fail++;
		}
		preempt_enable();
		if (!ok)
			bench_hold(hold);
		cond_resched();
	}
	return local_clock() - t0;
}

static int bench_kring(const struct bench_cmd *c, struct bench_record *rec,
		       struct bench_result *r)
{
	struct kring_channel *ch = kring_channel_get(c->channel);

	if (!ch)
		return -ENOENT;
	rec->hdr.type = BENCH_RECORD_TYPE;
	rec->hdr.misc = 0;
	rec->hdr.size = sizeof(rec->hdr) + c->size;
	if (c->hold) {
		WRITE_ONCE(bench_released, false);
		r->ns = bench_kring_hold_loop(ch, rec, c->warmup + c->count, c->hold, r);
	} else if (c->copy) {
		bench_kring_copy_loop(ch, rec, c->warmup, r);
		r->ns = bench_kring_copy_loop(ch, rec, c->count, r);
	} else if (c->one_call) {
		bench_kring_call_loop(ch, rec, c->warmup, r, c->local_clock);
		r->ns = bench_kring_call_loop(ch, rec, c->count, r, c->local_clock);
	} else {
		bench_kring_loop(ch, rec, c->warmup, r);
		r->ns = bench_kring_loop(ch, rec, c->count, r);
	}
	kring_channel_put(ch);
	return 0;
}

/* ---- the floor: a bare ring ------------------------------------------- */

struct bench_floor {
	char *data;		/* @mask + 1 bytes, and a record's worth of slack */
	unsigned long mask;
	unsigned long head;	/* a consumer would read it with an acquire */
};

static noinline u64 bench_floor_loop(struct bench_floor *fl, struct bench_record *rec,
				     u64 n, struct bench_result *r, bool local)
{
	unsigned int size = rec->hdr.size;
	u64 i, t0 = local_clock();

	for (i = 0; i < n; i++) {
		unsigned long head;

		preempt_disable();
		rec->body.time = local ? local_clock() : ktime_get_mono_fast_ns();
		head = fl->head;
		bench_copy_record(fl->data + (head & fl->mask), rec, size);
		/*
		 * The record's stores before the head's: the release a ring's
		 * producer owes its consumer's acquire load of the head (none
		 * here, as in kring's and ftrace's overwrite runs).
		 */
		smp_store_release(&fl->head, head + size);
		r->ok++;
		preempt_enable();
		if (!(i & 1023))
			cond_resched();
	}
	return local_clock() - t0;
}

static int bench_floor(const struct bench_cmd *c, struct bench_record *rec,
		       struct bench_result *r)
{
	unsigned long bytes = (unsigned long)c->pages << PAGE_SHIFT;
	struct bench_floor fl = { .mask = bytes - 1 };

	fl.data = vzalloc(bytes + sizeof(*rec));
	if (!fl.data)
		return -ENOMEM;
	rec->hdr.type = BENCH_RECORD_TYPE;
	rec->hdr.misc = 0;
	rec->hdr.size = sizeof(rec->hdr) + c->size;
	bench_floor_loop(&fl, rec, c->warmup, r, c->local_clock);
	r->ns = bench_floor_loop(&fl, rec, c->count, r, c->local_clock);
	/* Read back: the last record is whole where the head says. */
	fl.head -= rec->hdr.size;
	if (memcmp(fl.data + (fl.head & fl.mask), &rec->hdr, sizeof(rec->hdr)))
		r->fail++;
	vfree(fl.data);
	return 0;
}

/* ---- ftrace ------------------------------------------------------------ */

struct bench_consumer {
	struct trace_buffer *rb;
	int cpu;		/* the producer's CPU, whose buffer it reads */
	bool done;		/* the producer has finished */
	struct completion drained;
	u64 consumed;
	u64 lost;
	u64 empty_retries;
};

static bool bench_consume_one(struct bench_consumer *c)
{
	unsigned long lost = 0;
	u64 ts;

	if (!ring_buffer_consume(c->rb, c->cpu, &ts, &lost))
		return false;
	c->consumed++;
	c->lost += lost;
	return true;
}

/*
 * The producer is done: consume until the buffer's count of unread
 * entries is 0. After a run that dropped records (forward mode, buffer
 * full), ring_buffer_consume() has been seen to answer nothing while
 * ring_buffer_entries_cpu() still counts a few entries, however often it
 * is asked: empty answers are retried a bounded number of times (counted
 * in @empty_retries) and the entries left are reported.
 */
static void bench_drain(struct bench_consumer *c)
{
	unsigned int stalls = 0;

	while (ring_buffer_entries_cpu(c->rb, c->cpu)) {
		if (bench_consume_one(c)) {
			stalls = 0;
			continue;
		}
		c->empty_retries++;
		if (++stalls > 100)
			break;
		cond_resched();
	}
}

static int bench_consume(void *arg)
{
	struct bench_consumer *c = arg;
	bool drained = false;

	while (!kthread_should_stop()) {
		if (drained) {
			set_current_state(TASK_INTERRUPTIBLE);
			if (!kthread_should_stop())
				schedule();
			__set_current_state(TASK_RUNNING);
			continue;
		}
		if (bench_consume_one(c))
			continue;
		/*
		 * Empty: once the producer is done, take what is left. The
		 * acquire pairs with the producer's release of @done, after
		 * its last commit.
		 */
		if (smp_load_acquire(&c->done)) {
			bench_drain(c);
			drained = true;
			complete(&c->drained);
			continue;
		}
		cond_resched();
	}
	return 0;
}

static u64 bench_ftrace_loop(struct trace_buffer *rb, struct bench_record *rec,
			     unsigned int size, u64 n, struct bench_result *r)
{
	u64 i, t0 = local_clock();

	for (i = 0; i < n; i++) {
		struct ring_buffer_event *ev;

		ev = ring_buffer_lock_reserve(rb, size);
		if (ev) {
			/*
			 * ftrace stamps the event itself (in its header): the
			 * payload's first word takes the record's number, so
			 * that each ring reads its clock once per record.
			 */
			rec->body.time = i;
			kring_copy(ring_buffer_event_data(ev), &rec->body, size);
			kring_rb_unlock_commit(rb, ev);
			r->ok++;
		} else {
			r->fail++;
		}
		if (!(i & 1023))
			cond_resched();
	}
	return local_clock() - t0;
}

static int bench_ftrace(const struct bench_cmd *c, struct bench_record *rec,
			struct bench_result *r)
{
	struct bench_consumer con = { .cpu = raw_smp_processor_id() };
	struct task_struct *t = NULL;
	struct trace_buffer *rb;
	int err = 0;

	rb = ring_buffer_alloc((unsigned long)c->pages << PAGE_SHIFT,
			       c->forward ? 0 : RB_FL_OVERWRITE);
	if (!rb)
		return -ENOMEM;
	init_completion(&con.drained);
	con.rb = rb;
	if (c->forward) {
		if (c->consumer_cpu >= nr_cpu_ids || !cpu_online(c->consumer_cpu) ||
		    c->consumer_cpu == con.cpu) {
			err = -EINVAL;
			goto out;
		}
		t = kthread_create(bench_consume, &con, "kring_bench_rd");
		if (IS_ERR(t)) {
			err = PTR_ERR(t);
			goto out;
		}
		kthread_bind(t, c->consumer_cpu);
		wake_up_process(t);
	}

	bench_ftrace_loop(rb, rec, c->size, c->warmup, r);
	r->ns = bench_ftrace_loop(rb, rec, c->size, c->count, r);

	if (t) {
		/* Release: every commit above before @done (acquire there). */
		smp_store_release(&con.done, true);
		wait_for_completion(&con.drained);
		kthread_stop(t);
		r->consumed = con.consumed;
		r->lost = con.lost;
		r->empty_retries = con.empty_retries;
	}
	r->entries = ring_buffer_entries_cpu(rb, con.cpu);
	r->overrun = ring_buffer_overrun_cpu(rb, con.cpu);
	r->dropped = ring_buffer_dropped_events_cpu(rb, con.cpu);
out:
	ring_buffer_free(rb);
	return err;
}

/* ---- clocks ------------------------------------------------------------ */

/*
 * What one clock read costs here: kring's record clock (the default,
 * CLOCK_MONOTONIC: ktime_get_mono_fast_ns()) and local_clock(), the clock
 * of ftrace's default trace_clock_local(). Each loop sums its readings so
 * that none is optimised away.
 */
static int bench_clock(const struct bench_cmd *c, struct bench_file *f)
{
	u64 i, t0, mono, local, sum = 0;

	t0 = local_clock();
	for (i = 0; i < c->count; i++)
		sum += ktime_get_mono_fast_ns();
	mono = local_clock() - t0;
	t0 = local_clock();
	for (i = 0; i < c->count; i++)
		sum += local_clock();
	local = local_clock() - t0;
	f->len = scnprintf(f->out, sizeof(f->out),
			   "ring=clock total=%llu mono_ns=%llu local_ns=%llu sum=%llu\n",
			   c->count, mono, local, sum);
	return 0;
}

/* ---- one tracepoint, three sinks --------------------------------------- */

/* The kring probe's channel and its counts (one run at a time). */
struct bench_tp {
	struct kring_channel *ch;
	bool one_call;		/* write=call: kring_channel_write() */
	bool sample;		/* write=sample: kring_channel_write_sample() */
	struct bench_floor fl;	/* sink=floor */
	u64 seq;
	u64 ok;
	u64 fail;
	u64 count;
	u64 period;
	u64 ns;
	struct completion done;
};

/*
 * write=call: the SAMPLE's bytes (time, RAW's size word, the two words, the
 * padding, a number of the probe's own) through kring_channel_write(): the
 * same record without the SAMPLE writer.
 */
static int bench_tp_call(struct bench_tp *tp, const u64 *raw)
{
	u64 body[5];
	u32 padded = 20;

	body[0] = ktime_get_mono_fast_ns();
	memcpy(&body[1], &padded, sizeof(padded));
	memcpy((char *)&body[1] + 4, raw, 16);
	memset((char *)&body[1] + 20, 0, 4);
	body[4] = tp->seq++;
	return kring_channel_write(tp->ch, KRING_RECORD_SAMPLE, 0, body, sizeof(body));
}

/*
 * write=sample: the SAMPLE through kring_channel_write_sample(), its
 * struct kring_sample_data zero-initialised but for RAW.
 */
static int bench_tp_sample(struct bench_tp *tp, const u64 *raw)
{
	struct kring_sample_data d = {
		.raw = raw,
		.raw_size = 2 * sizeof(*raw),
	};

	return kring_channel_write_sample(tp->ch, &d);
}

static void bench_tp_probe(void *data, u64 seq, u64 val)
{
	struct bench_tp *tp = data;
	u64 raw[2] = { seq, val };
	int err;

	/*
	 * The producer API wants preemption disabled. A tracepoint gave
	 * that to its probes up to 6.x; 7.x calls them preemptible (SRCU),
	 * so a probe that writes into kring disables it itself.
	 */
	preempt_disable_notrace();
	if (tp->one_call)
		err = bench_tp_call(tp, raw);
	else if (tp->sample)
		err = bench_tp_sample(tp, raw);
	else
		err = kring_channel_write_raw(tp->ch, raw, sizeof(raw));
	if (err)
		tp->fail++;
	else
		tp->ok++;
	preempt_enable_notrace();
}

/* sink=floor: kring's SAMPLE of the hit, into a bare ring. */
static void bench_tp_floor_probe(void *data, u64 seq, u64 val)
{
	struct bench_tp *tp = data;
	struct kring_record_header hdr = {
		.type = KRING_RECORD_SAMPLE,
		.size = 48,
	};
	u32 raw_size = 20;	/* the two words and 4 bytes of padding */
	unsigned long head;
	u64 raw[2] = { seq, val }, time;
	char *p;

	preempt_disable_notrace();
	time = ktime_get_mono_fast_ns();
	head = tp->fl.head;
	p = tp->fl.data + (head & tp->fl.mask);
	memcpy(p, &hdr, 8);
	memcpy(p + 8, &time, 8);
	memcpy(p + 16, &raw_size, 4);
	memcpy(p + 20, raw, 16);
	memset(p + 36, 0, 4);
	memcpy(p + 40, &tp->seq, 8);
	tp->seq++;
	/* The record before the head: a consumer's acquire of it pairs. */
	smp_store_release(&tp->fl.head, head + 48);
	tp->ok++;
	preempt_enable_notrace();
}

static int bench_tp_thread(void *arg)
{
	struct bench_tp *tp = arg;
	u64 i, t0 = local_clock();

	for (i = 0; i < tp->count; i++) {
		if (tp->period) {
			u64 due = t0 + i * tp->period;

			while (local_clock() < due)
				cpu_relax();
		}
		trace_kring_bench_hit(i, i ^ 0x5a5a5a5a);
		if (!(i & 1023))
			cond_resched();
	}
	tp->ns = local_clock() - t0;
	complete(&tp->done);
	return 0;
}

/*
 * Fire the tracepoint @c->count times from a kthread on this CPU (the
 * writing task is pinned: the kring probe's channel has one writer CPU),
 * with the kring probe attached for sink=kring.
 */
static int bench_tp(const struct bench_cmd *c, struct bench_file *f)
{
	struct bench_tp tp = {
		.count = c->count, .period = c->period, .one_call = c->one_call,
		.sample = c->sample,
	};
	struct task_struct *t;
	int err = 0;

	init_completion(&tp.done);
	if (c->sink == SINK_FLOOR) {
		tp.fl.mask = (16UL << PAGE_SHIFT) - 1;
		tp.fl.data = vzalloc(tp.fl.mask + 1 + 48);
		if (!tp.fl.data)
			return -ENOMEM;
		err = register_trace_kring_bench_hit(bench_tp_floor_probe, &tp);
		if (err)
			goto put;
	}
	if (c->sink == SINK_KRING) {
		tp.ch = kring_channel_get(c->channel);
		if (!tp.ch)
			return -ENOENT;
		err = register_trace_kring_bench_hit(bench_tp_probe, &tp);
		if (err)
			goto put;
	}
	t = kthread_create(bench_tp_thread, &tp, "kring_bench_tp");
	if (IS_ERR(t)) {
		err = PTR_ERR(t);
		goto unregister;
	}
	kthread_bind(t, raw_smp_processor_id());
	wake_up_process(t);
	wait_for_completion(&tp.done);
unregister:
	if (c->sink == SINK_KRING) {
		unregister_trace_kring_bench_hit(bench_tp_probe, &tp);
		tracepoint_synchronize_unregister();
	}
	if (c->sink == SINK_FLOOR) {
		unregister_trace_kring_bench_hit(bench_tp_floor_probe, &tp);
		tracepoint_synchronize_unregister();
	}
put:
	if (tp.ch)
		kring_channel_put(tp.ch);
	vfree(tp.fl.data);
	if (err)
		return err;
	f->len = scnprintf(f->out, sizeof(f->out),
			   "ring=tp sink=%s total=%llu ns=%llu ok=%llu fail=%llu\n",
			   bench_sinks[c->sink], c->count, tp.ns, tp.ok, tp.fail);
	return 0;
}

/* ---- debugfs ----------------------------------------------------------- */

static int bench_run(const struct bench_cmd *c, struct bench_file *f)
{
	struct bench_result r = { 0 };
	struct bench_record *rec;
	int err;

	/* The loop and the ftrace consumer read the CPU once. */
	if (current->nr_cpus_allowed != 1)
		return -EINVAL;
	if (c->ring == BENCH_CLOCK)
		return bench_clock(c, f);
	if (c->ring == BENCH_TP)
		return bench_tp(c, f);
	rec = kzalloc(sizeof(*rec), GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	memset(rec->body.rest, 0xa5, sizeof(rec->body.rest));
	if (c->ring == BENCH_KRING)
		err = bench_kring(c, rec, &r);
	else if (c->ring == BENCH_FLOOR)
		err = bench_floor(c, rec, &r);
	else
		err = bench_ftrace(c, rec, &r);
	kfree(rec);
	if (err)
		return err;
	f->len = scnprintf(f->out, sizeof(f->out),
			   "ring=%s mode=%s size=%u total=%llu ns=%llu ok=%llu fail=%llu consumed=%llu lost=%llu empty_retries=%llu entries=%lu overrun=%lu dropped=%lu\n",
			   c->ring == BENCH_KRING ? "kring" :
			   c->ring == BENCH_FLOOR ? "floor" : "ftrace",
			   c->forward ? "forward" : "overwrite", c->size,
			   c->warmup + c->count, r.ns, r.ok, r.fail, r.consumed,
			   r.lost, r.empty_retries, r.entries, r.overrun, r.dropped);
	return 0;
}

static int bench_open(struct inode *inode, struct file *file)
{
	struct bench_file *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return -ENOMEM;
	file->private_data = f;
	return 0;
}

static int bench_release(struct inode *inode, struct file *file)
{
	kfree(file->private_data);
	return 0;
}

static ssize_t bench_write(struct file *file, const char __user *ubuf,
			   size_t len, loff_t *ppos)
{
	struct bench_file *f = file->private_data;
	struct bench_cmd c;
	char *s;
	int err;

	if (len >= PAGE_SIZE)
		return -EINVAL;
	s = memdup_user_nul(ubuf, len);
	if (IS_ERR(s))
		return PTR_ERR(s);
	err = bench_parse(s, &c);
	kfree(s);
	if (err)
		return err;
	if (mutex_lock_interruptible(&bench_lock))
		return -EINTR;
	f->len = 0;
	err = bench_run(&c, f);
	mutex_unlock(&bench_lock);
	return err ? err : len;
}

static ssize_t bench_read(struct file *file, char __user *ubuf, size_t len,
			  loff_t *ppos)
{
	struct bench_file *f = file->private_data;

	return simple_read_from_buffer(ubuf, len, ppos, f->out, f->len);
}

static const struct file_operations bench_fops = {
	.owner = THIS_MODULE,
	.open = bench_open,
	.release = bench_release,
	.write = bench_write,
	.read = bench_read,
	.llseek = default_llseek,
};

/* Any write: the holds of the run in progress end (hold=NS). */
static ssize_t bench_release_write(struct file *file, const char __user *ubuf,
				   size_t len, loff_t *ppos)
{
	WRITE_ONCE(bench_released, true);
	return len;
}

static const struct file_operations bench_release_fops = {
	.owner = THIS_MODULE,
	.write = bench_release_write,
	.llseek = noop_llseek,
};

static int __init kring_bench_init(void)
{
	bench_dir = debugfs_create_dir("kring_bench", NULL);
	debugfs_create_file("run", 0600, bench_dir, NULL, &bench_fops);
	debugfs_create_file("release", 0200, bench_dir, NULL, &bench_release_fops);
	return 0;
}

static void __exit kring_bench_exit(void)
{
	debugfs_remove_recursive(bench_dir);
}

module_init(kring_bench_init);
module_exit(kring_bench_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kring benchmark: kring's and ftrace's producer loops, one tracepoint and three sinks");
