// The kring tool's one error reporter, its device hints and its summary line.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>

#include <fmt/core.h>

#include "command.hpp"

namespace kring_tool {
namespace {

std::string& device_path() {
    static std::string path = "/dev/kring";
    return path;
}

// Whether @e is the failure to open the device node itself (libkring's
// device::open(): "cannot open <path>...: <errno text>", maybe behind a
// "cpu N: " or other prefix).
bool is_device_open_error(const kring::error& e) {
    return e.message().find("cannot open " + device_path()) != std::string::npos;
}

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

std::optional<std::vector<int>> parse_cpu_list(std::string_view list) {
    std::set<int> cpus;
    auto number = [](std::string_view s) -> std::optional<int> {
        if (s.empty() || s.size() > 6)
            return std::nullopt;
        int v = 0;
        for (char c : s) {
            if (c < '0' || c > '9')
                return std::nullopt;
            v = v * 10 + (c - '0');
        }
        return v;
    };
    while (!list.empty()) {
        auto comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        if (comma != std::string_view::npos && list.empty())
            return std::nullopt;  // trailing comma
        auto dash = item.find('-');
        auto lo = number(item.substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
        if (!lo || !hi || *hi < *lo)
            return std::nullopt;
        for (int c = *lo; c <= *hi; c++)
            cpus.insert(c);
    }
    if (cpus.empty())
        return std::nullopt;
    return std::vector<int>(cpus.begin(), cpus.end());
}

void print_summary(std::string_view command,
                   const std::vector<std::pair<std::string, std::uint64_t>>& fields) {
    std::string line = fmt::format("summary {}", command);
    for (const auto& [k, v] : fields)
        line += fmt::format(" {}={}", k, v);
    fmt::print("{}\n", line);
    std::fflush(stdout);
}

}  // namespace kring_tool
