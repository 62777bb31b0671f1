// In the guest: taking CPU 1 offline and back, for the hotplug tests.
#pragma once

#include <cerrno>

#include <fcntl.h>
#include <unistd.h>

namespace kt {

inline const char* const cpu1_online = "/sys/devices/system/cpu/cpu1/online";

// Whether CPU 1 is online and can be taken offline here.
inline bool cpu1_hotpluggable() {
    return ::sysconf(_SC_NPROCESSORS_ONLN) >= 2 && ::access(cpu1_online, W_OK) == 0;
}

// 0 or the errno of the write to cpu1/online.
inline int set_cpu1_online(bool on) {
    int fd = ::open(cpu1_online, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return errno;
    int err = ::write(fd, on ? "1" : "0", 1) == 1 ? 0 : errno;
    ::close(fd);
    return err;
}

// Brings CPU 1 back whatever happens to the test.
struct cpu1_online_guard {
    cpu1_online_guard() = default;
    cpu1_online_guard(const cpu1_online_guard&) = delete;
    cpu1_online_guard& operator=(const cpu1_online_guard&) = delete;
    ~cpu1_online_guard() { set_cpu1_online(true); }
};

}  // namespace kt
