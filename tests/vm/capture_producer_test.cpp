// In the guest: a producer module writing into a channel that a capture
// source writes too (docs/PRODUCER.md, "Context rules"). The sched source
// of a channel without a CPU writes on whatever CPU its task runs; a
// producer on another CPU at the same time must not corrupt the ring: its
// writes take the buffer's write lock, as the source's do.
#include <sched.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "bench_module.hpp"
#include "errno_assert.hpp"

namespace {

using kt::bench_module;
using kt::bench_record;
using kt::bench_run;

constexpr int task_cpu = 0;      // the followed task and its partner
constexpr int producer_cpu = 1;  // kring_bench.ko's writer
constexpr int rounds = 30;       // of the producer's writes, see below
constexpr std::uint64_t per_round = 10000;

// One run of kring_bench.ko from this thread, pinned to @cpu: its records
// accepted (ok=) or why there are none.
struct bench_result {
    std::uint64_t ok = 0;
    std::string err;
};

bench_result bench(int cpu, const std::string& cmd) {
    bench_result r;
    if (!kt::pin_to(cpu)) {
        r.err = "cannot pin the writer to CPU " + std::to_string(cpu);
        return r;
    }
    int fd = ::open(bench_run, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        r.err = std::string(bench_run) + ": " + kt::errno_name(errno);
        return r;
    }
    char buf[512];
    ssize_t n = -1;
    if (::write(fd, cmd.data(), cmd.size()) == ssize_t(cmd.size()))
        n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    else
        r.err = "'" + cmd + "': " + kt::errno_name(errno);
    ::close(fd);
    if (!r.err.empty())
        return r;
    if (n <= 0) {
        r.err = "no result for '" + cmd + "'";
        return r;
    }
    buf[n] = '\0';
    const char* ok = std::strstr(buf, " ok=");
    if (!ok) {
        r.err = std::string("no ok= in '") + buf + "'";
        return r;
    }
    r.ok = std::strtoull(ok + 4, nullptr, 10);
    return r;
}

// A child pinned to @cpu calling sched_yield() until *@stop: with two of
// them on one CPU every yield is a context switch.
pid_t yielder(int cpu, const std::atomic<int>* stop) {
    pid_t pid = ::fork();
    if (pid == 0) {
        if (!kt::pin_to(cpu))
            ::_exit(2);
        while (!stop->load(std::memory_order_relaxed))
            ::sched_yield();
        ::_exit(0);
    }
    return pid;
}

// What the consumer read of the channel.
struct tally {
    std::uint64_t samples = 0, bench = 0, lost = 0, other = 0, bad_sample = 0;
    std::uint64_t repeated_seq = 0;
    std::uint64_t interleaved = 0;  // sched samples between two bench records
    long consumed = 0;
    std::set<std::uint64_t> seqs;
    bool after_bench = false;
    std::uint64_t pending = 0;  // samples since the last bench record

    void read(kt::raw_channel& ch, std::uint64_t type) {
        const long n = ch.consume([&](const kring_record_header& h, const std::uint8_t* p) {
            if (h.type == bench_record) {
                bench++;
                if (after_bench)
                    interleaved += pending;
                after_bench = true;
                pending = 0;
            } else if (h.type == KRING_RECORD_LOST && h.size >= sizeof(kring_lost_record)) {
                kring_lost_record l;
                std::memcpy(&l, p, sizeof(l));
                lost += l.lost;
            } else if (h.type == KRING_RECORD_SAMPLE) {
                kt::sample s;
                if (!kt::parse_sample(p, type, s)) {
                    bad_sample++;
                    return;
                }
                samples++;
                pending++;
                if (!seqs.insert(s.seq).second)
                    repeated_seq++;
            } else {
                other++;
            }
        });
        // An unreadable header in any read stays negative.
        if (n < 0)
            consumed = n;
        else if (consumed >= 0)
            consumed += n;
    }
};

class CaptureProducer : public ::testing::TestWithParam<const char*> {};

// A per-thread sched channel (no CPU) follows a task that switches on
// CPU 0 while kring_bench.ko writes into the same channel from CPU 1
// (write=call: kring_channel_write(); ptr and copy: the handle API). Every
// record is whole: no header the consumer cannot step over, no sequence
// number twice, the records read and the losses reported add up to what
// the ring counted, the producer's accepted records are all there, and
// the channel still publishes afterwards.
TEST_P(CaptureProducer, SchedChannelWithProducerOnAnotherCpu) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root (to load kring_bench.ko and to follow a task)";
    if (kt::online_cpus() < 2)
        GTEST_SKIP() << "needs two CPUs";
    bench_module m;
    if (!m)
        GTEST_SKIP() << m.why();

    void* shm = ::mmap(nullptr, sizeof(std::atomic<int>), PROT_READ | PROT_WRITE,
                       MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(shm, MAP_FAILED);
    auto* stop = new (shm) std::atomic<int>(0);
    pid_t followed = yielder(task_cpu, stop);
    pid_t partner = yielder(task_cpu, stop);
    ASSERT_GT(followed, 0);
    ASSERT_GT(partner, 0);

    kt::channel c;
    std::uint64_t id = 0;
    int e = c.open(kt::attr(KRING_SOURCE_SCHED, -1, followed), 11);
    if (e == 0)
        e = c.ch.ioctl_arg(KRING_IOC_ID, &id);
    if (e == 0)
        e = c.enable();
    const std::string cmd = "ring=kring mode=forward size=8 channel=" + std::to_string(id) +
                            " write=" + GetParam() + " count=";
    bench_result r, one;
    std::uint64_t head = 0, head_after = 0;
    tally t;
    if (e == 0) {
        std::thread w([&] {
            // In rounds, each begun only once the followed task's switches
            // have produced a record since the last one began: the two
            // writers overlap in every round, however the host schedules
            // the guest's CPUs.
            std::uint64_t attempted = 0;
            for (int round = 0; round < rounds && r.err.empty(); round++) {
                if (round > 0) {
                    const std::uint64_t before = c.ch.stats().produced - attempted;
                    const auto limit = std::chrono::steady_clock::now() + std::chrono::seconds(60);
                    while (c.ch.stats().produced - attempted == before) {
                        if (std::chrono::steady_clock::now() > limit) {
                            r.err = "no switch recorded in 60 s";
                            break;
                        }
                        std::this_thread::sleep_for(std::chrono::milliseconds(1));
                    }
                    if (!r.err.empty())
                        break;
                }
                bench_result part = bench(producer_cpu, cmd + std::to_string(per_round));
                attempted += per_round;
                r.ok += part.ok;
                r.err = part.err;
            }
            // The channel still publishes: one more record, into the room
            // a read of everything so far makes (the ring may be full).
            t.read(c.ch, c.type);
            head = c.ch.head();
            if (r.err.empty())
                one = bench(producer_cpu, cmd + "1");
            head_after = c.ch.head();
        });
        w.join();
    }
    stop->store(1);
    int status = 0;
    ::waitpid(followed, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the followed task";
    ::waitpid(partner, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "its partner";
    ::munmap(shm, sizeof(std::atomic<int>));
    ASSERT_EQ(e, 0) << "channel setup: " << kt::errno_name(e);
    ASSERT_EQ(r.err, "");
    ASSERT_EQ(one.err, "");
    EXPECT_EQ(one.ok, 1u);
    EXPECT_GT(head_after, head) << "data_head no longer moves";
    ASSERT_EQ(c.disable(), 0);

    t.read(c.ch, c.type);
    kring_stats st = c.ch.stats();
    ASSERT_NE(st.size, 0u);
    EXPECT_GE(t.consumed, 0) << "a record header the consumer cannot step over";
    EXPECT_EQ(t.other, 0u) << "records of no type anyone wrote";
    EXPECT_EQ(t.bad_sample, 0u) << "SAMPLEs that do not parse";
    EXPECT_EQ(t.repeated_seq, 0u) << "sequence numbers given twice";
    EXPECT_EQ(st.produced, st.written + st.lost_no_space + st.lost_too_big + st.lost_paused);
    EXPECT_EQ(t.samples + t.bench, st.written) << "records committed but not read";
    EXPECT_EQ(t.lost, st.lost_no_space + st.lost_too_big + st.lost_paused);
    EXPECT_EQ(t.bench, r.ok + one.ok) << "the producer's accepted records";
    EXPECT_GT(t.interleaved, 0u) << "no switch was recorded while the producer wrote";
    EXPECT_EQ(c.ch.head(), c.ch.tail);
    std::printf(
        "write=%s: %llu switch records, %llu producer records, %llu lost, "
        "%llu switches between producer records, nested %llu\n",
        GetParam(), (unsigned long long)t.samples, (unsigned long long)t.bench,
        (unsigned long long)t.lost, (unsigned long long)t.interleaved,
        (unsigned long long)st.nested);
}

INSTANTIATE_TEST_SUITE_P(Write, CaptureProducer, ::testing::Values("call", "ptr", "copy"));

// The child of the race below, as nobody: 0, or the step that failed.
enum fork_step {
    fork_ok = 0,
    fork_setup = 10,   // nobody, the two shared channels, the id
    fork_race_x = 11,  // an ioctl of the first process refused
    fork_race_y = 12,  // one of the second (its exit status + 100)
    fork_ring = 13,    // a header the consumer cannot step over
    fork_sync = 14,    // the pipes to the test
    fork_charge = 15,  // fewer than the bound enabled once all closed
    fork_bound = 16,   // one more than the bound not ENOSPC
};

int fork_race(int id_fd, int done_fd, int go_fd, int iters) {
    if (!kt::become_nobody())
        return fork_setup;
    auto a = std::make_unique<kt::raw_channel>();
    auto b = std::make_unique<kt::raw_channel>();
    std::uint64_t id = 0;
    if (a->open_dev() || a->configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)) ||
        a->map_ring(2, true, false) || a->ioctl_arg(KRING_IOC_ID, &id) || b->open_dev() ||
        b->configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)))
        return fork_setup;
    if (::write(id_fd, &id, sizeof(id)) != sizeof(id))
        return fork_sync;
    // The second process shares both channels (and the mapping of the
    // first); halfway it closes its copies and unmaps, the first keeps
    // them. Its own third channel comes and goes, enabled, every round.
    pid_t y = kt::fork_child([&] {
        bool shared = true;
        for (int i = 0; i < iters; i++) {
            if (i == iters / 2) {
                a->unmap();
                ::close(a->fd);
                ::close(b->fd);
                a->fd = b->fd = -1;
                shared = false;
            }
            if (shared && (a->ioctl0(KRING_IOC_ENABLE) || b->ioctl0(KRING_IOC_DISABLE)))
                return 1;
            kt::raw_channel c;
            if (c.open_dev() || c.configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)))
                return 2;
            if (c.ioctl0(KRING_IOC_ENABLE))
                return 3;  // ENOSPC here: a charge the race leaked
            ::sched_yield();
        }
        return 0;
    });
    if (y < 0)
        return fork_setup;
    bool ok = true, ring_ok = true;
    for (int i = 0; i < iters && ok; i++) {
        ok = !a->ioctl0(KRING_IOC_ENABLE) && !b->ioctl0(KRING_IOC_ENABLE);
        ::sched_yield();
        ring_ok =
            ring_ok && a->consume([](const kring_record_header&, const std::uint8_t*) {}) >= 0;
        ok = ok && !a->ioctl0(KRING_IOC_DISABLE) && !b->ioctl0(KRING_IOC_DISABLE);
    }
    const int ys = kt::wait_child(y);
    if (!ok)
        return fork_race_x;
    if (!WIFEXITED(ys) || WEXITSTATUS(ys) != 0)
        return 100 + (WIFEXITED(ys) ? WEXITSTATUS(ys) : 99);
    if (!ring_ok || a->consume([](const kring_record_header&, const std::uint8_t*) {}) < 0)
        return fork_ring;
    // The producer has stopped writing into the first channel: close all.
    char c = 1;
    if (::write(done_fd, &c, 1) != 1 || ::read(go_fd, &c, 1) != 1)
        return fork_sync;
    a.reset();
    b.reset();
    // Every place is free again: exactly the bound (3) enables.
    std::vector<std::unique_ptr<kt::raw_channel>> chans;
    for (int i = 0; i < 4; i++) {
        auto n = std::make_unique<kt::raw_channel>();
        if (n->open_dev() || n->configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)))
            return fork_setup;
        const int e = n->ioctl0(KRING_IOC_ENABLE);
        if (i < 3 && e)
            return fork_charge;
        if (i == 3 && e != ENOSPC)
            return fork_bound;
        chans.push_back(std::move(n));
    }
    return fork_ok;
}

// A channel's file survives fork (docs/ARCHITECTURE.md, "Lifetimes"):
// two processes of one user share two sched channels (each following the
// first process) and race their enables and disables, the second closing
// its copies halfway and enabling and closing a third channel of its own
// each round, while kring_bench.ko writes into the first one from CPU 1,
// under its write lock against the sched source. With
// kring.max_user_captures at 3 no enable is refused (no charge leaked in
// the race), the ring stays readable throughout, and once everything is
// closed exactly 3 new channels enable and a fourth gets ENOSPC (no charge
// leaked or given back twice).
TEST(CaptureProducerFork, SharedChannelsRaceEnableDisableClose) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root (to load kring_bench.ko and to set max_user_captures)";
    if (kt::online_cpus() < 2)
        GTEST_SKIP() << "needs two CPUs";
    kt::module_param captures("max_user_captures");
    if (!captures.usable())
        GTEST_SKIP() << "needs kring's max_user_captures parameter";
    bench_module m;
    if (!m)
        GTEST_SKIP() << m.why();
    ASSERT_TRUE(captures.set("3"));
    int idp[2], done[2], go[2];
    ASSERT_EQ(::pipe2(idp, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(done, O_CLOEXEC), 0);
    ASSERT_EQ(::pipe2(go, O_CLOEXEC), 0);
    pid_t x = kt::fork_child([&] {
        ::close(idp[0]);
        ::close(done[0]);
        ::close(go[1]);
        return fork_race(idp[1], done[1], go[0], 100);
    });
    ASSERT_GT(x, 0);
    ::close(idp[1]);
    ::close(done[1]);
    ::close(go[0]);
    std::uint64_t id = 0;
    const bool have_id = ::read(idp[0], &id, sizeof(id)) == sizeof(id);
    // Write until the child says its race is over (or it is gone).
    bench_result r;
    int runs = 0;
    if (have_id) {
        const std::string cmd = "ring=kring mode=forward size=8 channel=" + std::to_string(id) +
                                " write=call count=2000";
        std::thread w([&] {
            pollfd p{done[0], POLLIN, 0};
            while (r.err.empty() && ::poll(&p, 1, 0) == 0) {
                bench_result part = bench(producer_cpu, cmd);
                r.ok += part.ok;
                r.err = part.err;
                runs++;
            }
        });
        w.join();
    }
    char c = 0;
    const bool said_done = ::read(done[0], &c, 1) == 1;
    if (said_done)  // the child waits for this before it closes its channels
        (void)!::write(go[1], &c, 1);
    const int status = kt::wait_child(x);
    for (int fd : {idp[0], done[0], go[1]})
        ::close(fd);
    ASSERT_TRUE(have_id) << "the child set up nothing: status " << status;
    EXPECT_TRUE(said_done) << "the child stopped before its race was over";
    if (said_done) {  // the child held the channel open until then
        EXPECT_EQ(r.err, "") << "the producer failed while the channel was open";
    }
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << "status " << status << " (11: an ioctl refused in the first process; 1xx: "
        << "step xx of the second; 13: an unreadable header; 15: fewer than the bound "
        << "enabled at the end; 16: one more not ENOSPC)";
    std::printf("%d producer runs, %llu records accepted during the race\n", runs,
                (unsigned long long)r.ok);
    EXPECT_GT(runs, 0);
}

}  // namespace
