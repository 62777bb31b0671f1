// libkring: the fd and mapping owners.
#include "kring/fd.hpp"

#include <cerrno>
#include <utility>

#include <sys/mman.h>
#include <sys/types.h>
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

unique_mapping::unique_mapping(unique_mapping&& o) noexcept
    : addr_(std::exchange(o.addr_, nullptr)), len_(std::exchange(o.len_, 0)) {}

unique_mapping& unique_mapping::operator=(unique_mapping&& o) noexcept {
    if (this != &o) {
        reset();
        addr_ = std::exchange(o.addr_, nullptr);
        len_ = std::exchange(o.len_, 0);
    }
    return *this;
}

void unique_mapping::reset() noexcept {
    if (addr_)
        ::munmap(addr_, len_);
    addr_ = nullptr;
    len_ = 0;
}

result<unique_mapping> unique_mapping::map(int fd, std::size_t len, int prot, std::uint64_t offset,
                                           const char* what) {
    void* p = ::mmap(nullptr, len, prot, MAP_SHARED, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED)
        return error::from_errno(errno, what);
    return unique_mapping(p, len);
}

}  // namespace kring
