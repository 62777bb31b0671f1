// libkring's AUX reader over AUX areas built by hand with perf's semantics.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kring/aux.hpp"

namespace {

struct fake_aux {
    alignas(4096) kring_ctl_page ctl{};
    std::vector<std::byte> area;
    explicit fake_aux(std::size_t size, bool snapshot = false) : area(size) {
        ctl.aux_size = size;
        view.ctl = &ctl;
        view.data = area.data();
        view.size = size;
        view.snapshot = snapshot;
    }
    // The producer writes @n bytes at free-running position @pos.
    void produce(std::uint64_t pos, std::size_t n) {
        for (std::size_t i = 0; i < n; i++)
            area[(pos + i) % area.size()] = std::byte((pos + i) * 7 + 3);
    }
    static bool check(const kring::aux_extent& e) {
        std::vector<std::byte> buf(e.size());
        e.copy_to(buf.data());
        for (std::size_t i = 0; i < buf.size(); i++)
            if (buf[i] != std::byte((e.position + i) * 7 + 3))
                return false;
        return true;
    }
    kring::aux_view view;
};

TEST(Aux, NormalModeAcrossTheEnd) {
    fake_aux a(4096);
    kring::aux_reader rd(a.view);
    std::uint64_t pos = 0, x = 1;
    for (int i = 0; i < 500; i++) {
        x = x * 6364136223846793005ULL + 1;
        std::size_t n = 1 + (x >> 40) % 4096;
        // The producer respects aux_tail (normal mode).
        std::uint64_t room = 4096 - (pos - a.ctl.aux_tail);
        n = std::min<std::size_t>(n, room);
        a.produce(pos, n);
        pos += n;
        a.ctl.aux_head = pos;
        auto e = rd.available();
        ASSERT_FALSE(rd.corrupted());
        ASSERT_EQ(e.size(), pos - a.ctl.aux_tail);
        ASSERT_TRUE(fake_aux::check(e));
        if (e.position % 4096 + e.size() > 4096) {
            EXPECT_FALSE(e.second.empty());
        }
        // Consume about half, then everything now and then.
        rd.release(i % 3 ? e.position + e.size() / 2 : pos);
    }
    EXPECT_EQ(rd.tail(), a.ctl.aux_tail);
}

TEST(Aux, ExtentsOfAuxRecords) {
    fake_aux a(8192);
    kring::aux_reader rd(a.view);
    a.produce(8000, 500);
    a.ctl.aux_tail = 8000;
    a.ctl.aux_head = 8500;
    kring::aux_info info;
    info.aux_offset = 8000;
    info.aux_size = 500;
    info.flags = KRING_AUX_FLAG_TRUNCATED;
    auto e = rd.extent(info);
    ASSERT_EQ(e.size(), 500u);
    EXPECT_EQ(e.first.size(), 192u);
    EXPECT_EQ(e.second.size(), 308u);
    EXPECT_EQ(e.flags, std::uint64_t(KRING_AUX_FLAG_TRUNCATED));
    EXPECT_TRUE(fake_aux::check(e));
    EXPECT_FALSE(rd.corrupted());
    // Beyond the head, or overwritten since: refused.
    info.aux_size = 501;
    EXPECT_EQ(rd.extent(info).size(), 0u);
    EXPECT_TRUE(rd.corrupted());
    info.aux_offset = 100;
    info.aux_size = 10;
    EXPECT_EQ(rd.extent(info).size(), 0u);
    // A release beyond the head is ignored.
    rd.release(9000);
    EXPECT_EQ(a.ctl.aux_tail, 8000u);
    rd.release(8500);
    EXPECT_EQ(a.ctl.aux_tail, 8500u);
}

TEST(Aux, InconsistentHeadIsCorruption) {
    fake_aux a(4096);
    kring::aux_reader rd(a.view);
    a.ctl.aux_head = 10000;
    EXPECT_EQ(rd.available().size(), 0u);
    EXPECT_TRUE(rd.corrupted());
}

TEST(Aux, SnapshotBeforeAndAfterWrap) {
    fake_aux a(4096, true);
    kring::aux_reader rd(a.view);
    a.produce(0, 1000);
    a.ctl.aux_head = 1000;
    auto e = rd.snapshot();
    EXPECT_FALSE(e.wrapped);
    EXPECT_EQ(e.position, 0u);
    EXPECT_EQ(e.size(), 1000u);
    EXPECT_TRUE(fake_aux::check(e));
    // Exactly full: the whole area, nothing overwritten yet.
    a.produce(1000, 3096);
    a.ctl.aux_head = 4096;
    e = rd.snapshot();
    EXPECT_FALSE(e.wrapped);
    EXPECT_EQ(e.position, 0u);
    EXPECT_EQ(e.size(), 4096u);
    EXPECT_TRUE(fake_aux::check(e));
    // The producer goes round 2.5 times: the newest 4096 bytes, in order.
    a.produce(4096, 6404);
    a.ctl.aux_head = 10500;
    e = rd.snapshot();
    EXPECT_TRUE(e.wrapped);
    EXPECT_EQ(e.position, 10500u - 4096u);
    EXPECT_EQ(e.size(), 4096u);
    EXPECT_TRUE(fake_aux::check(e));
    EXPECT_FALSE(e.second.empty());
}

}  // namespace
