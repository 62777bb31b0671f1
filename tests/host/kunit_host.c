// SPDX-License-Identifier: GPL-2.0
/* The resources of kunit_host.h: what a case allocated, freed afterwards. */
#include <stdlib.h>
#include <sys/mman.h>

#include "kunit_host.h"

struct kunit_host_res {
	struct kunit_host_res *next;
	void (*fn)(void *arg);
	void *arg;
};

__thread struct kunit *kunit_host_current;

void kunit_host_defer(struct kunit *test, void (*fn)(void *), void *arg)
{
	struct kunit_host_res *r = malloc(sizeof(*r));

	if (!r)
		abort();
	r->fn = fn;
	r->arg = arg;
	r->next = test->res;
	test->res = r;
}

void *kunit_host_alloc(struct kunit *test, size_t size)
{
	void *p = calloc(1, size);

	if (p)
		kunit_host_defer(test, free, p);
	return p;
}

/* Newest first, as KUnit releases its resources. */
void kunit_host_release(struct kunit *test)
{
	struct kunit_host_res *r;

	while ((r = test->res)) {
		test->res = r->next;
		r->fn(r->arg);
		free(r);
	}
}

static void unmap_guarded(void *page)
{
	munmap((char *)page - PAGE_SIZE, 3 * PAGE_SIZE);
}

void *kunit_host_guarded_page(struct kunit *test)
{
	char *map = mmap(NULL, 3 * PAGE_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (map == MAP_FAILED)
		return NULL;
	if (mprotect(map + PAGE_SIZE, PAGE_SIZE, PROT_READ | PROT_WRITE)) {
		munmap(map, 3 * PAGE_SIZE);
		return NULL;
	}
	kunit_host_defer(test, unmap_guarded, map + PAGE_SIZE);
	return map + PAGE_SIZE;
}
