// kring record's events (tools/kring/event_spec.cpp, tracefs.cpp) on the
// host, against a fake tracefs made in a temporary folder (KRING_TRACEFS):
// the -e parser (lists, globs, kring's own names first, unknown names with
// the nearest ones, -c/-F defaults), the channel, attr and samples of a
// tracepoint and a software event written into a perf.data file and read
// back (perf_data, kring script, and perf script when perf is installed),
// kring list, and kring record's one-line errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include <linux/kring.h>
#include <linux/perf_event.h>

#include "event_spec.hpp"
#include "kring/perf_data.hpp"
#include "kring/record.hpp"
#include "record_convert.hpp"
#include "tp_fixture.hpp"
#include "tracefs.hpp"
#include "workload.hpp"

namespace {
using namespace kring_tool_test;
namespace ev = kring_tool::events;

const std::string common = tp_fixture::common;
const std::string irq_entry = "name: irq_handler_entry\nID: 131\nformat:\n" + common +
                              "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
                              "\tfield:__data_loc char[] name;\toffset:12;\tsize:4;\tsigned:0;\n\n"
                              "print fmt: \"irq=%d name=%s\", REC->irq, __get_str(name)\n";
const std::string irq_exit =
    "name: irq_handler_exit\nID: 132\nformat:\n" + common +
    "\tfield:int irq;\toffset:8;\tsize:4;\tsigned:1;\n"
    "\tfield:int ret;\toffset:12;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"irq=%d ret=%s\", REC->irq, REC->ret ? \"handled\" : \"unhandled\"\n";
const std::string process_exec =
    "name: sched_process_exec\nID: 311\nformat:\n" + common +
    "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
    "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n"
    "\tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n"
    "print fmt: \"filename=%s pid=%d old_pid=%d\", __get_str(filename), REC->pid, "
    "REC->old_pid\n";
const std::string hrtimer_start = "name: hrtimer_start\nID: 95\nformat:\n" + common +
                                  "\tfield:void * hrtimer;\toffset:8;\tsize:8;\tsigned:0;\n\n"
                                  "print fmt: \"hrtimer=%p\", REC->hrtimer\n";

// A tracefs tree: events/header_*, events/S/N/{id,format}, and what a real
// one has beside (events/enable, a system's filter, an event without id).
class Events : public ToolFiles {
protected:
    void SetUp() override {
        ToolFiles::SetUp();
        root_ = path("tracefs");
        put("events/header_page", tp_fixture::header_page);
        put("events/header_event", tp_fixture::header_event);
        put("events/enable", "0\n");
        tp("irq", "irq_handler_entry", 131, irq_entry);
        tp("irq", "irq_handler_exit", 132, irq_exit);
        tp("sched", "sched_process_exec", 311, process_exec);
        tp("sched", "sched_switch", 316, tp_fixture::sched_switch);
        tp("timer", "hrtimer_start", 95, hrtimer_start);
        put("events/sched/filter", "none\n");
        put("events/ftrace/function/format", "name: function\n");  // no id: not an event
        ::setenv("KRING_TRACEFS", root_.c_str(), 1);
    }
    void TearDown() override {
        ::unsetenv("KRING_TRACEFS");
        ToolFiles::TearDown();
    }
    void put(const std::string& rel, const std::string& text) {
        fs::create_directories(fs::path(root_ + "/" + rel).parent_path());
        std::ofstream(root_ + "/" + rel) << text;
    }
    void tp(const std::string& s, const std::string& n, int id, const std::string& format) {
        put("events/" + s + "/" + n + "/id", std::to_string(id) + "\n");
        put("events/" + s + "/" + n + "/format", format);
        put("events/" + s + "/" + n + "/enable", "0\n");
    }
    // -e @args with -c/-F @smp; tracefs asked for is counted.
    kring::result<ev::event_set> parse(std::vector<std::string> args, ev::sampling smp = {}) {
        return ev::parse(args, smp, [this]() -> kring::result<std::string> {
            tracefs_asked_++;
            return kring_tool::tracefs::root(false);
        });
    }
    static std::vector<std::string> names(const ev::event_set& s) {
        std::vector<std::string> v;
        for (const auto& e : s.events)
            v.push_back(e.name);
        return v;
    }

    std::string root_;
    int tracefs_asked_ = 0;
};

TEST_F(Events, ListsAndGlobsNameEveryTracepointWithItsId) {
    auto s = parse({"irq:*,sched:sched_process_exec", "page-faults"});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(names(*s), (std::vector<std::string>{"irq:irq_handler_entry", "irq:irq_handler_exit",
                                                   "sched:sched_process_exec", "page-faults"}));
    EXPECT_FALSE(s->sched) << "perf's events alone: no sched source";
    EXPECT_EQ(s->events[0].type, PERF_TYPE_TRACEPOINT);
    EXPECT_EQ(s->events[0].config, 131u);
    EXPECT_EQ(s->events[1].config, 132u);
    EXPECT_EQ(s->events[2].config, 311u);
    ASSERT_TRUE(s->events[2].format);
    EXPECT_TRUE(s->events[2].format->fields.count("filename"));
    EXPECT_EQ(s->events[3].type, PERF_TYPE_SOFTWARE);
    EXPECT_EQ(s->events[3].config, std::uint64_t(PERF_COUNT_SW_PAGE_FAULTS));
    EXPECT_FALSE(s->events[3].format);
    // A glob on both halves, a name listed twice: once each.
    auto g = parse({"s*:sched_*,sched:sched_switch", "faults,page-faults,cs"});
    ASSERT_TRUE(g) << g.error().message();
    EXPECT_EQ(names(*g), (std::vector<std::string>{"sched:sched_process_exec", "sched:sched_switch",
                                                   "faults", "page-faults", "cs"}));
    EXPECT_EQ(g->events[3].config, g->events[2].config);
    EXPECT_EQ(g->events[4].config, std::uint64_t(PERF_COUNT_SW_CONTEXT_SWITCHES));
}

TEST_F(Events, KringsOwnNamesComeFirst) {
    auto s = parse({"sched:wakeups,timer:999,timer:hrtimer_start,aux"});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_TRUE(s->sched && s->wakeups && s->timer && s->aux);
    EXPECT_EQ(s->timer_hz, 999u);
    EXPECT_EQ(names(*s), std::vector<std::string>{"timer:hrtimer_start"});
    // Nothing asked: sched, as before; kring's names need no tracefs.
    auto d = parse({});
    ASSERT_TRUE(d);
    EXPECT_TRUE(d->sched);
    auto k = parse({"sched", "timer", "producer", "cycles", "instructions:u"});
    ASSERT_TRUE(k) << k.error().message();
    EXPECT_EQ(tracefs_asked_, 1) << "only timer:hrtimer_start asked for tracefs";
    EXPECT_EQ(k->events.at(0).type, PERF_TYPE_HARDWARE);
    EXPECT_TRUE(k->events.at(1).exclude_kernel);
    EXPECT_FALSE(k->events.at(1).exclude_user);
    // The sched source writes sched:sched_switch itself: one writer.
    auto both = parse({"sched,sched:sched_*"});
    ASSERT_FALSE(both);
    EXPECT_EQ(both.error().code(), EINVAL);
    EXPECT_EQ(both.error().message(),
              "event 'sched:sched_switch': -e sched writes it already (from kring's sched "
              "source): give one or the other");
    auto hz = parse({"timer:0"});
    ASSERT_FALSE(hz);
    EXPECT_EQ(hz.error().message(), "event 'timer:0': the timer's frequency is 1..100000 Hz");
}

TEST_F(Events, UnknownNamesSayWhyAndTheNearest) {
    struct want {
        const char* arg;
        std::string message;
    };
    const want cases[] = {
        {"irq:irq_handler_entyr",
         "event 'irq:irq_handler_entyr': unknown event: no such "
         "tracepoint under " +
             root_ + "/events (nearest: irq:irq_handler_entry)"},
        {"pagefaults",
         "event 'pagefaults': unknown event (kring's sources, perf's software "
         "and hardware events, SUBSYS:NAME tracepoints: kring list) (nearest: "
         "page-faults)"},
        {"nosuch:*", "event 'nosuch:*': no tracepoint under " + root_ +
                         "/events matches (kring list lists them)"},
        {"irq:a:b", "event 'irq:a:b': not SUBSYS:NAME"},
        {"ftrace:function",
         "event 'ftrace:function': unknown event: no such tracepoint under " + root_ + "/events"},
        {"page-faults,,cs", "event 'page-faults,,cs': an empty name in the list"},
        {"cycles:x", "event 'cycles:x': unknown event: no such tracepoint under " + root_ +
                         "/events (nearest: cycles)"},
    };
    for (const auto& c : cases) {
        auto s = parse({c.arg});
        ASSERT_FALSE(s) << c.arg;
        EXPECT_EQ(s.error().code(), EINVAL) << c.arg;
        EXPECT_EQ(s.error().message(), c.message) << c.arg;
    }
    // No tracefs: its own error (not EINVAL), naming the event.
    ::setenv("KRING_TRACEFS", path("none").c_str(), 1);
    auto n = parse({"irq:*"});
    ASSERT_FALSE(n);
    EXPECT_EQ(n.error().code(), ENODEV);
    EXPECT_EQ(
        n.error().message().rfind(
            "event 'irq:*': KRING_TRACEFS=" + path("none") + ": no events/ directory there", 0),
        0u)
        << n.error().message();
}

TEST_F(Events, PeriodAndFrequencyArePerfsDefaults) {
    auto d = parse({"irq:irq_handler_entry,page-faults,cycles"});
    ASSERT_TRUE(d) << d.error().message();
    EXPECT_EQ(d->events[0].period, 1u);
    EXPECT_EQ(d->events[0].freq, 0u);
    for (int i : {1, 2}) {
        EXPECT_EQ(d->events[std::size_t(i)].freq, ev::default_freq);
        EXPECT_EQ(d->events[std::size_t(i)].period, 0u);
    }
    ev::sampling c;
    c.period = 7;
    auto p = parse({"irq:irq_handler_entry,page-faults"}, c);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->events[0].period, 7u);
    EXPECT_EQ(p->events[1].period, 7u);
    EXPECT_EQ(p->events[1].freq, 0u);
    ev::sampling f;
    f.freq = 99;
    auto q = parse({"irq:irq_handler_entry,page-faults"}, f);
    ASSERT_TRUE(q);
    EXPECT_EQ(q->events[0].period, 1u) << "-F is for software and hardware events";
    EXPECT_EQ(q->events[1].freq, 99u);
}

// What the module refused (EACCES/EPERM) is said with perf's levels, and
// :u/:k become the channel's exclude flags.
TEST_F(Events, PermissionHintsAndModifiers) {
    auto s = parse({"irq:irq_handler_entry,page-faults:u,cycles:k"});
    ASSERT_TRUE(s) << s.error().message();
    EXPECT_EQ(ev::permission_hint(s->events[0], true, false, 2),
              "a tracepoint's raw data needs CAP_PERFMON (or CAP_SYS_ADMIN), or "
              "kernel.perf_event_paranoid <= -1 (now 2) and kring.paranoid <= -1 "
              "(/sys/module/kring/parameters/paranoid)");
    EXPECT_EQ(ev::permission_hint(s->events[1], true, false, 1),
              "every task of a CPU needs CAP_PERFMON (or CAP_SYS_ADMIN), or "
              "kernel.perf_event_paranoid <= 0 (now 1) and kring.paranoid <= 0 "
              "(/sys/module/kring/parameters/paranoid)");
    EXPECT_EQ(ev::permission_hint(s->events[2], false, true, 2),
              "following another user's task needs ptrace read access to it (CAP_SYS_PTRACE)");
    kring::channel_options u, k;
    ev::configure(s->events[1], false, u);
    ev::configure(s->events[2], false, k);
    EXPECT_TRUE(u.extra_attr_flags & KRING_ATTR_F_EXCLUDE_KERNEL);
    EXPECT_FALSE(u.config[0] & KRING_EVENT_F_EXCLUDE_USER);
    EXPECT_FALSE(k.extra_attr_flags & KRING_ATTR_F_EXCLUDE_KERNEL);
    EXPECT_TRUE(k.config[0] & KRING_EVENT_F_EXCLUDE_USER);
    EXPECT_EQ(KRING_EVENT_TYPE(k.config[0]), std::uint32_t(PERF_TYPE_HARDWARE));
    auto a = ev::attr_of(s->events[1], u.sample_type, {1});
    EXPECT_EQ(a.name, "page-faults:u");
    EXPECT_EQ(a.attr.exclude_kernel, 1u);
    EXPECT_EQ(a.attr.exclude_user, 0u);
}

// A kring SAMPLE of the event source as the module writes it: perf's
// fields, then SEQ.
std::vector<std::byte> kring_sample(const pd::sample& s, std::uint64_t st, std::uint16_t misc) {
    auto b = pd::make_sample(misc, s, st);
    const std::uint64_t seq = 42;
    b.resize(b.size() + 8);
    std::memcpy(b.data() + b.size() - 8, &seq, 8);
    const std::uint16_t size = std::uint16_t(b.size());
    std::memcpy(b.data() + 6, &size, 2);
    return b;
}

// A __data_loc string payload of @f: @field's string after the fields.
std::vector<std::byte> with_string(const pd::tp_format& f, pd::tp_payload& pl, const char* field,
                                   const std::string& text) {
    auto b = pl.bytes();
    const std::uint32_t off = std::uint32_t(b.size());
    const std::uint32_t loc = off | (std::uint32_t(text.size() + 1) << 16);
    std::memcpy(b.data() + f.fields.at(field).offset, &loc, 4);
    for (char ch : text)
        b.push_back(std::byte(ch));
    b.push_back(std::byte(0));
    return b;
}

TEST_F(Events, TracepointAndSoftwareEventFileReadsBack) {
    auto s = parse({"sched:sched_process_exec,page-faults"});
    ASSERT_TRUE(s) << s.error().message();
    const ev::event &exec = s->events[0], &pf = s->events[1];
    // The channels.
    kring::channel_options tco, sco;
    ev::configure(exec, false, tco);
    ev::configure(pf, true, sco);
    EXPECT_EQ(tco.source, std::uint32_t(KRING_SOURCE_EVENT));
    EXPECT_EQ(tco.config[0], std::uint64_t(PERF_TYPE_TRACEPOINT));
    EXPECT_EQ(tco.config[1], 311u);
    EXPECT_EQ(tco.config[2], 1u);
    EXPECT_TRUE(tco.sample_type & KRING_SAMPLE_RAW);
    EXPECT_FALSE(tco.sample_type & KRING_SAMPLE_CALLCHAIN);
    EXPECT_EQ(sco.config[0], PERF_TYPE_SOFTWARE | KRING_EVENT_F_FREQ);
    EXPECT_EQ(sco.config[1], std::uint64_t(PERF_COUNT_SW_PAGE_FAULTS));
    EXPECT_EQ(sco.config[2], ev::default_freq);
    EXPECT_FALSE(sco.sample_type & KRING_SAMPLE_RAW);
    EXPECT_TRUE(sco.sample_type & KRING_SAMPLE_CALLCHAIN);
    // The file: the attrs, the tracing data the recorder makes, samples.
    const std::uint64_t tst = tco.sample_type, sst = sco.sample_type;
    std::vector<pd::event_attr> attrs = {ev::attr_of(exec, tst, {11, 12}),
                                         ev::attr_of(pf, sst, {21})};
    const std::string file = path("ev.data");
    auto w = pd::writer::create(file, attrs);
    ASSERT_TRUE(w) << w.error().message();
    kring_tool::record::recorder rec(false, {});
    rec.event_formats.push_back(&*exec.format);
    ASSERT_TRUE(w->write_tracing_data(rec.tracing_data()));
    const char* bins[] = {"/bin/true", "/usr/bin/env", "/bin/busybox"};
    for (int i = 0; i < 3; i++) {
        pd::tp_payload pl(*exec.format);
        pl.set("common_pid", 100 + i).set("pid", 100 + i).set("old_pid", 100 + i);
        auto raw = with_string(*exec.format, pl, "filename", bins[i]);
        pd::sample ks;
        ks.id = 11 + std::uint64_t(i % 2);
        ks.ip = 0xffffffff81000000ull + std::uint64_t(i);
        ks.pid = ks.tid = 100 + std::uint32_t(i);
        ks.time = 1000 + std::uint64_t(i);
        ks.cpu = std::uint32_t(i % 2);
        ks.period = 1;
        ks.raw = raw;
        auto bytes = kring_sample(ks, tst, 0);
        auto ki = kring::parse_sample(kring::record(bytes, 0, false), tst | KRING_SAMPLE_SEQ);
        ASSERT_TRUE(ki);
        ASSERT_TRUE(w->write(ev::sample_of(*ki, 0, ks.id, tst)));
    }
    const std::uint64_t chain[] = {PERF_CONTEXT_USER, 0x401000, 0x401100};
    pd::sample fs_;
    fs_.id = 21;
    fs_.ip = 0x401000;
    fs_.pid = fs_.tid = 200;
    fs_.time = 2000;
    fs_.period = 3;
    fs_.callchain.bytes = std::as_bytes(std::span(chain));
    auto fb = kring_sample(fs_, sst, PERF_RECORD_MISC_USER);
    auto fi = kring::parse_sample(kring::record(fb, 0, false), sst | KRING_SAMPLE_SEQ);
    ASSERT_TRUE(fi);
    ASSERT_TRUE(w->write(ev::sample_of(*fi, PERF_RECORD_MISC_USER, 21, sst)));
    ASSERT_TRUE(w->finish({}));

    auto f = pd::file::open(file);
    ASSERT_TRUE(f) << f.error().message();
    ASSERT_EQ(f->attrs().size(), 2u);
    const auto& ta = f->attrs()[0];
    EXPECT_EQ(ta.name, "sched:sched_process_exec");
    EXPECT_EQ(ta.attr.type, std::uint32_t(PERF_TYPE_TRACEPOINT));
    EXPECT_EQ(ta.attr.config, 311u);
    EXPECT_EQ(ta.attr.sample_period, 1u);
    EXPECT_EQ(ta.attr.freq, 0u);
    EXPECT_EQ(ta.attr.sample_type, tst);
    EXPECT_EQ(ta.ids, (std::vector<std::uint64_t>{11, 12}));
    const auto& sa = f->attrs()[1];
    EXPECT_EQ(sa.name, "page-faults");
    EXPECT_EQ(sa.attr.type, std::uint32_t(PERF_TYPE_SOFTWARE));
    EXPECT_EQ(sa.attr.config, std::uint64_t(PERF_COUNT_SW_PAGE_FAULTS));
    EXPECT_EQ(sa.attr.freq, 1u);
    EXPECT_EQ(sa.attr.sample_freq, ev::default_freq);
    EXPECT_EQ(sa.attr.sample_type, sst);
    auto td = pd::parse_tracing_data(f->feats().tracing_data);
    ASSERT_TRUE(td) << td.error().message();
    ASSERT_EQ(td->events.size(), 1u);
    EXPECT_EQ(td->events[0].first, "sched");
    EXPECT_EQ(td->events[0].second, process_exec);
    std::size_t n = 0;
    ASSERT_TRUE(f->for_each([&](const pd::record_view& r) {
        if (r.type() != PERF_RECORD_SAMPLE)
            return;
        const auto* a = f->attr_of(r);
        ASSERT_NE(a, nullptr);
        auto ps = pd::parse_sample(r, a->attr.sample_type);
        ASSERT_TRUE(ps);
        if (a->attr.type == PERF_TYPE_SOFTWARE) {
            EXPECT_EQ(r.misc() & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_USER);
            EXPECT_EQ(ps->period, 3u);
            EXPECT_EQ(ps->callchain.to_vector(), std::vector<std::uint64_t>(chain, chain + 3));
        } else {
            EXPECT_EQ(r.misc() & PERF_RECORD_MISC_CPUMODE_MASK, PERF_RECORD_MISC_KERNEL);
        }
        n++;
    }));
    EXPECT_EQ(n, 4u);

    // kring script decodes every field by name (libtraceevent).
    auto sc = kring("script '" + file + "'");
    ASSERT_EQ(sc.status, 0) << sc.err;
    for (const char* b : bins)
        EXPECT_NE(sc.out.find(std::string(" evname=sched:sched_process_exec filename=") + b),
                  std::string::npos)
            << sc.out;
    // perf script too, when this machine has perf.
    if (std::system("perf --version >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "no perf on this machine: perf script not run";
    auto ps = run("perf script -i '" + file + "' -F comm,tid,event,trace");
    ASSERT_EQ(ps.status, 0) << ps.err;
    for (const char* b : bins)
        EXPECT_NE(ps.out.find(std::string("sched:sched_process_exec: filename=") + b),
                  std::string::npos)
            << ps.out;
    // perf report sorts on a field by name.
    auto rp = run("perf report -i '" + file + "' --stdio --sort sched:sched_process_exec.filename");
    ASSERT_EQ(rp.status, 0) << rp.err;
    const auto rows = lines_of(rp.out);
    for (const std::string b : bins)
        EXPECT_TRUE(std::any_of(rows.begin(), rows.end(), [&](const std::string& l) {
            return l.find("33.33%") != std::string::npos && l.ends_with(" " + b);
        })) << rp.out;
}

TEST_F(Events, ListShowsPerfsShape) {
    auto all = kring("list");
    ASSERT_EQ(all.status, 0) << all.err;
    const auto lines = lines_of(all.out);
    auto has = [&](const std::string& l) {
        return std::find(lines.begin(), lines.end(), l) != lines.end();
    };
    // perf list's row: the name in 50 columns, then [what].
    auto row = [](const std::string& name, const std::string& what) {
        return "  " + name + std::string(name.size() < 50 ? 50 - name.size() : 0, ' ') + " [" +
               what + "]";
    };
    EXPECT_TRUE(has(row("page-faults OR faults", "Software event"))) << all.out;
    EXPECT_TRUE(has(row("irq:irq_handler_entry", "Tracepoint event"))) << all.out;
    EXPECT_TRUE(has(row("timer:hrtimer_start", "Tracepoint event"))) << all.out;
    EXPECT_FALSE(all.out.find("ftrace:function") != std::string::npos) << "no id: not an event";
    const bool pmu = fs::exists("/sys/bus/event_source/devices/cpu");
    EXPECT_TRUE(
        has(row("cpu-cycles OR cycles",
                pmu ? "Hardware event" : "Hardware event, needs a PMU: this machine has none")))
        << all.out;
    EXPECT_TRUE(has(row("sched:wakeups", "sched with the wakeups"))) << all.out;
    EXPECT_EQ(lines.back(), "summary list software=9 hardware=10 tracepoints=5 kring=6");
    auto irq = kring("list 'irq:*'");
    ASSERT_EQ(irq.status, 0) << irq.err;
    EXPECT_EQ(lines_of(irq.out).back(), "summary list software=0 hardware=0 tracepoints=2 kring=0");
    auto word = kring("list faults");
    EXPECT_EQ(lines_of(word.out).back(),
              "summary list software=5 hardware=0 tracepoints=0 kring=0");
    // Without tracefs: the rest, and one line saying why no tracepoints.
    auto none = run("KRING_TRACEFS='" + path("none") + "' '" + kring_bin() + "' list");
    ASSERT_EQ(none.status, 0);
    EXPECT_EQ(lines_of(none.err).size(), 1u) << none.err;
    EXPECT_EQ(none.err.rfind("kring: note: no tracepoints listed: KRING_TRACEFS=", 0), 0u)
        << none.err;
}

TEST_F(Events, RecordErrorsAreOneLineNamingTheToken) {
    struct want {
        std::string args;
        int status;
        std::string err;
    };
    const want cases[] = {
        {"-a -e irq:nosuch", 2,
         "kring: event 'irq:nosuch': unknown event: no such tracepoint under " + root_ +
             "/events (see --help)\n"},
        {"-a -e 'irq:*' -c 1 -F 10", 2,
         "kring: -c 1 and -F 10: give a period or a frequency, not both (see --help)\n"},
        {"-a -e 'irq:*' --filter 'irq == 1'", 2,
         "kring: --filter irq == 1: the event source has no tracepoint filters yet (perf "
         "applies them with PERF_EVENT_IOC_SET_FILTER; kring's module does not): record "
         "without it and filter the file (see --help)\n"},
        {"-a -e cycles,sched,sched:sched_switch", 2,
         "kring: event 'sched:sched_switch': -e sched writes it already (from kring's sched "
         "source): give one or the other (see --help)\n"},
        {"-a -e timer:hrtimer_start,bogus", 2,
         "kring: event 'bogus': unknown event (kring's sources, perf's software and hardware "
         "events, SUBSYS:NAME tracepoints: kring list) (see --help)\n"},
        // Parsed: then the device, which the host lacks.
        {"--device /nonexistent record -a -e 'irq:*,page-faults' -o " + path("x.data"), 1,
         "kring: cannot open /nonexistent: No such file or directory (is the module loaded? "
         "try: sudo insmod kmod/kring.ko)\n"},
    };
    for (const auto& c : cases) {
        const std::string args =
            c.args.rfind("--device", 0) == 0 ? c.args : "record " + c.args + " -o " + path("y");
        auto r = kring(args);
        EXPECT_EQ(r.status, c.status) << args << ": " << r.err;
        EXPECT_EQ(r.err, c.err) << args;
    }
    // -a or -C with a command (perf record -a -- cmd): accepted, up to the
    // device; -p or -t with one is not.
    for (const char* mode : {"-a", "-C 0"}) {
        auto r = kring(std::string("--device /nonexistent record ") + mode +
                       " -e page-faults -o '" + path("c.data") + "' -- true");
        EXPECT_EQ(r.status, 1) << mode << ": " << r.err;
        EXPECT_EQ(r.err.rfind("kring: cannot open /nonexistent: ", 0), 0u) << mode << ": " << r.err;
    }
    auto pt = kring("record -p 1 -e page-faults -o '" + path("c.data") + "' -- true");
    EXPECT_EQ(pt.status, 2);
    EXPECT_EQ(pt.err,
              "kring: choose one of -a, -C, -p, -t or a command (-a and -C take one) (see "
              "--help)\n");
    auto n = run("KRING_TRACEFS='" + path("none") + "' '" + kring_bin() +
                 "' record -a -e 'irq:*' -o '" + path("z") + "'");
    EXPECT_EQ(n.status, 1);
    EXPECT_EQ(n.err, "kring: event 'irq:*': KRING_TRACEFS=" + path("none") +
                         ": no events/ directory there (No such file or directory)\n");
}

}  // namespace
