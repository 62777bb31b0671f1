/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A /dev/kring file opened inside a KUnit test, as a user opens it, with a
 * page of the test's user memory for ioctl arguments: the fixture the
 * suites that map channels (mmap_kunit.c, producer_kunit.c) share.
 * Needs kunit_vm_mmap() (KRING_HAVE_KUNIT_VM_MMAP, Linux 6.10 on).
 */
#ifndef _KRING_KUNIT_DEV_H
#define _KRING_KUNIT_DEV_H

#include <kunit/test.h>
#include <linux/types.h>

struct file;

struct kunit_dev {
	struct file *file;
	unsigned long scratch;	/* one anonymous page for ioctl arguments */
};

void kunit_dev_open(struct kunit *test, struct kunit_dev *d);
void kunit_dev_close(struct kunit_dev *d);
long kunit_dev_ioctl(struct kunit_dev *d, unsigned int cmd, void *arg, size_t len);

#endif /* _KRING_KUNIT_DEV_H */
