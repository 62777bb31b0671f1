// Helpers of the capture tests (sched and timer sources, modes, clocks):
// a channel read with the raw reader, its records parsed into a vector.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "raw_ring.hpp"
#include "test_util.hpp"

namespace kt {

inline kring_attr attr(std::uint32_t source, int cpu, int pid, std::uint64_t flags = 0) {
    kring_attr a =
        kt::make_attr(source, cpu, source == KRING_SOURCE_TIMER ? timer_type : sched_type, flags);
    a.pid = pid;
    return a;
}

// Copies the executable @from to @to (its directory made if missing),
// owned by root and setuid (04755): an image whose exec changes
// credentials, for the exec tests (the caller must be root). Returns ""
// or what failed.
inline std::string make_setuid_copy(const char* from, const std::string& to) {
    const std::string dir = to.substr(0, to.rfind('/'));
    ::mkdir(dir.c_str(), 0755);
    int in = ::open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return std::string("open ") + from + ": " + std::strerror(errno);
    int out = ::open(to.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0755);
    if (out < 0) {
        int e = errno;
        ::close(in);
        return "create " + to + ": " + std::strerror(e);
    }
    std::string err;
    char buf[65536];
    ssize_t n;
    while (err.empty() && (n = ::read(in, buf, sizeof(buf))) != 0)
        if (n < 0 || ::write(out, buf, n) != n)
            err = "copy to " + to + ": " + std::strerror(errno);
    ::close(in);
    if (::close(out) && err.empty())
        err = "close " + to + ": " + std::strerror(errno);
    if (err.empty() && (::chown(to.c_str(), 0, 0) || ::chmod(to.c_str(), 04755)))
        err = "setuid " + to + ": " + std::strerror(errno);
    return err;
}

// Whether /proc/kallsyms names the kernel function @name.
inline bool kallsyms_has(const char* name) {
    FILE* f = std::fopen("/proc/kallsyms", "re");
    if (!f)
        return false;
    char line[512];
    bool found = false;
    const std::size_t n = std::strlen(name);
    while (!found && std::fgets(line, sizeof(line), f)) {
        // "ADDR T NAME[\t[MODULE]]\n"
        const char* s = std::strchr(line, ' ');
        s = s ? std::strchr(s + 1, ' ') : nullptr;
        found = s && !std::strncmp(s + 1, name, n) && (s[1 + n] == '\n' || s[1 + n] == '\t');
    }
    std::fclose(f);
    return found;
}

// A page-aligned user address above this thread's stack with nothing
// mapped there (mincore() says ENOMEM), or 0 when none was found.
inline std::uint64_t unmapped_above_stack() {
    FILE* f = std::fopen("/proc/self/maps", "re");
    if (!f)
        return 0;
    char line[512];
    std::uint64_t end = 0;
    while (std::fgets(line, sizeof(line), f))
        if (std::strstr(line, "[stack]")) {
            unsigned long long lo, hi;
            if (std::sscanf(line, "%llx-%llx", &lo, &hi) == 2)
                end = hi;
        }
    std::fclose(f);
    const long page = ::sysconf(_SC_PAGESIZE);
    for (std::uint64_t a = end + 16 * std::uint64_t(page);
         end && a < end + 1024 * std::uint64_t(page); a += page) {
        unsigned char v;
        if (::mincore(reinterpret_cast<void*>(a), 1, &v) != 0 && errno == ENOMEM)
            return a;
    }
    return 0;
}

struct rec {
    kt::sample s;
    kring_sched_raw sched{};
    kring_timer_raw timer{};
    std::vector<std::uint64_t> chain;  // CALLCHAIN, copied out of the ring
};

struct channel {
    kt::raw_channel ch;
    std::uint64_t type = 0;  // the channel's, as the kernel reports it
    bool sched = false;
    std::vector<rec> recs;
    std::uint64_t lost = 0, bad = 0, decreasing = 0, last_time = 0;

    // 0 or the errno of the step that failed.
    int open(const kring_attr& a, unsigned order = 6) {
        if (int e = ch.open_dev())
            return e;
        sched = a.source == KRING_SOURCE_SCHED;
        if (int e = ch.configure(a))
            return e;
        type = ch.sample_type();
        return ch.map_ring(order, true, false);
    }
    int enable() { return ch.ioctl0(KRING_IOC_ENABLE); }
    int disable() { return ch.ioctl0(KRING_IOC_DISABLE); }

    // Read what is there; returns the records read.
    long drain() {
        return ch.consume([&](const kring_record_header& h, const std::uint8_t* p) {
            if (h.type == KRING_RECORD_LOST) {
                kring_lost_record l;
                std::memcpy(&l, p, sizeof(l) <= h.size ? sizeof(l) : h.size);
                lost += l.lost;
                return;
            }
            if (h.type != KRING_RECORD_SAMPLE) {
                bad++;
                return;
            }
            rec r;
            if (!kt::parse_sample(p, type, r.s)) {
                bad++;
                return;
            }
            if (r.s.raw && r.s.raw_size >= sizeof(kring_sched_raw) && sched)
                std::memcpy(&r.sched, r.s.raw, sizeof(r.sched));
            else if (r.s.raw && r.s.raw_size >= sizeof(kring_timer_raw))
                std::memcpy(&r.timer, r.s.raw, sizeof(r.timer));
            else
                bad++;
            r.chain.resize(r.s.chain_nr);
            if (r.s.chain_nr)
                std::memcpy(r.chain.data(), r.s.chain, 8 * r.s.chain_nr);
            r.s.chain = nullptr;
            if (r.s.time < last_time)
                decreasing++;
            last_time = r.s.time;
            recs.push_back(r);
        });
    }
};

}  // namespace kt
