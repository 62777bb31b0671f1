// Stress with exact accounting, in the guest: on every online CPU a
// synthetic generator writes flat out from task context with a softirq
// writer and an hrtimer writer nesting inside it (KRING_SYNTH_F_NEST |
// KRING_SYNTH_F_SOFTIRQ), a sched capture channel and a timer sampler
// record what the CPU does, and an emulated AUX tracer fills an AUX area;
// one consumer thread per CPU reads them all at a random pace (sometimes
// flat out, sometimes asleep long enough for the rings to overflow) for a
// fixed time.
//
// Every synthetic record carries its sequence number and a checksum of its
// payload. Pass when, per ring: every record is intact (checksum, length,
// CPU), no sequence number is delivered twice, record times never go
// backwards in ring order, no LOST record reports a sequence number that
// was delivered, and produced = delivered + lost exactly, where lost is the
// ring's loss counters (the LOST records report them, but the last ones
// may still be pending when the generator stops). AUX records lie within
// the area and are released in order. The console is checked for reports
// by the caller.
//
// Usage: kring_stress [--seconds S] [--seed N] [--verbose]
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_set>
#include <vector>

#include <linux/kring_test.h>

#include "kring/aux.hpp"
#include "kring/channel.hpp"
#include "kring/reader.hpp"

namespace {

struct ring_check {
    const char* what = "";
    int cpu = 0;
    kring::channel ch;
    kring::reader rd;
    std::unique_ptr<kring::aux_reader> ax;
    // What the consumer saw.
    std::uint64_t records = 0;  // every record but LOST (PADs are skipped)
    std::uint64_t delivered = 0, torn = 0, backwards = 0, dup = 0, lost_overlap = 0;
    std::uint64_t lost_records = 0, last_time = 0, aux_records = 0, aux_bytes = 0, aux_bad = 0;
    std::unordered_set<std::uint64_t> seqs;
    std::vector<std::tuple<std::uint64_t, std::uint64_t, std::uint64_t>> lost_ranges;
    bool synth = false;

    ring_check(const char* w, int c, kring::channel chan)
        : what(w), cpu(c), ch(std::move(chan)), rd(ch.ring()) {
        if (ch.aux().valid())
            ax = std::make_unique<kring::aux_reader>(ch.aux());
    }
};

void check_record(ring_check& r, const kring::record& rec) {
    const std::uint64_t st = r.ch.sample_type();
    if (auto t = kring::record_time(rec, st)) {
        r.backwards += *t < r.last_time;
        r.last_time = *t;
    }
    r.records += rec.type() != KRING_RECORD_LOST;
    switch (rec.type()) {
        case KRING_RECORD_LOST: {
            auto l = kring::parse_lost(rec);
            if (!l || !l->has_range) {
                r.torn++;
                return;
            }
            r.lost_records++;
            r.lost_ranges.emplace_back(l->first_seq, l->last_seq, l->lost);
            return;
        }
        case KRING_RECORD_AUX: {
            auto a = kring::parse_aux(rec);
            if (!a || !r.ax) {
                r.aux_bad++;
                return;
            }
            r.aux_records++;
            auto e = r.ax->extent(*a);
            if (r.ax->corrupted()) {
                r.aux_bad++;
                return;
            }
            r.aux_bytes += e.size();
            r.ax->release(a->aux_offset + a->aux_size);
            return;
        }
        case KRING_RECORD_SAMPLE:
            break;
        default:
            return;  // ITRACE_START and the like
    }
    auto s = kring::parse_sample(rec, st);
    if (!s) {
        r.torn++;
        return;
    }
    r.delivered++;
    if (!r.seqs.insert(s->seq).second)
        r.dup++;
    if (!r.synth)
        return;
    kring_synth_payload p;
    if (s->raw.size() < sizeof(p)) {
        r.torn++;
        return;
    }
    std::memcpy(&p, s->raw.data(), sizeof(p));
    const auto* body = reinterpret_cast<const std::uint8_t*>(s->raw.data()) + sizeof(p);
    if (p.len < sizeof(p) || p.len > s->raw.size() || p.seq != s->seq ||
        p.cpu != std::uint32_t(r.cpu) || s->cpu != std::uint32_t(r.cpu) ||
        kring_synth_checksum(s->seq, body, p.len - sizeof(p)) != p.checksum)
        r.torn++;
}

bool drain(ring_check& r) {
    auto n = r.rd.drain([&](const kring::record& rec) { check_record(r, rec); });
    if (!n) {
        std::fprintf(stderr, "kring_stress: cpu %d %s: %s\n", r.cpu, r.what,
                     n.error().message().c_str());
        return false;
    }
    return true;
}

void pin(int cpu) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    ::pthread_setaffinity_np(::pthread_self(), sizeof(set), &set);
}

}  // namespace

int main(int argc, char** argv) {
    double seconds = 20;
    std::uint64_t seed = std::random_device{}();
    bool verbose = false;
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        if (a == "--seconds" && i + 1 < argc) {
            seconds = std::atof(argv[++i]);
        } else if (a == "--seed" && i + 1 < argc) {
            seed = std::strtoull(argv[++i], nullptr, 0);
        } else if (a == "--verbose") {
            verbose = true;
        } else {
            std::fprintf(stderr, "usage: kring_stress [--seconds S] [--seed N] [--verbose]\n");
            return 2;
        }
    }
    std::printf("kring_stress: seed=%" PRIu64 " seconds=%.0f\n", seed, seconds);
    std::mt19937_64 rng(seed);
    const int ncpu = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    std::vector<std::vector<std::unique_ptr<ring_check>>> per_cpu(ncpu);
    auto open = [&](const char* what, int cpu, kring::channel_options o) -> bool {
        o.cpu = cpu;
        auto ch = kring::channel::open(o);
        if (!ch) {
            std::fprintf(stderr, "kring_stress: cpu %d %s: %s\n", cpu, what,
                         ch.error().message().c_str());
            return false;
        }
        per_cpu[cpu].push_back(std::make_unique<ring_check>(what, cpu, std::move(*ch)));
        return true;
    };
    for (int cpu = 0; cpu < ncpu; cpu++) {
        kring::channel_options s;
        s.source = KRING_SOURCE_SYNTHETIC;
        s.sample_type = KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
        s.data_pages_order = rng() % 4;
        s.mirror = rng() % 2;
        s.config[1] = 24 + 8 * (rng() % 64);
        s.config[2] = KRING_SYNTH_F_NEST | KRING_SYNTH_F_SOFTIRQ;
        if (!open("synthetic", cpu, s))
            return 1;
        per_cpu[cpu].back()->synth = true;

        kring::channel_options c;
        c.source = KRING_SOURCE_SCHED;
        c.sample_type = KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
        c.data_pages_order = 1 + rng() % 3;
        if (!open("sched", cpu, c))
            return 1;
        c.source = KRING_SOURCE_TIMER;
        c.sample_type = KRING_SAMPLE_IP | KRING_SAMPLE_TID | KRING_SAMPLE_TIME;
        c.config[0] = 1000;
        if (!open("timer", cpu, c))
            return 1;

        kring::channel_options x;
        x.source = KRING_SOURCE_AUX_TRACER;
        x.data_pages_order = 1;
        x.aux_pages_order = 2 + rng() % 3;
        x.config[0] = 50;
        if (!open("aux", cpu, x))
            return 1;
    }
    for (auto& v : per_cpu)
        for (auto& r : v)
            if (auto e = r->ch.enable(); !e) {
                std::fprintf(stderr, "kring_stress: enable: %s\n", e.error().message().c_str());
                return 1;
            }

    // One consumer per CPU, pinned to the other CPU (the producers' CPU
    // stays theirs), at a random pace.
    std::atomic<bool> stop{false}, failed{false};
    std::vector<std::thread> consumers;
    for (int cpu = 0; cpu < ncpu; cpu++) {
        consumers.emplace_back([&, cpu, s = rng()] {
            std::mt19937_64 r(s);
            pin((cpu + 1) % ncpu);
            while (!stop.load()) {
                for (auto& rc : per_cpu[cpu])
                    if (!drain(*rc))
                        failed = true;
                switch (r() % 8) {
                    case 0:
                        ::usleep(20000 + r() % 30000);
                        break;  // long enough to overflow
                    case 1:
                    case 2:
                        ::usleep(r() % 5000);
                        break;
                    default:
                        ::usleep(r() % 500);
                        break;
                }
            }
        });
    }
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    stop = true;
    for (auto& t : consumers)
        t.join();
    for (auto& v : per_cpu)
        for (auto& r : v)
            if (auto e = r->ch.disable(); !e)
                failed = true;

    // Everything written is in the rings now: read it all.
    std::printf("%4s %-9s %10s %10s %10s %6s %9s %5s %5s %5s %6s %5s %5s\n", "cpu", "ring",
                "produced", "delivered", "lost", "LOST", "nested", "torn", "dup", "back", "aux",
                "!aux", "!LOST");
    std::uint64_t all_produced = 0, all_delivered = 0, all_lost = 0, problems = 0;
    for (auto& v : per_cpu) {
        for (auto& r : v) {
            if (!drain(*r))
                failed = true;
            auto st = r->ch.stats();
            if (!st) {
                failed = true;
                continue;
            }
            const std::uint64_t lost = st->lost_no_space + st->lost_too_big + st->lost_paused;
            // A LOST record's range bounds its losses (records that
            // interrupted or were interrupted by the lost ones may lie
            // inside it): at least its count of the range's numbers must
            // be missing from what was delivered.
            for (auto [a, b, n] : r->lost_ranges) {
                std::uint64_t missing = 0;
                for (std::uint64_t q = a; q <= b && q - a < 10000000; q++)
                    missing += !r->seqs.count(q);
                r->lost_overlap += missing < n;
            }
            // Exact: every sequence number given out is a record read, a
            // cancelled reservation or counted lost, and the LOST records
            // never report more than the counters.
            const std::uint64_t discarded =
                __atomic_load_n(&r->ch.ctl()->records_discarded, __ATOMIC_RELAXED);
            const bool exact = st->produced == r->records + discarded + lost &&
                               st->written == r->records && r->rd.lost_seen() <= lost;
            std::uint64_t bad =
                r->torn + r->dup + r->backwards + r->lost_overlap + r->aux_bad + (exact ? 0 : 1);
            problems += bad;
            all_produced += st->produced;
            all_delivered += r->records;
            all_lost += lost;
            if (verbose || bad)
                std::printf("%4d %-9s %10" PRIu64 " %10" PRIu64 " %10" PRIu64 " %6" PRIu64
                            " %9" PRIu64 " %5" PRIu64 " %5" PRIu64 " %5" PRIu64 " %6" PRIu64
                            " %5" PRIu64 " %5" PRIu64 "%s\n",
                            r->cpu, r->what, std::uint64_t(st->produced), r->records, lost,
                            r->lost_records, std::uint64_t(st->nested), r->torn, r->dup,
                            r->backwards, r->aux_records, r->aux_bad, r->lost_overlap,
                            exact ? "" : "  <- produced != delivered + discarded + lost");
        }
    }
    std::printf("kring_stress: %d CPUs, %zu rings, %.0f s: produced %" PRIu64
                " = delivered %" PRIu64 " + lost %" PRIu64 "%s\n",
                ncpu, per_cpu.size() * 4, seconds, all_produced, all_delivered, all_lost,
                problems ? "" : ", exact");
    if (failed || problems) {
        std::printf("kring_stress: FAILED (%" PRIu64 " problems; replay: --seed %" PRIu64 ")\n",
                    problems, seed);
        return 1;
    }
    std::printf("kring_stress: passed\n");
    return 0;
}
