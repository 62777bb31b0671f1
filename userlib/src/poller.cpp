// libkring: the poller.
#include "kring/poller.hpp"

#include <cerrno>
#include <cstring>

#include <sys/epoll.h>

#include "kring/barrier.hpp"

namespace kring {

result<poller> poller::create() {
    int ep = ::epoll_create1(EPOLL_CLOEXEC);
    if (ep < 0)
        return error::from_errno(errno, "epoll_create1");
    return poller(unique_fd(ep));
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
    entries_.push_back({ring, tag});
    seen_.push_back(0);
    events_.resize(entries_.size());
    return {};
}

result<std::span<const std::uint64_t>> poller::wait(int timeout_ms) {
    ready_.clear();
    std::fill(seen_.begin(), seen_.end(), 0);
    auto note = [&](std::size_t i) {
        if (!seen_[i]) {
            seen_[i] = 1;
            ready_.push_back(entries_[i].tag);
        }
    };
    // Arm need_wakeup, full barrier (F, pairs with E), re-check the head.
    for (std::size_t i = 0; i < entries_.size(); i++) {
        ring_view& r = entries_[i].ring;
        if (r.kind == ring_kind::kring)
            barrier::arm_need_wakeup(r.ctl->need_wakeup, 1);
    }
    for (std::size_t i = 0; i < entries_.size(); i++) {
        ring_view& r = entries_[i].ring;
        if (r.overwrite)
            continue;
        if (barrier::load_head(r.ctl->data_head) != barrier::load_relaxed(r.ctl->data_tail))
            note(i);
    }
    if (!ready_.empty()) {
        rechecks_hit_++;
        timeout_ms = 0;  // collect the others that are ready, do not sleep
    }
    int n = ::epoll_wait(ep_.get(), events_.data(), int(events_.size()), timeout_ms);
    if (n < 0 && errno != EINTR)
        return error::from_errno(errno, "epoll_wait");
    for (int k = 0; k < n; k++)
        note(std::size_t(events_[k].data.u64));
    // The caller reads these now: no wake-ups needed meanwhile.
    for (std::size_t i = 0; i < entries_.size(); i++)
        if (seen_[i] && entries_[i].ring.kind == ring_kind::kring)
            barrier::arm_need_wakeup(entries_[i].ring.ctl->need_wakeup, 0);
    return std::span<const std::uint64_t>(ready_.data(), ready_.size());
}

}  // namespace kring
