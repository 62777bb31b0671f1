/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kring SDK: the handle of one record being written, and the SAMPLE
 * records written through it.
 *
 * Part of the producer API of <kring/producer.h>, and shared with kring's
 * ring core (kmod/ring.h), which fills the handle in. A producer declares
 * the handle on its stack, so the size and layout of struct
 * kring_output_handle are part of the API: any change to them bumps
 * KRING_PRODUCER_API_VERSION (<kring/producer.h>). Its fields are the ring
 * core's; a producer reads at most @seq and @time and writes none.
 *
 * This header builds in the kernel and, for the ring core's host tests,
 * in user space after tests/host/kring_host_shim.h; it includes nothing of
 * kring but the uapi header.
 */
#ifndef _KRING_OUTPUT_H
#define _KRING_OUTPUT_H

#include <linux/types.h>
#include <linux/kring.h>
#ifdef __KERNEL__
#include <linux/string.h>
#endif

struct kring_ring;

/**
 * struct kring_output_handle - one record being written
 * @rb:		the ring
 * @addr:	where the next byte goes
 * @page:	index of the data page holding @addr, where the data area is
 *		separate pages (a ring kring's tests build); not set where it
 *		is one piece, as a channel's mirrored area always is
 * @size:	bytes writable in one piece from @addr (to the end of its
 *		page; where the data area is one piece, to its end, or to the
 *		end of its second mapping where it is mapped twice)
 * @rem:	bytes of the reservation not written yet
 * @rec_pos:	ring position of the record's header
 * @rec_size:	size of the record (8-byte aligned, what its header says)
 * @wakeup:	kring's: not 0 while the channel's write lock is held from
 *		the begin to the end call (kring_channel_output_begin())
 * @seq:	the sequence number given to this record
 * @time:	the record's timestamp (the clock reading taken at begin)
 *
 * Lives on the writer's stack between a successful begin
 * (kring_channel_output_begin()) and its end; only the calls below and
 * the end call take it.
 */
struct kring_output_handle {
	struct kring_ring *rb;
	void *addr;
	unsigned long page;
	unsigned int size;
	unsigned int rem;
	unsigned long rec_pos;
	unsigned int rec_size;
	unsigned long wakeup;
	u64 seq;
	u64 time;
};

/*
 * Writing the reserved bytes, in order, exactly the record's size: the
 * header first (kring_output_header() writes one of @h->rec_size bytes, or
 * copy a struct kring_record_header of your own), then the body. Each
 * returns 0, or -E2BIG and writes nothing when its bytes are more than the
 * reservation has left (@h->rem).
 */
int kring_output_copy(struct kring_output_handle *h, const void *buf,
		      unsigned int len);
int kring_output_header(struct kring_output_handle *h, u32 type, u16 misc);

/**
 * kring_output_ptr() - write the rest of the record in place
 * @h:	handle from a successful begin
 *
 * Zero-copy writing, as ftrace's ring_buffer_event_data() and BPF's
 * bpf_ringbuf_reserve() give it: the address of the @h->rem bytes of the
 * reservation not written yet, in one piece. They count as written: the
 * caller stores all of them (the header first, if nothing was written yet)
 * before the end call, and writes nothing else through @h.
 *
 * A channel's data area is mapped twice in a row in the kernel, so a
 * channel's reservation is always one piece (from KRING_PRODUCER_API_VERSION
 * 2 on: kring.ko refuses a producer built for another version). Only rings
 * that kring's own tests build (over separate pages, or one area without
 * its second mapping) can give NULL: the bytes then go through
 * kring_output_copy(), and nothing counts as written.
 *
 * Inline: it reads and writes nothing but the handle, whose layout is API.
 *
 * Return: the address, or NULL.
 */
static inline void *kring_output_ptr(struct kring_output_handle *h)
{
	void *addr = h->addr;

	if (h->size < h->rem)
		return NULL;
	h->addr = (char *)addr + h->rem;
	h->size -= h->rem;
	h->rem = 0;
	return addr;
}

/*
 * kring_copy()'s pieces: the first and the last @n bytes of @len (at least
 * @n) in loads and stores of @w bytes each. @n and @w are constants: the
 * loop unrolls into 2 * @n / @w moves (a loop that stayed one would cost
 * more than the copy under emulation: every round ends a translated block).
 */
static __always_inline void kring_copy_ends(char *d, const char *s, unsigned int len,
					    const unsigned int n, const unsigned int w)
{
	unsigned int i;

#pragma GCC unroll 8
	for (i = 0; i < n; i += w) {
		memcpy(d + i, s + i, w);
		memcpy(d + len - n + i, s + len - n + i, w);
	}
}

/*
 * kring_copy() of @len bytes (1 to 8 words of @w bytes) in words of @w:
 * the first and the last 4, 2 or 1 of them.
 */
static __always_inline void kring_copy_words(char *d, const char *s, unsigned int len,
					     const unsigned int w)
{
	if (len > 4 * w)
		kring_copy_ends(d, s, len, 4 * w, w);
	else if (len > 2 * w)
		kring_copy_ends(d, s, len, 2 * w, w);
	else if (len)
		kring_copy_ends(d, s, len, w, w);
}

/**
 * kring_copy() - copy a record's bytes, the small aligned ones without a call
 * @dst:	where, e.g. in place in a reservation (kring_output_ptr())
 * @src:	from; does not overlap @dst
 * @len:	bytes
 *
 * Up to 64 bytes where @dst, @src and @len are all multiples of 8, as a
 * record's body after its header usually is, by loads and stores of 8
 * bytes; up to 32 where they are multiples of 4 (a SAMPLE's RAW data,
 * after its 4-byte size), of 4 bytes. From both ends, the two halves
 * overlapping in the middle: two to eight loads and stores, no call and
 * no loop. Otherwise memcpy(). Most records are small, and there a call
 * and a string instruction's start-up cost as much as the copy itself
 * (x86's memcpy() is `rep movsb` where the CPU has FSRM, and QEMU's TCG
 * emulates that a byte at a time); words that are not aligned would cost
 * a slow path in an emulator and on some cores. kring's one-call writes
 * copy with it; a producer writing in place may too.
 */
static __always_inline void kring_copy(void *dst, const void *src,
				       unsigned int len)
{
	unsigned long align = (unsigned long)dst | (unsigned long)src | len;
	const char *s = (const char *)src;
	char *d = (char *)dst;

	if (!(align & 7) && len <= 64)
		kring_copy_words(d, s, len, 8);
	else if (!(align & 3) && len <= 32)
		kring_copy_words(d, s, len, 4);
	else
		memcpy(d, s, len);
}

/*
 * SAMPLE records written through a handle (kmod/sample.c). The largest RAW
 * data (struct kring_sample_data.raw_size) a SAMPLE record carries,
 * whatever its sample_type: with the header, the seven fixed fields, SEQ
 * and RAW's size word the record is then KRING_RECORD_MAX_SIZE bytes.
 * Larger RAW data is refused ("Limits" in <kring/producer.h>), as perf caps
 * a sample's raw data where it is produced.
 */
#define KRING_SAMPLE_RAW_MAX	(KRING_RECORD_MAX_SIZE - 9U * 8U - 4U)

/**
 * struct kring_sample_data - the fields of a KRING_RECORD_SAMPLE
 * @id:		IDENTIFIER and ID
 * @ip:		IP
 * @pid:	TID (first word)
 * @tid:	TID (second word)
 * @time:	TIME
 * @cpu:	CPU
 * @period:	PERIOD
 * @raw:	RAW data, @raw_size bytes (may be NULL when @raw_size is 0)
 * @raw_size:	RAW data size
 * @chain:	CALLCHAIN entries, @chain_nr of them (may be NULL when
 *		@chain_nr is 0): context markers and addresses as perf's
 * @chain_nr:	CALLCHAIN entries, at most KRING_CALLCHAIN_MAX + 2
 *
 * The sequence number comes from the output handle.
 */
struct kring_sample_data {
	u64 id;
	u64 ip;
	u32 pid;
	u32 tid;
	u64 time;
	u32 cpu;
	u64 period;
	const void *raw;
	u32 raw_size;
	u32 chain_nr;
	const u64 *chain;
};

unsigned int kring_sample_size(u64 sample_type, u32 raw_size);
unsigned int kring_sample_data_size(u64 sample_type, const struct kring_sample_data *d);
int kring_output_sample(struct kring_output_handle *h, u64 sample_type,
			const struct kring_sample_data *d);

#endif /* _KRING_OUTPUT_H */
