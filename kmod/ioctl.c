// SPDX-License-Identifier: GPL-2.0
/*
 * The ioctls of a /dev/kring channel and the ABI they speak: the module's
 * ABI description (KRING_IOC_QUERY_ABI) and the validation of a
 * kring_attr copied in from user space (KRING_IOC_CONFIGURE). Every ioctl
 * copies its argument in and out outside ch->lock (channel.c).
 */
#include <linux/compat.h>
#include <linux/cpu.h>
#include <linux/fs.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/uaccess.h>

#include "compat.h"
#include "channel.h"
#include "source.h"
#include "aux.h"

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
			 KRING_FEAT_CLOCKS | KRING_FEAT_AUX | KRING_FEAT_FORMATS;
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
	if (attr->flags & ~KRING_ATTR_F_ACCEPTED)
		return -EINVAL;
	if (attr->sample_type & ~(KRING_SAMPLE_ACCEPTED | KRING_SAMPLE_CALLCHAIN))
		return -EINVAL;
	if ((attr->sample_type & KRING_SAMPLE_CALLCHAIN) &&
	    !kring_source_can(kring_sources[attr->source], KRING_SRC_CALLCHAIN))
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
	void *priv = NULL;
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
	if (src && src->open) {
		ret = src->open(&attr, &priv);
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
	ch->source_priv = priv;
	priv = NULL;	/* configure owns it now */
	if (src && src->configure) {
		ret = src->configure(ch);
		if (ret) {
			ch->source = NULL;
			goto out;
		}
	}
	/* -EEXIST only if a producer described the source's type first. */
	ret = kring_formats_add_source(ch, src ? src->formats : NULL);
	if (ret) {
		if (src && src->release)
			src->release(ch);
		ch->source = NULL;
		goto out;
	}
	ch->watermark = attr.wakeup_watermark;
	ch->wakeup_events = attr.wakeup_events;
	ch->configured = true;
out:
	mutex_unlock(&ch->lock);
	if (priv)
		src->close(priv);
	return ret;
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

/*
 * PAUSE_OUTPUT returns once the ring is quiet: a writer that passed the
 * pause check before it (in kring_output_begin(), preemption disabled from
 * there to the publication of data_head) may still be writing its record,
 * on an overwrite ring over the oldest bytes of the window the consumer is
 * about to read. The grace period begun after the pause (@ch->pause_gp),
 * waited for with no lock held, covers it; a writer that starts later sees
 * the pause. Pausing a paused channel waits for the same grace period,
 * usually long over.
 */
static long kring_ioctl_pause(struct kring_channel *ch, bool pause)
{
	struct kring_buffer *buf;
	unsigned long gp;

	mutex_lock(&ch->lock);
	buf = kring_channel_buf(ch);
	if (buf)
		kring_ring_set_paused(&buf->ring, pause);
	/* After the pause: the cookie's barrier orders the store before it. */
	if (pause && !ch->paused)
		ch->pause_gp = get_state_synchronize_rcu();
	ch->paused = pause;
	gp = ch->pause_gp;
	mutex_unlock(&ch->lock);
	if (pause && buf)	/* no ring yet: no writer either */
		cond_synchronize_rcu(gp);
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

/* @cmd is @known but for the size it encodes. */
static bool kring_ioctl_same(unsigned int cmd, unsigned int known)
{
	return _IOC_TYPE(cmd) == _IOC_TYPE(known) && _IOC_NR(cmd) == _IOC_NR(known) &&
	       _IOC_DIR(cmd) == _IOC_DIR(known);
}

/*
 * KRING_IOC_STATS and KRING_IOC_GET_FORMATS encode the caller's sizeof of
 * their struct, which grows with each version: any size matches, and the
 * struct's size field negotiates what is read and filled in
 * (kring_ioctl_stats(), kring_ioctl_get_formats()).
 */
static unsigned int kring_ioctl_sized(unsigned int cmd)
{
	if (kring_ioctl_same(cmd, KRING_IOC_STATS))
		return KRING_IOC_STATS;
	if (kring_ioctl_same(cmd, KRING_IOC_GET_FORMATS))
		return KRING_IOC_GET_FORMATS;
	return cmd;
}

long kring_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
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
		return kring_redirect_set(ch, (int)arg);
	case KRING_IOC_GET_FORMATS:
		return kring_ioctl_get_formats(ch, uarg);
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
long kring_compat_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	if (cmd == KRING_IOC_SET_OUTPUT)
		return kring_ioctl(file, cmd, (unsigned long)(int)arg);
	return kring_ioctl(file, cmd, (unsigned long)compat_ptr(arg));
}
#endif
