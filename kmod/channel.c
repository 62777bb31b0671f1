// SPDX-License-Identifier: GPL-2.0
/*
 * The channel: one open /dev/kring file. Its life (open, release, the
 * ids producers find it by), its wakeups and poll, the mapping of its data
 * ring, its enable state, its set-output links and the producer API. The
 * file operations are dispatched from file.c, above this file: the ioctls
 * to ioctl.c, which makes set-output links with redirect.c, and the AUX
 * area's mmap to aux.c; all three call down here, never the reverse. The
 * per-user count of open channels is user.c's.
 *
 * Locking: ch->lock (a mutex) serialises configuration, enable/disable,
 * pause and buffer attach/detach. mmap and munmap take it with mmap_lock
 * held, so nothing under ch->lock may fault on user memory: ioctls copy
 * their arguments in and out outside it. Producers never take it: they
 * find the buffer with rcu_dereference(ch->buf). No ioctl takes a lock of
 * another user's channel (set-output takes its target's too, lower id
 * first) or holds one across a wait another user's path shares
 * (docs/ARCHITECTURE.md, "No user waits for another").
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/minmax.h>
#include <linux/poll.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/xarray.h>
#include <linux/workqueue.h>
#include <linux/delay.h>
#include <linux/compat.h>
#include <linux/hardirq.h>
#include <linux/rculist.h>
#include <linux/mm.h>
#include <linux/file.h>
#include <linux/log2.h>
#include <linux/capability.h>
#include <linux/err.h>

#include "compat.h"
#include "channel.h"
#include "source.h"
#include "user.h"
#include "sample.h"

static atomic64_t kring_next_id = ATOMIC64_INIT(0);

/* Open channels by id, for kring_channel_get(); entries are RCU-freed. */
static DEFINE_XARRAY(kring_channels);

/* ---- wakeups ----------------------------------------------------------- */

/**
 * kring_channel_wakeup() - wake the pollers of @ch's buffer
 * @ch: the buffer's owner
 *
 * Queues @ch's wakeup irq_work, unless every poller it could wake was
 * woken already and has not polled since: @ch's @poll_pending and that
 * of each channel redirected into it are set (by kring_wakeup_work(),
 * before it wakes them) and only their poll clears them. So a writer
 * that finds a wakeup due on every record queues one irq_work per poll,
 * not one per record: on PREEMPT_RT the irq_work runs in the CPU's
 * irq_work thread, a SCHED_FIFO thread, and writers in hard interrupt
 * context (the hard hrtimers of the sources) or a busy producer queueing
 * it on every record kept that thread running, which starved every
 * normal thread of the CPU, among them the CPU hotplug threads (and with
 * hotplug stuck, every cpus_read_lock()).
 *
 * The smp_mb() orders what the caller published (data_head, aux_head)
 * before the loads of @poll_pending; it pairs with the full barrier of
 * the atomic_xchg() in kring_channel_poll(), after which the poller reads
 * the buffer: a writer that sees a flag still set leaves its record to
 * the poll that clears it, which reports readiness and whose reader sees
 * the record.
 *
 * Context: any, up to NMI; the buffer found under RCU (or preemption
 * disabled), which keeps @ch and its redirected list.
 */
void kring_channel_wakeup(struct kring_channel *ch)
{
	struct kring_redirect_link *l;

	smp_mb(); /* pairs with atomic_xchg() in kring_channel_poll() */
	if (!atomic_read(&ch->poll_pending))
		goto queue;
	list_for_each_entry_rcu(l, &ch->redirected, node)
		if (!atomic_read(&l->ch->poll_pending))
			goto queue;
	return;
queue:
	irq_work_queue(&ch->wakeup_work);
}

/*
 * The ring core calls this from the outermost writer's end, in any context
 * up to NMI: only queue the irq_work, which wakes the waiters.
 */
static void kring_ring_wakeup(struct kring_ring *rb)
{
	struct kring_buffer *buf = container_of(rb, struct kring_buffer, ring);

	kring_channel_wakeup(buf->owner);
}

/*
 * Wake the buffer owner's pollers and those of every channel redirected
 * into it (perf wakes every event attached to a ring buffer): they poll
 * the same buffer. The list is RCU; its channels are RCU-freed. At most
 * every 100 ms, also refresh the control page's TSC conversion.
 */
static void kring_wakeup_work(struct irq_work *work)
{
	struct kring_channel *ch = container_of(work, struct kring_channel, wakeup_work);
	struct kring_redirect_link *l;
	struct kring_buffer *buf;
	unsigned long flags;

	rcu_read_lock();
	/* The consumer is about to read: its time conversion gets fresh. */
	buf = rcu_dereference(ch->buf);
	if (buf && time_after(jiffies, READ_ONCE(buf->time_refreshed) + HZ / 10)) {
		raw_spin_lock_irqsave(&buf->write_lock, flags);
		WRITE_ONCE(buf->time_refreshed, jiffies);
		kring_clock_refresh_ctl(buf->ctl, ch->attr.clockid);
		raw_spin_unlock_irqrestore(&buf->write_lock, flags);
	}
	/*
	 * Set before the wakeup: a poller that polled before it is woken
	 * and finds it; kring_channel_wakeup() queues no other wakeup
	 * until a poll cleared one.
	 */
	atomic_set(&ch->poll_pending, 1);
	wake_up_all(&ch->wait);
	list_for_each_entry_rcu(l, &ch->redirected, node) {
		atomic_set(&l->ch->poll_pending, 1);
		wake_up_all(&l->ch->wait);
	}
	rcu_read_unlock();
}

/* ---- mapping ---------------------------------------------------------- */

/*
 * What the mapping layer calls back (struct kring_buffer_owner_ops): every
 * vma of the channel, data ring or AUX area, counts in ch->mmap_count, and
 * the last one detaches the buffer (kring_channel_vma_gone()).
 */
static void kring_channel_vma_open(struct kring_channel *ch)
{
	/* A copy of a live vma: the count is above 0 and stays so. */
	atomic_inc(&ch->mmap_count);
}

static void kring_channel_vma_close(struct kring_channel *ch)
{
	kring_channel_vma_gone(ch);
}

static const struct kring_buffer_owner_ops kring_channel_owner_ops = {
	.vma_open = kring_channel_vma_open,
	.vma_close = kring_channel_vma_close,
};

/* A new buffer becomes the channel's (ch->lock held). */
static void kring_channel_attach(struct kring_channel *ch, struct kring_buffer *buf)
{
	lockdep_assert_held(&ch->lock);
	buf->owner = ch;
	buf->owner_ops = &kring_channel_owner_ops;
	buf->ring.wakeup = kring_ring_wakeup;
	buf->ring.clock = kring_clock_fn(ch->attr.clockid);
	kring_clock_setup_ctl(buf->ctl, ch->attr.clockid);
	kring_ring_set_wakeup(&buf->ring, ch->watermark, ch->wakeup_events);
	kring_ring_set_paused(&buf->ring, ch->paused);
	/*
	 * A capture source of a channel without a CPU writes wherever its
	 * task runs (and so do those of the channels set-output may redirect
	 * here, which have no CPU either): producers lock too. Before the
	 * buffer is published: no producer has seen it clear.
	 */
	buf->lock_producers = ch->source && ch->attr.cpu < 0;
	rcu_assign_pointer(ch->buf, buf);
}

/* ---- the channel of a file ------------------------------------------ */

/*
 * The file operations of /dev/kring (kring_fops, file.c): set at module
 * init, before the device exists, and read-only from then on. Known here
 * only through kring_channels_init(): file.c, above this file, refers to
 * the functions of this file, and this file never to file.c.
 */
static const struct file_operations *kring_channel_fops __ro_after_init;

/**
 * kring_channels_init() - the file operations that make a file a channel
 * @fops: those of /dev/kring
 *
 * Context: module init, before /dev/kring is registered.
 */
void __init kring_channels_init(const struct file_operations *fops)
{
	kring_channel_fops = fops;
}

/**
 * kring_channel_from_file() - the channel of an open file, if it is one
 * @file: any open file
 *
 * Return: the channel, with no reference taken (the file holds one while
 * the caller holds @file), or NULL when @file is not a /dev/kring file.
 */
struct kring_channel *kring_channel_from_file(const struct file *file)
{
	return file->f_op == kring_channel_fops ? file->private_data : NULL;
}

/* ---- producer API (<kring/producer.h>) ------------------------------- */

/**
 * __kring_channel_get() - find an open channel by the id KRING_IOC_ID reports
 * @id:		channel id
 * @api_version: the KRING_PRODUCER_API_VERSION the caller was built with
 *
 * Called through kring_channel_get() (<kring/producer.h>), which passes
 * the caller's version: a producer built against another version of the
 * handle layouts gets no channel, and the log names it.
 *
 * Context: any context that may take rcu_read_lock().
 * Return: the channel with a reference (drop it with kring_channel_put()),
 * or NULL if no channel has this id or @api_version is not ours.
 */
struct kring_channel *__kring_channel_get(u64 id, unsigned int api_version)
{
	struct kring_channel *ch;

	if (api_version != KRING_PRODUCER_API_VERSION) {
		pr_err_ratelimited("kring: %pS: built for producer API %u, kring.ko has %u\n",
				   __builtin_return_address(0), api_version,
				   KRING_PRODUCER_API_VERSION);
		return NULL;
	}
	if (id > ULONG_MAX)
		return NULL;
	rcu_read_lock();
	ch = xa_load(&kring_channels, id);
	if (ch && !refcount_inc_not_zero(&ch->refs))
		ch = NULL;
	rcu_read_unlock();
	return ch;
}
EXPORT_SYMBOL_GPL(__kring_channel_get);

/**
 * __kring_channel_get_fd() - find the channel a file descriptor holds open
 * @fd:		a file descriptor of the current process
 * @api_version: the KRING_PRODUCER_API_VERSION the caller was built with
 *
 * Called through kring_channel_get_fd() (<kring/producer.h>): a driver
 * takes a channel from a user by a descriptor the user holds, not by an id
 * anyone can name. The file's reference keeps the channel open while we
 * take ours.
 *
 * Context: process context, the task that passed @fd.
 * Return: the channel with a reference, or NULL if @fd is not an open
 * /dev/kring file of the current process or @api_version is not ours.
 */
struct kring_channel *__kring_channel_get_fd(int fd, unsigned int api_version)
{
	struct kring_channel *ch;
	struct file *file;

	if (api_version != KRING_PRODUCER_API_VERSION) {
		pr_err_ratelimited("kring: %pS: built for producer API %u, kring.ko has %u\n",
				   __builtin_return_address(0), api_version,
				   KRING_PRODUCER_API_VERSION);
		return NULL;
	}
	if (fd < 0)
		return NULL;
	file = fget(fd);
	if (!file)
		return NULL;
	ch = kring_channel_from_file(file);
	if (ch)
		refcount_inc(&ch->refs);
	fput(file);
	return ch;
}
EXPORT_SYMBOL_GPL(__kring_channel_get_fd);

/*
 * Channels not yet freed: kring_exit() waits for them, since the last
 * reference may be dropped in NMI context and freed later through an
 * irq_work and an RCU callback, both in this module's text, and the file's
 * reference is dropped by kring_release_work() after a grace period.
 */
static atomic_t kring_nr_channels = ATOMIC_INIT(0);

static void kring_channel_free_rcu(struct rcu_head *head)
{
	struct kring_channel *ch = container_of(head, struct kring_channel, rcu);

	kring_formats_free(ch);
	kfree(ch);
	atomic_dec(&kring_nr_channels);
}

/* The last reference went in NMI context: free from here (hard irq). */
static void kring_channel_free_work(struct irq_work *work)
{
	struct kring_channel *ch = container_of(work, struct kring_channel, free_work);

	call_rcu(&ch->rcu, kring_channel_free_rcu);
}

/**
 * kring_channel_put() - drop a reference taken by kring_channel_get()
 * @ch: the channel, may be NULL
 *
 * Context: any, NMI included; the memory is freed after an RCU grace
 * period (call_rcu() is not NMI-safe: from NMI it is queued through an
 * irq_work first).
 */
void kring_channel_put(struct kring_channel *ch)
{
	if (!ch || !refcount_dec_and_test(&ch->refs))
		return;
	if (in_nmi())
		irq_work_queue(&ch->free_work);
	else
		call_rcu(&ch->rcu, kring_channel_free_rcu);
}
EXPORT_SYMBOL_GPL(kring_channel_put);

/**
 * kring_channels_exit() - wait until every channel is freed (module exit)
 *
 * Every file is closed and every module that could hold a reference
 * (through kring_channel_get()) is gone by now; what remains are releases
 * and frees in flight. A channel that never goes is a leak: warn and keep
 * waiting rather than free the module text under its callbacks.
 */
void kring_channels_exit(void)
{
	unsigned int tries = 0;

	for (;;) {
		rcu_barrier();
		if (!atomic_read(&kring_nr_channels))
			return;
		WARN_ONCE(++tries == 500, "kring: %d channels still referenced at exit\n",
			  atomic_read(&kring_nr_channels));
		msleep(20);
	}
}

/*
 * The buffer a producer writes into, in *@bufp: 0, or -EAGAIN while @ch is
 * disabled, -ENODEV while it is not mapped (neither is counted). The
 * caller has preemption disabled from here to the end of its record: that
 * is an RCU read-side critical section, and the buffer is freed after a
 * grace period once it is detached (queue_rcu_work()), so it stays until
 * then. An errno and a pointer apart, not an ERR_PTR(): the fast path
 * then tests the pointer once.
 */
static __always_inline int kring_channel_wbuf(struct kring_channel *ch,
					      struct kring_buffer **bufp)
{
	if (!READ_ONCE(ch->enabled))
		return -EAGAIN;
	*bufp = rcu_dereference_sched(ch->buf);
	return *bufp ? 0 : -ENODEV;
}

/*
 * The write lock of a buffer whose producers lock: taken, or in NMI only
 * tried (a writer it interrupted on this CPU may hold it). False: not
 * taken, the write is refused with -EBUSY.
 */
static __always_inline bool kring_producer_lock(struct kring_buffer *buf, unsigned long *flags)
{
	if (!in_nmi()) {
		raw_spin_lock_irqsave(&buf->write_lock, *flags);
		return true;
	}
	return raw_spin_trylock_irqsave(&buf->write_lock, *flags);
}

/*
 * Producers of a buffer kring writes from more than one CPU
 * (@buf->lock_producers, buffer.h) take its write_lock, as kring's own
 * writers do (the *_locked() functions below), so that the ring has one
 * writer CPU at a time whatever CPU the producer runs on: spinning with
 * interrupts off in task, softirq and hardirq context; in NMI only if the
 * lock is free (the NMI may have interrupted its holder on this CPU), as
 * BPF's ring buffer does, -EBUSY otherwise. The other buffers take no
 * lock: their one writer CPU is the producer's rule (docs/PRODUCER.md,
 * "Which channels, from where").
 *
 * The flag is read once per record, inside the producer's preemption-off
 * section: kring_aux_mmap() sets it and waits for a grace period before
 * another CPU may write, so a producer that found it clear has finished.
 *
 * kring_channel_output_begin() into a buffer whose producers lock: the
 * lock is held until the end call, its flags kept under it and the handle
 * marked (@h->wakeup, kring's field of the handle).
 */
static noinline int kring_channel_begin_locked(struct kring_output_handle *h,
					       struct kring_buffer *buf, unsigned int size)
{
	unsigned long flags;
	int ret;

	if (!kring_producer_lock(buf, &flags))
		return -EBUSY;
	ret = kring_output_begin(h, &buf->ring, size, 0);
	if (ret) {
		raw_spin_unlock_irqrestore(&buf->write_lock, flags);
		return ret;
	}
	buf->producer_irqflags = flags;
	h->wakeup = 1;
	__release(&buf->write_lock);	/* for sparse: held until the end call */
	return 0;
}

/**
 * kring_channel_output_begin() - reserve @size bytes in a channel's ring
 * @h:		handle, passed to kring_output_copy() and kring_channel_output_end()
 * @ch:		channel
 * @size:	record size including its header (rounded up to 8): at least
 *		a header, at most KRING_RECORD_MAX_SIZE and what the ring
 *		holds; kring_output_begin() bounds it before any arithmetic
 *
 * Context: preemption disabled, any context up to NMI.
 * Return: 0 with the space reserved; -ENODEV while the channel is not
 * mapped, -EAGAIN while it is disabled, -EBUSY in NMI while another
 * writer holds the lock of a channel kring writes from more than one CPU
 * (none of them counted); otherwise the error of kring_output_begin(),
 * counted as lost: -E2BIG for a size out of those bounds, -ENOSPC,
 * -EAGAIN while paused.
 */
int kring_channel_output_begin(struct kring_output_handle *h,
			       struct kring_channel *ch, unsigned int size)
{
	struct kring_buffer *buf;
	int ret = kring_channel_wbuf(ch, &buf);

	if (ret)
		return ret;
	if (unlikely(READ_ONCE(buf->lock_producers)))
		return kring_channel_begin_locked(h, buf, size);
	h->wakeup = 0;
	/* A channel's ring always has a clock: it stamps the record. */
	return kring_output_begin(h, &buf->ring, size, 0);
}
EXPORT_SYMBOL_GPL(kring_channel_output_begin);

/* The end of a record whose begin took the buffer's write_lock. */
static noinline void kring_channel_end_locked(struct kring_output_handle *h, bool discard)
{
	struct kring_buffer *buf = container_of(h->rb, struct kring_buffer, ring);
	unsigned long flags = buf->producer_irqflags;

	__acquire(&buf->write_lock);	/* for sparse: held since the begin */
	h->wakeup = 0;
	if (discard)
		kring_output_discard(h);
	else
		kring_output_end(h);
	raw_spin_unlock_irqrestore(&buf->write_lock, flags);
}

/**
 * kring_channel_output_end() - commit what kring_channel_output_begin() reserved
 * @h: the handle
 */
void kring_channel_output_end(struct kring_output_handle *h)
{
	if (unlikely(h->wakeup)) {
		kring_channel_end_locked(h, false);
		return;
	}
	kring_output_end(h);
}
EXPORT_SYMBOL_GPL(kring_channel_output_end);

/**
 * kring_channel_output_discard() - cancel what kring_channel_output_begin()
 *	reserved
 * @h: the handle, whatever was written through it
 *
 * The end call of a record the producer gives up (a refused copy, a
 * failure of its own): the reservation becomes a KRING_RECORD_PAD record
 * of its size, which consumers skip, counted in records_discarded.
 */
void kring_channel_output_discard(struct kring_output_handle *h)
{
	if (unlikely(h->wakeup)) {
		kring_channel_end_locked(h, true);
		return;
	}
	kring_output_discard(h);
}
EXPORT_SYMBOL_GPL(kring_channel_output_discard);

/* kring_channel_write() into a buffer whose producers lock. */
static noinline int kring_channel_write_locked(struct kring_buffer *buf, u32 type, u16 misc,
					       const void *body, unsigned int len)
{
	unsigned long flags;
	int ret;

	if (!kring_producer_lock(buf, &flags))
		return -EBUSY;
	ret = kring_output_write(&buf->ring, type, misc, body, len, 0);
	raw_spin_unlock_irqrestore(&buf->write_lock, flags);
	return ret;
}

/**
 * kring_channel_write() - write one record into a channel in one call
 * @ch:		channel
 * @type:	the record's type (KRING_RECORD_* or one of the producer's)
 * @misc:	its header's misc bits
 * @body:	the bytes after the header (may be NULL when @len is 0)
 * @len:	how many: at most KRING_RECORD_MAX_SIZE less a header, and
 *		what the ring holds; bounded before anything is computed
 *		from it
 *
 * The record is the header and @len bytes rounded up to 8 (the padding
 * zeroed), numbered as every record; it carries no ring time (one that
 * needs a time has it in @body), so the channel's clock is read only for
 * a record that is lost, for its LOST record. A begin, a copy and an
 * end in one exported call, as bpf_ringbuf_output() is: no handle lives in
 * the caller's memory. It disables preemption for its own duration, and
 * takes the buffer's write lock where kring writes it from more than one
 * CPU (kring_channel_write_locked()); elsewhere the channel's rule stays the
 * caller's: its writers run on one CPU at a time.
 *
 * Context: any context up to NMI.
 * Return: as kring_channel_output_begin(): 0, -ENODEV (not mapped),
 * -EAGAIN (disabled) or -EBUSY (NMI, the lock held) counted nowhere,
 * -E2BIG (a @len no record of the ring can carry), -ENOSPC or -EAGAIN
 * (paused) counted as lost; -EINVAL, counted nowhere, for @len above 0
 * without @body.
 */
int kring_channel_write(struct kring_channel *ch, u32 type, u16 misc,
			const void *body, unsigned int len)
{
	struct kring_buffer *buf;
	int ret;

	preempt_disable_notrace();
	ret = kring_channel_wbuf(ch, &buf);
	if (!ret && unlikely(READ_ONCE(buf->lock_producers)))
		ret = kring_channel_write_locked(buf, type, misc, body, len);
	else if (!ret)
		ret = kring_output_write(&buf->ring, type, misc, body, len, 0);
	preempt_enable_notrace();
	return ret;
}
EXPORT_SYMBOL_GPL(kring_channel_write);

/*
 * kring_channel_write_sample() and kring_channel_write_raw(): @data (of
 * the channel's sample_type @type, @data->id set here) into the channel.
 */
static noinline int channel_write_sample_locked(struct kring_buffer *buf, u64 type,
						struct kring_sample_data *data)
{
	unsigned long flags;
	int ret;

	if (!kring_producer_lock(buf, &flags))
		return -EBUSY;
	ret = kring_output_write_sample(&buf->ring, type, data);
	raw_spin_unlock_irqrestore(&buf->write_lock, flags);
	return ret;
}

static __always_inline int channel_write_sample(struct kring_channel *ch, u64 type,
						struct kring_sample_data *data)
{
	struct kring_buffer *buf;
	int ret;

	/*
	 * RAW's address and size are checked in kring_output_write_sample(),
	 * before its arithmetic: beyond KRING_SAMPLE_RAW_MAX the record is
	 * refused as too big.
	 */
	data->id = ch->id;
	ret = kring_channel_wbuf(ch, &buf);
	if (ret)
		return ret;
	if (unlikely(READ_ONCE(buf->lock_producers)))
		return channel_write_sample_locked(buf, type, data);
	return kring_output_write_sample(&buf->ring, type, data);
}

/**
 * kring_channel_write_sample() - write one SAMPLE record into a channel
 * @ch:		channel
 * @data:	the fields the channel's attr.sample_type asks for; @data->id
 *		and @data->time are filled in here. RAW data, when the channel
 *		asks for it, is at most KRING_SAMPLE_RAW_MAX bytes.
 *
 * Context: preemption disabled, any context up to NMI.
 * Return: as kring_channel_output_begin(), which refuses RAW data above
 * KRING_SAMPLE_RAW_MAX as a size out of bounds (-E2BIG, counted in
 * lost_too_big); -EINVAL, counted nowhere, for RAW data of a size above 0
 * without an address.
 */
int kring_channel_write_sample(struct kring_channel *ch,
			       struct kring_sample_data *data)
{
	return channel_write_sample(ch, ch->attr.sample_type, data);
}
EXPORT_SYMBOL_GPL(kring_channel_write_sample);

/**
 * kring_channel_write_raw() - write one SAMPLE record of RAW data, its other
 *	fields from the context
 * @ch:		channel
 * @raw:	the RAW data (may be NULL when @size is 0)
 * @size:	its bytes, at most KRING_SAMPLE_RAW_MAX
 *
 * kring_channel_write_sample() for what a tracepoint's probe writes: the
 * fields other than RAW that the channel's attr.sample_type asks for come
 * from the context, as perf fills them for a tracepoint: IDENTIFIER and
 * ID the channel's id, TID the current task's (tgid, pid), TIME the
 * ring's, CPU this CPU, PERIOD 1, an empty CALLCHAIN, and IP 0 (kring
 * writes no kernel address a user could read). No structure to fill, so
 * nothing to zero on every call. Without RAW in the sample_type, @raw is
 * not written.
 *
 * Context: preemption disabled, any context up to NMI.
 * Return: as kring_channel_write_sample().
 */
int kring_channel_write_raw(struct kring_channel *ch, const void *raw, u32 size)
{
	/*
	 * Every field the sample_type asks for is set below (the SAMPLE
	 * writer reads no other): no zeroing on every call.
	 */
	struct kring_sample_data d __uninitialized;
	u64 type = ch->attr.sample_type;

	d.ip = 0;
	/* Only what the sample_type asks for: the task is another line to load */
	if (type & KRING_SAMPLE_TID) {
		d.pid = task_tgid_nr(current);
		d.tid = task_pid_nr(current);
	}
	d.time = 0;
	if (type & KRING_SAMPLE_CPU)
		d.cpu = smp_processor_id();
	d.period = 1;
	d.raw = raw;
	d.raw_size = size;
	d.chain = NULL;
	d.chain_nr = 0;
	return channel_write_sample(ch, type, &d);
}
EXPORT_SYMBOL_GPL(kring_channel_write_raw);

/* ---- mmap -------------------------------------------------------------- */

/**
 * kring_channel_mmap() - mmap of a channel's data ring (file.c sends the
 *	AUX area's, at aux_offset, to kring_aux_mmap())
 * @file: the channel
 * @vma: at offset 0: 1 + 2^n pages, or 1 + 2 * 2^n pages with
 *	KRING_ATTR_F_MIRROR (buffer.c)
 *
 * Return: 0, -EINVAL for a wrong length, offset or flags, for an
 * unconfigured or redirected (KRING_IOC_SET_OUTPUT) channel or one whose
 * buffer has another size, -EPERM beyond the locked-memory limits, -ENOMEM.
 */
int kring_channel_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kring_channel *ch = file->private_data;
	unsigned long data_pages;
	struct kring_buffer *buf;
	bool overwrite;
	int ret;

	if (vma->vm_pgoff != 0)
		return -EINVAL;
	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;		/* MAP_PRIVATE would copy on write */
	if (vma->vm_flags & VM_EXEC)
		return -EINVAL;

	mutex_lock(&ch->lock);
	ret = -EINVAL;
	/* A redirected channel writes into its target's buffer, not one here. */
	if (!ch->configured || kring_channel_redirected(ch))
		goto out;
	if (kring_buffer_geometry(vma_pages(vma), ch->attr.flags & KRING_ATTR_F_MIRROR,
				  &data_pages))
		goto out;

	buf = kring_channel_buf(ch);
	if (buf) {
		if (buf->nr_pages != data_pages)
			goto out;
	} else {
		struct kring_charge charge = {};

		overwrite = !(vma->vm_flags & VM_WRITE) ||
			    (ch->attr.flags & KRING_ATTR_F_OVERWRITE);
		/*
		 * Charge before allocating, as perf_mmap() checks its limits
		 * before rb_alloc(): a request beyond them allocates nothing.
		 */
		ret = kring_charge_pages(&charge, vma->vm_mm, data_pages + 1);
		if (ret)
			goto out;
		buf = kring_buffer_alloc(ilog2(data_pages), overwrite, ch->id);
		if (IS_ERR(buf)) {
			kring_uncharge_pages(&charge);
			ret = PTR_ERR(buf);
			goto out;
		}
		buf->mirrored = ch->attr.flags & KRING_ATTR_F_MIRROR;
		buf->charge = charge;
		kring_channel_attach(ch, buf);
	}

	kring_buffer_map(buf, vma);
	atomic_inc(&ch->mmap_count);
	ret = 0;
out:
	mutex_unlock(&ch->lock);
	return ret;
}

/* ---- set-output links (redirect.c makes them) ------------------------ */

/*
 * @ch's writers start (+1) or stop (-1) counting as writers of its
 * set-output target's buffer, for KRING_IOC_RESET of the target (ch->lock
 * held: @ch->out cannot change).
 */
static void kring_channel_out_writers(struct kring_channel *ch, int delta)
{
	struct kring_channel *t = rcu_dereference_protected(ch->out, lockdep_is_held(&ch->lock));

	if (!t)
		return;
	spin_lock(&t->out_lock);
	t->out_writers += delta;
	spin_unlock(&t->out_lock);
}

/**
 * kring_channel_out_unlink() - take @ch out of its set-output target's list
 * @ch: the channel, its lock held, disabled
 *
 * Readers of the old list may still be on the link (freed after a grace
 * period) and follow it to @ch (channels are RCU-freed).
 *
 * Return: the old target, NULL for none, for the caller to put
 * (kring_channel_put()) once the locks are dropped.
 */
struct kring_channel *kring_channel_out_unlink(struct kring_channel *ch)
{
	struct kring_redirect_link *link = ch->out_link;
	struct kring_channel *old;

	old = rcu_dereference_protected(ch->out, lockdep_is_held(&ch->lock));
	if (!old)
		return NULL;
	spin_lock(&old->out_lock);
	list_del_rcu(&link->node);
	spin_unlock(&old->out_lock);
	RCU_INIT_POINTER(ch->out, NULL);
	ch->out_link = NULL;
	kfree_rcu(link, rcu);
	return old;
}

/* ---- enable state ---------------------------------------------------- */

/*
 * Start or stop @ch's source and publish the new state (ch->lock held).
 * A channel redirected into another counts as a writer of the target's
 * buffer from before its source starts until its stop has waited for its
 * writers. Writers through the producer API check @ch->enabled alone and
 * are not waited for here: the grace period that ends them is noted for
 * KRING_IOC_RESET, which waits for it outside the lock.
 */
int kring_channel_switch(struct kring_channel *ch, bool enable)
{
	int ret = 0;

	lockdep_assert_held(&ch->lock);
	if (ch->enabled == enable)
		return 0;
	if (enable) {
		kring_channel_out_writers(ch, 1);
		if (ch->source)
			ret = ch->source->start(ch);
		if (ret) {
			kring_channel_out_writers(ch, -1);
			return ret;
		}
		WRITE_ONCE(ch->enabled, true);	/* producers READ_ONCE() it */
		return 0;
	}
	if (ch->source)
		ch->source->stop(ch);
	WRITE_ONCE(ch->enabled, false);
	ch->quiet_gp = get_state_synchronize_rcu();
	kring_channel_out_writers(ch, -1);
	return 0;
}

/* ---- poll -------------------------------------------------------------- */

__poll_t kring_channel_poll(struct file *file, struct poll_table_struct *wait)
{
	struct kring_channel *ch = file->private_data;
	struct kring_buffer *buf;
	__poll_t events = 0;

	poll_wait(file, &ch->wait, wait);
	/*
	 * A wakeup since the last poll: perf's rb->poll. Clearing it lets
	 * writers wake us again; the full barrier of the xchg pairs with the
	 * smp_mb() in kring_channel_wakeup(): a writer that saw it set has
	 * its record read after this.
	 */
	if (atomic_xchg(&ch->poll_pending, 0))
		events = EPOLLIN | EPOLLRDNORM;
	/* A redirected channel polls its target's buffer, as perf's events do. */
	preempt_disable();
	buf = kring_channel_out_buf(ch);
	if (buf && kring_ring_readable(&buf->ring))
		events = EPOLLIN | EPOLLRDNORM;
	preempt_enable();
	return events;
}

/* ---- open/release ------------------------------------------------------ */

/*
 * The end of kring_channel_release(), after a grace period, on kring's
 * workqueue (module exit drains it), so that close() does not wait: a
 * producer that found the buffer before the last munmap detached it may
 * have been writing and about to queue a wakeup; those RCU readers are
 * done, then the wakeups they queued, and the file's reference can go.
 */
static void kring_release_work(struct work_struct *work)
{
	struct kring_channel *ch = container_of(to_rcu_work(work), struct kring_channel,
						release_work);

	irq_work_sync(&ch->wakeup_work);
	kring_channel_put(ch);
}

int kring_channel_open(struct inode *inode, struct file *file)
{
	struct kring_channel *ch;
	int ret;

	ch = kzalloc(sizeof(*ch), GFP_KERNEL_ACCOUNT);
	if (!ch)
		return -ENOMEM;
	mutex_init(&ch->lock);
	init_waitqueue_head(&ch->wait);
	init_irq_work(&ch->wakeup_work, kring_wakeup_work);
	init_irq_work(&ch->free_work, kring_channel_free_work);
	INIT_LIST_HEAD(&ch->redirected);
	INIT_LIST_HEAD(&ch->formats);
	spin_lock_init(&ch->out_lock);
	ch->quiet_gp = get_completed_synchronize_rcu();
	INIT_RCU_WORK(&ch->release_work, kring_release_work);
	refcount_set(&ch->refs, 1);
	ch->user = kring_user_channel_add();
	if (IS_ERR(ch->user)) {
		ret = PTR_ERR(ch->user);
		kfree(ch);
		return ret;
	}
	ch->id = atomic64_inc_return(&kring_next_id);
	ret = xa_insert(&kring_channels, ch->id, ch, GFP_KERNEL_ACCOUNT);
	if (ret) {
		kring_user_channel_del(ch->user);
		kfree(ch);
		return ret;
	}
	atomic_inc(&kring_nr_channels);
	file->private_data = ch;
	return nonseekable_open(inode, file);
}

/*
 * The file goes, and with it @ch's own set-output link; the channels
 * redirected into @ch hold references of their own (their links).
 */
int kring_channel_release(struct inode *inode, struct file *file)
{
	struct kring_channel *ch = file->private_data;
	struct kring_channel *old;

	/* No new producer finds the channel by id. */
	xa_erase(&kring_channels, ch->id);
	/* Every mapping holds the file, so none is left: the buffer is gone. */
	mutex_lock(&ch->lock);
	kring_channel_switch(ch, false);
	if (ch->source && ch->source->release)
		ch->source->release(ch);
	old = kring_channel_out_unlink(ch);
	mutex_unlock(&ch->lock);
	kring_channel_put(old);
	kring_user_channel_del(ch->user);
	ch->user = NULL;
	/* The file's reference goes after a grace period: kring_release_work(). */
	kring_queue_rcu_work(&ch->release_work);
	return 0;
}
