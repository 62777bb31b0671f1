// tracefs, where the kernel's tracepoints are named and described: its
// root (mounted as perf mounts it when kring runs as root and finds none),
// the tracepoints under events/ and their files. KRING_TRACEFS names
// another root (a test's fake tree: events/SUBSYS/NAME/{id,format}).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kring/result.hpp"

namespace kring_tool::tracefs {

// The mount point perf mounts tracefs on, and the older one under debugfs.
inline constexpr const char* default_root = "/sys/kernel/tracing";
inline constexpr const char* debugfs_root = "/sys/kernel/debug/tracing";

// The tracefs root with an events/ directory: $KRING_TRACEFS when set,
// else the first mounted one. None mounted: with @may_mount and as root,
// tracefs is mounted on /sys/kernel/tracing (perf's way); else an error
// (ENODEV) whose message says in one line what to do. A root this user
// cannot read: EACCES, saying so.
kring::result<std::string> root(bool may_mount);

// A tracepoint: events/<system>/<name>/ with an id file.
struct tracepoint_name {
    std::string system, name;
    std::string full() const { return system + ":" + name; }
    auto operator<=>(const tracepoint_name&) const = default;
};

// Every tracepoint under @root/events, sorted by system then name.
kring::result<std::vector<tracepoint_name>> list(const std::string& root);

// A tracepoint's id (events/S/N/id: a decimal number below 2^32).
kring::result<std::uint32_t> read_id(const std::string& root, const tracepoint_name& t);

// A file of at most 1 MiB, whole.
kring::result<std::string> read_file(const std::string& path);

}  // namespace kring_tool::tracefs
