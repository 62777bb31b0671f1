// SPDX-License-Identifier: GPL-2.0
/* The control page and record layouts, checked by a C compiler. */
#include <stddef.h>

#include <linux/kring.h>

_Static_assert(sizeof(struct kring_ctl_page) == 1088, "ctl page size");
_Static_assert(offsetof(struct kring_ctl_page, records_written) == 96, "figures");
_Static_assert(offsetof(struct kring_ctl_page, wakeup_time) ==
	       KRING_CTL_SIZE_VER1, "size 1");
_Static_assert(offsetof(struct kring_ctl_page, __reserved_kring) ==
	       KRING_CTL_SIZE_VER2, "size 2");
_Static_assert(offsetof(struct kring_ctl_page, data_head) == 1024, "data_head");
_Static_assert(offsetof(struct kring_ctl_page, aux_size) == 1080, "aux_size");
_Static_assert(sizeof(struct kring_record_header) == 8, "header");
_Static_assert(sizeof(struct kring_lost_record) == 56, "LOST");

int kring_uapi_c_ctl_size(void);
int kring_uapi_c_ctl_size(void)
{
	return (int)sizeof(struct kring_ctl_page);
}
