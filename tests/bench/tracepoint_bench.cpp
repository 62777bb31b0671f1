// tracepoint_bench: one tracepoint, three sinks, in one boot
// (docs/PERFORMANCE.md; `make bench` runs it after producer_bench).
//
//   tracepoint_bench [--pairs N] [--count N] [--order N] [--smoke] [--run FILE]
//
// kring_bench.ko fires kring_bench:kring_bench_hit N times from a kthread
// on CPU 0 (ring=tp); each round runs eight sinks in turn:
//   none    the event disabled: the baseline (a static branch);
//   ftrace  the event enabled in tracefs, into ftrace's ring (its default
//           overwrite mode, buffer_size_kb = the ring's size, no reader);
//   perf    perf_event_open(PERF_TYPE_TRACEPOINT, sample_period 1,
//           PERF_SAMPLE_RAW | PERF_SAMPLE_TIME) on CPU 0, 1 + 2^order pages,
//           read by libkring's reader on CPU 1;
//   kring   the module's probe writing a SAMPLE (TIME | RAW) into a kring
//           channel of 2^order pages with kring_channel_write_raw(), read
//           by libkring's reader on CPU 1;
//   kring-ow  the same probe into a channel mapped read-only: kring's
//           overwrite mode, no reader, as ftrace's sink runs;
//   floor   a probe writing the same 48-byte SAMPLE into a bare ring
//           (kring_bench.c): the least any ring's probe costs here;
//   kring-call  the kring-ow channel written with the same 48 bytes through
//           kring_channel_write() (write=call): the SAMPLE writer's own cost
//           is kring-ow's above it;
//   kring-sample  the kring-ow channel written with
//           kring_channel_write_sample() of a zero-initialised struct
//           kring_sample_data (write=sample): what filling that struct costs
//           above kring-ow.
// Prints the median ns per hit of each, minus the baseline, and the ratios
// kring-ow/ftrace (both overwriting, unread), kring/perf (both read on CPU
// 1), kring/ftrace, floor/ftrace and kring-ow/floor (medians of the
// per-round ratios, with their
// spread): a reader polling on the other CPU costs the writing CPU more in
// some boots than in others under emulation, so only like is compared with
// like. Every run's accounting is checked: each hit is in the sink or
// counted as lost there (ftrace: entries + overrun; perf: samples + LOST
// records' counts; kring: records + lost = hits, and the channel's
// counters agree; kring-ow, floor, kring-call, kring-sample: every hit
// written); a run that fails it fails
// the program (exit 1). Times
// are never asserted. --smoke: one round, few hits (make check). The last
// lines are machine-readable:
//   summary tracepoint_bench sink=S ns_per_hit=.. over_baseline=.. lost=..
//   summary tracepoint_bench ratio_ftrace=.. ratio_perf=.. ratio_ftrace_read=..
//           (min-max too; ratio_ftrace: kring-ow's)
//   summary tracepoint_bench floor_ftrace=.. kring_floor=.. (min-max too)
//   summary tracepoint_bench runs=N bad=N ok=0|1
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <sstream>
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

using options = bench::pair_options;

struct run_result {
    double ns_per_hit = 0;
    std::uint64_t lost = 0;
    std::string why;  // what did not add up, or what failed; empty: exact
};

using bench::event_dir;
using bench::stat_of;
using bench::tracefs;

// Fire @count hits (default: the run's); ns per hit from the module's
// answer; checks total.
run_result fire(const options& o, const char* sink, const std::string& extra, bench::fields& f,
                std::uint64_t count = 0) {
    run_result r;
    std::string err;
    if (!count)
        count = o.count;
    auto v = bench::run_command(
        o.run_file, std::string("ring=tp sink=") + sink + " count=" + std::to_string(count) + extra,
        err);
    if (!v) {
        r.why = err;
        return r;
    }
    f = *v;
    if (f["total"] != count)
        r.why = "the module fired " + std::to_string(f["total"]) + " hits";
    r.ns_per_hit = double(f["ns"]) / double(count);
    return r;
}

run_result run_none(const options& o, const std::string& tfs) {
    bench::fields f;
    kt::write_text(tfs + "/" + event_dir + "/enable", "0");
    return fire(o, "none", "", f);
}

run_result run_ftrace(const options& o, const std::string& tfs) {
    const std::string kb = std::to_string((4096u << o.order) / 1024);
    if (!kt::write_text(tfs + "/buffer_size_kb", kb) || !kt::write_text(tfs + "/trace", "") ||
        !kt::write_text(tfs + "/tracing_on", "1") ||
        !kt::write_text(tfs + "/" + event_dir + "/enable", "1"))
        return {0, 0, "cannot set up ftrace in " + tfs};
    bench::fields f;
    run_result r = fire(o, "ftrace", "", f);
    kt::write_text(tfs + "/" + event_dir + "/enable", "0");
    const std::string stats =
        kt::read_text(tfs + "/per_cpu/cpu" + std::to_string(producer_cpu) + "/stats");
    const std::uint64_t entries = stat_of(stats, "entries"), overrun = stat_of(stats, "overrun");
    r.lost = overrun;
    if (r.why.empty() && entries + overrun != o.count)
        r.why = "ftrace: entries " + std::to_string(entries) + " + overrun " +
                std::to_string(overrun) + " != " + std::to_string(o.count) + " hits";
    kt::write_text(tfs + "/trace", "");
    return r;
}

run_result run_perf(const options& o, const std::string& tfs) {
    perf_event_attr a = bench::tracepoint_attr(tfs);
    if (!a.config)
        return {0, 0, "no id for the event in " + tfs};
    a.wakeup_events = 1u << 30;  // the reader polls: no wake-ups
    auto pr = kring::perf_ring::open(a, -1, producer_cpu, o.order);
    if (!pr)
        return {0, 0, "perf_event_open: " + pr.error().message()};
    bench::consumer d;
    if (!d.start(consumer_cpu, pr->ring(), PERF_RECORD_SAMPLE))
        return {0, 0, "perf: the consumer thread did not start"};
    bench::fields f, f2;
    run_result r = fire(o, "perf", "", f);
    bench::wait_consumed(pr->page());
    run_result last = fire(o, "perf", "", f2, 1);
    d.finish();
    r.lost = d.lost;
    if (r.why.empty())
        r.why = last.why;
    if (r.why.empty() && (d.samples + d.lost != o.count + 1 || d.other || !d.error.empty()))
        r.why = "perf: " + std::to_string(d.samples) + " samples + " + std::to_string(d.lost) +
                " lost != " + std::to_string(o.count + 1) + " hits, " + std::to_string(d.other) +
                " other records " + d.error;
    return r;
}

// kring's sink: read on CPU 1 (forward mode), or with @overwrite mapped
// read-only and never read.
// @write: the probe's write= (call, sample; empty: kring_channel_write_raw()).
run_result run_kring(const options& o, bool overwrite, const std::string& write = "") {
    kring::channel_options co;
    co.source = KRING_SOURCE_NONE;
    co.data_pages_order = o.order;
    co.sample_type = KRING_SAMPLE_TIME | KRING_SAMPLE_RAW;
    co.read_only = overwrite;
    auto ch = kring::channel::open(co);
    if (!ch)
        return {0, 0, "kring channel: " + ch.error().message()};
    if (auto e = ch->enable(); !e)
        return {0, 0, "enable: " + e.error().message()};
    auto id = ch->id();
    if (!id)
        return {0, 0, "id: " + id.error().message()};
    if (overwrite) {
        bench::fields f;
        run_result r =
            fire(o, "kring",
                 " channel=" + std::to_string(*id) + (write.empty() ? "" : " write=" + write), f);
        auto st = ch->stats();
        if (!st)
            r.why = "stats: " + st.error().message();
        else if (r.why.empty() && (f["ok"] != o.count || f["fail"] || st->written != o.count))
            r.why = "kring-ow: probe ok " + std::to_string(f["ok"]) + " fail " +
                    std::to_string(f["fail"]) + ", written " + std::to_string(st->written) +
                    " of " + std::to_string(o.count);
        return r;
    }
    kring::barrier::arm_need_wakeup(ch->ctl()->need_wakeup, 0);
    bench::consumer d;
    if (!d.start(consumer_cpu, ch->ring(), KRING_RECORD_SAMPLE))
        return {0, 0, "kring: the consumer thread did not start"};
    bench::fields f;
    run_result r = fire(o, "kring", " channel=" + std::to_string(*id), f);
    d.finish();
    r.lost = f["fail"];
    auto st = ch->stats();
    std::ostringstream why;
    if (!st)
        why << "stats: " << st.error().message();
    else if (r.why.empty() && (f["ok"] + f["fail"] != o.count || st->written != f["ok"] ||
                               st->lost_no_space != f["fail"] || d.samples != f["ok"] ||
                               d.lost > f["fail"] || d.other || !d.error.empty()))
        why << "kring: probe ok " << f["ok"] << " fail " << f["fail"] << " of " << o.count
            << ", written " << st->written << " lost_no_space " << st->lost_no_space << ", reader "
            << d.samples << " samples " << d.lost << " lost " << d.other << " other " << d.error;
    if (r.why.empty())
        r.why = why.str();
    return r;
}

// The floor's probe: every hit written into its bare ring.
run_result run_floor(const options& o) {
    bench::fields f;
    run_result r = fire(o, "floor", "", f);
    if (r.why.empty() && (f["ok"] != o.count || f["fail"]))
        r.why = "floor: probe ok " + std::to_string(f["ok"]) + " fail " +
                std::to_string(f["fail"]) + " of " + std::to_string(o.count);
    return r;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"one tracepoint into ftrace, perf and kring (kring_bench.ko)"};
    o.add_to(app, "rounds of the eight sinks", "hits per run");
    if (auto rc = o.parse(app, argc, argv))
        return *rc;
    if (!bench::start_on("tracepoint_bench", producer_cpu))
        return 1;
    const std::string tfs = tracefs();
    if (tfs.empty()) {
        std::printf("FAIL tracefs: no %s (is kring_bench.ko loaded?)\n", event_dir.c_str());
        std::printf("summary tracepoint_bench runs=0 bad=1 ok=0\n");
        return 1;
    }

    constexpr int nsinks = 8;
    const char* names[nsinks] = {"none",     "ftrace", "perf",       "kring",
                                 "kring-ow", "floor",  "kring-call", "kring-sample"};
    std::vector<double> ns[nsinks], over[nsinks], r_ftrace, r_perf, r_ftrace_read, r_floor,
        r_kfloor;
    std::uint64_t lost[nsinks] = {};
    unsigned runs = 0, bad = 0;
    for (unsigned p = 0; p < o.pairs; p++) {
        run_result r[nsinks] = {run_none(o, tfs),           run_ftrace(o, tfs),
                                run_perf(o, tfs),           run_kring(o, false),
                                run_kring(o, true),         run_floor(o),
                                run_kring(o, true, "call"), run_kring(o, true, "sample")};
        bool round_ok = true;
        for (int s = 0; s < nsinks; s++) {
            runs++;
            if (!r[s].why.empty()) {
                bad++;
                round_ok = false;
                std::printf("FAIL %s: %s\n", names[s], r[s].why.c_str());
            }
        }
        if (!round_ok)
            continue;
        for (int s = 0; s < nsinks; s++) {
            ns[s].push_back(r[s].ns_per_hit);
            over[s].push_back(r[s].ns_per_hit - r[0].ns_per_hit);
            lost[s] += r[s].lost;
        }
        const double k = r[3].ns_per_hit - r[0].ns_per_hit;
        const double kow = r[4].ns_per_hit - r[0].ns_per_hit;
        const double fl = r[5].ns_per_hit - r[0].ns_per_hit;
        if (r[1].ns_per_hit > r[0].ns_per_hit) {
            r_ftrace.push_back(kow / (r[1].ns_per_hit - r[0].ns_per_hit));
            r_ftrace_read.push_back(k / (r[1].ns_per_hit - r[0].ns_per_hit));
            r_floor.push_back(fl / (r[1].ns_per_hit - r[0].ns_per_hit));
        }
        if (fl > 0)
            r_kfloor.push_back(kow / fl);
        if (r[2].ns_per_hit > r[0].ns_per_hit)
            r_perf.push_back(k / (r[2].ns_per_hit - r[0].ns_per_hit));
    }

    std::printf(
        "\none tracepoint, three sinks: ns per hit, median of %u rounds (none, ftrace, perf, "
        "kring, kring-ow, floor, kring-call, kring-sample in turn), %llu hits per run from a "
        "kthread on CPU %d, "
        "rings of %u "
        "pages "
        "(readers on CPU %d)\n",
        o.pairs, (unsigned long long)o.count, producer_cpu, 1u << o.order, consumer_cpu);
    // ftrace's ring overwrites (its default mode, no reader): its column
    // counts the events overwritten; perf's and kring's, the hits their full
    // ring refused (kring-ow overwrites and counts nothing lost).
    std::printf("%-12s %10s %14s %18s\n", "sink", "ns/hit", "over baseline", "lost/overwritten");
    const double hits = double(o.count) * double(ns[0].size());
    for (int s = 0; s < nsinks; s++)
        std::printf("%-12s %10.1f %14.1f %17.1f%%\n", names[s], bench::median(ns[s]),
                    bench::median(over[s]), hits ? 100.0 * double(lost[s]) / hits : 0);
    auto spread = [](const std::vector<double>& v, double& lo, double& hi) {
        lo = v.empty() ? 0 : *std::min_element(v.begin(), v.end());
        hi = v.empty() ? 0 : *std::max_element(v.begin(), v.end());
    };
    double fl, fh, pl, ph, rl, rh, ol, oh, kl, kh;
    spread(r_ftrace, fl, fh);
    spread(r_perf, pl, ph);
    spread(r_ftrace_read, rl, rh);
    spread(r_floor, ol, oh);
    spread(r_kfloor, kl, kh);
    std::printf(
        "over baseline: kring-ow/ftrace %.2f (%.2f-%.2f); kring/perf: %.2f (%.2f-%.2f); "
        "kring (read)/ftrace (unread) %.2f (%.2f-%.2f)\n",
        bench::median(r_ftrace), fl, fh, bench::median(r_perf), pl, ph,
        bench::median(r_ftrace_read), rl, rh);
    std::printf("the floor: floor/ftrace %.2f (%.2f-%.2f); kring-ow/floor %.2f (%.2f-%.2f)\n",
                bench::median(r_floor), ol, oh, bench::median(r_kfloor), kl, kh);
    for (int s = 0; s < nsinks; s++)
        std::printf(
            "summary tracepoint_bench sink=%s ns_per_hit=%.1f over_baseline=%.1f "
            "lost=%.4f\n",
            names[s], bench::median(ns[s]), bench::median(over[s]),
            hits ? double(lost[s]) / hits : 0);
    std::printf(
        "summary tracepoint_bench ratio_ftrace=%.3f ratio_ftrace_min=%.3f "
        "ratio_ftrace_max=%.3f ratio_perf=%.3f ratio_perf_min=%.3f ratio_perf_max=%.3f "
        "ratio_ftrace_read=%.3f ratio_ftrace_read_min=%.3f ratio_ftrace_read_max=%.3f\n",
        bench::median(r_ftrace), fl, fh, bench::median(r_perf), pl, ph,
        bench::median(r_ftrace_read), rl, rh);
    std::printf(
        "summary tracepoint_bench floor_ftrace=%.3f floor_ftrace_min=%.3f floor_ftrace_max=%.3f "
        "kring_floor=%.3f kring_floor_min=%.3f kring_floor_max=%.3f\n",
        bench::median(r_floor), ol, oh, bench::median(r_kfloor), kl, kh);
    std::printf("summary tracepoint_bench runs=%u bad=%u ok=%d\n", runs, bad, bad ? 0 : 1);
    return bad ? 1 : 0;
}
