// SPDX-License-Identifier: GPL-2.0
/*
 * kring: perf-style ring buffers streaming records from kernel producers to
 * user space. This file registers the /dev/kring misc device.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>

#include "channel.h"
#include "capture.h"
#include "user.h"
#include "sources/sources.h"

/*
 * Device node mode. The default lets root alone in, no looser than a
 * system whose perf_event_paranoid denies unprivileged perf (Debian's 3);
 * an administrator opens kring up with 0660 and a group (a udev rule),
 * or 0666 (docs/SECURITY.md says what an unprivileged user may then do).
 */
static ushort kring_dev_mode = 0600;
module_param_named(dev_mode, kring_dev_mode, ushort, 0444);
MODULE_PARM_DESC(dev_mode, "mode of /dev/kring (default 0600; 0660 with a udev GROUP rule, or 0666)");

static struct miscdevice kring_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = KRING_DEVICE_NAME,
	.fops = &kring_fops,
};

static int __init kring_init(void)
{
	int ret;

	kring_misc.mode = kring_dev_mode & 0666;
	kring_channels_init(&kring_fops);
	ret = kring_buffer_module_init();
	if (ret)
		return ret;
	ret = kring_capture_module_init();
	if (ret)
		goto err_buffer;
	ret = kring_synth_module_init();
	if (ret)
		goto err_capture;
	ret = kring_event_module_init();
	if (ret)
		goto err_synth;
	ret = misc_register(&kring_misc);
	if (ret) {
		pr_err("kring: cannot register /dev/%s: %d\n",
		       KRING_DEVICE_NAME, ret);
		goto err_event;
	}
	pr_info("kring: ABI %u.%u ready on /dev/%s\n", KRING_ABI_MAJOR,
		KRING_ABI_MINOR, KRING_DEVICE_NAME);
	return 0;

err_event:
	kring_event_module_exit();
err_synth:
	kring_synth_module_exit();
err_capture:
	kring_capture_module_exit();
err_buffer:
	kring_buffer_module_exit();
	return ret;
}

static void __exit kring_exit(void)
{
	misc_deregister(&kring_misc);
	kring_event_module_exit();
	kring_synth_module_exit();
	kring_capture_module_exit();
	kring_channels_exit();
	/*
	 * AUX areas and channels are freed by RCU callbacks in this module's
	 * text, buffers by its work after one: wait for every one queued
	 * before the text goes.
	 */
	rcu_barrier();
	kring_buffer_module_exit();
	kring_users_exit();
}

module_init(kring_init);
module_exit(kring_exit);

MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("kring: perf-style ring buffers for kernel-to-user streaming");
MODULE_AUTHOR("The kring developers");
