// Helpers of the guest benchmark harnesses (producer_bench.cpp,
// tracepoint_bench.cpp, e2e_bench.cpp): one command to kring_bench.ko and
// its result line, tracefs, medians.
#pragma once

#include <fcntl.h>
#include <sys/mount.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <kring/kring.hpp>
#include <kring/perf.hpp>
#include <linux/perf_event.h>

#include "test_util.hpp"

namespace bench {

inline const std::string default_run_file = "/sys/kernel/debug/kring_bench/run";

using fields = std::map<std::string, std::uint64_t>;

// One command to kring_bench.ko: write it, read the result line back.
inline std::optional<fields> run_command(const std::string& run_file, const std::string& cmd,
                                         std::string& err) {
    int fd = ::open(run_file.c_str(), O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        err = run_file + ": " + std::strerror(errno);
        return std::nullopt;
    }
    if (::write(fd, cmd.data(), cmd.size()) != ssize_t(cmd.size())) {
        err = "'" + cmd + "': " + std::strerror(errno);
        ::close(fd);
        return std::nullopt;
    }
    char buf[512];
    ssize_t n = ::pread(fd, buf, sizeof(buf) - 1, 0);
    ::close(fd);
    if (n <= 0) {
        err = "no result for '" + cmd + "'";
        return std::nullopt;
    }
    buf[n] = '\0';
    fields f;
    std::istringstream in(buf);
    std::string kv;
    while (in >> kv) {
        auto eq = kv.find('=');
        if (eq == std::string::npos)
            continue;
        f[kv.substr(0, eq)] = std::strtoull(kv.c_str() + eq + 1, nullptr, 10);
    }
    return f;
}

// The benchmark tracepoint's directory under tracefs.
inline const std::string event_dir = "events/kring_bench/kring_bench_hit";

// The tracefs directory holding the benchmark's event: where it is
// mounted, or mounted at /sys/kernel/tracing now; "" if neither works.
inline std::string tracefs() {
    for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
        if (::access((std::string(d) + "/" + event_dir).c_str(), F_OK) == 0)
            return d;
    if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0 &&
        ::access(("/sys/kernel/tracing/" + event_dir).c_str(), F_OK) == 0)
        return "/sys/kernel/tracing";
    return "";
}

// "name: value" from one of ftrace's per-CPU stats files; ~0 if absent.
inline std::uint64_t stat_of(const std::string& stats, const std::string& name) {
    std::istringstream in(stats);
    std::string line;
    while (std::getline(in, line))
        if (line.rfind(name + ":", 0) == 0)
            return std::strtoull(line.c_str() + name.size() + 1, nullptr, 10);
    return ~0ull;
}

// Wait for a thread to set @ready: bounded only against a defect (the
// thread sets it before it ever sleeps). False after 60 s.
inline bool wait_ready(const std::atomic<bool>& ready) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (!ready.load(std::memory_order_acquire)) {
        if (std::chrono::steady_clock::now() >= deadline)
            return false;
        std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return true;
}

// A consumer thread on @cpu reading a ring (kring's or perf's) with
// libkring's reader until told to stop, then once more: counts the records
// of @sample_type and the losses LOST records report. Busy polling, or
// with @fd >= 0 sleeping in libkring's poller (epoll on @fd, need_wakeup
// armed for kring rings) until the ring has data, at most 100 ms. start()
// returns once the thread runs on @cpu with its poller and reader set up and
// every page of the ring touched: a producer started after it measures the
// consumer's steady state, not the start of a thread (under emulation that
// can take longer than filling the ring).
struct consumer {
    std::atomic<bool> stop{false};
    std::atomic<bool> ready{false};
    std::uint64_t samples = 0, lost = 0, other = 0;
    std::uint64_t wakeups = 0;           // sleeps that ended with data to read
    std::uint64_t waits = 0;             // system calls: epoll_wait (the poller's sleeps)
    std::uint64_t cpu_ns = 0;            // the consumer thread's CPU time
    std::uint64_t max_fill = 0;          // the most unread bytes a drain found
    std::uint64_t max_wait_ns = 0;       // the longest wait() (a sleep or a poll)
    std::uint64_t drains = 0;            // the drains done
    std::uint64_t first_lost_drain = 0;  // 1 + the drain that found the first LOST record
    kring::poller_stats poll{};          // what the poller did (spins, wake-up latency)
    std::string error;
    std::thread t;

    // False if the thread did not get ready (a defect: bounded at 60 s).
    [[nodiscard]] bool start(int cpu, const kring::ring_view& ring, std::uint32_t sample_type,
                             int fd = -1, const kring::poller_options& po = {}) {
        t = std::thread([this, cpu, ring, sample_type, fd, po] {
            kt::pin_to(cpu);
            const std::uint64_t cpu0 = kt::thread_cpu_ns();
            std::optional<kring::poller> p;
            if (fd >= 0) {
                auto c = kring::poller::create(po);
                if (!c || !c->add(fd, ring, 0)) {
                    error = "poller";
                    ready.store(true, std::memory_order_release);
                    return;
                }
                p.emplace(std::move(*c));
            }
            kring::reader rd(ring);
            // Fault every page of the mapping in (both copies of a mirrored one).
            const long page = ::sysconf(_SC_PAGESIZE);
            const std::uint64_t len = ring.data_size * (ring.mirrored ? 2 : 1);
            for (std::uint64_t off = 0; off < len; off += std::uint64_t(page))
                (void)*static_cast<const volatile std::byte*>(ring.data + off);
            ready.store(true, std::memory_order_release);
            auto on = [&](const kring::record& rec) {
                if (rec.type() == sample_type)
                    samples++;
                else if (auto l = kring::parse_lost(rec, ring.kind)) {
                    lost += l->lost;
                    if (!first_lost_drain)
                        first_lost_drain = drains + 1;
                } else
                    other++;
            };
            for (;;) {
                const bool last = stop.load(std::memory_order_acquire);
                if (p && !last) {
                    const auto t0 = std::chrono::steady_clock::now();
                    auto w = p->wait(100);
                    if (!w) {
                        error = w.error().message();
                        break;
                    }
                    const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                        std::chrono::steady_clock::now() - t0);
                    max_wait_ns = std::max(max_wait_ns, std::uint64_t(ns.count()));
                }
                // A figure: relaxed loads (the drain's own acquire orders the reads).
                max_fill =
                    std::max(max_fill, kring::barrier::load_relaxed(ring.ctl->data_head) -
                                           kring::barrier::load_relaxed(ring.ctl->data_tail));
                if (auto n = rd.drain(on); !n) {
                    error = n.error().message();
                    break;
                }
                drains++;
                if (last)
                    break;
            }
            if (p) {
                poll = p->stats();
                waits = poll.sleeps;
                wakeups = poll.woken;  // not the spins that found data
            }
            cpu_ns = kt::thread_cpu_ns() - cpu0;
        });
        return wait_ready(ready);
    }
    void finish() {
        stop.store(true, std::memory_order_release);
        if (t.joinable())
            t.join();
    }
    ~consumer() { finish(); }
};

// Parse the command line into @app's options: nothing to go on, or the
// exit code (0 after --help, 2 for a bad option, with CLI11's message).
inline std::optional<int> parse(CLI::App& app, int argc, char** argv) {
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e) ? 2 : 0;
    }
    return std::nullopt;
}

// The options of the harnesses that alternate rings in pairs (rounds).
struct pair_options {
    unsigned pairs = 5;
    std::uint64_t count = 100000;
    unsigned order = 4;  // 2^order data pages, every ring
    bool smoke = false;  // one pair of 2000 (make check)
    std::string run_file = default_run_file;

    // Declare them in @app (before the harness's own), parse with parse().
    void add_to(CLI::App& app, const char* pairs_help, const char* count_help) {
        app.add_option("--pairs", pairs, pairs_help)->check(CLI::Range(1, 1000000000));
        app.add_option("--count", count, count_help)->check(CLI::Range(1, 1000000000));
        app.add_option("--order", order, "log2 of the rings' data pages")->check(CLI::Range(0, 12));
        app.add_option("--run", run_file, "kring_bench.ko's command file");
        app.add_flag("--smoke", smoke, "one pair (round) of 2000 (make check)");
    }
    std::optional<int> parse(CLI::App& app, int argc, char** argv) {
        if (auto rc = bench::parse(app, argc, argv))
            return rc;
        if (smoke) {
            pairs = 1;
            count = 2000;
        }
        return std::nullopt;
    }
};

// The harness's own thread on @cpu, a second CPU online for the consumer,
// output line-buffered (the guest console interleaves).
inline bool start_on(const char* name, int cpu) {
    if (kt::online_cpus() < 2 || !kt::pin_to(cpu)) {
        std::fprintf(stderr, "%s: needs CPUs 0 and 1 online\n", name);
        return false;
    }
    std::setvbuf(stdout, nullptr, _IOLBF, 0);
    return true;
}

// perf_event_open() attributes of the benchmark tracepoint (its id read
// from tracefs @tfs; config 0 if absent): one sample per hit, RAW and
// TIME, on the CPU the caller opens it for.
inline perf_event_attr tracepoint_attr(const std::string& tfs) {
    perf_event_attr a{};
    a.size = sizeof(a);
    a.type = PERF_TYPE_TRACEPOINT;
    a.config = std::strtoull(kt::read_text(tfs + "/" + event_dir + "/id").c_str(), nullptr, 10);
    a.sample_period = 1;
    a.sample_type = PERF_SAMPLE_RAW | PERF_SAMPLE_TIME;
    return a;
}

// perf reports the records it dropped in a LOST record written before the
// next sample that fits: wait (at most a minute) for the consumer to empty the
// ring, after which one more hit brings the last losses out.
inline void wait_consumed(const perf_event_mmap_page* pg) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (kring::barrier::load_head(pg->data_head) !=
               kring::barrier::load_relaxed(pg->data_tail) &&
           std::chrono::steady_clock::now() < deadline)
        std::this_thread::yield();
}

inline double median(std::vector<double> v) {
    if (v.empty())
        return 0;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

}  // namespace bench
