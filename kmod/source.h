/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The interface between a channel and its source (layer 5 of kring.ko,
 * docs/ARCHITECTURE.md): what a source can do and how the channel layer
 * drives it. The channel layer knows sources only through this table of
 * operations; every decision that depends on the source reads one of its
 * capabilities here, never the source's id.
 */
#ifndef _KRING_SOURCE_H
#define _KRING_SOURCE_H

#include <linux/types.h>
#include <linux/bits.h>
#include <linux/kring.h>

struct kring_channel;
struct kring_capture;
struct kring_format;

/*
 * Capabilities of a source (struct kring_source_ops.caps):
 *
 * KRING_SRC_FOLLOWS_TASKS: accepts attr.pid other than -1 (and so
 *	KRING_ATTR_F_INHERIT): it follows tasks through the capture layer.
 * KRING_SRC_REDIRECTABLE: KRING_IOC_SET_OUTPUT may send its records to
 *	another channel's buffer (its writers take the buffer's write_lock).
 * KRING_SRC_OWNS_AUX: kring's own AUX producer: KRING_IOC_AUX_PAUSE,
 *	_RESUME and _SNAPSHOT control it through @aux_pause and @aux_resume
 *	(for any other channel they are -EOPNOTSUPP: another module's
 *	producer is controlled by that module).
 * KRING_SRC_KERNEL_SAMPLES: its records show where the kernel ran (a
 *	timer sample's ip): without KRING_ATTR_F_EXCLUDE_KERNEL they need
 *	privilege at kring.paranoid >= 2 (perm.c).
 * KRING_SRC_CPU_WIDE_OPEN: a CPU-wide channel (no task followed) records
 *	nothing about the tasks running there and needs no privilege.
 * KRING_SRC_TEST_ONLY: a generator for tests and benchmarks: needs
 *	CAP_PERFMON or CAP_SYS_ADMIN unless kring.test_sources=1.
 * KRING_SRC_CALLCHAIN: writes KRING_SAMPLE_CALLCHAIN when asked (no
 *	other source accepts the bit).
 */
#define KRING_SRC_FOLLOWS_TASKS		BIT(0)
#define KRING_SRC_REDIRECTABLE		BIT(1)
#define KRING_SRC_OWNS_AUX		BIT(2)
#define KRING_SRC_KERNEL_SAMPLES	BIT(3)
#define KRING_SRC_CPU_WIDE_OPEN		BIT(4)
#define KRING_SRC_TEST_ONLY		BIT(5)
#define KRING_SRC_CALLCHAIN		BIT(6)

/**
 * struct kring_source_ops - a built-in event producer
 * @name:	for messages
 * @caps:	KRING_SRC_* above
 * @features:	the KRING_FEAT_* bits KRING_IOC_QUERY_ABI reports for it
 * @sample_type: KRING_SAMPLE_* bits every SAMPLE of the source carries,
 *		whatever attr.sample_type says; configure adds them to the
 *		channel's sample_type (with KRING_SAMPLE_SEQ)
 * @available:	whether it works on this kernel (NULL: always); the
 *		features are reported only then
 * @prepare:	set up what the source needs kernel-wide before its first
 *		channel (attach probes); called by configure before it takes
 *		any lock of the channel, since it may take the CPU hotplug
 *		lock (NULL: nothing)
 * @open:	what must be made in the caller's context with no lock
 *		held (a perf counter: its creation takes the CPU hotplug
 *		lock, which nests outside ch->lock): validate @attr, check
 *		the caller's permissions and make it, into *@priv; configure
 *		then finds it in ch->source_priv and owns it, or, when
 *		configure is not reached, @close gets it (NULL: nothing)
 * @close:	free what @open made, for a configure that did not happen
 *		(no lock held)
 * @configure:	validate attr->config[] etc. and set ch->source_priv;
 *		-errno refuses at configure time (ch->lock held); with
 *		@open, free ch->source_priv on failure
 * @start:	begin producing into @ch (cpus_read_lock() and ch->lock held)
 * @stop:	stop and wait until no producer runs (ch->lock held)
 * @release:	free what configure allocated (ch->lock held)
 * @capture:	its capture state (capture.h), or NULL when it has none:
 *		the typed accessor the capture layer reaches it through
 * @aux_pause:	KRING_SRC_OWNS_AUX: stop writing the AUX area until
 *		@aux_resume, and wait for a writer in flight; in snapshot
 *		mode publish what was written (kring_aux_snapshot()), whose
 *		result it returns (cpus_read_lock() and ch->lock held)
 * @aux_resume:	KRING_SRC_OWNS_AUX: undo @aux_pause (same locks)
 * @formats:	the layouts of its records (NULL-terminated; NULL: none),
 *		added to the channel's at configure (format.c)
 */
struct kring_source_ops {
	const char *name;
	unsigned int caps;
	u64 features;
	u64 sample_type;
	bool (*available)(void);
	int (*prepare)(void);
	int (*open)(const struct kring_attr *attr, void **priv);
	void (*close)(void *priv);
	int (*configure)(struct kring_channel *ch);
	int (*start)(struct kring_channel *ch);
	void (*stop)(struct kring_channel *ch);
	void (*release)(struct kring_channel *ch);
	struct kring_capture *(*capture)(struct kring_channel *ch);
	int (*aux_pause)(struct kring_channel *ch);
	int (*aux_resume)(struct kring_channel *ch);
	const struct kring_format * const *formats;
};

/*
 * The built-in sources by KRING_SOURCE_* id (sources/sources.c), NULL for
 * an id this module has no source for (KRING_SOURCE_NONE among them).
 */
extern const struct kring_source_ops *const kring_sources[KRING_SOURCE_MAX];

/* Whether @src (NULL for KRING_SOURCE_NONE) has every capability in @caps. */
static inline bool kring_source_can(const struct kring_source_ops *src, unsigned int caps)
{
	return src && (src->caps & caps) == caps;
}

#endif /* _KRING_SOURCE_H */
