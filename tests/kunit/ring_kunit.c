// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suites of the data-ring core (kmod/ring.c) in the kernel, through
 * its exported producer API: "kring_ring", the cases of
 * tests/common/ring_cases.h, which the host build of ring.c runs too
 * (reserve/commit/wrap at every offset, copies across pages, nested
 * writers, lost accounting, backward writing, discard, wake-ups, garbage
 * tails), and "kring_ring_hardirq", what only a kernel can run: a real
 * hrtimer interrupting a task-context writer, and wake-up settings changed
 * from another CPU while a kernel thread writes.
 *
 * Test records: tests/common/test_record.h, shared with the host suites.
 */
#include <kunit/test.h>
#include <linux/gfp.h>
#include <linux/hrtimer.h>
#include <linux/kthread.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/preempt.h>
#include <linux/random.h>
#include <linux/sizes.h>
#include <linux/slab.h>

#include "compat.h"
#include "ring.h"
#include "test_record.h"
#include "ring_cases.h"

static void test_free_page(void *addr)
{
	free_page((unsigned long)addr);
}

static void *test_page_new(struct kunit *test)
{
	void *p = (void *)get_zeroed_page(GFP_KERNEL);

	if (p && kunit_add_action_or_reset(test, test_free_page, p))
		return NULL;
	return p;
}

/* ---- nesting in a real interrupt --------------------------------------- */

/*
 * A real interrupt: an hrtimer pinned to this CPU writes records in hardirq
 * context (a hard one: on PREEMPT_RT the others expire in a thread, which
 * never interrupts a writer with preemption disabled) while this task
 * writes records with preemption disabled (so both run on one CPU, as the
 * ring requires) and consumes them. Ten bursts of
 * 20 ms, and more until a timer record has nested in a task record: when
 * the timer fires is up to the host (bounded by a minute, which only a
 * timer that never fires reaches).
 */
struct irq_ctx {
	struct hrtimer timer;
	struct test_ring *tr;
	u64 fired;
	u64 failed;
};

static enum hrtimer_restart ring_irq_writer(struct hrtimer *timer)
{
	struct irq_ctx *ctx = container_of(timer, struct irq_ctx, timer);

	ctx->fired++;
	if (test_write(&ctx->tr->rb, 24 + 8 * (ctx->fired % 8), NULL, 0, END_COMMIT))
		ctx->failed++;
	hrtimer_forward_now(timer, ns_to_ktime(20 * NSEC_PER_USEC));
	return HRTIMER_RESTART;
}

static void ring_nesting_hardirq(struct kunit *test)
{
	struct test_ring *tr = test_ring_new(test, 1, 0);
	struct irq_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	struct kring_ring_counts c;
	struct tally t = {};
	u64 end, give_up, i = 0;
	int burst;

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	ctx->tr = tr;
	kring_hrtimer_setup(&ctx->timer, ring_irq_writer, CLOCK_MONOTONIC,
			    HRTIMER_MODE_REL_PINNED_HARD);

	give_up = ktime_get_ns() + 60 * NSEC_PER_SEC;
	for (burst = 0; burst < 10 || (!local64_read(&tr->rb.nested) && ktime_get_ns() < give_up);
	     burst++) {
		preempt_disable();
		hrtimer_start(&ctx->timer, ns_to_ktime(20 * NSEC_PER_USEC),
			      HRTIMER_MODE_REL_PINNED_HARD);
		end = ktime_get_ns() + 20 * NSEC_PER_MSEC;
		while (ktime_get_ns() < end && !t.bad) {
			/* chunked: long enough to be interrupted mid-record */
			test_write(&tr->rb, 16 + 8 * (i++ % 32), NULL, 1, END_COMMIT);
			if (!(i % 16))
				test_consume(test, tr, &t);
		}
		hrtimer_cancel(&ctx->timer);
		preempt_enable();
		cond_resched();
	}
	/* Empty the ring, then flush pending losses with one more record. */
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 16, NULL, 0, END_COMMIT), 0);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));

	kring_ring_read_counts(&tr->rb, &c);
	kunit_info(test, "%llu task records, %llu timer records (%llu lost), %llu nested, %llu lost in all",
		   i, ctx->fired, ctx->failed, c.nested, c.lost_no_space);
	KUNIT_EXPECT_GT(test, ctx->fired, 0ULL);
	KUNIT_EXPECT_GT(test, c.nested, 0ULL);
	KUNIT_EXPECT_EQ(test, c.produced, i + ctx->fired + 1);
	KUNIT_EXPECT_EQ(test, t.records, c.written);
	KUNIT_EXPECT_EQ(test, t.lost, c.lost_no_space);
	KUNIT_EXPECT_EQ(test, t.records + t.lost, c.produced);
	KUNIT_EXPECT_EQ(test, local_read(&tr->rb.lost_pending), 0L);
	test_expect_accounting(test, tr);
}

/* ---- wake-up settings changed while another CPU writes ----------------- */

/*
 * A kernel thread bound to one CPU writes 32-byte records without pause;
 * this task, on any other CPU, consumes them (data_tail = data_head), sets a
 * watermark of @old_wm, lets a random number of bytes go by, lowers it to
 * @new_wm and then expects a wake-up before another new_wm + 8 records have
 * been published: the writer's window for the old watermark, which may be
 * being set at that very moment, must not outlive the call
 * (kring_ring_set_wakeup(), barriers G-J of kmod/ring.c). A lost zeroing
 * shows when the old window still had more than that to run.
 */
struct live_ctx {
	struct test_ring *tr;
	u64 records;
};

static int live_writer(void *arg)
{
	struct live_ctx *ctx = arg;

	while (!kthread_should_stop()) {
		test_write(&ctx->tr->rb, 32, NULL, 0, END_COMMIT);
		if (!(++ctx->records % 64))
			cond_resched();
	}
	return 0;
}

/* Consume until data_head reaches @until; false if the writer stalled. */
static bool live_wait(struct test_ring *tr, u64 until)
{
	u64 give_up = ktime_get_ns() + 60 * NSEC_PER_SEC;
	u64 h;

	for (;;) {
		h = smp_load_acquire(&tr->ctl->data_head);	/* C */
		smp_mb();					/* D */
		WRITE_ONCE(tr->ctl->data_tail, h);
		if ((s64)(h - until) >= 0)
			return true;
		if (ktime_get_ns() > give_up)
			return false;
		cond_resched();
	}
}

static void ring_wakeup_settings_live(struct kunit *test)
{
	const unsigned long old_wm = 4096, new_wm = 256;
	struct test_ring *tr = test_ring_new(test, 16, 0);
	struct live_ctx ctx = { .tr = tr };
	struct task_struct *writer;
	unsigned int i, late = 0, cpu;
	u64 h0, w0, deadline;

	cpu = cpumask_any_but(cpu_online_mask, raw_smp_processor_id());
	if (cpu >= nr_cpu_ids)
		kunit_skip(test, "one CPU online: nothing writes beside the setter");
	WRITE_ONCE(tr->ctl->need_wakeup, 1);
	writer = kthread_create(live_writer, &ctx, "kring_live_writer");
	KUNIT_ASSERT_FALSE(test, IS_ERR(writer));
	kthread_bind(writer, cpu);
	get_task_struct(writer);
	wake_up_process(writer);

	deadline = ktime_get_ns() + 10 * NSEC_PER_SEC;
	for (i = 0; i < 2000 && (i < 100 || ktime_get_ns() < deadline); i++) {
		kring_ring_set_wakeup(&tr->rb, old_wm, 0);
		h0 = READ_ONCE(tr->ctl->data_head);
		if (!live_wait(tr, h0 + get_random_u32() % (2 * old_wm)))
			break;
		kring_ring_set_wakeup(&tr->rb, new_wm, 0);
		/*
		 * The count first: a wake-up it holds was issued after its
		 * head's publication, which @h0 then holds (pairs with E,
		 * between the two stores). Read the other way round, a pause
		 * between the loads could count a later wake-up in @w0 and
		 * find data_head already far beyond @h0.
		 */
		w0 = READ_ONCE(tr->ctl->wakeups);
		smp_rmb();	/* pairs with E: the count, then the head */
		h0 = READ_ONCE(tr->ctl->data_head);
		if (!live_wait(tr, h0 + new_wm + 8 * 32))
			break;
		smp_rmb();	/* pairs with B: the wake-up counted before that head */
		if (READ_ONCE(tr->ctl->wakeups) == w0)
			late++;
	}
	kthread_stop(writer);
	put_task_struct(writer);
	kunit_info(test, "%u changes, %llu records written on CPU %u", i, ctx.records, cpu);
	KUNIT_EXPECT_GE_MSG(test, i, 100U, "the writer stalled");
	KUNIT_EXPECT_EQ_MSG(test, late, 0U,
			    "a lowered watermark waited for the old window to run out");
}

/* ---- a second CPU inside the ring -------------------------------------- */

struct cross_ctx {
	struct test_ring *tr;
	int ret;
	int cpu;
};

/* The other CPU's writer, in its IPI: one whole record (KRING_RING_CHECK_CPU). */
static void __maybe_unused cross_writer(void *arg)
{
	struct cross_ctx *x = arg;
	u64 body = 0x5a5a5a5a5a5a5a5aULL;

	x->cpu = smp_processor_id();
	x->ret = kring_output_write(&x->tr->rb, KRING_TEST_RECORD_TYPE, 0, &body, sizeof(body), 0);
}

/*
 * The one-writer-CPU rule's check (KRING_RING_CHECK_CPU: lockdep,
 * DEBUG_PREEMPT or KCSAN kernels) fires on an entry from a second CPU:
 * this CPU holds a reservation while another CPU writes a record (an IPI
 * we wait for, so the two never race here). The entry is counted; the
 * ring is marked quiet so that the warning real misuse prints does not
 * fail the guest's console check. The records still come out whole (the
 * foreign writer ran as a nested one) and the check is left clear.
 */
static void ring_check_cpu_foreign_entry(struct kunit *test)
{
#ifdef KRING_RING_CHECK_CPU
	struct test_ring *tr = test_ring_new(test, 1, 0);
	struct cross_ctx x = { .tr = tr, .ret = 1, .cpu = -1 };
	struct kring_output_handle h;
	struct tally t = {};
	int cpu, other, ret, call;

	tr->rb.cpu_conflicts_quiet = true;
	preempt_disable();
	cpu = smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, cpu);
	if (other >= nr_cpu_ids) {
		preempt_enable();
		kunit_skip(test, "needs a second online CPU");
	}
	ret = kring_output_begin(&h, &tr->rb, 16, 0);
	if (!ret) {
		kring_output_header(&h, KRING_TEST_RECORD_TYPE, 0);
		kring_output_copy(&h, &h.seq, sizeof(h.seq));
		call = smp_call_function_single(other, cross_writer, &x, 1);
		kring_output_end(&h);
	}
	preempt_enable();
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_ASSERT_EQ(test, call, 0);
	KUNIT_EXPECT_EQ(test, x.ret, 0);
	KUNIT_EXPECT_EQ(test, x.cpu, other);
	KUNIT_EXPECT_EQ(test, atomic_read(&tr->rb.cpu_conflicts), 1);
	KUNIT_EXPECT_EQ(test, READ_ONCE(tr->rb.writer_cpu), -1);
	KUNIT_ASSERT_TRUE(test, test_consume(test, tr, &t));
	KUNIT_EXPECT_EQ(test, t.records, 2ULL);

	/* One CPU at a time again: no entry is counted. */
	KUNIT_ASSERT_EQ(test, test_write(&tr->rb, 24, NULL, 0, END_COMMIT), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&tr->rb.cpu_conflicts), 1);
#else
	kunit_skip(test, "KRING_RING_CHECK_CPU is off in this kernel");
#endif
}

static struct kunit_case kring_ring_hardirq_cases[] = {
	KUNIT_CASE(ring_nesting_hardirq),
	KUNIT_CASE(ring_wakeup_settings_live),
	KUNIT_CASE(ring_check_cpu_foreign_entry),
	{}
};

static struct kunit_suite kring_ring_suite = {
	.name = "kring_ring",
	.test_cases = kring_ring_cases,
};

static struct kunit_suite kring_ring_hardirq_suite = {
	.name = "kring_ring_hardirq",
	.test_cases = kring_ring_hardirq_cases,
};

kunit_test_suites(&kring_ring_suite, &kring_ring_hardirq_suite);
