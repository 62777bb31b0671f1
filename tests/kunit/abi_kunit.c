// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kring_abi": the answer of KRING_IOC_QUERY_ABI and its size
 * negotiation.
 */
#include <kunit/test.h>
#include <linux/module.h>

#include "compat.h"
#include "channel.h"

static void abi_info_describes_module(struct kunit *test)
{
	struct kring_abi_info info;

	memset(&info, 0xa5, sizeof(info));
	kring_abi_info_fill(&info);
	KUNIT_EXPECT_EQ(test, info.size, (__u32)sizeof(info));
	KUNIT_EXPECT_EQ(test, info.abi_major, KRING_ABI_MAJOR);
	KUNIT_EXPECT_EQ(test, info.abi_minor, KRING_ABI_MINOR);
	KUNIT_EXPECT_EQ(test, info.page_size, (__u32)PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, info.features & KRING_FEAT_ABI_QUERY);
	KUNIT_EXPECT_GT(test, info.max_data_pages_order, 0U);
	/* Reserved words are zero, not left over from the caller's memory. */
	KUNIT_EXPECT_EQ(test, info.reserved[0], 0ULL);
	KUNIT_EXPECT_EQ(test, info.reserved[3], 0ULL);
}

struct abi_size_case {
	__u32 user_size;
	int expected;
	const char *desc;
};

static const struct abi_size_case abi_size_cases[] = {
	{ 0, -EINVAL, "zero" },
	{ 4, -EINVAL, "size field only" },
	{ KRING_ABI_INFO_SIZE_VER0 - 1, -EINVAL, "one short of ver0" },
	{ KRING_ABI_INFO_SIZE_VER0, KRING_ABI_INFO_SIZE_VER0, "ver0" },
	{ sizeof(struct kring_abi_info), sizeof(struct kring_abi_info), "current" },
	{ 4096, sizeof(struct kring_abi_info), "newer caller" },
	{ U32_MAX, sizeof(struct kring_abi_info), "max" },
};

static void abi_size_case_desc(const struct abi_size_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s (%u)", c->desc, c->user_size);
}

KUNIT_ARRAY_PARAM(abi_size, abi_size_cases, abi_size_case_desc);

static void abi_info_copy_size(struct kunit *test)
{
	const struct abi_size_case *c = test->param_value;

	KUNIT_EXPECT_EQ(test, kring_abi_info_copy_size(c->user_size),
			c->expected);
}

static void abi_info_ver0_size_is_published_size(struct kunit *test)
{
	/* The first published layout must stay a prefix of the struct. */
	KUNIT_EXPECT_LE(test, (size_t)KRING_ABI_INFO_SIZE_VER0,
			sizeof(struct kring_abi_info));
	KUNIT_EXPECT_EQ(test, offsetof(struct kring_abi_info, max_data_pages_order),
			(size_t)20);
}

static void abi_sample_size_follows_uapi_rules(struct kunit *test)
{
	/* header + TIME + SEQ, whether the caller names SEQ or not */
	KUNIT_EXPECT_EQ(test, kring_sample_size(KRING_SAMPLE_TIME, 0), 24U);
	KUNIT_EXPECT_EQ(test, kring_sample_size(KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ, 0), 24U);
	/* RAW: a u32 size, then the data padded by KRING_RAW_PADDED() */
	KUNIT_EXPECT_EQ(test, kring_sample_size(KRING_SAMPLE_RAW, 5),
			8U + 4U + KRING_RAW_PADDED(5U) + 8U);
	KUNIT_EXPECT_EQ(test, kring_sample_size(KRING_SAMPLE_RAW, 5) % KRING_RECORD_ALIGN, 0U);
	/* The largest record fits the header's __u16 size. */
	KUNIT_EXPECT_LE(test, KRING_RECORD_MAX_SIZE, (unsigned int)U16_MAX);
	KUNIT_EXPECT_EQ(test, KRING_RECORD_MAX_SIZE % KRING_RECORD_ALIGN, 0U);
}

static struct kunit_case kring_abi_cases[] = {
	KUNIT_CASE(abi_info_describes_module),
	KUNIT_CASE_PARAM(abi_info_copy_size, abi_size_gen_params),
	KUNIT_CASE(abi_info_ver0_size_is_published_size),
	KUNIT_CASE(abi_sample_size_follows_uapi_rules),
	{}
};

static struct kunit_suite kring_abi_suite = {
	.name = "kring_abi",
	.test_cases = kring_abi_cases,
};

kunit_test_suite(kring_abi_suite);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("KUnit suites for kring");
KRING_IMPORT_KUNIT_NS();
