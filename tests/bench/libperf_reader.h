/* SPDX-License-Identifier: GPL-2.0 */
/*
 * libperf's ring reader (perf_mmap__read_event(), tools/lib/perf of the
 * kernel source) over a ring laid out as perf maps it: the control page,
 * then the data area. For consume_bench.cpp, which cannot include the
 * kernel tools' headers itself (they replace the system's <linux/...>).
 */
#ifndef KRING_LIBPERF_READER_H
#define KRING_LIBPERF_READER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct kring_libperf_reader;

/* @base: the control page, the data area right after it (@data_size). */
struct kring_libperf_reader *kring_libperf_reader_new(void *base, uint64_t data_size);
void kring_libperf_reader_free(struct kring_libperf_reader *r);

/*
 * Read every record published since the last call, as libperf documents
 * it: perf_mmap__read_init(), then perf_mmap__read_event() and
 * perf_mmap__consume() (one data_tail store) per record, or with @batch
 * one perf_mmap__consume() after the last record; perf_mmap__read_done().
 * Adds each record's first body word to *@sum.
 * Return: records read.
 */
uint64_t kring_libperf_drain(struct kring_libperf_reader *r, uint64_t *sum, int batch);

#ifdef __cplusplus
}
#endif

#endif
