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
//
// Adaptive waiting (poller_options::mode, on by default): a wake-up comes
// some time after it became due (irq_work, then the scheduler), and
// meanwhile the producer keeps writing into the room left above the
// watermark. For every kring ring the poller measures the write rate (the
// head's advance between wait() calls) and, from the control page's
// wakeup_time, how late each wake-up reached it. When the room above the
// watermark would last less than headroom_latencies wake-up latencies at
// that rate, sleeping risks a full ring: wait() then polls data_head (the
// rings it returned last keep need_wakeup 0, so the kernel issues no
// wake-ups meanwhile) until a ring holds a quarter of that room, for about
// two latencies at most (and max_spin); with nothing unread by then it
// sleeps as usual. When the producer slows down the measured rate falls
// and the poller sleeps again. Spinning costs CPU time (stats() counts
// it); wait_mode::sleep never spins.
#pragma once

#include <chrono>
#include <cstdint>
#include <span>
#include <vector>

#include <sys/epoll.h>

#include "kring/fd.hpp"
#include "kring/result.hpp"
#include "kring/ring.hpp"

namespace kring {

// How poller::wait() waits for data.
enum class wait_mode {
    adaptive,  // poll data_head briefly when a wake-up would come too late
    sleep,     // always sleep until woken or the timeout
};

struct poller_options {
    wait_mode mode = wait_mode::adaptive;
    // Spin when the room above a ring's watermark lasts fewer than this many
    // wake-up latencies at the ring's write rate.
    unsigned headroom_latencies = 4;
    // The longest one spin lasts before the poller sleeps after all.
    std::chrono::microseconds max_spin{2000};
};

// What the poller did since create().
struct poller_stats {
    std::uint64_t sleeps = 0;               // epoll_wait() calls
    std::uint64_t woken = 0;                // ... that returned a ring (woken, or a ready fd)
    std::uint64_t timeouts = 0;             // ... that slept until the timeout, nothing ready
    std::uint64_t rechecks_hit = 0;         // wake-ups avoided: the re-check after F found data
    std::uint64_t spins = 0;                // waits that polled data_head instead of sleeping
    std::uint64_t spin_hits = 0;            // ... and found data before the spin ran out
    std::uint64_t spin_batches = 0;         // ... ended early: a ring held a batch
    std::uint64_t spin_ns = 0;              // time spent polling
    std::uint64_t wake_samples = 0;         // wake-ups whose latency was measured
    std::uint64_t wake_latency_max_ns = 0;  // the longest of them
    std::uint64_t wake_latency_ns = 0;      // the current estimate, largest over the rings
};

class poller {
public:
    static result<poller> create(const poller_options& o = {});
    poller(poller&&) noexcept = default;
    poller& operator=(poller&&) noexcept = default;

    // Watch @fd (EPOLLIN) whose ring is @ring; wait() reports @tag.
    result<void> add(int fd, const ring_view& ring, std::uint64_t tag);
    // Wait up to @timeout_ms (-1: forever) unless a ring has unread data;
    // the tags of the rings that are readable (possibly none on timeout).
    // EINTR is an empty answer.
    result<std::span<const std::uint64_t>> wait(int timeout_ms);

    std::size_t size() const noexcept { return entries_.size(); }
    // Wake-ups avoided because the re-check after F found data.
    std::uint64_t rechecks_hit() const noexcept { return stats_.rechecks_hit; }
    const poller_stats& stats() const noexcept { return stats_; }

    // The adaptive rule alone: does a ring of @data_size bytes, woken
    // @watermark bytes after the last wake-up (0: half the ring), written
    // at @rate bytes per ns, whose wake-ups come @latency_ns late, fill up
    // within @headroom_latencies latencies after a wake-up became due?
    static bool should_spin(std::uint64_t data_size, std::uint64_t watermark, double rate,
                            std::uint64_t latency_ns, unsigned headroom_latencies) noexcept;

private:
    poller(unique_fd ep, const poller_options& o) : ep_(std::move(ep)), opts_(o) {}
    struct entry {
        ring_view ring;
        std::uint64_t tag;
        bool adaptive = false;  // a forward kring ring with wakeup_time
        std::uint64_t last_head = 0;
        std::uint64_t last_ns = 0;     // when last_head was read; 0: never
        double rate = 0;               // bytes per ns, smoothed
        std::uint64_t latency_ns = 0;  // wake-up latency, a decaying maximum
        std::uint64_t room = 0;        // bytes above the watermark (room_above())
        // When the poller last went to sleep: the kernel's count of wake-ups
        // issued and data_head, to tell a wake-up so late that more became due.
        std::uint64_t slept_wakeups = 0;
        std::uint64_t slept_head = 0;
    };
    std::uint64_t spin_budget(std::uint64_t now);
    bool spin(std::uint64_t start, std::uint64_t budget_ns);
    void note(std::size_t i);
    void note_unread();
    std::span<const std::uint64_t> ready_rings();
    void learn_latencies(int n, std::uint64_t slept_at);

    unique_fd ep_;
    poller_options opts_;
    std::vector<entry> entries_;
    std::vector<std::uint64_t> ready_;  // capacity == entries_.size()
    std::vector<unsigned char> seen_;   // per entry, this round
    std::vector<epoll_event> events_;
    poller_stats stats_;
};

}  // namespace kring
