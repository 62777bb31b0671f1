// The kring tool's one error reporter and its device hints.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <fmt/core.h>

#include "errors.hpp"

namespace kring_tool {
namespace {

std::string& device_path() {
    static std::string path = "/dev/kring";
    return path;
}

// Whether @e is the failure to open the device node itself (libkring's
// device::open(), maybe passed on with a "cpu N: " or other context).
bool is_device_open_error(const kring::error& e) { return e.op() == kring::operation::open_device; }

}  // namespace

void set_device_path(std::string path) { device_path() = std::move(path); }

std::string device_hint(const kring::error& e) {
    if (!is_device_open_error(e))
        return {};
    switch (e.code()) {
        case ENOENT:
        case ENXIO:
        case ENODEV:
            return "is the module loaded? try: sudo insmod kmod/kring.ko";
        case EACCES:
        case EPERM:
            return "the device is root's only by default: load the module with dev_mode=0660 "
                   "(and a group) or dev_mode=0666; see docs/SECURITY.md";
        default:
            return {};
    }
}

int report(const kring::error& e, std::string_view hint) {
    std::fflush(stdout);
    if (is_device_open_error(e)) {
        // One fixed line whatever the command: the device, the errno text
        // and what to do about it.
        std::string h = device_hint(e);
        if (h.empty())
            h = std::string(hint);
        std::string line =
            fmt::format("cannot open {}: {}", device_path(), std::strerror(e.code()));
        if (h.empty())
            fmt::print(stderr, "kring: {}\n", line);
        else
            fmt::print(stderr, "kring: {} ({})\n", line, h);
        return exit_runtime;
    }
    if (hint.empty())
        fmt::print(stderr, "kring: {}\n", e.message());
    else
        fmt::print(stderr, "kring: {} ({})\n", e.message(), hint);
    return exit_runtime;
}

int report(std::string_view what) {
    std::fflush(stdout);
    fmt::print(stderr, "kring: {}\n", what);
    return exit_runtime;
}

}  // namespace kring_tool
