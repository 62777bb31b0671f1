/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * kring user ABI: the /dev/kring device, its ioctls and the layout of the
 * memory it maps.
 *
 * One open file descriptor of /dev/kring is one channel, like one perf event.
 * Every consumer first asks KRING_IOC_QUERY_ABI which ABI major version and
 * which features the module offers.
 *
 * This header compiles as C (C89 with the kernel's __u types) and as C++.
 */
#ifndef _UAPI_LINUX_KRING_H
#define _UAPI_LINUX_KRING_H

#include <linux/types.h>
#include <linux/ioctl.h>

/*
 * ABI version. A consumer built for major M works with any module whose
 * major is M; minor versions only add features (see feature bits).
 */
#define KRING_ABI_MAJOR		1
#define KRING_ABI_MINOR		0

/* Name of the misc device, as in /dev/kring. */
#define KRING_DEVICE_NAME	"kring"

/* Feature bits reported in kring_abi_info.features. */
#define KRING_FEAT_ABI_QUERY	(1ULL << 0)	/* KRING_IOC_QUERY_ABI */

/*
 * struct kring_abi_info - answer of KRING_IOC_QUERY_ABI.
 *
 * @size:	in: sizeof(struct kring_abi_info) as the caller knows it (at
 *		least KRING_ABI_INFO_SIZE_VER0); out: the number of bytes the
 *		module filled in (never more than the caller's size).
 * @abi_major:	KRING_ABI_MAJOR of the module.
 * @abi_minor:	KRING_ABI_MINOR of the module.
 * @features:	KRING_FEAT_* bits the module implements.
 * @page_size:	PAGE_SIZE of the running kernel; every mmap length and
 *		offset is a multiple of it.
 * @max_data_pages_order: largest n for a data area of 2^n pages.
 * @reserved:	zero.
 */
struct kring_abi_info {
	__u32 size;
	__u16 abi_major;
	__u16 abi_minor;
	__u64 features;
	__u32 page_size;
	__u32 max_data_pages_order;
	__u64 reserved[4];
};

#define KRING_ABI_INFO_SIZE_VER0	56	/* sizeof first published version */

/* One ioctl magic number for every kring ioctl. */
#define KRING_IOC_MAGIC		0xB9

#define KRING_IOC_QUERY_ABI	_IOWR(KRING_IOC_MAGIC, 0x00, struct kring_abi_info)

#endif /* _UAPI_LINUX_KRING_H */
