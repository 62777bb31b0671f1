/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmark's tracepoint: one event, fired by kring_bench.c's
 * tracepoint loop, with three possible sinks (ftrace, perf, a kring probe).
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM kring_bench

#if !defined(_KRING_BENCH_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _KRING_BENCH_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(kring_bench_hit,
	TP_PROTO(u64 seq, u64 val),
	TP_ARGS(seq, val),
	TP_STRUCT__entry(
		__field(u64, seq)
		__field(u64, val)
	),
	TP_fast_assign(
		__entry->seq = seq;
		__entry->val = val;
	),
	TP_printk("seq=%llu val=%llu", __entry->seq, __entry->val)
);

#endif /* _KRING_BENCH_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE kring_bench_trace
#include <trace/define_trace.h>
