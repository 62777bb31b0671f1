// libkring: owners of the kernel objects a consumer holds - a file
// descriptor and an mmap'ed region. Both are move-only and release what
// they own when destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>

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

// Move-only owner of one mmap'ed region; unmaps it on destruction.
class unique_mapping {
public:
    unique_mapping() = default;
    unique_mapping(void* addr, std::size_t len) noexcept : addr_(addr), len_(len) {}
    unique_mapping(unique_mapping&& o) noexcept;
    unique_mapping& operator=(unique_mapping&& o) noexcept;
    unique_mapping(const unique_mapping&) = delete;
    unique_mapping& operator=(const unique_mapping&) = delete;
    ~unique_mapping() { reset(); }

    void* get() const noexcept { return addr_; }
    std::size_t size() const noexcept { return len_; }
    explicit operator bool() const noexcept { return addr_ != nullptr; }
    void reset() noexcept;

    // mmap(@len, @prot, MAP_SHARED, @fd, @offset) as an owner, or the errno.
    static result<unique_mapping> map(int fd, std::size_t len, int prot, std::uint64_t offset,
                                      const char* what);

private:
    void* addr_ = nullptr;
    std::size_t len_ = 0;
};

}  // namespace kring
