// libkring: one epoll over many rings (per-CPU channel sets).
//
//	auto p = kring::poller::create();
//	for (unsigned i = 0; i < chans.size(); i++)
//	        p->add(chans[i].fd(), chans[i].ring(), i);
//	for (;;) {
//	        auto ready = p->wait(1000);          // span of tags, no allocation
//	        for (auto tag : *ready) readers[tag].drain(...);
//	}
//
// Before sleeping, wait() arms every kring ring's need_wakeup: it stores
// need_wakeup = 1, issues a full barrier (F, pairing with the kernel's
// smp_mb() E after its data_head store) and re-loads data_head; a ring
// with unread data is reported at once instead of sleeping. So a wake-up
// can never be missed: either the kernel saw need_wakeup and woke the
// poller, or the poller saw the new head. While the caller drains the rings
// wait() returned, need_wakeup is 0 (the kernel does not bother waking a
// consumer that is reading anyway). perf rings have no need_wakeup and are
// simply polled.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include <sys/epoll.h>

#include "kring/fd.hpp"
#include "kring/result.hpp"
#include "kring/ring.hpp"

namespace kring {

class poller {
public:
    static result<poller> create();
    poller(poller&&) noexcept = default;
    poller& operator=(poller&&) noexcept = default;

    // Watch @fd (EPOLLIN) whose ring is @ring; wait() reports @tag.
    result<void> add(int fd, const ring_view& ring, std::uint64_t tag);
    // Sleep up to @timeout_ms (-1: forever) unless a ring has unread data;
    // the tags of the rings that are readable (possibly none on timeout).
    // EINTR is an empty answer.
    result<std::span<const std::uint64_t>> wait(int timeout_ms);

    std::size_t size() const noexcept { return entries_.size(); }
    // Wake-ups avoided because the re-check after F found data.
    std::uint64_t rechecks_hit() const noexcept { return rechecks_hit_; }

private:
    explicit poller(unique_fd ep) : ep_(std::move(ep)) {}
    struct entry {
        ring_view ring;
        std::uint64_t tag;
    };
    unique_fd ep_;
    std::vector<entry> entries_;
    std::vector<std::uint64_t> ready_;  // capacity == entries_.size()
    std::vector<unsigned char> seen_;   // per entry, this round
    std::vector<epoll_event> events_;
    std::uint64_t rechecks_hit_ = 0;
};

}  // namespace kring
