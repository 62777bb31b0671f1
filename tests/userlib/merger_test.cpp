// The merger's exactness: constructed per-CPU rings with adversarial
// interleavings of writes, floors and drains; the output must be globally
// time-ordered and complete, and nothing may be emitted early.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "ring_views.hpp"
#include "kring/merger.hpp"

using kt::host_ring;
using kt::write_sample;

namespace {

constexpr std::uint64_t st = KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ;

std::uint64_t fake_now(void* ctx) { return *static_cast<std::uint64_t*>(ctx); }

TEST(Merger, WaitsForTheFloor) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    kring::reader ra(kt::view_of(a)), rb(kt::view_of(b));
    std::uint64_t now = 0;
    kring::merger m({.window_ns = 1000, .now = fake_now, .now_ctx = &now});
    m.add(ra, st);
    m.add(rb, st);
    ASSERT_EQ(write_sample(&a.rb, 100), 0);
    b.ctl->timestamp_floor = 50;  // b may still write a record at 50..99
    std::vector<std::uint64_t> out;
    auto emit = [&](std::size_t, const kring::record&, std::uint64_t t) { out.push_back(t); };
    auto n = m.drain(emit);
    ASSERT_TRUE(n);
    EXPECT_EQ(*n, 0u);
    EXPECT_EQ(a.ctl->data_tail, 0u);  // the pending record is not released
    ASSERT_EQ(write_sample(&b.rb, 60), 0);
    ASSERT_TRUE(m.drain(emit));
    // 60 went out; 100 waits for b's floor again.
    EXPECT_EQ(out, (std::vector<std::uint64_t>{60}));
    b.ctl->timestamp_floor = 100;
    ASSERT_TRUE(m.drain(emit));
    EXPECT_EQ(out, (std::vector<std::uint64_t>{60, 100}));
    EXPECT_EQ(m.floors_used(), 1u);
    EXPECT_EQ(m.windows_used(), 0u);
    EXPECT_EQ(a.ctl->data_tail, a.ctl->data_head);
}

TEST(Merger, WindowFallbackWithoutFloor) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    kring::reader ra(kt::view_of(a)), rb(kt::view_of(b));
    std::uint64_t now = 0;
    kring::merger m({.window_ns = 1000, .now = fake_now, .now_ctx = &now});
    m.add(ra, st);
    m.add(rb, st);
    ASSERT_EQ(write_sample(&a.rb, 5000), 0);
    std::size_t n = 0;
    auto emit = [&](std::size_t, const kring::record&, std::uint64_t) { n++; };
    now = 5999;
    ASSERT_TRUE(m.drain(emit));
    EXPECT_EQ(n, 0u);
    now = 6000;
    ASSERT_TRUE(m.drain(emit));
    EXPECT_EQ(n, 1u);
    EXPECT_EQ(m.windows_used(), 1u);
}

// The window's clock is read before the empty source is looked at: a
// record published in between (here, while the clock is read) is seen and
// goes out first, not after a record its time precedes.
struct publishing_clock {
    host_ring* ring;
    std::uint64_t record_time, now;
    bool published = false;
};

std::uint64_t publish_then_read(void* ctx) {
    auto* c = static_cast<publishing_clock*>(ctx);
    if (!c->published) {
        c->published = true;
        EXPECT_EQ(write_sample(&c->ring->rb, c->record_time), 0);
    }
    return c->now;
}

TEST(Merger, WindowClockReadBeforeTheLook) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    kring::reader ra(kt::view_of(a)), rb(kt::view_of(b));
    // b's record (time 4999) is published at 5999, within the window
    // (1000) of its time, just before the clock reads 6000.
    publishing_clock clock{&b, 4999, 6000};
    kring::merger m({.window_ns = 1000, .now = publish_then_read, .now_ctx = &clock});
    m.add(ra, st);
    m.add(rb, st);
    ASSERT_EQ(write_sample(&a.rb, 5000), 0);
    std::vector<std::uint64_t> out;
    auto emit = [&](std::size_t, const kring::record&, std::uint64_t t) { out.push_back(t); };
    ASSERT_TRUE(m.drain(emit));
    EXPECT_TRUE(clock.published);
    ASSERT_TRUE(m.drain(emit));
    EXPECT_EQ(out, (std::vector<std::uint64_t>{4999, 5000}));
}

TEST(Merger, FinishedSourceConstrainsNothing) {
    host_ring a(1, kt::mapping::plain), b(1, kt::mapping::plain);
    kring::reader ra(kt::view_of(a)), rb(kt::view_of(b));
    std::uint64_t now = 0;
    kring::merger m({.window_ns = 1000, .now = fake_now, .now_ctx = &now});
    m.add(ra, st);
    auto ib = m.add(rb, st);
    ASSERT_EQ(write_sample(&a.rb, 5000), 0);
    std::size_t n = 0;
    auto emit = [&](std::size_t, const kring::record&, std::uint64_t) { n++; };
    ASSERT_TRUE(m.drain(emit));
    EXPECT_EQ(n, 0u);
    m.finish(ib);
    ASSERT_TRUE(m.drain(emit));
    EXPECT_EQ(n, 1u);
}

// Four rings, random time steps per ring, writes and drains interleaved at
// random, floors raised lazily (each ring's floor trails its next time).
TEST(Merger, AdversarialInterleavingsAreExact) {
    for (unsigned seed = 1; seed <= 20; seed++) {
        std::mt19937_64 rng(seed);
        constexpr int k = 4;
        std::vector<std::unique_ptr<host_ring>> rings;
        std::vector<std::unique_ptr<kring::reader>> readers;
        std::uint64_t now = 0;
        kring::merger m({.window_ns = ~0ULL / 2, .now = fake_now, .now_ctx = &now});
        std::uint64_t clock[k], written = 0;
        for (int i = 0; i < k; i++) {
            rings.push_back(std::make_unique<host_ring>(4, kt::mapping_of(i % 2 == 0)));
            readers.push_back(std::make_unique<kring::reader>(kt::view_of(*rings[i])));
            m.add(*readers[i], st);
            clock[i] = 1 + rng() % 100;
            rings[i]->ctl->timestamp_floor = clock[i];
        }
        std::vector<std::uint64_t> out;
        std::uint64_t last = 0;
        bool ordered = true;
        auto emit = [&](std::size_t src, const kring::record& r, std::uint64_t t) {
            auto s = kring::parse_sample(r, st);
            ASSERT_TRUE(s);
            ASSERT_EQ(s->time, t);
            (void)src;
            if (t < last)
                ordered = false;
            last = t;
            out.push_back(t);
        };
        for (int step = 0; step < 3000; step++) {
            int i = int(rng() % k);
            switch (rng() % 4) {
                case 0:
                case 1: {  // a write, maybe a burst, at this ring's clock
                    int burst = 1 + int(rng() % 5);
                    for (int j = 0; j < burst; j++) {
                        if (write_sample(&rings[i]->rb, clock[i]) == 0)
                            written++;
                        else
                            ADD_FAILURE() << "ring full";
                        clock[i] += rng() % 50;  // equal times happen too
                    }
                    break;
                }
                case 2:  // the floor catches up with the ring's clock
                    rings[i]->ctl->timestamp_floor = clock[i];
                    break;
                default:
                    ASSERT_TRUE(m.drain(emit));
            }
        }
        ASSERT_TRUE(m.drain(emit));
        ASSERT_TRUE(m.flush(emit));
        EXPECT_TRUE(ordered) << "seed " << seed;
        EXPECT_EQ(out.size(), written) << "seed " << seed;
        EXPECT_TRUE(std::is_sorted(out.begin(), out.end()));
        EXPECT_GT(m.floors_used(), 0u);
        EXPECT_EQ(m.windows_used(), 0u);
    }
}

// LOST records carry no time: they go out at their place in their source.
TEST(Merger, TimelessRecordsPassThrough) {
    host_ring a(1, kt::mapping::plain);
    kring::reader ra(kt::view_of(a));
    kring::merger m;
    m.add(ra, st);
    int lost = 0, dropped = 0;
    for (int i = 0; i < 400; i++)
        if (write_sample(&a.rb, 10 + i))
            dropped++;
    ASSERT_GT(dropped, 0);
    std::uint64_t last = 0;
    auto emit = [&](std::size_t, const kring::record& r, std::uint64_t t) {
        if (r.type() == KRING_RECORD_LOST)
            lost += int(kring::parse_lost(r)->lost);
        else {
            EXPECT_GE(t, last);
            last = t;
        }
    };
    ASSERT_TRUE(m.flush(emit));
    ASSERT_EQ(write_sample(&a.rb, 1000), 0);
    ASSERT_TRUE(m.flush(emit));
    EXPECT_EQ(lost, dropped);
    EXPECT_EQ(last, 1000u);
}

}  // namespace
