// libFuzzer: the ring core (kmod/ring.c, built for the host with
// tests/host/kring_host_shim.h) driven by the fuzzer's choices: records of
// any size committed, discarded or left partial, written in chunks or in
// place (kring_output_ptr()), into separate pages or a data area mapped
// twice in a row (KRING_RING_MIRRORED), the ring paused and resumed,
// losses flushed; at every kring_irq_point() an
// "interrupt" may run a nested writer (up to four deep) or the consumer
// (libkring's reader, as if on another CPU) may read what is published.
// Checked all along: the consumer only ever sees complete, intact records;
// at the end, after every loss is flushed: every sequence number given out
// was read once as a record, once as a cancelled reservation (PAD), or in
// exactly one LOST record's count, and the ring's counters agree.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "fuzz_input.hpp"
#include "kring/reader.hpp"

extern "C" {
#include "ring.h"
#include "test_record.h"
}
#undef min
#undef max
#undef likely
#undef unlikely

namespace {

constexpr unsigned page = 4096;

bool known(std::uint32_t type) noexcept {
    return type == KRING_TEST_RECORD_TYPE || kring::default_known_type(type);
}

struct state {
    kf::input* in = nullptr;
    kring_ring rb{};
    std::unique_ptr<kring_ctl_page> ctl;
    std::unique_ptr<std::byte[]> area;
    std::byte* mirror = nullptr;  // or the data area mapped twice in a row
    std::size_t mirror_len = 0;
    std::unique_ptr<kring::reader> rd;
    unsigned depth = 0;              // writers in flight
    unsigned irqs_left = 0;          // interrupts this input may still raise
    std::vector<std::uint8_t> seen;  // per seq: 0, or 1 record / 2 pad / 3 lost
    std::uint64_t lost_reported = 0;
    std::uint64_t bare_records = 0, bare_pads = 0;  // 8 bytes: no room for a seq
};
state* g;

void mark(std::uint64_t seq, std::uint8_t how) {
    KF_CHECK(seq < (1u << 22));
    if (seq >= g->seen.size())
        g->seen.resize(seq + 1);
    KF_CHECK(g->seen[seq] == 0);  // each sequence number accounted once
    g->seen[seq] = how;
}

void check(const kring::record& r) {
    auto h = r.header();
    if (h.type == KRING_TEST_RECORD_TYPE) {
        if (r.size() == 8) {
            g->bare_records++;
            return;
        }
        std::uint64_t w[2] = {};
        std::memcpy(w, r.body().data(), std::min<std::size_t>(16, r.body().size()));
        mark(w[0], 1);
        const std::size_t words = r.body().size() / 8;
        for (std::size_t j = 1; j < words; j++) {
            std::uint64_t v;
            std::memcpy(&v, r.body().data() + 8 * j, 8);
            KF_CHECK(v == kring_test_word(w[0], j) || v == 0);  // 0: a partial record's zeroed tail
        }
    } else if (h.type == KRING_RECORD_PAD) {
        if (r.size() >= 16) {
            std::uint64_t s;
            std::memcpy(&s, r.body().data(), 8);
            mark(s, 2);
        } else {
            g->bare_pads++;
        }
    } else if (h.type == KRING_RECORD_LOST) {
        auto l = kring::parse_lost(r);
        KF_CHECK(l && l->lost > 0 && l->has_range);
        KF_CHECK(l->last_seq - l->first_seq + 1 >= l->lost);
        g->lost_reported += l->lost;
    } else {
        KF_CHECK(!"a record type the ring core never writes");
    }
}

void consume(unsigned max) {
    for (unsigned i = 0; i < max; i++) {
        auto r = g->rd->next();
        if (!r)
            break;
        check(*r);
    }
    KF_CHECK(!g->rd->corrupted());
    g->rd->release();
}

void write_one();

void irq_hook(kring_ring*) {
    if (!g->irqs_left || !g->in->left())
        return;
    switch (g->in->below(8)) {
        case 0:
            if (g->depth < 4) {
                g->irqs_left--;
                write_one();
            }
            break;
        case 1:
            g->irqs_left--;
            consume(g->in->below(4));
            break;
        default:
            break;
    }
}

void write_one() {
    kf::input& in = *g->in;
    unsigned size = 8 * (1 + in.below(in.chance(90) ? 64 : 1200));  // up to a few pages
    unsigned end = in.below(8);  // 0: discard, 1: partial, 2: in place, else commit
    unsigned chunk = 8 * in.below(8);
    kring_output_handle h;
    g->depth++;
    int err = kring_output_begin(&h, &g->rb, size, kring_test_time(0));
    if (!err) {
        std::vector<std::uint64_t> body((h.rec_size - 8) / 8);
        for (std::size_t j = 0; j < body.size(); j++)
            body[j] = j ? kring_test_word(h.seq, j) : h.seq;
        kring_record_header hdr{KRING_TEST_RECORD_TYPE, 0, static_cast<std::uint16_t>(h.rec_size)};
        void* at = end == 2 ? kring_output_ptr(&h) : nullptr;
        if (end == 0) {
            kring_output_discard(&h);
        } else if (at) {
            // In place: the whole record in one piece (always, mirrored).
            KF_CHECK(h.rem == 0);
            std::memcpy(at, &hdr, sizeof(hdr));
            if (!body.empty())
                std::memcpy(static_cast<char*>(at) + sizeof(hdr), body.data(), body.size() * 8);
            kring_output_end(&h);
        } else {
            KF_CHECK(end != 2 || !g->mirror);
            kring_output_copy(&h, &hdr, sizeof(hdr));
            const char* p = reinterpret_cast<const char*>(body.data());
            unsigned left = static_cast<unsigned>(body.size() * 8);
            if (end == 1 && left)
                left = 8;  // seq only: end zeroes the rest
            while (left) {
                unsigned n = chunk && chunk < left ? chunk : left;
                kring_output_copy(&h, p, n);
                p += n;
                left -= n;
            }
            kring_output_end(&h);
        }
    } else {
        KF_CHECK(err == -ENOSPC || err == -E2BIG || err == -EAGAIN);
    }
    g->depth--;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    kf::input in(data, size);
    state s;
    g = &s;
    s.in = &in;
    s.irqs_left = 64;
    const unsigned nr_pages = 1u << in.below(3);
    s.ctl = std::make_unique<kring_ctl_page>();
    std::memset(s.ctl.get(), 0, sizeof(*s.ctl));
    // Half the inputs write into a data area mapped twice in a row, as
    // kring.ko maps a channel's (KRING_RING_MIRRORED).
    const bool mirrored = in.below(2);
    std::byte* area;
    if (mirrored) {
        s.mirror_len = std::size_t(nr_pages) * page;
        int fd = memfd_create("fuzz_ring", 0);
        void* m = mmap(nullptr, 2 * s.mirror_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        KF_CHECK(fd >= 0 && m != MAP_FAILED && ftruncate(fd, off_t(s.mirror_len)) == 0);
        s.mirror = static_cast<std::byte*>(m);
        for (int i = 0; i < 2; i++)
            KF_CHECK(mmap(s.mirror + i * s.mirror_len, s.mirror_len, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED);
        close(fd);
        area = s.mirror;
    } else {
        s.area = std::make_unique<std::byte[]>(std::size_t(nr_pages) * page);
        area = s.area.get();
    }
    std::vector<void*> pages(nr_pages);
    for (unsigned i = 0; i < nr_pages; i++)
        pages[i] = area + std::size_t(i) * page;
    KF_CHECK(kring_ring_init(&s.rb, s.ctl.get(), pages.data(), nr_pages,
                             mirrored ? KRING_RING_MIRRORED : 0, 7) == 0);
    kring::ring_view v;
    v.ctl = s.ctl.get();
    v.data = area;
    v.data_size = std::uint64_t(nr_pages) * page;
    kring::reader_options o;
    o.known_type = known;
    o.skip_pad = false;
    s.rd = std::make_unique<kring::reader>(v, o);
    kring_host_warnings = 0;
    kring_host_irq_hook = irq_hook;
    bool paused = false;
    while (in.left()) {
        switch (in.below(10)) {
            case 0:
                consume(in.below(16));
                break;
            case 1:
                (void)kring_ring_flush_lost(&s.rb);
                break;
            case 2:
                paused = !paused;
                kring_ring_set_paused(&s.rb, paused);
                break;
            default:
                write_one();
                break;
        }
    }
    kring_host_irq_hook = nullptr;
    kring_ring_set_paused(&s.rb, false);
    // Drain, and report every loss (one LOST record needs room).
    for (int i = 0; i < 64; i++) {
        consume(~0u);
        if (kring_ring_flush_lost(&s.rb))
            break;
    }
    consume(~0u);
    kring_ring_counts c;
    kring_ring_read_counts(&s.rb, &c);
    std::uint64_t records = s.bare_records, pads = s.bare_pads;
    for (auto x : s.seen) {
        records += x == 1;
        pads += x == 2;
    }
    const std::uint64_t lost = c.lost_no_space + c.lost_too_big + c.lost_paused;
    KF_CHECK(c.produced == c.written + c.discarded + lost);
    KF_CHECK(s.lost_reported == lost);
    KF_CHECK(records == c.written);
    KF_CHECK(pads == c.discarded);
    KF_CHECK(kring_host_warnings == 0);
    if (s.mirror)
        munmap(s.mirror, 2 * s.mirror_len);
    return 0;
}
