/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kring SDK: how another module writes records into a kring channel that
 * user space opened, configured (KRING_SOURCE_NONE or any source) and
 * mapped. docs/PRODUCER.md shows the build (the installed headers and
 * Module.symvers) and kmod/examples/kring_example.c a complete module.
 *
 * User space names the channel to the producing module: by the file
 * descriptor of the channel, which the module resolves with
 * kring_channel_get_fd() in the context of the process that passed it (an
 * ioctl or write of the module's own), or by the id KRING_IOC_ID reports,
 * which kring_channel_get() resolves. The module takes a reference with
 * one of them and writes a record of one piece in one call, from any
 * context:
 *
 *	kring_channel_write(ch, MY_RECORD_TYPE, 0, &body, sizeof(body));
 *
 * or, for a record written in several pieces, through a handle:
 *
 *	struct kring_output_handle h;
 *
 *	preempt_disable();		(or be in irq/softirq/NMI context)
 *	if (!kring_channel_output_begin(&h, ch, size)) {
 *		kring_output_copy(&h, &hdr, sizeof(hdr));
 *		if (kring_output_copy(&h, body, size - sizeof(hdr)))
 *			kring_channel_output_discard(&h);
 *		else
 *			kring_channel_output_end(&h);
 *	}
 *	preempt_enable();
 *
 * or, zero-copy, the record written in place (a channel's reservation is
 * always one piece, see kring_output_ptr()):
 *
 *	if (!kring_channel_output_begin(&h, ch, size)) {
 *		struct my_record *r = kring_output_ptr(&h);
 *
 *		r->hdr = hdr;
 *		...
 *		kring_channel_output_end(&h);
 *	}
 *
 * or, for perf-style SAMPLE records (struct kring_sample_data below),
 * kring_channel_write_sample(), or kring_channel_write_raw() for a
 * tracepoint's: RAW data, the other fields from the context. Writers of one channel may nest (task,
 * softirq, hardirq, NMI) on one CPU; one ring never has writers on two
 * CPUs at once. Where kring writes a channel from more than one CPU (no
 * CPU and a capture source, or an AUX area), these calls take the
 * buffer's write lock as kring's writers do, from any CPU (in NMI a held
 * lock is -EBUSY); elsewhere the producer keeps the rule (a CPU-bound
 * channel from its CPU, a producer-only channel from one CPU at a time).
 * docs/PRODUCER.md, "Which channels, from where".
 *
 * A record that does not fit is dropped and counted, and the consumer sees
 * a LOST record before the next one that fits: producers never block.
 *
 * Whose channel. A channel belongs to the user who opened it, and kring
 * checks nothing when a module writes into it: kring_channel_get() finds
 * any open channel by its id, and ids are sequential and global, so any
 * user can name anyone's channel. A driver that takes a channel from a
 * user must make sure that user may write there: take a file descriptor
 * and resolve it with kring_channel_get_fd() (the caller holds the
 * channel open, as perf's set-output and BPF's map fds rule), or accept
 * ids only through an interface that only a privileged user reaches (a
 * module parameter, a root-only file, a capable() check of the driver's
 * own). Never accept an id from an unprivileged interface.
 *
 * Limits. Every size a call takes is checked against its bound before
 * anything is computed from it, and a refused call writes none of the
 * bytes it was given:
 *
 *  - a record is at least a header and at most KRING_RECORD_MAX_SIZE bytes
 *    (the header's u16 size, 8-byte aligned) and what the channel's ring
 *    can hold: a begin refuses any other size with -E2BIG and counts it
 *    in lost_too_big, so the consumer sees it in a LOST record;
 *    kring_channel_write() refuses a body longer than
 *    KRING_RECORD_MAX_SIZE less a header the same way, and a body of a
 *    length above 0 without an address with -EINVAL, counted nowhere;
 *  - a SAMPLE's RAW data is at most KRING_SAMPLE_RAW_MAX bytes, whatever
 *    the sample_type: kring_sample_size() answers 0 beyond it, so
 *    kring_channel_write_sample() and kring_channel_write_raw() refuse it
 *    as a begin refuses a size, -E2BIG counted in lost_too_big; RAW data of a size above 0 needs an
 *    address (-EINVAL, nothing counted);
 *  - within a reservation, a copy or header beyond what is left of it and
 *    a SAMPLE that does not match the reservation are refused (-E2BIG,
 *    -EINVAL) and written nowhere: the record stays reserved, and the end
 *    call commits it (unwritten bytes zeroed) when its header was written
 *    whole, or else makes it a KRING_RECORD_PAD record of the reserved
 *    size, counted as discarded, as kring_channel_output_discard() does
 *    for a record the producer gives up;
 *  - in the AUX area, a copy or skip beyond the room of the extent is
 *    refused (-ENOSPC), and the size an end takes is clamped to it.
 *
 * ABI. Every call is an exported function of kring.ko but
 * kring_output_ptr(), which touches nothing but the handle, so a producer
 * never depends on kring's private structures (channel, buffer, ring, AUX
 * area stay opaque) and kring can change them freely.
 * What a producer does compile in is the layout of the structures it
 * declares or reads itself: struct kring_output_handle (<kring/output.h>),
 * struct kring_sample_data and struct kring_aux_handle. Those layouts are
 * API: changing one (or what an inline relies on) bumps
 * KRING_PRODUCER_API_VERSION, and
 * kring_channel_get() passes the version the producer was built with to
 * kring.ko, which refuses a different one (NULL, and a message naming the
 * caller) instead of letting the producer write through a handle of the
 * wrong shape. The per-record cost of the out-of-line calls is a few
 * function calls next to the reservation's atomics; a producer that
 * writes big records pays it per record, not per byte.
 */
#ifndef _KRING_PRODUCER_H
#define _KRING_PRODUCER_H

#include <linux/types.h>
#include <linux/build_bug.h>
#include <linux/compiler.h>
#include <linux/limits.h>
#include <linux/stddef.h>
#include <linux/stringify.h>
#include <linux/kring.h>
#include <kring/output.h>

/*
 * The producer API's version: the layouts of struct kring_output_handle,
 * struct kring_sample_data and struct kring_aux_handle, and the calls
 * below. kring.ko accepts producers built with exactly this version.
 *
 * 2: kring_output_ptr(), inline, and the promise it relies on: a channel's
 *    reservation is always one piece (the handle's @size covers @rem).
 *
 * A call added to kring.ko (kring_channel_get_fd() and its inline, which
 * only passes this version on), or an int returned where void was, changes
 * no layout and no existing inline: it needs no new version (a producer
 * that calls a function its kring.ko lacks does not load).
 */
#define KRING_PRODUCER_API_VERSION	2

struct kring_channel;

struct kring_channel *__kring_channel_get(u64 id, unsigned int api_version);
struct kring_channel *__kring_channel_get_fd(int fd, unsigned int api_version);

/**
 * kring_channel_get() - find an open channel by the id KRING_IOC_ID reports
 * @id: channel id
 *
 * Any open channel, whoever opened it: the caller decides whether the
 * user who named @id may write there (see "Whose channel" above).
 *
 * Context: any context that may take rcu_read_lock().
 * Return: the channel with a reference (drop it with kring_channel_put()),
 * or NULL if no channel has this id or kring.ko speaks another
 * KRING_PRODUCER_API_VERSION than the caller was built with.
 */
static inline struct kring_channel *kring_channel_get(u64 id)
{
	return __kring_channel_get(id, KRING_PRODUCER_API_VERSION);
}

/**
 * kring_channel_get_fd() - find the channel a file descriptor of the
 *	calling process holds open
 * @fd: a file descriptor of the current process, of /dev/kring
 *
 * The way to take a channel from an unprivileged user: the caller proves
 * it holds the channel open, whoever opened it (descriptors pass between
 * processes only when their holder passes them).
 *
 * Context: process context, in the task that passed @fd (the driver's
 * ioctl or write handler; not a kernel thread or a work item).
 * Return: the channel with a reference (drop it with kring_channel_put()),
 * or NULL if @fd is not an open /dev/kring file of the current process or
 * kring.ko speaks another KRING_PRODUCER_API_VERSION.
 */
static inline struct kring_channel *kring_channel_get_fd(int fd)
{
	return __kring_channel_get_fd(fd, KRING_PRODUCER_API_VERSION);
}

void kring_channel_put(struct kring_channel *ch);
int kring_channel_write(struct kring_channel *ch, u32 type, u16 misc,
			const void *body, unsigned int len);
int kring_channel_output_begin(struct kring_output_handle *h,
			       struct kring_channel *ch, unsigned int size);
void kring_channel_output_end(struct kring_output_handle *h);
void kring_channel_output_discard(struct kring_output_handle *h);
int kring_channel_write_sample(struct kring_channel *ch,
			       struct kring_sample_data *data);
int kring_channel_write_raw(struct kring_channel *ch, const void *raw, u32 size);

/*
 * Describing your records (docs/PRODUCER.md): the layout of a record type
 * the channel carries, as ftrace describes a trace event; consumers read
 * it with KRING_IOC_GET_FORMATS and decode the fields by name. The layout
 * is the struct's: each field is KRING_FORMAT_FIELD() or
 * KRING_FORMAT_ARRAY() of a member, which take offset, size and
 * signedness from the compiler, never a number written by hand:
 *
 *	struct my_body {
 *		__u64 seq;
 *		__s32 delta;
 *		char tag[4];
 *	};
 *
 *	static const struct kring_format_field my_fields[] = {
 *		KRING_FORMAT_FIELD(struct my_body, seq, __u64),
 *		KRING_FORMAT_FIELD(struct my_body, delta, __s32),
 *		KRING_FORMAT_ARRAY(struct my_body, tag, char, 4),
 *	};
 *
 *	static const struct kring_format my_format = {
 *		.name = "my_event",
 *		.type = MY_RECORD_TYPE,
 *		.size = sizeof(struct my_body),
 *		.fields = my_fields,
 *		.nr_fields = ARRAY_SIZE(my_fields),
 *		.print_fmt = "\"seq=%llu\", REC->seq",
 *	};
 */
#define KRING_FORMAT_NAME_MAX	63	/* a name's characters */
#define KRING_FORMAT_PRINT_MAX	1024	/* print fmt's characters */
#define KRING_FORMAT_MAX_FIELDS	64

/**
 * struct kring_format_field - one field of a described record
 * @type:	its C type as ftrace prints it, from a fixed set: u8..u64,
 *		s8..s64, __u8..__s64, char, unsigned char, short, unsigned
 *		short, int, unsigned int, long, unsigned long, long long,
 *		unsigned long long, bool, pid_t; an array as "T[N]"
 * @name:	an identifier (not common_*, which ftrace reserves)
 * @offset:	bytes from the start of what the format describes
 * @size:	the type's size (times N for an array)
 * @is_signed:	the type's signedness (char's is the kernel's: signed
 *		before Linux 6.2 on x86, unsigned from then on, everywhere)
 *
 * Written with KRING_FORMAT_FIELD() or KRING_FORMAT_ARRAY() (below), which
 * take all of it from a member of the struct the format describes.
 */
struct kring_format_field {
	const char *type;
	const char *name;
	u16 offset;
	u16 size;
	bool is_signed;
};

/**
 * struct kring_format - the layout of one record type
 * @name:	an identifier, the event's name for consumers
 * @type:	the record type it describes: KRING_RECORD_SAMPLE (the RAW
 *		data of the channel's SAMPLEs), a type above KRING_RECORD_PAD
 *		(the body after the header) or KRING_RECORD_AUX (the header
 *		every packet a producer writes into the AUX area starts with)
 * @size:	the bytes described; every field lies inside them
 * @fields:	@nr_fields fields (1..KRING_FORMAT_MAX_FIELDS), no two
 *		overlapping
 * @print_fmt:	ftrace's print fmt (a quoted format, then REC->field
 *		arguments), printable ASCII, or NULL
 */
struct kring_format {
	const char *name;
	u32 type;
	u16 size;
	const struct kring_format_field *fields;
	unsigned int nr_fields;
	const char *print_fmt;
};

/*
 * A field too far into its struct for struct kring_format_field's u16
 * offset and size fails the build.
 */
#define __KRING_FORMAT_FIT(_s, _member)						\
	BUILD_BUG_ON_ZERO(offsetof(_s, _member) + sizeof_field(_s, _member) > U16_MAX)

/**
 * KRING_FORMAT_FIELD() - the struct kring_format_field of a member
 * @_s:		the struct the format describes (struct my_body)
 * @_member:	a member of @_s, not an array (KRING_FORMAT_ARRAY())
 * @_type:	@_member's C type, as a type (__u32, unsigned long, pid_t),
 *		one of those struct kring_format_field lists
 *
 * The field's name is @_member, its type @_type as spelt, its offset,
 * size and signedness the compiler's: offsetof(), sizeof_field() and
 * is_signed_type(), as ftrace's __field() derives an event's format. A
 * @_type that is not @_member's (another size or signedness, an array, a
 * pointer) fails the build; a spelling outside the list fails
 * kring_channel_add_format().
 */
#define KRING_FORMAT_FIELD(_s, _member, _type) {				\
	.type = #_type,								\
	.name = #_member,							\
	.offset = offsetof(_s, _member) + __KRING_FORMAT_FIT(_s, _member) +	\
		  BUILD_BUG_ON_ZERO(!__same_type(((_s *)0)->_member, _type)),	\
	.size = sizeof_field(_s, _member),					\
	.is_signed = is_signed_type(_type),					\
}

/**
 * KRING_FORMAT_ARRAY() - the struct kring_format_field of an array member
 * @_s:		the struct the format describes
 * @_member:	an array member of @_s
 * @_type:	its element type, as for KRING_FORMAT_FIELD()
 * @_n:		its element count: a number, or a macro that expands to one
 *		(the type reads "@_type[@_n]")
 *
 * As KRING_FORMAT_FIELD(), ftrace's __array(): a member that is not an
 * array of @_n @_type fails the build. Signedness is the element's, so a
 * char array is signed only where the kernel's char is (not since Linux
 * 6.2, built with -funsigned-char everywhere), as ftrace prints it.
 */
#define KRING_FORMAT_ARRAY(_s, _member, _type, _n) {				\
	.type = #_type "[" __stringify(_n) "]",					\
	.name = #_member,							\
	.offset = offsetof(_s, _member) + __KRING_FORMAT_FIT(_s, _member) +	\
		  BUILD_BUG_ON_ZERO(!__same_type(((_s *)0)->_member, _type[_n])), \
	.size = sizeof_field(_s, _member),					\
	.is_signed = is_signed_type(_type),					\
}

int kring_channel_add_format(struct kring_channel *ch, const struct kring_format *f);

/*
 * The AUX area: a hardware-like producer writes extents of bulk data
 * straight into a channel's AUX pages and announces each with a
 * KRING_RECORD_AUX in the data ring:
 *
 *	struct kring_aux_handle h;
 *
 *	preempt_disable();
 *	if (!kring_aux_output_begin(&h, ch)) {
 *		n = ...bytes that fit in h.size...;
 *		kring_aux_output_copy(&h, 0, data, n);
 *		if (n < wanted)
 *			kring_aux_output_flag(&h, KRING_AUX_FLAG_TRUNCATED);
 *		kring_aux_output_end(&h, n);
 *	}
 *	preempt_enable();
 */
struct kring_buffer;
struct kring_aux;

/**
 * struct kring_aux_handle - one AUX extent being written
 * @ch:		the channel
 * @buf:	its buffer (kring's)
 * @aux:	its AUX area (kring's)
 * @head:	AUX position (free-running bytes) the extent starts at
 * @size:	bytes the producer may write from @head
 * @flags:	KRING_AUX_FLAG_* the AUX record will carry
 * @chunk_order: log2 of the pages of the smallest physically contiguous
 *		chunk of the area: AUX positions in one aligned block of
 *		PAGE_SIZE << @chunk_order bytes are contiguous in memory
 *
 * A producer reads @head, @size, @flags and @chunk_order and writes none.
 */
struct kring_aux_handle {
	struct kring_channel *ch;
	struct kring_buffer *buf;
	struct kring_aux *aux;
	u64 head;
	u64 size;
	u64 flags;
	unsigned int chunk_order;
};

int kring_aux_output_begin(struct kring_aux_handle *h, struct kring_channel *ch);
int kring_aux_output_copy(struct kring_aux_handle *h, u64 offset, const void *src, u64 len);
void kring_aux_output_flag(struct kring_aux_handle *h, u64 flags);
int kring_aux_output_skip(struct kring_aux_handle *h, u64 size);
void kring_aux_output_end(struct kring_aux_handle *h, u64 size);

#endif /* _KRING_PRODUCER_H */
