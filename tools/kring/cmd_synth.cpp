// kring synth: run the module's synthetic generator on every CPU into one
// data ring per CPU, consume them, verify every record (sequence number and
// checksum) and print what was produced, delivered and lost.
//
// It is the data ring's end-to-end demo: with a small ring and a consumer
// that sleeps (--sleep-us) records are lost, and the figures show that
// every one of them is accounted for (produced = delivered + lost).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <fmt/core.h>
#include <linux/kring_test.h>

#include "command.hpp"
#include "kring/channel.hpp"
#include "kring/merger.hpp"
#include "kring/reader.hpp"

namespace kring_tool {
namespace {

constexpr std::uint64_t sample_type =
    KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ;

struct options {
    std::uint64_t count = 100000;  // records per CPU
    std::uint64_t rate = 0;        // records per second per CPU, 0 = flat out
    std::uint32_t payload = 64;    // RAW bytes per record
    unsigned order = 2;            // 2^order data pages per CPU
    unsigned sleep_us = 1000;      // consumer nap between passes
    bool nest = false;
    bool mirror = false;
    bool merge = false;
    std::uint64_t window_ms = 10;
    double timeout_s = 60;
};

struct cpu_ring {
    int cpu = 0;
    kring::channel ch;
    kring::reader rd;
    // what the consumer saw
    std::uint64_t delivered = 0, bad = 0, out_of_order = 0;
    std::uint64_t last_time = 0;
    kring_stats st{};

    cpu_ring(int c, kring::channel chan) : cpu(c), ch(std::move(chan)), rd(ch.ring()) {}
    cpu_ring(const cpu_ring&) = delete;
    cpu_ring& operator=(const cpu_ring&) = delete;
};

kring::channel_options channel_options(const options& o, int cpu, const std::string& device) {
    kring::channel_options c;
    c.device = device;
    c.source = KRING_SOURCE_SYNTHETIC;
    c.mirror = o.mirror;
    c.sample_type = sample_type;
    c.cpu = cpu;
    c.data_pages_order = o.order;
    c.config[0] = o.rate;
    c.config[1] = o.payload;
    c.config[2] = o.nest ? KRING_SYNTH_F_NEST : 0;
    c.config[3] = o.count;
    return c;
}

int report_cpu(int cpu, const kring::error& e) {
    return report(e.with_context(fmt::format("cpu {}", cpu)));
}

void check_sample(cpu_ring& r, const kring::record& rec) {
    auto s = kring::parse_sample(rec, r.ch.sample_type());
    kring_synth_payload p;
    if (!s || s->raw.size() < sizeof(p)) {
        r.bad++;
        return;
    }
    std::memcpy(&p, s->raw.data(), sizeof(p));
    const auto* body = reinterpret_cast<const std::uint8_t*>(s->raw.data()) + sizeof(p);
    std::uint32_t n = p.len >= sizeof(p) && p.len <= s->raw.size() ? p.len - sizeof(p) : 0;
    if (p.seq != s->seq || s->cpu != std::uint32_t(r.cpu) || p.cpu != s->cpu ||
        kring_synth_checksum(s->seq, body, n) != p.checksum) {
        r.bad++;
        return;
    }
    // Ring order is time order (the ring clock is read inside the
    // reservation loop). Sequence numbers are not: a writer that
    // interrupts another between its sequence number and its reservation
    // takes the next number and the earlier place.
    if (s->time < r.last_time)
        r.out_of_order++;
    r.last_time = s->time;
    r.delivered++;
}

// One pass over a ring: every record up to the head, then one release of
// the tail (libkring's reader: acquire of data_head (C), store-release of
// data_tail (D)). LOST records are counted by the reader (lost_seen()).
bool drain(cpu_ring& r) {
    auto n = r.rd.drain([&](const kring::record& rec) {
        if (rec.type() == KRING_RECORD_SAMPLE)
            check_sample(r, rec);
        else if (rec.type() != KRING_RECORD_LOST)
            r.bad++;
    });
    if (!n) {
        report_cpu(r.cpu, n.error());
        return false;
    }
    return true;
}

using ring_list = std::vector<std::unique_ptr<cpu_ring>>;

// A channel per online CPU, opened and enabled; the tool's status.
int open_rings(const context& ctx, const options& o, ring_list& rings) {
    const int ncpu = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    for (int cpu = 0; cpu < ncpu; cpu++) {
        auto ch = kring::channel::open(channel_options(o, cpu, ctx.device));
        if (!ch)
            return report_cpu(cpu, ch.error());
        rings.push_back(std::make_unique<cpu_ring>(cpu, std::move(*ch)));
    }
    for (auto& r : rings)
        if (auto e = r->ch.enable(); !e)
            return report_cpu(r->cpu, e.error());
    return exit_ok;
}

// --merge: one stream ordered by time across the CPUs (libkring's merger);
// its order is checked record by record.
struct merge_check {
    ring_list& rings;
    std::uint64_t merged = 0, backwards = 0, last_time = 0;

    void add(std::size_t src, const kring::record& rec, std::uint64_t t) {
        if (rec.type() == KRING_RECORD_LOST)
            return;  // counted by the reader
        if (rec.type() != KRING_RECORD_SAMPLE) {
            rings[src]->bad++;
            return;
        }
        check_sample(*rings[src], rec);
        backwards += t < last_time;
        last_time = t;
        merged++;
    }
};

// One ring's stats after a pass; false in @done while records are still
// to come or unaccounted for. The tool's status.
int update_ring(const options& o, cpu_ring& r, kring::merger& m, bool& done) {
    if (!o.merge && !drain(r))
        return exit_runtime;
    auto st = r.ch.stats();
    if (!st)
        return report_cpu(r.cpu, st.error());
    r.st = *st;
    if (r.st.produced < o.count || r.delivered + r.rd.lost_seen() < r.st.produced)
        done = false;
    // The generator idles after --count records: nothing more to wait
    // for once every record it produced went through the merger.
    // produced counts a record from its reservation on, before it
    // is in the ring, so produced >= count alone does not say the
    // last one can no longer come. With --nest the timer's records
    // come on top of --count: the end is not known, the window lets
    // the last records out.
    if (o.merge && !o.nest && r.st.produced >= o.count &&
        r.delivered + r.rd.lost_seen() >= r.st.produced)
        m.finish(std::size_t(r.cpu));
    return exit_ok;
}

using deadline_point =
    std::chrono::time_point<std::chrono::steady_clock, std::chrono::duration<double>>;

// Passes over the rings until every record is accounted for or the
// deadline; @done says which. The tool's status.
int consume(const options& o, ring_list& rings, kring::merger& m, merge_check& mc,
            deadline_point deadline, bool& done) {
    while (!done && std::chrono::steady_clock::now() < deadline) {
        done = true;
        if (o.merge) {
            auto n = m.drain([&](std::size_t src, const kring::record& rec, std::uint64_t t) {
                mc.add(src, rec, t);
            });
            if (!n)
                return report(n.error());
        }
        for (auto& r : rings)
            if (int s = update_ring(o, *r, m, done); s != exit_ok)
                return s;
        if (!done && o.sleep_us)
            ::usleep(o.sleep_us);
    }
    return exit_ok;
}

// The per-CPU table and the summary; the tool's status.
int print_results(const options& o, const ring_list& rings, const kring::merger& m,
                  const merge_check& mc, double secs, bool done) {
    fmt::print("{:>4} {:>10} {:>10} {:>10} {:>6} {:>7} {:>7}\n", "cpu", "produced", "delivered",
               "lost", "LOST", "nested", "bad");
    std::uint64_t tp = 0, td = 0, tl = 0, tb = 0;
    bool exact = true;
    for (auto& r : rings) {
        fmt::print("{:>4} {:>10} {:>10} {:>10} {:>6} {:>7} {:>7}\n", r->cpu, r->st.produced,
                   r->delivered, r->rd.lost_seen(), r->rd.lost_records_seen(), r->st.nested,
                   r->bad + r->out_of_order);
        tp += r->st.produced;
        td += r->delivered;
        tl += r->rd.lost_seen();
        tb += r->bad + r->out_of_order;
        exact = exact && r->delivered + r->rd.lost_seen() == r->st.produced;
    }
    fmt::print("all  {:>10} {:>10} {:>10}   in {:.2f} s; produced {} delivered + lost\n", tp, td,
               tl, secs, exact ? "==" : "!=");
    if (o.merge)
        fmt::print(
            "merged {} records of {} CPUs in time order: {} out of order ({} by floor, "
            "{} by the {} ms window)\n",
            mc.merged, rings.size(), mc.backwards, m.floors_used(), m.windows_used(), o.window_ms);
    tb += mc.backwards;
    print_summary("synth", {{"cpus", rings.size()},
                            {"produced", tp},
                            {"delivered", td},
                            {"lost", tl},
                            {"bad", tb},
                            {"exact", exact},
                            {"done", done}});
    if (!done)
        return report(fmt::format("timed out after {:.0f} s before every record was accounted for",
                                  o.timeout_s));
    if (!exact || tb)
        return report(fmt::format("accounting mismatch or {} corrupt records", tb));
    return exit_ok;
}

int run(const context& ctx, const options& o) {
    ring_list rings;
    if (int s = open_rings(ctx, o, rings); s != exit_ok)
        return s;
    kring::merger m({.window_ns = o.window_ms * 1'000'000});
    merge_check mc{rings};
    for (auto& r : rings)
        m.add(r->rd, r->ch.sample_type());

    auto t0 = std::chrono::steady_clock::now();
    auto deadline = t0 + std::chrono::duration<double>(o.timeout_s);
    bool done = false;
    if (int s = consume(o, rings, m, mc, deadline, done); s != exit_ok)
        return s;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return print_results(o, rings, m, mc, secs, done);
}

}  // namespace

void add_synth(CLI::App* sub, context& ctx) {
    static options o;
    sub->add_option("-n,--count", o.count, "records per CPU")->capture_default_str();
    sub->add_option("--rate", o.rate, "records per second per CPU (0: flat out)")
        ->capture_default_str();
    sub->add_option("--payload", o.payload, "payload bytes per record")
        ->check(CLI::Range(24u, 8192u))
        ->capture_default_str();
    sub->add_option("--order", o.order, "data ring of 2^ORDER pages per CPU")
        ->check(CLI::Range(0u, 16u))
        ->capture_default_str();
    sub->add_option("--sleep-us", o.sleep_us, "consumer sleep between passes (microseconds)")
        ->capture_default_str();
    sub->add_option("--timeout", o.timeout_s, "give up after this many seconds")
        ->capture_default_str();
    sub->add_flag("--nest", o.nest, "an hrtimer writer interrupts the task-context writer");
    sub->add_flag("--mirror", o.mirror, "map the data pages twice (wrapped records contiguous)");
    sub->add_flag("--merge", o.merge, "merge the CPUs' records into one stream ordered by time");
    sub->add_option("--window-ms", o.window_ms,
                    "--merge: publication window assumed for rings without a timestamp floor")
        ->capture_default_str();
    sub->footer(
        "Exit status 1 when a record is corrupt or the accounting does not add up\n"
        "(produced = read + lost by cause).\n"
        "\n"
        "Examples:\n"
        "  sudo kring synth --count 100000 --order 2\n"
        "      small rings: some records lost, all accounted for"
        "\n"
        "  sudo kring synth --rate 50000 --merge\n"
        "      paced, merged across CPUs in time order"
        "\n"
        "  sudo kring synth --nest --mirror --sleep-us 0\n"
        "      nested writers, mirrored rings");
    sub->callback([&ctx] { ctx.exit_code = run(ctx, o); });
}

}  // namespace kring_tool
