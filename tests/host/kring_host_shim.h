/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The few kernel primitives kmod/ring.c uses, for building that same file
 * in user space (docs/ARCHITECTURE.md, "The ring core runs on the host too").
 * Included by kmod/ring.h when __KERNEL__ is not defined; nothing else of
 * the kernel is emulated.
 *
 * Memory-model mapping:
 *   READ_ONCE/WRITE_ONCE  volatile accesses, as the kernel's (relaxed);
 *                         under ThreadSanitizer (KRING_HOST_TSAN) they are
 *                         acquire loads and release stores instead, because
 *                         TSan does not model the stand-alone fences below:
 *                         an acquire load of data_tail stands for READ_ONCE +
 *                         control dependency (A), a release store of
 *                         data_head for smp_wmb() + WRITE_ONCE (B). TSan thus
 *                         checks the protocol's happens-before edges, not
 *                         whether ring.c placed its fences right.
 *   smp_wmb/smp_rmb/smp_mb  C11 release/acquire/seq_cst fences.
 *   local_t, local64_t    one CPU's counters, changed by that CPU only; the
 *                         host build has a single producer thread, so
 *                         relaxed atomics (which also keep TSan quiet when a
 *                         test inspects them after joining) suffice.
 *
 * kring_irq_point(rb) calls kring_host_irq_hook when a test installed one:
 * the test runs a nested writer there, as an interrupt would. With
 * KRING_HOST_STOCK (the instruction-count benchmark) it is nothing,
 * as in the module.
 */
#ifndef _KRING_HOST_SHIM_H
#define _KRING_HOST_SHIM_H

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/types.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;

#define PAGE_SHIFT	12
#define PAGE_SIZE	(1UL << PAGE_SHIFT)

#define U16_MAX		((u16)~0U)

#define EXPORT_SYMBOL_GPL(sym)
#define EXPORT_SYMBOL_IF_KUNIT(sym)
#define likely(x)	__builtin_expect(!!(x), 1)
#define unlikely(x)	__builtin_expect(!!(x), 0)

#define barrier()	__asm__ __volatile__("" : : : "memory")
#ifndef noinline
#define noinline	__attribute__((__noinline__))
#endif
#ifndef __always_inline
#define __always_inline	inline __attribute__((__always_inline__))
#endif

#ifdef KRING_HOST_TSAN
#define READ_ONCE(x)		__atomic_load_n(&(x), __ATOMIC_ACQUIRE)
#define WRITE_ONCE(x, val)	__atomic_store_n(&(x), (val), __ATOMIC_RELEASE)
#define smp_wmb()		barrier()
#define smp_rmb()		barrier()
#define smp_mb()		barrier()
#else
#define READ_ONCE(x)		(*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, val)	(*(volatile __typeof__(x) *)&(x) = (val))
#define smp_wmb()		__atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_rmb()		__atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_mb()		__atomic_thread_fence(__ATOMIC_SEQ_CST)
#endif

#define min(a, b)	((a) < (b) ? (a) : (b))
#define max(a, b)	((a) > (b) ? (a) : (b))
#define min_t(t, a, b)	((t)(a) < (t)(b) ? (t)(a) : (t)(b))
#define round_up(x, y)	((((x) - 1) | ((__typeof__(x))((y) - 1))) + 1)
#define ilog2(n)	((unsigned int)(63 - __builtin_clzll((unsigned long long)(n))))
#define is_power_of_2(n)	((n) != 0 && (((n) & ((n) - 1)) == 0))

/* WARN_ON_ONCE: counts every warning so that tests can insist on none. */
extern unsigned long kring_host_warnings;
#define WARN_ON_ONCE(cond) ({						\
	bool __w = !!(cond);						\
	if (unlikely(__w))						\
		__atomic_add_fetch(&kring_host_warnings, 1, __ATOMIC_RELAXED); \
	__w;								\
})

#define lockdep_assert_preemption_disabled()	do { } while (0)

/* ktime_get_mono_fast_ns(): CLOCK_MONOTONIC, as the kernel's */
u64 ktime_get_mono_fast_ns(void);

/* The "CPU" a host writer runs on: a test switches it to play two CPUs. */
extern __thread int kring_host_cpu;
#define kring_ring_cpu()	kring_host_cpu

/* local_t / local64_t: relaxed atomics, see above. */
typedef struct {
	long counter;
} local_t;

typedef struct {
	s64 counter;
} local64_t;

#define __KRING_LOCAL_OPS(pfx, type, val)				\
static inline val pfx##_read(const type *l)				\
{									\
	return __atomic_load_n(&l->counter, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_set(type *l, val v)				\
{									\
	__atomic_store_n(&l->counter, v, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_add(val v, type *l)				\
{									\
	__atomic_fetch_add(&l->counter, v, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_sub(val v, type *l)				\
{									\
	__atomic_fetch_sub(&l->counter, v, __ATOMIC_RELAXED);		\
}									\
static inline void pfx##_inc(type *l)					\
{									\
	pfx##_add(1, l);						\
}									\
static inline val pfx##_add_return(val v, type *l)			\
{									\
	return __atomic_add_fetch(&l->counter, v, __ATOMIC_RELAXED);	\
}									\
static inline val pfx##_inc_return(type *l)				\
{									\
	return pfx##_add_return(1, l);					\
}									\
static inline val pfx##_xchg(type *l, val v)				\
{									\
	val old;							\
									\
	barrier();							\
	old = __atomic_exchange_n(&l->counter, v, __ATOMIC_RELAXED);	\
	barrier();							\
	return old;							\
}									\
static inline val pfx##_cmpxchg(type *l, val old, val new_)		\
{									\
	barrier();							\
	__atomic_compare_exchange_n(&l->counter, &old, new_, false,	\
				    __ATOMIC_RELAXED, __ATOMIC_RELAXED); \
	barrier();							\
	return old;							\
}

__KRING_LOCAL_OPS(local, local_t, long)
__KRING_LOCAL_OPS(local64, local64_t, s64)

#undef __KRING_LOCAL_OPS

/*
 * kring_irq_point(rb): a place in ring.c where an interrupt may arrive.
 * A test sets kring_host_irq_hook to run a nested writer there.
 */
struct kring_ring;
extern void (*kring_host_irq_hook)(struct kring_ring *rb);
#ifndef KRING_HOST_STOCK	/* the benchmark's core: as a stock kernel's */
#define kring_irq_point(rb) do {					\
	if (unlikely(kring_host_irq_hook))				\
		kring_host_irq_hook(rb);				\
} while (0)
#endif

#endif /* _KRING_HOST_SHIM_H */
