// Helpers of the guest benchmark harnesses (producer_bench.cpp,
// tracepoint_bench.cpp, e2e_bench.cpp): one command to kring_bench.ko and
// its result line, tracefs, medians.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
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

inline bool write_file(const std::string& path, const std::string& value) {
    int fd = ::open(path.c_str(), O_WRONLY | O_TRUNC | O_CLOEXEC);
    if (fd < 0)
        return false;
    const bool ok = ::write(fd, value.data(), value.size()) == ssize_t(value.size());
    ::close(fd);
    return ok;
}

inline std::string read_file(const std::string& path) {
    std::string out;
    int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return out;
    char buf[4096];
    ssize_t n;
    while ((n = ::read(fd, buf, sizeof(buf))) > 0)
        out.append(buf, std::size_t(n));
    ::close(fd);
    return out;
}

// The benchmark tracepoint's directory under tracefs.
inline const std::string event_dir = "events/kring_bench/kring_bench_hit";

// The tracefs directory holding the benchmark's event: where it is
// mounted, or mounted at /sys/kernel/tracing now; "" if neither works.
inline std::string tracefs() {
    for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
        if (::access((std::string(d) + "/" + event_dir).c_str(), F_OK) == 0)
            return d;
    if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
        ::access(("/sys/kernel/tracing/" + event_dir).c_str(), F_OK) == 0)
        return "/sys/kernel/tracing";
    return "";
}

// "name: value" from one of ftrace's per-CPU stats files; ~0 if absent.
inline std::uint64_t stat_of(const std::string& stats, const std::string& name) {
    std::istringstream in(stats);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(name + ":", 0) == 0)
            return std::strtoull(line.c_str() + name.size() + 1, nullptr, 10);
    return ~0ull;
}

inline double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace bench
