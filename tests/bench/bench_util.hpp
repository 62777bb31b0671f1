// Helpers of the guest benchmark harnesses (producer_bench.cpp,
// tracepoint_bench.cpp): one command to kring_bench.ko and its result
// line, and medians.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace bench {

inline const std::string default_run_file = "/sys/kernel/debug/kring_bench/run";

using fields = std::map<std::string, std::uint64_t>;

// One command to kring_bench.ko: write it, read the result line back.
inline std::optional<fields> run_command(const std::string& run_file, const std::string& cmd,
                                         std::string& err) {
    int fd = ::open(run_file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        err = run_file + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::write(fd, cmd.data(), cmd.size()) != ssize_t(cmd.size())) {
        err = "'" + cmd + "': " + std::strerror(errno);
        ::close(fd);
        return std::nullopt;
    }
    char buf[512];
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (n <= 0) {
        err = "no result for '" + cmd + "'";
        return std::nullopt;
    }
    buf[n] = '\0';
    fields f;
    std::istringstream in(buf);
    std::string kv;
    while (in >> kv) {
        auto eq = kv.find('=');
        if (eq == std::string::npos)
            continue;
        f[kv.substr(0, eq)] = std::strtoull(kv.c_str() + eq + 1, nullptr, 10);
    }
    return f;
}

inline double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace bench
