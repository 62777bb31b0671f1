// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/kring fixture of the KUnit suites that map channels
 * (kunit_dev.h).
 */
#include <kunit/test.h>
#include <linux/err.h>
#include <linux/fs.h>
#include <linux/mman.h>
#include <linux/uaccess.h>
#include <linux/kring.h>

#include "compat.h"
#include "kunit_dev.h"

#ifdef KRING_HAVE_KUNIT_VM_MMAP

/**
 * kunit_dev_open() - open /dev/kring and map a scratch page for @test
 * @test:	the test; skipped when the device cannot be opened
 * @d:		filled in; @d->file is NULL after a skip, so that the
 *		suite's exit can call kunit_dev_close() whatever happened
 */
void kunit_dev_open(struct kunit *test, struct kunit_dev *d)
{
	d->file = filp_open("/dev/" KRING_DEVICE_NAME, O_RDWR, 0);
	if (IS_ERR(d->file)) {
		long err = PTR_ERR(d->file);

		d->file = NULL;
		kunit_skip(test, "cannot open /dev/kring: %ld", err);
	}
	d->scratch = kunit_vm_mmap(test, NULL, 0, PAGE_SIZE, PROT_READ | PROT_WRITE,
				   MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_FALSE_MSG(test, !d->scratch || IS_ERR_VALUE(d->scratch),
			       "no scratch mapping: %ld", (long)d->scratch);
}

/* Close the file; mappings of it keep their own file and buffer references. */
void kunit_dev_close(struct kunit_dev *d)
{
	if (d->file)
		filp_close(d->file, NULL);
	d->file = NULL;
}

/**
 * kunit_dev_ioctl() - the channel's ioctl @cmd with @len bytes at @arg
 * @d:		the fixture
 * @cmd:	KRING_IOC_*
 * @arg:	copied to the scratch page before the call and back after a
 *		successful one (NULL when @len is 0)
 * @len:	at most a page
 *
 * Return: the ioctl's result, or -EFAULT.
 */
long kunit_dev_ioctl(struct kunit_dev *d, unsigned int cmd, void *arg, size_t len)
{
	void __user *uarg = (void __user *)d->scratch;
	long ret;

	if (len > PAGE_SIZE)
		return -EFAULT;
	if (len && copy_to_user(uarg, arg, len))
		return -EFAULT;
	ret = d->file->f_op->unlocked_ioctl(d->file, cmd, (unsigned long)uarg);
	if (!ret && len && copy_from_user(arg, uarg, len))
		return -EFAULT;
	return ret;
}

#endif /* KRING_HAVE_KUNIT_VM_MMAP */
