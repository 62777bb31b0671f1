// libkring: merging per-CPU rings into one stream ordered by time.
//
//	kring::merger m;
//	for (auto& rd : readers) m.add(rd, sample_type);
//	for (;;) {
//	        poller.wait(...);
//	        m.drain([](std::size_t src, const kring::record& r, std::uint64_t t) { ... });
//	}
//	m.flush(...);                              // all producers stopped
//
// Exact merge. Each source holds at most one pending record (its next one,
// in place in the ring, not released). The merger emits the pending record
// with the smallest time t only when every other source either has a
// pending record with time >= t, or has none and guarantees that none
// below t can still come: it is finished and drained, or its control
// page's timestamp_floor (the lowest time any future record of that ring
// can carry; loaded with acquire BEFORE its data_head, see barrier.hpp) is
// >= t. Otherwise drain() stops and returns; call it again after the next
// poll. The output is then exactly ordered, whatever the interleaving.
//
// Bounded-window fallback. A source that offers no floor (timestamp_floor
// 0: perf buffers, kring rings of kernels without it) is instead assumed to
// publish every record within merge_options::window_ns of its timestamp:
// while such a source is empty, a record with time t is emitted once the
// record clock (CLOCK_MONOTONIC, kring's and perf's use_clockid clock), read
// before the source is found empty, has passed t + window_ns. A record
// published later than that may come out of order; windows_used() counts
// the emissions that relied on the window.
//
// Records without a timestamp (LOST, perf's records without TIME) are
// emitted as soon as they are at the front of their source: they keep
// their place in their own source's order. Emitted records are released
// (data_tail, one store per source per drain) after the callback returned.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <optional>
#include <vector>

#include "kring/barrier.hpp"
#include "kring/reader.hpp"
#include "kring/result.hpp"

namespace kring {

struct merge_options {
    std::uint64_t window_ns = 10'000'000;  // fallback window, see above
    clockid_t clock = CLOCK_MONOTONIC;
    // The record clock's current time; nullptr reads @clock. (Tests.)
    std::uint64_t (*now)(void* ctx) = nullptr;
    void* now_ctx = nullptr;
};

class merger {
public:
    explicit merger(merge_options o = {}) : o_(o) {}

    // Add a source (the reader is not owned and must outlive the merger).
    // Returns its index, the first argument of the callbacks.
    std::size_t add(reader& r, std::uint64_t sample_type);
    // The source's producer has stopped: once drained it constrains nothing.
    void finish(std::size_t source) { src_[source].finished = true; }

    // Emit every record that can be emitted exactly now, in time order:
    // f(source, record, time) (time 0 for records without one). Returns the
    // number emitted, or EBADMSG when a source's reader found corruption.
    template <class F>
    result<std::size_t> drain(F&& f) {
        return run(f, false);
    }
    // Emit everything pending now, in time order, ignoring floors and the
    // window (end of stream, every producer stopped).
    template <class F>
    result<std::size_t> flush(F&& f) {
        return run(f, true);
    }

    std::uint64_t windows_used() const noexcept { return windows_used_; }
    std::uint64_t floors_used() const noexcept { return floors_used_; }
    std::size_t size() const noexcept { return src_.size(); }

private:
    struct source {
        reader* r = nullptr;
        std::uint64_t sample_type = 0;
        std::optional<record> pending;
        std::uint64_t time = 0;
        bool timed = false;
        bool finished = false;
    };

    std::uint64_t now() const noexcept;
    // Fill @s's pending slot; false on corruption.
    bool fill(source& s) noexcept;
    // May @c's record at time @t go out with respect to empty source @s?
    // (May fill @s.)
    bool allows(source& s, std::uint64_t t, bool& refilled) noexcept;

    template <class F>
    result<std::size_t> run(F& f, bool flush);

    merge_options o_;
    std::vector<source> src_;
    std::uint64_t windows_used_ = 0, floors_used_ = 0;
};

template <class F>
result<std::size_t> merger::run(F& f, bool flush) {
    std::size_t n = 0;
    bool corrupt = false;
    for (;;) {
        // Fill the pending slots; timeless records go out at once.
        for (auto& s : src_) {
            for (;;) {
                if (!s.pending && !fill(s)) {
                    corrupt = true;
                    break;
                }
                if (!s.pending || s.timed)
                    break;
                f(std::size_t(&s - src_.data()), static_cast<const record&>(*s.pending),
                  std::uint64_t(0));
                s.pending.reset();
                n++;
            }
        }
        if (corrupt)
            break;
        source* c = nullptr;
        for (auto& s : src_)
            if (s.pending && (!c || s.time < c->time))
                c = &s;
        if (!c)
            break;
        bool ok = true, refilled = false;
        if (!flush) {
            for (auto& s : src_) {
                if (&s == c || s.pending)
                    continue;
                if (!allows(s, c->time, refilled)) {
                    ok = false;
                    break;
                }
                if (refilled)
                    break;
            }
        }
        if (refilled)
            continue;  // a source got a record: choose again
        if (!ok)
            break;
        f(std::size_t(c - src_.data()), static_cast<const record&>(*c->pending), c->time);
        c->pending.reset();
        n++;
    }
    // One store-release of each data_tail, up to the pending record.
    for (auto& s : src_) {
        if (s.pending)
            s.r->release_to(s.pending->position());
        else
            s.r->release();
    }
    for (auto& s : src_)
        if (s.r->corrupted())
            return s.r->corruption_error();
    return n;
}

}  // namespace kring
