/* The uapi header compiles as C (this file) and as C++ (uapi_cxx_test.cpp). */
#include <stddef.h>

#include <linux/kring.h>

_Static_assert(sizeof(struct kring_abi_info) == 56, "kring_abi_info size");
_Static_assert(offsetof(struct kring_abi_info, features) == 8, "features offset");
_Static_assert(offsetof(struct kring_abi_info, page_size) == 16, "page_size offset");

int kring_uapi_c_abi_info_size(void);
int kring_uapi_c_abi_info_size(void)
{
	return (int)sizeof(struct kring_abi_info);
}

/* The attr is versioned by size: the first published layout is fixed. */
_Static_assert(sizeof(struct kring_attr) == KRING_ATTR_SIZE_VER0, "kring_attr size");
_Static_assert(offsetof(struct kring_attr, config) == 40, "config offset");
_Static_assert(offsetof(struct kring_attr, clockid) == 72, "clockid offset");
_Static_assert(offsetof(struct kring_attr, reserved) == 80, "reserved offset");
_Static_assert(sizeof(struct kring_stats) == KRING_STATS_SIZE_VER0, "kring_stats size");
