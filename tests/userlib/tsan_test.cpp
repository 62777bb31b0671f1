// The host ring core producing in one thread and libkring's reader
// consuming in another, built with ThreadSanitizer (libkring's sources and
// the core alike; the core's READ_ONCE/WRITE_ONCE become acquire/release
// under KRING_HOST_TSAN, see tests/host/kring_host_shim.h). Every record
// is checked word by word and the accounting must be exact: every sequence
// number is delivered once, in order, or counted by a LOST record, and
// delivered + lost == produced.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "ring_views.hpp"
#include "kring/reader.hpp"

#ifndef KRING_LIB_TSAN_RECORDS
#define KRING_LIB_TSAN_RECORDS 10000000ULL
#endif

using kt::check_test_record;
using kt::host_ring;

namespace {

unsigned size_of(std::uint64_t seq) {
    return 16 + 8 * unsigned((seq * 0x9E3779B97F4A7C15ULL >> 59) % 15);
}

TEST(LibTsan, ProducerAndReaderExactAccounting) {
    for (bool mirrored : {true, false}) {
        host_ring ring(4, kt::mapping_of(mirrored));
        std::atomic<bool> done{false};
        std::atomic<std::uint64_t> produced{0};
        const std::uint64_t n = KRING_LIB_TSAN_RECORDS / 2;

        std::thread producer([&] {
            std::uint64_t seq = 0;
            for (std::uint64_t i = 0; i < n; i++)
                if (kt::write_record(&ring.rb, size_of(i), &seq))
                    std::this_thread::yield();
            // Flush: the last losses go out with a record that fits.
            while (kt::write_record(&ring.rb, 16, &seq))
                std::this_thread::yield();
            produced.store(seq + 1, std::memory_order_relaxed);
            done.store(true, std::memory_order_release);
        });

        kring::reader rd(kt::view_of(ring));
        std::uint64_t delivered = 0, next = 0, bad = 0, gaps = 0;
        for (;;) {
            const bool finished = done.load(std::memory_order_acquire);
            auto r = rd.drain([&](const kring::record& rec) {
                if (rec.type() == KRING_RECORD_LOST) {
                    auto l = kring::parse_lost(rec);
                    // The lost ones are exactly the gap before the next record.
                    if (!l || l->first_seq != next)
                        bad++;
                    else
                        next = l->last_seq + 1;
                    return;
                }
                std::uint64_t seq = 0;
                if (!check_test_record(rec, seq)) {
                    bad++;
                    return;
                }
                if (seq != next)
                    gaps++;
                next = seq + 1;
                delivered++;
            });
            ASSERT_TRUE(r) << r.error().message();
            if (finished && !rd.has_data())
                break;
            if (*r == 0)
                std::this_thread::yield();
        }
        producer.join();
        EXPECT_EQ(bad, 0u);
        EXPECT_EQ(gaps, 0u);
        EXPECT_EQ(delivered + rd.lost_seen(), produced.load());
        EXPECT_EQ(next, produced.load());
        EXPECT_GT(delivered, 0u);
        auto c = rd.losses();
        EXPECT_EQ(c.records_written, delivered);
        EXPECT_EQ(c.lost(), rd.lost_seen());
        std::printf("mirrored=%d produced %llu delivered %llu lost %llu in %llu LOST records\n",
                    int(mirrored), (unsigned long long)produced.load(),
                    (unsigned long long)delivered, (unsigned long long)rd.lost_seen(),
                    (unsigned long long)rd.lost_records_seen());
    }
}

}  // namespace
