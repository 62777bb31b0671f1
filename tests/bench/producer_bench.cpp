// producer_bench: in the guest, kring's producer loop against ftrace's ring
// buffer, in one boot, with one loop shape (tests/bench/kring_bench.c runs
// the loops; docs/PERFORMANCE.md has the figures and `make bench` runs it).
//
//   producer_bench [--pairs N] [--count N] [--order N] [--sizes 8,32,...]
//                  [--kring-write ptr|copy|call] [--kring-clock default|local]
//                  [--no-floor] [--smoke] [--verbose] [--run FILE]
//
// For every mode (overwrite without a consumer, forward with a consumer on
// CPU 1) and record size, runs kring and ftrace alternately, N pairs,
// pinned to CPU 0, and prints the median ns/record of each, the median of
// the per-pair ratios kring/ftrace and their spread (min-max). Every run is
// checked for exact accounting (every record written, or lost and counted
// as lost, and consumed in forward mode); a run that fails it fails the
// program (exit 1). Times are never asserted. --smoke: one pair, few
// records (make check).
//
// In overwrite mode each pair has a third run, the floor (unless
// --no-floor): a bare ring in the same loop (kring_bench.c, ring=floor:
// the clock read, one memcpy() of the record, a release store of the
// head), on kring's clock. Its table gives the median of the per-pair
// ratios kring/floor and floor/ftrace: how far each ring is from what no
// ring avoids, and the least ratio to ftrace any ring could reach here.
// The last lines are machine-readable:
//   summary producer_bench mode=M size=S pairs=N kring_ns=.. ftrace_ns=..
//           ratio=.. ratio_min=.. ratio_max=.. kring_lost=.. ftrace_lost=..
//   summary producer_bench floor mode=overwrite size=S floor_ns=..
//           kring_floor=.. floor_ftrace=.. floor_ftrace_min=.. floor_ftrace_max=..
//   summary producer_bench runs=N bad=N ok=0|1
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <kring/kring.hpp>

#include "bench_util.hpp"
#include "test_util.hpp"

namespace {

constexpr std::uint32_t bench_record_type = KRING_RECORD_KRING_BASE + 0x200;
constexpr int producer_cpu = 0;
constexpr int consumer_cpu = 1;

struct options : bench::pair_options {
    std::vector<unsigned> sizes{8, 32, 64, 256};
    bool verbose = false;
    std::string kring_write = "ptr";      // in place (kring_output_ptr()), copy or call
    std::string kring_clock = "default";  // the channel's clock: default or local
    bool floor = true;                    // overwrite mode: a bare ring in each pair
};

using bench::fields;
using bench::median;

std::optional<fields> run_command(const options& o, const std::string& cmd, std::string& err) {
    return bench::run_command(o.run_file, cmd, err);
}

struct run_result {
    double ns_per_record = 0;
    std::uint64_t total = 0;
    std::uint64_t lost = 0;   // records the ring refused (forward mode: full)
    std::uint64_t stuck = 0;  // ftrace forward: committed, never consumed
    bool exact = false;       // the accounting adds up
    std::string why;          // what did not add up, or what failed
};

std::string command(const char* ring, bool forward, unsigned size, const options& o,
                    std::uint64_t warmup) {
    std::ostringstream c;
    c << "ring=" << ring << " mode=" << (forward ? "forward" : "overwrite") << " size=" << size
      << " count=" << o.count << " warmup=" << warmup << " pages=" << (1u << o.order)
      << " consumer_cpu=" << consumer_cpu;
    if (std::strcmp(ring, "kring") == 0)
        c << " write=" << o.kring_write;
    if (std::strcmp(ring, "ftrace") != 0)
        c << " clock=" << (o.kring_clock == "local" ? "local" : "mono");
    return c.str();
}

// One lap of the ring, untimed, before the timed loop: both rings start
// with every page touched.
std::uint64_t warmup_records(const options& o, unsigned size) {
    return (std::uint64_t(4096) << o.order) / (size + 8) + 1;
}

run_result run_kring(const options& o, bool forward, unsigned size) {
    run_result r;
    kring::channel_options co;
    co.source = KRING_SOURCE_NONE;
    co.data_pages_order = o.order;
    co.read_only = !forward;  // read-only mapping: backward, overwrite
    if (o.kring_clock == "local")
        co.clockid = KRING_CLOCK_LOCAL;  // ftrace's clock: trace_clock_local()
    auto ch = kring::channel::open(co);
    if (!ch) {
        r.why = "kring channel: " + ch.error().message();
        return r;
    }
    if (auto e = ch->enable(); !e) {
        r.why = "enable: " + e.error().message();
        return r;
    }
    auto id = ch->id();
    if (!id) {
        r.why = "id: " + id.error().message();
        return r;
    }

    // Forward mode: a reader thread on CPU 1 drains the mapping as fast as
    // it can. It polls, so it asks for no wake-ups (as ftrace's consumer,
    // which nobody wakes either).
    std::atomic<bool> stop{false};
    std::uint64_t delivered = 0, bad = 0, lost_seen = 0;
    std::string reader_error;
    std::thread reader;
    if (forward) {
        kring::barrier::arm_need_wakeup(ch->ctl()->need_wakeup, 0);
        reader = std::thread([&] {
            kt::pin_to(consumer_cpu);
            kring::reader rd(ch->ring());
            auto on_record = [&](const kring::record& rec) {
                if (rec.type() == bench_record_type && rec.size() == size + 8)
                    delivered++;
                else if (rec.type() != KRING_RECORD_LOST)
                    bad++;
            };
            for (;;) {
                const bool last = stop.load(std::memory_order_acquire);
                auto n = rd.drain(on_record);
                if (!n) {
                    reader_error = n.error().message();
                    break;
                }
                if (last)
                    break;
            }
            lost_seen = rd.lost_seen();
        });
    }

    std::string err;
    auto f = run_command(o,
                         command("kring", forward, size, o, warmup_records(o, size)) +
                             " channel=" + std::to_string(*id),
                         err);
    stop.store(true, std::memory_order_release);
    if (reader.joinable())
        reader.join();
    if (!f) {
        r.why = err;
        return r;
    }
    auto st = ch->stats();
    if (!st) {
        r.why = "stats: " + st.error().message();
        return r;
    }
    const std::uint64_t total = (*f)["total"], ok = (*f)["ok"], fail = (*f)["fail"];
    r.total = total;
    r.lost = fail;
    r.ns_per_record = double((*f)["ns"]) / double(o.count);
    std::ostringstream why;
    if (st->produced != total || st->written != ok || ok + fail != total)
        why << "produced " << st->produced << " written " << st->written << " ok " << ok << " fail "
            << fail << " of " << total << "; ";
    if (!forward && ok != total)
        why << "overwrite mode refused " << fail << " records; ";
    if (forward) {
        if (st->lost_no_space != fail)
            why << "lost_no_space " << st->lost_no_space << " != fail " << fail << "; ";
        if (delivered != ok || bad || !reader_error.empty())
            why << "reader delivered " << delivered << " of " << ok << ", " << bad << " bad "
                << reader_error << "; ";
        if (lost_seen > fail)
            why << "LOST records report " << lost_seen << " > " << fail << "; ";
    }
    r.why = why.str();
    r.exact = r.why.empty();
    return r;
}

// Run @ring's loop in kring_bench.ko (ftrace's or the floor's): its
// answer, with r.total and r.ns_per_record from it; or nothing, r.why set.
std::optional<fields> run_module(const options& o, const char* ring, bool forward, unsigned size,
                                 run_result& r) {
    std::string err;
    auto f = run_command(o, command(ring, forward, size, o, warmup_records(o, size)), err);
    if (!f) {
        r.why = err;
        return std::nullopt;
    }
    r.total = (*f)["total"];
    r.ns_per_record = double((*f)["ns"]) / double(o.count);
    return f;
}

run_result run_ftrace(const options& o, bool forward, unsigned size) {
    run_result r;
    auto f = run_module(o, "ftrace", forward, size, r);
    if (!f)
        return r;
    fields& v = *f;
    const std::uint64_t total = r.total, ok = v["ok"], fail = v["fail"];
    r.lost = fail;
    std::ostringstream why;
    if (ok + fail != total)
        why << "ok " << ok << " fail " << fail << " of " << total << "; ";
    if (!forward && (ok != total || v["entries"] + v["overrun"] != total))
        why << "ok " << ok << " entries " << v["entries"] << " overrun " << v["overrun"] << " of "
            << total << "; ";
    // ftrace's reader has been seen to leave a few entries it never hands
    // out after runs that dropped records (kring_bench.c, bench_drain()):
    // they are committed records, counted apart, not a failure.
    if (forward)
        r.stuck = v["entries"];
    if (forward && (v["consumed"] + v["entries"] != ok || v["dropped"] != fail))
        why << "consumed " << v["consumed"] << " of " << ok << ", dropped " << v["dropped"]
            << " fail " << fail << ", entries left " << v["entries"] << " after "
            << v["empty_retries"] << " empty answers; ";
    r.why = why.str();
    r.exact = r.why.empty();
    return r;
}

// The floor (overwrite mode): every record written, the last one read back.
run_result run_floor(const options& o, unsigned size) {
    run_result r;
    auto f = run_module(o, "floor", false, size, r);
    if (!f)
        return r;
    fields& v = *f;
    if (v["ok"] != r.total || v["fail"])
        r.why = "floor: ok " + std::to_string(v["ok"]) + " fail " + std::to_string(v["fail"]) +
                " of " + std::to_string(r.total) + " (fail: the last record not read back)";
    r.exact = r.why.empty();
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"kring's producer loop against ftrace's ring buffer (kring_bench.ko)"};
    o.add_to(app, "kring/ftrace pairs per mode and size", "records per run");
    app.add_option("--sizes", o.sizes, "payload sizes, 8..4096, multiples of 8")
        ->delimiter(',')
        ->check(CLI::Range(8, 4096) &
                CLI::Validator(
                    [](std::string& v) { return std::stoul(v) % 8 ? "not a multiple of 8" : ""; },
                    "MULTIPLE_OF_8"));
    app.add_flag("--verbose", o.verbose, "every pair's figures");
    app.add_option("--kring-write", o.kring_write,
                   "kring's record: ptr (in place, kring_output_ptr()), copy "
                   "(kring_output_copy()) or call (kring_channel_write(), one call)")
        ->check(CLI::IsMember({"ptr", "copy", "call"}))
        ->capture_default_str();
    app.add_option("--kring-clock", o.kring_clock,
                   "kring's record clock: default (CLOCK_MONOTONIC, ktime_get_mono_fast_ns()) "
                   "or local (local_clock(), the clock of ftrace's ring here)")
        ->check(CLI::IsMember({"default", "local"}))
        ->capture_default_str();
    app.add_flag(
        "--no-floor", [&o](std::int64_t) { o.floor = false; },
        "no floor run (a bare ring) in the overwrite pairs");
    if (auto rc = o.parse(app, argc, argv))
        return *rc;
    if (!bench::start_on("producer_bench", producer_cpu))
        return 1;

    struct row {
        const char* mode;
        unsigned size;
        double kring_ns, ftrace_ns, ratio, ratio_min, ratio_max;
        double kring_lost, ftrace_lost;  // fraction of the records, all runs
    };
    struct floor_row {
        unsigned size;
        double floor_ns, kring_floor, floor_ftrace, floor_ftrace_min, floor_ftrace_max;
    };
    std::vector<row> rows;
    std::vector<floor_row> floor_rows;
    unsigned runs = 0, bad = 0;
    std::uint64_t stuck = 0, stuck_runs = 0;
    for (bool forward : {false, true}) {
        for (unsigned size : o.sizes) {
            std::vector<double> k_ns, f_ns, ratios, fl_ns, k_fl, fl_f;
            std::uint64_t k_lost = 0, f_lost = 0, k_total = 0, f_total = 0;
            const bool with_floor = o.floor && !forward;
            for (unsigned p = 0; p < o.pairs; p++) {
                // A, B, A, B, ...: kring first in every pair (the floor third).
                run_result k = run_kring(o, forward, size);
                run_result f = run_ftrace(o, forward, size);
                run_result fl;
                if (with_floor)
                    fl = run_floor(o, size);
                for (auto* r : {&k, &f, &fl}) {
                    if (r == &fl && !with_floor)
                        continue;
                    runs++;
                    if (!r->exact) {
                        bad++;
                        std::printf("FAIL %s %s size=%u: %s\n",
                                    r == &k   ? "kring"
                                    : r == &f ? "ftrace"
                                              : "floor",
                                    forward ? "forward" : "overwrite", size, r->why.c_str());
                    }
                }
                if (with_floor && fl.ns_per_record > 0 && k.ns_per_record > 0 &&
                    f.ns_per_record > 0) {
                    fl_ns.push_back(fl.ns_per_record);
                    k_fl.push_back(k.ns_per_record / fl.ns_per_record);
                    fl_f.push_back(fl.ns_per_record / f.ns_per_record);
                }
                stuck += f.stuck;
                stuck_runs += f.stuck ? 1 : 0;
                if (o.verbose)
                    std::printf("  %s size=%u pair %u: kring %.1f ns ftrace %.1f ns\n",
                                forward ? "forward" : "overwrite", size, p, k.ns_per_record,
                                f.ns_per_record);
                if (k.ns_per_record <= 0 || f.ns_per_record <= 0)
                    continue;
                k_ns.push_back(k.ns_per_record);
                f_ns.push_back(f.ns_per_record);
                ratios.push_back(k.ns_per_record / f.ns_per_record);
                k_lost += k.lost;
                f_lost += f.lost;
                k_total += k.total;
                f_total += f.total;
            }
            row w{forward ? "forward" : "overwrite",
                  size,
                  median(k_ns),
                  median(f_ns),
                  median(ratios),
                  0,
                  0,
                  k_total ? double(k_lost) / double(k_total) : 0,
                  f_total ? double(f_lost) / double(f_total) : 0};
            if (!ratios.empty()) {
                w.ratio_min = *std::min_element(ratios.begin(), ratios.end());
                w.ratio_max = *std::max_element(ratios.begin(), ratios.end());
            }
            rows.push_back(w);
            if (!fl_f.empty())
                floor_rows.push_back({size, median(fl_ns), median(k_fl), median(fl_f),
                                      *std::min_element(fl_f.begin(), fl_f.end()),
                                      *std::max_element(fl_f.begin(), fl_f.end())});
        }
    }

    std::printf(
        "\nproducer loop, ns/record: median of %u runs each (kring, ftrace alternated), "
        "%llu records per run, rings of %u pages, CPU %d (consumer: CPU %d); kring: write=%s "
        "clock=%s\n",
        o.pairs, (unsigned long long)o.count, 1u << o.order, producer_cpu, consumer_cpu,
        o.kring_write.c_str(), o.kring_clock.c_str());
    std::printf("%-9s %5s %10s %10s %7s %13s %9s %9s\n", "mode", "size", "kring", "ftrace", "ratio",
                "ratio min-max", "k lost", "f lost");
    for (const row& w : rows)
        std::printf("%-9s %5u %10.1f %10.1f %7.2f %6.2f-%-6.2f %8.1f%% %8.1f%%\n", w.mode, w.size,
                    w.kring_ns, w.ftrace_ns, w.ratio, w.ratio_min, w.ratio_max, 100 * w.kring_lost,
                    100 * w.ftrace_lost);
    if (!floor_rows.empty()) {
        std::printf(
            "\nthe floor, overwrite mode: a bare ring in the same loop (clock read, one memcpy(), "
            "release store of the head), kring's clock; medians of the per-pair ratios\n");
        std::printf("%-9s %5s %10s %12s %13s %17s\n", "mode", "size", "floor", "kring/floor",
                    "floor/ftrace", "floor/ftrace min-max");
        for (const floor_row& w : floor_rows)
            std::printf("%-9s %5u %10.1f %12.2f %13.2f %10.2f-%-6.2f\n", "overwrite", w.size,
                        w.floor_ns, w.kring_floor, w.floor_ftrace, w.floor_ftrace_min,
                        w.floor_ftrace_max);
    }
    // What one clock read costs, for the reading of the table.
    std::vector<double> mono, local;
    for (unsigned p = 0; p < o.pairs; p++) {
        std::string err;
        auto f = run_command(o, "ring=clock count=" + std::to_string(o.count), err);
        if (!f) {
            std::printf("FAIL clock: %s\n", err.c_str());
            bad++;
            break;
        }
        mono.push_back(double((*f)["mono_ns"]) / double(o.count));
        local.push_back(double((*f)["local_ns"]) / double(o.count));
    }
    std::printf(
        "one clock read (median of %zu): ktime_get_mono_fast_ns %.1f ns, local_clock %.1f ns\n",
        mono.size(), median(mono), median(local));
    if (stuck)
        std::printf(
            "ftrace forward: %llu committed records in %llu runs never came out of "
            "ring_buffer_consume() (entries left after the drain)\n",
            (unsigned long long)stuck, (unsigned long long)stuck_runs);
    for (const row& w : rows)
        std::printf(
            "summary producer_bench mode=%s size=%u pairs=%u kring_ns=%.1f ftrace_ns=%.1f "
            "ratio=%.3f ratio_min=%.3f ratio_max=%.3f kring_lost=%.4f ftrace_lost=%.4f\n",
            w.mode, w.size, o.pairs, w.kring_ns, w.ftrace_ns, w.ratio, w.ratio_min, w.ratio_max,
            w.kring_lost, w.ftrace_lost);
    for (const floor_row& w : floor_rows)
        std::printf(
            "summary producer_bench floor mode=overwrite size=%u floor_ns=%.1f kring_floor=%.3f "
            "floor_ftrace=%.3f floor_ftrace_min=%.3f floor_ftrace_max=%.3f\n",
            w.size, w.floor_ns, w.kring_floor, w.floor_ftrace, w.floor_ftrace_min,
            w.floor_ftrace_max);
    std::printf("summary producer_bench clock_mono_ns=%.1f clock_local_ns=%.1f\n", median(mono),
                median(local));
    std::printf("summary producer_bench runs=%u bad=%u ok=%d\n", runs, bad, bad ? 0 : 1);
    return bad ? 1 : 0;
}
