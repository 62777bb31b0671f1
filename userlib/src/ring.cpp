// libkring: the control page's figures.
#include "kring/ring.hpp"

#include "kring/barrier.hpp"

namespace kring {

loss_counters read_loss_counters(const ring_view& v) noexcept {
    loss_counters c;
    if (v.kind != ring_kind::kring || !v.ctl)
        return c;
    // Ordered after the caller's latest load_head() (C): see barrier.hpp.
    const kring_ctl_page* p = v.ctl;
    const std::uint32_t size = barrier::load_relaxed32(p->size);
    if (size < KRING_CTL_SIZE_VER1)
        return c;
    c.records_written = barrier::load_relaxed(p->records_written);
    c.records_discarded = barrier::load_relaxed(p->records_discarded);
    c.lost_no_space = barrier::load_relaxed(p->lost_no_space);
    c.lost_too_big = barrier::load_relaxed(p->lost_too_big);
    c.lost_paused = barrier::load_relaxed(p->lost_paused);
    c.lost_overwritten = barrier::load_relaxed(p->lost_overwritten);
    return c;
}

}  // namespace kring
