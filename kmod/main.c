// SPDX-License-Identifier: GPL-2.0
/*
 * kring: perf-style ring buffers streaming records from kernel producers to
 * user space. This file registers the /dev/kring misc device.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>

#include "kring_internal.h"

static struct miscdevice kring_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KRING_DEVICE_NAME,
	.fops = &kring_fops,
	.mode = 0666,
};

static int __init kring_init(void)
{
	int ret;

	ret = misc_register(&kring_misc);
	if (ret) {
		pr_err("kring: cannot register /dev/%s: %d\n",
		       KRING_DEVICE_NAME, ret);
		return ret;
	}
	pr_info("kring: ABI %u.%u ready on /dev/%s\n", KRING_ABI_MAJOR,
		KRING_ABI_MINOR, KRING_DEVICE_NAME);
	return 0;
}

static void __exit kring_exit(void)
{
	misc_deregister(&kring_misc);
}

module_init(kring_init);
module_exit(kring_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kring: perf-style ring buffers for kernel-to-user streaming");
MODULE_AUTHOR("The kring developers");
