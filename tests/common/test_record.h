/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The test record of the ring-core tests, written once for the KUnit suite
 * (tests/kunit/ring_kunit.c) and the host suites (tests/host/): type
 * KRING_TEST_RECORD_TYPE, the header, the record's __u64 sequence number,
 * then __u64 words kring_test_word(seq, j) for j = 1.. up to the record's
 * size; a record of 8 bytes is a bare header. Its time is
 * kring_test_time(seq).
 */
#ifndef _KRING_TEST_RECORD_H
#define _KRING_TEST_RECORD_H

#include <linux/types.h>
#include <linux/kring.h>

#define KRING_TEST_RECORD_TYPE	(KRING_RECORD_KRING_BASE + 0x100)

static inline __u64 kring_test_word(__u64 seq, __u64 j)
{
	return seq * 0x9E3779B97F4A7C15ULL + j * 0x100000001B3ULL + 1;
}

static inline __u64 kring_test_time(__u64 seq)
{
	return seq * 10 + 5;
}

#endif /* _KRING_TEST_RECORD_H */
