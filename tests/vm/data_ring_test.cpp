// In the guest: the data ring end to end with the synthetic source.
#include <poll.h>
#include <sched.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <memory>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "raw_ring.hpp"
#include "test_util.hpp"

namespace {

using clk = std::chrono::steady_clock;

int online_cpus() { return static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN)); }

constexpr std::uint64_t base_type =
    KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU;

// What one consumer saw of one channel.
struct tally {
    std::vector<std::uint8_t> seen;  // per seq: 0 nothing, 1 delivered, 2 in a LOST range
    std::uint64_t delivered = 0, lost = 0, lost_records = 0, bad = 0, dup = 0;
    std::uint64_t last_time = 0, time_backwards = 0;

    void grow(std::uint64_t seq) {
        if (seq >= seen.size())
            seen.resize(seq + 1 + seen.size() / 2);
    }
    // A record of a synthetic channel bound to @cpu.
    void record(const kring_record_header& h, const std::uint8_t* rec, std::uint64_t type,
                int cpu) {
        if (h.type == KRING_RECORD_LOST) {
            kring_lost_record l;
            if (h.size < sizeof(l)) {
                bad++;
                return;
            }
            std::memcpy(&l, rec, sizeof(l));
            lost += l.lost;
            lost_records++;
            if (l.first_seq > l.last_seq || l.last_seq - l.first_seq > (1u << 24)) {
                bad++;
                return;
            }
            grow(l.last_seq);
            for (std::uint64_t s = l.first_seq; s <= l.last_seq; s++)
                if (!seen[s])
                    seen[s] = 2;
            return;
        }
        if (h.type != KRING_RECORD_SAMPLE) {
            bad++;
            return;
        }
        kt::sample s;
        std::uint32_t pcpu = 0;
        if (!kt::parse_sample(rec, type, s) ||
            !kt::synth_payload_ok(s.raw, s.raw_size, s.seq, &pcpu) || s.cpu != std::uint32_t(cpu) ||
            pcpu != std::uint32_t(cpu)) {
            bad++;
            return;
        }
        if (s.time < last_time)
            time_backwards++;
        last_time = s.time;
        grow(s.seq);
        if (seen[s.seq] == 1)
            dup++;
        seen[s.seq] = 1;
        delivered++;
    }
    std::uint64_t uncovered(std::uint64_t produced) const {
        std::uint64_t n = 0;
        for (std::uint64_t s = 0; s < produced; s++)
            if (s >= seen.size() || !seen[s])
                n++;
        return n;
    }
};

struct cpu_run {
    int cpu = 0;
    kt::raw_channel ch;
    tally t;
    kring_stats st{};
};

// Every CPU runs a generator at full speed into a small ring while one
// consumer drains them all, sometimes sleeping: records are lost, and every
// sequence number must come out delivered intact or inside a LOST range,
// with produced == delivered + lost exactly.
void run_every_cpu(std::uint64_t limit, unsigned order, std::uint64_t nest_cpu_mask, bool print) {
    const int ncpu = online_cpus();
    std::vector<std::unique_ptr<cpu_run>> runs;
    for (int cpu = 0; cpu < ncpu; cpu++) {
        auto r = std::make_unique<cpu_run>();
        r->cpu = cpu;
        ASSERT_EQ(r->ch.open_dev(), 0);
        kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, cpu, base_type);
        a.config[1] = 40 + 24 * cpu;  // payload bytes: sizes differ per CPU
        a.config[2] = (nest_cpu_mask >> cpu) & 1 ? KRING_SYNTH_F_NEST : 0;
        a.config[3] = limit;
        ASSERT_EQ(r->ch.configure(a), 0) << "cpu " << cpu;
        ASSERT_EQ(r->ch.map_ring(order, true, false), 0);
        runs.push_back(std::move(r));
    }
    for (auto& r : runs)
        ASSERT_EQ(r->ch.ioctl0(KRING_IOC_ENABLE), 0);

    auto deadline = clk::now() + std::chrono::seconds(240);
    unsigned iter = 0, quiet = 0;
    while (clk::now() < deadline) {
        bool all_done = true;
        for (auto& r : runs) {
            const std::uint64_t type = r->ch.sample_type();
            long n = r->ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
                r->t.record(h, rec, type, r->cpu);
            });
            ASSERT_GE(n, 0) << "corrupt record on cpu " << r->cpu;
            r->st = r->ch.stats();
            // At the limit (every writer's records) the generator stops and
            // reports its last losses; done when everything produced is
            // accounted for.
            if (r->st.produced < limit || r->t.delivered + r->t.lost != r->st.produced)
                all_done = false;
        }
        if (all_done && ++quiet > 3)
            break;
        if (!all_done)
            quiet = 0;
        if (++iter % 5 == 0)
            ::usleep(2000);  // a consumer that sometimes sleeps
        else
            sched_yield();
    }
    for (auto& r : runs)
        ASSERT_EQ(r->ch.ioctl0(KRING_IOC_DISABLE), 0);
    for (auto& r : runs) {
        const std::uint64_t type = r->ch.sample_type();
        r->ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            r->t.record(h, rec, type, r->cpu);
        });
        r->st = r->ch.stats();
        const auto& st = r->st;
        const auto& t = r->t;
        std::uint64_t lost_stats = st.lost_no_space + st.lost_too_big + st.lost_paused;
        if (print)
            std::printf(
                "cpu %d: produced %llu delivered %llu lost %llu (in %llu LOST records) "
                "nested %llu wrapped-copies %llu\n",
                r->cpu, (unsigned long long)st.produced, (unsigned long long)t.delivered,
                (unsigned long long)t.lost, (unsigned long long)t.lost_records,
                (unsigned long long)st.nested, (unsigned long long)r->ch.copied);
        EXPECT_EQ(t.bad, 0u) << "cpu " << r->cpu;
        EXPECT_EQ(t.dup, 0u) << "cpu " << r->cpu;
        EXPECT_EQ(t.time_backwards, 0u) << "cpu " << r->cpu;
        // The limit counts every writer's records, the timers' too: once
        // produced reached it nothing more came (the loop's end relies on it).
        EXPECT_EQ(st.produced, limit) << "cpu " << r->cpu;
        EXPECT_EQ(t.delivered, st.written) << "cpu " << r->cpu;
        EXPECT_EQ(t.lost, lost_stats) << "cpu " << r->cpu;
        EXPECT_EQ(t.delivered + t.lost, st.produced) << "cpu " << r->cpu;
        EXPECT_EQ(t.uncovered(st.produced), 0u) << "cpu " << r->cpu;
        // The control page mirrors the same figures without a syscall.
        EXPECT_EQ(r->ch.ctl->records_written, st.written);
        EXPECT_EQ(r->ch.ctl->lost_no_space, st.lost_no_space);
        // Every eighth task-context record of a nesting generator forces a
        // nested write (an irq_work on its CPU, waited for) whenever the
        // nest timer fires: nesting does not depend on the host's pace.
        if ((nest_cpu_mask >> r->cpu) & 1) {
            EXPECT_GT(st.nested, 0u) << "no writer nested on cpu " << r->cpu;
        }
    }
}

TEST(DataRing, EveryCpuFullSpeedExactAccounting) { run_every_cpu(20000, 4, 0, true); }

TEST(DataRing, NestedTimerWritersExactAccounting) { run_every_cpu(4000, 3, ~0ULL, true); }

TEST(DataRing, ControlPageDescribesTheRing) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    ASSERT_EQ(ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1)), 0);
    ASSERT_EQ(ch.map_ring(3, true, false), 0);
    long ps = ::sysconf(_SC_PAGESIZE);
    EXPECT_EQ(ch.ctl->version, KRING_CTL_VERSION);
    EXPECT_EQ(ch.ctl->data_offset, std::uint64_t(ps));
    EXPECT_EQ(ch.ctl->data_size, std::uint64_t(8 * ps));
    EXPECT_EQ(ch.ctl->data_head, 0u);
    EXPECT_GE(ch.ctl->size, std::uint32_t(KRING_CTL_SIZE_VER2));
    EXPECT_EQ(ch.ctl->flags & KRING_CTL_F_OVERWRITE, 0u);
    // Zeroed before it could be mapped.
    for (long i = 0; i < 8 * ps; i++)
        ASSERT_EQ(ch.data[i], 0) << i;
}

// Backward ring: after pause, the newest records read intact from data_head.
TEST(DataRing, OverwriteKeepsNewestRecordsIntact) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    const std::uint64_t limit = 3000;
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, KRING_SAMPLE_TIME);
    a.config[1] = 100;
    a.config[3] = limit;
    ASSERT_EQ(ch.configure(a), 0);
    ASSERT_EQ(ch.map_ring(2, false, false), 0);  // read-only: overwrite
    EXPECT_NE(ch.ctl->flags & KRING_CTL_F_OVERWRITE, 0u);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    auto deadline = clk::now() + std::chrono::seconds(60);
    while (ch.stats().produced < limit && clk::now() < deadline)
        ::usleep(1000);
    // produced counts a record from its reservation on: the last one may
    // not be written or published yet. The generator idles after its
    // limit; disabling waits for it, so written and data_head are final.
    ASSERT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_PAUSE_OUTPUT), 0);
    kring_stats st = ch.stats();
    const std::uint64_t type = st.sample_type;
    EXPECT_EQ(st.produced, limit);
    EXPECT_EQ(st.written, limit);  // overwriting loses nothing at write time
    EXPECT_EQ(st.lost_no_space, 0u);
    EXPECT_GT(st.lost_overwritten, 0u);

    std::uint64_t head = ch.head();
    std::uint64_t pos = head, expect = limit - 1, n = 0;
    while (true) {
        std::uint64_t used = pos - head;
        if (used + sizeof(kring_record_header) > ch.data_size)
            break;
        const std::uint8_t* rec = ch.at(pos, ch.data_size - used);
        if (!rec)
            break;  // older than the window, or never written
        kring_record_header h;
        std::memcpy(&h, rec, sizeof(h));
        ASSERT_EQ(h.type, std::uint32_t(KRING_RECORD_SAMPLE)) << "record " << n;
        kt::sample s;
        ASSERT_TRUE(kt::parse_sample(rec, type, s));
        ASSERT_EQ(s.seq, expect) << "records must be newest first, consecutive";
        ASSERT_TRUE(kt::synth_payload_ok(s.raw, s.raw_size, s.seq)) << "seq " << s.seq;
        pos += h.size;
        expect--;
        n++;
    }
    std::uint64_t rec_size = 8 + 8 + 4 + 100 + 4 /*pad*/ + 8;
    EXPECT_GE(n, ch.data_size / rec_size - 1) << "the window holds fewer records than fit";
    std::printf("overwrite: %llu newest records intact of %llu written\n", (unsigned long long)n,
                (unsigned long long)limit);
    EXPECT_EQ(ch.ioctl0(KRING_IOC_RESUME_OUTPUT), 0);
    EXPECT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
}

// Reading wrapped records: contiguous through the mirror, or copied once.
void wrap_run(bool mirror) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, KRING_SAMPLE_TIME,
                                 mirror ? KRING_ATTR_F_MIRROR : 0);
    a.config[0] = 20000;  // records per second: the consumer keeps up
    a.config[1] = 232;    // 264-byte records: they straddle the end often
    a.config[3] = 1500;
    ASSERT_EQ(ch.configure(a), 0);
    const std::uint64_t type = ch.sample_type();
    ASSERT_EQ(ch.map_ring(1, true, mirror), 0);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    tally t;
    auto deadline = clk::now() + std::chrono::seconds(60);
    kring_stats st{};
    while (clk::now() < deadline) {
        ASSERT_GE(ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            t.record(h, rec, type, 0);
        }),
                  0);
        st = ch.stats();
        if (st.produced >= 1500 && t.delivered + t.lost == st.produced)
            break;
        ::usleep(500);
    }
    ASSERT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
    EXPECT_EQ(t.bad, 0u);
    EXPECT_EQ(t.delivered + t.lost, st.produced);
    EXPECT_EQ(t.uncovered(st.produced), 0u);
    if (mirror) {
        EXPECT_GT(ch.wrapped, 0u) << "no record crossed the end";
        EXPECT_EQ(ch.copied, 0u);
        // The second copy of the data pages is the same memory.
        EXPECT_EQ(std::memcmp(ch.data, ch.data + ch.data_size, ch.data_size), 0);
    } else {
        EXPECT_GT(ch.copied, 0u) << "no record crossed the end";
    }
}

TEST(DataRing, MirroredMappingReadsWrappedRecordsInPlace) { wrap_run(true); }
TEST(DataRing, PlainMappingCopiesWrappedRecords) { wrap_run(false); }

TEST(DataRing, PollWakesAtWatermarkWhenAsked) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, KRING_SAMPLE_TIME);
    a.config[0] = 2000;
    a.wakeup_watermark = 2048;
    ASSERT_EQ(ch.configure(a), 0);
    ASSERT_EQ(ch.map_ring(3, true, false), 0);
    // need_wakeup: set, full barrier, re-check the head, then sleep (the
    // producer publishes the head, smp_mb(), then reads need_wakeup).
    __atomic_store_n(&ch.ctl->need_wakeup, 1, __ATOMIC_SEQ_CST);
    EXPECT_EQ(ch.ctl->wakeup_watermark, 2048u);
    EXPECT_EQ(ch.ctl->wakeup_time, 0u);
    const std::uint64_t t0 = kt::now_ns();
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    pollfd p{ch.fd, POLLIN, 0};
    int r = ::poll(&p, 1, int(std::chrono::milliseconds(kt::patience).count()));
    ASSERT_EQ(r, 1) << "no wakeup within " << kt::patience.count() << " s";
    EXPECT_TRUE(p.revents & POLLIN);
    EXPECT_GE(ch.head(), 2048u);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
    const std::uint64_t t1 = kt::now_ns();
    EXPECT_GE(ch.stats().wakeups, 1u);
    // The last wake-up's due time, on the consumer's CLOCK_MONOTONIC.
    const std::uint64_t due = __atomic_load_n(&ch.ctl->wakeup_time, __ATOMIC_RELAXED);
    EXPECT_GE(due, t0);
    EXPECT_LE(due, t1);
}

TEST(DataRing, PausedOutputCountsLost) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, KRING_SAMPLE_TIME);
    a.config[0] = 5000;
    a.config[3] = 500;
    ASSERT_EQ(ch.configure(a), 0);
    const std::uint64_t type = ch.sample_type();
    ASSERT_EQ(ch.map_ring(4, true, false), 0);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_PAUSE_OUTPUT), 0);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    auto deadline = clk::now() + std::chrono::seconds(30);
    while (ch.stats().produced < 100 && clk::now() < deadline)
        ::usleep(1000);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_RESUME_OUTPUT), 0);
    tally t;
    kring_stats st{};
    while (clk::now() < deadline) {
        ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            t.record(h, rec, type, 0);
        });
        st = ch.stats();
        if (st.produced >= 500 && t.delivered + t.lost == st.produced)
            break;
        ::usleep(1000);
    }
    EXPECT_GE(st.lost_paused, 100u);
    EXPECT_EQ(t.lost, st.lost_paused);
    EXPECT_EQ(t.delivered + t.lost, st.produced);
    EXPECT_EQ(t.uncovered(st.produced), 0u);
    EXPECT_EQ(t.bad, 0u);
}

// The channel's sample_type as the kernel reports it describes its SAMPLE
// layout alone: SEQ is always set, given or not, and so is RAW for the
// sources that always write it; a timer adds only SEQ.
TEST(DataRing, SampleTypeReportedBackDescribesTheLayout) {
    struct {
        std::uint32_t source;
        std::uint64_t asked, reported;
    } cases[] = {
        {KRING_SOURCE_NONE, KRING_SAMPLE_TIME, KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ},
        {KRING_SOURCE_NONE, KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ,
         KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ},
        {KRING_SOURCE_NONE, 0, KRING_SAMPLE_SEQ},
        {KRING_SOURCE_SYNTHETIC, KRING_SAMPLE_TID,
         KRING_SAMPLE_TID | KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ},
        {KRING_SOURCE_TIMER, KRING_SAMPLE_IP, KRING_SAMPLE_IP | KRING_SAMPLE_SEQ},
        {KRING_SOURCE_SCHED, KRING_SAMPLE_TIME,
         KRING_SAMPLE_TIME | KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ},
    };
    for (const auto& c : cases) {
        kt::raw_channel ch;
        ASSERT_EQ(ch.open_dev(), 0);
        EXPECT_EQ(ch.sample_type(), 0u) << "unconfigured";
        kring_attr a = kt::make_attr(c.source, 0, c.asked);
        if (c.source == KRING_SOURCE_TIMER)
            a.config[0] = 100;
        int e = ch.configure(a);
        if (e == EOPNOTSUPP || e == EACCES)
            continue;  // not built in, or not ours to run
        ASSERT_EQ(e, 0) << "source " << c.source;
        kring_stats st = ch.stats();
        EXPECT_GE(st.size, std::uint32_t(KRING_STATS_SIZE_VER2));
        EXPECT_EQ(st.sample_type, c.reported) << "source " << c.source;
    }
}

// KRING_IOC_STATS encodes the caller's struct size: a binary built
// against an older header passes a smaller one, under another ioctl
// number, and gets exactly its own version filled in.
TEST(DataRing, StatsAnswerEveryPublishedSize) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    ASSERT_EQ(ch.configure(kt::make_attr(KRING_SOURCE_NONE, 0, KRING_SAMPLE_TIME)), 0);
    ASSERT_EQ(ch.map_ring(2, true, false), 0);
    for (std::uint32_t size :
         {std::uint32_t(KRING_STATS_SIZE_VER0), std::uint32_t(KRING_STATS_SIZE_VER1),
          std::uint32_t(KRING_STATS_SIZE_VER2)}) {
        std::uint8_t buf[KRING_STATS_SIZE_VER2 + 16];
        std::memset(buf, 0xa5, sizeof(buf));
        std::memcpy(buf, &size, sizeof(size));
        unsigned long req =
            _IOC(_IOC_READ | _IOC_WRITE, KRING_IOC_MAGIC, _IOC_NR(KRING_IOC_STATS), size);
        ASSERT_EQ(::ioctl(ch.fd, req, buf), 0) << size << ": " << std::strerror(errno);
        kring_stats st;
        std::memcpy(&st, buf, sizeof(st));
        EXPECT_EQ(st.size, size);
        EXPECT_NE(st.flags & KRING_STATS_F_MAPPED, 0u) << size;
        for (std::uint32_t i = size; i < sizeof(buf); i++) {
            ASSERT_EQ(buf[i], 0xa5) << size << ": byte " << i << " written";
        }
        if (size >= KRING_STATS_SIZE_VER2) {
            EXPECT_EQ(st.sample_type, KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ);
        }
    }
}

}  // namespace
