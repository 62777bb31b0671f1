// SPDX-License-Identifier: GPL-2.0
/*
 * kring: perf-style ring buffers streaming records from kernel producers to
 * user space. This file registers the /dev/kring misc device.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>

#include "kring_internal.h"
#include "capture.h"

/* Device node mode: an administrator may use 0660 and chgrp a group. */
static ushort kring_dev_mode = 0666;
module_param_named(dev_mode, kring_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "mode of /dev/kring (default 0666; e.g. 0660 plus a group)");

static struct miscdevice kring_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KRING_DEVICE_NAME,
	.fops = &kring_fops,
};

static int __init kring_init(void)
{
	int ret;

	kring_misc.mode = kring_dev_mode & 0666;
	ret = kring_modes_init();
	if (ret)
		return ret;
	ret = misc_register(&kring_misc);
	if (ret) {
		pr_err("kring: cannot register /dev/%s: %d\n",
		       KRING_DEVICE_NAME, ret);
		kring_modes_exit();
		return ret;
	}
	pr_info("kring: ABI %u.%u ready on /dev/%s\n", KRING_ABI_MAJOR,
		KRING_ABI_MINOR, KRING_DEVICE_NAME);
	return 0;
}

static void __exit kring_exit(void)
{
	misc_deregister(&kring_misc);
	kring_modes_exit();
}

module_init(kring_init);
module_exit(kring_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kring: perf-style ring buffers for kernel-to-user streaming");
MODULE_AUTHOR("The kring developers");
