// In the guest: the AUX area with kring's emulated tracer, read through raw
// syscalls (tests/vm/raw_ring.hpp for the data ring) and judged by the
// oracle in aux_oracle.hpp, independent of libkring and of the kring tool.
#include <fcntl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <sys/syscall.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <map>
#include <cstdio>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "aux_oracle.hpp"
#include "hotplug.hpp"
#include "raw_ring.hpp"
#include "test_util.hpp"
#include "errno_assert.hpp"

namespace {

using namespace kt;
using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

TEST(Aux, AbiOffersTheAuxArea) {
    kt::raw_channel c;
    ASSERT_EQ(c.open_dev(), 0);
    kring_abi_info info{};
    info.size = sizeof(info);
    ASSERT_EQ(c.ioctl_arg(KRING_IOC_QUERY_ABI, &info), 0);
    EXPECT_TRUE(info.features & KRING_FEAT_AUX);
    EXPECT_TRUE(info.features & KRING_FEAT_AUX_TRACER);
}

// Normal mode, a consumer that keeps up: every packet arrives, in order,
// extents are contiguous, and the byte counts agree everywhere. The area
// wraps, and holds 2 s of packets (the data ring all of their records): a
// consumer held up for less than that, on a loaded host, still keeps up.
TEST(Aux, NormalModeFastConsumerLosesNothing) {
    tracer_cfg c;
    c.limit = 20000;    // 2.5 s at 8 per ms, 1.2 MB
    c.per_tick = 8;     // a SYNC and 7 DATA packets, 480 bytes a millisecond
    c.aux_pages = 256;  // 1 MB: 2.2 s of packets
    c.data_order = 6;   // 256 kB: every AUX record of the run
    aux_channel a;
    ASSERT_EQ(a.setup(c), 0);
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_ENABLE), 0);

    tracer_output o(c.payload);
    auto deadline = clk::now() + 60s;
    while (o.pp.seqs.size() < c.limit && clk::now() < deadline && !o.bad) {
        o.read(a);
        std::this_thread::sleep_for(1ms);
    }
    ASSERT_EQ(o.bad, 0) << o.pp.why;
    ASSERT_EQ(o.pp.seqs.size(), c.limit);
    for (std::size_t i = 0; i < o.pp.seqs.size(); i++)
        ASSERT_EQ(o.pp.seqs[i], i) << "packet sequence broken";
    EXPECT_EQ(o.truncated, 0u);
    EXPECT_EQ(o.itraces.size(), 1u);
    EXPECT_EQ(a.aux_head(), o.bytes);
    // The AUX counters are raised after the extent's AUX record is in the
    // data ring: the last one may still be on its way up when that record
    // is read. Disabling waits for the tick, then they are final.
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_DISABLE), 0);
    kring_stats st = a.ch.stats();
    EXPECT_EQ(st.aux_bytes, o.bytes);
    EXPECT_EQ(st.aux_records, o.recs.size());
    std::printf("aux normal: %zu packets, %zu AUX records, %llu bytes, chunk order %llu\n",
                o.pp.seqs.size(), o.recs.size(), (unsigned long long)o.bytes,
                (unsigned long long)st.aux_chunk_order);
}

// Normal mode, a consumer that sleeps: the tracer finds the area full and
// stops; every gap in the packet sequence follows a TRUNCATED record. The
// consumer releases nothing before the first TRUNCATED record: the area
// overflows however fast the host runs either side.
TEST(Aux, SlowConsumerGapsAreTruncated) {
    tracer_cfg c;
    c.limit = 20000;
    c.aux_pages = 2;
    aux_channel a;
    ASSERT_EQ(a.setup(c), 0);
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_ENABLE), 0);

    tracer_output o(c.payload);
    packet_parser& pp = o.pp;
    const auto& recs = o.recs;
    std::uint64_t next_pos = 0, next_seq = 0, bytes = 0, gaps = 0, lost = 0, truncated = 0;
    bool pending = false;  // a TRUNCATED record since the last packet
    std::size_t done = 0;
    // Parses the records drained so far.
    auto take = [&] {
        for (; done < recs.size(); done++) {
            const auto& r = recs[done];
            ASSERT_EQ(r.aux_offset, next_pos);
            if (r.aux_size) {
                std::size_t first = pp.seqs.size();
                ASSERT_TRUE(pp.parse(a.bytes(r.aux_offset, r.aux_size))) << pp.why;
                std::uint64_t s0 = pp.seqs[first];
                if (s0 != next_seq) {
                    ASSERT_TRUE(pending)
                        << "gap " << next_seq << ".." << s0 - 1 << " without a TRUNCATED record";
                    gaps++;
                    lost += s0 - next_seq;
                }
                ASSERT_TRUE(pp.sync[first]) << "an extent starts with a SYNC packet";
                for (std::size_t i = first + 1; i < pp.seqs.size(); i++)
                    ASSERT_EQ(pp.seqs[i], pp.seqs[i - 1] + 1) << "gap inside an extent";
                next_seq = pp.seqs.back() + 1;
                pending = false;
            }
            if (r.flags & KRING_AUX_FLAG_TRUNCATED) {
                pending = true;
                truncated++;
            }
            next_pos = r.aux_offset + r.aux_size;
            bytes += r.aux_size;
        }
    };
    // The tracer says nothing when it reaches its limit: the run is over
    // when the last packet came, or after a TRUNCATED record (the last
    // packets may have been dropped) and no record for 1.5 s. Until then
    // the consumer goes on, for as long as it takes.
    auto last_new = clk::now();
    auto deadline = clk::now() + kt::patience;
    while (clk::now() < deadline && next_seq < c.limit &&
           !(pending && clk::now() - last_new >= 1500ms)) {
        std::size_t before = recs.size();
        o.drain(a);
        if (recs.size() != before)
            last_new = clk::now();
        ASSERT_NO_FATAL_FAILURE(take());
        if (truncated)
            a.release_aux(next_pos);
        std::this_thread::sleep_for(20ms);  // the slow consumer
    }
    // As above: the counters are final once the tick has stopped, and so
    // is the data ring.
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_DISABLE), 0);
    o.drain(a);
    ASSERT_NO_FATAL_FAILURE(take());
    EXPECT_TRUE(next_seq == c.limit || pending) << "packets missing at the end";
    lost += c.limit - next_seq;
    EXPECT_GT(gaps, 0u) << "the consumer was not slow enough to lose anything";
    EXPECT_EQ(pp.seqs.size() + lost, c.limit);
    EXPECT_EQ(o.bad, 0);
    EXPECT_EQ(a.aux_head(), bytes);
    kring_stats st = a.ch.stats();
    EXPECT_EQ(st.aux_bytes, bytes);
    EXPECT_EQ(st.aux_truncated, truncated);
    std::printf(
        "aux slow: %zu packets delivered, %llu lost in %llu gaps, %llu TRUNCATED "
        "records, %llu bytes\n",
        pp.seqs.size(), (unsigned long long)lost, (unsigned long long)gaps,
        (unsigned long long)truncated, (unsigned long long)bytes);
}

// Snapshot mode: take snapshots (each stops the tracer until RESUME) until
// the tracer has finished; every window is intact and the last one holds
// exactly the newest packets, ending with the last one.
void snapshot_case(std::uint64_t limit, unsigned aux_pages, bool expect_wrap) {
    tracer_cfg c;
    c.limit = limit;
    c.aux_pages = aux_pages;
    c.aux_rw = false;
    aux_channel a;
    ASSERT_EQ(a.setup(c), 0);
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_ENABLE), 0);

    packet_parser pp(c.payload);
    std::uint64_t head = 0, start = 0;
    auto deadline = clk::now() + 30s;
    while (clk::now() < deadline) {
        std::this_thread::sleep_for(100ms);
        ASSERT_EQ(a.ch.ioctl0(KRING_IOC_AUX_SNAPSHOT), 0);
        head = a.aux_head();
        start = head >= a.aux_len ? head - a.aux_len : 0;
        auto b = a.bytes(start, head - start);
        // The unit stays stopped until RESUME: the window does not change.
        std::this_thread::sleep_for(20ms);
        ASSERT_EQ(a.aux_head(), head);
        ASSERT_TRUE(a.bytes(start, head - start) == b) << "the tracer wrote after a snapshot";
        std::size_t from = start == 0 ? 0 : find_sync(b);
        ASSERT_NE(from, std::string::npos) << "no SYNC packet in the snapshot";
        pp = packet_parser(c.payload);
        ASSERT_TRUE(pp.parse(b, from)) << pp.why;
        if (!pp.seqs.empty() && pp.seqs.back() == limit - 1)
            break;
        ASSERT_EQ(a.ch.ioctl0(KRING_IOC_AUX_RESUME), 0);
    }
    ASSERT_FALSE(pp.seqs.empty());
    EXPECT_EQ(pp.seqs.back(), limit - 1) << "the snapshot misses the newest packets";
    for (std::size_t i = 1; i < pp.seqs.size(); i++)
        ASSERT_EQ(pp.seqs[i], pp.seqs[i - 1] + 1);
    EXPECT_EQ(head > a.aux_len, expect_wrap);
    if (!expect_wrap) {
        EXPECT_EQ(pp.seqs.front(), 0u);
    }
    tracer_output o(c.payload);
    o.drain(a);
    ASSERT_FALSE(o.recs.empty());
    const auto& r = o.recs.back();
    EXPECT_TRUE(r.flags & KRING_AUX_FLAG_OVERWRITE);
    EXPECT_EQ(r.aux_offset, start);
    EXPECT_EQ(r.aux_offset + r.aux_size, head);
    EXPECT_EQ(o.bad, 0);
    std::printf("aux snapshot: head %llu, window %llu bytes, packets %llu..%llu%s\n",
                (unsigned long long)head, (unsigned long long)(head - start),
                (unsigned long long)pp.seqs.front(), (unsigned long long)pp.seqs.back(),
                head > a.aux_len ? " (wrapped)" : "");
}

TEST(Aux, SnapshotNotWrapped) { snapshot_case(256, 16, false); }
TEST(Aux, SnapshotWrapped) { snapshot_case(5000, 4, true); }

// Pause/resume: nothing is traced while paused, and what is traced between
// resume and pause carries timestamps inside that bracket. Each bracket
// lasts until the tracer has written in it.
TEST(Aux, PauseResumeBrackets) {
    tracer_cfg c;
    c.aux_pages = 64;  // room for every packet of a bracket: no TRUNCATED gaps
    aux_channel a;
    ASSERT_EQ(a.setup(c), 0);
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_ENABLE), 0);
    tracer_output o(c.payload);
    const packet_parser& pp = o.pp;
    EXPECT_TRUE(wait_until([&] { return a.aux_head() > 0; })) << "the tracer did not start";
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_AUX_PAUSE), 0);
    std::uint64_t t_paused = now_ns();
    ASSERT_NO_FATAL_FAILURE(o.read_whole(a));
    std::size_t n1 = pp.seqs.size();
    ASSERT_GT(n1, 0u);
    for (auto t : pp.times)
        EXPECT_LE(t, t_paused);
    std::uint64_t head1 = a.aux_head();
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(a.aux_head(), head1) << "the tracer ran while paused";

    std::uint64_t t0 = now_ns();
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_AUX_RESUME), 0);
    EXPECT_TRUE(wait_until([&] { return a.aux_head() > head1; })) << "nothing after resume";
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_AUX_PAUSE), 0);
    std::uint64_t t1 = now_ns();
    ASSERT_NO_FATAL_FAILURE(o.read_whole(a));
    ASSERT_GT(pp.seqs.size(), n1) << "nothing traced after resume";
    EXPECT_EQ(pp.seqs[n1], pp.seqs[n1 - 1] + 1) << "packets generated while paused";
    EXPECT_TRUE(pp.sync[n1]) << "tracing resumes with a SYNC packet";
    for (std::size_t i = n1; i < pp.seqs.size(); i++) {
        EXPECT_GE(pp.times[i], t0);
        EXPECT_LE(pp.times[i], t1);
    }
}

// Task mode, and CPU mode's hotplug, ride on the capture modes
// (KRING_FEAT_CAPTURE).
bool capture_available() { return kt::abi_features() & KRING_FEAT_CAPTURE; }

// CPU mode on a CPU that goes offline: the unit stops there, the control
// page says so, and it starts again (with a SYNC packet, no sequence gap)
// when the CPU returns. Every packet comes from that CPU.
TEST(Aux, CpuModeFollowsHotplug) {
    if (!kt::cpu1_hotpluggable())
        GTEST_SKIP() << "CPU 1 cannot be taken offline here (" << kt::cpu1_online << ")";
    if (!capture_available())
        GTEST_SKIP() << "the module has no capture modes (KRING_FEAT_CAPTURE clear)";
    tracer_cfg c;
    c.cpu = 1;
    c.per_tick = 8;
    c.aux_pages = 64;
    aux_channel a;
    ASSERT_EQ(a.setup(c), 0);
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_ENABLE), 0);
    tracer_output o(c.payload);
    const packet_parser& pp = o.pp;
    wait_until([&] {
        o.read(a);
        return !pp.seqs.empty();
    });
    ASSERT_NO_FATAL_FAILURE(o.read_whole(a));
    ASSERT_GT(pp.seqs.size(), 0u);
    EXPECT_EQ(a.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);

    kt::cpu1_online_guard guard;
    if (int err = kt::set_cpu1_online(false))
        GTEST_SKIP() << "cannot offline CPU 1: " << std::strerror(err);
    EXPECT_TRUE(a.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE);
    ASSERT_NO_FATAL_FAILURE(o.read_whole(a));
    std::size_t at_offline = pp.seqs.size();
    std::uint64_t head = a.aux_head();
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(a.aux_head(), head) << "the unit ran while its CPU was offline";

    ASSERT_EQ(kt::set_cpu1_online(true), 0);
    EXPECT_EQ(a.ch.ctl->flags & KRING_CTL_F_CPU_OFFLINE, 0u);
    wait_until([&] {
        o.read(a);
        return pp.seqs.size() > at_offline + 8;
    });
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_DISABLE), 0);
    ASSERT_NO_FATAL_FAILURE(o.read_whole(a));
    std::printf("aux hotplug: %zu packets before offline, %zu after the CPU returned\n", at_offline,
                pp.seqs.size() - at_offline);
    ASSERT_GT(pp.seqs.size(), at_offline + 8) << "the unit did not restart";
    EXPECT_TRUE(pp.sync[at_offline]) << "tracing restarts with a SYNC packet";
    for (std::size_t i = 0; i < pp.seqs.size(); i++) {
        ASSERT_EQ(pp.seqs[i], i) << "packet sequence broken";
        ASSERT_EQ(pp.cpus[i], 1u);
    }
    EXPECT_EQ(o.itraces.size(), 1u);
}

// Task mode: the unit follows one thread on and off the CPUs. The thread
// busy-loops (150 ms of its CPU time), sleeps 300 ms, busy-loops again,
// while another thread stays busy the whole time: packets come from both
// busy phases and, during the sleep, no more than the thread's own time on
// a CPU then accounts for (the other thread is never traced); the packet
// stream is whole and ITRACE_START names the thread. Packet times are
// spread over the run time they stand for, so they fall where the thread
// ran.
// The followed thread of TaskModeTracesOnlyWhileTheTaskRuns: once started,
// 150 ms of its CPU time, a 300 ms sleep, 150 ms more; a busy thread on
// the other CPUs meanwhile (the tracer must not trace it).
class busy_sleep_busy {
public:
    busy_sleep_busy() {
        target_ = std::thread([this] {
            tid_ = static_cast<int>(::syscall(SYS_gettid));
            while (!go_)
                std::this_thread::sleep_for(1ms);
            busy_cpu(150ms);
            std::uint64_t cpu0 = thread_cpu_ns();
            sleep_from = now_ns();
            std::this_thread::sleep_for(300ms);
            sleep_to = now_ns();
            cpu_in_sleep = thread_cpu_ns() - cpu0;
            busy_cpu(150ms);
            done_ = true;
        });
        noise_ = std::thread([this] {
            while (!stop_noise_)
                busy(10ms);
        });
        while (!tid_)
            std::this_thread::sleep_for(1ms);
    }
    ~busy_sleep_busy() {
        go_ = true;
        join();
        stop_noise();
    }
    int tid() const { return tid_; }
    void start() { go_ = true; }
    bool done() const { return done_; }
    void join() {
        if (target_.joinable())
            target_.join();
    }
    void stop_noise() {
        stop_noise_ = true;
        if (noise_.joinable())
            noise_.join();
    }

    std::atomic<std::uint64_t> sleep_from{0}, sleep_to{0}, cpu_in_sleep{0};

private:
    static void busy(std::chrono::milliseconds d) {
        auto end = clk::now() + d;
        volatile std::uint64_t x = 0;
        while (clk::now() < end)
            x = x + 1;
    }
    static void busy_cpu(std::chrono::milliseconds d) {
        const std::uint64_t end = thread_cpu_ns() + std::uint64_t(d.count()) * 1000000;
        volatile std::uint64_t x = 0;
        while (thread_cpu_ns() < end)
            for (int i = 0; i < 1000; i++)
                x = x + 1;
    }

    std::atomic<int> tid_{0};
    std::atomic<bool> go_{false}, done_{false}, stop_noise_{false};
    std::thread target_, noise_;
};

TEST(Aux, TaskModeTracesOnlyWhileTheTaskRuns) {
    if (!capture_available())
        GTEST_SKIP() << "the module has no capture modes (KRING_FEAT_CAPTURE clear)";
    busy_sleep_busy t;
    tracer_cfg c;
    c.cpu = -1;
    c.pid = t.tid();
    c.per_tick = 16;
    c.aux_pages = 128;
    aux_channel a;
    int err = a.setup(c);
    ASSERT_EQ(err, 0) << "task-mode tracer refused";
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_ENABLE), 0);
    t.start();

    tracer_output o(c.payload);
    const packet_parser& pp = o.pp;
    const auto& itraces = o.itraces;
    const std::uint64_t& truncated = o.truncated;
    while (!t.done()) {
        o.read(a);
        std::this_thread::sleep_for(2ms);
    }
    t.join();
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_DISABLE), 0);
    o.read(a);
    t.stop_noise();

    EXPECT_EQ(o.bad, 0) << pp.why;
    ASSERT_EQ(itraces.size(), 1u);
    EXPECT_EQ(itraces[0].pid, static_cast<std::uint32_t>(::getpid()));
    EXPECT_EQ(itraces[0].tid, static_cast<std::uint32_t>(t.tid()));
    ASSERT_FALSE(pp.seqs.empty()) << "nothing traced";
    std::uint64_t gaps = 0, before = 0, during = 0, after = 0;
    for (std::size_t i = 0; i < pp.seqs.size(); i++) {
        if (i)
            gaps += pp.seqs[i] != pp.seqs[i - 1] + 1;
        std::uint64_t at = pp.times[i];
        if (at <= t.sleep_from)
            before++;
        else if (at < t.sleep_to)
            during++;
        else
            after++;
    }
    // Between its two clock reads the thread still runs a little (into
    // nanosleep and out of it, slowly on a debug kernel, and it may be
    // preempted before it gets there): those packets are due, at c.per_tick
    // per ms of its CPU time, plus one millisecond's worth of rounding. The
    // unit counts the thread's time on a CPU by the clock, interrupts
    // included, up to four ticks per extent: a virtual CPU stalled inside
    // an interrupt there (a loaded host) gives packets for time that is no
    // CPU time of the thread's. Those stalls are allowed up to a quarter of
    // the sleep; the sleeping thread or the busy one, if either were
    // traced, would give its whole length.
    const std::uint64_t slept_ms = (t.sleep_to - t.sleep_from) / 1'000'000;
    const std::uint64_t due =
        c.per_tick * t.cpu_in_sleep / 1'000'000 + c.per_tick + c.per_tick * slept_ms / 4;
    EXPECT_LE(gaps, truncated) << "a gap in the packet sequence without TRUNCATED";
    EXPECT_GT(before, 0u) << "nothing traced in the first busy phase";
    EXPECT_LE(during, due) << "packets while the followed thread slept (its CPU time then: "
                           << t.cpu_in_sleep << " ns)";
    EXPECT_GT(after, 0u) << "nothing traced in the second busy phase";
    std::printf(
        "task mode: %zu packets (%lu before the sleep, %lu during it for %lu us of "
        "CPU time, %lu after), %lu TRUNCATED\n",
        pp.seqs.size(), static_cast<unsigned long>(before), static_cast<unsigned long>(during),
        static_cast<unsigned long>(t.cpu_in_sleep / 1000), static_cast<unsigned long>(after),
        static_cast<unsigned long>(truncated));
}

// Task mode with inherit: this thread and the three children it forks
// after the enable are traced, each named by one ITRACE_START; a process
// forked before the enable is not followed and never named.
TEST(Aux, TaskModeInheritNamesEachChild) {
    if (!capture_available())
        GTEST_SKIP() << "the module has no capture modes (KRING_FEAT_CAPTURE clear)";
    auto spin = [](std::chrono::milliseconds d) {
        auto end = clk::now() + d;
        volatile std::uint64_t x = 0;
        while (clk::now() < end)
            x = x + 1;
    };
    int go[2];
    ASSERT_EQ(::pipe(go), 0);
    pid_t unrelated = ::fork();
    if (unrelated == 0) {
        char b;
        (void)!::read(go[0], &b, 1);
        spin(100ms);
        ::_exit(0);
    }
    ASSERT_GT(unrelated, 0);
    ::close(go[0]);

    tracer_cfg c;
    c.cpu = -1;
    c.pid = 0;  // this thread
    c.per_tick = 16;
    c.aux_pages = 128;
    aux_channel a;
    int err = a.setup(c, KRING_ATTR_F_INHERIT);
    if (!err)
        err = a.ch.ioctl0(KRING_IOC_ENABLE);
    (void)!::write(go[1], "x", 1);
    ::close(go[1]);
    std::vector<pid_t> children;
    for (int i = 0; !err && i < 3; i++) {
        pid_t p = ::fork();
        if (p == 0) {
            spin(50ms);
            ::_exit(0);
        }
        if (p > 0)
            children.push_back(p);
    }
    for (pid_t p : children)
        ::waitpid(p, nullptr, 0);
    ::waitpid(unrelated, nullptr, 0);
    ASSERT_EQ(err, 0) << "task-mode tracer with inherit refused";
    ASSERT_EQ(children.size(), 3u);
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_DISABLE), 0);

    tracer_output o(c.payload);
    o.read(a);
    EXPECT_EQ(o.bad, 0) << o.pp.why;
    EXPECT_GT(o.bytes, 0u) << "nothing traced";
    std::map<std::uint32_t, int> named;
    for (const auto& r : o.itraces) {
        EXPECT_TRUE(r.pid == r.tid || r.pid == static_cast<std::uint32_t>(::getpid()))
            << "ITRACE_START pid " << r.pid << " tid " << r.tid;
        named[r.tid]++;
    }
    for (pid_t p : children)
        EXPECT_EQ(named[static_cast<std::uint32_t>(p)], 1) << "child " << p;
    EXPECT_EQ(named.count(static_cast<std::uint32_t>(unrelated)), 0u) << "unrelated task named";
    for (const auto& [tid, times] : named)
        EXPECT_EQ(times, 1) << "tid " << tid << " named " << times << " times";
    std::printf("task mode inherit: ITRACE_START for %zu tasks, %llu AUX bytes\n", named.size(),
                static_cast<unsigned long long>(o.bytes));
}

// Task mode needs a task that exists; CPU mode a CPU.
TEST(Aux, TaskModeRequests) {
    if (!capture_available())
        GTEST_SKIP() << "the module has no capture modes (KRING_FEAT_CAPTURE clear)";
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_AUX_TRACER, -1);
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "neither a CPU nor a task";
    a.pid = 0x3ffffff0;  // above pid_max
    EXPECT_ERRNO(ch.configure(a), ESRCH);
    a.pid = 0;  // the caller
    EXPECT_EQ(ch.configure(a), 0);
}

TEST(Aux, BadRequestsAreRefused) {
    aux_channel a;
    ASSERT_EQ(a.ch.open_dev(), 0);
    ASSERT_EQ(a.ch.configure(kt::make_attr(KRING_SOURCE_AUX_TRACER, 0)), 0);
    const std::size_t ps = a.ps;
    // AUX before the data ring is mapped.
    void* p = ::mmap(nullptr, 4 * ps, PROT_READ | PROT_WRITE, MAP_SHARED, a.ch.fd, 8 * ps);
    EXPECT_EQ(p, MAP_FAILED);
    EXPECT_ERRNO(errno, EINVAL);
    ASSERT_EQ(a.ch.map_ring(2, true, false), 0);  // data ring: 5 pages
    auto try_map = [&](std::uint64_t ctl_off, std::uint64_t ctl_size, std::uint64_t off,
                       std::uint64_t len, int prot, int flags) {
        a.ch.ctl->aux_offset = ctl_off;
        a.ch.ctl->aux_size = ctl_size;
        void* m = ::mmap(nullptr, len, prot, flags, a.ch.fd, off);
        if (m != MAP_FAILED) {
            ::munmap(m, len);
            return 0;
        }
        return errno;
    };
    const int rw = PROT_READ | PROT_WRITE;
    EXPECT_ERRNO(try_map(4 * ps, 4 * ps, 4 * ps, 4 * ps, rw, MAP_SHARED), EINVAL);  // overlaps data
    EXPECT_ERRNO(try_map(8 * ps, 3 * ps, 8 * ps, 3 * ps, rw, MAP_SHARED), EINVAL);  // 3 pages
    EXPECT_ERRNO(try_map(8 * ps, 4 * ps, 12 * ps, 4 * ps, rw, MAP_SHARED), EINVAL);  // wrong offset
    EXPECT_ERRNO(try_map(8 * ps, 4 * ps, 8 * ps, 2 * ps, rw, MAP_SHARED), EINVAL);   // wrong length
    EXPECT_ERRNO(try_map(8 * ps, 4 * ps, 8 * ps, 4 * ps, rw, MAP_PRIVATE), EINVAL);
    EXPECT_ERRNO(try_map(8 * ps, 4 * ps, 8 * ps, 4 * ps, rw | PROT_EXEC, MAP_SHARED), EINVAL);
    EXPECT_ERRNO(try_map(8 * ps, 1ull << 40, 8 * ps, 4 * ps, rw, MAP_SHARED), EINVAL);

    // A good mapping; a second one must match it.
    ASSERT_EQ(a.map_aux(8 * ps, 4 * ps, true), 0);
    EXPECT_ERRNO(try_map(8 * ps, 4 * ps, 8 * ps, 4 * ps, PROT_READ, MAP_SHARED), EINVAL);
    EXPECT_ERRNO(try_map(8 * ps, 8 * ps, 8 * ps, 8 * ps, rw, MAP_SHARED), EINVAL);
    EXPECT_EQ(try_map(8 * ps, 4 * ps, 8 * ps, 4 * ps, rw, MAP_SHARED), 0);

    // AUX pages are never writable from user space.
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    ASSERT_EQ(::write(fds[1], "x", 1), 1);
    EXPECT_EQ(::read(fds[0], a.aux, 1), -1);
    EXPECT_ERRNO(errno, EFAULT);
    ::close(fds[0]);
    ::close(fds[1]);
    EXPECT_EQ(::mprotect(a.aux, a.aux_len, PROT_READ | PROT_WRITE | PROT_EXEC), -1);

    // A snapshot needs a read-only AUX mapping.
    EXPECT_ERRNO(a.ch.ioctl0(KRING_IOC_AUX_SNAPSHOT), EINVAL);
    // Bad tracer configurations.
    kt::raw_channel b;
    ASSERT_EQ(b.open_dev(), 0);
    kring_attr bad = kt::make_attr(KRING_SOURCE_AUX_TRACER, -1);
    EXPECT_ERRNO(b.configure(bad), EINVAL);
    bad = kt::make_attr(KRING_SOURCE_AUX_TRACER, 0);
    bad.config[1] = 7;
    EXPECT_ERRNO(b.configure(bad), EINVAL);
    // AUX control of a channel without the tracer.
    kt::raw_channel s;
    ASSERT_EQ(s.open_dev(), 0);
    EXPECT_ERRNO(s.ioctl0(KRING_IOC_AUX_PAUSE), EINVAL);
    ASSERT_EQ(s.configure(kt::make_attr(KRING_SOURCE_SYNTHETIC, 0)), 0);
    EXPECT_ERRNO(s.ioctl0(KRING_IOC_AUX_SNAPSHOT), EOPNOTSUPP);
}

// A garbage aux_tail stops the tracer (nothing written outside the area),
// and unmapping the data ring under a running tracer harms nothing. The
// test runs on the tracer's CPU: its tick (a hard interrupt there) is never
// half-way through an extent while the test reads or writes the positions.
TEST(Aux, GarbageTailAndDataUnmap) {
    tracer_cfg c;
    aux_channel a;
    ASSERT_TRUE(pin_to(c.cpu));
    struct unpin_at_exit {
        ~unpin_at_exit() { unpin(); }
    } unpin_later;
    ASSERT_EQ(a.setup(c), 0);
    ASSERT_EQ(a.ch.ioctl0(KRING_IOC_ENABLE), 0);
    EXPECT_TRUE(wait_until([&] { return a.aux_head() > 0; })) << "the tracer did not start";
    std::uint64_t h = a.aux_head();
    a.release_aux(h + 3 * a.aux_len + 8);  // not within aux_size behind the head
    std::uint64_t h2 = a.aux_head();       // no tick from here on writes
    std::this_thread::sleep_for(30ms);
    EXPECT_EQ(a.aux_head(), h2) << "the tracer wrote past a garbage aux_tail";
    a.release_aux(h2);
    EXPECT_TRUE(wait_until([&] { return a.aux_head() > h2; })) << "the tracer did not restart";

    a.ch.unmap();  // the data ring goes; the AUX area stays mapped
    std::this_thread::sleep_for(20ms);
    volatile std::uint8_t x = a.aux[0];
    (void)x;
    EXPECT_EQ(a.ch.ioctl0(KRING_IOC_DISABLE), 0);
}

}  // namespace
