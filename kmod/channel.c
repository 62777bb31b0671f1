// SPDX-License-Identifier: GPL-2.0
/*
 * File operations of /dev/kring: one open file is one channel.
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

#include "compat.h"
#include "channel.h"
#include "source.h"
#include "aux.h"
#include "user.h"

static atomic64_t kring_next_id = ATOMIC64_INIT(0);

/* Open channels by id, for kring_channel_get(); entries are RCU-freed. */
static DEFINE_XARRAY(kring_channels);

/**
 * kring_abi_info_fill() - describe this module's ABI
 * @info: filled completely; @info->size is set to sizeof(*info)
 */
void kring_abi_info_fill(struct kring_abi_info *info)
{
	const struct kring_source_ops *src;
	unsigned int i;

	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->abi_major = KRING_ABI_MAJOR;
	info->abi_minor = KRING_ABI_MINOR;
	info->features = KRING_FEAT_ABI_QUERY | KRING_FEAT_DATA_RING |
			 KRING_FEAT_OVERWRITE | KRING_FEAT_MIRROR |
			 KRING_FEAT_CLOCKS | KRING_FEAT_AUX;
	/* Each source's, when it works on this kernel. */
	for (i = 0; i < ARRAY_SIZE(kring_sources); i++) {
		src = kring_sources[i];
		if (src && (!src->available || src->available()))
			info->features |= src->features;
	}
	info->page_size = PAGE_SIZE;
	info->max_data_pages_order = KRING_MAX_DATA_ORDER;
}
EXPORT_SYMBOL_IF_KUNIT(kring_abi_info_fill);

/**
 * kring_abi_info_copy_size() - how many bytes of the answer to copy out
 * @user_size: the size the caller declared in kring_abi_info.size
 *
 * A caller that knows an older, shorter struct gets the prefix it knows; a
 * newer, longer one gets ours and learns our size from the size field.
 *
 * Return: the byte count, or -EINVAL if @user_size is below the first
 * published size.
 */
int kring_abi_info_copy_size(__u32 user_size)
{
	if (user_size < KRING_ABI_INFO_SIZE_VER0)
		return -EINVAL;
	return min_t(__u32, user_size, sizeof(struct kring_abi_info));
}
EXPORT_SYMBOL_IF_KUNIT(kring_abi_info_copy_size);

/**
 * kring_attr_validate() - check an attr copied in from user space
 * @attr: the attr; its size field is the caller's
 *
 * Return: 0, -EOPNOTSUPP for a source this module does not have, or
 * -EINVAL (the uapi header documents which values are accepted).
 */
int kring_attr_validate(const struct kring_attr *attr)
{
	unsigned int i;

	if (attr->source >= KRING_SOURCE_MAX)
		return -EINVAL;
	/* Known to the ABI but not built into this module. */
	if (attr->source != KRING_SOURCE_NONE && !kring_sources[attr->source])
		return -EOPNOTSUPP;
	if (!kring_clock_valid(attr->clockid))
		return -EINVAL;
	if (attr->flags & ~(KRING_ATTR_F_ALL | KRING_ATTR_F_CAPTURE_ALL))
		return -EINVAL;
	if (attr->sample_type & ~KRING_SAMPLE_SUPPORTED)
		return -EINVAL;
	if (attr->cpu < -1 || (attr->cpu >= 0 && attr->cpu >= nr_cpu_ids))
		return -EINVAL;
	/* Only the sources that follow tasks take a pid (docs/CAPTURE.md). */
	if (attr->pid < -1 ||
	    (attr->pid != -1 && !kring_source_can(kring_sources[attr->source],
						   KRING_SRC_FOLLOWS_TASKS)))
		return -EINVAL;
	if ((attr->flags & KRING_ATTR_F_INHERIT) && attr->pid == -1)
		return -EINVAL;
	for (i = 0; i < ARRAY_SIZE(attr->reserved); i++)
		if (attr->reserved[i])
			return -EINVAL;
	return 0;
}
EXPORT_SYMBOL_IF_KUNIT(kring_attr_validate);

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
 * the atomic_xchg() in kring_poll(), after which the poller reads the
 * buffer: a writer that sees a flag still set leaves its record to the
 * poll that clears it, which reports readiness and whose reader sees
 * the record.
 *
 * Context: any, up to NMI; the buffer found under RCU (or preemption
 * disabled), which keeps @ch and its redirected list.
 */
void kring_channel_wakeup(struct kring_channel *ch)
{
	struct kring_output_link *l;

	smp_mb(); /* pairs with atomic_xchg() in kring_poll() */
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
	struct kring_output_link *l;
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
	rcu_assign_pointer(ch->buf, buf);
}

static struct kring_buffer *kring_channel_buf(struct kring_channel *ch)
{
	return rcu_dereference_protected(ch->buf, lockdep_is_held(&ch->lock));
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
	struct kring_channel *ch = NULL;
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
	if (file->f_op == &kring_fops) {
		ch = file->private_data;
		refcount_inc(&ch->refs);
	}
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
	kfree(container_of(head, struct kring_channel, rcu));
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
 * mapped, -EAGAIN while it is disabled (neither is counted); otherwise the
 * error of kring_output_begin(), counted as lost: -E2BIG for a size out of
 * those bounds, -ENOSPC, -EAGAIN while paused.
 */
int kring_channel_output_begin(struct kring_output_handle *h,
			       struct kring_channel *ch, unsigned int size)
{
	struct kring_buffer *buf;

	if (!READ_ONCE(ch->enabled))
		return -EAGAIN;
	/*
	 * Preemption is disabled from here to kring_channel_output_end(): that
	 * is an RCU read-side critical section, and the buffer is freed after
	 * a grace period once it is detached (queue_rcu_work()), so it stays
	 * until the end.
	 */
	buf = rcu_dereference_sched(ch->buf);
	if (!buf)
		return -ENODEV;
	/* A channel's ring always has a clock: it stamps the record. */
	return kring_output_begin(h, &buf->ring, size, 0);
}
EXPORT_SYMBOL_GPL(kring_channel_output_begin);

/**
 * kring_channel_output_end() - commit what kring_channel_output_begin() reserved
 * @h: the handle
 */
void kring_channel_output_end(struct kring_output_handle *h)
{
	kring_output_end(h);
}
EXPORT_SYMBOL_GPL(kring_channel_output_end);

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
	u64 type = ch->attr.sample_type;
	struct kring_output_handle h;
	int ret;

	/*
	 * RAW's size is bounded by kring_sample_size(), before its
	 * arithmetic: beyond KRING_SAMPLE_RAW_MAX it answers 0, which the
	 * begin refuses. kring_output_sample() then cannot refuse.
	 */
	if (unlikely((type & KRING_SAMPLE_RAW) && data->raw_size && !data->raw))
		return -EINVAL;
	data->id = ch->id;
	ret = kring_channel_output_begin(&h, ch, kring_sample_size(type, data->raw_size));
	if (ret)
		return ret;
	data->time = h.time;
	kring_output_sample(&h, type, data);
	kring_channel_output_end(&h);
	return 0;
}
EXPORT_SYMBOL_GPL(kring_channel_write_sample);

/* ---- set-output -------------------------------------------------------- */

/* Whether @ch is configured with a source set-output can redirect. */
static bool kring_channel_redirectable(struct kring_channel *ch)
{
	return ch->configured && kring_source_can(ch->source, KRING_SRC_REDIRECTABLE);
}

/**
 * kring_channel_redirected() - whether set-output sends @ch's records away
 * @ch:	a channel, its lock held
 *
 * A redirected channel has no buffer of its own: kring_channel_mmap() refuses it.
 *
 * Return: true while @ch writes into another channel's buffer.
 */
static bool kring_channel_redirected(struct kring_channel *ch)
{
	return rcu_access_pointer(ch->out);
}

/*
 * The locks of @a and of @b (NULL: @a's alone), the lower id first: the
 * one rule under which kring holds two channel locks (set-output).
 */
static void kring_channel_lock_two(struct kring_channel *a, struct kring_channel *b)
{
	if (b && b->id < a->id)
		swap(a, b);
	mutex_lock(&a->lock);
	if (b)
		mutex_lock_nested(&b->lock, SINGLE_DEPTH_NESTING);
}

static void kring_channel_unlock_two(struct kring_channel *a, struct kring_channel *b)
{
	if (b)
		mutex_unlock(&b->lock);
	mutex_unlock(&a->lock);
}

/*
 * perf's constraints: the channels sharing a buffer are bound to the same
 * CPU, or follow the same single task without inherit (the buffer's
 * write_lock serialises what still runs on two CPUs: wakeups written on
 * the waker's CPU, AUX records from an ioctl). Both locks held.
 */
static int kring_output_compatible(struct kring_channel *ch, struct kring_channel *t)
{
	lockdep_assert_held(&ch->lock);
	lockdep_assert_held(&t->lock);
	if (!t->configured || t->attr.clockid != ch->attr.clockid)
		return -EINVAL;
	if (ch->attr.cpu >= 0)
		return t->attr.cpu == ch->attr.cpu ? 0 : -EINVAL;
	if (t->attr.cpu != -1 || !kring_channel_redirectable(t) ||
	    t->follow_task != ch->follow_task ||
	    (ch->attr.flags & KRING_ATTR_F_INHERIT) || (t->attr.flags & KRING_ATTR_F_INHERIT))
		return -EINVAL;
	return 0;
}

/*
 * @ch's writers start (+1) or stop (-1) counting as writers of its
 * set-output target's buffer, for KRING_IOC_RESET of the target (ch->lock
 * held: @ch->out cannot change).
 */
static void kring_output_writers(struct kring_channel *ch, int delta)
{
	struct kring_channel *t = rcu_dereference_protected(ch->out, lockdep_is_held(&ch->lock));

	if (!t)
		return;
	spin_lock(&t->out_lock);
	t->out_writers += delta;
	spin_unlock(&t->out_lock);
}

/*
 * Take @ch out of its target's list (ch->lock held, @ch disabled). Returns
 * the old target for the caller to put once the locks are dropped; readers
 * of the old list may still be on the link (freed after a grace period)
 * and follow it to @ch (channels are RCU-freed).
 */
static struct kring_channel *kring_output_unlink(struct kring_channel *ch)
{
	struct kring_output_link *link = ch->out_link;
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

/**
 * kring_output_release() - a channel goes: undo its set-output
 * @ch:	the channel, disabled
 *
 * Its file is going: no set-output names @ch, as source or as target.
 */
static void kring_output_release(struct kring_channel *ch)
{
	struct kring_channel *old;

	mutex_lock(&ch->lock);
	old = kring_output_unlink(ch);
	mutex_unlock(&ch->lock);
	kring_channel_put(old);
}

/**
 * kring_ioctl_set_output() - KRING_IOC_SET_OUTPUT
 * @ch:	the channel whose records are redirected
 * @fd:	a kring file descriptor (the target), or -1 to undo
 *
 * Runs under @ch's lock and the target's (kring_channel_lock_two(), as
 * perf_event_set_output() takes both events' mutexes), and no other lock
 * of anyone's: a channel's @out is set only under both locks, and a
 * channel's @redirected list grows only under its lock, so two calls that
 * could build a cycle or a chain (A to B while B to A, or A to B while B
 * to C) share a channel and are serialised by its lock: a target is never
 * redirected itself, and a channel that is a target is never redirected.
 * The link is allocated before any lock is taken, and nothing here waits
 * for a grace period (struct kring_output_link).
 *
 * Return: 0; -EBADF for a bad descriptor; -EINVAL for a target that is not
 * a configured kring channel, is @ch, is itself redirected or breaks the
 * constraints above, for a channel that is the target of another, or for
 * a channel whose source cannot be redirected; -EBUSY while @ch is enabled
 * or mapped; -ENOMEM.
 */
static long kring_ioctl_set_output(struct kring_channel *ch, int fd)
{
	struct kring_channel *target = NULL, *old = NULL;
	struct kring_output_link *link = NULL;
	struct file *file = NULL;
	long ret;

	if (fd != -1) {
		file = fget(fd);
		if (!file)
			return -EBADF;
		if (file->f_op != &kring_fops || file->private_data == ch) {
			ret = -EINVAL;
			goto out_fput;
		}
		target = file->private_data;
		link = kzalloc(sizeof(*link), GFP_KERNEL_ACCOUNT);
		if (!link) {
			ret = -ENOMEM;
			goto out_fput;
		}
		link->ch = ch;
	}
	kring_channel_lock_two(ch, target);
	if (target) {
		bool is_target;

		spin_lock(&ch->out_lock);
		is_target = !list_empty(&ch->redirected);
		spin_unlock(&ch->out_lock);
		ret = -EINVAL;
		if (is_target || rcu_access_pointer(target->out))
			goto out_unlock;
	}
	if (!kring_channel_redirectable(ch)) {
		ret = -EINVAL;
		goto out_unlock;
	}
	if (ch->enabled || rcu_access_pointer(ch->buf)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (target) {
		ret = kring_output_compatible(ch, target);
		if (ret)
			goto out_unlock;
	}
	old = kring_output_unlink(ch);
	if (target) {
		refcount_inc(&target->refs);	/* the file holds one */
		spin_lock(&target->out_lock);
		list_add_tail_rcu(&link->node, &target->redirected);
		spin_unlock(&target->out_lock);
		ch->out_link = link;
		link = NULL;
		/* Disabled: no writer reads it until the channel is enabled again. */
		rcu_assign_pointer(ch->out, target);
	}
	ret = 0;
out_unlock:
	kring_channel_unlock_two(ch, target);
	kring_channel_put(old);
	kfree(link);
out_fput:
	if (file)
		fput(file);
	return ret;
}

/* ---- mmap -------------------------------------------------------------- */

/**
 * kring_channel_mmap() - mmap of a channel
 * @file: the channel
 * @vma: at offset 0, the data ring: 1 + 2^n pages, or 1 + 2 * 2^n pages
 *	with KRING_ATTR_F_MIRROR (mmap.c); elsewhere the AUX area (aux.c)
 *
 * Return: 0, -EINVAL for a wrong length, offset or flags, for an
 * unconfigured or redirected (KRING_IOC_SET_OUTPUT) channel or one whose
 * buffer has another size, -EPERM beyond the locked-memory limits, -ENOMEM.
 */
static int kring_channel_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct kring_channel *ch = file->private_data;
	unsigned long data_pages;
	struct kring_buffer *buf;
	bool overwrite;
	int ret;

	if (vma->vm_pgoff != 0)
		return kring_aux_mmap(file, vma);
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

/* ---- ioctls ------------------------------------------------------------ */

static long kring_ioctl_query_abi(void __user *arg)
{
	struct kring_abi_info info;
	__u32 user_size;
	int len;

	if (get_user(user_size, (__u32 __user *)arg))
		return -EFAULT;
	len = kring_abi_info_copy_size(user_size);
	if (len < 0)
		return len;
	kring_abi_info_fill(&info);
	info.size = len;
	if (copy_to_user(arg, &info, len))
		return -EFAULT;
	return 0;
}

static long kring_ioctl_configure(struct kring_channel *ch, void __user *arg)
{
	const struct kring_source_ops *src;
	struct kring_attr attr;
	__u32 usize;
	int ret;

	if (get_user(usize, (__u32 __user *)arg))
		return -EFAULT;
	if (usize < KRING_ATTR_SIZE_VER0)
		return -EINVAL;
	/* perf's bound: a caller's struct is never larger than a page. */
	if (usize > PAGE_SIZE)
		return -E2BIG;
	/* -E2BIG when bytes we do not know are not zero. */
	ret = copy_struct_from_user(&attr, sizeof(attr), arg, usize);
	if (ret)
		return ret;
	ret = kring_attr_validate(&attr);
	if (ret)
		return ret;
	attr.size = sizeof(attr);
	src = kring_sources[attr.source];
	/*
	 * The channel's sample_type describes its SAMPLE records alone (perf's
	 * rule): every SAMPLE carries SEQ, and some sources always write RAW.
	 */
	attr.sample_type |= KRING_SAMPLE_SEQ | (src ? src->sample_type : 0);
	ret = kring_perm_source(src);
	if (ret)
		return ret;
	if (src && src->prepare) {
		ret = src->prepare();
		if (ret)
			return ret;
	}

	mutex_lock(&ch->lock);
	if (ch->configured) {
		ret = -EBUSY;
		goto out;
	}
	ch->attr = attr;
	ch->source = src;
	if (src && src->configure) {
		ret = src->configure(ch);
		if (ret) {
			ch->source = NULL;
			goto out;
		}
	}
	ch->watermark = attr.wakeup_watermark;
	ch->wakeup_events = attr.wakeup_events;
	ch->configured = true;
out:
	mutex_unlock(&ch->lock);
	return ret;
}

/*
 * Start or stop @ch's source and publish the new state (ch->lock held).
 * A channel redirected into another counts as a writer of the target's
 * buffer from before its source starts until its stop has waited for its
 * writers. Writers through the producer API check @ch->enabled alone and
 * are not waited for here: the grace period that ends them is noted for
 * KRING_IOC_RESET, which waits for it outside the lock.
 */
static int kring_channel_switch(struct kring_channel *ch, bool enable)
{
	int ret = 0;

	lockdep_assert_held(&ch->lock);
	if (ch->enabled == enable)
		return 0;
	if (enable) {
		kring_output_writers(ch, 1);
		if (ch->source)
			ret = ch->source->start(ch);
		if (ret) {
			kring_output_writers(ch, -1);
			return ret;
		}
		WRITE_ONCE(ch->enabled, true);	/* producers READ_ONCE() it */
		return 0;
	}
	if (ch->source)
		ch->source->stop(ch);
	WRITE_ONCE(ch->enabled, false);
	ch->quiet_gp = get_state_synchronize_rcu();
	kring_output_writers(ch, -1);
	return 0;
}

/*
 * ENABLE and DISABLE take @ch's lock and no lock of another channel or
 * user: what another user holds while it waits on its own work (a large
 * mmap, a grace period) never holds up this one.
 */
static long kring_ioctl_enable(struct kring_channel *ch, bool enable)
{
	int ret;

	/*
	 * CPU hotplug is held off while a source starts or stops, taken
	 * before ch->lock as the hotplug callbacks (kring_cpu_event()) take
	 * it: a CPU-bound source sees its CPU's state settled.
	 */
	cpus_read_lock();
	mutex_lock(&ch->lock);
	ret = ch->configured ? kring_channel_switch(ch, enable) : -EINVAL;
	mutex_unlock(&ch->lock);
	cpus_read_unlock();
	return ret;
}

static long kring_ioctl_pause(struct kring_channel *ch, bool pause)
{
	struct kring_buffer *buf;

	mutex_lock(&ch->lock);
	ch->paused = pause;
	buf = kring_channel_buf(ch);
	if (buf)
		kring_ring_set_paused(&buf->ring, pause);
	mutex_unlock(&ch->lock);
	return 0;
}

/*
 * Zero the counters: only while no writer of the buffer is enabled, the
 * channel's own source and every channel redirected into it
 * (@ch->out_writers), and once the producer-API writers that found the
 * channel enabled before its last DISABLE are done (@ch->quiet_gp). That
 * wait is a grace period, taken with no lock held; only @ch's own lock is
 * taken, and the channels redirected into it are counted, not locked.
 */
static long kring_ioctl_reset(struct kring_channel *ch)
{
	struct kring_buffer *buf;
	unsigned long gp;
	long ret = 0;

	mutex_lock(&ch->lock);
	/* A DISABLE since the last look starts a new grace period: wait again. */
	while (!ch->enabled && kring_channel_buf(ch) &&
	       !poll_state_synchronize_rcu(ch->quiet_gp)) {
		gp = ch->quiet_gp;
		mutex_unlock(&ch->lock);
		cond_synchronize_rcu(gp);
		mutex_lock(&ch->lock);
	}
	if (ch->enabled) {
		ret = -EBUSY;	/* counters of a running source would race */
		goto out;
	}
	buf = kring_channel_buf(ch);
	spin_lock(&ch->out_lock);
	if (ch->out_writers)
		ret = -EBUSY;
	else if (buf)
		kring_ring_reset_counters(&buf->ring);
	spin_unlock(&ch->out_lock);
out:
	mutex_unlock(&ch->lock);
	return ret;
}

static long kring_ioctl_set_wakeup(struct kring_channel *ch, void __user *arg)
{
	struct kring_buffer *buf;
	struct kring_wakeup w;

	if (copy_from_user(&w, arg, sizeof(w)))
		return -EFAULT;
	mutex_lock(&ch->lock);
	ch->watermark = w.watermark;
	ch->wakeup_events = w.events;
	buf = kring_channel_buf(ch);
	if (buf)
		kring_ring_set_wakeup(&buf->ring, w.watermark, w.events);
	mutex_unlock(&ch->lock);
	return 0;
}

static long kring_ioctl_stats(struct kring_channel *ch, void __user *arg)
{
	struct kring_stats st;
	struct kring_buffer *buf;
	__u32 usize;

	if (get_user(usize, (__u32 __user *)arg))
		return -EFAULT;
	if (usize < KRING_STATS_SIZE_VER0)
		return -EINVAL;
	memset(&st, 0, sizeof(st));
	mutex_lock(&ch->lock);
	buf = kring_channel_buf(ch);
	if (buf) {
		kring_ring_read_stats(&buf->ring, &st);
		kring_aux_read_stats(buf, &st);
		st.flags |= KRING_STATS_F_MAPPED;
	}
	if (ch->enabled)
		st.flags |= KRING_STATS_F_ENABLED;
	if (ch->paused)
		st.flags |= KRING_STATS_F_PAUSED;
	if (READ_ONCE(ch->revoked))
		st.flags |= KRING_STATS_F_REVOKED;
	st.throttled = atomic64_read(&ch->throttled);
	if (ch->configured)
		st.sample_type = ch->attr.sample_type;
	mutex_unlock(&ch->lock);
	st.size = min_t(__u32, usize, sizeof(st));
	if (copy_to_user(arg, &st, st.size))
		return -EFAULT;
	return 0;
}

/*
 * KRING_IOC_STATS encodes the caller's sizeof(struct kring_stats), which
 * grows with each version: any size matches, and kring_stats.size
 * negotiates what is filled in (kring_ioctl_stats()).
 */
static unsigned int kring_ioctl_sized(unsigned int cmd)
{
	if (_IOC_TYPE(cmd) == _IOC_TYPE(KRING_IOC_STATS) &&
	    _IOC_NR(cmd) == _IOC_NR(KRING_IOC_STATS) &&
	    _IOC_DIR(cmd) == _IOC_DIR(KRING_IOC_STATS))
		return KRING_IOC_STATS;
	return cmd;
}

static long kring_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct kring_channel *ch = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (kring_ioctl_sized(cmd)) {
	case KRING_IOC_QUERY_ABI:
		return kring_ioctl_query_abi(uarg);
	case KRING_IOC_CONFIGURE:
		return kring_ioctl_configure(ch, uarg);
	case KRING_IOC_ENABLE:
		return kring_ioctl_enable(ch, true);
	case KRING_IOC_DISABLE:
		return kring_ioctl_enable(ch, false);
	case KRING_IOC_RESET:
		return kring_ioctl_reset(ch);
	case KRING_IOC_PAUSE_OUTPUT:
		return kring_ioctl_pause(ch, true);
	case KRING_IOC_RESUME_OUTPUT:
		return kring_ioctl_pause(ch, false);
	case KRING_IOC_SET_WAKEUP:
		return kring_ioctl_set_wakeup(ch, uarg);
	case KRING_IOC_ID:
		return put_user(ch->id, (__u64 __user *)uarg);
	case KRING_IOC_STATS:
		return kring_ioctl_stats(ch, uarg);
	case KRING_IOC_SET_OUTPUT:
		return kring_ioctl_set_output(ch, (int)arg);
	case KRING_IOC_AUX_SNAPSHOT:
	case KRING_IOC_AUX_PAUSE:
	case KRING_IOC_AUX_RESUME:
		return kring_aux_ioctl(ch, cmd);
	default:
		return -ENOTTY;
	}
}

#ifdef CONFIG_COMPAT
/*
 * 32-bit callers: every argument is a pointer to a struct with the same
 * layout on both ABIs, but SET_OUTPUT's, which is an int (a descriptor or
 * -1) and must not go through compat_ptr().
 */
static long kring_compat_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	if (cmd == KRING_IOC_SET_OUTPUT)
		return kring_ioctl(file, cmd, (unsigned long)(int)arg);
	return kring_ioctl(file, cmd, (unsigned long)compat_ptr(arg));
}
#endif

/* ---- poll -------------------------------------------------------------- */

static __poll_t kring_poll(struct file *file, poll_table *wait)
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
 * kring.max_user_channels bounds the channels one user holds open, as
 * fs.inotify.max_user_instances bounds inotify instances. Each channel may
 * cost every CPU work the user does not pay for: every context switch
 * walks the enabled followed channels (capture.c), and a channel bound to a
 * CPU ticks there in hard irq context (its floor tick, its timer). The
 * limit makes that work a constant per user. A user with CAP_PERFMON (or
 * CAP_SYS_ADMIN) is not bound, as with perf's limits.
 */
static unsigned int kring_max_user_channels = 1024;
module_param_named(max_user_channels, kring_max_user_channels, uint, 0644);
MODULE_PARM_DESC(max_user_channels,
		 "channels one user without CAP_PERFMON may hold open (0: no limit)");

/*
 * Count one more channel for the caller's user in @ch->user, and for the
 * owner of every user namespace above it (user.c): ids mapped into a
 * namespace share their owner's limit.
 * Return: 0, -EMFILE beyond kring.max_user_channels, -ENOMEM.
 */
static int kring_user_channel_add(struct kring_channel *ch)
{
	unsigned int max = READ_ONCE(kring_max_user_channels);
	struct kring_user *u;

	u = kring_user_get();
	if (!u)
		return -ENOMEM;
	/*
	 * At the limit only, ask for the capability, so that an ordinary
	 * open is not audited as a denial; and outside the lock (capable()
	 * may sleep).
	 */
	if (!kring_user_charge(u, KRING_USER_CHANNELS, 1, max ?: ULONG_MAX)) {
		if (!perfmon_capable()) {
			kring_user_put(u);
			return -EMFILE;
		}
		kring_user_charge(u, KRING_USER_CHANNELS, 1, ULONG_MAX);
	}
	ch->user = u;
	return 0;
}

/* The channel's file is released: one channel less for its opener. */
static void kring_user_channel_del(struct kring_channel *ch)
{
	kring_user_uncharge(ch->user, KRING_USER_CHANNELS, 1);
	kring_user_put(ch->user);
	ch->user = NULL;
}

/*
 * The end of a release, after a grace period, on kring's workqueue (module
 * exit drains it), so that close() does not wait: a producer that found
 * the buffer before the last munmap detached it may have been writing and
 * about to queue a wakeup; those RCU readers are done, then the wakeups
 * they queued, and the file's reference can go.
 */
static void kring_release_work(struct work_struct *work)
{
	struct kring_channel *ch = container_of(to_rcu_work(work), struct kring_channel,
						release_work);

	irq_work_sync(&ch->wakeup_work);
	kring_channel_put(ch);
}

static int kring_open(struct inode *inode, struct file *file)
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
	spin_lock_init(&ch->out_lock);
	ch->quiet_gp = get_completed_synchronize_rcu();
	INIT_RCU_WORK(&ch->release_work, kring_release_work);
	refcount_set(&ch->refs, 1);
	ret = kring_user_channel_add(ch);
	if (ret) {
		kfree(ch);
		return ret;
	}
	ch->id = atomic64_inc_return(&kring_next_id);
	ret = xa_insert(&kring_channels, ch->id, ch, GFP_KERNEL_ACCOUNT);
	if (ret) {
		kring_user_channel_del(ch);
		kfree(ch);
		return ret;
	}
	atomic_inc(&kring_nr_channels);
	file->private_data = ch;
	return nonseekable_open(inode, file);
}

static int kring_release(struct inode *inode, struct file *file)
{
	struct kring_channel *ch = file->private_data;

	/* No new producer finds the channel by id. */
	xa_erase(&kring_channels, ch->id);
	/* Every mapping holds the file, so none is left: the buffer is gone. */
	mutex_lock(&ch->lock);
	kring_channel_switch(ch, false);
	if (ch->source && ch->source->release)
		ch->source->release(ch);
	mutex_unlock(&ch->lock);
	kring_output_release(ch);
	kring_user_channel_del(ch);
	/* The file's reference goes after a grace period: kring_release_work(). */
	kring_queue_rcu_work(&ch->release_work);
	return 0;
}

const struct file_operations kring_fops = {
	.owner = THIS_MODULE,
	.open = kring_open,
	.release = kring_release,
	.unlocked_ioctl = kring_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = kring_compat_ioctl,
#endif
	.mmap = kring_channel_mmap,
	.poll = kring_poll,
};
