// SPDX-License-Identifier: GPL-2.0
/*
 * KUnit suite "kring_mmap": a channel of /dev/kring mapped into the test's
 * own address space with kunit_vm_mmap() (Linux 6.10 on), then read and
 * written through copy_{from,to}_user() as a consumer would: the mapping
 * rules, lazy faults of zeroed pages, read-only data pages, and a record a
 * producer writes showing up under data_head.
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/module.h>
#include <linux/uaccess.h>
#include <kring/producer.h>

#include "compat.h"
#include "channel.h"
#include "kunit_dev.h"

#ifdef KRING_HAVE_KUNIT_VM_MMAP

struct mmap_ctx {
	struct kunit_dev dev;
};

static int mmap_test_init(struct kunit *test)
{
	struct mmap_ctx *ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, ctx);
	test->priv = ctx;
	kunit_dev_open(test, &ctx->dev);
	return 0;
}

static void mmap_test_exit(struct kunit *test)
{
	struct mmap_ctx *ctx = test->priv;

	if (ctx)
		kunit_dev_close(&ctx->dev);
}

/* Pass @len bytes at @arg to the channel's ioctl @cmd through user memory. */
static long chan_ioctl(struct kunit *test, unsigned int cmd, void *arg, size_t len)
{
	struct mmap_ctx *ctx = test->priv;

	return kunit_dev_ioctl(&ctx->dev, cmd, arg, len);
}

static void configure(struct kunit *test, u64 flags, u64 sample_type)
{
	struct kring_attr attr = {
		.size = sizeof(attr),
		.source = KRING_SOURCE_NONE,
		.flags = flags,
		.sample_type = sample_type,
		.cpu = -1,
		.pid = -1,
	};

	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_CONFIGURE, &attr, sizeof(attr)), 0L);
}

static unsigned long map(struct kunit *test, unsigned long pages, unsigned long prot,
			 unsigned long flags, unsigned long pgoff)
{
	struct mmap_ctx *ctx = test->priv;

	return kunit_vm_mmap(test, ctx->dev.file, 0, pages * PAGE_SIZE, prot, flags,
			     pgoff * PAGE_SIZE);
}

static void mmap_rejects_bad_requests(struct kunit *test)
{
	unsigned long prot = PROT_READ | PROT_WRITE;

	/* Nothing to map before the channel is configured. */
	KUNIT_EXPECT_EQ(test, (long)map(test, 3, prot, MAP_SHARED, 0), -EINVAL);
	configure(test, 0, KRING_SAMPLE_TID);
	/* 1 + 3 pages: the data area must be a power-of-two number of pages. */
	KUNIT_EXPECT_EQ(test, (long)map(test, 4, prot, MAP_SHARED, 0), -EINVAL);
	/* The control page alone has no data area. */
	KUNIT_EXPECT_EQ(test, (long)map(test, 1, prot, MAP_SHARED, 0), -EINVAL);
	/* The data ring lives at offset 0; a private mapping would copy on write. */
	KUNIT_EXPECT_EQ(test, (long)map(test, 3, prot, MAP_SHARED, 1), -EINVAL);
	KUNIT_EXPECT_EQ(test, (long)map(test, 3, prot, MAP_PRIVATE, 0), -EINVAL);
	KUNIT_EXPECT_EQ(test, (long)map(test, 3, prot | PROT_EXEC, MAP_SHARED, 0), -EINVAL);
	/* A good mapping, then another of a different size of the same buffer. */
	KUNIT_EXPECT_FALSE(test, IS_ERR_VALUE(map(test, 3, prot, MAP_SHARED, 0)));
	KUNIT_EXPECT_EQ(test, (long)map(test, 5, prot, MAP_SHARED, 0), -EINVAL);
}

static void mmap_faults_in_zeroed_pages(struct kunit *test)
{
	struct kring_ctl_page *ctl;
	unsigned long addr;
	u8 *page;
	int i;

	configure(test, 0, KRING_SAMPLE_TID);
	addr = map(test, 1 + 4, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));

	ctl = kunit_kzalloc(test, sizeof(*ctl), GFP_KERNEL);
	page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctl);
	KUNIT_ASSERT_NOT_NULL(test, page);

	/* The first touch of the control page faults it in, filled. */
	KUNIT_ASSERT_EQ(test, copy_from_user(ctl, (void __user *)addr, sizeof(*ctl)), 0UL);
	KUNIT_EXPECT_EQ(test, ctl->version, (__u32)KRING_CTL_VERSION);
	KUNIT_EXPECT_EQ(test, ctl->size, (__u32)KRING_CTL_SIZE_VER2);
	KUNIT_EXPECT_EQ(test, ctl->data_offset, (__u64)PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, ctl->data_size, (__u64)(4 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, ctl->data_head, 0ULL);

	/* Every data page reads as zeroes before anything is written. */
	for (i = 1; i <= 4; i++) {
		memset(page, 0xa5, PAGE_SIZE);
		KUNIT_ASSERT_EQ(test, copy_from_user(page, (void __user *)(addr + i * PAGE_SIZE),
						     PAGE_SIZE), 0UL);
		KUNIT_EXPECT_PTR_EQ_MSG(test, memchr_inv(page, 0, PAGE_SIZE), NULL,
					"data page %d is not zeroed", i);
	}
}

static void mmap_data_pages_read_only(struct kunit *test)
{
	unsigned long addr;
	u64 tail = 64, v = 0;
	void __user *data;

	configure(test, 0, KRING_SAMPLE_TID);
	addr = map(test, 1 + 2, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	data = (void __user *)(addr + PAGE_SIZE);

	/* The consumer's data_tail is writable... */
	KUNIT_EXPECT_EQ(test, copy_to_user((void __user *)(addr +
			offsetof(struct kring_ctl_page, data_tail)), &tail, sizeof(tail)), 0UL);
	/* ...a data page is not, whether or not it was faulted in before. */
	KUNIT_EXPECT_NE(test, copy_to_user(data, &v, sizeof(v)), 0UL);
	KUNIT_EXPECT_EQ(test, copy_from_user(&v, data, sizeof(v)), 0UL);
	KUNIT_EXPECT_NE(test, copy_to_user(data, &v, sizeof(v)), 0UL);
	KUNIT_EXPECT_NE(test, copy_to_user(data + PAGE_SIZE, &v, sizeof(v)), 0UL);
	KUNIT_EXPECT_EQ(test, v, 0ULL);
}

static void mmap_shows_producer_records(struct kunit *test)
{
	const u64 type = KRING_SAMPLE_TID | KRING_SAMPLE_SEQ;
	struct kring_sample_data d = { .pid = 4242, .tid = 4343 };
	struct kring_record_header hdr;
	struct kring_channel *ch;
	unsigned long addr;
	u64 id = 0, head = 0, seq = ~0ULL;
	u32 pid_tid[2];
	int ret;

	configure(test, 0, type);
	addr = map(test, 1 + 1, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_ID, &id, sizeof(id)), 0L);
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_ENABLE, NULL, 0), 0L);

	/* A producer built for another layout of the handles gets no channel. */
	KUNIT_EXPECT_NULL(test, __kring_channel_get(id, KRING_PRODUCER_API_VERSION + 1));
	ch = kring_channel_get(id);
	KUNIT_ASSERT_NOT_NULL(test, ch);
	preempt_disable();
	ret = kring_channel_write_sample(ch, &d);
	preempt_enable();
	kring_channel_put(ch);
	KUNIT_ASSERT_EQ(test, ret, 0);

	KUNIT_ASSERT_EQ(test, copy_from_user(&head, (void __user *)(addr +
			offsetof(struct kring_ctl_page, data_head)), sizeof(head)), 0UL);
	KUNIT_EXPECT_EQ(test, head, (u64)kring_sample_size(type, 0));
	KUNIT_ASSERT_EQ(test, copy_from_user(&hdr, (void __user *)(addr + PAGE_SIZE),
					     sizeof(hdr)), 0UL);
	KUNIT_EXPECT_EQ(test, hdr.type, (__u32)KRING_RECORD_SAMPLE);
	KUNIT_EXPECT_EQ(test, (u64)hdr.size, head);
	KUNIT_ASSERT_EQ(test, copy_from_user(pid_tid, (void __user *)(addr + PAGE_SIZE + 8),
					     sizeof(pid_tid)), 0UL);
	KUNIT_EXPECT_EQ(test, pid_tid[0], 4242U);
	KUNIT_EXPECT_EQ(test, pid_tid[1], 4343U);
	KUNIT_ASSERT_EQ(test, copy_from_user(&seq, (void __user *)(addr + PAGE_SIZE + 16),
					     sizeof(seq)), 0UL);
	KUNIT_EXPECT_EQ(test, seq, 0ULL);
}

/* kring_channel_put() as a KUnit action: a failed assertion still puts. */
static void put_channel(void *ch)
{
	kring_channel_put(ch);
}

/*
 * A channel's data area is mapped twice in a row in the kernel: every
 * reservation is one piece, the one across the end of the area included,
 * and a producer writes it in place (kring_output_ptr()). User space,
 * whose mapping is not mirrored, reads it in two pieces there.
 */
static void mmap_producer_writes_in_place_across_the_wrap(struct kunit *test)
{
	const unsigned int size = 1000, words = (size - 8) / 8;
	void __user *data, *tail;
	struct kring_channel *ch;
	unsigned long addr;
	u64 id = 0, pos = 0, *rec, *back;
	unsigned int i, j, wrapped = 0;

	rec = kunit_kzalloc(test, size, GFP_KERNEL);
	back = kunit_kzalloc(test, size, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, rec);
	KUNIT_ASSERT_NOT_NULL(test, back);
	configure(test, 0, 0);
	addr = map(test, 1 + 1, PROT_READ | PROT_WRITE, MAP_SHARED, 0);
	KUNIT_ASSERT_FALSE(test, IS_ERR_VALUE(addr));
	data = (void __user *)(addr + PAGE_SIZE);
	tail = (void __user *)(addr + offsetof(struct kring_ctl_page, data_tail));
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_ID, &id, sizeof(id)), 0L);
	KUNIT_ASSERT_EQ(test, chan_ioctl(test, KRING_IOC_ENABLE, NULL, 0), 0L);
	ch = kring_channel_get(id);
	KUNIT_ASSERT_NOT_NULL(test, ch);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, put_channel, ch), 0);

	/* Three laps of a one-page data area, whatever the page size. */
	for (i = 0; pos < 3 * PAGE_SIZE; i++) {
		struct kring_record_header hdr = {
			.type = KRING_RECORD_KRING_BASE + 0x300, .size = size,
		};
		struct kring_output_handle h;
		unsigned long off = pos & (PAGE_SIZE - 1), first;
		void *at;
		int ret;

		preempt_disable();
		ret = kring_channel_output_begin(&h, ch, size);
		at = ret ? NULL : kring_output_ptr(&h);
		if (at) {
			memcpy(at, &hdr, sizeof(hdr));
			for (j = 0; j < words; j++)
				((u64 *)at)[1 + j] = i * 1000ULL + j;
		}
		if (!ret)
			kring_channel_output_end(&h);
		preempt_enable();
		KUNIT_ASSERT_EQ(test, ret, 0);
		KUNIT_ASSERT_NOT_NULL_MSG(test, at, "record %u at %llu not in one piece", i, pos);

		/* Read it back through the user mapping, split at the end. */
		first = min_t(unsigned long, size, PAGE_SIZE - off);
		wrapped += first < size;
		KUNIT_ASSERT_EQ(test, copy_from_user(back, data + off, first), 0UL);
		KUNIT_ASSERT_EQ(test, copy_from_user((u8 *)back + first, data, size - first), 0UL);
		KUNIT_EXPECT_EQ(test, ((struct kring_record_header *)back)->size, (__u16)size);
		for (j = 0; j < words; j++)
			KUNIT_ASSERT_EQ_MSG(test, back[1 + j], i * 1000ULL + j,
					    "record %u word %u", i, j);
		pos += size;
		/* Consume it: the next one has room. */
		KUNIT_ASSERT_EQ(test, copy_to_user(tail, &pos, sizeof(pos)), 0UL);
	}
	KUNIT_EXPECT_GE(test, wrapped, 2U);
}

static struct kunit_case mmap_cases[] = {
	KUNIT_CASE(mmap_rejects_bad_requests),
	KUNIT_CASE(mmap_faults_in_zeroed_pages),
	KUNIT_CASE(mmap_data_pages_read_only),
	KUNIT_CASE(mmap_shows_producer_records),
	KUNIT_CASE(mmap_producer_writes_in_place_across_the_wrap),
	{}
};

static struct kunit_suite mmap_suite = {
	.name = "kring_mmap",
	.init = mmap_test_init,
	.exit = mmap_test_exit,
	.test_cases = mmap_cases,
};

kunit_test_suite(mmap_suite);

#endif /* KRING_HAVE_KUNIT_VM_MMAP */
