// Regular files only, opened without blocking, bounded (input_file.hpp).
#include "input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/core.h>

namespace kring_tool {

namespace {

const char* kind_of(mode_t m) {
    if (S_ISFIFO(m))
        return "a FIFO";
    if (S_ISCHR(m))
        return "a character device";
    if (S_ISBLK(m))
        return "a block device";
    if (S_ISSOCK(m))
        return "a socket";
    if (S_ISDIR(m))
        return "a directory";
    return "not a plain file";
}

kring::error not_regular(const std::string& path, mode_t m) {
    return kring::error(EINVAL, fmt::format("{}: not a regular file ({})", path, kind_of(m)));
}

kring::error too_big(const std::string& path, std::uint64_t size, std::uint64_t max_size) {
    return kring::error(
        EFBIG, fmt::format("{}: {} bytes, more than the {} this reads", path, size, max_size));
}

}  // namespace

kring::result<input_file> open_input(const std::string& path, std::uint64_t max_size,
                                     bool unsized) {
    struct stat before;
    if (::stat(path.c_str(), &before) < 0)
        return kring::error::from_errno(errno, "cannot open " + path);
    if (!S_ISREG(before.st_mode))
        return not_regular(path, before.st_mode);
    if (before.st_size == 0 && !unsized)
        return kring::error(EINVAL, path + ": an empty file (or a procfs or sysfs one)");
    input_file f;
    f.fd = kring::unique_fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!f.fd)
        return kring::error::from_errno(errno, "cannot open " + path);
    struct stat st;
    if (::fstat(f.fd.get(), &st) < 0)
        return kring::error::from_errno(errno, "cannot stat " + path);
    if (!S_ISREG(st.st_mode))
        return not_regular(path, st.st_mode);
    if (st.st_dev != before.st_dev || st.st_ino != before.st_ino)
        return kring::error(EAGAIN, path + ": replaced while being opened");
    if (st.st_size < 0 || std::uint64_t(st.st_size) > max_size)
        return too_big(path, std::uint64_t(st.st_size), max_size);
    f.size = std::uint64_t(st.st_size);
    return f;
}

kring::result<std::string> read_input(const std::string& path, std::uint64_t max_size,
                                      bool unsized) {
    auto f = open_input(path, max_size, unsized);
    if (!f)
        return f.error();
    std::string s;
    char buf[1 << 16];
    for (;;) {
        const ssize_t n = ::read(f->fd.get(), buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return kring::error::from_errno(errno, "cannot read " + path);
        if (n == 0)
            return s;
        if (s.size() + std::size_t(n) > max_size)
            return kring::error(
                EFBIG, fmt::format("{}: more than the {} bytes this reads", path, max_size));
        s.append(buf, std::size_t(n));
    }
}

}  // namespace kring_tool
