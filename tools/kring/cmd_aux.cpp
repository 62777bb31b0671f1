// kring aux: run kring's emulated hardware tracer into a channel's AUX area
// and show what arrived. Normal mode follows the AUX records and counts the
// packets, the gaps and the TRUNCATED extents; --snapshot maps the AUX area
// read-only, lets the tracer overwrite it, takes a snapshot and decodes the
// newest packets (docs/AUX.md).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "aux_packets.hpp"
#include "command.hpp"
#include "kring/aux.hpp"
#include "kring/channel.hpp"
#include "kring/reader.hpp"
#include "kring/record.hpp"
#include "triggers.hpp"

namespace kring_tool {
namespace {

struct options {
    int cpu = 0;
    bool cpu_given = false;
    int pid_arg = 0;
    std::optional<int> pid;     // task mode
    std::string control;        // snapshot control fifo
    unsigned order = 2;         // 2^order AUX pages
    unsigned ms = 200;          // how long the tracer runs
    unsigned sleep_ms = 1;      // consumer nap (normal mode)
    std::uint64_t per_ms = 64;  // packets per millisecond
    bool snapshot = false;
};

// What a snapshot's window held: decodable packets without a gap, nothing
// at all (taken before the tracer wrote its first packet), or neither.
enum class window { intact, empty, broken };

// One snapshot: stop the tracer, copy the newest window, restart it (unless
// this is the last one), then decode. What the window held, or the error
// of the snapshot or the resume.
kring::result<window> take_snapshot(kring::channel& ch, kring::aux_reader& ax, unsigned index,
                                    bool restart) {
    std::vector<std::byte> buf;
    kring::aux_extent e;
    auto copy = [&]() -> kring::result<void> {
        e = ax.snapshot();
        buf.resize(e.size());
        e.copy_to(buf.data());
        return {};
    };
    // The last snapshot leaves the tracer stopped; the channel closes next.
    kring::result<void> r = restart ? ch.with_aux_snapshot(copy) : ch.aux_snapshot();
    if (r && !restart)
        r = copy();
    if (!r)
        return r.error();
    packet_stats d;
    std::size_t sync = find_sync(buf);
    decode_packets(buf, sync, d);
    const window w = buf.empty()                      ? window::empty
                     : !d.bad && !d.gaps && d.packets ? window::intact
                                                      : window::broken;
    fmt::print("snapshot {}  aux_head {}, newest {} bytes{}\n", index, ax.head(), e.size(),
               e.wrapped ? " (wrapped: older data overwritten)" : "");
    fmt::print("            first SYNC at +{}, packets {}..{} ({} packets, {} SYNC): {}\n", sync,
               d.first, d.last, d.packets, d.syncs,
               w == window::intact  ? "intact"
               : w == window::empty ? "empty (the tracer has written nothing yet)"
                                    : "NOT intact");
    return w;
}

// The tracer's channel: its CPU or task, its rate, its AUX area.
kring::result<kring::channel> open_tracer(const context& ctx, const options& o) {
    kring::channel_options co;
    co.device = ctx.device;
    co.source = KRING_SOURCE_AUX_TRACER;
    if (!o.pid || o.cpu_given)
        co.cpu = o.cpu;
    co.pid = o.pid;
    co.config[0] = o.per_ms;
    co.aux_pages_order = o.order;
    co.aux_snapshot = o.snapshot;
    return kring::channel::open(co);
}

void print_start(const options& o) {
    std::string who = o.pid ? fmt::format("task {}", *o.pid) : fmt::format("cpu {}", o.cpu);
    std::string how = o.ms ? fmt::format("for {} ms", o.ms) : std::string("until SIGINT");
    fmt::print("tracer on {}: {} packets/ms into {} AUX pages ({} mode) {}\n", who, o.per_ms,
               1u << o.order, o.snapshot ? "snapshot" : "normal", how);
    if (o.snapshot)
        fmt::print("            snapshot on SIGUSR2 (kill -USR2 {}){}\n", ::getpid(),
                   o.control.empty() ? "" : fmt::format(" or 'snapshot' into {}", o.control));
    std::fflush(stdout);
}

// The records of the ring: AUX and ITRACE_START counted; in normal mode
// each AUX extent decoded and released.
struct aux_tally {
    std::uint64_t records = 0, truncated = 0, bytes = 0, itrace = 0;
    packet_stats d;
    std::vector<std::byte> buf;

    void add(const kring::record& r, const options& o, kring::aux_reader& ax) {
        if (r.header().type == KRING_RECORD_ITRACE_START)
            itrace++;
        auto a = kring::parse_aux(r);
        if (!a)
            return;
        records++;
        truncated += a->truncated();
        if (o.snapshot)
            return;
        auto e = ax.extent(*a);
        buf.resize(e.size());
        e.copy_to(buf.data());
        decode_packets(buf, 0, d);
        bytes += e.size();
        ax.release(a->aux_offset + a->aux_size);
    }
};

// Everything the ring holds, into the tally.
kring::result<void> drain(kring::reader& rd, const options& o, kring::aux_reader& ax,
                          aux_tally& t) {
    auto n = rd.drain([&](const kring::record& r) { t.add(r, o, ax); });
    if (!n)
        return n.error();
    return {};
}

// Snapshot mode: a snapshot per request until the end, one at the end.
int run_snapshots(const options& o, kring::channel& ch, kring::reader& rd, kring::aux_reader& ax,
                  triggers& trig) {
    aux_tally t;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.ms);
    unsigned requests = 0, taken = 0, intact = 0, empty = 0;
    auto snapshot = [&](bool restart) -> kring::result<void> {
        auto r = take_snapshot(ch, ax, taken + 1, restart);
        if (!r)
            return r.error();
        intact += *r == window::intact;
        empty += *r == window::empty;
        taken++;
        std::fflush(stdout);
        return {};
    };
    while (!o.ms || std::chrono::steady_clock::now() < end) {
        if (trig.wait(10, requests))
            break;
        while (taken < requests)
            if (auto r = snapshot(true); !r)
                return report(r.error());
    }
    if (auto r = snapshot(false); !r)
        return report(r.error());
    if (auto r = drain(rd, o, ax, t); !r)
        return report(r.error());
    fmt::print("            {} AUX records with OVERWRITE, {} ITRACE_START\n", t.records, t.itrace);
    print_summary("aux", {{"snapshots", taken},
                          {"intact", intact},
                          {"empty", empty},
                          {"aux_records", t.records},
                          {"itrace_start", t.itrace}});
    // An empty window (a snapshot before the first packet) is no fault.
    if (intact + empty != taken)
        return report(fmt::format("{} of {} snapshots not intact", taken - intact - empty, taken));
    return exit_ok;
}

void print_normal(const options& o, const aux_tally& t, double traced_ms) {
    const packet_stats& d = t.d;
    fmt::print("normal      {} AUX records, {} bytes, {} TRUNCATED, {} ITRACE_START\n", t.records,
               t.bytes, t.truncated, t.itrace);
    fmt::print("            packets {}..{}: {} delivered, {} lost in {} gaps{}\n", d.first, d.last,
               d.packets, d.missing, d.gaps, d.bad ? " (MALFORMED data)" : "");
    if (o.pid && d.packets)
        fmt::print(
            "            task mode: {} packets generated at {}/ms of run time: the task "
            "ran about {:.1f} of the {:.1f} ms traced\n",
            d.last + 1, o.per_ms, double(d.last + 1) / double(o.per_ms), traced_ms);
    print_summary("aux", {{"aux_records", t.records},
                          {"bytes", t.bytes},
                          {"truncated", t.truncated},
                          {"itrace_start", t.itrace},
                          {"packets", d.packets},
                          {"lost_packets", d.missing},
                          {"gaps", d.gaps},
                          {"malformed", d.bad}});
}

// Normal mode: the AUX records followed until the end, every extent decoded.
int run_normal(const options& o, kring::channel& ch, kring::reader& rd, kring::aux_reader& ax,
               std::chrono::steady_clock::time_point enabled) {
    aux_tally t;
    const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.ms);
    while (!o.ms || std::chrono::steady_clock::now() < end) {
        if (auto r = drain(rd, o, ax, t); !r)
            return report(r.error());
        std::this_thread::sleep_for(std::chrono::milliseconds(o.sleep_ms));
    }
    if (auto r = ch.disable(); !r)
        return report(r.error());
    const std::chrono::duration<double, std::milli> traced =
        std::chrono::steady_clock::now() - enabled;
    if (auto r = drain(rd, o, ax, t); !r)
        return report(r.error());
    print_normal(o, t, traced.count());
    // Nothing is lost silently: each gap follows a TRUNCATED extent.
    if (t.d.gaps > t.truncated)
        return report(fmt::format("{} gaps but only {} TRUNCATED extents", t.d.gaps, t.truncated));
    if (t.d.bad)
        return report("malformed AUX packets");
    return exit_ok;
}

int run(const context& ctx, const options& o) {
    triggers trig;
    if (o.snapshot)
        if (auto r = trig.setup(o.control); !r)
            return report(r.error());
    auto ch = open_tracer(ctx, o);
    if (!ch)
        return report(ch.error());
    kring::reader rd(ch->ring());
    kring::aux_reader ax(ch->aux());
    const auto enabled = std::chrono::steady_clock::now();
    if (auto r = ch->enable(); !r)
        return report(r.error());
    print_start(o);
    if (o.snapshot)
        return run_snapshots(o, *ch, rd, ax, trig);
    return run_normal(o, *ch, rd, ax, enabled);
}

}  // namespace

void add_aux(CLI::App* sub, context& ctx) {
    static options o;
    auto* cpu = sub->add_option("--cpu", o.cpu, "CPU mode: the CPU the tracer runs on")
                    ->capture_default_str();
    auto* pid =
        sub->add_option("-p,--pid", o.pid_arg,
                        "task mode: trace this task only while it runs (with --cpu: there only)");
    sub->add_option("--order", o.order, "AUX area of 2^ORDER pages")
        ->check(CLI::Range(0u, 10u))
        ->capture_default_str();
    sub->add_option("--ms", o.ms, "milliseconds of tracing (0: until SIGINT or 'stop')")
        ->capture_default_str();
    sub->add_option("--rate", o.per_ms, "packets per millisecond")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    sub->add_option("--sleep-ms", o.sleep_ms, "consumer nap between passes (normal mode)")
        ->capture_default_str();
    auto* snap =
        sub->add_flag("--snapshot", o.snapshot,
                      "snapshot mode: read-only AUX, newest data on SIGUSR2 and at the end");
    sub->add_option("--control", o.control,
                    "snapshot mode: a fifo taking 'snapshot' and 'stop' lines (created if absent)")
        ->needs(snap);
    sub->footer(
        "Normal mode follows the AUX records and counts packets, gaps and TRUNCATED\n"
        "extents; --snapshot lets the tracer overwrite a read-only area and decodes\n"
        "the newest packets of each snapshot (SIGUSR2, the control fifo, the end).\n"
        "\n"
        "Examples:\n"
        "  sudo kring aux --cpu 1 --ms 500\n"
        "      CPU mode on CPU 1 for 500 ms"
        "\n"
        "  sudo kring aux --snapshot --order 4 --ms 0 --control /tmp/aux-ctl &\n"
        "      snapshot mode until 'stop'"
        "\n"
        "  echo snapshot >/tmp/aux-ctl; echo stop >/tmp/aux-ctl\n"
        "      one snapshot, then the end"
        "\n"
        "  kring aux --pid 1234 --ms 300\n"
        "      task mode: only while 1234 runs");
    sub->callback([&ctx, cpu, pid] {
        o.cpu_given = cpu->count() > 0;
        if (pid->count())
            o.pid = o.pid_arg;
        ctx.exit_code = run(ctx, o);
    });
}

}  // namespace kring_tool
