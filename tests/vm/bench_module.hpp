// kring_bench.ko in the guest, loaded for a test and unloaded after it
// (unless it was loaded before: then it is left as it was). The tests that
// drive the module's writers (stall_test.cpp, capture_producer_test.cpp)
// load it through this.
#pragma once

#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <string>

#include <linux/kring.h>

#include "errno_assert.hpp"

namespace kt {

inline const char* const bench_ko = "/kring/kring_bench.ko";
inline const char* const bench_run = "/sys/kernel/debug/kring_bench/run";
// A record of kring_bench.ko (its BENCH_RECORD_TYPE): header, time, payload.
inline constexpr std::uint32_t bench_record = KRING_RECORD_KRING_BASE + 0x200;

class bench_module {
public:
    bench_module() {
        if (::access("/sys/module/kring_bench", F_OK) == 0) {
            ok_ = true;
            return;
        }
        int fd = ::open(bench_ko, O_RDONLY | O_CLOEXEC);
        if (fd < 0) {
            why_ = "kring_bench.ko is not in this guest";
            return;
        }
        if (::syscall(SYS_finit_module, fd, "", 0) == 0)
            ok_ = loaded_ = true;
        else
            why_ = "cannot load kring_bench.ko: " + errno_name(errno);
        ::close(fd);
    }
    bench_module(const bench_module&) = delete;
    bench_module& operator=(const bench_module&) = delete;
    ~bench_module() {
        if (loaded_)
            ::syscall(SYS_delete_module, "kring_bench", O_NONBLOCK);
    }
    explicit operator bool() const { return ok_; }
    const std::string& why() const { return why_; }

private:
    bool ok_ = false;
    bool loaded_ = false;
    std::string why_;
};

}  // namespace kt
