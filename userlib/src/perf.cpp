// libkring: perf_event_open ring buffers.
#include "kring/perf.hpp"

#include <cerrno>
#include <fstream>
#include <string>

#include <linux/membarrier.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kring/barrier.hpp"
#include "kring/cpus.hpp"

namespace kring {

namespace {

// Without membarrier() (a kernel built without CONFIG_MEMBARRIER): this
// thread runs on every online CPU in turn. perf writes from interrupt,
// NMI or preemption-disabled context, so once this thread has run on a
// CPU, no writer that began there before is half-way through a record.
// Refused (EPERM) when an online CPU is outside this thread's affinity.
result<void> run_on_every_cpu() {
    std::ifstream f("/sys/devices/system/cpu/online");
    std::string list;
    std::getline(f, list);
    const auto online = parse_cpu_list(list);
    if (!online)
        return error(EIO, "/sys/devices/system/cpu/online: '" + list + "'");
    cpu_set_t old;
    if (::sched_getaffinity(0, sizeof(old), &old) != 0)
        return error::from_errno(errno, "sched_getaffinity");
    result<void> r;
    for (unsigned cpu : *online) {
        if (cpu >= CPU_SETSIZE || !CPU_ISSET(cpu, &old)) {
            r = error(EPERM, "CPU " + std::to_string(cpu) + " is outside this thread's affinity");
            break;
        }
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpu, &one);
        // Returns once this thread has been moved to @cpu and runs there.
        if (::sched_setaffinity(0, sizeof(one), &one) != 0 || ::sched_getcpu() != int(cpu)) {
            r = error::from_errno(errno ? errno : EAGAIN, "running on CPU " + std::to_string(cpu));
            break;
        }
    }
    (void)::sched_setaffinity(0, sizeof(old), &old);
    return r;
}

}  // namespace

result<perf_ring> perf_ring::open(const perf_event_attr& attr, int pid, int cpu,
                                  unsigned pages_order) {
    long fd = ::syscall(SYS_perf_event_open, &attr, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);
    if (fd < 0)
        return error::from_errno(errno, "perf_event_open");
    return adopt(unique_fd(int(fd)), pages_order, attr.write_backward);
}

result<perf_ring> perf_ring::adopt(unique_fd fd, unsigned pages_order, bool overwrite) {
    if (pages_order > 20)
        return error(EINVAL, "perf ring of 2^" + std::to_string(pages_order) + " pages");
    const std::size_t ps = std::size_t(::sysconf(_SC_PAGESIZE));
    const std::size_t len = ps + (ps << pages_order);
    perf_ring pr(std::move(fd));
    auto m = unique_mapping::map(pr.fd(), len, overwrite ? PROT_READ : PROT_READ | PROT_WRITE, 0,
                                 "mmap of the perf ring buffer");
    if (!m)
        return m.error();
    pr.map_ = std::move(*m);
    auto* ctl = static_cast<kring_ctl_page*>(pr.map_.get());
    // data_offset/data_size exist since Linux 4.1; 0 means the old layout.
    std::uint64_t off = barrier::load_relaxed(ctl->data_offset);
    std::uint64_t size = barrier::load_relaxed(ctl->data_size);
    if (!off)
        off = ps;
    if (!size)
        size = ps << pages_order;
    if (off + size > len || !size || (size & (size - 1)))
        return error(EPROTO, "perf mmap page describes an invalid data area");
    pr.view_.ctl = ctl;
    pr.view_.data = static_cast<const std::byte*>(pr.map_.get()) + off;
    pr.view_.data_size = size;
    pr.view_.mirrored = false;
    pr.view_.overwrite = overwrite;
    pr.view_.kind = ring_kind::perf;
    return pr;
}

namespace {
result<void> perf_ioctl(int fd, unsigned long req, unsigned long arg, const char* what) {
    if (::ioctl(fd, req, arg) < 0)
        return error::from_errno(errno, what);
    return {};
}
}  // namespace

result<void> perf_ring::enable() {
    return perf_ioctl(fd(), PERF_EVENT_IOC_ENABLE, 0, "PERF_EVENT_IOC_ENABLE");
}
result<void> perf_ring::disable() {
    return perf_ioctl(fd(), PERF_EVENT_IOC_DISABLE, 0, "PERF_EVENT_IOC_DISABLE");
}
result<void> perf_ring::pause_output() {
    if (auto p = perf_ioctl(fd(), PERF_EVENT_IOC_PAUSE_OUTPUT, 1, "PERF_EVENT_IOC_PAUSE_OUTPUT");
        !p)
        return p;
    // The ioctl only sets the buffer's paused flag: a writer that tested it
    // before (perf's __perf_output_begin(), under rcu_read_lock() until
    // perf_output_end() has published data_head) still writes its record,
    // below data_head, i.e. over the oldest bytes of the window a reader is
    // about to walk. membarrier(MEMBARRIER_CMD_GLOBAL) is synchronize_rcu():
    // when it returns, those writers are done and data_head is final; a
    // writer that starts later sees the flag. With one CPU online the kernel
    // skips the grace period: perf writes from interrupt, NMI or
    // preemption-disabled context, so no writer is half-way through a
    // record while this thread runs on that CPU.
    // Without membarrier() (ENOSYS, or EINVAL on nohz_full): this thread
    // visits every online CPU instead (run_on_every_cpu()).
    if (::syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) != 0) {
        const int e = errno;
        result<void> r = error::from_errno(e, "membarrier(MEMBARRIER_CMD_GLOBAL)");
        if (e == ENOSYS || e == EINVAL)
            r = run_on_every_cpu();
        if (!r) {
            (void)resume_output();
            return r.error().with_context(
                "PERF_EVENT_IOC_PAUSE_OUTPUT, waiting for perf's writers");
        }
    }
    return {};
}
result<void> perf_ring::resume_output() {
    return perf_ioctl(fd(), PERF_EVENT_IOC_PAUSE_OUTPUT, 0, "PERF_EVENT_IOC_PAUSE_OUTPUT");
}

}  // namespace kring
