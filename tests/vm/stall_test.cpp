// In the guest: what one user's channel may make another user wait for,
// what RESET waits for, and what close() no longer waits for.
//
// The tool is a producer module's writer held in flight: kring_bench.ko
// with hold=NS (tests/bench/kring_bench.c) reserves a record in a channel
// and keeps the reservation open, preemption off, until the test writes
// its release file (or 10 s pass). That is an RCU read-side critical
// section of the test's choosing: every grace period waits for it. While
// it holds,
//
//  - one user (nobody) keeps its own channel's lock across that grace
//    period (a DISABLE of its sched channel waits for it) and has a RESET
//    and a SET_OUTPUT of the same channel waiting for that lock: another
//    user's ENABLE and DISABLE of its own channel still complete
//    (Stall.OtherUsersChannelsGoOn);
//  - a RESET right after a DISABLE does not return before the writer in
//    flight is done, and zeroes every count of it
//    (ResetRace.ResetWaitsForTheWriterInFlight);
//  - close() of 1000 channels returns (Stall.CloseDoesNotWaitForReaders).
//
// Each check is structural: the call completed while the writer was
// provably still in flight (its record reserved, not committed), or it had
// not returned when the writer was released. Latencies and close times
// are printed, never asserted. ResetRace.AccountingAgainstAProducer races
// DISABLE + RESET against a producer writing all the time and checks the
// accounting identity after every reset.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "raw_ring.hpp"
#include "bench_module.hpp"
#include "errno_assert.hpp"

namespace {

using kt::bench_module;
using kt::bench_record;
using kt::bench_run;

using namespace std::chrono_literals;
using clk = std::chrono::steady_clock;

const char* const bench_release = "/sys/kernel/debug/kring_bench/release";
// The longest hold kring_bench.ko takes: a bound for a broken module only,
// the tests release the writer as soon as they have seen what they check.
constexpr std::uint64_t hold_max_ns = 10'000'000'000ull;
// Generous bounds for what a working module does at once; reaching one is
// a failure of the setup, reported as such, never a figure.
constexpr auto patience = 60s;

using kt::errno_name;

// Why a test of this file cannot run here, "" when it can.
std::string cannot_hold(const bench_module& m) {
    if (::geteuid() != 0)
        return "needs root (to load kring_bench.ko and to become nobody)";
    if (kt::online_cpus() < 2)
        return "needs two CPUs: the held writer keeps CPU 0";
    if (!m)
        return m.why();
    return "";
}

// A NONE channel a producer module writes into: mapped (forward), enabled.
struct producer_channel {
    kt::raw_channel ch;
    std::uint64_t id = 0;
    int open(unsigned order = 6) {
        if (int e = ch.open_dev())
            return e;
        if (int e = ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1)))
            return e;
        if (int e = ch.map_ring(order, true, false))
            return e;
        if (int e = ch.ioctl_arg(KRING_IOC_ID, &id))
            return e;
        return ch.ioctl0(KRING_IOC_ENABLE);
    }
    // The held writer's record is reserved and not committed.
    bool in_flight() {
        kring_stats st = ch.stats();
        return st.size && st.produced == 1 && st.written == 0;
    }
    // Reads what is there: bench records and the losses LOST records report.
    void drain(std::uint64_t& records, std::uint64_t& lost, std::uint64_t& other) {
        long n = ch.consume([&](const kring_record_header& h, const std::uint8_t* p) {
            if (h.type == bench_record) {
                records++;
            } else if (h.type == KRING_RECORD_LOST && h.size >= sizeof(kring_lost_record)) {
                kring_lost_record l;
                std::memcpy(&l, p, sizeof(l));
                lost += l.lost;
            } else {
                other++;
            }
        });
        if (n < 0)
            other++;
    }
};

// kring_bench.ko writing @count records into channel @id from a thread on
// CPU 0, each reservation held open @hold ns or until release().
class held_writer {
public:
    held_writer(std::uint64_t id, std::uint64_t count, std::uint64_t hold) {
        thread_ = std::thread([this, id, count, hold] { run(id, count, hold); });
    }
    held_writer(const held_writer&) = delete;
    held_writer& operator=(const held_writer&) = delete;
    ~held_writer() {
        release();
        join();
    }
    // The holds of the run end, now and from now on.
    void release() {
        int fd = ::open(bench_release, O_WRONLY | O_CLOEXEC);
        if (fd >= 0) {
            if (::write(fd, "1", 1) != 1)
                release_err_ = std::string("write ") + bench_release + ": " + errno_name(errno);
            ::close(fd);
        }
    }
    void join() {
        if (thread_.joinable())
            thread_.join();
    }
    bool done() const { return done_.load(); }
    // After join(): the reservations that succeeded, and what went wrong.
    std::uint64_t ok() const { return ok_; }
    std::string error() const { return err_ + release_err_; }

private:
    void run(std::uint64_t id, std::uint64_t count, std::uint64_t hold) {
        run_once(id, count, hold);
        done_ = true;
    }
    void run_once(std::uint64_t id, std::uint64_t count, std::uint64_t hold) {
        if (!kt::pin_to(0)) {
            err_ = "cannot pin the writer to CPU 0";
            return;
        }
        int fd = ::open(bench_run, O_RDWR | O_CLOEXEC);
        if (fd < 0) {
            err_ = std::string(bench_run) + ": " + errno_name(errno);
            return;
        }
        std::string cmd = "ring=kring mode=forward size=8 count=" + std::to_string(count) +
                          " channel=" + std::to_string(id) + " hold=" + std::to_string(hold);
        if (::write(fd, cmd.data(), cmd.size()) != ssize_t(cmd.size())) {
            err_ = "'" + cmd + "': " + errno_name(errno);
            ::close(fd);
            return;
        }
        char buf[512];
        ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
        ::close(fd);
        if (n <= 0) {
            err_ = "no result for '" + cmd + "'";
            return;
        }
        buf[n] = '\0';
        const char* ok = std::strstr(buf, " ok=");
        if (!ok) {
            err_ = std::string("no ok= in '") + buf + "'";
            return;
        }
        ok_ = std::strtoull(ok + 4, nullptr, 10);
    }

    std::thread thread_;
    std::atomic<bool> done_{false};
    std::uint64_t ok_ = 0;
    std::string err_;          // the writer thread's
    std::string release_err_;  // release()'s
};

// Waits until the held writer's record is reserved (the hold has begun);
// false if it never is.
bool wait_in_flight(producer_channel& p, const held_writer& w) {
    const auto deadline = clk::now() + patience;
    while (!p.in_flight()) {
        if (w.done() || clk::now() > deadline)
            return false;
        std::this_thread::sleep_for(1ms);
    }
    return true;
}

// Whether thread @tid of process @pid sleeps uninterruptibly ('D') inside
// an ioctl whose request is @req: blocked in the module.
bool blocked_in_ioctl(pid_t pid, pid_t tid, unsigned long req) {
    const std::string dir = "/proc/" + std::to_string(pid) + "/task/" + std::to_string(tid);
    std::ifstream stat(dir + "/stat");
    std::string line;
    if (!std::getline(stat, line))
        return false;
    auto paren = line.rfind(')');
    if (paren == std::string::npos || paren + 2 >= line.size() || line[paren + 2] != 'D')
        return false;
    std::ifstream sc(dir + "/syscall");
    long nr = -1;
    std::string arg0, arg1;
    if (!(sc >> nr >> arg0 >> arg1))
        return false;
    return nr == SYS_ioctl && std::strtoul(arg1.c_str(), nullptr, 16) == req;
}

// Waits until @tid is seen blocked in the ioctl @req, twice 20 ms apart,
// its call not returned (@returned false); false if that never happens.
bool wait_blocked(pid_t pid, pid_t tid, unsigned long req, const std::atomic<bool>& returned) {
    const auto deadline = clk::now() + patience;
    while (clk::now() < deadline && !returned.load()) {
        if (blocked_in_ioctl(pid, tid, req)) {
            std::this_thread::sleep_for(20ms);
            if (blocked_in_ioctl(pid, tid, req) && !returned.load())
                return true;
        }
        std::this_thread::sleep_for(1ms);
    }
    return false;
}

using kt::shared_obj;

// Latencies in microseconds: "median M, 99% P, max X (N pairs)".
std::string figures(std::vector<double> us) {
    if (us.empty())
        return "none";
    std::sort(us.begin(), us.end());
    char buf[128];
    std::snprintf(buf, sizeof(buf), "median %.0f us, 99%% %.0f us, max %.0f us (%zu pairs)",
                  us[us.size() / 2], us[us.size() * 99 / 100], us.back(), us.size());
    return buf;
}

// @n ENABLE + DISABLE pairs of @fd; each pair's time is appended to @us.
// 0 or the first errno.
int enable_disable(int fd, int n, std::vector<double>& us) {
    for (int i = 0; i < n; i++) {
        auto t0 = clk::now();
        if (int e = kt::ioctl0(fd, KRING_IOC_ENABLE))
            return e;
        if (int e = kt::ioctl0(fd, KRING_IOC_DISABLE))
            return e;
        us.push_back(std::chrono::duration<double, std::micro>(clk::now() - t0).count());
    }
    return 0;
}

// ---- one user's channel and another's ------------------------------------

// What the attacking process (nobody) and the test share.
struct attack_state {
    std::atomic<int> stage{0};  // 1: set up, 2: DISABLE, 3: RESET and SET_OUTPUT, 4: stop
    std::atomic<int> setup_err{0};
    std::atomic<pid_t> pid{0};
    std::atomic<pid_t> tid[3]{};  // DISABLE, RESET, SET_OUTPUT
    std::atomic<bool> returned[3]{};
    std::atomic<int> result[3]{};
    std::atomic<std::uint64_t> iterations[2]{};  // the loop case: mmaps, RESETs
    std::atomic<int> order{-1};                  // the loop case: ring order mapped
};

void wait_stage(const attack_state& a, int s) {
    while (a.stage.load() < s)
        std::this_thread::sleep_for(1ms);
}

// The attacker (a forked child, nobody, on CPU 1): its own sched channel
// following itself, enabled; at stage 2 one thread DISABLEs it (which
// waits for a grace period under the channel's lock), at stage 3 two more
// RESET it and undo its set-output (which wait for that lock).
int attacker_blocked(attack_state& a) {
    if (!kt::become_nobody() || !kt::pin_to(1))
        return 10;
    kt::raw_channel ch;
    int e = ch.open_dev();
    if (!e)
        e = ch.configure(kt::attr(KRING_SOURCE_SCHED, -1, 0));
    if (!e)
        e = ch.ioctl0(KRING_IOC_ENABLE);
    a.setup_err = e;
    a.pid = ::getpid();
    a.stage = std::max(a.stage.load(), 1);
    if (e)
        return 11;
    auto call = [&](int i, int stage, const std::function<int()>& fn) {
        return std::thread([&a, i, stage, fn] {
            a.tid[i] = kt::gettid_();
            wait_stage(a, stage);
            a.result[i] = fn();
            a.returned[i] = true;
        });
    };
    std::thread t0 = call(0, 2, [&] { return ch.ioctl0(KRING_IOC_DISABLE); });
    std::thread t1 = call(1, 3, [&] { return ch.ioctl0(KRING_IOC_RESET); });
    std::thread t2 = call(2, 3, [&] { return ch.set_output(-1); });
    t0.join();
    t1.join();
    t2.join();
    return 0;
}

// The victim's check: root's ENABLE + DISABLE pairs on a channel of its
// own complete while nobody's channel lock is held across a grace period
// and nobody's RESET and SET_OUTPUT wait for it. Once kring took a global
// lock for writing in RESET and SET_OUTPUT, and for reading in ENABLE and
// DISABLE: the victim waited as long as the attacker's channel was busy.
TEST(Stall, OtherUsersChannelsGoOn) {
    bench_module mod;
    if (auto why = cannot_hold(mod); !why.empty())
        GTEST_SKIP() << why;
    producer_channel p;
    ASSERT_EQ(p.open(), 0);
    kt::raw_channel victim;
    ASSERT_EQ(victim.open_dev(), 0);
    ASSERT_EQ(victim.configure(kt::make_attr(KRING_SOURCE_NONE, -1)), 0);
    ASSERT_TRUE(kt::pin_to(1));
    std::vector<double> alone;
    ASSERT_EQ(enable_disable(victim.fd, 20, alone), 0);

    shared_obj<attack_state> a;
    pid_t child = kt::fork_child([&] { return attacker_blocked(*a); });
    ASSERT_GT(child, 0);
    wait_stage(*a, 1);
    ASSERT_EQ(a->setup_err.load(), 0) << "nobody's sched channel: " << errno_name(a->setup_err);
    for (auto& t : a->tid)
        while (!t.load())
            std::this_thread::sleep_for(1ms);

    std::string failure;
    std::vector<double> beside;
    {
        held_writer w(p.id, 1, hold_max_ns);
        if (!wait_in_flight(p, w)) {
            failure = "the held writer never reserved its record: " + w.error();
        } else {
            a->stage = 2;
            if (!wait_blocked(a->pid, a->tid[0], KRING_IOC_DISABLE, a->returned[0])) {
                failure = "nobody's DISABLE did not wait for the grace period";
            } else {
                a->stage = 3;
                if (!wait_blocked(a->pid, a->tid[1], KRING_IOC_RESET, a->returned[1]) ||
                    !wait_blocked(a->pid, a->tid[2], KRING_IOC_SET_OUTPUT, a->returned[2]))
                    failure = "nobody's RESET and SET_OUTPUT did not wait for its channel";
            }
        }
        if (failure.empty()) {
            // All set: nobody holds its channel's lock until the writer is
            // released, and its RESET and SET_OUTPUT wait for that lock.
            int e = enable_disable(victim.fd, 20, beside);
            const bool in_flight = p.in_flight();
            const bool attacker_waits = !a->returned[0] && !a->returned[1] && !a->returned[2];
            if (e)
                failure = "the victim's ENABLE/DISABLE: " + errno_name(e);
            else if (!in_flight || !attacker_waits)
                failure =
                    "another user's ENABLE + DISABLE did not complete before nobody's own "
                    "channel was free again: they waited for its lock across a grace period "
                    "(victim: " +
                    figures(beside) + ")";
        }
        w.release();
        w.join();
        EXPECT_EQ(w.error(), "");
    }
    a->stage = 4;
    int st = kt::wait_child(child);
    kt::unpin();
    std::printf("victim ENABLE+DISABLE alone: %s\n", figures(alone).c_str());
    std::printf("victim ENABLE+DISABLE while nobody's channel lock waits for a grace period: %s\n",
                figures(beside).c_str());
    EXPECT_EQ(failure, "");
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "attacker: wait status " << st;
    EXPECT_EQ(a->result[0].load(), 0) << "nobody's DISABLE";
    EXPECT_EQ(a->result[1].load(), 0) << "nobody's RESET";
    EXPECT_EQ(a->result[2].load(), 0) << "nobody's SET_OUTPUT";
}

// The attacker of the figures: nobody maps the largest ring it may map
// and unmaps it, in a loop, on one thread, and RESETs and undoes the
// set-output of the same channel on another, until stage 4.
int attacker_loop(attack_state& a) {
    if (!kt::become_nobody() || !kt::pin_to(1))
        return 10;
    kt::raw_channel ch;
    int e = ch.open_dev();
    if (!e)
        e = ch.configure(kt::attr(KRING_SOURCE_SCHED, -1, 0));
    int order = 12;
    for (; !e && order >= 0; order--) {
        kt::mapping m(ch.fd, kt::page_size() * (1 + (std::size_t(1) << order)),
                      PROT_READ | PROT_WRITE, 0);
        if (!m.error())
            break;
    }
    a.order = order;
    a.setup_err = e ? e : order < 0 ? ENOMEM : 0;
    a.stage = std::max(a.stage.load(), 1);
    if (a.setup_err)
        return 11;
    const std::size_t len = kt::page_size() * (1 + (std::size_t(1) << order));
    std::thread mapper([&] {
        while (a.stage.load() < 4) {
            kt::mapping m(ch.fd, len, PROT_READ | PROT_WRITE, 0);
            a.iterations[0]++;
        }
    });
    while (a.stage.load() < 4) {
        ch.ioctl0(KRING_IOC_RESET);
        ch.set_output(-1);
        a.iterations[1]++;
    }
    mapper.join();
    return 0;
}

// The figures of the stall: root's ENABLE + DISABLE pairs while nobody
// maps and unmaps a large ring (5 times) and RESETs the same channel in a
// loop, then alone for as long. Only that every call works is checked;
// the latencies are printed (a loaded host moves them either way).
TEST(Stall, EnableLatencyBesideAnotherUsersResetLoop) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root (to become nobody)";
    if (kt::online_cpus() < 2)
        GTEST_SKIP() << "needs two CPUs: the attacker on one, the victim on the other";
    kt::raw_channel victim;
    ASSERT_EQ(victim.open_dev(), 0);
    ASSERT_EQ(victim.configure(kt::make_attr(KRING_SOURCE_NONE, -1)), 0);
    ASSERT_TRUE(kt::pin_to(0));
    std::vector<double> alone, beside;

    shared_obj<attack_state> a;
    pid_t child = kt::fork_child([&] { return attacker_loop(*a); });
    ASSERT_GT(child, 0);
    wait_stage(*a, 1);
    int e = a->setup_err;
    int st = 0;
    double secs = 0;
    if (e) {
        st = kt::wait_child(child);
    } else {
        // The attacker runs before the victim starts, and goes on until
        // it has mapped its ring 5 more times.
        while (a->iterations[0].load() < 2 || a->iterations[1].load() < 2)
            std::this_thread::sleep_for(1ms);
        const auto maps = a->iterations[0].load() + 5;
        const auto t0 = clk::now();
        while (!e && (a->iterations[0].load() < maps || beside.size() < 200) &&
               clk::now() < t0 + patience)
            e = enable_disable(victim.fd, 1, beside);
        const auto t1 = clk::now();
        secs = std::chrono::duration<double>(t1 - t0).count();
        a->stage = 4;
        st = kt::wait_child(child);
        while (!e && clk::now() < t1 + (t1 - t0))
            e = enable_disable(victim.fd, 1, alone);
    }
    kt::unpin();
    ASSERT_EQ(a->setup_err.load(), 0) << "nobody's channel and ring: " << errno_name(a->setup_err);
    EXPECT_EQ(e, 0) << "the victim's ENABLE/DISABLE";
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "attacker: wait status " << st;
    std::printf(
        "victim ENABLE+DISABLE for %.1f s beside nobody's loop (2^%d-page ring: %llu mmaps, "
        "%llu RESET+SET_OUTPUT): %s\n",
        secs, a->order.load(), (unsigned long long)a->iterations[0].load(),
        (unsigned long long)a->iterations[1].load(), figures(beside).c_str());
    std::printf("victim ENABLE+DISABLE for as long alone: %s\n", figures(alone).c_str());
}

// ---- close --------------------------------------------------------------

// Opens @n configured channels into @fds; 0 or the first errno.
int open_channels(std::vector<int>& fds, int n) {
    const kring_attr attr = kt::make_attr(KRING_SOURCE_NONE, -1);
    for (int i = 0; i < n; i++) {
        int fd = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return errno;
        fds.push_back(fd);
        if (::ioctl(fd, KRING_IOC_CONFIGURE, &attr) < 0)
            return errno;
    }
    return 0;
}

// Closes them all; returns the time it took, in milliseconds.
double close_channels(std::vector<int>& fds) {
    auto t0 = clk::now();
    for (int fd : fds)
        ::close(fd);
    fds.clear();
    return std::chrono::duration<double, std::milli>(clk::now() - t0).count();
}

// close() of a channel returns at once: what must wait for the RCU readers
// that may still see the channel (producers that found its buffer, the
// wakeups they queued) is deferred past a grace period. 1000 channels are
// closed while a writer holds a grace period back: every close returns
// before it is released. Once each close waited for a grace period, 1000
// of them in a row.
TEST(Stall, CloseDoesNotWaitForReaders) {
    bench_module mod;
    if (auto why = cannot_hold(mod); !why.empty())
        GTEST_SKIP() << why;
    constexpr int n = 1000;
    rlimit rl{4096, 4096};
    ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &rl), 0) << errno_name(errno);
    producer_channel p;
    ASSERT_EQ(p.open(), 0);
    ASSERT_TRUE(kt::pin_to(1));

    // Opened first: growing the file table waits for a grace period.
    std::vector<int> fds;
    ASSERT_EQ(open_channels(fds, n), 0);
    std::string failure;
    double held_ms = 0;
    {
        held_writer w(p.id, 1, hold_max_ns);
        if (!wait_in_flight(p, w)) {
            failure = "the held writer never reserved its record: " + w.error();
        } else {
            held_ms = close_channels(fds);
            if (!p.in_flight())
                failure = "close() of " + std::to_string(n) +
                          " channels did not return before the writer in flight was released: "
                          "it waited for a grace period";
        }
        w.release();
        w.join();
        EXPECT_EQ(w.error(), "");
    }
    close_channels(fds);

    // The figure without a reader in the way.
    EXPECT_EQ(open_channels(fds, n), 0);
    double free_ms = close_channels(fds);
    kt::unpin();
    std::printf("close() of %d channels: %.1f ms (%.1f ms while a writer held a grace period)\n", n,
                free_ms, held_ms);
    EXPECT_EQ(failure, "");
}

// ---- RESET against a producer ---------------------------------------------

// RESET after DISABLE waits for the producer's writer in flight: the
// writer reserved its record while the channel was enabled, DISABLE does
// not wait for it, and a RESET that zeroed the counters under it would see
// the writer's commit counted after the reset (written 1, produced 0).
TEST(ResetRace, ResetWaitsForTheWriterInFlight) {
    bench_module mod;
    if (auto why = cannot_hold(mod); !why.empty())
        GTEST_SKIP() << why;
    producer_channel p;
    ASSERT_EQ(p.open(), 0);
    ASSERT_TRUE(kt::pin_to(1));
    std::atomic<pid_t> tid{0};
    std::atomic<int> stage{0};  // 1: DISABLE returned
    std::atomic<bool> reset_returned{false};
    std::atomic<int> disable_err{-1}, reset_err{-1};
    bool returned_in_flight = false;
    std::string failure;
    {
        held_writer w(p.id, 1, hold_max_ns);
        if (!wait_in_flight(p, w)) {
            failure = "the held writer never reserved its record: " + w.error();
        } else {
            std::thread t([&] {
                tid = kt::gettid_();
                disable_err = p.ch.ioctl0(KRING_IOC_DISABLE);
                stage = 1;
                reset_err = p.ch.ioctl0(KRING_IOC_RESET);
                reset_returned = true;
            });
            while (stage.load() < 1)
                std::this_thread::sleep_for(1ms);
            // Either RESET returns while the writer is in flight (the
            // defect) or it waits for it: then release the writer.
            const auto deadline = clk::now() + patience;
            while (!reset_returned.load() && clk::now() < deadline &&
                   !blocked_in_ioctl(::getpid(), tid, KRING_IOC_RESET))
                std::this_thread::sleep_for(1ms);
            // The run is one record: it ends once its hold does.
            returned_in_flight = reset_returned.load() && !w.done();
            w.release();
            t.join();
        }
        w.join();
        EXPECT_EQ(w.error(), "");
    }
    kt::unpin();
    EXPECT_EQ(disable_err.load(), 0);
    EXPECT_EQ(reset_err.load(), 0);
    std::uint64_t records = 0, lost = 0, other = 0;
    p.drain(records, lost, other);
    kring_stats st = p.ch.stats();
    std::printf("after RESET: produced %llu written %llu lost %llu; %llu record read\n",
                (unsigned long long)st.produced, (unsigned long long)st.written,
                (unsigned long long)(st.lost_no_space + st.lost_too_big + st.lost_paused),
                (unsigned long long)records);
    ASSERT_EQ(failure, "");
    EXPECT_FALSE(returned_in_flight) << "RESET returned while the producer's record was in flight";
    // Nothing was written since the reset: the writer's record counts before it.
    EXPECT_EQ(st.produced, 0u);
    EXPECT_EQ(st.written, 0u) << "the writer's commit was counted after the reset";
    EXPECT_EQ(st.lost_no_space + st.lost_too_big + st.lost_paused, 0u);
    EXPECT_EQ(records, 1u);
    EXPECT_EQ(other, 0u);
}

// DISABLE + RESET raced against a producer that writes all the time (each
// reservation held 0.5 ms; a run that ends is followed by another), 40
// times: after every reset the counters are exactly 0 (nothing is written
// while disabled; whatever was reserved before counts before the reset),
// no window commits more than it reserved, the last window's records read
// plus its losses are what its counters say, and over the whole test the
// records read are the reservations the producer reports.
TEST(ResetRace, AccountingAgainstAProducer) {
    bench_module mod;
    if (auto why = cannot_hold(mod); !why.empty())
        GTEST_SKIP() << why;
    constexpr int resets = 40;
    producer_channel p;
    ASSERT_EQ(p.open(8), 0);
    ASSERT_TRUE(kt::pin_to(1));
    std::uint64_t records = 0, lost = 0, other = 0, reserved = 0, runs = 0;
    int done = 0;
    std::string failure, writer_errors;
    std::unique_ptr<held_writer> w;
    auto end_run = [&] {
        w->release();
        w->join();
        reserved += w->ok();
        writer_errors += w->error();
        w.reset();
    };
    for (int i = 1; i <= resets && failure.empty(); i++) {
        if (w && w->done())
            end_run();
        if (!w) {
            w = std::make_unique<held_writer>(p.id, 2000, 500000);
            runs++;
        }
        // The window that ends: a writer may be in flight, but nothing is
        // committed that was not reserved since the last reset.
        kring_stats win = p.ch.stats();
        if (win.written + win.lost_no_space + win.lost_too_big > win.produced) {
            failure = "window " + std::to_string(i) + ": written " + std::to_string(win.written) +
                      " + lost " + std::to_string(win.lost_no_space + win.lost_too_big) +
                      " > produced " + std::to_string(win.produced) +
                      ": a record reserved before the reset was counted after it";
            break;
        }
        // DISABLE then RESET at once, most likely inside a reservation.
        if (int e = p.ch.ioctl0(KRING_IOC_DISABLE)) {
            failure = "DISABLE: " + errno_name(e);
            break;
        }
        if (int e = p.ch.ioctl0(KRING_IOC_RESET)) {
            failure = "RESET: " + errno_name(e);
            break;
        }
        done = i;
        // Longer than a hold: a writer the reset did not wait for has
        // committed by now. Nothing may have been written since the reset.
        std::this_thread::sleep_for(1ms);
        kring_stats st = p.ch.stats();
        if (st.produced || st.written || st.lost_no_space || st.lost_too_big || st.lost_paused)
            failure = "after reset " + std::to_string(i) + ": produced " +
                      std::to_string(st.produced) + " written " + std::to_string(st.written) +
                      " lost " + std::to_string(st.lost_no_space + st.lost_too_big) +
                      " while nothing may be written";
        p.drain(records, lost, other);
        if (int e = p.ch.ioctl0(KRING_IOC_ENABLE)) {
            failure = "ENABLE: " + errno_name(e);
            break;
        }
        // Let the producer write into this window.
        const auto deadline = clk::now() + patience;
        while (!w->done() && p.ch.stats().produced == 0 && clk::now() < deadline)
            std::this_thread::sleep_for(100us);
    }
    if (w)
        end_run();
    EXPECT_EQ(p.ch.ioctl0(KRING_IOC_DISABLE), 0);
    std::uint64_t last = 0, last_lost = 0;
    p.drain(last, last_lost, other);
    kring_stats st = p.ch.stats();
    records += last;
    kt::unpin();
    std::printf(
        "%d of %d resets, %llu producer runs: %llu reserved, %llu records read (last window: "
        "%llu read, produced %llu written %llu lost %llu)\n",
        done, resets, (unsigned long long)runs, (unsigned long long)reserved,
        (unsigned long long)records, (unsigned long long)last, (unsigned long long)st.produced,
        (unsigned long long)st.written, (unsigned long long)st.lost_no_space);
    EXPECT_EQ(writer_errors, "");
    EXPECT_EQ(failure, "");
    EXPECT_EQ(other, 0u);
    EXPECT_EQ(last + st.lost_no_space, st.produced) << "the last window's records and losses";
    EXPECT_EQ(last, st.written);
    EXPECT_EQ(records, reserved) << "every reservation the producer made was read";
}

}  // namespace
