#include "kring/device.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace kring {

unique_fd& unique_fd::operator=(unique_fd&& o) noexcept {
    if (this != &o)
        reset(o.release());
    return *this;
}

void unique_fd::reset(int fd) noexcept {
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = fd;
}

result<abi_info> query_abi(int fd) {
    kring_abi_info raw;
    std::memset(&raw, 0, sizeof(raw));
    raw.size = sizeof(raw);
    if (::ioctl(fd, KRING_IOC_QUERY_ABI, &raw) < 0) {
        int e = errno;
        if (e == ENOTTY || e == EINVAL)
            return error(ENOTTY, "not a kring device: KRING_IOC_QUERY_ABI: " +
                                     std::string(std::strerror(e)));
        return error::from_errno(e, "KRING_IOC_QUERY_ABI");
    }
    if (raw.size < KRING_ABI_INFO_SIZE_VER0 || raw.size > sizeof(raw))
        return error(EPROTO, "KRING_IOC_QUERY_ABI answered an invalid size " +
                                 std::to_string(raw.size));
    abi_info info;
    info.major = raw.abi_major;
    info.minor = raw.abi_minor;
    info.features = raw.features;
    info.page_size = raw.page_size;
    info.max_data_pages_order = raw.max_data_pages_order;
    return info;
}

result<void> check_compatible(const abi_info& info, std::uint64_t required) {
    if (info.major != KRING_ABI_MAJOR)
        return error(EPROTO, "kring module ABI " + std::to_string(info.major) + "." +
                                 std::to_string(info.minor) +
                                 " is incompatible with libkring built for ABI " +
                                 std::to_string(KRING_ABI_MAJOR) + ".x");
    std::uint64_t missing = required & ~info.features;
    if (missing) {
        char hex[32];
        std::snprintf(hex, sizeof(hex), "%#llx", static_cast<unsigned long long>(missing));
        return error(EPROTO, "kring module lacks required features " + std::string(hex));
    }
    if (info.page_size == 0 || (info.page_size & (info.page_size - 1)))
        return error(EPROTO, "kring module reported an invalid page size " +
                                 std::to_string(info.page_size));
    return {};
}

result<opened_device> open_device(const char* path, std::uint64_t required) {
    int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        std::string what = std::string("cannot open ") + path;
        if (e == ENOENT)
            what += " (is kring.ko loaded?)";
        return error::from_errno(e, what);
    }
    unique_fd owner(fd);
    auto abi = query_abi(owner.get());
    if (!abi)
        return abi.error();
    if (auto ok = check_compatible(*abi, required); !ok)
        return ok.error();
    return opened_device{std::move(owner), *abi};
}

result<device> device::open(const char* path) {
    auto d = open_device(path);
    if (!d)
        return d.error();
    return device(std::move(d->fd), d->abi);
}

}  // namespace kring
