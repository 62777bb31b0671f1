// libkring: opening /dev/kring and checking its ABI.
//
// device::open() is the one way libkring opens the device: channel::open()
// uses it, and so does a program that only wants the module's ABI.
//
//	auto dev = kring::device::open();              // /dev/kring
//	if (!dev) { puts(dev.error().message().c_str()); return 1; }
//	if (dev->abi().features & KRING_FEAT_AUX) ...
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include <linux/kring.h>

#include "kring/fd.hpp"
#include "kring/result.hpp"

namespace kring {

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

// The short name of one KRING_FEAT_* bit ("aux", "sched", ...), or nullptr
// for a bit this build of libkring does not know.
const char* feature_name(std::uint64_t bit) noexcept;
// The names of every bit of @features, space-separated; unknown bits as
// "+0x...".
std::string feature_names(std::uint64_t features);

// Ask an open kring fd for its ABI. Fails with ENOTTY ("not a kring device")
// for any other file; its errors are operation::query_abi.
result<abi_info> query_abi(int fd);

// Whether a module answering @info can serve this build of libkring: the
// major versions must match and @required must be a subset of its features.
// The error (EPROTO, operation::check_abi) names what does not match,
// missing features by name.
result<void> check_compatible(const abi_info& info, std::uint64_t required = required_features);

// An open, ABI-checked /dev/kring file descriptor (one channel before it is
// configured).
class device {
public:
    // Opens @path with O_RDWR | O_CLOEXEC, queries the ABI and checks it
    // with check_compatible(@required). A failed open(2) is
    // operation::open_device (ENOENT says whether kring.ko is loaded).
    static result<device> open(std::string_view path = default_device_path,
                               std::uint64_t required = required_features);

    device(device&&) noexcept = default;
    device& operator=(device&&) noexcept = default;

    const abi_info& abi() const noexcept { return abi_; }
    int fd() const noexcept { return fd_.get(); }

private:
    device(unique_fd fd, abi_info abi) : fd_(std::move(fd)), abi_(abi) {}
    unique_fd fd_;
    abi_info abi_;
};

}  // namespace kring
