// libkring: opening /dev/kring and checking its ABI.
#pragma once

#include <cstdint>
#include <utility>

#include <linux/kring.h>

#include "kring/result.hpp"

namespace kring {

// Move-only owner of a file descriptor; closes it on destruction.
class unique_fd {
public:
    unique_fd() = default;
    explicit unique_fd(int fd) noexcept : fd_(fd) {}
    unique_fd(unique_fd&& o) noexcept : fd_(o.release()) {}
    unique_fd& operator=(unique_fd&& o) noexcept;
    unique_fd(const unique_fd&) = delete;
    unique_fd& operator=(const unique_fd&) = delete;
    ~unique_fd() { reset(); }

    int get() const noexcept { return fd_; }
    explicit operator bool() const noexcept { return fd_ >= 0; }
    int release() noexcept { return std::exchange(fd_, -1); }
    void reset(int fd = -1) noexcept;

private:
    int fd_ = -1;
};

// The module's answer to KRING_IOC_QUERY_ABI.
struct abi_info {
    std::uint16_t major = 0;
    std::uint16_t minor = 0;
    std::uint64_t features = 0;
    std::uint32_t page_size = 0;
    std::uint32_t max_data_pages_order = 0;
};

inline constexpr const char* default_device_path = "/dev/" KRING_DEVICE_NAME;

// Features this build of libkring cannot work without.
inline constexpr std::uint64_t required_features = KRING_FEAT_ABI_QUERY;

// Ask an open kring fd for its ABI. Fails with ENOTTY ("not a kring device")
// for any other file.
result<abi_info> query_abi(int fd);

// Whether a module answering @info can serve this build of libkring: the
// major versions must match and @required must be a subset of its features.
// The error (EPROTO) says which part does not match.
result<void> check_compatible(const abi_info& info,
                              std::uint64_t required = required_features);

// A kring fd opened with O_RDWR | O_CLOEXEC and the ABI it answered, checked
// with check_compatible(@required). ENOENT says whether kring.ko is loaded.
struct opened_device {
    unique_fd fd;
    abi_info abi;
};
result<opened_device> open_device(const char* path,
                                  std::uint64_t required = required_features);

// An open, ABI-checked /dev/kring file descriptor (one channel).
class device {
public:
    // Opens @path with O_RDWR | O_CLOEXEC, queries and checks the ABI.
    static result<device> open(const char* path = default_device_path);

    const abi_info& abi() const noexcept { return abi_; }
    int fd() const noexcept { return fd_.get(); }

private:
    device(unique_fd fd, abi_info abi) : fd_(std::move(fd)), abi_(abi) {}
    unique_fd fd_;
    abi_info abi_;
};

}  // namespace kring
