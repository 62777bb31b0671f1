// The uapi header compiles as C++ and agrees with the C compilation.
#include <cstddef>

#include <gtest/gtest.h>

#include <linux/kring.h>

extern "C" int kring_uapi_c_abi_info_size(void);

static_assert(sizeof(kring_abi_info) == KRING_ABI_INFO_SIZE_VER0);
static_assert(offsetof(kring_abi_info, max_data_pages_order) == 20);

TEST(Uapi, SameLayoutInCAndCxx) {
    EXPECT_EQ(kring_uapi_c_abi_info_size(), static_cast<int>(sizeof(kring_abi_info)));
}

TEST(Uapi, IoctlNumbersUseOneMagic) {
    EXPECT_EQ(_IOC_TYPE(KRING_IOC_QUERY_ABI), KRING_IOC_MAGIC);
    EXPECT_EQ(_IOC_SIZE(KRING_IOC_QUERY_ABI), sizeof(kring_abi_info));
    EXPECT_EQ(_IOC_DIR(KRING_IOC_QUERY_ABI), _IOC_READ | _IOC_WRITE);
}
