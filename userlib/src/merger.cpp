// libkring: the time-ordered merger.
#include "kring/merger.hpp"

namespace kring {

std::size_t merger::add(reader& r, std::uint64_t sample_type) {
    source s;
    s.r = &r;
    s.sample_type = sample_type;
    src_.push_back(s);
    return src_.size() - 1;
}

std::uint64_t merger::now() const noexcept {
    if (o_.now)
        return o_.now(o_.now_ctx);
    timespec ts;
    clock_gettime(o_.clock, &ts);
    return std::uint64_t(ts.tv_sec) * 1'000'000'000ULL + std::uint64_t(ts.tv_nsec);
}

bool merger::fill(source& s) noexcept {
    s.pending = s.r->next();
    if (!s.pending)
        return !s.r->corrupted();
    auto t = record_time(*s.pending, s.sample_type);
    s.timed = t.has_value();
    s.time = t.value_or(0);
    return true;
}

bool merger::allows(source& s, std::uint64_t t, bool& refilled) noexcept {
    // The floor first (acquire), then the head (C, inside next()): a floor
    // published after the records below it were.
    const ring_view& v = s.r->view();
    std::uint64_t floor = 0;
    if (v.kind == ring_kind::kring)
        floor = barrier::load_floor(v.ctl->timestamp_floor);
    // Without a floor the window decides, against a clock read BEFORE the
    // source is found empty: a record that was not there yet is published
    // after this reading, so (within the window of its time) its time is
    // >= clock - window_ns >= t. A reading taken after the look would also
    // count the time in between, in which a record may have come.
    const bool by_window = !floor && !s.finished;
    const std::uint64_t clock = by_window ? now() : 0;
    if (!fill(s))
        return false;
    if (s.pending) {
        refilled = true;
        return true;
    }
    if (s.finished)
        return true;
    if (floor) {
        if (floor >= t) {
            floors_used_++;
            return true;
        }
        return false;
    }
    if (clock >= t + o_.window_ns) {
        windows_used_++;
        return true;
    }
    return false;
}

}  // namespace kring
