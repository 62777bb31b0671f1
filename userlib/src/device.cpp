// libkring: opening the device and checking its ABI.
#include "kring/device.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

namespace kring {

namespace {

struct feature {
    std::uint64_t bit;
    const char* name;
};

constexpr feature features[] = {
    {KRING_FEAT_ABI_QUERY, "abi-query"},   {KRING_FEAT_DATA_RING, "data-ring"},
    {KRING_FEAT_OVERWRITE, "overwrite"},   {KRING_FEAT_MIRROR, "mirror"},
    {KRING_FEAT_SYNTHETIC, "synthetic"},   {KRING_FEAT_SCHED, "sched"},
    {KRING_FEAT_TIMER, "timer"},           {KRING_FEAT_CAPTURE, "capture"},
    {KRING_FEAT_CLOCKS, "clocks"},         {KRING_FEAT_AUX, "aux"},
    {KRING_FEAT_AUX_TRACER, "aux-tracer"}, {KRING_FEAT_CALLCHAIN, "callchain"},
    {KRING_FEAT_FORMATS, "formats"},       {KRING_FEAT_EVENT, "event"},
};

std::string hex(std::uint64_t v) {
    char b[32];
    std::snprintf(b, sizeof(b), "%#llx", static_cast<unsigned long long>(v));
    return b;
}

}  // namespace

const char* feature_name(std::uint64_t bit) noexcept {
    for (const auto& f : features)
        if (f.bit == bit)
            return f.name;
    return nullptr;
}

std::string feature_names(std::uint64_t bits) {
    std::string s;
    std::uint64_t known = 0;
    for (const auto& f : features) {
        known |= f.bit;
        if (bits & f.bit)
            s += (s.empty() ? "" : " ") + std::string(f.name);
    }
    if (bits & ~known)
        s += (s.empty() ? "+" : " +") + hex(bits & ~known);
    return s;
}

result<abi_info> query_abi(int fd) {
    kring_abi_info raw;
    std::memset(&raw, 0, sizeof(raw));
    raw.size = sizeof(raw);
    if (::ioctl(fd, KRING_IOC_QUERY_ABI, &raw) < 0) {
        int e = errno;
        if (e == ENOTTY || e == EINVAL)
            return error(
                ENOTTY, "not a kring device: KRING_IOC_QUERY_ABI: " + std::string(std::strerror(e)),
                operation::query_abi);
        return error::from_errno(e, "KRING_IOC_QUERY_ABI", operation::query_abi);
    }
    if (raw.size < KRING_ABI_INFO_SIZE_VER0 || raw.size > sizeof(raw))
        return error(EPROTO,
                     "KRING_IOC_QUERY_ABI answered an invalid size " + std::to_string(raw.size),
                     operation::query_abi);
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
        return error(EPROTO,
                     "kring module ABI " + std::to_string(info.major) + "." +
                         std::to_string(info.minor) +
                         " is incompatible with libkring built for ABI " +
                         std::to_string(KRING_ABI_MAJOR) + ".x",
                     operation::check_abi);
    std::uint64_t missing = required & ~info.features;
    if (missing)
        return error(EPROTO,
                     "kring module lacks required features " + hex(missing) + " (" +
                         feature_names(missing) + ")",
                     operation::check_abi);
    if (info.page_size == 0 || (info.page_size & (info.page_size - 1)))
        return error(EPROTO,
                     "kring module reported an invalid page size " + std::to_string(info.page_size),
                     operation::check_abi);
    return {};
}

result<device> device::open(std::string_view path, std::uint64_t required) {
    const std::string p(path);
    int fd = ::open(p.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        int e = errno;
        std::string what = "cannot open " + p;
        if (e == ENOENT)
            what += " (is kring.ko loaded?)";
        else if (e == EMFILE)
            what += " (RLIMIT_NOFILE, or the user's kring.max_user_channels, is reached)";
        return error::from_errno(e, what, operation::open_device);
    }
    unique_fd owner(fd);
    auto abi = query_abi(owner.get());
    if (!abi)
        return abi.error();
    if (auto ok = check_compatible(*abi, required); !ok)
        return ok.error();
    return device(std::move(owner), *abi);
}

}  // namespace kring
