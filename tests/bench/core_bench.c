// SPDX-License-Identifier: GPL-2.0
/*
 * Instructions per record of the ring core (kmod/ring.c built for the
 * host, without the tests' interrupt hooks), against a bare single-producer
 * ring as the floor. Run under callgrind, which counts the instructions of
 * bench_run() alone (tools/dev/core-bench.sh; docs/PERFORMANCE.md):
 *
 *	valgrind --tool=callgrind --collect-atstart=no \
 *		--toggle-collect=bench_run kring_core_bench VARIANT SIZE COUNT
 *
 * VARIANT: floor, forward, overwrite, full, copy, onecall or stamped; SIZE: payload bytes
 * after the 8-byte record header (8, 32, 64, 256); COUNT: records. Each
 * record: one clock read (a counter, the same for every variant, so that
 * the clock's own cost is left out), a reservation, the header and a
 * kring_copy() of the payload whose first word is the timestamp (the
 * copies kring's one-call write makes), in place
 * (kring_output_ptr(), as the floor writes and as kring.ko's benchmark
 * module does), the commit. "copy" is forward mode with the record
 * written through kring_output_copy() instead; "onecall" forward mode
 * with the record written by kring_output_write() (header and body in one
 * call); "stamped" forward mode with the record written by
 * kring_output_write_stamped() (the SAMPLE writer's: the ring's time stored
 * into the payload's first word, the sequence number after it, in one
 * call). The data area is mapped
 * twice in a row, as kring.ko maps a channel's. Forward mode has a consumer in
 * the same thread: every 64 records the tail moves to the head (in the
 * floor too), so no record is lost. "full" is forward mode with a
 * consumer that never reads: after the first lap every record is lost
 * (the loss path: each lost record counted, its sequence number and time
 * kept for the LOST record). Prints the records written and lost; exits
 * non-zero if the ring warned, or lost a record in another variant than
 * full (or none in full).
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ring.h"

#define BENCH_PAGES	16
#define BENCH_TYPE	(KRING_RECORD_KRING_BASE + 0x200)

static u64 bench_now;

static u64 bench_clock(void)
{
	return ++bench_now;
}

struct bench_rec {
	struct kring_record_header hdr;
	u64 time;
	u8 rest[256];
};

/*
 * A record of @size bytes (header included) at @dst, as kring's one-call
 * write stores one: its header, then kring_copy() of the payload.
 */
static __always_inline void bench_copy_record(void *dst, const struct bench_rec *rec,
					      unsigned int size)
{
	memcpy(dst, &rec->hdr, sizeof(rec->hdr));
	kring_copy((char *)dst + sizeof(rec->hdr), &rec->time, size - sizeof(rec->hdr));
}

/*
 * The floor: one producer, one consumer, one contiguous data area, no
 * nesting, no loss accounting, no counters: check the space, copy, publish
 * the head with a release store.
 */
struct floor_ring {
	u64 head;	/* the producer's */
	u64 data_head;	/* published */
	u64 data_tail;	/* the consumer's */
	u64 mask;
	char *data;
};

static noinline int floor_write(struct floor_ring *f,
						 struct bench_rec *rec,
						 unsigned int size)
{
	u64 tail = __atomic_load_n(&f->data_tail, __ATOMIC_ACQUIRE);
	u64 head = f->head;

	if (f->mask + 1 - (head - tail) < size)
		return -ENOSPC;
	rec->time = bench_clock();
	/* The data area is twice the ring: a record never needs splitting. */
	bench_copy_record(f->data + (head & f->mask), rec, size);
	f->head = head + size;
	__atomic_store_n(&f->data_head, head + size, __ATOMIC_RELEASE);
	return 0;
}

/* @copy: through kring_output_copy(), else in place (a constant in each). */
static __always_inline int kring_write_as(struct kring_ring *rb,
					  struct bench_rec *rec, unsigned int size,
					  bool copy)
{
	struct kring_output_handle h;
	int err = kring_output_begin(&h, rb, size, 0);
	void *p;

	if (err)
		return err;
	rec->time = h.time;
	p = copy ? NULL : kring_output_ptr(&h);
	if (p)
		bench_copy_record(p, rec, size);
	else
		kring_output_copy(&h, rec, size);
	kring_output_end(&h);
	return 0;
}

static noinline int kring_write(struct kring_ring *rb, struct bench_rec *rec,
				unsigned int size)
{
	return kring_write_as(rb, rec, size, false);
}

static noinline int kring_write_copy(struct kring_ring *rb, struct bench_rec *rec,
				     unsigned int size)
{
	return kring_write_as(rb, rec, size, true);
}

/*
 * The one-call write: the header by kring_output_write(), the rest copied.
 * Its record carries no ring time, so the caller reads the clock for the
 * body's time word, once, as in the other variants.
 */
static noinline int kring_write_one_call(struct kring_ring *rb, struct bench_rec *rec,
					 unsigned int size)
{
	rec->time = bench_clock();
	return kring_output_write(rb, BENCH_TYPE, 0, &rec->time,
				  size - sizeof(struct kring_record_header), 0);
}

/*
 * The stamped write: the ring stores its time into the first payload word
 * and the sequence number into the record's last 8 bytes; the rest of the
 * payload is the tail.
 */
static noinline int kring_write_stamped(struct kring_ring *rb, struct bench_rec *rec,
					unsigned int size)
{
	return kring_output_write_stamped(rb, BENCH_TYPE, 0, &rec->time, sizeof(rec->time),
					  rec->rest, size - sizeof(rec->hdr) - 2 * sizeof(u64),
					  0, NULL);
}

struct bench {
	int variant;		/* 0 floor, 1 forward, 2 overwrite, 3 full, 4 copy, 5 onecall, 6 stamped */
	unsigned int size;
	unsigned long count;
	struct floor_ring floor;
	struct kring_ring rb;
	struct kring_ctl_page *ctl;
	unsigned long written, lost;
};

/*
 * One variant's loop (@variant a constant in each copy): the loop's own
 * instructions are the same for every variant, the floor's included, so
 * the difference between two variants is the difference between their
 * writes.
 */
static __always_inline void bench_loop(struct bench *b, const int variant)
{
	struct bench_rec rec = {
		.hdr = { .type = BENCH_TYPE, .size = b->size },
	};
	unsigned long i, written = 0;
	u64 *tail = variant ? (u64 *)&b->ctl->data_tail : &b->floor.data_tail;
	const u64 *head = variant ? (const u64 *)&b->ctl->data_head : &b->floor.data_head;

	for (i = 0; i < b->count; i++) {
		int err;

		if (variant == 0)
			err = floor_write(&b->floor, &rec, b->size);
		else if (variant == 4)
			err = kring_write_copy(&b->rb, &rec, b->size);
		else if (variant == 5)
			err = kring_write_one_call(&b->rb, &rec, b->size);
		else if (variant == 6)
			err = kring_write_stamped(&b->rb, &rec, b->size);
		else
			err = kring_write(&b->rb, &rec, b->size);
		/* The consumer: forward variants, every 64 records */
		if (variant != 2 && variant != 3 && !(i & 63))
			__atomic_store_n(tail, *head, __ATOMIC_RELEASE);
		written += !err;
	}
	b->written = written;
	b->lost = b->count - written;
}

/* Callgrind counts this function's instructions (--toggle-collect). */
noinline void bench_run(struct bench *b);
noinline void bench_run(struct bench *b)
{
	switch (b->variant) {
	case 0:
		bench_loop(b, 0);
		break;
	case 1:
		bench_loop(b, 1);
		break;
	case 2:
		bench_loop(b, 2);
		break;
	case 3:
		bench_loop(b, 3);
		break;
	case 4:
		bench_loop(b, 4);
		break;
	case 5:
		bench_loop(b, 5);
		break;
	default:
		bench_loop(b, 6);
		break;
	}
}

/* @len bytes mapped twice in a row, as kring.ko maps a data area (vmap()). */
static void *mirror_alloc(size_t len)
{
	int fd = memfd_create("kring_core_bench", 0);
	char *p;

	if (fd < 0 || ftruncate(fd, len)) {
		perror("kring_core_bench: memfd");
		exit(1);
	}
	p = mmap(NULL, 2 * len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED ||
	    mmap(p, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
		 fd, 0) == MAP_FAILED ||
	    mmap(p + len, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED | MAP_POPULATE,
		 fd, 0) == MAP_FAILED) {
		perror("kring_core_bench: mmap");
		exit(1);
	}
	close(fd);
	return p;
}

static void *page_alloc(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);

	if (p == MAP_FAILED) {
		perror("kring_core_bench: mmap");
		exit(1);
	}
	return p;
}

int main(int argc, char **argv)
{
	static void *pages[BENCH_PAGES];
	struct bench b = { 0 };
	unsigned int payload;
	int i;

	if (argc != 4) {
		fprintf(stderr,
			"usage: kring_core_bench floor|forward|overwrite|full|copy|onecall|stamped SIZE COUNT\n");
		return 2;
	}
	if (!strcmp(argv[1], "floor"))
		b.variant = 0;
	else if (!strcmp(argv[1], "forward"))
		b.variant = 1;
	else if (!strcmp(argv[1], "overwrite"))
		b.variant = 2;
	else if (!strcmp(argv[1], "full"))
		b.variant = 3;
	else if (!strcmp(argv[1], "copy"))
		b.variant = 4;
	else if (!strcmp(argv[1], "onecall"))
		b.variant = 5;
	else if (!strcmp(argv[1], "stamped"))
		b.variant = 6;
	else {
		fprintf(stderr, "kring_core_bench: unknown variant %s\n", argv[1]);
		return 2;
	}
	payload = strtoul(argv[2], NULL, 0);
	b.count = strtoul(argv[3], NULL, 0);
	if (payload < 8 || payload > 256 || payload % 8 || !b.count) {
		fprintf(stderr, "kring_core_bench: SIZE is 8..256, a multiple of 8; COUNT > 0\n");
		return 2;
	}
	if (b.variant == 6 && payload < 16) {
		fprintf(stderr, "kring_core_bench: stamped needs SIZE 16 or more (time, sequence)\n");
		return 2;
	}
	b.size = sizeof(struct kring_record_header) + payload;

	/* One contiguous data area mapped twice, as kring.ko maps it. */
	b.ctl = page_alloc(PAGE_SIZE);
	pages[0] = mirror_alloc(BENCH_PAGES * PAGE_SIZE);
	for (i = 1; i < BENCH_PAGES; i++)
		pages[i] = (char *)pages[0] + i * PAGE_SIZE;
	if (kring_ring_init(&b.rb, b.ctl, pages, BENCH_PAGES,
			    KRING_RING_MIRRORED | (b.variant == 2 ? KRING_RING_OVERWRITE : 0), 1)) {
		fprintf(stderr, "kring_core_bench: kring_ring_init failed\n");
		return 1;
	}
	b.rb.clock = bench_clock;
	b.floor.mask = BENCH_PAGES * PAGE_SIZE - 1;
	b.floor.data = page_alloc(2 * BENCH_PAGES * PAGE_SIZE);

	bench_run(&b);

	printf("variant=%s size=%u written=%lu lost=%lu warnings=%lu\n", argv[1],
	       payload, b.written, b.lost, kring_host_warnings);
	if (kring_host_warnings || (b.variant == 3) != (b.lost > 0))
		return 1;
	return 0;
}
