// SPDX-License-Identifier: GPL-2.0
/*
 * The shared ring cases (tests/common/ring_cases.h) on the host build of
 * ring.c: their rings, on guarded pages, and their case array for the
 * runner (ring_cases_test.cpp), which registers them with GoogleTest.
 */
#include "kunit_host.h"
#include "ring.h"
#include "test_record.h"
#include "ring_cases.h"

static struct test_ring *test_ring_new(struct kunit *test, unsigned int nr,
				       unsigned int flags)
{
	struct test_ring *tr = kunit_kzalloc(test, sizeof(*tr), GFP_KERNEL);
	unsigned int i;
	void *p;

	KUNIT_ASSERT_NOT_NULL(test, tr);
	tr->nr = nr;
	tr->pages = kunit_kzalloc(test, nr * sizeof(void *), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, tr->pages);
	for (i = 0; i <= nr; i++) {
		p = kunit_host_guarded_page(test);
		KUNIT_ASSERT_NOT_NULL(test, p);
		if (i < nr)
			tr->pages[i] = p;
		else
			tr->ctl = p;
	}
	KUNIT_ASSERT_EQ(test, 0, kring_ring_init(&tr->rb, tr->ctl, tr->pages, nr,
						 flags, 42));
	return tr;
}

const struct kunit_case *const kring_ring_host_cases = kring_ring_cases;
