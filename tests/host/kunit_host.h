/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The part of KUnit's API (<kunit/test.h>) that the shared ring cases
 * (tests/common/ring_cases.h) use, so that the host build of ring.c runs
 * the very cases KUnit runs in the kernel (tests/host/ring_cases_test.cpp
 * is the runner), and the few kernel helpers those cases call besides
 * ring.c's.
 *
 * A failed expectation reports through kunit_host_fail() (a GoogleTest
 * failure at the case's file and line) and the case goes on; a failed
 * assertion also ends the case, by longjmp() back to the runner's setjmp(),
 * as KUnit ends a case's thread. Only C frames lie between the two (the
 * case and the helpers it calls), and what the case allocated through
 * kunit_kzalloc() or kunit_host_defer() is freed by the runner afterwards.
 */
#ifndef _KRING_KUNIT_HOST_H
#define _KRING_KUNIT_HOST_H

#include <setjmp.h>
#include <stdio.h>

#include "kring_host_shim.h"

struct kunit_host_res;

struct kunit {
	const void *param_value;
	jmp_buf abort;
	struct kunit_host_res *res;	/* released by kunit_host_release() */
	uint64_t rand;			/* get_random_*()'s state */
};

/* One case of a suite, as KUnit's: a parameter generator, or NULL. */
struct kunit_case {
	void (*run_case)(struct kunit *test);
	const char *name;
	const void *(*generate_params)(const void *prev, char *desc);
};

#define KUNIT_CASE(fn)		{ .run_case = fn, .name = #fn }
#define KUNIT_CASE_PARAM(fn, gen)					\
	{ .run_case = fn, .name = #fn, .generate_params = gen }

#define KUNIT_PARAM_DESC_SIZE	128

#ifdef __cplusplus
extern "C" {
#endif
void kunit_host_fail(struct kunit *test, const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
void *kunit_host_alloc(struct kunit *test, size_t size);
void kunit_host_defer(struct kunit *test, void (*fn)(void *), void *arg);
void kunit_host_release(struct kunit *test);
/* One page between two PROT_NONE pages, unmapped when the case ends. */
void *kunit_host_guarded_page(struct kunit *test);
#ifdef __cplusplus
}
#endif

#define KUNIT_HOST_END(test, fatal) do {				\
	if (fatal)							\
		longjmp((test)->abort, 1);				\
} while (0)

/* @fmt: "" or ": " and a message of its own, with its arguments. */
#define KUNIT_HOST_BINARY(test, fatal, left, op, right, fmt, ...) do {	\
	__typeof__(left) __l = (left);					\
	__typeof__(right) __r = (right);				\
	if (!(__l op __r)) {						\
		kunit_host_fail(test, __FILE__, __LINE__,		\
				"expected %s %s %s, but %lld (0x%llx) vs %lld (0x%llx)" fmt, \
				#left, #op, #right,			\
				(long long)__l, (unsigned long long)__l, \
				(long long)__r, (unsigned long long)__r, \
				##__VA_ARGS__);				\
		KUNIT_HOST_END(test, fatal);				\
	}								\
} while (0)

#define KUNIT_HOST_BOOL(test, fatal, cond, want) do {			\
	if (!(cond) != !(want)) {					\
		kunit_host_fail(test, __FILE__, __LINE__, "expected %s to be %s", \
				#cond, (want) ? "true" : "false");	\
		KUNIT_HOST_END(test, fatal);				\
	}								\
} while (0)

#define KUNIT_EXPECT_EQ(t, l, r)	KUNIT_HOST_BINARY(t, 0, l, ==, r, "")
#define KUNIT_EXPECT_NE(t, l, r)	KUNIT_HOST_BINARY(t, 0, l, !=, r, "")
#define KUNIT_EXPECT_LE(t, l, r)	KUNIT_HOST_BINARY(t, 0, l, <=, r, "")
#define KUNIT_EXPECT_LT(t, l, r)	KUNIT_HOST_BINARY(t, 0, l, <, r, "")
#define KUNIT_EXPECT_GE(t, l, r)	KUNIT_HOST_BINARY(t, 0, l, >=, r, "")
#define KUNIT_EXPECT_GT(t, l, r)	KUNIT_HOST_BINARY(t, 0, l, >, r, "")
#define KUNIT_EXPECT_TRUE(t, c)		KUNIT_HOST_BOOL(t, 0, c, 1)
#define KUNIT_EXPECT_FALSE(t, c)	KUNIT_HOST_BOOL(t, 0, c, 0)
#define KUNIT_ASSERT_EQ(t, l, r)	KUNIT_HOST_BINARY(t, 1, l, ==, r, "")
#define KUNIT_ASSERT_NE(t, l, r)	KUNIT_HOST_BINARY(t, 1, l, !=, r, "")
#define KUNIT_ASSERT_LE(t, l, r)	KUNIT_HOST_BINARY(t, 1, l, <=, r, "")
#define KUNIT_ASSERT_LT(t, l, r)	KUNIT_HOST_BINARY(t, 1, l, <, r, "")
#define KUNIT_ASSERT_GE(t, l, r)	KUNIT_HOST_BINARY(t, 1, l, >=, r, "")
#define KUNIT_ASSERT_GT(t, l, r)	KUNIT_HOST_BINARY(t, 1, l, >, r, "")
#define KUNIT_ASSERT_TRUE(t, c)		KUNIT_HOST_BOOL(t, 1, c, 1)
#define KUNIT_ASSERT_FALSE(t, c)	KUNIT_HOST_BOOL(t, 1, c, 0)
#define KUNIT_ASSERT_NOT_NULL(t, p)	KUNIT_HOST_BOOL(t, 1, (p) != NULL, 1)
#define KUNIT_EXPECT_EQ_MSG(t, l, r, fmt, ...)	\
	KUNIT_HOST_BINARY(t, 0, l, ==, r, ": " fmt, ##__VA_ARGS__)
#define KUNIT_FAIL(t, fmt, ...)						\
	kunit_host_fail(t, __FILE__, __LINE__, fmt, ##__VA_ARGS__)

/* As KUnit's: a generator walking @array, @get_desc naming each element. */
#define KUNIT_ARRAY_PARAM(name, array, get_desc)			\
static const void *name##_gen_params(const void *prev, char *desc)	\
{									\
	__typeof__((array)[0]) *__next = prev ?				\
		((__typeof__(__next))prev) + 1 : (array);		\
	if (__next - (array) < (long)ARRAY_SIZE(array)) {		\
		void (*__get_desc)(__typeof__(__next), char *) = get_desc; \
		if (__get_desc)						\
			__get_desc(__next, desc);			\
		return __next;						\
	}								\
	return NULL;							\
}

#define GFP_KERNEL	0
#define kunit_kzalloc(test, size, gfp)	kunit_host_alloc(test, size)
#define kunit_kcalloc(test, n, size, gfp)	kunit_host_alloc(test, (n) * (size))

/* The kernel helpers the cases call. */
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define SZ_4K		0x1000
#define SZ_8K		0x2000
#define preempt_disable()	barrier()
#define preempt_enable()	barrier()
#define cond_resched()		do { } while (0)
#define smp_load_acquire(p)	__atomic_load_n(p, __ATOMIC_ACQUIRE)
#define smp_store_release(p, v)	__atomic_store_n(p, v, __ATOMIC_RELEASE)

/*
 * get_random_*(): a xorshift generator per case, seeded by the runner
 * (the same sequence in every run: a failure reproduces).
 */
extern __thread struct kunit *kunit_host_current;

static inline u64 get_random_u64(void)
{
	u64 x = kunit_host_current->rand;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	kunit_host_current->rand = x;
	return x;
}

static inline u32 get_random_u32(void)
{
	return (u32)(get_random_u64() >> 32);
}

#endif /* _KRING_KUNIT_HOST_H */
