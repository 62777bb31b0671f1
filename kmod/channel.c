// SPDX-License-Identifier: GPL-2.0
/*
 * File operations of /dev/kring: one open file is one channel.
 */
#include <linux/fs.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/minmax.h>

#include "compat.h"
#include "kring_internal.h"

/**
 * kring_abi_info_fill() - describe this module's ABI
 * @info: filled completely; @info->size is set to sizeof(*info)
 */
void kring_abi_info_fill(struct kring_abi_info *info)
{
	memset(info, 0, sizeof(*info));
	info->size = sizeof(*info);
	info->abi_major = KRING_ABI_MAJOR;
	info->abi_minor = KRING_ABI_MINOR;
	info->features = KRING_FEAT_ABI_QUERY;
	info->page_size = PAGE_SIZE;
	info->max_data_pages_order = KRING_MAX_DATA_ORDER;
}
KRING_EXPORT_FOR_KUNIT(kring_abi_info_fill);

/**
 * kring_abi_info_copy_size() - how many bytes of the answer to copy out
 * @user_size: the size the caller declared in kring_abi_info.size
 *
 * A caller that knows an older, shorter struct gets the prefix it knows; a
 * newer, longer one gets ours and learns our size from the size field.
 *
 * Return: the byte count, or -EINVAL if @user_size is below the first
 * published size.
 */
int kring_abi_info_copy_size(__u32 user_size)
{
	if (user_size < KRING_ABI_INFO_SIZE_VER0)
		return -EINVAL;
	return min_t(__u32, user_size, sizeof(struct kring_abi_info));
}
KRING_EXPORT_FOR_KUNIT(kring_abi_info_copy_size);

static long kring_ioctl_query_abi(void __user *arg)
{
	struct kring_abi_info info;
	__u32 user_size;
	int len;

	if (get_user(user_size, (__u32 __user *)arg))
		return -EFAULT;
	len = kring_abi_info_copy_size(user_size);
	if (len < 0)
		return len;
	kring_abi_info_fill(&info);
	info.size = len;
	if (copy_to_user(arg, &info, len))
		return -EFAULT;
	return 0;
}

static int kring_open(struct inode *inode, struct file *file)
{
	return nonseekable_open(inode, file);
}

static int kring_release(struct inode *inode, struct file *file)
{
	return 0;
}

static long kring_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KRING_IOC_QUERY_ABI:
		return kring_ioctl_query_abi(uarg);
	default:
		return -ENOTTY;
	}
}

const struct file_operations kring_fops = {
	.owner = THIS_MODULE,
	.open = kring_open,
	.release = kring_release,
	.unlocked_ioctl = kring_ioctl,
	.compat_ioctl = compat_ptr_ioctl,
};
