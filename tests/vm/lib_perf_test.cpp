// In the guest: libkring's reader, overwrite reader, poller and merger on
// real perf_event_open buffers (software cpu-clock events).
#include <linux/perf_event.h>

#include <atomic>
#include <thread>

#include "lib_util.hpp"

using namespace kt;

namespace {

constexpr std::uint64_t perf_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

perf_event_attr cpu_clock(bool backward = false) {
    perf_event_attr a;
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.type = PERF_TYPE_SOFTWARE;
    a.config = PERF_COUNT_SW_CPU_CLOCK;
    a.sample_period = 100000;  // every 100 us of CPU time
    a.sample_type = perf_type;
    a.disabled = 1;
    a.use_clockid = 1;
    a.clockid = CLOCK_MONOTONIC;  // the merger's window clock
    a.write_backward = backward;
    return a;
}

#define PERF_OPEN(var, attr, cpu, order)                                            \
    auto var = kring::perf_ring::open(attr, -1, cpu, order);                        \
    if (!var && (var.error().code() == ENOENT || var.error().code() == ENOSYS ||    \
                 var.error().code() == EACCES || var.error().code() == EOPNOTSUPP)) \
        GTEST_SKIP() << "perf_event_open unavailable: " << var.error().message();   \
    ASSERT_TRUE(var) << var.error().message()

void spin_for(std::chrono::milliseconds d) {
    auto end = clk::now() + d;
    volatile std::uint64_t x = 0;
    while (clk::now() < end)
        x = x + 1;
}

// Keep both CPUs busy so that cpu-clock samples everywhere.
void spin_all(std::chrono::milliseconds d) {
    std::vector<std::thread> t;
    for (int i = 0; i < online_cpus(); i++)
        t.emplace_back([d] { spin_for(d); });
    for (auto& th : t)
        th.join();
}

// How many samples come in a given time depends on the host's pace: the
// tests below spin until what they need was written.
TEST(LibPerf, ReaderOnCpuClockSamples) {
    PERF_OPEN(pr, cpu_clock(), 0, 6);
    EXPECT_EQ(pr->ring().kind, kring::ring_kind::perf);
    kring::reader rd(pr->ring());
    ASSERT_TRUE(pr->enable());
    std::uint64_t samples = 0, others = 0, last = 0, backwards = 0, wrong_cpu = 0;
    auto count = [&](const kring::record& r) {
        if (r.type() != PERF_RECORD_SAMPLE) {
            others++;
            return;
        }
        auto s = kring::parse_sample(r, perf_type);
        ASSERT_TRUE(s);
        wrong_cpu += s->cpu != 0;
        backwards += s->time < last;
        last = s->time;
        samples++;
    };
    wait_until([&] {
        spin_all(std::chrono::milliseconds(50));
        EXPECT_TRUE(rd.drain(count));
        return samples > 10;
    });
    ASSERT_TRUE(pr->disable());
    auto n = rd.drain(count);
    ASSERT_TRUE(n) << n.error().message();
    EXPECT_GT(samples, 10u);
    EXPECT_EQ(wrong_cpu, 0u);
    EXPECT_EQ(backwards, 0u);
    EXPECT_EQ(pr->page()->data_tail, pr->page()->data_head);
    EXPECT_EQ(rd.losses().lost(), 0u);  // perf: only LOST records report losses
    std::printf("perf cpu-clock: %llu samples, %llu other records, %llu lost\n",
                (unsigned long long)samples, (unsigned long long)others,
                (unsigned long long)rd.lost_seen());
}

// A one-page perf ring left unread overflows; once there is room again,
// perf writes a PERF_RECORD_LOST, which the reader counts. The event's own
// count of lost samples (PERF_FORMAT_LOST) says when the overflow came.
TEST(LibPerf, LostRecordsSurface) {
    auto a = cpu_clock();
    a.sample_period = 20000;
    a.read_format = PERF_FORMAT_LOST;
    PERF_OPEN(pr, a, 0, 0);
    kring::reader rd(pr->ring());
    ASSERT_TRUE(pr->enable());
    // Fill the page without reading (how fast depends on the kernel's
    // cpu-clock throttling under emulation), then sample until perf lost
    // one.
    if (!wait_until([&] {
            spin_all(std::chrono::milliseconds(50));
            return rd.pending_bytes() + 64 >= pr->ring().data_size;
        }))
        GTEST_SKIP() << "cpu-clock did not fill one page in " << patience.count() << " s";
    auto lost_by_perf = [&] {
        std::uint64_t v[2] = {0, 0};  // value, lost
        return ::read(pr->fd(), v, sizeof(v)) == ssize_t(sizeof(v)) ? v[1] : 0;
    };
    EXPECT_TRUE(wait_until([&] {
        spin_all(std::chrono::milliseconds(20));
        return lost_by_perf() > 0;
    })) << "perf lost no sample into a full page";
    std::uint64_t samples = 0, lost_records = 0;
    auto count = [&](const kring::record& r) {
        samples += r.type() == PERF_RECORD_SAMPLE;
        if (auto l = kring::parse_lost(r, kring::ring_kind::perf)) {
            lost_records++;
            EXPECT_GT(l->lost, 0u);
            EXPECT_FALSE(l->has_range);
        }
    };
    ASSERT_TRUE(rd.drain(count));
    // Room again: the next sample that fits is preceded by the LOST record.
    wait_until([&] {
        spin_all(std::chrono::milliseconds(50));
        EXPECT_TRUE(rd.drain(count));
        return lost_records > 0;
    });
    ASSERT_TRUE(pr->disable());
    EXPECT_GT(samples, 0u);
    EXPECT_GT(lost_records, 0u);
    EXPECT_GT(rd.lost_seen(), 0u);
    std::printf("perf one-page ring: %llu samples, %llu lost in %llu LOST records\n",
                (unsigned long long)samples, (unsigned long long)rd.lost_seen(),
                (unsigned long long)lost_records);
}

TEST(LibPerf, OverwriteRingPausedRead) {
    PERF_OPEN(pr, cpu_clock(true), 0, 1);
    EXPECT_TRUE(pr->ring().overwrite);
    kring::overwrite_reader rd(pr->ring());
    ASSERT_TRUE(pr->enable());
    // Until the ring has been written round once (a backward ring's head
    // goes down from 0).
    EXPECT_TRUE(wait_until([&] {
        spin_all(std::chrono::milliseconds(50));
        return 0 - __atomic_load_n(&pr->page()->data_head, __ATOMIC_ACQUIRE) >=
               pr->ring().data_size;
    })) << "the overwrite ring did not fill";
    std::uint64_t n = 0, last = ~0ULL, forwards = 0;
    auto r = pr->snapshot(rd, [&](const kring::record& rec) {
        if (rec.type() != PERF_RECORD_SAMPLE)
            return;
        auto s = kring::parse_sample(rec, perf_type);
        ASSERT_TRUE(s);
        forwards += s->time > last;  // newest first
        last = s->time;
        n++;
    });
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_GT(n, 10u);
    EXPECT_EQ(forwards, 0u);
}

// A writer that passed perf's pause check before PERF_EVENT_IOC_PAUSE_OUTPUT
// still writes its record - at the far end of the window a reader walks from
// data_head - and publishes data_head after it. pause_output() returns once
// such writers are done, so data_head stays where the reader found it until
// resume_output(). cpu-clock samples on CPU 0, where a thread spins, each
// copying 8 KiB of that thread's stack every 20 us of its CPU time (a writer
// is often inside a record; each round waits for one to have written); 100
// snapshots from CPU 1. After each read a grace period of the test's own
// lets any writer still in flight publish, so a moved head is always seen.
TEST(LibPerf, PauseOutputWaitsForWritersInFlight) {
    if (online_cpus() < 2)
        GTEST_SKIP() << "needs two CPUs";
    if (!grace_period())
        GTEST_SKIP() << "membarrier(MEMBARRIER_CMD_GLOBAL): " << std::strerror(errno);
    auto a = cpu_clock(true);
    a.sample_type = perf_type | PERF_SAMPLE_STACK_USER;
    a.sample_period = 20000;
    a.sample_stack_user = 8192;
    PERF_OPEN(pr, a, 0, 4);
    std::atomic<bool> stop{false};
    std::atomic<int> pinned{-1};
    std::thread spinner([&] {
        pinned = pin_to(0);
        while (!stop)
            spin_for(std::chrono::milliseconds(10));
    });
    const bool on_cpu1 = pin_to(1);
    kring::overwrite_reader rd(pr->ring());
    auto head = [&] { return __atomic_load_n(&pr->page()->data_head, __ATOMIC_ACQUIRE); };
    bool ok = bool(pr->enable());
    std::uint64_t moved = 0, forwards = 0, samples = 0, torn = 0;
    for (int i = 0; ok && i < 100; i++) {
        const std::uint64_t before = head();
        ok = wait_until([&] { return head() != before; });  // sampling now
        ok = ok && pr->pause_output();
        const std::uint64_t h = head();
        std::uint64_t last = ~0ULL;
        auto r = rd.read([&](const kring::record& rec) {
            // TID, then TIME: at the same place whatever follows.
            if (rec.type() != PERF_RECORD_SAMPLE || rec.size() < 24) {
                torn += rec.type() == PERF_RECORD_SAMPLE;
                return;
            }
            std::uint64_t t;
            std::memcpy(&t, rec.bytes().data() + 16, sizeof(t));
            forwards += t > last;  // newest first
            last = t;
            samples++;
        });
        ok = ok && r && grace_period();
        moved += head() != h;
        ok = ok && pr->resume_output();
    }
    stop = true;
    spinner.join();
    unpin();
    ASSERT_TRUE(ok) << "no sample written, or pause, read, membarrier or resume failed";
    ASSERT_TRUE(pinned == 1 && on_cpu1) << "cannot pin to CPUs 0 and 1";
    ASSERT_TRUE(pr->disable());
    EXPECT_GT(samples, 0u);
    EXPECT_EQ(moved, 0u) << "data_head moved while output was paused: a writer was in flight";
    EXPECT_EQ(forwards, 0u);
    EXPECT_EQ(torn, 0u);
    std::printf("perf paused snapshots: 100, %llu samples read, head moved in %llu\n",
                (unsigned long long)samples, (unsigned long long)moved);
}

TEST(LibPerf, PollerAndMergerAcrossCpus) {
    const int ncpu = online_cpus();
    if (ncpu < 2)
        GTEST_SKIP() << "needs two CPUs";
    std::vector<kring::perf_ring> rings;
    std::vector<kring::reader> readers;
    for (int cpu = 0; cpu < 2; cpu++) {
        auto a = cpu_clock();
        a.wakeup_events = 16;
        PERF_OPEN(pr, a, cpu, 4);
        rings.push_back(std::move(*pr));
    }
    auto p = kring::poller::create();
    ASSERT_TRUE(p);
    kring::merger m({.window_ns = 200'000'000});
    for (int cpu = 0; cpu < 2; cpu++) {
        readers.emplace_back(rings[cpu].ring());
        ASSERT_TRUE(p->add(rings[cpu].fd(), rings[cpu].ring(), std::uint64_t(cpu)));
    }
    for (auto& r : readers)
        m.add(r, perf_type);
    std::uint64_t last = 0, backwards = 0, per[2] = {0, 0}, woken = 0;
    auto emit = [&](std::size_t src, const kring::record& r, std::uint64_t t) {
        if (r.type() != PERF_RECORD_SAMPLE)
            return;
        backwards += t < last;
        last = t;
        per[src]++;
    };
    for (auto& r : rings)
        ASSERT_TRUE(r.enable());
    // Both CPUs busy until each ring gave samples and the poller woke.
    std::atomic<bool> stop{false};
    std::thread load([&stop] {
        while (!stop)
            spin_all(std::chrono::milliseconds(50));
    });
    auto deadline = clk::now() + patience;
    bool waited = true, drained = true;
    while ((per[0] <= 10 || per[1] <= 10 || !woken) && clk::now() < deadline) {
        auto ready = p->wait(50);
        if (!(waited = bool(ready)))
            break;
        woken += !ready->empty();
        if (!(drained = bool(m.drain(emit))))
            break;
    }
    stop = true;
    load.join();
    ASSERT_TRUE(waited);
    ASSERT_TRUE(drained);
    for (std::size_t i = 0; i < rings.size(); i++) {
        ASSERT_TRUE(rings[i].disable());
        m.finish(i);
    }
    ASSERT_TRUE(m.flush(emit));
    EXPECT_EQ(backwards, 0u);
    EXPECT_GT(per[0], 10u);
    EXPECT_GT(per[1], 10u);
    EXPECT_GT(woken, 0u);
    std::printf("perf merge: cpu0 %llu cpu1 %llu samples, %llu by window\n",
                (unsigned long long)per[0], (unsigned long long)per[1],
                (unsigned long long)m.windows_used());
}

}  // namespace
