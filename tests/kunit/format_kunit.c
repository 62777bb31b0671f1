// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kring_format": kring_format_validate(), the check a record
 * layout passes before a channel keeps it (kmod/format.c). A good
 * declaration passes; each way a declaration can be wrong is refused with
 * its errno, one mistake at a time. The SDK's KRING_FORMAT_FIELD() and
 * KRING_FORMAT_ARRAY() take a field from its struct (their type checks
 * are the build's: a table below that disagreed with its struct would not
 * compile), and every format of kring's own sources covers its struct.
 * The guest tests check the ioctl and the producer call on real channels
 * (Formats.*).
 */
#include <kunit/test.h>
#include <linux/kernel.h>
#include <linux/sort.h>
#include <linux/string.h>

#include "compat.h"
#include "channel.h"
#include "source.h"

/* The kernel's, as kring_format_validate() wants it (kmod/format.c). */
#define CHAR_SIGNED	is_signed_type(char)

static const struct kring_format_field good_fields[] = {
	{ "__u64", "seq", 0, 8, false },
	{ "s32", "delta", 8, 4, true },
	{ "char[4]", "tag", 12, 4, CHAR_SIGNED },
	{ "unsigned short", "port", 16, 2, false },
};

static struct kring_format good(struct kring_format_field *fields)
{
	memcpy(fields, good_fields, sizeof(good_fields));
	return (struct kring_format){
		.name = "my_event",
		.type = KRING_RECORD_KRING_BASE + 0x100,
		.size = 24,
		.fields = fields,
		.nr_fields = ARRAY_SIZE(good_fields),
		.print_fmt = "\"seq=%llu\", REC->seq",
	};
}

static void format_good_passes(struct kunit *test)
{
	struct kring_format_field fl[ARRAY_SIZE(good_fields)];
	struct kring_format f = good(fl);

	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
	f.type = KRING_RECORD_SAMPLE;
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
	f.print_fmt = NULL;
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
	/* The header of an AUX packet, bounded as a record's body. */
	f.type = KRING_RECORD_AUX;
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
	f.size = KRING_RECORD_MAX_SIZE - sizeof(struct kring_record_header);
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
	f.size = KRING_RECORD_MAX_SIZE - sizeof(struct kring_record_header) + 1;
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), -E2BIG);
	f.size = 24;
	f.type = KRING_RECORD_SAMPLE;
	/* Fields need not be in order, nor cover every byte. */
	swap(fl[0], fl[3]);
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
	f.size = KRING_SAMPLE_RAW_MAX;
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
}

struct bad_case {
	const char *what;
	int err;
	void (*spoil)(struct kring_format *f, struct kring_format_field *fl);
};

static void spoil_no_name(struct kring_format *f, struct kring_format_field *fl)
{
	f->name = NULL;
}

static void spoil_empty_name(struct kring_format *f, struct kring_format_field *fl)
{
	f->name = "";
}

static void spoil_digit_name(struct kring_format *f, struct kring_format_field *fl)
{
	f->name = "1x";
}

static void spoil_space_name(struct kring_format *f, struct kring_format_field *fl)
{
	f->name = "a b";
}

static void spoil_long_name(struct kring_format *f, struct kring_format_field *fl)
{
	f->name = "a123456789b123456789c123456789d123456789e123456789f123456789g123";
}

static void spoil_lost_type(struct kring_format *f, struct kring_format_field *fl)
{
	f->type = KRING_RECORD_LOST;
}

static void spoil_pad_type(struct kring_format *f, struct kring_format_field *fl)
{
	f->type = KRING_RECORD_PAD;
}

static void spoil_itrace_type(struct kring_format *f, struct kring_format_field *fl)
{
	f->type = KRING_RECORD_ITRACE_START;
}

static void spoil_zero_size(struct kring_format *f, struct kring_format_field *fl)
{
	f->size = 0;
}

static void spoil_big_sample(struct kring_format *f, struct kring_format_field *fl)
{
	f->type = KRING_RECORD_SAMPLE;
	f->size = KRING_SAMPLE_RAW_MAX + 1;
}

static void spoil_no_fields(struct kring_format *f, struct kring_format_field *fl)
{
	f->nr_fields = 0;
}

static void spoil_null_fields(struct kring_format *f, struct kring_format_field *fl)
{
	f->fields = NULL;
}

static void spoil_many_fields(struct kring_format *f, struct kring_format_field *fl)
{
	f->nr_fields = KRING_FORMAT_MAX_FIELDS + 1;
}

static void spoil_newline_fmt(struct kring_format *f, struct kring_format_field *fl)
{
	f->print_fmt = "\"a\"\n, REC->seq";
}

static void spoil_unknown_type(struct kring_format *f, struct kring_format_field *fl)
{
	fl[1].type = "float";
}

static void spoil_null_type(struct kring_format *f, struct kring_format_field *fl)
{
	fl[1].type = NULL;
}

static void spoil_bad_array(struct kring_format *f, struct kring_format_field *fl)
{
	fl[2].type = "char[x]";
}

static void spoil_zero_array(struct kring_format *f, struct kring_format_field *fl)
{
	fl[2].type = "char[0]";
	fl[2].size = 0;
}

static void spoil_wrong_size(struct kring_format *f, struct kring_format_field *fl)
{
	fl[1].size = 8;
}

static void spoil_wrong_array_size(struct kring_format *f, struct kring_format_field *fl)
{
	fl[2].type = "char[5]";
}

static void spoil_wrong_sign(struct kring_format *f, struct kring_format_field *fl)
{
	fl[0].is_signed = true;
}

static void spoil_outside(struct kring_format *f, struct kring_format_field *fl)
{
	fl[3].offset = 23;
}

static void spoil_far_outside(struct kring_format *f, struct kring_format_field *fl)
{
	fl[3].offset = U16_MAX;
}

static void spoil_overlap(struct kring_format *f, struct kring_format_field *fl)
{
	fl[1].offset = 4;
}

static void spoil_overlap_unsorted(struct kring_format *f, struct kring_format_field *fl)
{
	swap(fl[0], fl[3]);
	fl[0].offset = 6;	/* the u16 port inside seq */
}

static void spoil_dup_name(struct kring_format *f, struct kring_format_field *fl)
{
	fl[3].name = "seq";
}

static void spoil_bad_field_name(struct kring_format *f, struct kring_format_field *fl)
{
	fl[3].name = "po-rt";
}

static void spoil_common_name(struct kring_format *f, struct kring_format_field *fl)
{
	fl[3].name = "common_pid";
}

static const struct bad_case bad_cases[] = {
	{ "no name", -EINVAL, spoil_no_name },
	{ "empty name", -EINVAL, spoil_empty_name },
	{ "name starting with a digit", -EINVAL, spoil_digit_name },
	{ "name with a space", -EINVAL, spoil_space_name },
	{ "name of 64 characters", -EINVAL, spoil_long_name },
	{ "LOST, a type of kring's", -EINVAL, spoil_lost_type },
	{ "PAD", -EINVAL, spoil_pad_type },
	{ "ITRACE_START, a type of kring's", -EINVAL, spoil_itrace_type },
	{ "size 0", -E2BIG, spoil_zero_size },
	{ "a SAMPLE above KRING_SAMPLE_RAW_MAX", -E2BIG, spoil_big_sample },
	{ "no fields", -EINVAL, spoil_no_fields },
	{ "fields NULL", -EINVAL, spoil_null_fields },
	{ "too many fields", -E2BIG, spoil_many_fields },
	{ "a newline in print fmt", -EINVAL, spoil_newline_fmt },
	{ "unknown type", -EINVAL, spoil_unknown_type },
	{ "type NULL", -EINVAL, spoil_null_type },
	{ "array count not a number", -EINVAL, spoil_bad_array },
	{ "array of 0", -EINVAL, spoil_zero_array },
	{ "size not the type's", -EINVAL, spoil_wrong_size },
	{ "size not the array's", -EINVAL, spoil_wrong_array_size },
	{ "signedness not the type's", -EINVAL, spoil_wrong_sign },
	{ "a field past the end", -EINVAL, spoil_outside },
	{ "a field far past the end", -EINVAL, spoil_far_outside },
	{ "overlapping fields", -EINVAL, spoil_overlap },
	{ "overlapping fields out of order", -EINVAL, spoil_overlap_unsorted },
	{ "a duplicate field name", -EINVAL, spoil_dup_name },
	{ "a field name with a dash", -EINVAL, spoil_bad_field_name },
	{ "a common_ field", -EINVAL, spoil_common_name },
};

static void bad_case_desc(const struct bad_case *c, char *desc)
{
	strscpy(desc, c->what, KUNIT_PARAM_DESC_SIZE);
}

KUNIT_ARRAY_PARAM(bad, bad_cases, bad_case_desc);

static void format_bad_is_refused(struct kunit *test)
{
	const struct bad_case *c = test->param_value;
	struct kring_format_field fl[ARRAY_SIZE(good_fields)];
	struct kring_format f = good(fl);

	c->spoil(&f, fl);
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), c->err);
}

/* good_fields' layout, as a struct: what the macros describe. */
struct format_test_body {
	__u64 seq;
	s32 delta;
	char tag[4];
	unsigned short port;
	bool flag;
	u8 pad;
	pid_t pid;
};

/* At file scope: the macros give constant initializers. */
static const struct kring_format_field macro_fields[] = {
	KRING_FORMAT_FIELD(struct format_test_body, seq, __u64),
	KRING_FORMAT_FIELD(struct format_test_body, delta, s32),
	KRING_FORMAT_ARRAY(struct format_test_body, tag, char, 4),
	KRING_FORMAT_FIELD(struct format_test_body, port, unsigned short),
	KRING_FORMAT_FIELD(struct format_test_body, flag, bool),
	KRING_FORMAT_FIELD(struct format_test_body, pad, u8),
	KRING_FORMAT_FIELD(struct format_test_body, pid, pid_t),
};

/* The fields the macros wrote are the struct's, and they validate. */
static void format_macros_take_the_struct(struct kunit *test)
{
	const struct kring_format_field *fl = macro_fields;
	struct kring_format f = {
		.name = "my_event",
		.type = KRING_RECORD_SAMPLE,
		.size = sizeof(struct format_test_body),
		.fields = macro_fields,
		.nr_fields = ARRAY_SIZE(macro_fields),
	};
	unsigned int i;

	/* good_fields, written by hand, say the same of the first four. */
	for (i = 0; i < ARRAY_SIZE(good_fields); i++) {
		KUNIT_EXPECT_STREQ(test, fl[i].type, good_fields[i].type);
		KUNIT_EXPECT_STREQ(test, fl[i].name, good_fields[i].name);
		KUNIT_EXPECT_EQ(test, fl[i].offset, good_fields[i].offset);
		KUNIT_EXPECT_EQ(test, fl[i].size, good_fields[i].size);
		KUNIT_EXPECT_EQ(test, fl[i].is_signed, good_fields[i].is_signed);
	}
	KUNIT_EXPECT_STREQ(test, fl[3].type, "unsigned short");
	KUNIT_EXPECT_EQ(test, fl[4].offset, offsetof(struct format_test_body, flag));
	KUNIT_EXPECT_FALSE(test, fl[4].is_signed);
	KUNIT_EXPECT_EQ(test, fl[6].offset, offsetof(struct format_test_body, pid));
	KUNIT_EXPECT_EQ(test, fl[6].size, sizeof(pid_t));
	KUNIT_EXPECT_TRUE(test, fl[6].is_signed);
	KUNIT_EXPECT_EQ(test, kring_format_validate(&f), 0);
}

static int format_field_cmp(const void *a, const void *b)
{
	const struct kring_format_field *x = a, *y = b;

	return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/*
 * One format of a source: it validates, and its fields, in offset order,
 * cover [0, size) with no gap and no overlap. Its size is its struct's
 * (sizeof() in the source) and its fields are the struct's members
 * (KRING_FORMAT_FIELD()): a member missing from the table leaves a gap.
 */
static void format_check_covers(struct kunit *test, const char *source,
				const struct kring_format *f)
{
	struct kring_format_field *sorted;
	unsigned int i, end = 0;

	KUNIT_EXPECT_EQ_MSG(test, kring_format_validate(f), 0, "%s: %s", source, f->name);
	sorted = kunit_kmalloc_array(test, f->nr_fields, sizeof(*sorted), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, sorted);
	memcpy(sorted, f->fields, f->nr_fields * sizeof(*sorted));
	sort(sorted, f->nr_fields, sizeof(*sorted), format_field_cmp, NULL);
	for (i = 0; i < f->nr_fields; i++) {
		KUNIT_EXPECT_EQ_MSG(test, sorted[i].offset, end, "%s: %s: before %s",
				    source, f->name, sorted[i].name);
		end = sorted[i].offset + sorted[i].size;
	}
	KUNIT_EXPECT_EQ_MSG(test, end, f->size, "%s: %s: after the last field", source, f->name);
}

/* Every format of every built-in source covers its struct. */
static void format_sources_cover_their_structs(struct kunit *test)
{
	const struct kring_format * const *fmt;
	unsigned int i, n = 0;

	for (i = 0; i < KRING_SOURCE_MAX; i++) {
		const struct kring_source_ops *src = kring_sources[i];

		if (!src || !src->formats)
			continue;
		for (fmt = src->formats; *fmt; fmt++, n++)
			format_check_covers(test, src->name, *fmt);
	}
	/* sched, timer, synthetic, the AUX tracer's packets */
	KUNIT_EXPECT_EQ(test, n, 4);
}

static struct kunit_case format_cases[] = {
	KUNIT_CASE(format_good_passes),
	KUNIT_CASE_PARAM(format_bad_is_refused, bad_gen_params),
	KUNIT_CASE(format_macros_take_the_struct),
	KUNIT_CASE(format_sources_cover_their_structs),
	{}
};

static struct kunit_suite format_suite = {
	.name = "kring_format",
	.test_cases = format_cases,
};

kunit_test_suite(format_suite);
