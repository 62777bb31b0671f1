// kring record: capture with kring's sources into a perf.data file that
// perf's own tools read (docs/TOOL.md, "The file"). Per-CPU (-a, -C),
// per-thread (-p, -t) or a command followed with inherit (-- cmd args);
// events sched (context switches, fork, exit, optionally wakeups), timer
// (cpu-clock samples) and aux (the emulated tracer, normal or snapshot
// mode). Records of every ring are merged in time order (kring::merger) and
// converted to perf records; FINISHED_ROUND follows each flush.
#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <dirent.h>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/aux.hpp"
#include "kring/channel.hpp"
#include "kring/cpus.hpp"
#include "kring/merger.hpp"
#include "kring/perf_data.hpp"
#include "kring/reader.hpp"
#include "kring/record.hpp"
#include "record_convert.hpp"
#include "record_session.hpp"
#include "record_synth.hpp"
#include "tracefs.hpp"
#include "triggers.hpp"

namespace kring_tool {
namespace {

using namespace record;

std::optional<std::uint32_t> parse_clock(const std::string& c) {
    if (c == "monotonic" || c == "default")
        return KRING_CLOCK_MONOTONIC;
    if (c == "monotonic_raw")
        return KRING_CLOCK_MONOTONIC_RAW;
    if (c == "boottime")
        return KRING_CLOCK_BOOTTIME;
    if (c == "local")
        return KRING_CLOCK_LOCAL;
    return std::nullopt;
}

std::uint64_t clock_now(clockid_t c) {
    timespec ts;
    ::clock_gettime(c, &ts);
    return std::uint64_t(ts.tv_sec) * 1000000000ull + std::uint64_t(ts.tv_nsec);
}

unsigned log2_exact(std::uint64_t v) {
    unsigned o = 0;
    while ((1ull << o) < v)
        o++;
    return o;
}

// The hint for the errors opening a channel commonly meets.
std::string hint(const kring::error& e, bool followed, kind k) {
    if (auto h = device_hint(e); !h.empty())
        return h;
    switch (e.code()) {
        case EACCES:
        case EPERM:
            if (k == kind::producer || k == kind::event)
                return {};
            if (followed)
                return "following another user's task needs ptrace read access to it "
                       "(CAP_SYS_PTRACE)";
            if (k == kind::aux)
                return "the emulated tracer needs CAP_PERFMON or CAP_SYS_ADMIN "
                       "(or kring.test_sources=1)";
            return "recording every task of a CPU needs CAP_PERFMON or CAP_SYS_ADMIN, or "
                   "kring.paranoid <= 0 (/sys/module/kring/parameters/paranoid)";
        case EOPNOTSUPP:
            return "this module lacks that source or mode: see `kring info`";
        case ESRCH:
            return "no such task";
        case EINVAL:
            return "a CPU that is not online, or a mode the source refuses (docs/CAPTURE.md)";
        default:
            return {};
    }
}

// @stdout_is_data (-o -): the command's standard output goes to standard
// error, as perf's workload's does in pipe mode, so that it cannot mix
// into the stream.
kring::result<child_proc> fork_command(const std::vector<std::string>& argv, bool stdout_is_data) {
    int go[2], ready[2];
    if (::pipe2(go, O_CLOEXEC) < 0 || ::pipe2(ready, O_CLOEXEC) < 0)
        return kring::error::from_errno(errno, "pipe");
    pid_t p = ::fork();
    if (p < 0)
        return kring::error::from_errno(errno, "fork");
    if (p == 0) {
        ::close(go[1]);
        ::close(ready[0]);
        triggers::unblock_in_child();
        if (stdout_is_data && ::dup2(STDERR_FILENO, STDOUT_FILENO) < 0)
            ::_exit(127);
        ::signal(SIGPIPE, SIG_DFL);
        char c;
        if (::read(go[0], &c, 1) != 1)
            ::_exit(127);  // the recorder gave up
        std::vector<char*> args;
        for (const auto& a : argv)
            args.push_back(const_cast<char*>(a.c_str()));
        args.push_back(nullptr);
        ::execvp(args[0], args.data());
        int e = errno;
        (void)!::write(ready[1], &e, sizeof(e));
        ::_exit(127);
    }
    ::close(go[0]);
    ::close(ready[1]);
    return child_proc{p, go[1], ready[0]};
}

std::string human_bytes(double b) {
    if (b >= 1e6)
        return fmt::format("{:.1f} MB", b / 1e6);
    if (b >= 1e3)
        return fmt::format("{:.1f} kB", b / 1e3);
    return fmt::format("{:.0f} B", b);
}

// ---- run()'s steps, as perf's __cmd_record has them: check the options,
// fork the command, open the channels, create the file and synthesize what
// was there before, start, loop, drain, write the file's end.

// The usage error of a bad option: one line, exit_usage.
template <class... Args>
int usage(fmt::format_string<Args...> f, Args&&... args) {
    fmt::print(stderr, "kring: {} (see --help)\n", fmt::format(f, std::forward<Args>(args)...));
    return exit_usage;
}

// -m, --aux-pages and --snapshot=SIZE (which sets the AUX pages).
int check_sizes(options& o) {
    if (o.pages == 0 || (o.pages & (o.pages - 1)))
        return usage("-m {}: the data pages must be a power of 2", o.pages);
    if (o.aux_pages == 0 || (o.aux_pages & (o.aux_pages - 1)))
        return usage("--aux-pages {}: must be a power of 2", o.aux_pages);
    if (!o.snapshot_size.empty()) {
        char* end = nullptr;
        unsigned long long sz = std::strtoull(o.snapshot_size.c_str(), &end, 0);
        long page = ::sysconf(_SC_PAGESIZE);
        if (*end || sz == 0)
            return usage("--snapshot={}: a size in bytes", o.snapshot_size);
        std::uint64_t pages = (sz + std::uint64_t(page) - 1) / std::uint64_t(page);
        o.aux_pages = 1u << log2_exact(pages);
    }
    return exit_ok;
}

// -e, -c, -F and --filter: what to record. An event that is not one is a
// usage error; tracefs that cannot be read a runtime one.
int check_events(session& s) {
    const options& o = s.o;
    if (!o.filter.empty())
        return usage(
            "--filter {}: the event source has no tracepoint filters yet (perf applies "
            "them with PERF_EVENT_IOC_SET_FILTER; kring's module does not): record "
            "without it and filter the file",
            o.filter.front());
    if (o.count && o.freq)
        return usage("-c {} and -F {}: give a period or a frequency, not both", o.count, o.freq);
    events::sampling smp;
    if (o.count)
        smp.period = o.count;
    if (o.freq) {
        auto max = read_small("/proc/sys/kernel/perf_event_max_sample_rate");
        if (!max.empty() && o.freq > std::strtoull(max.c_str(), nullptr, 10))
            return usage("-F {}: above kernel.perf_event_max_sample_rate ({})", o.freq, max);
        smp.freq = o.freq;
    }
    auto ev = events::parse(o.events, smp, [] { return tracefs::root(true); });
    if (!ev) {
        if (ev.error().code() == EINVAL)
            return usage("{}", ev.error().message());
        return report(ev.error());
    }
    s.ev = std::move(*ev);
    for (const auto& n : s.ev.notes)
        fmt::print(stderr, "kring: note: {}\n", n);
    return exit_ok;
}

// Every option, before anything is opened: exit_ok, or exit_usage after
// one line on stderr.
int check_options(session& s) {
    options& o = s.o;
    if (int rc = check_events(s); rc != exit_ok)
        return rc;
    auto clock = parse_clock(o.clock);
    if (!clock) {
        fmt::print(stderr,
                   "kring: unknown clock '{}' (monotonic, monotonic_raw, boottime, local; see "
                   "--help)\n",
                   o.clock);
        return exit_usage;
    }
    s.clock = *clock;
    int modes = int(o.all_cpus) + int(!o.cpu_list.empty()) + int(o.pid.has_value()) +
                int(o.tid.has_value());
    s.command = !o.command.empty();
    // -a or -C with a command: those CPUs while the command runs (perf's).
    if ((modes > 1 && !(o.all_cpus && !o.cpu_list.empty())) || (s.command && (o.pid || o.tid)))
        return usage("choose one of -a, -C, -p, -t or a command (-a and -C take one)");
    if (!modes && !s.command)
        return usage("nothing to record: give -a, -C, -p, -t or -- COMMAND");
    if (int rc = check_sizes(o); rc != exit_ok)
        return rc;
    if (o.snapshot && !s.ev.aux)
        return usage("--snapshot needs -e aux");
    if (o.call_graph && !s.ev.timer && s.ev.events.empty())
        return usage(
            "-g: call chains come with the timer's samples and perf's events: add -e "
            "timer or an event");
    // A producer's events are declared as its formats come (writer::
    // add_attr()), which a stream, whose attrs go first, cannot take.
    if (s.ev.producer && o.output == "-")
        return usage("-e producer writes a file, not a stream: give -o FILE, not -o -");
    if (!o.cpu_list.empty()) {
        auto l = kring::parse_cpu_list(o.cpu_list);
        if (!l)
            return usage("-C {}: not a CPU list such as 0,2-3", o.cpu_list);
        s.cpus.assign(l->begin(), l->end());
    }
    return exit_ok;
}

// What the channels follow: every CPU asked for (all online ones for -a or
// a command; the command's tasks on each), or the threads of -p, or -t.
kring::result<std::vector<target>> find_targets(session& s) {
    const options& o = s.o;
    std::vector<target> targets;
    if (o.all_cpus || !s.cpus.empty() || s.command) {
        if (s.cpus.empty())
            for (int c = 0; c < int(::sysconf(_SC_NPROCESSORS_CONF)); c++)
                if (read_small(fmt::format("/sys/devices/system/cpu/cpu{}/online", c)) != "0")
                    s.cpus.push_back(c);
        for (int c : s.cpus) {
            target t;
            t.cpu = c;
            if (s.command && !o.all_cpus && o.cpu_list.empty()) {
                t.pid = s.child->pid;
                t.inherit = true;
                s.followed = true;
            }
            targets.push_back(t);
        }
    } else if (o.pid) {
        auto tids = list_numeric(fmt::format("/proc/{}/task", *o.pid));
        if (tids.empty())
            return kring::error(ESRCH, fmt::format("no process {}", *o.pid));
        for (int tid : tids)
            targets.push_back(target{std::nullopt, tid, false});
        s.followed = true;
    } else if (o.tid) {
        targets.push_back(target{std::nullopt, *o.tid, false});
        s.followed = true;
    }
    return targets;
}

// The channel options of one ring of kind @k on @t.
kring::channel_options channel_options_for(const session& s, kind k, const target& t,
                                           std::size_t ev) {
    const options& o = s.o;
    kring::channel_options co;
    co.device = s.ctx.device;
    co.cpu = t.cpu;
    co.pid = t.pid;
    co.clockid = s.clock;
    co.data_pages_order = log2_exact(o.pages);
    co.mirror = o.mirror;
    co.overwrite = o.overwrite;
    co.extra_attr_flags = t.inherit ? KRING_ATTR_F_INHERIT : 0;
    switch (k) {
        case kind::sched:
            co.source = KRING_SOURCE_SCHED;
            co.sample_type = KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
                             KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
            co.config[0] = s.ev.wakeups ? KRING_SCHED_CFG_WAKEUPS : 0;
            break;
        case kind::timer:
            co.source = KRING_SOURCE_TIMER;
            co.sample_type = KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_IP | KRING_SAMPLE_TID |
                             KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD |
                             KRING_SAMPLE_RAW;
            co.config[0] = s.ev.timer_hz;
            if (s.o.call_graph)
                co.sample_type |= KRING_SAMPLE_CALLCHAIN;
            break;
        case kind::aux:
            co.source = KRING_SOURCE_AUX_TRACER;
            co.aux_pages_order = log2_exact(s.o.aux_pages);
            co.aux_snapshot = s.o.snapshot;
            break;
        case kind::producer:
            // Written only by producer modules, from any task and CPU.
            co.source = KRING_SOURCE_NONE;
            co.sample_type = KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
                             KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
            co.extra_attr_flags = 0;
            break;
        case kind::event:
            events::configure(s.ev.events.at(ev), s.o.call_graph, co);
            break;
    }
    return co;
}

// Opens and maps one ring of kind @k on @t (of event @ev: kind::event),
// the recorder's next.
kring::result<void> open_ring(session& s, kind k, const target& t, std::size_t ev = 0) {
    const kring::channel_options co = channel_options_for(s, k, t, ev);
    auto ch = kring::channel::open(co);
    if (!ch) {
        std::string who = t.cpu && t.pid ? fmt::format("task {} on cpu {}", *t.pid, *t.cpu)
                          : t.cpu        ? fmt::format("cpu {}", *t.cpu)
                          : t.pid        ? fmt::format("task {}", *t.pid)
                                         : std::string("producers");
        const std::string what =
            k == kind::event ? "event " + s.ev.events.at(ev).name : kind_name(k);
        return ch.error().with_context(fmt::format("{} channel for {}", what, who));
    }
    auto r = std::make_unique<ring>(k, std::move(*ch));
    auto id = r->ch.id();
    if (!id)
        return id.error();
    r->id = *id;
    r->sample_type = r->ch.sample_type();
    r->cpu = t.cpu.value_or(-1);
    r->pid = t.pid.value_or(-1);
    r->source = co.source;
    r->index = s.rec->rings.size();
    r->ev = ev;
    // The file's sample_type: the channel's perf-defined fields.
    r->out_st = r->sample_type & ~KRING_SAMPLE_SEQ;
    s.rec->rings.push_back(std::move(r));
    return {};
}

// The channel producer modules write into (-e producer), one, bound to no
// CPU or task; its id in KRING_CHANNEL_ID for the command, or on stderr.
int open_producer(session& s) {
    if (auto r = open_ring(s, kind::producer, target{}); !r)
        return report(r.error(), hint(r.error(), false, kind::producer));
    const std::string id = std::to_string(s.rec->rings.back()->id);
    if (::setenv("KRING_CHANNEL_ID", id.c_str(), 1) < 0)
        return report(kring::error::from_errno(errno, "setenv KRING_CHANNEL_ID"));
    if (!s.command)
        fmt::print(stderr, "kring: producer channel {} (KRING_CHANNEL_ID={})\n", id, id);
    return exit_ok;
}

// The hint for an event's channel the module refused.
std::string event_hint(const session& s, const kring::error& e, const events::event& ev,
                       const target& t) {
    if (e.code() == EACCES || e.code() == EPERM) {
        int paranoid = 2;
        if (auto p = read_small("/proc/sys/kernel/perf_event_paranoid"); !p.empty())
            paranoid = std::atoi(p.c_str());
        return events::permission_hint(ev, t.cpu && !t.pid, s.followed, paranoid);
    }
    if (ev.type == PERF_TYPE_HARDWARE &&
        (e.code() == ENOENT || e.code() == ENODEV || e.code() == EOPNOTSUPP) &&
        ::access("/sys/bus/event_source/devices/cpu", F_OK) != 0)
        return "no PMU for hardware events on this machine (no "
               "/sys/bus/event_source/devices/cpu)";
    if (e.code() == ENOENT || e.code() == EINVAL)
        return "the kernel refuses this event as perf_event_open() would (see kring list)";
    return hint(e, s.followed, kind::event);
}

// One ring per target and event kind.
int open_rings(session& s) {
    auto targets = find_targets(s);
    if (!targets)
        return s.abandon(targets.error());
    for (const auto& t : *targets) {
        for (kind k : {kind::sched, kind::timer, kind::aux}) {
            if ((k == kind::sched && !s.ev.sched) || (k == kind::timer && !s.ev.timer) ||
                (k == kind::aux && !s.ev.aux))
                continue;
            if (auto r = open_ring(s, k, t); !r)
                return s.abandon(r.error(), hint(r.error(), s.followed, k));
        }
        for (std::size_t i = 0; i < s.ev.events.size(); i++)
            if (auto r = open_ring(s, kind::event, t, i); !r)
                return s.abandon(r.error(), event_hint(s, r.error(), s.ev.events[i], t));
    }
    return exit_ok;
}

// The file's events, each with the ids of its rings.
std::vector<pd::event_attr> file_attrs(const session& s) {
    std::vector<pd::event_attr> attrs;
    auto add_attr = [&](kind k, const char* name, std::uint64_t st, std::uint64_t id_bits) {
        pd::event_attr a = pd::sample_event(name, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_DUMMY, st);
        for (auto& r : s.rec->rings)
            if (r->k == k)
                a.ids.push_back(r->id | id_bits);
        attrs.push_back(std::move(a));
        return &attrs.back();
    };
    if (s.ev.timer) {
        auto* a = add_attr(kind::timer, "cpu-clock", s.rec->timer_st, 0);
        a->attr.config = PERF_COUNT_SW_CPU_CLOCK;
        a->attr.sample_period = 1000000000ull / s.ev.timer_hz;
    }
    if (s.ev.sched) {
        auto* a = add_attr(kind::sched, "kring:sched", st_sched, 0);
        a->attr.context_switch = 1;
        a->attr.task = 1;
        a->attr.comm = 1;
        a->attr.mmap = 1;
        a->attr.mmap2 = 1;
    }
    if (s.ev.wakeups)
        add_attr(kind::sched, "kring:sched_wakeup", st_wakeup, wakeup_id_bit);
    // The kernel's own sched tracepoints, when tracefs gave their formats.
    auto add_tracepoint = [&](const char* name, const pd::tp_format& f, std::uint64_t id_bit) {
        auto* a = add_attr(kind::sched, name, st_tracepoint, id_bit);
        *a = tracepoint_attr(name, f.id, std::move(a->ids));
    };
    if (s.ev.sched && s.rec->tp) {
        add_tracepoint("sched:sched_switch", s.rec->tp->sched_switch, tp_switch_id_bit);
        if (s.ev.wakeups)
            add_tracepoint("sched:sched_wakeup", s.rec->tp->sched_wakeup, tp_wakeup_id_bit);
        if (s.rec->tp->sched_stat_runtime)
            add_tracepoint("sched:sched_stat_runtime", *s.rec->tp->sched_stat_runtime,
                           tp_runtime_id_bit);
    }
    if (s.ev.aux)
        add_attr(kind::aux, "kring:aux", st_aux, 0);
    // The producer channel's LOST records; its records are samples of the
    // tracepoints its formats become, declared as they come.
    if (s.ev.producer)
        add_attr(kind::producer, "kring:producer", st_sched, 0);
    // perf's events, each with the rings of its channels.
    for (std::size_t i = 0; i < s.ev.events.size(); i++) {
        std::vector<std::uint64_t> ids;
        std::uint64_t st = 0;
        for (auto& r : s.rec->rings)
            if (r->k == kind::event && r->ev == i) {
                ids.push_back(r->id);
                st = r->out_st;
            }
        attrs.push_back(events::attr_of(s.ev.events[i], st, std::move(ids)));
    }
    return attrs;
}

// The output file with @attrs; perf's habit: an existing one becomes
// <name>.old.
kring::result<void> create_file(session& s, const std::vector<pd::event_attr>& attrs) {
    const std::string& out = s.o.output;
    struct stat st;
    if (out != "-" && ::stat(out.c_str(), &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        std::string old = out + ".old";
        if (::rename(out.c_str(), old.c_str()) < 0)
            return kring::error::from_errno(errno, "rename " + out + " to " + old);
    }
    auto w = pd::writer::create(out, attrs);
    if (!w)
        return w.error();
    s.rec->w.emplace(std::move(*w));
    if (auto td = s.rec->tracing_data(); !td.empty())
        if (auto r = s.rec->w->write_tracing_data(td); !r)
            return r.error();
    return {};
}

// What was there before the recording: the kernel's mapping, then the
// processes of /proc that the recording covers (every one system-wide,
// the one of -p or -t). The command's own come once it has exec'd.
kring::result<void> synthesize(session& s, synth_out& so) {
    const options& o = s.o;
    if (auto r = synth_kernel(so); !r)
        return r;
    if (s.child) {
        // Until its exec the child is a copy of this process, named as
        // this one: no COMM of that name for it, or perf would keep it
        // past the exec (the sched source has no exec record; the exec's
        // COMM is synthesized after it).
        std::string self = read_small("/proc/self/comm");
        s.rec->comms_seen.insert({std::uint32_t(s.child->pid), std::uint32_t(s.child->pid), self});
    }
    if (o.all_cpus || !o.cpu_list.empty()) {
        for (int p : list_numeric("/proc"))
            if (auto r = synth_process(so, p, 0, false); !r)
                return r;
    } else if (o.pid || o.tid) {
        int p = o.pid ? *o.pid : *o.tid;
        if (o.tid) {
            // The thread's process.
            std::ifstream f(fmt::format("/proc/{}/status", *o.tid));
            std::string line;
            while (std::getline(f, line))
                if (line.rfind("Tgid:", 0) == 0)
                    p = std::atoi(line.c_str() + 5);
        }
        if (auto r = synth_process(so, p, 0, false); !r)
            return r;
    }
    return {};
}

// The file: created with the rings' events, then what synthesize() finds.
int open_file(session& s) {
    const auto attrs = file_attrs(s);
    const std::uint64_t first_id = attrs.front().ids.empty() ? 0 : attrs.front().ids.front();
    if (auto r = create_file(s, attrs); !r)
        return s.abandon(r.error());
    synth_out so{*s.rec->w, first_id};
    if (auto r = synthesize(s, so); !r)
        return s.abandon(r.error());
    s.first_id = first_id;
    return exit_ok;
}

// Releases the command once every channel is enabled and waits for its
// exec; then its COMM (exec) and MMAP2s.
int release_command(session& s) {
    // Its COMM and MMAP2s are read from /proc after the exec, so they
    // describe the new image; they carry the time read just before the
    // child was released (on the channels' clock). Every record of the new
    // image is later than that, so perf, which applies a mapping from its
    // time on, resolves all of the command's samples. The price: the few
    // samples between the release and the execve() (the child still in
    // kring's code) are looked up in the new image's maps and come out
    // unresolved. Read after the exec instead, the time would come after
    // the samples of the image's first instructions (ld.so), which would
    // then stay unresolved. KRING_CLOCK_LOCAL has no user-space reading:
    // time 0 (before everything) there.
    auto pc = posix_clock(s.clock);
    std::uint64_t t_go = pc ? clock_now(*pc) : 0;
    char c = 'g';
    if (::write(s.child->go_w, &c, 1) != 1)
        return s.abandon(kring::error::from_errno(errno, "release the command"));
    ::close(s.child->go_w);
    int err = 0;
    ssize_t n = ::read(s.child->ready_r, &err, sizeof(err));
    ::close(s.child->ready_r);
    if (n == sizeof(err)) {
        ::waitpid(s.child->pid, nullptr, 0);
        return report(kring::error(
            err, fmt::format("cannot run {}: {}", s.o.command[0], std::strerror(err))));
    }
    synth_out so{*s.rec->w, s.first_id};
    if (auto r = synth_process(so, s.child->pid, t_go, true); !r)
        return report(r.error());
    return exit_ok;
}

// Every ring into the merger, every channel enabled, then the command.
int start(session& s) {
    for (auto& r : s.rec->rings)
        s.rec->merger.add(r->rd, r->sample_type);
    s.t0 = std::chrono::steady_clock::now();
    for (auto& r : s.rec->rings)
        if (auto e = r->ch.enable(); !e)
            return s.abandon(e.error().with_context("enable " + recorder::ring_name(*r)));
    return s.child ? release_command(s) : exit_ok;
}

// The status line a terminal shows, once a second and at the end.
struct status_line {
    std::chrono::steady_clock::time_point t0, last;
    std::uint64_t last_bytes = 0, last_records = 0;

    explicit status_line(std::chrono::steady_clock::time_point start) : t0(start), last(start) {}

    void print(const recorder& rec, bool final_) {
        auto now = std::chrono::steady_clock::now();
        double dt = std::chrono::duration<double>(now - last).count();
        double el = std::chrono::duration<double>(now - t0).count();
        std::uint64_t bytes = rec.w->data_size();
        std::uint64_t nsp = 0, tb = 0, pa = 0, ow = 0;
        for (auto& r : rec.rings) {
            auto l = r->rd.losses();
            nsp += l.lost_no_space;
            tb += l.lost_too_big;
            pa += l.lost_paused;
            ow += l.lost_overwritten;
        }
        std::string line = fmt::format(
            "kring record: {:.1f} s  {:.0f} records/s  {:.2f} MB/s  lost {} (no_space {} "
            "too_big {} paused {} overwritten {})  AUX {}",
            el, dt > 0 ? double(rec.records - last_records) / dt : 0.0,
            dt > 0 ? double(bytes - last_bytes) / dt / 1e6 : 0.0, nsp + tb + pa + ow, nsp, tb, pa,
            ow, human_bytes(double(rec.auxtrace_bytes)));
        fmt::print("\r\033[K{}{}", line, final_ ? "\n" : "");
        std::fflush(stdout);
        last = now;
        last_bytes = bytes;
        last_records = rec.records;
    }
};

// Until a signal, 'stop', the duration or the command's end: snapshots as
// asked, the rings' records into the file (not for --overwrite, read at
// the end), the status line.
int record_loop(session& s, status_line& status) {
    const options& o = s.o;
    recorder& rec = *s.rec;
    const auto end = s.t0 + std::chrono::duration<double>(o.duration);
    unsigned requests = 0;
    for (;;) {
        if (s.trig.wait(o.overwrite ? 100 : 50, requests))
            s.stop_signal = true;
        if (o.snapshot)
            while (rec.snapshot_requests < requests) {
                rec.snapshot_requests++;
                if (auto r = rec.aux_snapshot(true); !r)
                    return report(r.error());
            }
        if (!o.overwrite)
            if (auto r = rec.flush(false); !r)
                return report(r.error());
        if (s.child) {
            int st;
            if (::waitpid(s.child->pid, &st, WNOHANG) == s.child->pid) {
                s.child_status = st;
                s.child.reset();
                break;
            }
        }
        if (s.stop_signal)
            break;
        if (o.duration > 0 && std::chrono::steady_clock::now() >= end)
            break;
        if (s.tty && std::chrono::steady_clock::now() - status.last >= std::chrono::seconds(1))
            status.print(rec, false);
    }
    return exit_ok;
}

// --overwrite: a backward ring is read once, at the end, newest first:
// every ring's records, written in time order; none after a failure (@rc
// not exit_ok).
int read_overwritten(session& s, int rc) {
    recorder& rec = *s.rec;
    struct held {
        std::uint64_t time;
        std::size_t ring;
        std::vector<std::byte> bytes;
    };
    std::vector<held> all;
    for (std::size_t i = 0; i < rec.rings.size() && rc == exit_ok; i++) {
        auto& r = *rec.rings[i];
        kring::overwrite_reader orr(r.ch.ring());
        auto n = orr.read([&](const kring::record& x) {
            all.push_back({kring::record_time(x, r.sample_type).value_or(0), i,
                           std::vector<std::byte>(x.bytes().begin(), x.bytes().end())});
        });
        if (!n)
            rc = report(n.error());
    }
    std::stable_sort(all.begin(), all.end(),
                     [](const held& a, const held& b) { return a.time < b.time; });
    for (auto& h : all)
        rec.on_record(*rec.rings[h.ring], kring::record(h.bytes, 0, true));
    if (!all.empty())
        rec.put(pd::make_finished_round());
    return rc;
}

// The end, whatever ended the loop (@rc its status): the last snapshot,
// the channels disabled, the command stopped, the rest of the rings read.
int drain(session& s, int rc) {
    recorder& rec = *s.rec;
    if (rc == exit_ok && s.o.snapshot)
        if (auto r = rec.aux_snapshot(false); !r)
            rc = report(r.error());
    for (auto& r : rec.rings)
        if (auto e = r->ch.disable(); !e && rc == exit_ok)
            rc = report(e.error());
    if (s.child) {
        // Stopped by a signal, 'stop' or the duration before the command
        // ended: it gets SIGTERM, as perf record's workload does, and its
        // status is reported.
        ::kill(s.child->pid, SIGTERM);
        int st;
        if (::waitpid(s.child->pid, &st, 0) == s.child->pid)
            s.child_status = st;
        s.child.reset();
    }
    if (s.o.overwrite) {
        rc = read_overwritten(s, rc);
    } else if (rc == exit_ok) {
        for (std::size_t i = 0; i < rec.rings.size(); i++)
            rec.merger.finish(i);
        if (auto r = rec.flush(true); !r)
            rc = report(r.error());
    }
    return rc;
}

int run(const context& ctx, options o, const std::vector<std::string>& argv_all) {
    session s(ctx, std::move(o));
    if (int rc = check_options(s); rc != exit_ok)
        return rc;
    if (auto r = s.trig.setup(s.o.control); !r)
        return report(r.error());
    const bool stream = s.o.output == "-";
    if (stream) {
        // Standard output is the recording: the summary goes to stderr, and
        // a reader that goes away is a write error (EPIPE), not a signal.
        summary_to_stderr();
        ::signal(SIGPIPE, SIG_IGN);
    }
    kring::merge_options mo;
    if (auto pc = posix_clock(s.clock))
        mo.clock = *pc;
    s.rec.emplace(s.o.snapshot, mo);
    // The producer channel before the command: the command (insmod ...)
    // finds its id in the environment.
    if (s.ev.producer)
        if (int rc = open_producer(s); rc != exit_ok)
            return rc;
    // The command is forked first: its pid is what the channels follow.
    if (s.command) {
        auto c = fork_command(s.o.command, stream);
        if (!c)
            return report(c.error());
        s.child = *c;
    }
    if (s.o.call_graph)
        s.rec->timer_st |= PERF_SAMPLE_CALLCHAIN;
    // The sched tracepoints' formats, for perf sched: without tracefs (or
    // the right to read it) the recording has kring's own events only.
    if (s.ev.sched) {
        if (auto t = record::read_sched_tracepoints())
            s.rec->tp = std::move(*t);
        else
            fmt::print(stderr,
                       "kring: note: no sched tracepoints in the recording ({}): perf sched "
                       "cannot read it\n",
                       t.error().message());
    }
    for (const auto& e : s.ev.events)
        if (e.format)
            s.rec->event_formats.push_back(&*e.format);
    if (int rc = open_rings(s); rc != exit_ok)
        return rc;
    if (int rc = open_file(s); rc != exit_ok)
        return rc;
    if (int rc = start(s); rc != exit_ok)
        return rc;
    s.tty = ::isatty(1) && !stream;
    status_line status(s.t0);
    int rc = record_loop(s, status);
    rc = drain(s, rc);
    if (s.tty)
        status.print(*s.rec, true);
    rc = finish_file(s, argv_all, rc);
    return print_end(s, rc);
}

std::vector<std::string> own_cmdline() {
    std::ifstream f("/proc/self/cmdline", std::ios::binary);
    std::vector<std::string> v;
    std::string a;
    while (std::getline(f, a, '\0'))
        v.push_back(a);
    return v;
}

}  // namespace

void add_record(CLI::App* sub, context& ctx) {
    static options o;
    sub->footer(
        "Examples:\n"
        "  kring record -a -e sched -e timer -d 5          every CPU for 5 s\n"
        "  kring record -e timer:999 -- ./busy 2000        a command, followed with its "
        "children\n"
        "  kring record -p 1234 -e sched:wakeups -o t.data one process's threads\n"
        "  kring record -a -e 'irq:*,sched:sched_process_exec' -d 5\n"
        "                                                  tracepoints: perf script\n"
        "  kring record -e page-faults -c 1 -- ./prog      every page fault of a command\n"
        "  kring record -g -e timer -- ./prog              call graphs: perf report -g\n"
        "  kring record -a -e aux --snapshot --control fifo:/tmp/ctl\n"
        "                                                  AUX snapshots on SIGUSR2 or "
        "'snapshot'\n"
        "  kring record -e producer -o p.data -- sh -c 'insmod my.ko "
        "channel=$KRING_CHANNEL_ID'\n"
        "                                                  a producer module's records: "
        "perf script\n"
        "  perf script -i perf.data --show-switch-events   perf reads the file\n"
        "The file is perf.data (docs/TOOL.md): perf script and perf report read it.\n"
        "Exit status: 0 ok; 1 runtime error; 2 usage error. Last line: summary record "
        "key=value ...");
    sub->add_flag("-a,--all-cpus", o.all_cpus, "system-wide: one ring per online CPU");
    sub->add_option("-C,--cpu", o.cpu_list, "these CPUs only (0,2-3)");
    auto* pid = sub->add_option("-p,--pid", o.pid_arg, "the threads of this process");
    auto* tid = sub->add_option("-t,--tid", o.tid_arg, "this thread");
    sub->add_option("-e,--event", o.events,
                    "a comma list of: sched, sched:wakeups, timer, timer:FREQ (Hz, default "
                    "1000), aux, producer (a channel producer modules write into, its id in "
                    "KRING_CHANNEL_ID) - kring's own sources, whose names come first - and "
                    "perf's events through the event source: SUBSYS:NAME tracepoints (globs: "
                    "'irq:*'), software events (page-faults, cs, ...; :u or :k), hardware "
                    "events (cycles, instructions, ...); see kring list; repeatable (default: "
                    "sched)")
        // One value per -e, so that a -- after it starts the command
        // instead of ending a list of events.
        ->expected(1)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
        ->allow_extra_args(false);
    sub->add_option("-c,--count", o.count,
                    "perf's events: a sample every PERIOD events (default: 1 for a tracepoint; "
                    "-F 4000 for software and hardware events)")
        ->check(CLI::Range(std::uint64_t(1), std::uint64_t(1) << 62));
    sub->add_option("-F,--freq", o.freq,
                    "software and hardware events: FREQ samples a second (default 4000; at most "
                    "kernel.perf_event_max_sample_rate)")
        ->check(CLI::Range(std::uint64_t(1), std::uint64_t(1) << 32));
    sub->add_option("--filter", o.filter,
                    "perf's tracepoint filter: refused, the event source has no filters yet");
    sub->add_option("-m,--mmap-pages", o.pages, "data pages per ring (a power of 2)")
        ->capture_default_str();
    sub->add_flag("-g,--call-graph", o.call_graph,
                  "timer and event samples with call chains: the kernel stack and the user "
                  "stack by frame pointers (build with -fno-omit-frame-pointer)");
    sub->add_flag("--mirror", o.mirror, "map each ring's data pages twice (no copy at the wrap)");
    sub->add_flag("--overwrite", o.overwrite,
                  "backward, overwritable rings read once at the end (the newest records)");
    sub->add_option("--aux-pages", o.aux_pages, "AUX area pages per ring (a power of 2)")
        ->capture_default_str();
    auto* snap = sub->add_option("--snapshot", o.snapshot_size,
                                 "AUX snapshot mode (optional =SIZE in bytes of the AUX area); "
                                 "a snapshot on SIGUSR2, 'snapshot' in --control, and at the end")
                     ->expected(0, 1);
    sub->add_option("--clock", o.clock, "record clock: monotonic, monotonic_raw, boottime, local")
        ->capture_default_str();
    sub->add_option("-d,--duration", o.duration,
                    "seconds to record (default: until SIGINT or "
                    "the command's exit)");
    sub->add_option("-o,--output", o.output,
                    "output file (an existing one becomes FILE.old); - streams perf's pipe "
                    "format to standard output")
        ->capture_default_str();
    sub->add_option("--control", o.control,
                    "fifo:PATH, a fifo (created if absent) taking 'snapshot' and 'stop' lines");
    // After --, every argument is the command's, its own options included.
    sub->add_option("command", o.command, "the command to run and record, after --")
        ->allow_extra_args();
    sub->callback([&ctx, pid, tid, snap] {
        if (pid->count())
            o.pid = o.pid_arg;
        if (tid->count())
            o.tid = o.tid_arg;
        o.snapshot = snap->count() > 0;
        if (!o.control.empty()) {
            if (o.control.rfind("fifo:", 0) != 0) {
                ctx.exit_code = usage("--control {}: expected fifo:PATH", o.control);
                return;
            }
            o.control = o.control.substr(5);
        }
        ctx.exit_code = run(ctx, o, own_cmdline());
    });
}

}  // namespace kring_tool
