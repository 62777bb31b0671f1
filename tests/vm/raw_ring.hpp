// A deliberately small, independent reader of kring's data ring for the
// in-guest tests: raw syscalls, the perf ring-buffer protocol spelled out,
// no libkring. It is the oracle the module (and later libkring) is checked
// against, so it stays simple enough to be obviously right.
#pragma once

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include <fcntl.h>
#include <grp.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <linux/kring.h>
#include <linux/kring_test.h>

#include "test_util.hpp"

namespace kt {

inline std::size_t page_size() { return static_cast<std::size_t>(::sysconf(_SC_PAGESIZE)); }

// The order of a data area as large as 2^@order 4 KiB pages (at least one
// page): the same bytes, and so the same locked-memory charge, on 16 KiB
// and 64 KiB pages.
inline unsigned order_of_4k(unsigned order) {
    unsigned shift = 0;
    while ((std::size_t(4096) << shift) < page_size())
        shift++;
    return order > shift ? order - shift : 0;
}

// 0 or the errno of an argument-less ioctl on @fd.
inline int ioctl0(int fd, unsigned long req) { return ::ioctl(fd, req, 0) < 0 ? errno : 0; }

// KRING_IOC_STATS of @fd into @st: 0 or the errno.
inline int stats_of(int fd, kring_stats& st) {
    std::memset(&st, 0, sizeof(st));
    st.size = sizeof(st);
    return ::ioctl(fd, KRING_IOC_STATS, &st) < 0 ? errno : 0;
}

// The module's KRING_FEAT_* bits, 0 when /dev/kring does not answer.
inline std::uint64_t abi_features() {
    int fd = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
    if (fd < 0)
        return 0;
    kring_abi_info info{};
    info.size = sizeof(info);
    std::uint64_t f = ::ioctl(fd, KRING_IOC_QUERY_ABI, &info) == 0 ? info.features : 0;
    ::close(fd);
    return f;
}

// One MAP_SHARED mapping of a kring file (the data ring at offset 0, or
// the AUX area), unmapped when it goes. error() is 0 or mmap's errno.
class mapping {
public:
    mapping() = default;
    mapping(int fd, std::size_t len, int prot, off_t offset) {
        void* p = ::mmap(nullptr, len, prot, MAP_SHARED, fd, offset);
        if (p == MAP_FAILED) {
            err_ = errno;
            return;
        }
        addr_ = p;
        len_ = len;
    }
    mapping(mapping&& o) noexcept { *this = std::move(o); }
    mapping& operator=(mapping&& o) noexcept {
        if (this != &o) {
            unmap();
            addr_ = std::exchange(o.addr_, nullptr);
            len_ = std::exchange(o.len_, 0);
            err_ = o.err_;
        }
        return *this;
    }
    ~mapping() { unmap(); }

    // 0 or munmap's errno (0 too when nothing is mapped).
    int unmap() {
        if (!addr_)
            return 0;
        int e = ::munmap(addr_, len_) ? errno : 0;
        addr_ = nullptr;
        return e;
    }
    int error() const { return err_; }
    void* addr() const { return addr_; }
    std::size_t size() const { return len_; }
    kring_ctl_page* ctl() const { return static_cast<kring_ctl_page*>(addr_); }
    // One byte read through the mapping (a real load: it may fault).
    std::uint8_t byte(std::size_t at) const {
        return static_cast<const volatile std::uint8_t*>(addr_)[at];
    }

private:
    void* addr_ = nullptr;
    std::size_t len_ = 0;
    int err_ = 0;
};

// The AUX area: asks for [@offset, @offset + @size) in the control page of
// the data-ring mapping @ctl, then maps it; read-write is normal mode,
// read-only snapshot mode.
inline mapping map_aux(int fd, kring_ctl_page* ctl, std::uint64_t offset, std::uint64_t size,
                       bool rw) {
    ctl->aux_offset = offset;
    ctl->aux_size = size;
    return mapping(fd, size, PROT_READ | (rw ? PROT_WRITE : 0), static_cast<off_t>(offset));
}

// Child processes report through their exit status: fork_child() runs
// @fn in a child that exits with its result, wait_child() returns the
// wait status, in_child() does both.
inline pid_t fork_child(const std::function<int()>& fn) {
    std::fflush(nullptr);  // output buffered so far is written once, not twice
    pid_t pid = ::fork();
    if (pid == 0) {
        int r = fn();
        std::fflush(nullptr);
        ::_exit(r);
    }
    return pid;
}

inline int wait_child(pid_t pid) {
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    return status;
}

inline int in_child(const std::function<int()>& fn) {
    pid_t pid = fork_child(fn);
    return pid < 0 ? -1 : wait_child(pid);
}

// Drops root for uid and gid 65534 (nobody) and no supplementary groups.
// The change of ids makes the process non-dumpable; a process that gave up
// its privileges may be dumpable again, as an ordinary user's process is
// (so that it, and the children it forks, may be followed by their owner).
// Already nobody (a suite run as nobody): nothing to drop.
inline bool become_nobody() {
    if (::geteuid() == 65534 && ::getuid() == 65534)
        return ::prctl(PR_SET_DUMPABLE, 1) == 0;
    return ::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0 &&
           ::prctl(PR_SET_DUMPABLE, 1) == 0;
}

inline kring_attr make_attr(std::uint32_t source, int cpu, std::uint64_t sample_type = 0,
                            std::uint64_t flags = 0) {
    kring_attr a;
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.source = source;
    a.cpu = cpu;
    a.pid = -1;
    a.sample_type = sample_type;
    a.flags = flags;
    return a;
}

// One parsed SAMPLE record (fields present per sample_type).
struct sample {
    std::uint64_t id = 0, ip = 0, time = 0, id2 = 0, period = 0, seq = 0;
    std::uint32_t pid = 0, tid = 0, cpu = 0;
    const std::uint8_t* raw = nullptr;
    std::uint32_t raw_size = 0;
    const std::uint8_t* chain = nullptr;  // chain_nr u64 entries (CALLCHAIN)
    std::uint64_t chain_nr = 0;
};

// Parse a SAMPLE whose body follows @sample_type, the channel's as the
// kernel reports it (raw_channel::sample_type(): SEQ and the source's RAW
// included); false if the fields run past the record or leave bytes over.
inline bool parse_sample(const std::uint8_t* rec, std::uint64_t sample_type, sample& s) {
    kring_record_header h;
    std::memcpy(&h, rec, sizeof(h));
    const std::uint8_t* p = rec + sizeof(h);
    const std::uint8_t* end = rec + h.size;
    auto u64 = [&](std::uint64_t& v) {
        if (p + 8 > end)
            return false;
        std::memcpy(&v, p, 8);
        p += 8;
        return true;
    };
    auto u32pair = [&](std::uint32_t& a, std::uint32_t& b) {
        if (p + 8 > end)
            return false;
        std::memcpy(&a, p, 4);
        std::memcpy(&b, p + 4, 4);
        p += 8;
        return true;
    };
    std::uint32_t res;
    if ((sample_type & KRING_SAMPLE_IDENTIFIER) && !u64(s.id))
        return false;
    if ((sample_type & KRING_SAMPLE_IP) && !u64(s.ip))
        return false;
    if ((sample_type & KRING_SAMPLE_TID) && !u32pair(s.pid, s.tid))
        return false;
    if ((sample_type & KRING_SAMPLE_TIME) && !u64(s.time))
        return false;
    if ((sample_type & KRING_SAMPLE_ID) && !u64(s.id2))
        return false;
    if ((sample_type & KRING_SAMPLE_CPU) && !u32pair(s.cpu, res))
        return false;
    if ((sample_type & KRING_SAMPLE_PERIOD) && !u64(s.period))
        return false;
    if (sample_type & KRING_SAMPLE_CALLCHAIN) {
        if (!u64(s.chain_nr) || s.chain_nr > std::uint64_t(end - p) / 8)
            return false;
        s.chain = p;
        p += 8 * s.chain_nr;
    }
    if (sample_type & KRING_SAMPLE_RAW) {
        if (p + 4 > end)
            return false;
        std::memcpy(&s.raw_size, p, 4);
        p += 4;
        if (p + s.raw_size > end)
            return false;
        s.raw = p;
        p += s.raw_size;
    }
    if ((sample_type & KRING_SAMPLE_SEQ) && !u64(s.seq))
        return false;
    return p == end;
}

// True if @raw holds an intact synthetic payload for sequence number @seq.
inline bool synth_payload_ok(const std::uint8_t* raw, std::uint32_t raw_size, std::uint64_t seq,
                             std::uint32_t* cpu_out = nullptr) {
    kring_synth_payload p;
    if (raw_size < sizeof(p))
        return false;
    std::memcpy(&p, raw, sizeof(p));
    if (p.seq != seq || p.len < sizeof(p) || p.len > raw_size)
        return false;
    const std::uint8_t* data = raw + sizeof(p);
    std::uint32_t n = p.len - sizeof(p);
    for (std::uint32_t i = 0; i < n; i++)
        if (data[i] != kring_synth_byte(seq, i))
            return false;
    if (cpu_out)
        *cpu_out = p.cpu;
    return kring_synth_checksum(seq, data, n) == p.checksum;
}

class raw_channel {
public:
    raw_channel() = default;
    raw_channel(const raw_channel&) = delete;
    raw_channel& operator=(const raw_channel&) = delete;
    ~raw_channel() {
        unmap();
        if (fd >= 0)
            ::close(fd);
    }

    // Each returns 0 or an errno value.
    int open_dev() {
        fd = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
        return fd < 0 ? errno : 0;
    }
    int configure(const kring_attr& a) { return ioctl_arg(KRING_IOC_CONFIGURE, &a); }
    int ioctl0(unsigned long req) { return kt::ioctl0(fd, req); }
    template <class T>
    int ioctl_arg(unsigned long req, T* arg) {
        return ::ioctl(fd, req, arg) < 0 ? errno : 0;
    }
    // KRING_IOC_SET_OUTPUT into the channel open at @target_fd (-1: undo).
    int set_output(int target_fd) {
        return ::ioctl(fd, KRING_IOC_SET_OUTPUT, target_fd) < 0 ? errno : 0;
    }
    int map_ring(unsigned order, bool writable, bool mirror) {
        std::size_t ps = ::sysconf(_SC_PAGESIZE);
        std::size_t pages = std::size_t(1) << order;
        map_len = ps * (1 + (mirror ? 2 : 1) * pages);
        int prot = PROT_READ | (writable ? PROT_WRITE : 0);
        map = ::mmap(nullptr, map_len, prot, MAP_SHARED, fd, 0);
        if (map == MAP_FAILED) {
            map = nullptr;
            return errno;
        }
        ctl = static_cast<kring_ctl_page*>(map);
        data = static_cast<const std::uint8_t*>(map) + ps;
        data_size = ps * pages;
        mirrored = mirror;
        scratch.resize(65536);
        return 0;
    }
    void unmap() {
        if (map)
            ::munmap(map, map_len);
        map = nullptr;
        ctl = nullptr;
    }
    kring_stats stats() {
        kring_stats st;
        if (stats_of(fd, st))
            st.size = 0;
        return st;
    }
    // The channel's sample_type as the kernel reports it: what attr asked
    // for, KRING_SAMPLE_SEQ and the bits its source always writes.
    std::uint64_t sample_type() { return stats().sample_type; }

    // Protocol, perf ring-buffer doc section 2.3: the consumer loads the
    // head with acquire (C, pairs with the kernel's smp_wmb() B before it
    // publishes data_head) and stores the tail with release (D, pairs with
    // the kernel's control dependency A on data_tail).
    std::uint64_t head() const { return __atomic_load_n(&ctl->data_head, __ATOMIC_ACQUIRE); }
    void release(std::uint64_t tail) { __atomic_store_n(&ctl->data_tail, tail, __ATOMIC_RELEASE); }

    // Forward ring: call fn(header, record bytes) for each unread record,
    // then release them all with one tail store. Returns the number of
    // records, or -1 on a malformed record (corruption).
    template <class F>
    long consume(F&& fn) {
        std::uint64_t h = head();
        long n = 0;
        while (tail < h) {
            const std::uint8_t* rec = at(tail, h - tail);
            if (!rec)
                return -1;
            kring_record_header hdr;
            std::memcpy(&hdr, rec, sizeof(hdr));
            fn(hdr, rec);
            tail += hdr.size;
            n++;
        }
        release(tail);
        return n;
    }

    // Bytes of the record at ring position @pos, contiguous (mirror or
    // scratch copy), or nullptr if its header is malformed. @avail bounds
    // the record's size.
    const std::uint8_t* at(std::uint64_t pos, std::uint64_t avail) {
        std::size_t mask = data_size - 1;
        std::size_t off = pos & mask;
        kring_record_header hdr;
        std::memcpy(&hdr, data + off, sizeof(hdr));  // 8-aligned: never split
        if (hdr.size < sizeof(hdr) || hdr.size % 8 || hdr.size > avail || hdr.size > data_size)
            return nullptr;
        if (off + hdr.size <= data_size || mirrored) {
            if (off + hdr.size > data_size)
                wrapped++;
            return data + off;
        }
        std::size_t first = data_size - off;
        std::memcpy(scratch.data(), data + off, first);
        std::memcpy(scratch.data() + first, data, hdr.size - first);
        copied++;
        return scratch.data();
    }

    int fd = -1;
    void* map = nullptr;
    std::size_t map_len = 0;
    kring_ctl_page* ctl = nullptr;
    const std::uint8_t* data = nullptr;
    std::size_t data_size = 0;
    bool mirrored = false;
    std::uint64_t tail = 0;
    std::uint64_t wrapped = 0;  // records read across the end through the mirror
    std::uint64_t copied = 0;   // records read across the end through scratch
    std::vector<std::uint8_t> scratch;
};

// The number on the first line of a /proc file that matches @format (a
// scanf format with one %ld, e.g. "MemAvailable: %ld kB"), -1 when none.
inline long proc_value(const char* path, const char* format) {
    std::FILE* f = std::fopen(path, "r");
    if (!f)
        return -1;
    char line[4096];
    long v = -1;
    while (std::fgets(line, sizeof(line), f))
        if (std::sscanf(line, format, &v) == 1)
            break;
    std::fclose(f);
    return v;
}

// A sysfs value (a kring module parameter, a kernel knob) changed for the
// scope of a test and restored after.
class sysfs_setting {
public:
    explicit sysfs_setting(std::string path) : path_(std::move(path)) { old_ = read(); }
    ~sysfs_setting() {
        if (!old_.empty())
            set(old_);
    }
    sysfs_setting(const sysfs_setting&) = delete;
    sysfs_setting& operator=(const sysfs_setting&) = delete;
    // False when the value cannot be read or written (not root, no such file).
    bool usable() const { return !old_.empty() && ::access(path_.c_str(), W_OK) == 0; }
    bool set(const std::string& v) const { return write_text(path_, v); }
    std::string read() const { return read_sysfs(path_); }

private:
    std::string path_, old_;
};

// kring's module parameter @name, as a sysfs_setting.
class module_param : public sysfs_setting {
public:
    explicit module_param(const char* name)
        : sysfs_setting(std::string("/sys/module/kring/parameters/") + name) {}
};

}  // namespace kt
