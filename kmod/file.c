// SPDX-License-Identifier: GPL-2.0
/*
 * The file operations of /dev/kring, the top of the channel layer: each
 * goes to the file below that implements it. channel.c opens, releases and
 * polls a channel and maps its data ring, aux.c maps its AUX area, ioctl.c
 * takes its ioctls. None of them calls up here: the channel layer knows
 * this table only as what kring_channel_from_file() compares a file with
 * (kring_channels_init(), at module init).
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/module.h>

#include "channel.h"
#include "aux.h"

/*
 * The data ring at offset 0 (kring_channel_mmap()), the AUX area at the
 * control page's aux_offset, past the data ring (kring_aux_mmap()).
 */
static int kring_mmap(struct file *file, struct vm_area_struct *vma)
{
	if (vma->vm_pgoff)
		return kring_aux_mmap(file, vma);
	return kring_channel_mmap(file, vma);
}

const struct file_operations kring_fops = {
	.owner = THIS_MODULE,
	.open = kring_channel_open,
	.release = kring_channel_release,
	.unlocked_ioctl = kring_ioctl,
#ifdef CONFIG_COMPAT
	.compat_ioctl = kring_compat_ioctl,
#endif
	.mmap = kring_mmap,
	.poll = kring_channel_poll,
};
