// libkring: the poller.
#include "kring/poller.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/epoll.h>
#include <time.h>

#include "kring/barrier.hpp"

namespace kring {

namespace {

// CLOCK_MONOTONIC, the clock of the control page's wakeup_time.
std::uint64_t mono_ns() noexcept {
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::uint64_t(ts.tv_sec) * 1000000000u + std::uint64_t(ts.tv_nsec);
}

// A hint to the CPU that this is a spin-wait loop.
inline void cpu_relax() noexcept {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield" ::: "memory");
#endif
}

constexpr std::uint64_t min_spin_ns = 10000;

// The bytes a ring of @data_size has above a wake-up at @watermark (0, or
// more than the ring: the default, half the ring).
std::uint64_t room_above(std::uint64_t data_size, std::uint64_t watermark) noexcept {
    if (!watermark || watermark > data_size)
        watermark = data_size / 2;
    return data_size - watermark;
}

}  // namespace

result<poller> poller::create(const poller_options& o) {
    if (o.headroom_latencies == 0 || o.max_spin.count() < 0)
        return error::from_errno(EINVAL,
                                 "poller options: headroom_latencies must be at least 1 and "
                                 "max_spin not negative");
    int ep = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        return error::from_errno(errno, "epoll_create1");
    return poller(unique_fd(ep), o);
}

result<void> poller::add(int fd, const ring_view& ring, std::uint64_t tag) {
    epoll_event ev;
    std::memset(&ev, 0, sizeof(ev));
    ev.events = EPOLLIN;
    ev.data.u64 = entries_.size();
    // Grow every buffer here, so that wait() never allocates.
    entries_.reserve(entries_.size() + 1);
    ready_.reserve(entries_.size() + 1);
    seen_.reserve(entries_.size() + 1);
    events_.reserve(entries_.size() + 1);
    if (::epoll_ctl(ep_.get(), EPOLL_CTL_ADD, fd, &ev) < 0)
        return error::from_errno(errno, "epoll_ctl(EPOLL_CTL_ADD)");
    entry e{ring, tag};
    e.adaptive = ring.kind == ring_kind::kring && !ring.overwrite && ring.ctl &&
                 barrier::load_relaxed32(ring.ctl->size) >= KRING_CTL_SIZE_VER2;
    e.room = room_above(ring.data_size,
                        e.adaptive ? barrier::load_relaxed(ring.ctl->wakeup_watermark) : 0);
    entries_.push_back(e);
    seen_.push_back(0);
    events_.resize(entries_.size());
    return {};
}

bool poller::should_spin(std::uint64_t data_size, std::uint64_t watermark, double rate,
                         std::uint64_t latency_ns, unsigned headroom_latencies) noexcept {
    if (!latency_ns || !(rate > 0) || !data_size)
        return false;
    // Bytes written while the wake-up is on its way, against the room the
    // watermark leaves.
    return rate * double(latency_ns) * double(headroom_latencies) >=
           double(room_above(data_size, watermark));
}

void poller::note(std::size_t i) {
    if (!seen_[i]) {
        seen_[i] = 1;
        ready_.push_back(entries_[i].tag);
    }
}

// Note every forward ring with unread data. (C): the caller reads the
// records below the head loaded here.
void poller::note_unread() {
    for (std::size_t i = 0; i < entries_.size(); i++) {
        const ring_view& r = entries_[i].ring;
        if (!r.overwrite &&
            barrier::load_head(r.ctl->data_head) != barrier::load_relaxed(r.ctl->data_tail))
            note(i);
    }
}

// wait()'s answer: the rings noted. The caller reads them now: they need
// no wake-ups meanwhile.
std::span<const std::uint64_t> poller::ready_rings() {
    for (std::size_t i = 0; i < entries_.size(); i++)
        if (seen_[i] && entries_[i].ring.kind == ring_kind::kring)
            barrier::arm_need_wakeup(entries_[i].ring.ctl->need_wakeup, 0);
    return std::span<const std::uint64_t>(ready_.data(), ready_.size());
}

// Update each adaptive ring's write rate; the spin this wait needs (0:
// none): about two wake-up latencies of the ring that needs the longest.
std::uint64_t poller::spin_budget(std::uint64_t now) {
    std::uint64_t budget = 0;
    for (entry& e : entries_) {
        if (!e.adaptive)
            continue;
        // A figure, not a protocol step: relaxed (C orders nothing here).
        const std::uint64_t head = barrier::load_relaxed(e.ring.ctl->data_head);
        if (e.last_ns && now > e.last_ns) {
            const double inst = double(head - e.last_head) / double(now - e.last_ns);
            e.rate = e.rate > 0 ? (e.rate + inst) / 2 : inst;
        }
        e.last_head = head;
        e.last_ns = now;
        const std::uint64_t wm = barrier::load_relaxed(e.ring.ctl->wakeup_watermark);
        e.room = room_above(e.ring.data_size, wm);
        if (should_spin(e.ring.data_size, wm, e.rate, e.latency_ns, opts_.headroom_latencies))
            budget = std::max(budget, 2 * e.latency_ns);
    }
    if (!budget)
        return 0;
    const auto max = std::uint64_t(std::chrono::nanoseconds(opts_.max_spin).count());
    return std::min(std::max(budget, min_spin_ns), max);
}

// Poll every forward ring's data_head for up to @budget_ns from @start,
// until one holds a batch (a quarter of the room above its watermark: the
// caller's cost per wait is spread over many records, and three quarters
// of that room are left); at the end of the budget, take what there is.
// True if a ring has unread data (noted in ready_).
bool poller::spin(std::uint64_t start, std::uint64_t budget_ns) {
    std::uint64_t now = start;
    bool any = false;
    stats_.spins++;
    for (unsigned round = 0;; round++) {
        bool enough = false;
        any = false;
        for (const entry& e : entries_) {
            if (e.ring.overwrite)
                continue;
            const std::uint64_t unread = barrier::load_relaxed(e.ring.ctl->data_head) -
                                         barrier::load_relaxed(e.ring.ctl->data_tail);
            any |= unread != 0;
            enough |= unread >= std::max<std::uint64_t>(1, e.room / 4);
        }
        if (enough) {
            stats_.spin_batches++;
            break;
        }
        cpu_relax();
        if (round % 16 == 15 && (now = mono_ns()) - start >= budget_ns)
            break;
    }
    if (any) {
        note_unread();
        stats_.spin_hits++;
        now = mono_ns();
    }
    stats_.spin_ns += now - start;
    return !ready_.empty();
}

// After an epoll_wait() that began at @slept_at: for each adaptive ring
// among the @n events, how late its last wake-up came, if it became due
// while the poller slept.
void poller::learn_latencies(int n, std::uint64_t slept_at) {
    const std::uint64_t now = mono_ns();
    for (int k = 0; k < n; k++) {
        entry& e = entries_[std::size_t(events_[std::size_t(k)].data.u64)];
        if (!e.adaptive)
            continue;
        const std::uint64_t due = barrier::load_relaxed(e.ring.ctl->wakeup_time);
        if (due < slept_at || due > now)
            continue;
        std::uint64_t lat = now - due;
        // wakeup_time is the last wake-up that became due. If @due_n > 1
        // did during this sleep, the first came earlier: @due_n - 1 watermarks
        // earlier, at the rate the ring filled while the poller slept (a
        // lower rate than the real one, so a longer time), but never before
        // the sleep began.
        const std::uint64_t due_n = barrier::load_relaxed(e.ring.ctl->wakeups) - e.slept_wakeups;
        const std::uint64_t wm = barrier::load_relaxed(e.ring.ctl->wakeup_watermark);
        const std::uint64_t bytes = barrier::load_relaxed(e.ring.ctl->data_head) - e.slept_head;
        if (due_n >= 2 && wm && bytes) {
            const double earlier =
                double(due_n - 1) * double(wm) * double(now - slept_at) / double(bytes);
            lat = std::min(now - slept_at, lat + std::uint64_t(earlier));
        }
        // A decaying maximum: wake-up latencies have a long tail (one in
        // tens of wake-ups comes several times later than the rest under
        // load or emulation), so one late wake-up counts for about the
        // next 40 (63/64 each time: half after 44).
        e.latency_ns = std::max(lat, e.latency_ns - e.latency_ns / 64);
        stats_.wake_samples++;
        stats_.wake_latency_max_ns = std::max(stats_.wake_latency_max_ns, lat);
    }
    std::uint64_t est = 0;
    for (const entry& e : entries_)
        est = std::max(est, e.latency_ns);
    stats_.wake_latency_ns = est;
}

result<std::span<const std::uint64_t>> poller::wait(int timeout_ms) {
    ready_.clear();
    std::fill(seen_.begin(), seen_.end(), 0);
    if (opts_.mode == wait_mode::adaptive && timeout_ms != 0) {
        const std::uint64_t now = mono_ns();
        std::uint64_t budget = spin_budget(now);
        if (timeout_ms > 0)
            budget = std::min(budget, std::uint64_t(timeout_ms) * 1000000u);
        // need_wakeup is left as it is: rings returned last keep it 0.
        if (budget && spin(now, budget))
            return ready_rings();
    }
    // Before arming: a wake-up that becomes due after the kernel saw the
    // arm is then due after @slept_at.
    const std::uint64_t slept_at = mono_ns();
    // Arm need_wakeup, full barrier (F, pairs with E), re-check the head.
    // Before arming, an adaptive ring's wake-up count and head: figures for
    // learn_latencies(), not protocol steps (relaxed).
    for (entry& e : entries_) {
        if (e.ring.kind != ring_kind::kring)
            continue;
        if (e.adaptive) {
            e.slept_wakeups = barrier::load_relaxed(e.ring.ctl->wakeups);
            e.slept_head = barrier::load_relaxed(e.ring.ctl->data_head);
        }
        barrier::arm_need_wakeup(e.ring.ctl->need_wakeup, 1);
    }
    note_unread();
    if (!ready_.empty()) {
        stats_.rechecks_hit++;
        timeout_ms = 0;  // collect the others that are ready, do not sleep
    }
    stats_.sleeps++;
    int n = ::epoll_wait(ep_.get(), events_.data(), int(events_.size()), timeout_ms);
    if (n < 0 && errno != EINTR)
        return error::from_errno(errno, "epoll_wait");
    if (n > 0)
        stats_.woken++;
    else if (n == 0 && timeout_ms != 0)
        stats_.timeouts++;
    if (n > 0 && timeout_ms != 0)
        learn_latencies(n, slept_at);
    for (int k = 0; k < n; k++)
        note(std::size_t(events_[std::size_t(k)].data.u64));
    return ready_rings();
}

}  // namespace kring
