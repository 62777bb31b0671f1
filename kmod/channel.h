/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Layer 3 of kring.ko, channel and ioctls (docs/ARCHITECTURE.md): one open
 * /dev/kring file is one channel (file.c: the file operations, dispatched;
 * channel.c: the channel, its mapping, enable state and set-output links,
 * and the producer API; ioctl.c: the ioctls and the ABI checks;
 * redirect.c: set-output; aux.c: the channel's AUX area; format.c: record
 * layouts; perm.c: who may configure what). Built on the buffer layer
 * (buffer.h); calls the sources above it only through their struct
 * kring_source_ops (source.h).
 */
#ifndef _KRING_CHANNEL_H
#define _KRING_CHANNEL_H

#include <linux/types.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/irq_work.h>
#include <linux/refcount.h>
#include <linux/rcupdate.h>
#include <linux/workqueue.h>
#include <linux/spinlock.h>
#include <linux/list.h>
#include <linux/kring.h>
#include <kring/producer.h>

#include "buffer.h"

struct file;
struct inode;
struct poll_table_struct;
struct vm_area_struct;
struct task_struct;
struct cred;
struct kring_source_ops;
struct kring_redirect_link;

/*
 * struct kring_channel - one open /dev/kring file
 * @lock:	serialises configuration, enable state and buffer attach/detach
 * @buf:	the mapped buffer (RCU), NULL while unmapped
 * @mmap_count:	vmas mapping @buf
 * @wakeup_work: defers consumer wakeups out of producer context (NMI-safe)
 * @wait:	poll/epoll waiters
 * @poll_pending: a wakeup happened since poll last reported readiness;
 *		while it is set here and in every channel redirected into this
 *		one, no other wakeup is queued (kring_channel_wakeup())
 * @source:	the source's operations (source.h), NULL for KRING_SOURCE_NONE
 * @source_priv: the source's state; the capture layer reaches its part
 *		through @source->capture()
 * @follow_task: the task a capture source follows, NULL for none: set at
 *		configure by the capture layer, which holds a reference on it
 *		until the channel is released, and compared by set-output. A
 *		task, not its id, which an exec can change (de_thread())
 * @out:	KRING_IOC_SET_OUTPUT target (a reference), NULL: own buffer.
 *		Set under @lock and the target's lock, cleared under @lock
 *		(and the old target's @out_lock for its list), always while
 *		the channel is disabled and unmapped; writers read it under RCU.
 * @out_link:	our entry in @out's @redirected list, NULL with @out
 * @out_lock:	a leaf spinlock: @redirected and @out_writers
 * @redirected:	links of the channels whose @out is this one (RCU list):
 *		their pollers are woken with ours. Changed under @out_lock;
 *		an entry is added only under @lock too, so it stays empty
 *		while @lock is held if it is empty once
 * @out_writers: channels redirected into this one that are enabled: the
 *		count rises before such a channel's source starts and falls
 *		after its stop has waited for its writers (KRING_IOC_RESET
 *		refuses while it is not 0)
 * @quiet_gp:	RCU grace-period cookie (get_state_synchronize_rcu()) taken
 *		when @enabled last went false: producer-API writers that
 *		passed their check of @enabled before are done once it
 *		completes (KRING_IOC_RESET waits for it, outside any lock)
 * @pause_gp:	RCU grace-period cookie taken when @paused last went true,
 *		after the ring's pause: writers that passed the ring's pause
 *		check before are done once it completes (KRING_IOC_PAUSE_OUTPUT
 *		waits for it, outside any lock)
 * @release_work: the last steps of kring_channel_release(), after a grace
 *		period
 */
struct kring_channel {
	refcount_t refs;		/* the file, kring_channel_get() users */
	struct rcu_head rcu;
	struct mutex lock;		/* see the comment above */
	u64 id;
	bool configured;
	bool enabled;
	bool paused;
	bool revoked;			/* see struct kring_capture */
	atomic64_t throttled;		/* samples dropped by throttle.c */
	struct kring_attr attr;
	struct kring_buffer __rcu *buf;
	atomic_t mmap_count;
	struct irq_work wakeup_work;
	struct irq_work free_work;	/* kring_channel_put() in NMI */
	wait_queue_head_t wait;
	atomic_t poll_pending;
	unsigned long watermark;
	unsigned int wakeup_events;
	const struct kring_source_ops *source;
	void *source_priv;
	const struct task_struct *follow_task;
	struct kring_channel __rcu *out;
	struct kring_redirect_link *out_link;
	spinlock_t out_lock;		/* @redirected, @out_writers */
	struct list_head redirected;
	unsigned int out_writers;
	unsigned long quiet_gp;
	unsigned long pause_gp;
	struct rcu_work release_work;
	struct kring_user *user;	/* its opener, charged for it (user.h) */
	struct list_head formats;	/* format.c, under @lock */
};

/*
 * struct kring_redirect_link - a channel in its set-output target's list
 * @node:	in the target's @redirected list (RCU)
 * @ch:		the redirected channel
 * @rcu:	freed after a grace period (a wakeup may be walking the list)
 *
 * One per KRING_IOC_SET_OUTPUT that redirects: a channel that moves to
 * another target gets a new link, so a node is never moved between two
 * lists that readers may be walking, and no one waits for them.
 */
struct kring_redirect_link {
	struct list_head node;
	struct kring_channel *ch;
	struct rcu_head rcu;
};

/*
 * The buffer @ch's records go to: its own or its set-output target's.
 * Context: preemption disabled (an RCU read side: buffers and channels are
 * freed after a grace period).
 */
static inline struct kring_buffer *kring_channel_out_buf(struct kring_channel *ch)
{
	struct kring_channel *dst = rcu_dereference_sched(ch->out);

	return rcu_dereference_sched((dst ? dst : ch)->buf);
}

/*
 * kring_out_lock() - the buffer @ch writes into, its write_lock held
 * (interrupts off), or NULL when there is none; kring_out_unlock() ends it.
 * Context: preemption disabled, not NMI.
 */
static inline struct kring_buffer *kring_out_lock(struct kring_channel *ch,
						  unsigned long *flags)
{
	struct kring_buffer *buf = kring_channel_out_buf(ch);

	if (buf)
		raw_spin_lock_irqsave(&buf->write_lock, *flags);
	return buf;
}

static inline void kring_out_unlock(struct kring_buffer *buf, unsigned long flags)
{
	raw_spin_unlock_irqrestore(&buf->write_lock, flags);
}

/*
 * kring_channel_vma_gone() - a vma of @ch (data ring or AUX area) is closed
 *
 * ch->mmap_count rises from 0 only in mmap under ch->lock and falls to 0
 * only under ch->lock (atomic_dec_and_mutex_lock(), as perf_mmap_close()
 * does): the last vma detaches the buffer, and a new mapping either finds
 * the count above 0 and the buffer attached, or the buffer already
 * detached. The buffer is freed after a grace period when its last
 * reference goes (kring_buffer_put()): producers that still see it are
 * inside an RCU read-side section.
 */
static inline void kring_channel_vma_gone(struct kring_channel *ch)
{
	struct kring_buffer *buf;

	if (!atomic_dec_and_mutex_lock(&ch->mmap_count, &ch->lock))
		return;
	buf = rcu_dereference_protected(ch->buf, lockdep_is_held(&ch->lock));
	RCU_INIT_POINTER(ch->buf, NULL);
	mutex_unlock(&ch->lock);
	kring_buffer_put(buf);
}

/* @ch's buffer (ch->lock held), NULL while unmapped. */
static inline struct kring_buffer *kring_channel_buf(struct kring_channel *ch)
{
	return rcu_dereference_protected(ch->buf, lockdep_is_held(&ch->lock));
}

/*
 * kring_channel_redirected() - whether set-output sends @ch's records away
 * (its lock held): a redirected channel has no buffer of its own, and
 * kring_channel_mmap() refuses it.
 */
static inline bool kring_channel_redirected(struct kring_channel *ch)
{
	return rcu_access_pointer(ch->out);
}

/* channel.c */
void kring_channels_init(const struct file_operations *fops);
void kring_channels_exit(void);
struct kring_channel *kring_channel_from_file(const struct file *file);
int kring_channel_open(struct inode *inode, struct file *file);
int kring_channel_release(struct inode *inode, struct file *file);
int kring_channel_mmap(struct file *file, struct vm_area_struct *vma);
__poll_t kring_channel_poll(struct file *file, struct poll_table_struct *wait);
void kring_channel_wakeup(struct kring_channel *ch);
int kring_channel_switch(struct kring_channel *ch, bool enable);
struct kring_channel *kring_channel_out_unlink(struct kring_channel *ch);

/* file.c */
extern const struct file_operations kring_fops;

/*
 * What this module accepts in a kring_attr (kring_attr_validate()); the
 * SAMPLE bits every source accepts (KRING_SAMPLE_CALLCHAIN only where the
 * source can). Masks that grow with every version are the module's, not the
 * ABI's: a consumer asks KRING_IOC_QUERY_ABI's feature bits. The uapi's
 * KRING_ATTR_F_ALL, KRING_ATTR_F_CAPTURE_ALL and KRING_SAMPLE_SUPPORTED are
 * these masks frozen at 1.0, deprecated.
 */
#define KRING_ATTR_F_ACCEPTED	(KRING_ATTR_F_OVERWRITE | KRING_ATTR_F_MIRROR |	\
				 KRING_ATTR_F_INHERIT | KRING_ATTR_F_EXCLUDE_KERNEL)
#define KRING_SAMPLE_ACCEPTED	(KRING_SAMPLE_IP | KRING_SAMPLE_TID |	\
				 KRING_SAMPLE_TIME | KRING_SAMPLE_ID |	\
				 KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD | \
				 KRING_SAMPLE_RAW | KRING_SAMPLE_IDENTIFIER | \
				 KRING_SAMPLE_SEQ)

/* format.c */
int kring_format_validate(const struct kring_format *f);
int kring_formats_add_source(struct kring_channel *ch, const struct kring_format * const *fmts);
void kring_formats_free(struct kring_channel *ch);
long kring_ioctl_get_formats(struct kring_channel *ch, void __user *arg);

/* ioctl.c */
void kring_abi_info_fill(struct kring_abi_info *info);
int kring_abi_info_copy_size(__u32 user_size);
int kring_attr_validate(const struct kring_attr *attr);
long kring_ioctl(struct file *file, unsigned int cmd, unsigned long arg);
long kring_compat_ioctl(struct file *file, unsigned int cmd, unsigned long arg);

/* redirect.c */
long kring_redirect_set(struct kring_channel *ch, int fd);

/* perm.c */
int kring_perm_source(const struct kring_source_ops *src);
int kring_perm_check(const struct kring_source_ops *src, const struct kring_attr *attr,
		     struct task_struct *target);
bool kring_perm_see_all(void);
int kring_perm_sysctl(const char *path, int *val);
int kring_perm_event(const struct kring_attr *attr, struct task_struct *target, bool raw_tp,
		     int (*raw_trial)(void *arg), void *arg);
bool kring_perm_task(const struct cred *owner, bool owner_ptrace,
		     const struct task_struct *p, bool mm_stable);

#endif /* _KRING_CHANNEL_H */
