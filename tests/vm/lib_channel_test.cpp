// In the guest: libkring's channel and readers against the real module.
#include <optional>
#include <string>
#include <thread>

#include "lib_util.hpp"
#include "errno_assert.hpp"

using namespace kt;

namespace {

TEST(LibChannel, OpenConfigureMap) {
    kring::channel_options o;
    o.data_pages_order = 1;
    LIB_OPEN(ch, o);
    EXPECT_TRUE(ch->ring().valid());
    EXPECT_EQ(ch->ring().data_size, 2u * ch->abi().page_size);
    EXPECT_EQ(ch->ctl()->version, unsigned(KRING_CTL_VERSION));
    auto id = ch->id();
    ASSERT_TRUE(id);
    EXPECT_GT(*id, 0u);
    ASSERT_TRUE(ch->enable());
    ASSERT_TRUE(ch->disable());
    ASSERT_TRUE(ch->reset());
    auto st = ch->stats();
    ASSERT_TRUE(st);
    EXPECT_EQ(st->produced, 0u);
    // Moving keeps the mapping valid.
    kring::channel moved = std::move(*ch);
    EXPECT_EQ(moved.ctl()->version, unsigned(KRING_CTL_VERSION));
}

TEST(LibChannel, AuxWithoutTheFeatureIsRefused) {
    kring::channel_options o;
    o.data_pages_order = 0;
    LIB_OPEN(ch, o);
    auto r = ch->map_aux(1, false);
    if (ch->abi().features & kring::feat_aux) {
        EXPECT_TRUE(r) << r.error().message();
        EXPECT_FALSE(ch->map_aux(1, false));  // only once
    } else {
        ASSERT_FALSE(r);
        EXPECT_ERRNO(r.error().code(), EOPNOTSUPP);
    }
}

TEST(LibChannel, OpenPerCpu) {
    auto chans = kring::channel::open_per_cpu(synth(0, 100, 0, 64, 0));
    if (!chans && chans.error().code() == ENOENT)
        GTEST_SKIP() << chans.error().message();
    ASSERT_TRUE(chans) << chans.error().message();
    ASSERT_EQ(chans->size(), std::size_t(online_cpus()));
    for (std::size_t i = 0; i < chans->size(); i++) {
        EXPECT_EQ((*chans)[i].options().cpu, int(i));
        ASSERT_TRUE((*chans)[i].enable());
    }
    // Every CPU's generator delivers into its own ring.
    for (std::size_t i = 0; i < chans->size(); i++) {
        kring::reader rd((*chans)[i].ring());
        std::uint64_t got = 0, bad = 0;
        auto deadline = clk::now() + std::chrono::seconds(20);
        while (got + rd.lost_seen() < 100 && clk::now() < deadline) {
            ASSERT_TRUE(rd.drain([&](const kring::record& r) {
                if (r.type() == KRING_RECORD_SAMPLE) {
                    bad += !synth_ok(r, int(i));
                    got++;
                }
            }));
            ::usleep(1000);
        }
        EXPECT_EQ(got + rd.lost_seen(), 100u);
        EXPECT_EQ(bad, 0u);
    }
}

TEST(LibChannel, BadOptionsAreErrors) {
    kring::channel_options o;
    o.data_pages_order = 40;
    auto ch = kring::channel::open(o);
    if (!ch && ch.error().code() == ENOENT)
        GTEST_SKIP() << ch.error().message();
    ASSERT_FALSE(ch);
    EXPECT_ERRNO(ch.error().code(), EINVAL);
    o = synth(9999, 10);  // no such CPU
    ch = kring::channel::open(o);
    ASSERT_FALSE(ch);
    EXPECT_ERRNO(ch.error().code(), EINVAL) << ch.error().message();
    o.device = "/dev/null";
    ch = kring::channel::open(o);
    ASSERT_FALSE(ch);
    EXPECT_ERRNO(ch.error().code(), ENOTTY);
}

// Every record of a synthetic source into a small ring, through the
// mirrored and the copied wrap paths: each verified, exact accounting.
// Records of 248 bytes in 8 KiB: one in each lap straddles the end of the
// data area. Paced (5000/s, a lap every 6.6 ms) so that the reader sees
// many laps of consecutive records: flat out, the reader of a fast
// producer saw two laps in one run, and the record across the end was a
// LOST record, so no SAMPLE took the copy path.
class LibReader : public ::testing::TestWithParam<bool> {};

TEST_P(LibReader, SyntheticExactAccounting) {
    const bool mirror = GetParam();
    auto o = synth(0, 5000, 5000, 200, 1);
    o.mirror = mirror;
    LIB_OPEN(ch, o);
    kring::reader rd(ch->ring());
    ASSERT_TRUE(ch->enable());
    std::uint64_t delivered = 0, bad = 0, copied = 0, next = 0, gaps = 0;
    auto deadline = clk::now() + std::chrono::seconds(60);
    kring_stats st{};
    for (;;) {
        auto n = rd.drain([&](const kring::record& r) {
            if (r.type() == KRING_RECORD_LOST) {
                auto l = kring::parse_lost(r);
                ASSERT_TRUE(l && l->has_range);
                next = l->last_seq + 1;
                return;
            }
            std::uint64_t seq;
            if (!synth_ok(r, 0, &seq)) {
                bad++;
                return;
            }
            gaps += seq != next;
            next = seq + 1;
            copied += r.copied();
            delivered++;
        });
        ASSERT_TRUE(n) << n.error().message();
        st = *ch->stats();
        if (st.produced >= 5000 && delivered + rd.lost_seen() >= st.produced)
            break;
        ASSERT_LT(clk::now(), deadline) << "timed out";
        if (!*n)
            ::usleep(500);
    }
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(gaps, 0u);
    EXPECT_EQ(delivered + rd.lost_seen(), st.produced);
    EXPECT_EQ(delivered, st.written);
    auto c = rd.losses();
    EXPECT_EQ(c.lost(), rd.lost_seen());
    EXPECT_EQ(c.lost_no_space, st.lost_no_space);
    if (mirror)
        EXPECT_EQ(copied, 0u);
    else
        EXPECT_GT(copied, 0u) << "no record wrapped: the copy path did not run";
    std::printf("mirror=%d delivered %llu lost %llu (%llu LOST records) copied %llu\n", int(mirror),
                (unsigned long long)delivered, (unsigned long long)rd.lost_seen(),
                (unsigned long long)rd.lost_records_seen(), (unsigned long long)copied);
}

INSTANTIATE_TEST_SUITE_P(LibWrap, LibReader, ::testing::Bool(),
                         [](const auto& i) { return i.param ? "mirror" : "copy"; });

// A read-only mapping: backward, overwritable; read paused, newest first.
TEST(LibOverwrite, PausedWindowNewestFirst) {
    const std::uint64_t count = 5000;
    auto o = synth(0, count, 0, 100, 2);
    o.read_only = true;
    LIB_OPEN(ch, o);
    ASSERT_TRUE(ch->ring().overwrite);
    kring::overwrite_reader rd(ch->ring());
    ASSERT_TRUE(ch->enable());
    auto deadline = clk::now() + std::chrono::seconds(60);
    while (ch->stats()->produced < count) {
        ASSERT_LT(clk::now(), deadline);
        ::usleep(1000);
    }
    // produced counts a record from its reservation on: the newest one may
    // not be published yet. Disabling waits for the (idle) generator.
    ASSERT_TRUE(ch->disable());
    std::uint64_t n = 0, expect = count - 1, bad = 0, bytes = 0;
    auto r = ch->with_output_paused([&] {
        return rd.read([&](const kring::record& rec) {
            std::uint64_t seq = 0;
            if (!synth_ok(rec, 0, &seq) || seq != expect)
                bad++;
            expect = seq - 1;
            bytes += rec.size();
            n++;
        });
    });
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_EQ(bad, 0u);
    EXPECT_GT(n, 10u);
    // The window holds all but less than one record's worth of the ring.
    EXPECT_GT(bytes + 512, ch->ring().data_size);
    // channel::snapshot() does the same pause/read/resume.
    std::uint64_t again = 0;
    auto r2 = ch->snapshot(rd, [&](const kring::record&) { again++; });
    ASSERT_TRUE(r2) << r2.error().message();
    EXPECT_EQ(again, n);  // the generator is idle: the same window
    EXPECT_FALSE(ch->stats()->flags & KRING_STATS_F_PAUSED);
}

// A writer that passed the pause check before KRING_IOC_PAUSE_OUTPUT still
// writes its record - on an overwrite ring over the oldest bytes of the
// window a reader walks from data_head - and publishes data_head after it.
// PAUSE_OUTPUT returns once such writers are done, so data_head stays where
// the reader found it until RESUME_OUTPUT. The generator writes flat out on
// CPU 0 (a record is nearly always in flight when the pause comes: each
// round waits for it to have written); 100 snapshots from CPU 1. After each
// read a grace period of the test's own lets a writer still in flight
// publish, so a moved head is always seen. The sequence numbers the pauses
// took leave gaps: newest first means decreasing, not consecutive.
TEST(LibOverwrite, PauseWaitsForWritersInFlight) {
    if (online_cpus() < 2)
        GTEST_SKIP() << "needs two CPUs";
    if (!grace_period())
        GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_GLOBAL): " << std::strerror(errno);
    auto o = synth(0, std::uint64_t(1) << 40, 0, 100, 1);
    o.read_only = true;
    LIB_OPEN(ch, o);
    kring::overwrite_reader rd(ch->ring());
    ASSERT_TRUE(pin_to(1));
    auto head = [&] { return __atomic_load_n(&ch->ctl()->data_head, __ATOMIC_ACQUIRE); };
    bool ok = bool(ch->enable());
    std::uint64_t moved = 0, bad = 0, disorder = 0, n = 0, backwards = 0;
    for (int i = 0; ok && i < 100; i++) {
        const std::uint64_t before = head();
        ok = wait_until([&] { return head() != before; });  // writing now
        ok = ok && ch->pause_output();
        const std::uint64_t h = head();
        std::uint64_t last_seq = ~0ULL, last_time = ~0ULL;
        auto r = rd.read([&](const kring::record& rec) {
            std::uint64_t seq = 0, t = 0;
            if (!synth_ok(rec, 0, &seq, &t)) {
                bad++;
                return;
            }
            disorder += seq >= last_seq;  // newest first
            backwards += t > last_time;
            last_seq = seq;
            last_time = t;
            n++;
        });
        ok = ok && r && grace_period();
        moved += head() != h;
        ok = ok && ch->resume_output();
    }
    unpin();
    ASSERT_TRUE(ok) << "no record written, or pause, read, membarrier or resume failed";
    ASSERT_TRUE(ch->disable());
    EXPECT_GT(n, 0u);
    EXPECT_EQ(moved, 0u) << "data_head moved while output was paused: a writer was in flight";
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(disorder, 0u);
    EXPECT_EQ(backwards, 0u);
    std::printf("kring paused snapshots: 100, %llu records read, head moved in %llu\n",
                (unsigned long long)n, (unsigned long long)moved);
}

// Two CPUs' channels through one poller, rate-limited so that it sleeps.
TEST(LibPoller, ManyChannelsNoMissedWakeup) {
    const int ncpu = std::min(online_cpus(), 2);
    const std::uint64_t count = 3000;
    std::vector<kring::channel> chans;
    std::vector<kring::reader> readers;
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    for (int cpu = 0; cpu < ncpu; cpu++) {
        auto o = synth(cpu, count, 20000, 64, 3);
        o.wakeup_events = 64;
        LIB_OPEN(ch, o);
        chans.push_back(std::move(*ch));
    }
    for (int cpu = 0; cpu < ncpu; cpu++) {
        readers.emplace_back(chans[cpu].ring());
        ASSERT_TRUE(p->add(chans[cpu].fd(), chans[cpu].ring(), std::uint64_t(cpu)));
    }
    for (auto& c : chans)
        ASSERT_TRUE(c.enable());
    std::vector<std::uint64_t> delivered(ncpu, 0);
    std::uint64_t waits = 0, bad = 0;
    auto deadline = clk::now() + std::chrono::seconds(60);
    for (;;) {
        bool done = true;
        for (int cpu = 0; cpu < ncpu; cpu++) {
            auto st = chans[cpu].stats();
            ASSERT_TRUE(st);
            done = done && st->produced >= count &&
                   delivered[cpu] + readers[cpu].lost_seen() >= st->produced;
        }
        if (done)
            break;
        ASSERT_LT(clk::now(), deadline) << "a wake-up was missed or records vanished";
        auto ready = p->wait(200);
        ASSERT_TRUE(ready);
        waits++;
        for (auto tag : *ready) {
            auto n = readers[tag].drain([&](const kring::record& r) {
                if (r.type() == KRING_RECORD_SAMPLE) {
                    bad += !synth_ok(r, int(tag));
                    delivered[tag]++;
                }
            });
            ASSERT_TRUE(n) << n.error().message();
        }
    }
    EXPECT_EQ(bad, 0u);
    for (int cpu = 0; cpu < ncpu; cpu++)
        EXPECT_EQ(delivered[cpu] + readers[cpu].lost_seen(), chans[cpu].stats()->produced);
    // Far fewer waits than records: the poller slept between batches.
    EXPECT_LT(waits, count * ncpu / 4);
    std::printf("%d channels, %llu waits, %llu re-check hits\n", ncpu, (unsigned long long)waits,
                (unsigned long long)p->rechecks_hit());
}

// Per-CPU synthetic channels with TIME merged into one stream: globally
// time-ordered, nothing missing.
TEST(LibMerger, PerCpuStreamIsTimeOrdered) {
    const int ncpu = online_cpus();
    if (ncpu < 2)
        GTEST_SKIP() << "needs two CPUs";
    const std::uint64_t count = 5000;
    std::vector<kring::channel> chans;
    std::vector<kring::reader> readers;
    for (int cpu = 0; cpu < 2; cpu++) {
        LIB_OPEN(ch, synth(cpu, count, 5000, 64, 6));
        chans.push_back(std::move(*ch));
    }
    for (auto& c : chans)
        readers.emplace_back(c.ring());
    kring::merger m({.window_ns = 300'000'000});
    for (auto& r : readers)
        m.add(r, synth_type);
    std::uint64_t last = 0, backwards = 0, emitted = 0, bad = 0, lost = 0;
    std::uint64_t per[2] = {0, 0};
    auto emit = [&](std::size_t src, const kring::record& r, std::uint64_t t) {
        if (r.type() == KRING_RECORD_LOST) {
            lost += kring::parse_lost(r)->lost;
            return;
        }
        bad += !synth_ok(r, int(src));
        if (t < last)
            backwards++;
        last = t;
        per[src]++;
        emitted++;
    };
    for (auto& c : chans)
        ASSERT_TRUE(c.enable());
    auto deadline = clk::now() + std::chrono::seconds(60);
    bool done = false;
    while (!done) {
        ASSERT_LT(clk::now(), deadline);
        ASSERT_TRUE(m.drain(emit));
        done = true;
        for (std::size_t i = 0; i < chans.size(); i++) {
            if (chans[i].stats()->produced < count)
                done = false;
        }
        ::usleep(2000);
    }
    for (std::size_t i = 0; i < chans.size(); i++) {
        ASSERT_TRUE(chans[i].disable());
        m.finish(i);
    }
    ASSERT_TRUE(m.drain(emit));
    ASSERT_TRUE(m.flush(emit));
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(backwards, 0u) << "the merged stream went back in time";
    EXPECT_EQ(emitted + lost, 2 * count);
    EXPECT_GT(per[0], 0u);
    EXPECT_GT(per[1], 0u);
    std::printf("merged %llu records of 2 CPUs (%llu lost), %llu by floor, %llu by window\n",
                (unsigned long long)emitted, (unsigned long long)lost,
                (unsigned long long)m.floors_used(), (unsigned long long)m.windows_used());
}

// A busy CPU and a sparse one: the sparse ring is often empty, so records
// go out by its timestamp floor (when the module publishes one) or by the
// bounded window; the stream must still be ordered.
TEST(LibMerger, SparseSourceUsesFloorOrWindow) {
    if (online_cpus() < 2)
        GTEST_SKIP() << "needs two CPUs";
    std::vector<kring::channel> chans;
    std::vector<kring::reader> readers;
    // The sparse ring writes every 500 ms, longer than the 100 ms window.
    const std::uint64_t count[2] = {12000, 3};
    const std::uint64_t rate[2] = {8000, 2};
    for (int cpu = 0; cpu < 2; cpu++) {
        LIB_OPEN(ch, synth(cpu, count[cpu], rate[cpu], 64, 6));
        chans.push_back(std::move(*ch));
    }
    for (auto& c : chans)
        readers.emplace_back(c.ring());
    kring::merger m({.window_ns = 100'000'000});
    for (auto& r : readers)
        m.add(r, synth_type);
    std::uint64_t last = 0, backwards = 0, emitted = 0, bad = 0, lost = 0, during = 0;
    auto emit = [&](std::size_t src, const kring::record& r, std::uint64_t t) {
        if (r.type() == KRING_RECORD_LOST) {
            lost += kring::parse_lost(r)->lost;
            return;
        }
        bad += !synth_ok(r, int(src));
        backwards += t < last;
        last = t;
        emitted++;
    };
    for (auto& c : chans)
        ASSERT_TRUE(c.enable());
    auto deadline = clk::now() + std::chrono::seconds(60);
    for (;;) {
        ASSERT_LT(clk::now(), deadline);
        ASSERT_TRUE(m.drain(emit));
        bool all = true;
        for (std::size_t i = 0; i < chans.size(); i++)
            all = all && chans[i].stats()->produced >= count[i];
        if (all)
            break;
        during = emitted;
        ::usleep(2000);
    }
    // produced counts a record from its reservation on: the last ones may
    // not be published yet. Disabling waits for the generators; then the
    // sources are finished and flush() finds every record.
    for (std::size_t i = 0; i < chans.size(); i++) {
        ASSERT_TRUE(chans[i].disable());
        m.finish(i);
    }
    ASSERT_TRUE(m.flush(emit));
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(backwards, 0u);
    EXPECT_EQ(emitted + lost, count[0] + count[1]);
    // Records went out while the sparse ring was empty, before the end.
    EXPECT_GT(during, 0u);
    EXPECT_GT(m.floors_used() + m.windows_used(), 0u);
    std::printf(
        "sparse merge: %llu records, %llu emitted before the end, %llu by floor, "
        "%llu by window\n",
        (unsigned long long)emitted, (unsigned long long)during,
        (unsigned long long)m.floors_used(), (unsigned long long)m.windows_used());
}

// The AUX area, once the module offers it (kring::feat_aux).

// Why the AUX tests cannot run here, if they cannot.
std::optional<std::string> aux_missing() {
    auto dev = kring::device::open();
    if (!dev)
        return dev.error().message();
    if (!(dev->abi().features & kring::feat_aux))
        return "the module does not offer the AUX area (feature bit 10)";
    return std::nullopt;
}

// The emulated tracer on CPU 0 with 2^@order AUX pages.
kring::channel_options tracer_options(int order, bool snapshot) {
    kring::channel_options o;
    o.source = KRING_SOURCE_AUX_TRACER;
    o.cpu = 0;
    o.sample_type = KRING_SAMPLE_TIME;
    o.aux_pages_order = order;
    o.aux_snapshot = snapshot;
    return o;
}

TEST(LibAux, NormalModeMapsAndReads) {
    if (auto why = aux_missing())
        GTEST_SKIP() << *why;
    auto o = tracer_options(2, false);
    LIB_OPEN(ch, o);
    ASSERT_TRUE(ch->aux().valid());
    EXPECT_EQ(ch->ctl()->aux_size, 4u * ch->abi().page_size);
    kring::reader rd(ch->ring());
    kring::aux_reader ax(ch->aux());
    ASSERT_TRUE(ch->enable());
    std::uint64_t extents = 0, bytes = 0;
    auto deadline = clk::now() + patience;
    while (extents < 10 && clk::now() < deadline) {
        ASSERT_TRUE(rd.drain([&](const kring::record& r) {
            if (auto a = kring::parse_aux(r)) {
                auto e = ax.extent(*a);
                EXPECT_EQ(e.size(), a->aux_size);
                bytes += e.size();
                extents++;
                ax.release(a->aux_offset + a->aux_size);
            }
        }));
        ::usleep(1000);
    }
    EXPECT_FALSE(ax.corrupted());
    EXPECT_GT(extents, 0u);
}

TEST(LibAux, SnapshotModeNewestBytes) {
    if (auto why = aux_missing())
        GTEST_SKIP() << *why;
    auto o = tracer_options(1, true);
    LIB_OPEN(ch, o);
    ASSERT_TRUE(ch->aux().snapshot);
    kring::aux_reader ax(ch->aux());
    ASSERT_TRUE(ch->enable());
    // Snapshot mode publishes nothing until a stop: take snapshots (each
    // resumes the tracer) until the tracer has written something.
    std::uint64_t seen = 0;
    EXPECT_TRUE(wait_until(
        [&] {
            EXPECT_TRUE(ch->with_aux_snapshot([&]() -> kring::result<void> {
                seen = ax.head();
                return {};
            }));
            return seen > 0;
        },
        patience, std::chrono::milliseconds(10)))
        << "the tracer wrote nothing";
    ASSERT_TRUE(ch->disable());
    auto e = ax.snapshot();
    EXPECT_GT(e.size(), 0u);
    EXPECT_LE(e.size(), ch->aux().size);
    EXPECT_EQ(e.wrapped, ax.head() > ch->aux().size);
}

// Snapshots while the tracer runs: each with_aux_snapshot() window is
// stable while it is read (the tracer is stopped), decodes to whole packets
// with consecutive sequence numbers, and the next snapshot is newer (one
// taken before the tracer's next tick is taken again).
TEST(LibAux, SnapshotsWhileTracing) {
    if (auto why = aux_missing())
        GTEST_SKIP() << *why;
    auto o = tracer_options(2, true);
    LIB_OPEN(ch, o);
    kring::aux_reader ax(ch->aux());
    ASSERT_TRUE(ch->enable());
    std::uint64_t last_head = 0, last_seq = 0;
    for (int i = 0; i < 4; i++) {
        std::vector<std::byte> copy1, copy2;
        std::uint64_t head = 0;
        const auto deadline = clk::now() + patience;
        do {
            ::usleep(10000);
            auto r = ch->with_aux_snapshot([&]() -> kring::result<void> {
                auto w = ax.snapshot();
                head = ax.head();
                copy1.resize(w.size());
                w.copy_to(copy1.data());
                ::usleep(20000);  // a running tracer would overwrite meanwhile
                auto w2 = ax.snapshot();
                copy2.resize(w2.size());
                w2.copy_to(copy2.data());
                return {};
            });
            ASSERT_TRUE(r) << r.error().message();
            ASSERT_EQ(copy1, copy2) << "the window changed while the tracer was stopped";
        } while (head <= last_head && clk::now() < deadline);
        EXPECT_GT(head, last_head);
        // From the first SYNC packet on: whole packets, consecutive seqs.
        std::size_t off = 0;
        for (; off + sizeof(kring_aux_packet) <= copy1.size(); off += 8) {
            kring_aux_packet p;
            std::memcpy(&p, copy1.data() + off, sizeof(p));
            if (p.magic == KRING_AUX_SYNC_MAGIC && p.type == KRING_AUX_PKT_SYNC)
                break;
        }
        std::uint64_t n = 0, prev = 0;
        while (off + sizeof(kring_aux_packet) <= copy1.size()) {
            kring_aux_packet p;
            std::memcpy(&p, copy1.data() + off, sizeof(p));
            ASSERT_GE(p.len, sizeof(p));
            ASSERT_LE(off + p.len, copy1.size());
            if (n) {
                ASSERT_EQ(p.seq, prev + 1);
            }
            prev = p.seq;
            n++;
            off += p.len;
        }
        EXPECT_EQ(off, copy1.size()) << "the window does not end at a packet boundary";
        ASSERT_GT(n, 0u);
        EXPECT_GT(prev, last_seq);
        last_head = head;
        last_seq = prev;
    }
    ASSERT_TRUE(ch->disable());
}

}  // namespace
