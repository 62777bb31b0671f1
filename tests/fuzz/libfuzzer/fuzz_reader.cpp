// libFuzzer: libkring's forward and overwrite readers over a ring whose
// control page and data are corrupt (anything a writable mapping, a
// broken producer or a hostile process sharing the mapping could leave).
// The readers must stop with a corruption report, never read outside the
// data area, and never hand out a record that breaks the header rules.
#include "fuzz_ring_view.hpp"
#include "kring/reader.hpp"

namespace {

void check(const kf::fuzz_ring& fr, const kring::record& r) {
    KF_CHECK(r.size() >= sizeof(kring_record_header) && r.size() % 8 == 0);
    KF_CHECK(r.header().size == r.size());
    KF_CHECK(fr.holds(r));
    if (auto l = kring::parse_lost(r, fr.view.kind))
        (void)l->lost;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kf::input in(data, size);
    kf::fuzz_ring fr(in);
    kring::reader_options o;
    o.skip_pad = in.chance(50);
    if (fr.view.overwrite) {
        kring::overwrite_reader ow(fr.view, o);
        std::size_t n = 0;
        auto got = ow.read([&](const kring::record& r) {
            check(fr, r);
            n++;
        });
        KF_CHECK(!got || *got == n);
        return 0;
    }
    kring::reader rd(fr.view, o);
    for (int round = 0; round < 3; round++) {
        std::uint64_t prev = rd.cursor();
        while (auto r = rd.next()) {
            check(fr, *r);
            // Positions are free-running (they wrap at 2^64): each record
            // follows the previous one, within one data area.
            KF_CHECK(r->position() - prev <= fr.view.data_size);
            prev = r->position() + r->size();
        }
        if (rd.corrupted()) {
            (void)rd.corruption_error();
            rd.reset_corruption();
        }
        switch (in.below(3)) {
            case 0:
                rd.release();
                break;
            case 1:
                rd.release_to(in.take<std::uint64_t>());
                break;
            default: {
                auto n = rd.drain([&](const kring::record& r) { check(fr, r); }, in.below(8));
                (void)n;
            }
        }
        // The producer (or a hostile sharer) moves data_head again.
        if (in.chance(50))
            fr.ctl->data_head += in.take<std::uint16_t>() & ~7u;
    }
    (void)rd.pending_bytes();
    (void)rd.losses();
    return 0;
}
