/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Declarations shared between the files of kring.ko (and its KUnit tests).
 */
#ifndef _KRING_INTERNAL_H
#define _KRING_INTERNAL_H

#include <linux/types.h>
#include <linux/kring.h>

struct file;

/* Largest data area: 2^KRING_MAX_DATA_ORDER pages. */
#define KRING_MAX_DATA_ORDER	16

/* channel.c */
extern const struct file_operations kring_fops;

void kring_abi_info_fill(struct kring_abi_info *info);
int kring_abi_info_copy_size(__u32 user_size);

#endif /* _KRING_INTERNAL_H */
