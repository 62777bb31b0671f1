// libkring's data reader against the host build of the ring core: every
// wrap offset, mirrored and copied wrap paths, batch release, LOST records
// and loss counters.
#include <gtest/gtest.h>

#include <tuple>

#include "ring_views.hpp"
#include "kring/reader.hpp"

using kt::check_test_record;
using kt::host_ring;

namespace {

// pages, record size, mirrored
using wrap_param = std::tuple<unsigned, unsigned, bool>;

class ReaderWrap : public ::testing::TestWithParam<wrap_param> {};

TEST_P(ReaderWrap, EveryOffset) {
    const auto [pages, size, mirrored] = GetParam();
    host_ring ring(pages, kt::mapping_of(mirrored));
    const std::uint64_t ds = ring.size();
    std::uint64_t seq_next = 0, wrapped = 0, copied = 0;
    // Every 8-byte start offset in the data area, so that a record ends
    // exactly at the end, straddles it by every amount, or starts at it.
    for (std::uint64_t off = 0; off < ds; off += 8) {
        ring.seek(5 * ds + off);
        kring::reader rd(kt::view_of(ring));
        // Fill the ring but for the room the core keeps for a LOST record.
        const unsigned n = unsigned((ds - sizeof(kring_lost_record)) / size);
        for (unsigned i = 0; i < n; i++) {
            std::uint64_t seq;
            ASSERT_EQ(kt::write_record(&ring.rb, size, &seq), 0);
            ASSERT_EQ(seq, seq_next++);
        }
        std::uint64_t want = seq_next - n, got = 0;
        while (auto r = rd.next()) {
            std::uint64_t seq;
            ASSERT_TRUE(check_test_record(*r, seq)) << "offset " << off;
            ASSERT_EQ(seq, want + got);
            ASSERT_EQ(r->size(), size);
            const std::uint64_t o = r->position() & (ds - 1);
            if (o + size > ds) {
                wrapped++;
                EXPECT_EQ(r->copied(), !mirrored);
                copied += r->copied();
            } else {
                EXPECT_FALSE(r->copied());
            }
            got++;
        }
        ASSERT_FALSE(rd.corrupted()) << rd.corruption_error().message();
        ASSERT_EQ(got, n);
        // Nothing released until release(): one store for the batch.
        EXPECT_EQ(ring.ctl->data_tail, 5 * ds + off);
        rd.release();
        EXPECT_EQ(ring.ctl->data_tail, ring.ctl->data_head);
    }
    if (size <= ds / 2 && ds % size) {
        EXPECT_GT(wrapped, 0u);
    }
    EXPECT_EQ(copied, mirrored ? 0u : wrapped);
}

INSTANTIATE_TEST_SUITE_P(Sizes, ReaderWrap,
                         ::testing::Combine(::testing::Values(1u, 2u, 4u),
                                            ::testing::Values(16u, 24u, 56u, 1000u, 2056u),
                                            ::testing::Bool()),
                         [](const auto& info) {
                             return "p" + std::to_string(std::get<0>(info.param)) + "_s" +
                                    std::to_string(std::get<1>(info.param)) +
                                    (std::get<2>(info.param) ? "_mirror" : "_copy");
                         });

// Records are produced while the reader consumes: interleaved batches of
// random sizes never lose or reorder anything while there is room.
TEST(Reader, InterleavedBatches) {
    for (bool mirrored : {false, true}) {
        host_ring ring(2, kt::mapping_of(mirrored));
        kring::reader rd(kt::view_of(ring));
        std::uint64_t expect = 0, produced = 0, x = 12345;
        for (int round = 0; round < 2000; round++) {
            unsigned k = 1 + unsigned(x % 7);
            for (unsigned i = 0; i < k; i++) {
                x = x * 6364136223846793005ULL + 1442695040888963407ULL;
                unsigned size = 16 + 8 * unsigned((x >> 33) % 60);
                std::uint64_t seq;
                if (kt::write_record(&ring.rb, size, &seq) == 0)
                    produced++;
                else
                    FAIL() << "no space in round " << round;
            }
            auto n = rd.drain([&](const kring::record& r) {
                std::uint64_t seq;
                ASSERT_TRUE(check_test_record(r, seq));
                ASSERT_EQ(seq, expect++);
            });
            ASSERT_TRUE(n) << n.error().message();
        }
        EXPECT_EQ(expect, produced);
        EXPECT_EQ(rd.lost_seen(), 0u);
    }
}

TEST(Reader, LostRecordsAndCounters) {
    host_ring ring(1, kt::mapping::plain);
    kring::reader rd(kt::view_of(ring));
    std::uint64_t written = 0, dropped = 0;
    for (int i = 0; i < 200; i++) {
        if (kt::write_record(&ring.rb, 64) == 0)
            written++;
        else
            dropped++;
    }
    ASSERT_GT(dropped, 0u);
    std::uint64_t delivered = 0;
    ASSERT_TRUE(rd.drain([&](const kring::record&) { delivered++; }));
    // The next record that fits carries the LOST record before it.
    ASSERT_EQ(kt::write_record(&ring.rb, 64), 0);
    written++;
    std::uint64_t lost_records = 0, lost = 0, after = 0;
    auto n = rd.drain([&](const kring::record& r) {
        if (auto l = kring::parse_lost(r)) {
            lost_records++;
            lost += l->lost;
            EXPECT_TRUE(l->has_range);
            EXPECT_EQ(l->id, 7u);
            EXPECT_LE(l->first_seq, l->last_seq);
        } else {
            after++;
        }
    });
    ASSERT_TRUE(n);
    EXPECT_EQ(lost_records, 1u);
    EXPECT_EQ(lost, dropped);
    EXPECT_EQ(rd.lost_seen(), dropped);
    EXPECT_EQ(rd.lost_records_seen(), 1u);
    EXPECT_EQ(delivered + after, written);
    auto c = rd.losses();
    EXPECT_EQ(c.lost_no_space, dropped);
    EXPECT_EQ(c.lost(), dropped);
    EXPECT_EQ(c.records_written, written);
}

TEST(Reader, PadRecordsAreSkipped) {
    host_ring ring(1, kt::mapping::plain);
    kring::reader rd(kt::view_of(ring));
    ASSERT_EQ(kt::write_record(&ring.rb, 32), 0);
    ASSERT_EQ(kt::write_record(&ring.rb, 32, nullptr, 0, kt::rec_end::Discard), 0);
    ASSERT_EQ(kt::write_record(&ring.rb, 32), 0);
    std::vector<std::uint64_t> seqs;
    ASSERT_TRUE(rd.drain([&](const kring::record& r) {
        std::uint64_t s;
        ASSERT_TRUE(check_test_record(r, s));
        seqs.push_back(s);
    }));
    EXPECT_EQ(seqs, (std::vector<std::uint64_t>{0, 2}));
    EXPECT_EQ(rd.losses().records_discarded, 1u);
}

TEST(Reader, ReleaseToKeepsLaterRecords) {
    host_ring ring(1, kt::mapping::plain);
    kring::reader rd(kt::view_of(ring));
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(kt::write_record(&ring.rb, 40), 0);
    auto a = rd.next();
    auto b = rd.next();
    ASSERT_TRUE(a && b);
    rd.release_to(b->position());
    EXPECT_EQ(ring.ctl->data_tail, b->position());
    rd.release_to(a->position());  // backwards: ignored
    EXPECT_EQ(ring.ctl->data_tail, b->position());
    ASSERT_TRUE(rd.next());
    EXPECT_FALSE(rd.next());
    rd.release();
    EXPECT_EQ(ring.ctl->data_tail, ring.ctl->data_head);
}

// Overwrite (backward) rings, read as perf's tool does.
class OverwriteRead : public ::testing::TestWithParam<std::tuple<unsigned, bool>> {};

TEST_P(OverwriteRead, NewestFirstAcrossWraps) {
    const auto [size, mirrored] = GetParam();
    host_ring ring(2, kt::mapping_of(mirrored), KRING_RING_OVERWRITE);
    kring::overwrite_reader rd(kt::view_of(ring));
    std::uint64_t last = 0;
    // Read at many points: before the first wrap and after several.
    for (int k = 0; k < 40; k++) {
        for (int i = 0; i < 37; i++)
            ASSERT_EQ(kt::write_record(&ring.rb, size, &last), 0);
        std::uint64_t expect = last, bytes = 0, n = 0;
        auto r = rd.read([&](const kring::record& rec) {
            std::uint64_t s;
            ASSERT_TRUE(check_test_record(rec, s));
            EXPECT_EQ(s, expect);  // newest first, none missing
            expect--;
            bytes += rec.size();
            n++;
        });
        ASSERT_TRUE(r) << r.error().message();
        EXPECT_EQ(*r, n);
        EXPECT_LE(bytes, ring.size());
        // Everything that fits is there: at most one record's worth missing.
        EXPECT_GT(bytes + size, std::min<std::uint64_t>(ring.size(), (last + 1) * size));
    }
}

INSTANTIATE_TEST_SUITE_P(Sizes, OverwriteRead,
                         ::testing::Combine(::testing::Values(16u, 40u, 1000u), ::testing::Bool()));

}  // namespace
