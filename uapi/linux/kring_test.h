/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kring's test generators: the configuration and the payloads of the
 * synthetic source (KRING_SOURCE_SYNTHETIC) and of the emulated tracer
 * (KRING_SOURCE_AUX_TRACER), shared by the module (kmod/sources/), its
 * tests and the kring tool (kring synth, kring aux).
 *
 * Not part of kring's ABI: this header is not installed (make install and
 * cmake --install install <linux/kring.h> alone), and what it defines may
 * change in any version, with the module it comes with. The two sources'
 * ids and feature bits are ABI (<linux/kring.h>, block 4); what they write
 * is not.
 *
 * Compiles as C (C89 with the kernel's __u types) and as C++, as
 * <linux/kring.h> does.
 */
#ifndef _UAPI_LINUX_KRING_TEST_H
#define _UAPI_LINUX_KRING_TEST_H

#include <linux/types.h>

/*
 * Synthetic source (KRING_SOURCE_SYNTHETIC): one generator on
 * kring_attr.cpu (which must name an online CPU) writing SAMPLE records
 * whose RAW field holds a struct kring_synth_payload; its SAMPLE ip is
 * always 0.
 *   config[0]  records per second, 0 = as fast as possible
 *   config[1]  payload bytes per record (>= sizeof(struct kring_synth_payload))
 *   config[2]  KRING_SYNTH_F_* flags
 *   config[3]  stop after this many records, 0 = never: every writer's
 *              (the thread's and, with the flags, the timers'), so once
 *              the channel's produced count reaches it no writer begins
 *              another; the generator then reports its last losses
 */
/* hardirq writers (an hrtimer, an irq_work per record held open) nest in task ones */
#define KRING_SYNTH_F_NEST	(1ULL << 0)
/* a timer_list writer (softirq) too, every jiffy: three nesting levels */
#define KRING_SYNTH_F_SOFTIRQ	(1ULL << 1)

/*
 * Payload of the synthetic source's records (the RAW field of its SAMPLE
 * records): @seq is the record's sequence number, @len the payload size
 * including this header, and @checksum covers the @len - 24 bytes after it,
 * byte i of which is kring_synth_byte(seq, i); kring_synth_checksum()
 * computes the checksum (FNV-1a seeded with the sequence number), so a
 * consumer detects any torn or misplaced byte.
 */
struct kring_synth_payload {
	__u64 seq;
	__u32 cpu;
	__u32 len;
	__u64 checksum;
	/* __u8 data[len - 24]; */
};

static __inline__ __u8 kring_synth_byte(__u64 seq, __u32 i)
{
	return (__u8)((seq * 0x9e3779b97f4a7c15ULL + i) >> 56) ^ (__u8)i;
}

static __inline__ __u64 kring_synth_checksum(__u64 seq, const __u8 *data, __u32 n)
{
	__u64 h = 0xcbf29ce484222325ULL ^ seq;
	__u32 i;

	for (i = 0; i < n; i++) {
		h ^= data[i];
		h *= 0x100000001b3ULL;
	}
	return h;
}

/*
 * The emulated tracer (KRING_SOURCE_AUX_TRACER), a PT/ETM-like unit
 * writing packets straight into the AUX area (<linux/kring.h> block 7):
 * CPU mode (cpu = N, pid = -1) traces CPU N; task mode (pid = P, cpu = -1
 * or N, inherit allowed; needs KRING_FEAT_CAPTURE) runs only while a
 * followed task is on
 * a CPU, started and stopped at context switches (docs/AUX.md):
 *   config[0]  packets per millisecond (of run time in task mode; default
 *		64, at most 4096)
 *   config[1]  payload bytes per DATA packet, a multiple of 8 (default 32,
 *		at most 4096); config[0] packets of 32 + config[1] bytes
 *		come to at most 16384 bytes (the work of one tick)
 *   config[2]  a SYNC packet every this many packets (default 16)
 *   config[3]  stop after this many packets, 0 = never
 * Its data-ring records are AUX and ITRACE_START records.
 *
 * Packets are 8-byte aligned and back to back inside an extent. Each
 * starts with struct kring_aux_packet; @seq counts every packet the tracer
 * generated, written or not, so a gap in @seq is data lost. Every extent
 * (after each start, resume or snapshot restart) begins with a SYNC
 * packet, whose payload is the 8 bytes KRING_AUX_SYNC_MAGIC: a snapshot
 * reader that starts in the middle of a packet scans 8-byte words for the
 * magic to resynchronise. A DATA packet's payload byte i is
 * kring_synth_byte(seq, i).
 */
#define KRING_AUX_PKT_SYNC	1
#define KRING_AUX_PKT_DATA	2
#define KRING_AUX_SYNC_MAGIC	0x4253504e49524b21ULL	/* "!KRINPSB" */

struct kring_aux_packet {
	__u64	magic;		/* KRING_AUX_SYNC_MAGIC in SYNC packets, else 0 */
	__u16	type;		/* KRING_AUX_PKT_* */
	__u16	len;		/* bytes of the packet, this header included */
	__u32	cpu;
	__u64	seq;
	__u64	time;		/* record clock */
	/* DATA: __u8 payload[len - 32]; */
};

#endif /* _UAPI_LINUX_KRING_TEST_H */
