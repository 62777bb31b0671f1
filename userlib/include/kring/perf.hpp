// libkring: a real perf_event_open ring buffer, read with the same classes.
//
//	perf_event_attr a{};                 // e.g. PERF_TYPE_SOFTWARE / CPU_CLOCK
//	a.size = sizeof(a); a.sample_type = PERF_SAMPLE_TIME; ...
//	auto pr = kring::perf_ring::open(a, -1, 0, 3);   // pid, cpu, 2^3 pages
//	kring::reader rd(pr->ring());
//
// perf's struct perf_event_mmap_page has data_head, data_tail, data_offset
// and data_size at the offsets of kring's control page, so the view's
// ctl pointer is the perf page read as a kring_ctl_page; ring_kind::perf
// tells libkring that kring's own figures (loss counters, need_wakeup,
// timestamp_floor) are not there.
#pragma once

#include <cstdint>

#include <linux/perf_event.h>

#include "kring/fd.hpp"
#include "kring/result.hpp"
#include "kring/ring.hpp"

namespace kring {

class perf_ring {
public:
    // perf_event_open(@attr, @pid, @cpu, -1, PERF_FLAG_FD_CLOEXEC) and map
    // 1 + 2^@pages_order pages. A read-only mapping when
    // @attr.write_backward is set (perf's overwrite mode).
    static result<perf_ring> open(const perf_event_attr& attr, int pid, int cpu,
                                  unsigned pages_order);
    // Map an existing perf event fd (taking ownership of it).
    static result<perf_ring> adopt(unique_fd fd, unsigned pages_order, bool overwrite);

    perf_ring(perf_ring&&) noexcept = default;
    perf_ring& operator=(perf_ring&&) noexcept = default;

    int fd() const noexcept { return fd_.get(); }
    const ring_view& ring() const noexcept { return view_; }
    const perf_event_mmap_page* page() const noexcept {
        return static_cast<const perf_event_mmap_page*>(map_.get());
    }

    result<void> enable();
    result<void> disable();
    // PERF_EVENT_IOC_PAUSE_OUTPUT (Linux 4.7+), then an RCU grace period
    // (membarrier(MEMBARRIER_CMD_GLOBAL)) for the writers already past
    // perf's pause check: on return data_head and the window below it stay
    // as they are until resume_output(). Without that membarrier (ENOSYS,
    // or EINVAL with nohz_full) the thread runs on every online CPU in
    // turn instead; fails (output resumed) where it may not (EPERM).
    result<void> pause_output();
    result<void> resume_output();

    // As channel::snapshot(): @rd.read(@f) with output paused.
    template <class Reader, class F>
    auto snapshot(Reader& rd, F&& f) -> decltype(rd.read(f)) {
        if (auto p = pause_output(); !p)
            return p.error();
        auto r = rd.read(f);
        if (auto q = resume_output(); !q)
            return q.error();
        return r;
    }

private:
    perf_ring(unique_fd fd) : fd_(std::move(fd)) {}
    unique_fd fd_;
    unique_mapping map_;
    ring_view view_;
};

}  // namespace kring
