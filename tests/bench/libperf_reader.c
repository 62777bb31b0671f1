// SPDX-License-Identifier: GPL-2.0
/*
 * See libperf_reader.h. Built only when the benchmark is configured with
 * KRING_LIBPERF_DIR (tools/dev/core-bench.sh builds libperf from Debian's
 * linux-source-6.12 at benchmark time).
 */
#include <stdlib.h>
#include <string.h>

#include <internal/mmap.h>
#include <perf/core.h>
#include <perf/event.h>
#include <perf/mmap.h>

#include "libperf_reader.h"

struct kring_libperf_reader {
	struct perf_mmap map;
};

static int quiet(enum libperf_print_level level, const char *fmt, va_list ap)
{
	(void)level;
	(void)fmt;
	(void)ap;
	return 0;
}

struct kring_libperf_reader *kring_libperf_reader_new(void *base, uint64_t data_size)
{
	struct kring_libperf_reader *r = calloc(1, sizeof(*r));
	struct perf_event_mmap_page *pc = base;

	if (!r)
		return NULL;
	libperf_init(quiet);
	/* What perf_mmap__mmap() sets up, over a mapping made elsewhere. */
	perf_mmap__init(&r->map, NULL, false, NULL);
	r->map.base = base;
	r->map.mask = (int)(data_size - 1);
	r->map.fd = -1;
	r->map.flush = 1;
	/* Two references: perf_mmap__consume() never unmaps it. */
	refcount_set(&r->map.refcnt, 2);
	r->map.prev = pc->data_tail;
	return r;
}

void kring_libperf_reader_free(struct kring_libperf_reader *r)
{
	if (r)
		free(r->map.event_copy);
	free(r);
}

uint64_t kring_libperf_drain(struct kring_libperf_reader *r, uint64_t *sum, int batch)
{
	union perf_event *ev;
	uint64_t n = 0;

	if (perf_mmap__read_init(&r->map) < 0)
		return 0;
	while ((ev = perf_mmap__read_event(&r->map))) {
		uint64_t w;

		memcpy(&w, (const char *)ev + sizeof(ev->header), sizeof(w));
		*sum += w;
		n++;
		if (!batch)
			perf_mmap__consume(&r->map);
	}
	if (batch)
		perf_mmap__consume(&r->map);
	perf_mmap__read_done(&r->map);
	return n;
}
