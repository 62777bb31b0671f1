// No allocation in the steady-state read path: this binary replaces the
// global operator new/delete and wraps malloc/calloc/realloc (linked with
// -Wl,--wrap=...) to count every allocation made while counting is on,
// then reads through every libkring reader in a loop.
#include <gtest/gtest.h>

#include <sys/eventfd.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <new>
#include <vector>

#include "ring_views.hpp"
#include "kring/aux.hpp"
#include "kring/merger.hpp"
#include "kring/poller.hpp"
#include "kring/reader.hpp"

namespace {
std::atomic<bool> g_counting{false};
std::atomic<long> g_allocs{0};
void note() {
    if (g_counting.load(std::memory_order_relaxed))
        g_allocs.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

extern "C" {
void* __real_malloc(std::size_t);
void* __real_calloc(std::size_t, std::size_t);
void* __real_realloc(void*, std::size_t);
void* __wrap_malloc(std::size_t n) {
    note();
    return __real_malloc(n);
}
void* __wrap_calloc(std::size_t a, std::size_t b) {
    note();
    return __real_calloc(a, b);
}
void* __wrap_realloc(void* p, std::size_t n) {
    note();
    return __real_realloc(p, n);
}
}

void* operator new(std::size_t n) {
    note();
    if (void* p = std::malloc(n ? n : 1))
        return p;
    throw std::bad_alloc();
}
void* operator new[](std::size_t n) { return operator new(n); }
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
    note();
    return std::malloc(n ? n : 1);
}
void* operator new[](std::size_t n, const std::nothrow_t& t) noexcept { return operator new(n, t); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }

using kt::host_ring;
using kt::write_sample;

namespace {

constexpr std::uint64_t st = KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ;

struct counting {
    counting() {
        g_allocs = 0;
        g_counting = true;
    }
    ~counting() { g_counting = false; }
};

TEST(Alloc, CounterWorks) {
    // The test below could not fail if the hooks did not count.
    long before;
    {
        counting c;
        std::vector<int> v(100);
        void* p = std::malloc(10);
        std::free(p);
        before = g_allocs;
        EXPECT_EQ(v.size(), 100u);
    }
    EXPECT_GE(before, 2);
}

TEST(Alloc, SteadyStateReadingAllocatesNothing) {
    host_ring a(2, kt::mapping::plain), b(2, kt::mapping::mirrored),
        ow(2, kt::mapping::plain, KRING_RING_OVERWRITE);
    kring::reader ra(kt::view_of(a)), rb(kt::view_of(b));
    kring::overwrite_reader ro(kt::view_of(ow));
    kring::merger m;
    m.add(ra, st);
    m.add(rb, st);
    int ea = ::eventfd(0, EFD_CLOEXEC), eb = ::eventfd(0, EFD_CLOEXEC);
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    ASSERT_TRUE(p->add(ea, kt::view_of(a), 0));
    ASSERT_TRUE(p->add(eb, kt::view_of(b), 1));
    alignas(4096) static kring_ctl_page auxctl{};
    static std::byte auxarea[4096];
    kring::aux_reader ax(kring::aux_view{&auxctl, auxarea, sizeof(auxarea), false});

    std::uint64_t t = 1, records = 0, merged = 0, wrapped = 0, ovw = 0;
    int n = 0;
    auto round = [&] {
        // The test producer's writes allocate (test data): not counted.
        const bool was = g_counting.exchange(false);
        for (int i = 0; i < 40; i++) {
            write_sample(&a.rb, t++, 90);  // 120-byte records: some wrap
            write_sample(&b.rb, t++, 150);
            kt::write_record(&ow.rb, 200);
        }
        g_counting = was;
        auto ready = p->wait(0);
        EXPECT_TRUE(ready);
        // Half the rounds through the readers directly, half merged.
        if (++n % 2) {
            EXPECT_TRUE(ra.drain([&](const kring::record& r) {
                records++;
                wrapped += r.copied();
            }));
            EXPECT_TRUE(rb.drain([&](const kring::record&) { records++; }));
        } else {
            EXPECT_TRUE(
                m.flush([&](std::size_t, const kring::record&, std::uint64_t) { merged++; }));
        }
        EXPECT_TRUE(ro.read([&](const kring::record&) { ovw++; }));
        auxctl.aux_head += 1000;
        auto e = ax.available();
        ax.release(e.position + e.size());
    };
    for (int i = 0; i < 10; i++)
        round();  // warm up
    {
        counting c;
        for (int i = 0; i < 5000; i++)
            round();
        EXPECT_EQ(g_allocs.load(), 0) << "allocations in the read path";
    }
    EXPECT_GT(records, 100000u);
    EXPECT_GT(merged, 100000u);
    EXPECT_GT(wrapped, 0u);  // the copy path ran too
    EXPECT_GT(ovw, 0u);
    ::close(ea);
    ::close(eb);
}

}  // namespace
