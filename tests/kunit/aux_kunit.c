// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kring_aux": the AUX area's position arithmetic - room for
 * the producer, page extents, snapshot windows and mapping requests - at
 * every offset of small areas, and which extents are announced with which
 * flags.
 */
#include <kunit/test.h>
#include <linux/module.h>
#include <linux/sched.h>
#include <linux/sizes.h>

#include "compat.h"
#include "aux.h"

/*
 * Room left for the producer: exactly size - (head - tail), never more, and
 * nothing when the tail is not within size bytes behind the head. The
 * arithmetic knows no pages: a 16 KiB area whatever PAGE_SIZE is (the walk
 * is quadratic in the size; with 64 KiB pages four of them took longer
 * than the RCU stall timeout under emulation).
 */
static void aux_space_every_offset(struct kunit *test)
{
	const u64 size = 4 * SZ_4K;
	u64 base, used;

	for (base = 0; base < 2 * size; base += 8) {
		for (used = 0; used <= size; used += 8)
			KUNIT_EXPECT_EQ(test, kring_aux_space(base + used, base, size),
					size - used);
		/* Tail ahead of the head, or too far behind: garbage. */
		KUNIT_EXPECT_EQ(test, kring_aux_space(base, base + 8, size), 0ULL);
		KUNIT_EXPECT_EQ(test, kring_aux_space(base + size + 8, base, size), 0ULL);
		cond_resched();
	}
	/* Free-running positions wrap around u64 too. */
	KUNIT_EXPECT_EQ(test, kring_aux_space(16, (u64)-16, size), size - 32);
}

/* Extents split at page boundaries and never exceed the length asked. */
static void aux_contig_every_offset(struct kunit *test)
{
	u64 pos, len, total, n, p;

	for (pos = 0; pos < 2 * PAGE_SIZE; pos += 8) {
		for (len = 8; len <= 3 * PAGE_SIZE; len += PAGE_SIZE / 2 + 8) {
			total = 0;
			p = pos;
			while (total < len) {
				n = kring_aux_contig(p, len - total, PAGE_SIZE);
				KUNIT_ASSERT_GT(test, n, 0ULL);
				/* Never crosses a page. */
				KUNIT_EXPECT_EQ(test, p / PAGE_SIZE, (p + n - 1) / PAGE_SIZE);
				p += n;
				total += n;
			}
			KUNIT_EXPECT_EQ(test, total, len);
		}
	}
}

/* The snapshot is the newest size bytes, or everything before a wrap. */
static void aux_snapshot_window(struct kunit *test)
{
	const u64 size = 2 * PAGE_SIZE;
	u64 head, start;
	bool wrapped;

	for (head = 0; head <= 3 * size; head += 8) {
		wrapped = kring_aux_snapshot_window(head, size, &start);
		KUNIT_EXPECT_EQ(test, wrapped, head > size);
		KUNIT_EXPECT_EQ(test, start, head >= size ? head - size : 0);
		KUNIT_EXPECT_LE(test, head - start, size);
	}
}

/*
 * Flags: data is always announced; an empty extent only with a flag; a run
 * of empty TRUNCATED extents once; a TRUNCATED extent after data again.
 */
static void aux_announce_flags(struct kunit *test)
{
	static const u64 flags[] = {
		0, KRING_AUX_FLAG_TRUNCATED, KRING_AUX_FLAG_OVERWRITE, KRING_AUX_FLAG_PARTIAL,
		KRING_AUX_FLAG_COLLISION, KRING_AUX_FLAG_TRUNCATED | KRING_AUX_FLAG_PARTIAL,
	};
	bool truncated = false;
	unsigned int i, j, records = 0;

	for (i = 0; i < ARRAY_SIZE(flags); i++) {
		for (j = 0; j < 2; j++) {
			bool trunc = flags[i] & KRING_AUX_FLAG_TRUNCATED;

			KUNIT_EXPECT_TRUE(test, kring_aux_announce(4096, flags[i], j));
			KUNIT_EXPECT_EQ(test, kring_aux_announce(0, flags[i], j),
					flags[i] && !(j && trunc));
		}
	}
	/* A producer that finds no room 100 times, writes, then none again. */
	for (i = 0; i < 203; i++) {
		u64 size = i == 100 ? 512 : 0;
		u64 f = size ? 0 : KRING_AUX_FLAG_TRUNCATED;

		if (kring_aux_announce(size, f, truncated)) {
			records++;
			truncated = f & KRING_AUX_FLAG_TRUNCATED;
		}
	}
	KUNIT_EXPECT_EQ(test, records, 3U);
}

static void aux_check_request(struct kunit *test)
{
	const unsigned long ps = PAGE_SIZE, data = 5 * PAGE_SIZE;
	const unsigned long big = ps << (KRING_AUX_MAX_ORDER + 1);

	KUNIT_EXPECT_EQ(test, kring_aux_check_request(8 * ps, 4 * ps, 8, 4 * ps, data), 0);
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(5 * ps, ps, 5, ps, data), 0);
	/* Overlapping the data ring. */
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(4 * ps, 4 * ps, 4, 4 * ps, data), -EINVAL);
	/* Not a power of two, empty, too large. */
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(8 * ps, 3 * ps, 8, 3 * ps, data), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(8 * ps, 0, 8, 0, data), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(8 * ps, big, 8, big, data), -EINVAL);
	/* Not page aligned, or not what the mapping asks for. */
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(8 * ps + 8, 4 * ps, 8, 4 * ps, data),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(8 * ps, 4 * ps, 9, 4 * ps, data), -EINVAL);
	KUNIT_EXPECT_EQ(test, kring_aux_check_request(8 * ps, 4 * ps, 8, 2 * ps, data), -EINVAL);
}

static struct kunit_case aux_cases[] = {
	KUNIT_CASE(aux_space_every_offset),
	KUNIT_CASE(aux_contig_every_offset),
	KUNIT_CASE(aux_snapshot_window),
	KUNIT_CASE(aux_check_request),
	KUNIT_CASE(aux_announce_flags),
	{}
};

static struct kunit_suite aux_suite = {
	.name = "kring_aux",
	.test_cases = aux_cases,
};

kunit_test_suite(aux_suite);
