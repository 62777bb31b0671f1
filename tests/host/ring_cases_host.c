// SPDX-License-Identifier: GPL-2.0
/*
 * The shared ring cases (tests/common/ring_cases.h) on the host build of
 * ring.c: their pages, between guard pages, and their case array for the
 * runner (ring_cases_test.cpp), which registers them with GoogleTest.
 */
#include "kunit_host.h"
#include "ring.h"
#include "test_record.h"
#include "ring_cases.h"

static void *test_page_new(struct kunit *test)
{
	return kunit_host_guarded_page(test);
}

const struct kunit_case *const kring_ring_host_cases = kring_ring_cases;
