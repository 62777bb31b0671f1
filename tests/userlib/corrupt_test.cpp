// Malformed data in a ring is reported as corruption: never a crash, an
// out-of-bounds read or an endless loop. The rings here are built by hand.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "ring_views.hpp"
#include "kring/reader.hpp"
#include "errno_assert.hpp"

namespace {

struct fake_ring {
    alignas(4096) kring_ctl_page ctl{};
    std::vector<std::uint64_t> words;  // the data area
    explicit fake_ring(std::size_t size) : words(size / 8, 0) {}
    kring::ring_view view() {
        kring::ring_view v;
        v.ctl = &ctl;
        v.data = reinterpret_cast<const std::byte*>(words.data());
        v.data_size = words.size() * 8;
        return v;
    }
    void put(std::uint64_t pos, std::uint32_t type, std::uint16_t size) {
        kring_record_header h{type, 0, size};
        std::memcpy(reinterpret_cast<char*>(words.data()) + (pos % (words.size() * 8)), &h, 8);
    }
};

struct bad_case {
    const char* name;
    std::uint32_t type;
    std::uint16_t size;
    std::uint64_t head;         // data_head (tail 0)
    kring::header_fault fault;  // none: data_head itself is bad (found before any record)
};

using kring::corruption_reason;
using kring::header_fault;

class Corrupt : public ::testing::TestWithParam<bad_case> {};

TEST_P(Corrupt, ReportedNotFollowed) {
    const auto& c = GetParam();
    fake_ring r(256);
    // One good record first, then the bad one.
    r.put(0, KRING_RECORD_KRING_BASE + 1, 16);
    r.put(16, c.type, c.size);
    r.ctl.data_head = c.head;
    kring::reader rd(r.view());
    std::size_t good = 0;
    auto n = rd.drain([&](const kring::record& rec) {
        EXPECT_EQ(rec.position(), 0u);
        good++;
    });
    ASSERT_FALSE(n);
    EXPECT_ERRNO(n.error().code(), EBADMSG);
    const bool head_bad = c.fault == header_fault::none;
    EXPECT_TRUE(rd.corrupted());
    EXPECT_EQ(rd.corruption().reason,
              head_bad ? corruption_reason::head_out_of_range : corruption_reason::bad_header);
    EXPECT_EQ(rd.corruption().fault, c.fault);
    // The error's message says what the reason is.
    EXPECT_NE(n.error().message().find(rd.corruption().what), std::string::npos)
        << n.error().message();
    if (!head_bad) {
        EXPECT_STREQ(rd.corruption().what, kring::describe(c.fault));
    }
    EXPECT_EQ(rd.corruption().position, head_bad ? 0u : 16u);
    EXPECT_EQ(good, head_bad ? 0u : 1u);
    // The good record before it was released, the bad one was not.
    EXPECT_EQ(r.ctl.data_tail, head_bad ? 0u : 16u);
    // Sticky, and no loop.
    EXPECT_FALSE(rd.next());
    EXPECT_FALSE(rd.next());
    // Resynchronising skips what was published.
    rd.reset_corruption();
    EXPECT_FALSE(rd.corrupted());
    EXPECT_FALSE(rd.next());
}

INSTANTIATE_TEST_SUITE_P(
    Cases, Corrupt,
    ::testing::Values(
        bad_case{"size0", KRING_RECORD_SAMPLE, 0, 64, header_fault::zero_size},
        bad_case{"size4", KRING_RECORD_SAMPLE, 4, 64, header_fault::bad_size},
        bad_case{"size12", KRING_RECORD_SAMPLE, 12, 64, header_fault::bad_size},
        bad_case{"beyond_head", KRING_RECORD_SAMPLE, 56, 64, header_fault::beyond_end},
        bad_case{"beyond_area", KRING_RECORD_SAMPLE, 65528, 256, header_fault::beyond_end},
        bad_case{"type0", 0, 16, 64, header_fault::unknown_type},
        bad_case{"type100", 100, 16, 64, header_fault::unknown_type},
        bad_case{"type_high", 0xfffffff0u, 16, 64, header_fault::unknown_type},
        bad_case{"head_too_far", KRING_RECORD_SAMPLE, 16, 4096, header_fault::none},
        bad_case{"head_unaligned", KRING_RECORD_SAMPLE, 16, 36, header_fault::none}),
    [](const auto& info) { return std::string(info.param.name); });

TEST(Corrupt, ReaderOverInvalidViewIsCorruptFromTheStart) {
    kring::reader rd{kring::ring_view{}};
    EXPECT_TRUE(rd.corrupted());
    EXPECT_EQ(rd.corruption().reason, corruption_reason::invalid_view);
    EXPECT_FALSE(rd.next());
    auto n = rd.drain([](const kring::record&) {});
    ASSERT_FALSE(n);
    EXPECT_ERRNO(n.error().code(), EBADMSG);
}

TEST(Corrupt, ForwardReaderRefusesOverwriteRing) {
    fake_ring r(256);
    auto v = r.view();
    v.overwrite = true;
    r.put(0, KRING_RECORD_KRING_BASE + 1, 16);
    r.ctl.data_head = 16;
    kring::reader rd(v);
    EXPECT_TRUE(rd.corrupted());
    EXPECT_FALSE(rd.next());
    EXPECT_EQ(rd.corruption().reason, corruption_reason::overwrite_ring);
    auto n = rd.drain([](const kring::record&) {});
    ASSERT_FALSE(n);
    EXPECT_NE(n.error().message().find("overwrite"), std::string::npos);
}

TEST(Corrupt, OverwriteWalkStopsOnMalformed) {
    fake_ring r(256);
    r.ctl.data_head = std::uint64_t(-64);
    r.put(std::uint64_t(-64), KRING_RECORD_KRING_BASE + 1, 16);
    r.put(std::uint64_t(-48), KRING_RECORD_KRING_BASE + 1, 12);
    kring::overwrite_reader rd(r.view());
    std::size_t n = 0;
    auto res = rd.read([&](const kring::record&) { n++; });
    ASSERT_FALSE(res);
    EXPECT_ERRNO(res.error().code(), EBADMSG);
    EXPECT_EQ(n, 1u);
    // A zero header ends the walk cleanly.
    r.put(std::uint64_t(-48), 0, 0);
    auto ok = rd.read([&](const kring::record&) {});
    ASSERT_TRUE(ok);
    EXPECT_EQ(*ok, 1u);
}

// A backward ring written round more than once, as perf's and kring's
// writers leave it once they are done: the oldest record inside the window
// [data_head, data_head + size) may have had its end overwritten by the
// newest ones while its header is intact. The walk stops before it: every
// record handed out is whole (each body word is its stamp), newest first,
// and at most one record's worth of the window is left out. Every size and
// count puts the cut at another place.
TEST(Corrupt, OverwriteWalkStopsBeforePartlyOverwrittenRecord) {
    for (std::uint16_t size = 16; size <= 72; size += 8) {
        for (std::uint64_t count = 1; count <= 24; count++) {
            fake_ring r(256);
            std::uint64_t head = 0;
            for (std::uint64_t stamp = 1; stamp <= count; stamp++) {
                head -= size;
                r.put(head, KRING_RECORD_KRING_BASE + 1, size);
                for (std::uint64_t off = 8; off < size; off += 8)
                    r.words[((head + off) % 256) / 8] = stamp;
            }
            r.ctl.data_head = head;
            kring::overwrite_reader rd(r.view());
            std::uint64_t expect = count, bytes = 0, torn = 0;
            auto n = rd.read([&](const kring::record& rec) {
                std::uint64_t stamp = 0;
                for (std::size_t off = 8; off < rec.size(); off += 8) {
                    std::uint64_t w;
                    std::memcpy(&w, rec.bytes().data() + off, 8);
                    torn += w != expect;
                    stamp = w;
                }
                EXPECT_EQ(stamp, expect) << "size " << size << " count " << count;
                expect--;
                bytes += rec.size();
            });
            ASSERT_TRUE(n) << n.error().message();
            EXPECT_EQ(torn, 0u) << "size " << size << " count " << count;
            EXPECT_EQ(bytes, std::min<std::uint64_t>(count * size, 256 / size * size))
                << "size " << size << " count " << count;
        }
    }
}

TEST(Records, ParseSampleEveryField) {
    const std::uint64_t st = KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_IP | KRING_SAMPLE_TID |
                             KRING_SAMPLE_TIME | KRING_SAMPLE_ID | KRING_SAMPLE_CPU |
                             KRING_SAMPLE_PERIOD | KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ;
    std::uint64_t w[16] = {};
    kring_record_header h{KRING_RECORD_SAMPLE, 0, 0};
    std::uint32_t pidtid[2] = {11, 12}, cpu[2] = {3, 0}, raw_size = 5;
    w[1] = 101;  // identifier
    w[2] = 102;  // ip
    std::memcpy(&w[3], pidtid, 8);
    w[4] = 104;  // time
    w[5] = 105;  // id
    std::memcpy(&w[6], cpu, 8);
    w[7] = 107;  // period
    std::memcpy(&w[8], &raw_size, 4);
    std::memcpy(reinterpret_cast<char*>(&w[8]) + 4, "hello", 5);  // 4 + 5 -> pad to 16
    w[10] = 110;                                                  // seq
    h.size = 11 * 8;
    std::memcpy(&w[0], &h, 8);
    kring::record r({reinterpret_cast<const std::byte*>(w), h.size}, 0, false);
    auto s = kring::parse_sample(r, st);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->identifier, 101u);
    EXPECT_EQ(s->ip, 102u);
    EXPECT_EQ(s->pid, 11u);
    EXPECT_EQ(s->tid, 12u);
    EXPECT_EQ(s->time, 104u);
    EXPECT_EQ(s->id, 105u);
    EXPECT_EQ(s->cpu, 3u);
    EXPECT_EQ(s->period, 107u);
    ASSERT_EQ(s->raw.size(), 5u);
    EXPECT_EQ(std::memcmp(s->raw.data(), "hello", 5), 0);
    EXPECT_EQ(s->seq, 110u);
    EXPECT_EQ(kring::record_time(r, st).value_or(0), 104u);
    // One word short: the fields run past the record.
    h.size = 10 * 8;
    std::memcpy(&w[0], &h, 8);
    kring::record shortr({reinterpret_cast<const std::byte*>(w), h.size}, 0, false);
    EXPECT_FALSE(kring::parse_sample(shortr, st));
    EXPECT_FALSE(kring::record_time(r, st & ~KRING_SAMPLE_TIME));
}

TEST(Records, ParseLostAndAux) {
    kring_lost_record l{};
    l.header = {KRING_RECORD_LOST, 0, sizeof(l)};
    l.id = 9;
    l.lost = 4;
    l.first_seq = 10;
    l.last_seq = 13;
    kring::record r({reinterpret_cast<const std::byte*>(&l), sizeof(l)}, 0, false);
    auto p = kring::parse_lost(r);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->lost, 4u);
    EXPECT_TRUE(p->has_range);
    EXPECT_EQ(p->last_seq, 13u);
    // In a perf ring the same bytes are perf's body plus sample_id.
    EXPECT_FALSE(kring::parse_lost(r, kring::ring_kind::perf)->has_range);

    kring_aux_record a{};
    a.header = {KRING_RECORD_AUX, 0, sizeof(a)};
    a.aux_offset = 4096;
    a.aux_size = 100;
    a.flags = KRING_AUX_FLAG_TRUNCATED | KRING_AUX_FLAG_PARTIAL;
    a.time = 77;
    kring::record ra({reinterpret_cast<const std::byte*>(&a), sizeof(a)}, 0, false);
    auto pa = kring::parse_aux(ra);
    ASSERT_TRUE(pa);
    EXPECT_TRUE(pa->truncated());
    EXPECT_TRUE(pa->partial());
    EXPECT_FALSE(pa->collision());
    EXPECT_EQ(pa->aux_size, 100u);
    EXPECT_EQ(kring::record_time(ra, 0).value_or(0), 77u);
    EXPECT_FALSE(kring::parse_lost(ra));
}

// A RAW size near 2^32 must not give a raw span beyond the record (found by
// tests/fuzz/libfuzzer/fuzz_records.cpp: the padding's 32-bit mask cut the
// padded size to a few bytes, which then "fitted").
TEST(Records, ParseSampleRawSizeNearFourGiB) {
    for (std::uint32_t n : {0xFFFFFFFFu, 0xFFFFFFFDu, 0xFFFFFFF8u, 0x80000000u, 29u}) {
        std::uint64_t words[4] = {};
        kring_record_header h{KRING_RECORD_SAMPLE, 0, sizeof(words)};
        std::memcpy(words, &h, 8);
        std::memcpy(&words[1], &n, 4);
        kring::record r({reinterpret_cast<const std::byte*>(words), sizeof(words)}, 0, false);
        auto s = kring::parse_sample(r, KRING_SAMPLE_RAW);
        EXPECT_FALSE(s) << "raw size " << n << " in a " << sizeof(words) << "-byte record";
    }
}

}  // namespace

namespace {

// Random garbage in a guarded ring (a PROT_NONE page follows the data
// area) with random heads and tails: the reader and the overwrite reader
// must stop, never fault, never return more records than bytes allow.
TEST(Corrupt, RandomGarbageNeverCrashesOrLoops) {
    std::mt19937_64 rng(42);
    for (bool mirrored : {false, true}) {
        kt::host_ring ring(1, kt::mapping_of(mirrored));
        auto* words = reinterpret_cast<std::uint64_t*>(ring.data());
        const std::uint64_t ds = ring.size();
        for (int iter = 0; iter < 20000; iter++) {
            for (std::uint64_t i = 0; i < ds / 8; i++) {
                std::uint64_t w = rng();
                // Bias towards plausible headers so deeper paths run.
                if (rng() % 2) {
                    kring_record_header h{
                        std::uint32_t(rng() % 3 ? KRING_RECORD_SAMPLE : rng() % 0x20000), 0,
                        std::uint16_t((rng() % 64) * 8)};
                    std::memcpy(&w, &h, 8);
                }
                words[i] = w;
            }
            const std::uint64_t tail = rng() % (1ULL << 40) * 8;
            const std::uint64_t head = rng() % 4 ? tail + rng() % (ds / 8 + 1) * 8 : rng();
            ring.ctl->data_tail = tail;
            ring.ctl->data_head = head;
            kring::reader rd(kt::view_of(ring));
            std::size_t n = 0;
            auto r = rd.drain([&](const kring::record& rec) {
                ASSERT_GE(rec.size(), 8u);
                ASSERT_LE(rec.size(), ds);
                n++;
            });
            ASSERT_LE(n, ds / 8);
            if (!r) {
                EXPECT_TRUE(rd.corrupted());
                EXPECT_ERRNO(r.error().code(), EBADMSG);
            }
            // Whatever was accepted lies between the tail and the head.
            EXPECT_LE(ring.ctl->data_tail - tail, ds);

            kt::host_ring* rp = &ring;
            auto v = kt::view_of(*rp);
            v.overwrite = true;
            kring::overwrite_reader ow(v);
            std::size_t m = 0;
            auto o = ow.read([&](const kring::record&) { m++; });
            ASSERT_LE(m, ds / 8);
            (void)o;
        }
    }
}

// A data_tail that is not 8-byte aligned (written by another process that
// shares the mapping) would have the reader load a header across the end of
// the data area. Found by tests/fuzz/libfuzzer/fuzz_reader.cpp (ASan: an 8-byte
// read 6 bytes past a 256-byte area).
TEST(Corrupt, UnalignedTailIsReportedAndResynchronised) {
    fake_ring r(256);
    r.ctl.data_tail = 254;
    r.ctl.data_head = 254 + 16;
    kring::reader rd(r.view());
    EXPECT_FALSE(rd.next());
    ASSERT_TRUE(rd.corrupted());
    EXPECT_EQ(rd.corruption().reason, corruption_reason::unaligned_tail);
    // Resynchronised at the record boundary below, it reads on from there.
    rd.reset_corruption();
    EXPECT_FALSE(rd.corrupted());
    EXPECT_EQ(rd.cursor(), 248u);
    r.put(248, KRING_RECORD_KRING_BASE + 1, 16);
    r.ctl.data_head = 248 + 16;
    auto rec = rd.next();
    ASSERT_TRUE(rec);
    EXPECT_EQ(rec->position(), 248u);
    // An unaligned release position is ignored.
    rd.release_to(250);
    EXPECT_EQ(rd.tail(), 248u);
}

}  // namespace
