// In the guest: /dev/kring answers the ABI query through libkring and
// through the raw ioctl, and refuses what it must refuse.
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "kring/device.hpp"
#include "errno_assert.hpp"

namespace {

TEST(Abi, DeviceIsACharacterDevice) {
    struct stat st;
    ASSERT_EQ(::stat(kring::default_device_path, &st), 0) << std::strerror(errno);
    EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST(Abi, LibkringOpensAndChecks) {
    auto dev = kring::device::open();
    ASSERT_TRUE(dev) << dev.error().message();
    EXPECT_EQ(dev->abi().major, KRING_ABI_MAJOR);
    EXPECT_EQ(dev->abi().minor, KRING_ABI_MINOR);
    EXPECT_EQ(dev->abi().page_size, static_cast<std::uint32_t>(::sysconf(_SC_PAGESIZE)));
    EXPECT_TRUE(dev->abi().features & KRING_FEAT_ABI_QUERY);
    EXPECT_GE(dev->abi().max_data_pages_order, 8u);
    // The fd is close-on-exec.
    EXPECT_TRUE(::fcntl(dev->fd(), F_GETFD) & FD_CLOEXEC);
}

class RawAbi : public ::testing::Test {
protected:
    void SetUp() override {
        fd_ = ::open(kring::default_device_path, O_RDWR | O_CLOEXEC);
        ASSERT_GE(fd_, 0) << std::strerror(errno);
    }
    void TearDown() override {
        if (fd_ >= 0)
            ::close(fd_);
    }
    int fd_ = -1;
};

TEST_F(RawAbi, AnswersItsOwnSize) {
    kring_abi_info info;
    std::memset(&info, 0xff, sizeof(info));
    info.size = sizeof(info);
    ASSERT_EQ(::ioctl(fd_, KRING_IOC_QUERY_ABI, &info), 0) << std::strerror(errno);
    EXPECT_EQ(info.size, sizeof(info));
    EXPECT_EQ(info.reserved[0], 0u);
    EXPECT_EQ(info.reserved[3], 0u);
}

TEST_F(RawAbi, TooSmallSizeIsEinval) {
    kring_abi_info info{};
    info.size = KRING_ABI_INFO_SIZE_VER0 - 8;
    errno = 0;
    EXPECT_EQ(::ioctl(fd_, KRING_IOC_QUERY_ABI, &info), -1);
    EXPECT_ERRNO(errno, EINVAL);
}

TEST_F(RawAbi, LargerCallerGetsOurSizeAndUntouchedTail) {
    struct {
        kring_abi_info info;
        unsigned char tail[64];
    } big;
    std::memset(&big, 0x5a, sizeof(big));
    big.info.size = sizeof(big);
    ASSERT_EQ(::ioctl(fd_, KRING_IOC_QUERY_ABI, &big), 0) << std::strerror(errno);
    EXPECT_EQ(big.info.size, sizeof(kring_abi_info));
    for (unsigned char c : big.tail)
        ASSERT_EQ(c, 0x5a);
}

TEST_F(RawAbi, BadPointerIsEfault) {
    errno = 0;
    EXPECT_EQ(::ioctl(fd_, KRING_IOC_QUERY_ABI, reinterpret_cast<void*>(16)), -1);
    EXPECT_ERRNO(errno, EFAULT);
}

TEST_F(RawAbi, UnknownIoctlIsEnotty) {
    errno = 0;
    EXPECT_EQ(::ioctl(fd_, _IO(KRING_IOC_MAGIC, 0xff)), -1);
    EXPECT_ERRNO(errno, ENOTTY);
}

}  // namespace
