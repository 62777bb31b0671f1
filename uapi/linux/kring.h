/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kring user ABI: the /dev/kring device, its ioctls and the layout of the
 * memory it maps.
 *
 * One open file descriptor of /dev/kring is one channel, like one perf event.
 * A consumer first asks KRING_IOC_QUERY_ABI which ABI major version and
 * which features the module offers, configures the channel with a struct
 * kring_attr, maps its control page and data ring (and, optionally, its AUX
 * area) and enables it.
 *
 * The header has one block per concept, each opened by an overview:
 *
 *	1. versions and feature bits		struct kring_abi_info
 *	2. ioctls				KRING_IOC_*
 *	3. the channel's attr and its flags	struct kring_attr
 *	4. sources and their config[]		enum kring_source, RAW payloads
 *	5. the control page and its flags	struct kring_ctl_page
 *	6. records and their layouts		struct kring_record_header, ...
 *	7. the AUX area				aux_offset/aux_size, AUX flags
 *	8. statistics				struct kring_stats
 *
 * Every struct of this header has a fixed layout: explicit padding, naturally
 * aligned fields, the same on every architecture (tests/host and
 * tests/userlib check the offsets). Structs that grow are versioned by their
 * first field, @size, and a KRING_*_SIZE_VER* constant per published size.
 *
 * This header compiles as C (C89 with the kernel's __u types) and as C++.
 *
 * What may change (docs/ARCHITECTURE.md, "The uapi: what may change"): a
 * name this header has published stays, with its value and meaning. A name
 * whose meaning moved stays as a deprecated alias, its comment saying
 * "deprecated:" and what to use instead; it is never removed, and no
 * removal is a reason for a new KRING_ABI_MAJOR. Names marked non-ABI (as
 * perf marks PERF_TYPE_MAX) may change value. The one exemption: the test
 * generators' payload names, never an interface (below).
 *
 * Changes to this header since the ABI's first version (1.0):
 *
 *   - The test generators' payloads and configuration left this header for
 *     <linux/kring_test.h>, which is not installed: struct
 *     kring_synth_payload, kring_synth_byte(), kring_synth_checksum(),
 *     KRING_SYNTH_F_*, struct kring_aux_packet, KRING_AUX_PKT_* and
 *     KRING_AUX_SYNC_MAGIC. They describe what two test generators write,
 *     which may change with the module, so they are exempt from the rule
 *     above and are not re-added here: a copy here would either freeze the
 *     generators or go stale, and one defined in both headers would be a
 *     second definition. The records and packets the two sources write are
 *     unchanged; code that used these names from <linux/kring.h> includes
 *     <linux/kring_test.h> from kring's source tree, or copies them. No
 *     other name may leave this header this way.
 *   - KRING_ATTR_F_ALL, KRING_ATTR_F_CAPTURE_ALL and KRING_SAMPLE_SUPPORTED
 *     are deprecated, frozen at their 1.0 values: masks that grow with every
 *     version are the module's, not the ABI's (ask KRING_IOC_QUERY_ABI's
 *     feature bits instead).
 *   - KRING_SOURCE_MAX is marked non-ABI, as perf marks PERF_TYPE_MAX: it
 *     grows with every source.
 *   - kring_stats.reserved[4] of the first version holds the AUX figures
 *     under names of their own (aux_bytes, aux_records, aux_truncated,
 *     aux_chunk_order: the same offsets and values, so binaries are
 *     unaffected). The field's old name could not stay beside them (C89
 *     has no anonymous union): source that read reserved[i] reads the
 *     named field. The indexes KRING_STATS_AUX_* stay, deprecated. This is
 *     the one name a later header does not define.
 *
 * KRING_ABI_MAJOR and _MINOR are unchanged: no value, layout or meaning
 * the module and a consumer exchange changed.
 */
#ifndef _UAPI_LINUX_KRING_H
#define _UAPI_LINUX_KRING_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * =====================================================================
 * 1. Versions and feature bits
 * =====================================================================
 *
 * A consumer built for ABI major M works with any module whose major is M;
 * minor versions only add features. A feature is present when its bit is
 * set in kring_abi_info.features; a consumer checks the bits of everything
 * it uses (a source, a mode, the AUX area) before configuring a channel.
 */
#define KRING_ABI_MAJOR		1
#define KRING_ABI_MINOR		0

/* Name of the misc device, as in /dev/kring. */
#define KRING_DEVICE_NAME	"kring"

#define KRING_FEAT_ABI_QUERY	(1ULL << 0)	/* KRING_IOC_QUERY_ABI */
#define KRING_FEAT_DATA_RING	(1ULL << 1)	/* configure, mmap the data ring */
#define KRING_FEAT_OVERWRITE	(1ULL << 2)	/* backward, overwritable writing */
#define KRING_FEAT_MIRROR	(1ULL << 3)	/* mirrored data mapping */
#define KRING_FEAT_SYNTHETIC	(1ULL << 4)	/* KRING_SOURCE_SYNTHETIC */
#define KRING_FEAT_SCHED	(1ULL << 5)	/* KRING_SOURCE_SCHED */
#define KRING_FEAT_TIMER	(1ULL << 6)	/* KRING_SOURCE_TIMER */
#define KRING_FEAT_CAPTURE	(1ULL << 7)	/* pid/cpu modes, inherit, perms */
#define KRING_FEAT_CLOCKS	(1ULL << 8)	/* clockid, time_*, timestamp_floor */
/* Bit 9 is reserved: never set. */
#define KRING_FEAT_AUX		(1ULL << 10)	/* the AUX area */
#define KRING_FEAT_AUX_TRACER	(1ULL << 11)	/* KRING_SOURCE_AUX_TRACER */
#define KRING_FEAT_CALLCHAIN	(1ULL << 12)	/* timer: KRING_SAMPLE_CALLCHAIN */
#define KRING_FEAT_FORMATS	(1ULL << 13)	/* KRING_IOC_GET_FORMATS */
#define KRING_FEAT_EVENT	(1ULL << 14)	/* KRING_SOURCE_EVENT */

/*
 * struct kring_abi_info - answer of KRING_IOC_QUERY_ABI.
 *
 * @size:	in: sizeof(struct kring_abi_info) as the caller knows it (at
 *		least KRING_ABI_INFO_SIZE_VER0); out: the number of bytes the
 *		module filled in (never more than the caller's size).
 * @abi_major:	KRING_ABI_MAJOR of the module.
 * @abi_minor:	KRING_ABI_MINOR of the module.
 * @features:	KRING_FEAT_* bits the module implements.
 * @page_size:	PAGE_SIZE of the running kernel; every mmap length and
 *		offset is a multiple of it.
 * @max_data_pages_order: largest n for a data area of 2^n pages.
 * @reserved:	zero.
 */
struct kring_abi_info {
	__u32 size;
	__u16 abi_major;
	__u16 abi_minor;
	__u64 features;
	__u32 page_size;
	__u32 max_data_pages_order;
	__u64 reserved[4];
};

#define KRING_ABI_INFO_SIZE_VER0	56	/* sizeof first published version */

/*
 * =====================================================================
 * 2. ioctls
 * =====================================================================
 *
 * Every ioctl of a channel, in one table; the block of each concept says
 * what it does. Numbers: 0x00-0x09 the channel, 0x0a-0x0f capture modes,
 * 0x10-0x1f the AUX area. A channel is configured once (KRING_IOC_CONFIGURE
 * again: -EBUSY) and starts disabled.
 */
#define KRING_IOC_MAGIC		0xB9

#define KRING_IOC_QUERY_ABI	_IOWR(KRING_IOC_MAGIC, 0x00, struct kring_abi_info)	/* 1 */
#define KRING_IOC_CONFIGURE	_IOW(KRING_IOC_MAGIC, 0x01, struct kring_attr)	/* 3 */
#define KRING_IOC_ENABLE	_IO(KRING_IOC_MAGIC, 0x02)	/* start the source */
#define KRING_IOC_DISABLE	_IO(KRING_IOC_MAGIC, 0x03)	/* stop it */
#define KRING_IOC_RESET		_IO(KRING_IOC_MAGIC, 0x04)	/* zero the counters */
#define KRING_IOC_PAUSE_OUTPUT	_IO(KRING_IOC_MAGIC, 0x05)	/* KRING_CTL_F_PAUSED */
#define KRING_IOC_RESUME_OUTPUT	_IO(KRING_IOC_MAGIC, 0x06)
#define KRING_IOC_SET_WAKEUP	_IOW(KRING_IOC_MAGIC, 0x07, struct kring_wakeup)
#define KRING_IOC_ID		_IOR(KRING_IOC_MAGIC, 0x08, __u64)	/* SAMPLE_ID value */
#define KRING_IOC_STATS		_IOWR(KRING_IOC_MAGIC, 0x09, struct kring_stats)	/* 8 */

/*
 * KRING_IOC_SET_OUTPUT: perf's PERF_EVENT_IOC_SET_OUTPUT. The argument is
 * a file descriptor of another configured channel (the target) or -1: this
 * channel's records then go to the target's buffer (this channel must be
 * disabled and not mapped: else -EBUSY). Both must be bound to the same
 * CPU, or both follow the same task per-thread without inherit, and both
 * use the same clockid; the target must not itself be redirected (else
 * -EINVAL). Only the sched and timer sources can be redirected. -1 undoes
 * it. A redirected channel has no buffer of its own: mmap of it is
 * -EINVAL (map the target). Records still carry this channel's id
 * (SAMPLE_IDENTIFIER / ID).
 */
#define KRING_IOC_SET_OUTPUT	_IO(KRING_IOC_MAGIC, 0x0a)

/*
 * The AUX area (block 7). KRING_IOC_AUX_SNAPSHOT, snapshot mode only: stop
 * the producer, publish aux_head and write an AUX record with
 * KRING_AUX_FLAG_OVERWRITE for the newest data; the producer stays stopped
 * while the consumer copies the window, until KRING_IOC_AUX_RESUME; -EINVAL
 * unless the AUX area is mapped read-only. KRING_IOC_AUX_PAUSE and
 * KRING_IOC_AUX_RESUME stop and restart the AUX producer, ending its
 * current extent (perf's aux_pause); in snapshot mode a pause also
 * publishes, as a snapshot does.
 */
#define KRING_IOC_AUX_SNAPSHOT	_IO(KRING_IOC_MAGIC, 0x10)
#define KRING_IOC_AUX_PAUSE	_IO(KRING_IOC_MAGIC, 0x11)
#define KRING_IOC_AUX_RESUME	_IO(KRING_IOC_MAGIC, 0x12)

/*
 * KRING_IOC_GET_FORMATS: the layouts of the records a channel carries, in
 * ftrace's event format language, one block per described record type:
 *
 *	name: kring_sched
 *	ID: 9
 *	format:
 *		field:__u16 kind;	offset:0;	size:2;	signed:0;
 *		...
 *
 *	print fmt: "kind=%u ...", REC->kind, ...
 *
 * ID is the record type the block describes; for KRING_RECORD_SAMPLE the
 * fields are those of the RAW data (offsets from its first byte), for
 * KRING_RECORD_AUX those of the header every packet in the AUX area starts
 * with, for any other type those of the body after the record header. The
 * channel's source describes its own RAW data (sched, timer, synthetic) or
 * packets (the AUX tracer); a producer module adds its types
 * (kring_channel_add_format(), docs/PRODUCER.md).
 *
 * The caller sets @size (versioned like kring_attr: at least
 * KRING_FORMATS_SIZE_VER0, unknown trailing bytes zero; the command may
 * encode any struct size, as KRING_IOC_STATS's) and @buf / @len,
 * a buffer for the text; @buf = 0 asks only for the sizes. The module
 * fills in @count and @len (the bytes the text takes: the blocks back to
 * back, each ending with a NUL) and copies the text when @len was large
 * enough; else the call fails with ENOSPC, @count and @len filled in.
 * At most KRING_FORMATS_MAX blocks of KRING_FORMATS_MAX_BYTES in all.
 */
struct kring_formats {
	__u32 size;
	__u32 count;
	__u32 len;
	__u32 reserved;
	__u64 buf;
};

#define KRING_FORMATS_SIZE_VER0	24
#define KRING_FORMATS_MAX	32
#define KRING_FORMATS_MAX_BYTES	65536
#define KRING_IOC_GET_FORMATS	_IOWR(KRING_IOC_MAGIC, 0x13, struct kring_formats)

/* KRING_IOC_SET_WAKEUP: either field 0 keeps the default for it. */
struct kring_wakeup {
	__u32 watermark;	/* as kring_attr.wakeup_watermark */
	__u32 events;		/* as kring_attr.wakeup_events */
};

/*
 * =====================================================================
 * 3. The channel's attr and its flags
 * =====================================================================
 *
 * KRING_IOC_CONFIGURE takes a struct kring_attr, perf_event_attr's small
 * sibling. It is versioned by its first field: the caller sets @size to
 * sizeof(struct kring_attr) as it knows it. A shorter struct than
 * KRING_ATTR_SIZE_VER0 is -EINVAL; bytes beyond the module's struct must be
 * zero (else -E2BIG), and so must every reserved field (else -EINVAL).
 *
 * Capture modes, chosen by @cpu and @pid as in perf_event_open()
 * (docs/CAPTURE.md; which sources accept which mode: block 4):
 *	cpu = N,  pid = -1	per-CPU: every task on CPU N (one channel per
 *				CPU for system-wide capture)
 *	cpu = -1, pid = P	per-thread: task P (0: the caller) on any CPU
 *	cpu = N,  pid = P	P's activity on CPU N only ("default" mode: one
 *				such channel per CPU); with KRING_ATTR_F_INHERIT
 *				also every task P forks after the channel is
 *				enabled, and their children.
 * A CPU, when given, must be online at configure time.
 */

/*
 * struct kring_attr - configuration of one channel
 * @size:		sizeof(struct kring_attr) as the caller knows it
 * @source:		enum kring_source (block 4)
 * @flags:		KRING_ATTR_F_*
 * @sample_type:	KRING_SAMPLE_* bits of the SAMPLE records (block 6).
 *			KRING_SAMPLE_SEQ may be given or not: every SAMPLE
 *			carries it, and the channel's sample_type as the
 *			kernel reports it back (kring_stats.sample_type)
 *			has it set, with the bits its source always writes
 *			(RAW for the synthetic and sched sources).
 * @cpu:		CPU the channel is bound to, -1 for none
 * @pid:		task the channel follows, -1 for none
 * @wakeup_events:	wake the consumer every this many records (0: use the watermark)
 * @wakeup_watermark:	wake the consumer every this many bytes written (0: half the data area)
 * @config:		source parameters (block 4)
 * @clockid:		clock of record timestamps (KRING_CLOCK_*; 0: the default)
 * @aux_watermark:	wake the consumer when this many AUX bytes are unread (0: half)
 * @reserved:		zero
 */
struct kring_attr {
	__u32 size;
	__u32 source;
	__u64 flags;
	__u64 sample_type;
	__s32 cpu;
	__s32 pid;
	__u32 wakeup_events;
	__u32 wakeup_watermark;
	__u64 config[4];
	__u32 clockid;
	__u32 aux_watermark;
	__u64 reserved[3];
};

#define KRING_ATTR_SIZE_VER0	104	/* sizeof first published version */

/* kring_attr.flags */
#define KRING_ATTR_F_OVERWRITE		(1ULL << 0)	/* overwrite on a read-write mapping */
#define KRING_ATTR_F_MIRROR		(1ULL << 1)	/* data pages mapped twice in a row */
#define KRING_ATTR_F_INHERIT		(1ULL << 8)	/* follow children (pid != -1) */
#define KRING_ATTR_F_EXCLUDE_KERNEL	(1ULL << 9)	/* timer: drop kernel-mode samples */

/*
 * deprecated: frozen at their 1.0 values, they do not grow with the flags a
 * module accepts; check KRING_IOC_QUERY_ABI's feature bits for what a
 * module offers (KRING_FEAT_OVERWRITE, _MIRROR, _CAPTURE, ...).
 */
#define KRING_ATTR_F_ALL		(KRING_ATTR_F_OVERWRITE | KRING_ATTR_F_MIRROR)
#define KRING_ATTR_F_CAPTURE_ALL	(KRING_ATTR_F_INHERIT | KRING_ATTR_F_EXCLUDE_KERNEL)

/*
 * kring_attr.clockid: the clock of TIME fields (every value is nanoseconds).
 * The POSIX ids are the clockid_t values of <time.h>, as perf's
 * attr.clockid; KRING_CLOCK_LOCAL is perf's default perf_clock()
 * (local_clock(): fast, per-CPU, not synchronised across CPUs).
 */
#define KRING_CLOCK_DEFAULT		0	/* KRING_CLOCK_MONOTONIC */
#define KRING_CLOCK_MONOTONIC		1	/* CLOCK_MONOTONIC */
#define KRING_CLOCK_MONOTONIC_RAW	4	/* CLOCK_MONOTONIC_RAW */
#define KRING_CLOCK_BOOTTIME		7	/* CLOCK_BOOTTIME */
#define KRING_CLOCK_LOCAL		0x100	/* perf's local clock */

/*
 * =====================================================================
 * 4. Sources and their config[]
 * =====================================================================
 *
 * kring_attr.source names what writes the channel's records; its
 * parameters are kring_attr.config[] (unused entries must be zero).
 *
 *	source		feature bit	cpu / pid			writes
 *	NONE		-		any; pid = -1			what the producer API writes
 *	SYNTHETIC	_SYNTHETIC	cpu = N online; pid = -1	SAMPLE (RAW always)
 *	SCHED		_SCHED		any mode of block 3		SAMPLE (RAW always)
 *	TIMER		_TIMER		any mode of block 3		SAMPLE (RAW if asked)
 *	AUX_TRACER	_AUX_TRACER	cpu = N, pid = -1; or pid = P	AUX, ITRACE_START and
 *			(+ _CAPTURE	and cpu = -1 or N, inherit	the AUX area
 *			 for pid)	allowed
 *	EVENT		_EVENT		any mode of block 3		SAMPLE (RAW if asked)
 *
 * Only the sched, timer, AUX tracer and event sources accept pid != -1
 * (else -EINVAL); only the sched, timer and event sources can be
 * redirected (KRING_IOC_SET_OUTPUT). The synthetic and AUX tracer sources are test
 * generators: they need CAP_PERFMON or CAP_SYS_ADMIN unless
 * kring.test_sources=1 (else KRING_IOC_CONFIGURE fails with EACCES).
 * A source known to the ABI but not built into the module (its feature bit
 * clear) is -EOPNOTSUPP.
 */
enum kring_source {
	KRING_SOURCE_NONE	= 0,	/* written only through the producer API */
	KRING_SOURCE_SYNTHETIC	= 1,	/* built-in generator */
	KRING_SOURCE_SCHED	= 2,	/* context switches (sched tracepoints) */
	KRING_SOURCE_TIMER	= 3,	/* per-CPU hrtimer sampler, like cpu-clock */
	KRING_SOURCE_AUX_TRACER	= 4,	/* emulated hardware tracer writing the AUX area */
	KRING_SOURCE_EVENT	= 5,	/* any perf event: tracepoints, software, ... */
	KRING_SOURCE_MAX,		/* non-ABI: grows with every source */
};

/*
 * Synthetic source (KRING_SOURCE_SYNTHETIC): a test generator writing
 * SAMPLE records (RAW always) on kring_attr.cpu. Its config[] and its RAW
 * payload are not part of this ABI: they are in <linux/kring_test.h>,
 * kring's own test header, which is not installed.
 */

/*
 * Sched source (KRING_SOURCE_SCHED): a SAMPLE record (with RAW, whatever
 * attr.sample_type says) per context switch, fork and exit the channel's
 * mode selects. The TID field is the task the record is about (for a switch
 * in a followed mode, the followed one of prev and next; else prev); RAW
 * holds a struct kring_sched_raw. config[0] holds KRING_SCHED_CFG_* bits;
 * the rest of config[] must be zero.
 */
#define KRING_SCHED_SWITCH		1	/* prev switched out, next in */
#define KRING_SCHED_FORK		2	/* prev forked next */
#define KRING_SCHED_EXIT		3	/* prev exited */
#define KRING_SCHED_WAKEUP		4	/* prev (current) woke next up */

#define KRING_SCHED_CFG_WAKEUPS		(1ULL << 0)	/* also record wakeups */

#define KRING_SCHED_F_PREEMPT		(1U << 0)	/* switch: prev was preempted */

/*
 * struct kring_sched_raw - RAW payload of a sched record
 * @kind:	KRING_SCHED_*
 * @flags:	KRING_SCHED_F_*
 * @cpu:	CPU the event happened on (0xffffffff: a wakeup by a waker
 *		the channel's owner may not see, docs/SECURITY.md)
 * @prev_pid, @prev_tid, @next_pid, @next_tid: process and thread ids in
 *		the pid namespace the channel was configured from (0 and 0
 *		for none, the idle task or a task outside that namespace;
 *		all of a side the owner may not see is 0)
 * @prev_prio, @next_prio: kernel priorities (task->prio: 0..99 real-time,
 *		100..139 normal, as the sched_switch tracepoint reports)
 * @prev_state:	switch: prev's state word as sched_switch reports it (0:
 *		runnable, i.e. preempted; 1: interruptible sleep; 2:
 *		uninterruptible; ...); exit: the exit code; wakeup: the CPU
 *		next last ran on (wakeups are recorded in the waker's
 *		context, before the scheduler picks next's CPU)
 * @prev_comm, @next_comm: task names, NUL padded
 */
struct kring_sched_raw {
	__u16	kind;
	__u16	flags;
	__u32	cpu;
	__u32	prev_pid;
	__u32	prev_tid;
	__u32	next_pid;
	__u32	next_tid;
	__s32	prev_prio;
	__s32	next_prio;
	__u64	prev_state;
	char	prev_comm[16];
	char	next_comm[16];
};

/*
 * Timer source (KRING_SOURCE_TIMER): an hrtimer on each CPU the channel
 * covers samples the interrupted context like perf's cpu-clock event:
 *   config[0]  frequency in Hz (1..100000), or 0 to use config[1]
 *   config[1]  period in nanoseconds (>= 10000) when config[0] is 0
 *   config[2]  with KRING_SAMPLE_CALLCHAIN: the most addresses a call
 *              chain holds (1..KRING_CALLCHAIN_MAX; 0: KRING_CALLCHAIN_MAX);
 *              else 0
 * A SAMPLE is written when the interrupted task is one the mode selects:
 * IP is the interrupted instruction pointer, TID its task, PERIOD the
 * nanoseconds the sample stands for (the period times the expirations it
 * covers); RAW, when asked for, holds a struct kring_timer_raw; CALLCHAIN,
 * when asked for, the interrupted kernel stack (on kernels built with
 * CONFIG_STACKTRACE; else the kernel IP alone) and the user stack walked
 * by frame pointers, which stops at the first frame that is not readable
 * without a fault, not above the last, or not aligned (a program built
 * without frame pointers yields its IP and what its stack happens to
 * hold at the frame pointer register).
 * Kernel-mode samples need CAP_PERFMON (see docs/CAPTURE.md) unless
 * KRING_ATTR_F_EXCLUDE_KERNEL drops them.
 */
#define KRING_TIMER_F_USER		(1U << 0)	/* interrupted in user mode */

struct kring_timer_raw {
	__u32	flags;		/* KRING_TIMER_F_* */
	__u32	cpu;
	__u64	overruns;	/* expirations this sample covers, >= 1 */
};

/*
 * Event source (KRING_SOURCE_EVENT): any event perf_event_open() opens by
 * type and config (a tracepoint, a kprobe or uprobe made a tracepoint
 * through tracefs, a software or hardware event), counted by one in-kernel
 * perf counter on the CPU or task the channel covers (cpu = N, pid = -1;
 * pid = P on any CPU or on cpu = N; KRING_ATTR_F_INHERIT is perf's
 * inherit; cpu = -1 with pid = -1 is -EINVAL, an offline CPU -EINVAL, a
 * pid that does not exist -ESRCH); each overflow of the counter writes one
 * SAMPLE into the channel, as perf's would:
 *   config[0]  bits 0-31: perf_event_attr.type (PERF_TYPE_HARDWARE,
 *              _SOFTWARE, _TRACEPOINT or _HW_CACHE); bits 32-63:
 *              KRING_EVENT_F_*
 *   config[1]  perf_event_attr.config (a tracepoint's id: tracefs
 *              events/SUBSYS/NAME/id)
 *   config[2]  the sample period (>= 1), or with KRING_EVENT_F_FREQ the
 *              frequency in Hz (1..kernel.perf_event_max_sample_rate)
 *   config[3]  reserved for the depth of call chains (as the timer's
 *              config[2]); KRING_SAMPLE_CALLCHAIN is not accepted yet
 *              (-EINVAL, KRING_FEAT_CALLCHAIN is the timer's): 0
 * IP, TID, TIME, CPU and PERIOD are perf's for the same event; RAW, when
 * asked for, is the tracepoint's raw record exactly as perf writes it
 * (common fields first; its layout is tracefs events/SUBSYS/NAME/format)
 * and is refused for an event without one (-EINVAL: any type but
 * _TRACEPOINT). KRING_ATTR_F_EXCLUDE_KERNEL is perf's exclude_kernel (a
 * tracepoint fires in the kernel: with it, nothing is recorded, as with
 * perf's :u). Other bad config[] values are -EINVAL; an event this kernel
 * or machine does not have is the errno perf_event_open() gives (ENOENT,
 * EOPNOTSUPP, ...). A CPU that goes offline loses its counter, as perf's
 * own per-CPU events do: the channel records nothing more.
 * The caller may configure exactly what perf_event_open() would let it
 * open for the same attr, pid and cpu, at kernel.perf_event_paranoid and
 * never more than kring.paranoid allows (docs/SECURITY.md has the table):
 * what perf refuses with EACCES or EPERM is refused with the same errno.
 */
#define KRING_EVENT_F_FREQ		(1ULL << 32)	/* config[2] is a frequency */
#define KRING_EVENT_F_EXCLUDE_USER	(1ULL << 33)	/* perf's exclude_user */
#define KRING_EVENT_F_EXCLUDE_HV	(1ULL << 34)	/* perf's exclude_hv */
#define KRING_EVENT_F_EXCLUDE_IDLE	(1ULL << 35)	/* perf's exclude_idle */
#define KRING_EVENT_TYPE(config0)	((__u32)((config0) & 0xffffffffULL))

/*
 * The emulated tracer (KRING_SOURCE_AUX_TRACER): a test generator, a
 * PT/ETM-like unit writing packets into the AUX area (block 7) and AUX and
 * ITRACE_START records into the data ring, in CPU mode (cpu = N, pid = -1)
 * or task mode (pid = P, cpu = -1 or N, inherit allowed; needs
 * KRING_FEAT_CAPTURE). Its config[] and its packet format are not part of
 * this ABI: they are in <linux/kring_test.h> (docs/AUX.md).
 */

/*
 * =====================================================================
 * 5. The control page and its flags
 * =====================================================================
 *
 * mmap(fd, (1 + 2^n) * page_size, offset 0) maps one control page followed
 * by the 2^n pages of the data ring. The control page holds a struct
 * kring_ctl_page, which is laid out like perf's struct perf_event_mmap_page
 * for every field a consumer touches, so a reader written for a perf ring
 * buffer reads a kring data ring unchanged:
 *
 *	offset	field				written by
 *	     0	version, compat_version		kernel (once)
 *	     8	lock, index, offset,		kernel (perf self-monitoring
 *		time_enabled, time_running	fields; kring leaves them 0)
 *	    40	capabilities			kernel (KRING_CAP_*)
 *	    48	pmc_width, time_shift,		kernel (time conversion,
 *		time_mult, time_offset,		valid when the KRING_CAP_USER_TIME*
 *		time_zero			bits say so)
 *	    72	size				kernel: end of the live figures
 *	    80	time_cycles, time_mask		kernel
 *	    96	records_written .. need_wakeup	kring's live figures (perf:
 *		.. wakeup_watermark		reserved space)
 *	  1024	data_head			kernel (smp_wmb before the store)
 *	  1032	data_tail			consumer (forward mode only)
 *	  1040	data_offset, data_size		kernel (once)
 *	  1056	aux_head .. aux_size		AUX area, as in perf (block 7)
 *	  1088	end
 *
 * Data ring protocol (perf's; see kmod/ring.c for the kernel side):
 *
 *	kernel				consumer
 *	if (LOAD ->data_tail) {		LOAD ->data_head
 *			(A)		smp_rmb()	(C)
 *		STORE $data		LOAD $data
 *		smp_wmb()	(B)	smp_mb()	(D)
 *		STORE ->data_head	STORE ->data_tail
 *	}
 *
 * (C) and (D) may be a load-acquire of data_head and a store-release of
 * data_tail. data_head and data_tail are free-running byte counts; the byte
 * at position p is at data_offset + (p & (data_size - 1)) in the mapping,
 * so a record may wrap around the end of the data area.
 *
 * Forward (non-overwrite) writing, the default on a PROT_WRITE mapping:
 * records are appended at data_head; the consumer reads from data_tail to
 * data_head and then stores the new data_tail. The kernel never writes over
 * bytes between data_tail and data_head: a record that does not fit is
 * dropped and counted, and the next record that fits is preceded by a
 * KRING_RECORD_LOST record. A data_tail the kernel cannot make sense of (not
 * within data_size bytes behind data_head) means "no space": records are
 * lost, nothing outside the data area is ever written.
 *
 * Backward (overwrite) writing (KRING_CTL_F_OVERWRITE; a read-only mapping,
 * as in perf): data_head moves to lower positions (it starts at 0 and is
 * decremented by each record's size, so read as a signed number it is
 * minus the bytes written). The newest record starts at data_head, the
 * next older one right after it, and so on up to data_head + data_size;
 * a record that would end beyond that, or a header whose size is 0 (never
 * written), ends the walk. data_tail is ignored and nothing is counted as
 * lost for lack of space; no LOST records are written. Pause the channel
 * before reading so the walk is stable (KRING_CTL_F_PAUSED).
 */

/* kring_ctl_page.version of this layout; compat_version is 0. */
#define KRING_CTL_VERSION		1

/*
 * kring_ctl_page.capabilities: the bit positions of perf's
 * cap_bit0 .. cap_user_time_short bit-fields.
 */
#define KRING_CAP_BIT0			(1ULL << 0) /* always 0 */
#define KRING_CAP_BIT0_IS_DEPRECATED	(1ULL << 1) /* always 1 */
#define KRING_CAP_USER_RDPMC		(1ULL << 2) /* always 0 in kring */
#define KRING_CAP_USER_TIME		(1ULL << 3) /* time_{shift,mult,offset} */
#define KRING_CAP_USER_TIME_ZERO	(1ULL << 4) /* time_zero */
#define KRING_CAP_USER_TIME_SHORT	(1ULL << 5) /* time_{cycles,mask} */

/* kring_ctl_page.flags */
#define KRING_CTL_F_OVERWRITE		(1ULL << 0) /* backward, overwritable */
#define KRING_CTL_F_PAUSED		(1ULL << 1) /* every record is lost */
/*
 * Bound channels: the channel's CPU is offline (set when it goes offline,
 * or at enable if it already is); no record is written until it comes back
 * (the flag is then cleared).
 */
#define KRING_CTL_F_CPU_OFFLINE		(1ULL << 8)

/*
 * struct kring_ctl_page - the first page of the data-ring mapping.
 *
 * Fields up to @time_mask and from @data_head on are perf's (struct
 * perf_event_mmap_page in <linux/perf_event.h>), at the same offsets and
 * with the same meaning.
 *
 * kring's live figures follow, in the space perf reserves. The kernel
 * stores each with WRITE_ONCE() and a consumer reads them with a plain
 * (relaxed) 64-bit load, without a system call. They are published before
 * the data_head store that follows them (barrier B), so a consumer that
 * loaded data_head with acquire semantics (C) sees figures at least as new
 * as the records below that head. Counts are of records since the ring was
 * set up (or reset) and never decrease:
 *
 * @records_written:	records committed into the ring (kring_output_end).
 * @lost_no_space:	records dropped because the consumer had not freed
 *			enough space (forward mode only).
 * @lost_too_big:	records dropped because they can never fit: larger than
 *			the data area (less the room of a LOST record in forward
 *			mode) or than KRING_RECORD_MAX_SIZE.
 * @lost_paused:	records dropped while the channel was paused.
 * @lost_overwritten:	backward mode: records overwritten by newer ones. A
 *			best-effort lower bound: exact to within the records of
 *			1/16 of the data area.
 * @wakeups:		wake-ups the kernel has issued to pollers.
 * @flags:		KRING_CTL_F_*.
 * @need_wakeup:	written by the CONSUMER, read by the kernel; non-zero
 *			means "wake me when the wake-up condition (watermark or
 *			wakeup_events) is met", 0 means "I am polling data_head
 *			myself, do not bother" (io_uring's SQ_NEED_WAKEUP idea).
 *			The kernel sets it to 1 when the ring is set up, so a
 *			consumer that never touches it (a perf reader) is woken
 *			like perf's. A consumer about to sleep must do
 *
 *				STORE need_wakeup = 1
 *				smp_mb()			(F)
 *				LOAD data_head; if new data, do not sleep
 *
 *			which pairs with the kernel's
 *
 *				STORE data_head
 *				smp_mb()			(E)
 *				LOAD need_wakeup; if non-zero, wake
 *
 *			so that at least one side sees the other's store.
 * @timestamp_floor:	for time-ordered merging of several rings: non-zero
 *			means every record committed to this ring after the
 *			floor was published has TIME >= the floor; 0 means
 *			no floor is offered. Load it (acquire) BEFORE loading
 *			data_head: then every record with TIME < floor is
 *			below that head. See docs/CAPTURE.md.
 * @records_discarded:	reservations the producer cancelled; each left a
 *			KRING_RECORD_PAD record behind.
 * @wakeup_time:	CLOCK_MONOTONIC nanoseconds at which the last wake-up
 *			the kernel issued became due (the writer that crossed
 *			the watermark, or reached wakeup_events, found
 *			need_wakeup set); 0 before the first. Stored before the
 *			wake-up is issued: a woken consumer that reads its own
 *			CLOCK_MONOTONIC learns how late its wake-ups come
 *			(irq_work, scheduling), whatever clock the records use.
 * @wakeup_watermark:	bytes written after which a wake-up becomes due (the
 *			channel's watermark; half the data area by default; 0
 *			when only wakeup_events wakes). With @wakeup_time, what
 *			a consumer needs to tell whether sleeping until the
 *			next wake-up risks a full ring (libkring's poller).
 *
 * For every record a producer tried to write exactly one of these counts
 * grew: records_written + records_discarded + lost_no_space + lost_too_big +
 * lost_paused is the number of sequence numbers handed out.
 *
 * @size is the offset of the end of the live figures above (perf: "header
 * size up to __reserved[] fields"); a consumer must not read a figure that
 * lies at or beyond @size. Fields added later go into __reserved_kring and
 * grow @size.
 */
struct kring_ctl_page {
	__u32	version;
	__u32	compat_version;
	__u32	lock;
	__u32	index;
	__s64	offset;
	__u64	time_enabled;
	__u64	time_running;
	__u64	capabilities;
	__u16	pmc_width;
	__u16	time_shift;
	__u32	time_mult;
	__u64	time_offset;
	__u64	time_zero;
	__u32	size;
	__u32	__reserved_1;
	__u64	time_cycles;
	__u64	time_mask;

	/* kring's live figures, offset 96 */
	__u64	records_written;
	__u64	lost_no_space;
	__u64	lost_too_big;
	__u64	lost_paused;
	__u64	lost_overwritten;
	__u64	wakeups;
	__u64	flags;
	__u64	need_wakeup;
	__u64	timestamp_floor;
	__u64	records_discarded;
	__u64	wakeup_time;		/* offset 176: KRING_CTL_SIZE_VER2 */
	__u64	wakeup_watermark;
	__u64	__reserved_kring[4];	/* zero; room for more figures */

	__u8	__reserved[1024 - 224];	/* pad to 1k, as perf */

	/* offset 1024 */
	__u64	data_head;
	__u64	data_tail;
	__u64	data_offset;
	__u64	data_size;
	__u64	aux_head;
	__u64	aux_tail;
	__u64	aux_offset;
	__u64	aux_size;
};

/*
 * kring_ctl_page.size: the live figures end after records_discarded (1),
 * after wakeup_watermark (2). A consumer reads a figure only below @size.
 */
#define KRING_CTL_SIZE_VER1		176
#define KRING_CTL_SIZE_VER2		192

/*
 * =====================================================================
 * 6. Records and their layouts
 * =====================================================================
 *
 * Every record starts with perf's 8-byte header. Records are 8-byte
 * aligned (KRING_RECORD_ALIGN) and @size counts the header, the body and
 * any padding, so the next record starts @size bytes later; the largest
 * record is KRING_RECORD_MAX_SIZE bytes. A consumer skips a record of a
 * type it does not know by its size.
 *
 *	type				body
 *	KRING_RECORD_LOST		struct kring_lost_record
 *	KRING_RECORD_SAMPLE		fields per the channel's sample_type (below)
 *	KRING_RECORD_AUX		struct kring_aux_record (block 7)
 *	KRING_RECORD_ITRACE_START	struct kring_itrace_start_record
 *	KRING_RECORD_PAD		nothing to read (below)
 *
 * Every record a producer writes is given the next sequence number of its
 * ring; SAMPLE (SEQ), LOST (a range), AUX and ITRACE_START records carry it.
 */
struct kring_record_header {
	__u32	type;
	__u16	misc;
	__u16	size;
};

/* Records are aligned to, and their sizes are multiples of, 8 bytes. */
#define KRING_RECORD_ALIGN		8
/* Largest record: the largest __u16 header size that is a multiple of 8. */
#define KRING_RECORD_MAX_SIZE		(0xffffU & ~(KRING_RECORD_ALIGN - 1U))

/* Record types kring shares with perf: perf's numbers and body layouts. */
#define KRING_RECORD_LOST		2
#define KRING_RECORD_SAMPLE		9
#define KRING_RECORD_AUX		11
#define KRING_RECORD_ITRACE_START	12

/*
 * kring-only record types start at KRING_RECORD_KRING_BASE, far above
 * perf's kernel types (below 64) and perf tool's synthesized types (64 up):
 * a perf reader skips them by their header size.
 */
#define KRING_RECORD_KRING_BASE		0x10000
/*
 * KRING_RECORD_PAD: the space a cancelled reservation left behind.
 * Consumers skip it. When its size is at least 16 its first body word is
 * the sequence number the cancelled record had been given.
 */
#define KRING_RECORD_PAD		(KRING_RECORD_KRING_BASE + 0)

/*
 * struct kring_lost_record - KRING_RECORD_LOST: records were dropped.
 *
 * @id and @lost are perf's PERF_RECORD_LOST body; kring appends the range of
 * the lost records' sequence numbers and timestamps (a perf reader ignores
 * them; header.size covers them). @lost is exact. @first_seq/@last_seq are
 * the lowest and highest sequence numbers among the lost records and
 * @first_time/@last_time the lowest and highest timestamps; when writers
 * nest (an interrupt's record lost while a task's record was in flight),
 * the range can include sequence numbers of records that were delivered,
 * so @lost may be smaller than @last_seq - @first_seq + 1.
 */
struct kring_lost_record {
	struct kring_record_header header;
	__u64	id;
	__u64	lost;
	__u64	first_seq;
	__u64	last_seq;
	__u64	first_time;
	__u64	last_time;
};

/*
 * struct kring_itrace_start_record - KRING_RECORD_ITRACE_START: the AUX
 * producer started tracing @pid/@tid (perf's body), at @time with sequence
 * number @seq (kring's extension).
 */
struct kring_itrace_start_record {
	struct kring_record_header header;
	__u32	pid;
	__u32	tid;
	__u64	time;
	__u64	seq;
};

/*
 * KRING_RECORD_SAMPLE bits (kring_attr.sample_type, kring_stats.sample_type):
 * perf's PERF_SAMPLE_* values for the fields kring supports, plus
 * KRING_SAMPLE_SEQ.
 */
#define KRING_SAMPLE_IP			(1ULL << 0)
#define KRING_SAMPLE_TID		(1ULL << 1)
#define KRING_SAMPLE_TIME		(1ULL << 2)
#define KRING_SAMPLE_ID			(1ULL << 6)
#define KRING_SAMPLE_CPU		(1ULL << 7)
#define KRING_SAMPLE_PERIOD		(1ULL << 8)
#define KRING_SAMPLE_CALLCHAIN		(1ULL << 5)	/* timer and event sources */
#define KRING_SAMPLE_RAW		(1ULL << 10)
#define KRING_SAMPLE_IDENTIFIER		(1ULL << 16)
/*
 * KRING_SAMPLE_SEQ: the record's per-ring sequence number. Its field comes
 * after every perf-defined field kring writes (after RAW), so a perf parser
 * that knows the other bits reads the body unchanged. Every SAMPLE kring
 * writes carries it: the kernel sets the bit in the channel's sample_type
 * it reports back (kring_stats.sample_type), whether attr.sample_type had
 * it or not.
 */
#define KRING_SAMPLE_SEQ		(1ULL << 63)

/*
 * deprecated: frozen at its 1.0 value (without KRING_SAMPLE_CALLCHAIN); it
 * does not grow with the fields a module writes. Check KRING_IOC_QUERY_ABI's
 * feature bits for what a module offers, and kring_stats.sample_type for
 * the fields a channel's records carry.
 */
#define KRING_SAMPLE_SUPPORTED	(KRING_SAMPLE_IP | KRING_SAMPLE_TID |	\
				 KRING_SAMPLE_TIME | KRING_SAMPLE_ID |	\
				 KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD | \
				 KRING_SAMPLE_RAW | KRING_SAMPLE_IDENTIFIER | \
				 KRING_SAMPLE_SEQ)

/*
 * KRING_RECORD_SAMPLE body, perf's order, each field present when its bit
 * is set in the channel's sample_type (kring_stats.sample_type: that value
 * alone describes the layout, as in perf):
 *
 *	struct kring_record_header header;
 *	{ __u64 id;              } && KRING_SAMPLE_IDENTIFIER
 *	{ __u64 ip;              } && KRING_SAMPLE_IP
 *	{ __u32 pid, tid;        } && KRING_SAMPLE_TID
 *	{ __u64 time;            } && KRING_SAMPLE_TIME
 *	{ __u64 id;              } && KRING_SAMPLE_ID
 *	{ __u32 cpu, res;        } && KRING_SAMPLE_CPU
 *	{ __u64 period;          } && KRING_SAMPLE_PERIOD
 *	{ __u64 nr;
 *	  __u64 ips[nr];         } && KRING_SAMPLE_CALLCHAIN
 *	{ __u32 size;
 *	  char  data[size];      } && KRING_SAMPLE_RAW
 *	{ __u64 seq;             } && KRING_SAMPLE_SEQ
 *
 * As in perf, RAW's size is padded with zeroes so that size + 4 is a
 * multiple of 8 and the record stays 8-byte aligned: n bytes of data are
 * written with size KRING_RAW_PADDED(n). (A division, not a mask: the
 * mask ~7U is 32 bits wide and would clear the high bits of a 64-bit n.)
 *
 * CALLCHAIN is perf's: the sampled context's return addresses, innermost
 * first, each part opened by a context marker: KRING_CONTEXT_KERNEL, then
 * the interrupted kernel IP and its callers; KRING_CONTEXT_USER, then the
 * user IP and its callers by frame pointers. At most KRING_CALLCHAIN_MAX
 * addresses, markers not counted (so nr <= KRING_CALLCHAIN_MAX + 2).
 */
#define KRING_CONTEXT_KERNEL		((__u64)-128)	/* PERF_CONTEXT_KERNEL */
#define KRING_CONTEXT_USER		((__u64)-512)	/* PERF_CONTEXT_USER */
#define KRING_CALLCHAIN_MAX		127	/* perf's default max_stack */
#define KRING_RAW_PADDED(n)						\
	(((n) + 4U + KRING_RECORD_ALIGN - 1U) / KRING_RECORD_ALIGN *	\
	 KRING_RECORD_ALIGN - 4U)

/*
 * =====================================================================
 * 7. The AUX area (docs/AUX.md)
 * =====================================================================
 *
 * A second buffer for bulk data written by hardware-like producers (perf's
 * AUX area). The consumer stores aux_offset and aux_size into the control
 * page of its data-ring mapping, then maps that range of the same fd:
 * aux_offset page aligned and at or past the end of the data-ring mapping,
 * aux_size a power-of-two number of pages (at most 2^KRING_AUX_MAX_ORDER);
 * the data ring must be mapped first; a later mapping of the AUX area must
 * have the same offset, size and protection. Anything else is -EINVAL.
 *
 * A read-write AUX mapping is normal mode: the producer writes at aux_head
 * and never past aux_tail + aux_size, which the consumer advances (the
 * data ring's A/B/C/D protocol with aux_head/aux_tail). A read-only AUX
 * mapping is snapshot mode: the producer overwrites freely and publishes
 * aux_head (with an OVERWRITE record) only when it stops: a snapshot
 * (KRING_IOC_AUX_SNAPSHOT), an AUX pause, disabling the channel.
 *
 * aux_head is a free-running byte count in both modes: the byte at AUX
 * position p is at p & (aux_size - 1) in the AUX mapping. A snapshot is
 * therefore the aux_size bytes before aux_head when aux_head >= aux_size
 * (the buffer wrapped, or is exactly full), else [0, aux_head).
 *
 * Each finished extent is announced by a KRING_RECORD_AUX record in the
 * data ring (struct kring_aux_record): normal mode extents are contiguous
 * in AUX position; a gap left when the producer found no room follows a
 * record with KRING_AUX_FLAG_TRUNCATED (possibly of size 0). The AUX
 * figures are in struct kring_stats (block 8).
 */
#define KRING_AUX_MAX_ORDER	16

/*
 * struct kring_aux_record - KRING_RECORD_AUX: the producer of the AUX area
 * finished an extent. @aux_offset, @aux_size and @flags are perf's
 * PERF_RECORD_AUX body: the extent is AUX bytes [aux_offset, aux_offset +
 * aux_size) as free-running positions (the byte at position p is at
 * p & (aux_size_of_area - 1) in the AUX mapping), with KRING_AUX_FLAG_*.
 * kring appends the record clock's @time at which the extent was ended and
 * the record's sequence number @seq (perf readers skip them by
 * header.size).
 */
struct kring_aux_record {
	struct kring_record_header header;
	__u64	aux_offset;
	__u64	aux_size;
	__u64	flags;
	__u64	time;
	__u64	seq;
};

/* kring_aux_record.flags: perf's PERF_AUX_FLAG_* values and meanings. */
#define KRING_AUX_FLAG_TRUNCATED	0x01	/* the producer stopped: no room */
#define KRING_AUX_FLAG_OVERWRITE	0x02	/* snapshot: the extent overwrote older data */
#define KRING_AUX_FLAG_PARTIAL		0x04	/* the extent holds a partial packet */
#define KRING_AUX_FLAG_COLLISION	0x08	/* sample collided with another */

/*
 * =====================================================================
 * 8. Statistics
 * =====================================================================
 *
 * KRING_IOC_STATS answers with a struct kring_stats, versioned like
 * kring_abi_info: the caller sets @size to the size it knows (at least
 * KRING_STATS_SIZE_VER0) and the module fills in min(that, its own size)
 * bytes and returns that in @size; a figure at or beyond the returned
 * @size is unknown to the module. The ioctl number encodes the caller's
 * sizeof(struct kring_stats); the module accepts KRING_IOC_STATS of any
 * size, so a binary built against an older header keeps working. The record counts are those of the
 * control page's live figures (block 5), which a mapped consumer reads
 * without a system call; the stats also work on an unmapped or redirected
 * channel.
 *
 * struct kring_stats
 * @size:		in: the caller's size (>= KRING_STATS_SIZE_VER0); out: bytes filled
 * @flags:		KRING_STATS_F_*
 * @produced:		records the producers tried to write (sequence numbers given)
 * @written:		records written into the ring
 * @lost_no_space:	records dropped: the consumer had not freed enough room
 * @lost_too_big:	records dropped: larger than the data area can ever hold
 * @lost_paused:	records dropped: output paused
 * @lost_overwritten:	records overwritten before they were read (overwrite mode)
 * @wakeups:		consumer wakeups issued
 * @nested:		writers that began (a record reserved, lost or refused) while
 *			another writer of this ring was in flight, on the same CPU
 * @aux_bytes:		AUX area: bytes announced by AUX records
 * @aux_records:	AUX area: AUX records written
 * @aux_truncated:	AUX area: AUX records with KRING_AUX_FLAG_TRUNCATED
 * @aux_chunk_order:	AUX area: log2 of the pages of the smallest physically
 *			contiguous chunk (the four aux_* figures are 0
 *			without an AUX area; they were reserved[0..3] of
 *			KRING_STATS_SIZE_VER0, at the same offsets)
 * @throttled:		samples this channel's source did not write because its
 *			CPU had spent its sample rate or CPU-time budget
 *			(kring.max_sample_rate, kring.cpu_time_max_percent;
 *			docs/SECURITY.md); since KRING_STATS_SIZE_VER1
 * @sample_type:	the channel's sample_type: KRING_SAMPLE_* bits of the
 *			fields of its SAMPLE records, attr.sample_type plus
 *			KRING_SAMPLE_SEQ and the bits its source always
 *			writes; 0 while unconfigured; since
 *			KRING_STATS_SIZE_VER2
 */
struct kring_stats {
	__u32 size;
	__u32 flags;
	__u64 produced;
	__u64 written;
	__u64 lost_no_space;
	__u64 lost_too_big;
	__u64 lost_paused;
	__u64 lost_overwritten;
	__u64 wakeups;
	__u64 nested;
	__u64 aux_bytes;
	__u64 aux_records;
	__u64 aux_truncated;
	__u64 aux_chunk_order;
	__u64 throttled;
	__u64 sample_type;
};

#define KRING_STATS_SIZE_VER0	104
#define KRING_STATS_SIZE_VER1	112	/* + throttled */
#define KRING_STATS_SIZE_VER2	120	/* + sample_type; aux_* named */

/*
 * deprecated: the indexes of the AUX figures in the first version's
 * reserved[4] (KRING_STATS_SIZE_VER0's offsets 72..96), which are now
 * aux_bytes .. aux_chunk_order: read those fields instead. Kept, with
 * their values, for code that indexes from &aux_bytes.
 */
#define KRING_STATS_AUX_BYTES		0
#define KRING_STATS_AUX_RECORDS		1
#define KRING_STATS_AUX_TRUNCATED	2
#define KRING_STATS_AUX_CHUNK_ORDER	3

/* kring_stats.flags */
#define KRING_STATS_F_ENABLED	(1U << 0)
#define KRING_STATS_F_PAUSED	(1U << 1)
#define KRING_STATS_F_MAPPED	(1U << 2)
/*
 * A followed task exec'ed an image the channel's owner may not observe (a
 * setuid or setgid program, or one made non-dumpable): the channel stopped
 * following, for good, as perf does (docs/SECURITY.md).
 */
#define KRING_STATS_F_REVOKED	(1U << 3)

#endif /* _UAPI_LINUX_KRING_H */
