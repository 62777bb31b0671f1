// The kring tool's viewing side, end to end on the host: perf.data files of a
// known workload (workload.hpp) are written with libkring's perf_data
// writer, then the built `kring` runs on them (report, script, script
// --json, export --chrome, report --svg) and what it prints is checked
// against what was written. Also: a file truncated mid-record, bad arguments, a missing file
// and a missing device (exact lines and exit statuses).
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <nlohmann/json.hpp>

#include <linux/kring.h>
#include <linux/kring_test.h>

#include "kring/perf_data.hpp"

#include "tp_fixture.hpp"
#include "tp_hostile.hpp"
#include "workload.hpp"

namespace {
using namespace kring_tool_test;

// The summary line's key=value pairs.
std::map<std::string, std::uint64_t> summary(const std::string& out, const std::string& cmd) {
    std::map<std::string, std::uint64_t> kv;
    auto lines = lines_of(out);
    if (lines.empty() || lines.back().rfind("summary " + cmd + " ", 0) != 0)
        return kv;
    std::istringstream in(lines.back().substr(9 + cmd.size()));
    for (std::string tok; in >> tok;) {
        auto eq = tok.find('=');
        if (eq != std::string::npos)
            kv[tok.substr(0, eq)] = std::stoull(tok.substr(eq + 1));
    }
    return kv;
}

TEST_F(ToolWorkload, ReportFiguresEqualWhatWasWritten) {
    auto r = kring("report '" + file_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    EXPECT_EQ(r.err, "");
    auto s = summary(r.out, "report");
    ASSERT_FALSE(s.empty()) << r.out;
    EXPECT_EQ(s["records"], w_.records);
    EXPECT_EQ(s["samples"], w_.samples);
    EXPECT_EQ(s["switches"], w_.switch_records);
    EXPECT_EQ(s["switch_in"], w_.switch_records / 2);
    EXPECT_EQ(s["switch_out"], w_.switch_records / 2);
    EXPECT_EQ(s["comm"], 4u);
    EXPECT_EQ(s["fork"], 1u);
    EXPECT_EQ(s["exit"], 1u);
    EXPECT_EQ(s["lost_records"], 1u);
    EXPECT_EQ(s["lost"], 7u);
    EXPECT_EQ(s["aux_records"], 3u);
    EXPECT_EQ(s["aux_bytes"], w_.aux_bytes);
    EXPECT_EQ(s["aux_truncated"], 2u);
    EXPECT_EQ(s["aux_partial"], 1u);
    EXPECT_EQ(s["aux_overwrite"], 0u);
    EXPECT_EQ(s["auxtrace_bytes"], w_.auxtrace_bytes);
    EXPECT_EQ(s["aux_packets"], w_.aux_packets);
    EXPECT_EQ(s["aux_gaps"], 1u);
    EXPECT_EQ(s["aux_undecoded"], 1u);
    EXPECT_EQ(s["wakeups"], 2u);
    EXPECT_EQ(s["cpus"], 2u);
    EXPECT_EQ(s["slices"], w_.slices.size());
    EXPECT_EQ(s["rings"], 2u);
    EXPECT_EQ(s["ring_lost"], 7u);
    EXPECT_EQ(s["lost_ranges"], 1u);
    EXPECT_EQ(s["unparsed"], 0u);
    EXPECT_EQ(s["truncated"], 0u);
    // The per-task figures: the top list by switches names each task with
    // its count, the one by samples too; the lost range is shown.
    for (const auto& [tid, n] : w_.switches_of)
        EXPECT_TRUE(std::regex_search(
            r.out, std::regex(" " + std::to_string(tid) + " +[a-z\\\\x0-9]+ +" + std::to_string(n) +
                              " \\(" + std::to_string(w_.preempted_of[tid]) + " preempted\\)")))
            << "tid " << tid << "\n"
            << r.out;
    for (const auto& [tid, n] : w_.samples_of)
        EXPECT_TRUE(
            std::regex_search(r.out, std::regex(" " + std::to_string(tid) + " +[a-z\\\\x0-9]+ +" +
                                                std::to_string(n) + " \\(")))
            << "tid " << tid;
    EXPECT_NE(r.out.find("7 records, seq 1000..1006"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("truncated 2, overwrite 0, partial 1"), std::string::npos) << r.out;
}

// The same recording streamed (perf's pipe format) and read from standard
// input (-i -): every figure of the records as from the file; the kring
// section (loss by cause, per ring) is not in a stream.
TEST_F(ToolWorkload, StreamOnStdinReadsLikeTheFile) {
    const std::string stream = path("rec.pipe");
    workload again;
    ASSERT_NO_FATAL_FAILURE(again.write(stream, true));
    auto f = kring("report '" + file_ + "'");
    auto p = kring("report -i - < '" + stream + "'");
    ASSERT_EQ(f.status, 0) << f.err;
    ASSERT_EQ(p.status, 0) << p.err;
    EXPECT_EQ(p.err, "");
    auto sf = summary(f.out, "report"), sp = summary(p.out, "report");
    for (const char* k :
         {"records", "samples", "switches", "comm", "fork", "exit", "lost_records", "lost",
          "aux_records", "auxtrace_bytes", "aux_packets", "wakeups", "cpus", "slices", "truncated"})
        EXPECT_EQ(sp[k], sf[k]) << k;
    EXPECT_EQ(sp["records"], w_.records);
    EXPECT_EQ(sp["rings"], 0u);
    auto sc = kring("script -i - < '" + stream + "'");
    ASSERT_EQ(sc.status, 0) << sc.err;
    EXPECT_EQ(sc.out, kring("script '" + file_ + "'").out);
    // Cut before its features: read up to the cut, truncated, exit 1.
    const auto bytes = slurp(stream);
    std::ofstream(path("cut.pipe"), std::ios::binary)
        .write(bytes.data(), std::streamsize(bytes.size() - 8));
    auto c = kring("report -i - < '" + path("cut.pipe") + "'");
    EXPECT_EQ(c.status, 1);
    EXPECT_NE(c.err.find("truncated"), std::string::npos) << c.err;
}

TEST_F(ToolWorkload, ScriptOneLinePerRecordInTimeOrder) {
    auto r = kring("script '" + file_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    auto lines = lines_of(r.out);
    ASSERT_FALSE(lines.empty());
    EXPECT_EQ(summary(r.out, "script")["records"], w_.records);
    lines.pop_back();  // the summary
    ASSERT_EQ(lines.size(), w_.records);
    std::uint64_t last = 0, outs = 0, samples = 0;
    const std::regex form(
        R"(^(\d+\.\d{9}|-) cpu=(\d+|-) ([a-z-]+) pid=(\d+|-) tid=(\d+|-) comm=\S+( [a-z_]+=\S+)*$)");
    for (const auto& l : lines) {
        std::smatch m;
        ASSERT_TRUE(std::regex_match(l, m, form)) << l;
        if (m[1] != "-") {
            auto dot = l.find('.');
            std::uint64_t t =
                std::stoull(l.substr(0, dot)) * 1000000000 + std::stoull(l.substr(dot + 1, 9));
            EXPECT_GE(t, last) << l;
            last = t;
        }
        outs += m[3] == "switch-out";
        samples += m[3] == "sample";
    }
    EXPECT_EQ(outs, w_.switch_records / 2);
    EXPECT_EQ(samples, w_.samples);
    // The format, exactly, for a few records.
    auto has = [&](const std::string& line) {
        return std::find(lines.begin(), lines.end(), line) != lines.end();
    };
    EXPECT_TRUE(
        has("5.000100007 cpu=1 switch-out pid=400 tid=400 comm=delta next_pid=300 "
            "next_tid=301 preempt=1"));
    EXPECT_TRUE(
        has("5.000100007 cpu=1 switch-in pid=300 tid=301 comm=gamma\\x20thread "
            "prev_pid=400 prev_tid=400"));
    EXPECT_TRUE(
        has("5.000001000 cpu=0 sample pid=200 tid=200 comm=beta evname=cpu-clock "
            "ip=0x401001 period=1000000 mode=user"));
    EXPECT_TRUE(
        has("5.000000500 cpu=0 wakeup pid=200 tid=200 comm=beta waker_pid=100 "
            "waker_tid=100 last_cpu=0"));
    EXPECT_TRUE(has("5.004000030 cpu=1 lost pid=300 tid=301 comm=gamma\\x20thread id=21 lost=7"));
    EXPECT_TRUE(
        has("5.004000041 cpu=0 aux pid=100 tid=100 comm=alpha offset=0xfe8 size=8168 "
            "flags=truncated|partial"));
    EXPECT_TRUE(has("5.004000010 cpu=0 fork pid=500 tid=500 comm=alpha ppid=100 ptid=100"));
}

TEST_F(ToolWorkload, ScriptJsonLinesParse) {
    auto r = kring("script --json '" + file_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), w_.records);
    std::map<std::string, std::uint64_t> by_event;
    for (const auto& l : lines) {
        auto j = nlohmann::json::parse(l, nullptr, false);
        ASSERT_FALSE(j.is_discarded()) << l;
        ASSERT_TRUE(j.contains("event") && j["event"].is_string()) << l;
        by_event[j["event"].get<std::string>()]++;
        if (j["event"] == "switch-out") {
            EXPECT_TRUE(j["time"].is_number_unsigned()) << l;
            EXPECT_TRUE(j["next_tid"].is_number_unsigned()) << l;
        }
    }
    EXPECT_EQ(by_event["sample"], w_.samples);
    EXPECT_EQ(by_event["switch-in"], w_.switch_records / 2);
    EXPECT_EQ(by_event["auxtrace"], 3u);
    EXPECT_EQ(by_event["lost"], 1u);
}

TEST_F(ToolWorkload, ChromeJsonHoldsTheSwitchesAsSlices) {
    const std::string out = path("trace.json");
    auto r = kring("export --chrome '" + out + "' '" + file_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(slurp(out), nullptr, false);
    ASSERT_FALSE(j.is_discarded());
    ASSERT_TRUE(j["traceEvents"].is_array());
    EXPECT_EQ(j["displayTimeUnit"], "ns");
    std::set<std::tuple<int, std::uint64_t, std::uint64_t>> slices;
    std::set<int> named;
    std::uint64_t instants = 0;
    for (const auto& e : j["traceEvents"]) {
        if (e["ph"] == "X") {
            // Microseconds with the nanoseconds as fraction.
            const auto ts = std::uint64_t(std::llround(e["ts"].get<double>() * 1000));
            const auto dur = std::uint64_t(std::llround(e["dur"].get<double>() * 1000));
            slices.insert({e["tid"].get<int>(), ts, ts + dur});
        } else if (e["ph"] == "i") {
            instants++;
        } else if (e["ph"] == "M" && e["name"] == "thread_name") {
            named.insert(e["tid"].get<int>());
        }
    }
    EXPECT_EQ(slices, w_.slices);
    EXPECT_EQ(instants, w_.samples);
    EXPECT_EQ(named, (std::set<int>{0, 1}));
}

TEST_F(ToolWorkload, SvgIsValidXmlWithOneTrackPerCpu) {
    const std::string svg = path("t.svg");
    auto r = kring("report --svg '" + svg + "' '" + file_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    if (std::system("command -v xmllint >/dev/null 2>&1") != 0)
        GTEST_SKIP() << "skipped: xmllint not installed (tools/dev/deps.sh: libxml2-utils)";
    EXPECT_EQ(std::system(("xmllint --noout '" + svg + "'").c_str()), 0);
    const std::string tracks = path("tracks");
    ASSERT_EQ(std::system(("xmllint --xpath \"count(//*[local-name()='g'][@class='cpu'])\" '" +
                           svg + "' >'" + tracks + "'")
                              .c_str()),
              0);
    EXPECT_EQ(std::stoi(slurp(tracks)), 2);
    ASSERT_EQ(std::system(("xmllint --xpath \"count(//*[local-name()='g'][@class='cpu']/"
                           "*[local-name()='rect'][*[local-name()='title']])\" '" +
                           svg + "' >'" + tracks + "'")
                              .c_str()),
              0);
    EXPECT_EQ(std::stoul(slurp(tracks)), w_.slices.size());
    const std::string text = slurp(svg);
    EXPECT_EQ(text.find("<script"), std::string::npos);
    EXPECT_EQ(text.find("href"), std::string::npos);
}

TEST_F(ToolWorkload, TruncatedMidRecordIsReportedNotCrashedOn) {
    // The offsets of the records, by the library.
    auto f = pd::file::open(file_);
    ASSERT_TRUE(f);
    std::vector<std::uint64_t> offsets;
    ASSERT_TRUE(f->for_each([&](const pd::record_view& r) { offsets.push_back(r.offset); }));
    ASSERT_EQ(offsets.size(), w_.records);
    const std::string bytes = slurp(file_);
    const std::string cut = path("cut.data");
    // Mid-record: 12 bytes into record k, for a few k.
    for (std::size_t k : {std::size_t(1), std::size_t(37), offsets.size() / 2}) {
        std::ofstream(cut, std::ios::binary | std::ios::trunc)
            .write(bytes.data(), std::streamsize(offsets[k] + 12));
        for (const char* cmd : {"report", "script"}) {
            auto r = kring(std::string(cmd) + " '" + cut + "'");
            EXPECT_EQ(r.status, 1) << cmd << " k=" << k << " " << r.err;
            auto err = lines_of(r.err);
            ASSERT_EQ(err.size(), 1u) << r.err;
            EXPECT_TRUE(std::regex_match(
                err[0], std::regex("kring: .*cut\\.data: truncated at offset [0-9]+: .+")))
                << err[0];
            auto s = summary(r.out, cmd);
            EXPECT_EQ(s["truncated"], 1u) << r.out;
            EXPECT_EQ(s["records"], k) << cmd;
        }
    }
    // Cut anywhere: never a crash (exit 0, 1 - never a signal or 2).
    for (std::size_t n = 0; n < bytes.size(); n += 1 + bytes.size() / 150) {
        std::ofstream(cut, std::ios::binary | std::ios::trunc)
            .write(bytes.data(), std::streamsize(n));
        auto r = kring("report '" + cut + "'");
        EXPECT_TRUE(r.status == 0 || r.status == 1) << "cut at " << n << ": " << r.status;
        EXPECT_EQ(lines_of(r.err).size(), 1u) << "cut at " << n << ": " << r.err;
        auto e = kring("export --chrome '" + path("cut.json") + "' '" + cut + "'");
        EXPECT_TRUE(e.status == 0 || e.status == 1) << "cut at " << n << ": " << e.status;
    }
}

// kring script decodes tracepoint samples (kring record's sched:sched_switch)
// by the recording's formats with libtraceevent: every field by name, the
// numbers as numbers; a file without tracing data says decoded=0.
TEST_F(ToolFiles, ScriptDecodesTracepointFields) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    ASSERT_TRUE(sw) << sw.error().message();
    constexpr std::uint64_t st = tp_fixture::sample_type;
    const pd::event_attr a = tp_fixture::attr("sched:sched_switch", sw->id, 1);
    for (bool with_formats : {true, false}) {
        SCOPED_TRACE(with_formats ? "with formats" : "without");
        const std::string file = path(with_formats ? "tp.data" : "bare.data");
        auto w = pd::writer::create(file, {a});
        ASSERT_TRUE(w) << w.error().message();
        if (with_formats) {
            ASSERT_TRUE(w->write_tracing_data(
                pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&*sw}, 4096)));
        }
        for (int i = 0; i < 3; i++) {
            auto raw = pd::tp_payload(*sw)
                           .set("common_pid", 100)
                           .set_str("prev_comm", "alpha")
                           .set("prev_pid", 100)
                           .set("prev_prio", -2)
                           .set("prev_state", 1)
                           .set_str("next_comm", "beta")
                           .set("next_pid", 200 + i)
                           .set("next_prio", 120)
                           .bytes();
            pd::sample s;
            s.id = 1;
            s.pid = s.tid = 100;
            s.time = 1000 + std::uint64_t(i);
            s.has_time = true;
            s.period = 1;
            s.raw = raw;
            ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
        }
        ASSERT_TRUE(w->finish({}));
        auto r = kring("script '" + file + "'");
        ASSERT_EQ(r.status, 0) << r.err;
        const auto lines = lines_of(r.out);
        ASSERT_EQ(lines.size(), 4u) << r.out;  // three, and the summary
        if (!with_formats) {
            EXPECT_NE(
                lines[0].find(" tracepoint pid=100 tid=100 comm=:100 evname=sched:sched_switch "
                              "decoded=0"),
                std::string::npos)
                << lines[0];
            continue;
        }
        EXPECT_NE(lines[1].find(" tracepoint pid=100 tid=100 comm=:100 evname=sched:sched_switch "
                                "prev_comm=alpha prev_pid=100 prev_prio=-2 prev_state=1 "
                                "next_comm=beta next_pid=201 next_prio=120"),
                  std::string::npos)
            << lines[1];
        auto j = kring("script --json '" + file + "'");
        ASSERT_EQ(j.status, 0) << j.err;
        auto first = nlohmann::json::parse(lines_of(j.out).at(0), nullptr, false);
        ASSERT_FALSE(first.is_discarded()) << j.out;
        EXPECT_EQ(first["event"], "tracepoint");
        EXPECT_EQ(first["prev_comm"], "alpha");
        EXPECT_EQ(first["prev_prio"], -2);
        EXPECT_EQ(first["next_pid"], 200);
    }
}

// A producer's records as kring record writes them (a tracepoint
// kring:<name> re-rendered from the channel's format, declared after the
// file was created, its samples without a task): kring script decodes
// every field by name with libtraceevent.
TEST_F(ToolFiles, ScriptDecodesProducerRecords) {
    auto t = pd::kring_format_as_tracepoint(tp_fixture::producer_block, "kring", 65280);
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_EQ(t->body_size, 28u);
    constexpr std::uint64_t st = tp_fixture::sample_type;
    pd::event_attr dummy;
    dummy.name = "kring:producer";
    dummy.attr.size = sizeof(perf_event_attr);
    dummy.attr.type = PERF_TYPE_SOFTWARE;
    dummy.attr.config = PERF_COUNT_SW_DUMMY;
    dummy.attr.sample_type =
        PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
    dummy.attr.sample_id_all = 1;
    dummy.ids = {7};
    const std::string file = path("producer.data");
    auto w = pd::writer::create(file, {dummy});
    ASSERT_TRUE(w) << w.error().message();
    const pd::event_attr a = tp_fixture::attr("kring:my_record", t->format.id, 7 | (1ull << 59));
    ASSERT_TRUE(w->add_attr(a));
    for (int i = 0; i < 3; i++) {
        std::vector<std::byte> body(28);
        const std::uint64_t total = 1000 + std::uint64_t(i);
        const std::int32_t owner = -1 - i;
        std::memcpy(body.data(), &total, 8);
        std::memcpy(body.data() + 8, "who", 3);
        std::memcpy(body.data() + 24, &owner, 4);
        pd::tp_payload pl(t->format);
        pl.set("common_pid", -1).set_bytes(8, body);
        pd::sample s;
        s.id = a.ids[0];
        s.pid = s.tid = std::uint32_t(-1);
        s.time = 1000 + std::uint64_t(i);
        s.has_time = true;
        s.period = 1;
        s.raw = pl.bytes();
        ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
    }
    ASSERT_TRUE(w->write_tracing_data(
        pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&t->format}, 4096)));
    ASSERT_TRUE(w->finish({}));
    auto r = kring("script '" + file + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto lines = lines_of(r.out);
    ASSERT_EQ(lines.size(), 4u) << r.out;  // three, and the summary
    for (int i = 0; i < 3; i++)
        EXPECT_NE(lines[std::size_t(i)].find(" tracepoint pid=- tid=- comm=- "
                                             "evname=kring:my_record total=" +
                                             std::to_string(1000 + i) +
                                             " who=who owner=" + std::to_string(-1 - i)),
                  std::string::npos)
            << lines[std::size_t(i)];
}

// Tracing data whose formats put fields outside what a RAW can hold
// (tp_hostile.hpp: common_type a gigabyte in, a field at a negative
// offset, a __data_loc of 8 bytes, ...) or that libtraceevent does not
// read: report, script and export warn once that the format is refused,
// show every record (its samples decoded=0, the sound format's decoded),
// exit 1. RAWs whose __data_loc points outside them: those samples
// decoded=0, the sound ones decoded, exit 0; so for a print fmt that
// crashes libtraceevent's parser, which kring does not hand it.
TEST_F(ToolFiles, HostileTracepointFormatsAreRefusedNotCrashedOn) {
    for (const auto& s : tp_hostile::shapes()) {
        SCOPED_TRACE(s.name);
        const std::string file = path(std::string("evil-") + s.name + ".data");
        ASSERT_EQ(tp_hostile::write_file(file, s), "");
        const std::string warning = "kring: " + file +
                                    ": tracing data: format sched:(evil|\\?) refused: .+ \\(its "
                                    "samples are not decoded\\)";
        auto check_err = [&](const run_result& r, const char* cmd) {
            if (!s.refused) {
                EXPECT_EQ(r.status, 0) << cmd << ": " << r.err;
                EXPECT_EQ(r.err, "") << cmd;
                return;
            }
            EXPECT_EQ(r.status, 1) << cmd << ": " << r.err;
            const auto err = lines_of(r.err);
            ASSERT_EQ(err.size(), 1u) << cmd << ": " << r.err;
            EXPECT_TRUE(std::regex_match(err[0], std::regex(warning))) << cmd << ": " << err[0];
        };
        auto sc = kring("script '" + file + "'");
        check_err(sc, "script");
        const auto lines = lines_of(sc.out);
        ASSERT_EQ(lines.size(), s.raws.size() + 2) << sc.out;  // the summary last
        for (std::size_t i = 0; i < s.raws.size(); i++) {
            const bool sound = !s.refused && i == 0;
            EXPECT_TRUE(
                lines[i].ends_with(" tracepoint pid=100 tid=100 comm=:100 evname=sched:evil " +
                                   std::string(sound ? s.first : "decoded=0")))
                << lines[i];
        }
        EXPECT_NE(lines[s.raws.size()].find(" evname=sched:sched_switch prev_comm=alpha "
                                            "prev_pid=100 prev_prio=0 prev_state=0 "
                                            "next_comm=beta next_pid=200 next_prio=0"),
                  std::string::npos)
            << lines[s.raws.size()];
        EXPECT_EQ(summary(sc.out, "script")["records"], s.raws.size() + 1) << sc.out;

        auto rp = kring("report '" + file + "'");
        check_err(rp, "report");
        EXPECT_EQ(summary(rp.out, "report")["records"], s.raws.size() + 1) << rp.out;

        const std::string json = path("evil.json");
        auto ex = kring("export --chrome '" + json + "' '" + file + "'");
        check_err(ex, "export");
        EXPECT_FALSE(nlohmann::json::parse(slurp(json), nullptr, false).is_discarded());
    }
}

// -e producer declares its events as the producer's formats come, which
// a stream (its attrs first) cannot carry: refused before anything is
// opened, one usage line, exit 2.
TEST_F(ToolFiles, RecordRefusesProducerIntoAStream) {
    for (const char* args : {"record -e producer -o - -- true",
                             "--device /nonexistent record -e timer -e producer -o - -a"}) {
        auto r = kring(args);
        EXPECT_EQ(r.status, 2) << args;
        EXPECT_EQ(r.err,
                  "kring: -e producer writes a file, not a stream: give -o FILE, not -o - (see "
                  "--help)\n")
            << args;
        EXPECT_EQ(r.out, "") << args;
    }
}

TEST_F(ToolFiles, BadArgumentsExitTwoWithOneLine) {
    for (const char* args : {"report --no-such-option", "script --json --json2", "export",
                             "export --chrome", "stat -I 1", "stat -e bogus", "stat -C 3-1",
                             "report a b c", "bogus", "--device /x bogus", ""}) {
        auto r = kring(args);
        EXPECT_EQ(r.status, 2) << args;
        auto err = lines_of(r.err);
        ASSERT_EQ(err.size(), 1u) << args << ": " << r.err;
        EXPECT_EQ(err[0].rfind("kring: ", 0), 0u) << err[0];
        EXPECT_EQ(r.out, "") << args;
    }
    EXPECT_EQ(kring("bogus").err, "kring: unknown command 'bogus' (see --help)\n");
    EXPECT_EQ(kring("").err, "kring: A subcommand is required (see --help)\n");
}

TEST_F(ToolFiles, MissingFileExitsOneWithErrnoText) {
    for (const char* cmd : {"report", "script", "export --chrome /tmp/x.json"}) {
        auto r = kring(std::string(cmd) + " " + path("missing.data"));
        EXPECT_EQ(r.status, 1) << cmd;
        EXPECT_EQ(r.err,
                  "kring: cannot open " + path("missing.data") + ": No such file or directory\n")
            << cmd;
    }
    // The default file is perf.data in the current directory.
    const std::string cmd =
        "cd '" + dir_ + "' && '" + kring_bin() + "' report 2>'" + path("err") + "' >/dev/null";
    EXPECT_EQ(WEXITSTATUS(std::system(cmd.c_str())), 1);
    EXPECT_EQ(slurp(path("err")), "kring: cannot open perf.data: No such file or directory\n");
}

TEST_F(ToolFiles, MissingDeviceGivesTheHintLine) {
    for (const char* cmd : {"stat -d 1", "info", "sched --duration 0", "synth --count 1"}) {
        auto r = kring(std::string("--device /nonexistent ") + cmd);
        EXPECT_EQ(r.status, 1) << cmd;
        EXPECT_EQ(r.err,
                  "kring: cannot open /nonexistent: No such file or directory (is the module "
                  "loaded? try: sudo insmod kmod/kring.ko)\n")
            << cmd;
    }
}

TEST_F(ToolFiles, EveryCommandHasHelpWithExamples) {
    auto top = kring("--help");
    ASSERT_EQ(top.status, 0);
    // The commands, from the top-level help's list.
    std::vector<std::string> cmds;
    bool in_list = false;
    for (const auto& l : lines_of(top.out)) {
        if (l.rfind("Subcommands:", 0) == 0) {
            in_list = true;
            continue;
        }
        std::smatch m;
        if (in_list && std::regex_match(l, m, std::regex("  ([a-z]+) .*")))
            cmds.push_back(m[1]);
        else if (in_list && !l.empty() && l[0] != ' ')
            in_list = false;
    }
    for (const char* c : {"info", "synth", "sched", "aux", "stat", "report", "script", "export"})
        EXPECT_NE(std::find(cmds.begin(), cmds.end(), c), cmds.end()) << c << "\n" << top.out;
    for (const auto& c : cmds) {
        auto r = kring(c + " --help");
        EXPECT_EQ(r.status, 0) << c;
        const auto ex = r.out.find("Examples:\n");
        EXPECT_NE(ex, std::string::npos) << c << "\n" << r.out;
        EXPECT_TRUE(std::regex_search(r.out.substr(ex == std::string::npos ? 0 : ex),
                                      std::regex("kring " + c + "[ \\n]")))
            << c << "\n"
            << r.out;
    }
    auto v = kring("--version");
    EXPECT_EQ(v.status, 0);
    EXPECT_TRUE(std::regex_match(v.out, std::regex("kring [0-9]+\\.[0-9]+\\.[0-9]+\n"))) << v.out;
}

}  // namespace
