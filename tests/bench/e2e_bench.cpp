// e2e_bench: end to end, from a tracepoint to a user consumer that sleeps
// until woken, for kring, perf and ftrace, in one boot (docs/PERFORMANCE.md;
// `make bench` runs it after tracepoint_bench).
//
//   e2e_bench [--seconds S] [--order N] [--headroom N] [--smoke] [--run FILE]
//   e2e_bench --sink SINK --rate R [--repeat N] ...   one sink at one rate,
//           a line per run (loss, wake-ups, sleeps, timeouts, polls, the
//           fullest the ring was at a drain, the longest wait, the drain that
//           first found a LOST record): where and when a sink loses
//
// kring_bench.ko fires kring_bench:kring_bench_hit at a paced rate from a
// kthread on CPU 0 (ring=tp period=NS); a consumer thread on CPU 1 reads
// what the sink's ring delivers the way its users would, sleeping while
// there is nothing to read:
//   kring   a channel of 2^order pages, its probe writing a SAMPLE per hit;
//           libkring's poller (epoll, need_wakeup armed, woken at the
//           default watermark: half the ring; adaptive: it polls data_head
//           instead of sleeping when the wake-ups it measured come too late
//           for the rate, docs/LIBKRING.md) and reader;
//   kring-sleep  the same with the poller's wait_mode::sleep: never polls;
//   perf    perf_event_open(PERF_TYPE_TRACEPOINT), RAW | TIME, 1 + 2^order
//           pages, wakeup_watermark half the ring, the same poller and
//           reader;
//   ftrace  the event enabled in tracefs, buffer_size_kb the ring's size,
//           per_cpu/cpu0/trace_pipe_raw read page by page (poll, then
//           non-blocking reads until empty);
//   ftrace-mmap  the same ring read through its memory-mapped reader
//           (kernels from 6.10: trace_pipe_raw mapped, poll, then
//           TRACE_MMAP_IOCTL_GET_READER until nothing new; the events
//           parsed in place). Skipped, and said so, where the kernel has no
//           such reader.
// Each consumer thread is running on CPU 1, set up and with the ring's
// pages touched, before the first hit fires (under emulation a thread's
// start can take longer than the ring takes to fill). --headroom: the
// adaptive poller's headroom_latencies (default 4).
// For each sink: the highest rate with zero loss (doubling from 20000
// hits/s until a run loses, then three bisections; each run lasts about
// --seconds), the loss when the hits are not paced at all, and at the
// highest zero-loss rate the consumer's wake-ups and system calls per 10^6
// records and its CPU time per record (the thread's CPU clock: what a
// spinning or busy reader pays shows here). Loss: kring, the probe's refused writes; perf, the hits
// that never arrived as samples; ftrace, the per-CPU overrun (overwritten events). Each run's
// accounting is checked: every hit delivered or counted lost (ftrace: the events parsed out of the
// pages read, plus the overrun, which on 6.1 may also count a few events that were read); a run
// that fails it fails the program. Times are never asserted. --smoke: two runs per sink. The last
// lines are machine-readable:
//   summary e2e_bench sink=S max_rate=.. unpaced_loss=.. wakeups_per_m=..
//           syscalls_per_m=.. cpu_ns_per_record=.. wake_latency_us=..
//   summary e2e_bench runs=N bad=N ok=0|1
#include <fcntl.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <linux/perf_event.h>

#include <kring/kring.hpp>
#include <kring/perf.hpp>

#include "bench_util.hpp"
#include "test_util.hpp"

namespace {

constexpr int producer_cpu = 0;
constexpr int consumer_cpu = 1;

struct options {
    double seconds = 0.5;
    unsigned order = 4;
    bool smoke = false;
    std::string run_file = bench::default_run_file;
    kring::poller_options poll{};  // the adaptive kring sink's poller
    std::string sink;              // --sink: only this sink, at --rate, --repeat times
    double rate = 0;               // hits/s (0: unpaced)
    unsigned repeat = 1;
};

struct run_result {
    std::uint64_t hits = 0;
    std::uint64_t lost = 0;
    std::uint64_t delivered = 0;
    std::uint64_t wakeups = 0;          // the consumer woke with data to read
    std::uint64_t syscalls = 0;         // epoll_wait / poll / read / ioctl calls
    std::uint64_t cpu_ns = 0;           // the consumer thread's CPU time
    std::uint64_t spins = 0;            // kring: waits that polled data_head
    std::uint64_t wake_latency_ns = 0;  // kring: the longest wake-up latency measured
    std::uint64_t timeouts = 0;         // kring, perf: sleeps that ran into the timeout
    std::uint64_t max_fill = 0;         // kring, perf: the most unread bytes a drain found
    std::uint64_t max_wait_ns = 0;      // kring, perf: the longest wait (sleep or poll)
    std::uint64_t drains = 0, first_lost_drain = 0;  // kring, perf: see bench::consumer
    std::string why;                                 // accounting or set-up failure; empty: fine
    std::string skipped;                             // why the sink cannot run on this kernel
};

// The consumer's figures of a run (kring's and perf's sinks; perf's poller
// has no wake-up latency and never spins: those stay 0).
void take_figures(run_result& r, const bench::consumer& s) {
    r.wakeups = s.wakeups;
    r.syscalls = s.waits;
    r.cpu_ns = s.cpu_ns;
    r.spins = s.poll.spins;
    r.wake_latency_ns = s.poll.wake_latency_max_ns;
    r.timeouts = s.poll.timeouts;
    r.max_fill = s.max_fill;
    r.max_wait_ns = s.max_wait_ns;
    r.drains = s.drains;
    r.first_lost_drain = s.first_lost_drain;
}

// Fire @count hits, @period ns apart (0: unpaced).
std::string fire(const options& o, const char* sink, std::uint64_t count, std::uint64_t period,
                 const std::string& extra, bench::fields& f) {
    std::string err;
    auto v =
        bench::run_command(o.run_file,
                           std::string("ring=tp sink=") + sink + " count=" + std::to_string(count) +
                               " period=" + std::to_string(period) + extra,
                           err);
    if (!v)
        return err;
    f = *v;
    return f["total"] == count ? "" : "the module fired " + std::to_string(f["total"]) + " hits";
}

run_result run_kring(const options& o, std::uint64_t count, std::uint64_t period,
                     kring::wait_mode mode) {
    run_result r;
    r.hits = count;
    kring::channel_options co;
    co.source = KRING_SOURCE_NONE;
    co.data_pages_order = o.order;
    co.sample_type = KRING_SAMPLE_TIME | KRING_SAMPLE_RAW;
    auto ch = kring::channel::open(co);
    if (!ch) {
        r.why = "kring channel: " + ch.error().message();
        return r;
    }
    auto id = ch->id();
    if (auto e = ch->enable(); !e || !id) {
        r.why = "kring enable/id";
        return r;
    }
    bench::consumer s;
    kring::poller_options po = o.poll;
    po.mode = mode;
    bench::fields f;
    if (!s.start(consumer_cpu, ch->ring(), KRING_RECORD_SAMPLE, ch->fd(), po))
        r.why = "kring: the consumer thread did not start";
    else
        r.why = fire(o, "kring", count, period, " channel=" + std::to_string(*id), f);
    s.finish();
    r.lost = f["fail"];
    r.delivered = s.samples;
    take_figures(r, s);
    if (r.why.empty() && (f["ok"] + f["fail"] != count || s.samples != f["ok"] ||
                          s.lost > f["fail"] || s.other || !s.error.empty()))
        r.why = "kring: probe ok " + std::to_string(f["ok"]) + " fail " +
                std::to_string(f["fail"]) + ", reader " + std::to_string(s.samples) + " samples " +
                s.error;
    return r;
}

run_result run_perf(const options& o, const std::string& tfs, std::uint64_t count,
                    std::uint64_t period) {
    run_result r;
    r.hits = count;
    perf_event_attr a = bench::tracepoint_attr(tfs);
    a.watermark = 1;
    a.wakeup_watermark = (4096u << o.order) / 2;
    auto pr = kring::perf_ring::open(a, -1, producer_cpu, o.order);
    if (!a.config || !pr) {
        r.why = "perf_event_open of the tracepoint failed";
        return r;
    }
    bench::consumer s;
    bench::fields f, f2;
    if (!s.start(consumer_cpu, pr->ring(), PERF_RECORD_SAMPLE, pr->fd()))
        r.why = "perf: the consumer thread did not start";
    else
        r.why = fire(o, "perf", count, period, "", f);
    bench::wait_consumed(pr->page());
    if (r.why.empty())
        r.why = fire(o, "perf", 1, 0, "", f2);
    s.finish();
    r.delivered = s.samples;
    r.lost = count + 1 > s.samples ? count + 1 - s.samples : 0;
    take_figures(r, s);
    if (r.why.empty() && (s.samples + s.lost != count + 1 || s.other || !s.error.empty()))
        r.why = "perf: " + std::to_string(s.samples) + " samples + " + std::to_string(s.lost) +
                " lost != " + std::to_string(count + 1) + " hits " + s.error;
    return r;
}

// Data events in @page[@off, @end) of ftrace's ring: events with a 4-byte
// header (type_len:5, time_delta:27; kernel/trace/ring_buffer.c), @off at
// an event's start.
std::uint64_t ftrace_events(const char* page, std::size_t off, std::size_t end) {
    std::uint64_t n = 0;
    while (off + 4 <= end) {
        std::uint32_t h, a0 = 0;
        std::memcpy(&h, page + off, 4);
        if (off + 8 <= end)
            std::memcpy(&a0, page + off + 4, 4);
        const unsigned type_len = h & 31;
        std::size_t size;
        if (type_len == 29) {  // padding; a null one ends the page
            if (!(h >> 5) && !a0)
                break;
            size = a0 + 4;
        } else if (type_len >= 30) {  // time extend, time stamp
            size = 8;
        } else {
            size = (type_len ? type_len * 4 : a0) + 4;
            n++;
        }
        if (size < 4)
            break;
        off += size;
    }
    return n;
}

// ftrace's accounting adds up: no more events read than hits, and every hit
// read or in the overrun. The overrun may count a few events the reader
// also read (6.1: a page partly read as the commit page is counted whole
// when the writer overwrites it later: 1 to 21 too many in runs of 160000
// and more); it is never short.
bool ftrace_adds_up(std::uint64_t events, std::uint64_t overrun, std::uint64_t hits) {
    return events <= hits && events + overrun >= hits;
}

// Data events on one page of ftrace's ring as trace_pipe_raw hands it out
// (struct buffer_data_page: u64 time_stamp, long commit, then the events).
std::uint64_t ftrace_page_events(const std::vector<char>& page, std::size_t len) {
    constexpr std::size_t hdr = 16;
    constexpr std::uint64_t flags = (1ull << 31) | (1ull << 30);  // RB_MISSED_*
    if (len < hdr)
        return 0;
    std::uint64_t commit;
    std::memcpy(&commit, page.data() + 8, 8);
    return ftrace_events(page.data(), hdr, hdr + std::min<std::size_t>(commit & ~flags, len - hdr));
}

// ftrace's ring for a run: sized like the others, emptied, tracing on;
// returns trace_pipe_raw of the producer's CPU opened non-blocking, or -1
// with @why set.
int ftrace_open(const options& o, const std::string& tfs, std::string& why) {
    const std::string cpu = tfs + "/per_cpu/cpu" + std::to_string(producer_cpu);
    if (!kt::write_text(tfs + "/buffer_size_kb", std::to_string((4096u << o.order) / 1024)) ||
        !kt::write_text(tfs + "/trace", "") || !kt::write_text(tfs + "/tracing_on", "1")) {
        why = "cannot set up ftrace in " + tfs;
        return -1;
    }
    int fd = ::open((cpu + "/trace_pipe_raw").c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        why = "trace_pipe_raw: " + std::string(std::strerror(errno));
    return fd;
}

// An ftrace consumer on the consumer CPU: poll @fd (a wake-up when it
// says there is data), then @drain() until it finds nothing more, until
// @stop; a last drain after it. Each poll and drain is a system call in
// @r.
template <typename Drain>
void ftrace_consume(int fd, run_result& r, std::atomic<bool>& ready, const std::atomic<bool>& stop,
                    Drain drain) {
    kt::pin_to(consumer_cpu);
    const std::uint64_t cpu0 = kt::thread_cpu_ns();
    ready.store(true, std::memory_order_release);
    for (;;) {
        const bool last = stop.load(std::memory_order_acquire);
        if (!last) {
            pollfd p{fd, POLLIN, 0};
            r.syscalls++;
            if (::poll(&p, 1, 100) > 0)
                r.wakeups++;
        }
        do
            r.syscalls++;
        while (drain());
        if (last)
            break;
    }
    r.cpu_ns = kt::thread_cpu_ns() - cpu0;
}

// One ftrace run: the event enabled, @count hits fired while a consumer
// thread drains @fd with @drain (ftrace_consume()), the event disabled,
// the consumer joined. False, with @r.why set, if the event could not be
// enabled.
template <typename Drain>
bool ftrace_fire(const options& o, const std::string& ev, int fd, run_result& r,
                 std::uint64_t count, std::uint64_t period, Drain drain) {
    if (!kt::write_text(ev, "1")) {
        r.why = "cannot enable the event";
        return false;
    }
    std::atomic<bool> stop{false}, ready{false};
    std::thread t([&] { ftrace_consume(fd, r, ready, stop, drain); });
    bench::fields f;
    if (!bench::wait_ready(ready))
        r.why = "ftrace: the consumer thread did not start";
    else
        r.why = fire(o, "ftrace", count, period, "", f);
    kt::write_text(ev, "0");
    stop.store(true, std::memory_order_release);
    t.join();
    return true;
}

run_result run_ftrace(const options& o, const std::string& tfs, std::uint64_t count,
                      std::uint64_t period) {
    run_result r;
    r.hits = count;
    const std::string ev = tfs + "/" + bench::event_dir + "/enable";
    const std::string cpu = tfs + "/per_cpu/cpu" + std::to_string(producer_cpu);
    int fd = ftrace_open(o, tfs, r.why);
    if (fd < 0)
        return r;
    std::vector<char> page(4096);
    std::uint64_t events = 0;
    const bool ran = ftrace_fire(o, ev, fd, r, count, period, [&] {
        const ssize_t n = ::read(fd, page.data(), page.size());
        if (n <= 0)
            return false;
        events += ftrace_page_events(page, std::size_t(n));
        return true;
    });
    if (!ran) {
        ::close(fd);
        return r;
    }
    ::close(fd);
    const std::string stats = kt::read_text(cpu + "/stats");
    r.lost = bench::stat_of(stats, "overrun");
    r.delivered = events;
    if (r.why.empty() && r.lost == ~0ull)
        r.why = "ftrace: no overrun in " + cpu + "/stats";
    else if (r.why.empty() && !ftrace_adds_up(events, r.lost, count))
        r.why = "ftrace: " + std::to_string(events) + " events read, overrun " +
                std::to_string(r.lost) + ", for " + std::to_string(count) + " hits";
    kt::write_text(tfs + "/trace", "");
    return r;
}

// ftrace's memory-mapped reader (kernels from 6.10): the layout of
// include/uapi/linux/trace_mmap.h, which this machine's headers (6.1) lack.
struct trace_buffer_meta {
    std::uint32_t meta_page_size;
    std::uint32_t meta_struct_len;
    std::uint32_t subbuf_size;
    std::uint32_t nr_subbufs;
    struct {
        std::uint64_t lost_events;
        std::uint32_t id;
        std::uint32_t read;
    } reader;
    std::uint64_t flags;
    std::uint64_t entries;
    std::uint64_t overrun;
    std::uint64_t read;
    std::uint64_t reserved1;
    std::uint64_t reserved2;
};
constexpr unsigned long trace_mmap_ioctl_get_reader = _IO('R', 0x20);

// The same ring as run_ftrace(), read in place: poll, then
// TRACE_MMAP_IOCTL_GET_READER (which hands over the reader sub-buffer and
// counts all of it as read: reader.read is where the events end) until it
// gives nothing new; the events between where this reader stopped in that
// sub-buffer and reader.read are new.
run_result run_ftrace_mmap(const options& o, const std::string& tfs, std::uint64_t count,
                           std::uint64_t period) {
    run_result r;
    r.hits = count;
    const std::string ev = tfs + "/" + bench::event_dir + "/enable";
    int fd = ftrace_open(o, tfs, r.why);
    if (fd < 0)
        return r;
    const long page = ::sysconf(_SC_PAGESIZE);
    void* mp = ::mmap(nullptr, std::size_t(page), PROT_READ, MAP_SHARED, fd, 0);
    if (mp == MAP_FAILED) {
        r.skipped = "no memory-mapped ftrace reader in this kernel (mmap of trace_pipe_raw: " +
                    std::string(std::strerror(errno)) + ")";
        ::close(fd);
        return r;
    }
    auto* meta = static_cast<volatile trace_buffer_meta*>(mp);
    const std::size_t subbuf = meta->subbuf_size, data_len = subbuf * meta->nr_subbufs;
    void* dp = ::mmap(nullptr, data_len, PROT_READ, MAP_SHARED, fd, meta->meta_page_size);
    if (dp == MAP_FAILED) {
        r.why = "mmap of trace_pipe_raw's sub-buffers: " + std::string(std::strerror(errno));
        ::munmap(mp, std::size_t(page));
        ::close(fd);
        return r;
    }
    const char* data = static_cast<const char*>(dp);
    std::uint32_t id = ~0u;
    std::size_t off = 0;
    std::uint64_t events = 0;
    constexpr std::size_t hdr = 16;  // struct buffer_data_page's header
    const bool ran = ftrace_fire(o, ev, fd, r, count, period, [&] {
        if (::ioctl(fd, trace_mmap_ioctl_get_reader) < 0)
            return false;
        const std::uint32_t nid = meta->reader.id;
        const std::size_t end = hdr + meta->reader.read;
        if (nid != id) {
            id = nid;
            off = hdr;
        } else if (end <= off) {
            return false;  // nothing new
        }
        if (id >= meta->nr_subbufs || end > subbuf)
            return false;
        events += ftrace_events(data + std::size_t(id) * subbuf, off, end);
        off = end;
        return true;
    });
    if (ran) {
        r.lost = meta->overrun;
        r.delivered = events;
        if (r.why.empty() && !ftrace_adds_up(events, r.lost, count))
            r.why = "ftrace-mmap: " + std::to_string(events) + " events read, overrun " +
                    std::to_string(r.lost) + ", for " + std::to_string(count) + " hits";
    }
    ::munmap(dp, data_len);
    ::munmap(mp, std::size_t(page));
    ::close(fd);
    kt::write_text(tfs + "/trace", "");
    return r;
}

struct sink_summary {
    const char* name;
    double max_rate = 0;      // hits/s with zero loss (0: none found)
    double unpaced_loss = 0;  // fraction
    double wakeups_per_m = 0, syscalls_per_m = 0;
    double cpu_ns_per_record = 0;  // the consumer's, at the highest zero-loss rate
    double wake_latency_us = 0;    // kring: the longest wake-up latency there
    std::uint64_t spins = 0;       // kring: waits that polled there
    std::string skipped{};         // why the sink did not run here
};

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"a paced tracepoint into kring, perf and ftrace, end to end (kring_bench.ko)"};
    bool smoke = false;
    app.add_option("--seconds", o.seconds, "length of a run")->check(CLI::Range(0.001, 3600.0));
    app.add_option("--order", o.order, "log2 of the rings' data pages")->check(CLI::Range(0, 12));
    app.add_option("--run", o.run_file, "kring_bench.ko's command file");
    app.add_flag("--smoke", smoke, "two short runs per sink (make check)");
    app.add_option("--sink", o.sink,
                   "only this sink (kring, kring-sleep, perf, ftrace, ftrace-mmap): --repeat runs "
                   "at --rate, one line each")
        ->check(CLI::IsMember({"kring", "kring-sleep", "perf", "ftrace", "ftrace-mmap"}));
    app.add_option("--headroom", o.poll.headroom_latencies,
                   "kring's adaptive poller: poll when the room lasts fewer wake-up latencies")
        ->check(CLI::Range(1u, 1000u));
    app.add_option("--rate", o.rate, "--sink's rate in hits/s (0: unpaced)")
        ->check(CLI::Range(0.0, 1e9));
    app.add_option("--repeat", o.repeat, "--sink's runs")->check(CLI::Range(1u, 100000u));
    if (auto rc = bench::parse(app, argc, argv))
        return *rc;
    if (smoke) {
        o.smoke = true;
        o.seconds = 0.05;
    }
    if (!bench::start_on("e2e_bench", producer_cpu))
        return 1;
    const std::string tfs = bench::tracefs();
    if (tfs.empty()) {
        std::printf("FAIL tracefs: no %s (is kring_bench.ko loaded?)\n", bench::event_dir.c_str());
        std::printf("summary e2e_bench runs=0 bad=1 ok=0\n");
        return 1;
    }

    std::vector<sink_summary> sums = {
        {"kring"}, {"kring-sleep"}, {"perf"}, {"ftrace"}, {"ftrace-mmap"}};
    auto run_sink = [&](int sink, std::uint64_t count, std::uint64_t period) {
        switch (sink) {
            case 0:
                return run_kring(o, count, period, kring::wait_mode::adaptive);
            case 1:
                return run_kring(o, count, period, kring::wait_mode::sleep);
            case 2:
                return run_perf(o, tfs, count, period);
            case 3:
                return run_ftrace(o, tfs, count, period);
            default:
                return run_ftrace_mmap(o, tfs, count, period);
        }
    };
    unsigned runs = 0, bad = 0;
    auto run = [&](int sink, double rate) {
        const std::uint64_t count =
            std::max<std::uint64_t>(2000, std::uint64_t(rate > 0 ? rate * o.seconds : 0));
        const std::uint64_t period = rate > 0 ? std::uint64_t(1e9 / rate) : 0;
        run_result r = run_sink(sink, count, period);
        if (!r.skipped.empty())
            return r;
        runs++;
        if (!r.why.empty()) {
            bad++;
            std::printf("FAIL %s at %.0f hits/s: %s\n", sums[sink].name, rate, r.why.c_str());
        }
        return r;
    };

    if (!o.sink.empty()) {
        int s = 0;
        while (o.sink != sums[std::size_t(s)].name)
            s++;
        unsigned lossy = 0;
        std::printf(
            "%s at %.0f hits/s, %u runs: hits lost wakeups sleeps timeouts polls "
            "max-fill/ring max-wait-us wake-us drains first-lost-drain\n",
            o.sink.c_str(), o.rate, o.repeat);
        for (unsigned i = 0; i < o.repeat; i++) {
            run_result r = run(s, o.rate);
            if (!r.skipped.empty()) {
                std::printf("skipped %s: %s\n", o.sink.c_str(), r.skipped.c_str());
                return 0;
            }
            lossy += r.lost != 0;
            std::printf("run %u: %llu %llu %llu %llu %llu %llu %.2f %.0f %.0f %llu %llu\n", i,
                        (unsigned long long)r.hits, (unsigned long long)r.lost,
                        (unsigned long long)r.wakeups, (unsigned long long)r.syscalls,
                        (unsigned long long)r.timeouts, (unsigned long long)r.spins,
                        double(r.max_fill) / double(4096u << o.order), double(r.max_wait_ns) / 1e3,
                        double(r.wake_latency_ns) / 1e3, (unsigned long long)r.drains,
                        (unsigned long long)r.first_lost_drain);
        }
        std::printf("summary e2e_bench sink=%s rate=%.0f runs=%u lossy=%u bad=%u ok=%d\n",
                    o.sink.c_str(), o.rate, o.repeat, lossy, bad, bad == 0);
        return bad ? 1 : 0;
    }

    for (int s = 0; s < int(sums.size()); s++) {
        sink_summary& sum = sums[s];
        double good = 0, badrate = 0;
        run_result at_good;
        const double top = o.smoke ? 40000 : 64e6;
        for (double rate = 20000; rate <= top; rate *= 2) {
            run_result r = run(s, rate);
            if (!r.skipped.empty())
                sum.skipped = r.skipped;
            if (!r.skipped.empty() || !r.why.empty())
                break;
            if (r.lost) {
                badrate = rate;
                break;
            }
            good = rate;
            at_good = r;
        }
        for (int i = 0; !o.smoke && good && badrate && i < 3; i++) {
            const double mid = (good + badrate) / 2;
            run_result r = run(s, mid);
            if (!r.why.empty())
                break;
            if (r.lost) {
                badrate = mid;
            } else {
                good = mid;
                at_good = r;
            }
        }
        sum.max_rate = good;
        if (at_good.delivered) {
            sum.wakeups_per_m = 1e6 * double(at_good.wakeups) / double(at_good.delivered);
            sum.syscalls_per_m = 1e6 * double(at_good.syscalls) / double(at_good.delivered);
            sum.cpu_ns_per_record = double(at_good.cpu_ns) / double(at_good.delivered);
            sum.wake_latency_us = double(at_good.wake_latency_ns) / 1e3;
            sum.spins = at_good.spins;
        }
        if (!sum.skipped.empty()) {
            std::printf("skipped %s: %s\n", sum.name, sum.skipped.c_str());
            continue;
        }
        const std::uint64_t n = o.smoke ? 2000 : std::uint64_t(200000);
        run_result u = run_sink(s, n, 0);
        runs++;
        if (!u.why.empty()) {
            bad++;
            std::printf("FAIL %s unpaced: %s\n", sum.name, u.why.c_str());
        }
        sum.unpaced_loss = double(u.lost) / double(u.hits);
    }

    std::printf(
        "\nend to end, tracepoint on CPU %d to a sleeping consumer on CPU %d, rings of %u pages; "
        "highest zero-loss rate (runs of %.2f s) and its ratio to perf's, loss unpaced, and "
        "at that rate per 10^6 records, the consumer's CPU time per record, kring's polls and "
        "longest wake-up latency\n",
        producer_cpu, consumer_cpu, 1u << o.order, o.seconds);
    const double perf_rate = sums[2].skipped.empty() ? sums[2].max_rate : 0;
    std::printf("%-11s %16s %7s %13s %13s %14s %12s %7s %10s\n", "sink", "max rate (hit/s)",
                "x perf", "unpaced loss", "wakeups/10^6", "syscalls/10^6", "cpu ns/rec", "polls",
                "wake us");
    for (const auto& s : sums) {
        if (!s.skipped.empty()) {
            std::printf("%-11s skipped: %s\n", s.name, s.skipped.c_str());
            continue;
        }
        std::printf("%-11s %16.0f %7.2f %12.1f%% %13.0f %14.0f %12.0f %7llu %10.0f\n", s.name,
                    s.max_rate, perf_rate ? s.max_rate / perf_rate : 0.0, 100 * s.unpaced_loss,
                    s.wakeups_per_m, s.syscalls_per_m, s.cpu_ns_per_record,
                    static_cast<unsigned long long>(s.spins), s.wake_latency_us);
    }
    for (const auto& s : sums) {
        if (!s.skipped.empty()) {
            std::printf("summary e2e_bench sink=%s skipped=1\n", s.name);
            continue;
        }
        std::printf(
            "summary e2e_bench sink=%s max_rate=%.0f unpaced_loss=%.4f wakeups_per_m=%.0f "
            "syscalls_per_m=%.0f cpu_ns_per_record=%.0f wake_latency_us=%.0f\n",
            s.name, s.max_rate, s.unpaced_loss, s.wakeups_per_m, s.syscalls_per_m,
            s.cpu_ns_per_record, s.wake_latency_us);
    }
    std::printf("summary e2e_bench runs=%u bad=%u ok=%d\n", runs, bad, bad ? 0 : 1);
    return bad ? 1 : 0;
}
