// kring record's end (record_session.hpp): the file's features and
// header, and the summary.
#include "record_session.hpp"

#include <sys/wait.h>
#include <time.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <fmt/core.h>

#include "errors.hpp"

namespace kring_tool::record {
namespace {

std::string signal_name(int sig) {
    const char* s = ::sigabbrev_np(sig);
    return s ? fmt::format("SIG{}", s) : fmt::format("signal {}", sig);
}

// kring's section of the file: the clock and every ring's counters; the
// loss by cause is also summed into s.lost_by. A failure is reported if
// it is the first (@rc).
pd::kring_section kring_section(session& s, int& rc) {
    pd::kring_section ks;
    ks.clockid = s.clock;
    for (auto& r : s.rec->rings) {
        pd::kring_ring_info ri;
        ri.cpu = r->cpu;
        ri.pid = r->pid;
        ri.source = r->source;
        ri.id = r->id;
        if (auto st = r->ch.stats()) {
            ri.produced = st->produced;
            ri.written = st->written;
            ri.lost_no_space = st->lost_no_space;
            ri.lost_too_big = st->lost_too_big;
            ri.lost_paused = st->lost_paused;
            ri.lost_overwritten = st->lost_overwritten;
            ri.throttled = st->throttled;
            ri.wakeups = st->wakeups;
            ri.nested = st->nested;
            ri.aux_bytes = st->aux_bytes;
            ri.aux_records = st->aux_records;
            ri.aux_truncated = st->aux_truncated;
        } else if (rc == exit_ok) {
            rc = report(st.error());
        }
        ri.aux_snapshots = r->snapshots;
        ri.lost_ranges = r->lost_ranges;
        s.lost_by[0] += ri.lost_no_space;
        s.lost_by[1] += ri.lost_too_big;
        s.lost_by[2] += ri.lost_paused;
        s.lost_by[3] += ri.lost_overwritten;
        ks.rings.push_back(std::move(ri));
    }
    return ks;
}

}  // namespace

// The file's features (perf's header sections and kring's) and its
// header: the file is complete.
int finish_file(session& s, const std::vector<std::string>& argv_all, int rc) {
    pd::kring_section ks = kring_section(s, rc);
    std::vector<const char*> cargv;
    for (const auto& a : argv_all)
        cargv.push_back(a.c_str());
    auto f = pd::features::from_system(int(cargv.size()), cargv.data());
    // HEADER_CLOCKID: the record clock's resolution in ns (what perf keeps
    // there); the clock itself is in the kring section.
    if (auto pc = posix_clock(s.clock)) {
        timespec res{};
        if (::clock_getres(*pc, &res) == 0)
            f.clockid = std::uint64_t(res.tv_sec) * 1000000000ull + std::uint64_t(res.tv_nsec);
    }
    if (s.rec->first_time)
        f.sample_time = std::make_pair(s.rec->first_time, s.rec->last_time);
    f.kring = ks;
    // The tracepoints' formats, the producer's as they came: the file's
    // tracing data is given again, with all of them.
    if (!s.rec->producer_events.empty())
        if (auto r = s.rec->w->write_tracing_data(s.rec->tracing_data()); !r && rc == exit_ok)
            rc = report(r.error());
    if (auto r = s.rec->w->finish(f); !r && rc == exit_ok)
        rc = report(r.error());
    return rc;
}

// On a terminal, a last human line under the status line; everywhere the
// summary. Then the malformed records, if any, are the failure.
int print_end(const session& s, int rc) {
    const recorder& rec = *s.rec;
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.t0).count();
    std::uint64_t snaps = 0, aux_rings = 0;
    for (auto& r : rec.rings) {
        snaps += r->snapshots;
        aux_rings += r->k == kind::aux;
    }
    const int cs = s.child_status;
    if (s.tty)
        fmt::print("kring record: {} records from {} rings in {:.2f} s into {} ({} bytes){}\n",
                   rec.records, rec.rings.size(), secs, s.o.output, rec.w->data_size(),
                   cs >= 0 ? (WIFEXITED(cs) ? fmt::format(", command exited {}", WEXITSTATUS(cs))
                                            : fmt::format(", command killed by {}",
                                                          signal_name(WTERMSIG(cs))))
                           : std::string());
    std::vector<std::pair<std::string, std::uint64_t>> sum = {
        {"rings", rec.rings.size()},
        {"records", rec.records},
        {"written", rec.written_records},
        {"switches", rec.switches},
        {"samples", rec.samples},
        {"forks", rec.forks},
        {"exits", rec.exits},
        {"wakeups", rec.wakeups},
        {"aux_records", rec.aux_records},
        {"aux_republished", rec.dup_aux},
        {"aux_bytes", rec.auxtrace_bytes},
        {"snapshots", aux_rings ? snaps / aux_rings : 0},
        {"lost", rec.lost},
        {"lost_no_space", s.lost_by[0]},
        {"lost_too_big", s.lost_by[1]},
        {"lost_paused", s.lost_by[2]},
        {"lost_overwritten", s.lost_by[3]},
        {"bad", rec.bad},
        {"tracepoints", rec.tp_samples},
        {"runtimes", rec.runtimes},
        {"producer_records", rec.producer_records},
        {"producer_formats", rec.producer_events.size()},
        {"producer_undescribed", rec.producer_undescribed_total},
        {"producer_short", rec.producer_short},
        {"event_samples", rec.event_samples},
        {"stopped_by_signal", s.stop_signal ? 1u : 0u},
    };
    if (cs >= 0) {
        sum.push_back({"command_exited", WIFEXITED(cs) ? 1u : 0u});
        sum.push_back({"command_status", WIFEXITED(cs) ? WEXITSTATUS(cs) : 128 + WTERMSIG(cs)});
    }
    // A producer's records that are not in the file, and why.
    if (rec.producer_undescribed_total) {
        std::string types;
        std::uint64_t listed = 0;
        for (const auto& [t, n] : rec.producer_undescribed) {
            types += fmt::format("{}type {:#x}: {}", types.empty() ? "" : ", ", t, n);
            listed += n;
        }
        if (listed < rec.producer_undescribed_total)
            types += fmt::format(", other types: {}", rec.producer_undescribed_total - listed);
        fmt::print(stderr,
                   "kring: note: {} producer records of types without a format were not "
                   "written ({})\n",
                   rec.producer_undescribed_total, types);
    }
    if (rec.producer_short)
        fmt::print(stderr,
                   "kring: note: {} producer records shorter than their format were not "
                   "written\n",
                   rec.producer_short);
    if (!rec.producer_format_error.empty())
        fmt::print(stderr, "kring: note: the producer's formats: {}\n", rec.producer_format_error);
    print_summary("record", sum);
    if (rc == exit_ok && rec.bad)
        rc = report(fmt::format("{} malformed records", rec.bad));
    return rc;
}

}  // namespace kring_tool::record
