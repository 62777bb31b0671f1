// The kring tool's viewing side, end to end on the host: perf.data files of a
// known workload are written with libkring's perf_data writer, then the
// built `kring` runs on them (report, script, script --json, export
// --chrome, report --svg) and what it prints is checked against what was
// written. Also: a file truncated mid-record, bad arguments, a missing file
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

namespace {
namespace fs = std::filesystem;
namespace pd = kring::perf_data;

const char* kring_bin() {
    const char* e = std::getenv("KRING_TOOL");
    return e ? e : KRING_TOOL_PATH;
}

struct run_result {
    int status = -1;  // exit status; -1: killed by a signal
    std::string out, err;
};

std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> lines_of(const std::string& s) {
    std::vector<std::string> v;
    std::istringstream in(s);
    for (std::string l; std::getline(in, l);)
        v.push_back(l);
    return v;
}

class ToolFiles : public ::testing::Test {
protected:
    void SetUp() override {
        char t[] = "/tmp/kring-tool-test.XXXXXX";
        ASSERT_NE(::mkdtemp(t), nullptr);
        dir_ = t;
    }
    void TearDown() override {
        std::error_code ec;
        if (!std::getenv("KRING_KEEP_TMP"))
            fs::remove_all(dir_, ec);
    }
    std::string path(const std::string& name) const { return dir_ + "/" + name; }

    // Runs `kring ARGS` (ARGS already shell-quoted where needed).
    run_result kring(const std::string& args) {
        const std::string out = path("stdout"), err = path("stderr");
        const std::string cmd =
            std::string("'") + kring_bin() + "' " + args + " >'" + out + "' 2>'" + err + "'";
        const int st = std::system(cmd.c_str());
        run_result r;
        if (WIFEXITED(st))
            r.status = WEXITSTATUS(st);
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }

    std::string dir_;
};

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

// ---------------------------------------------------------------------
// The workload

constexpr std::uint64_t clock_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                     PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr std::uint64_t sched_type =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

struct task {
    std::uint32_t pid, tid;
    std::string comm;
};

// Two CPUs; on each, two tasks take turns: switch k on CPU c at time
// base + k * step + c * 7 switches tasks[c][k % 2] out and tasks[c][(k + 1)
// % 2] in (preempted on odd k). Between two switches, two cpu-clock samples
// of the running task. One LOST record (7 records, on CPU 1), three AUX
// records (TRUNCATED, TRUNCATED|PARTIAL, none) with their AUXTRACE data, a
// fork and an exit, and the kring section with the loss by cause.
struct workload {
    static constexpr int switches_per_cpu = 40;
    static constexpr std::uint64_t base = 5'000'000'000, step = 100'000;
    const task tasks[2][2] = {{{100, 100, "alpha"}, {200, 200, "beta"}},
                              {{300, 301, "gamma thread"}, {400, 400, "delta"}}};
    // What was written.
    std::uint64_t records = 0, samples = 0, switch_records = 0, aux_bytes = 0, auxtrace_bytes = 0,
                  aux_packets = 0;
    std::map<std::uint32_t, std::uint64_t> samples_of, switches_of, preempted_of;  // by tid
    // The expected slices: (cpu, start, end) of every task slice.
    std::set<std::tuple<int, std::uint64_t, std::uint64_t>> slices;
    std::uint64_t first_time = 0, last_time = 0;

    static pd::sample_id sid(const task& t, int cpu, std::uint64_t time, std::uint64_t id) {
        pd::sample_id s;
        s.pid = t.pid;
        s.tid = t.tid;
        s.cpu = std::uint32_t(cpu);
        s.time = time;
        s.id = id;
        s.has_time = true;
        return s;
    }

    // @pipe: perf's pipe format, as kring record -o - writes it.
    void write(const std::string& path, bool pipe = false) {
        std::vector<pd::event_attr> attrs(3);
        attrs[0].attr.type = PERF_TYPE_SOFTWARE;
        attrs[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
        attrs[0].attr.sample_period = 1000000;
        attrs[0].attr.sample_type = clock_type;
        attrs[0].attr.sample_id_all = 1;
        attrs[0].name = "cpu-clock";
        attrs[0].ids = {10, 11};
        attrs[1].attr.type = PERF_TYPE_SOFTWARE;
        attrs[1].attr.config = PERF_COUNT_SW_DUMMY;
        attrs[1].attr.sample_type = sched_type;
        attrs[1].attr.sample_id_all = 1;
        attrs[1].attr.context_switch = 1;
        attrs[1].attr.task = 1;
        attrs[1].attr.comm = 1;
        attrs[1].name = "kring:sched";
        attrs[1].ids = {20, 21};
        attrs[2] = attrs[1];
        attrs[2].attr.context_switch = 0;
        attrs[2].attr.task = 0;
        attrs[2].attr.comm = 0;
        attrs[2].name = "kring:aux";
        attrs[2].ids = {30};
        attrs.push_back(attrs[1]);
        attrs[3].attr.sample_type = sched_type | PERF_SAMPLE_RAW;
        attrs[3].attr.context_switch = 0;
        attrs[3].attr.task = 0;
        attrs[3].attr.comm = 0;
        attrs[3].name = "kring:sched_wakeup";
        attrs[3].ids = {20 | (1ull << 62)};
        kring::unique_fd out(
            pipe ? ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644) : -1);
        auto w = pipe ? pd::writer::create_pipe(out.get(), attrs) : pd::writer::create(path, attrs);
        ASSERT_TRUE(w) << w.error().message();
        auto put = [&](const std::vector<std::byte>& r) {
            ASSERT_TRUE(w->write(r));
            records++;
        };

        // COMM of the four tasks, time base - 1000.
        for (int c = 0; c < 2; c++)
            for (const auto& t : tasks[c])
                put(pd::make_comm(t.pid, t.tid, t.comm, false, sid(t, c, base - 1000, 20 + c),
                                  sched_type));
        first_time = base - 1000;
        // CPU 1's records first, then CPU 0's: the file is not in time
        // order across CPUs, the tool must sort.
        for (int c : {1, 0}) {
            std::uint64_t prev_in = 0;  // time of the last switch-in
            for (int k = 0; k < switches_per_cpu; k++) {
                const task& out = tasks[c][k % 2];
                const task& in = tasks[c][(k + 1) % 2];
                const std::uint64_t t = base + std::uint64_t(k) * step + std::uint64_t(c) * 7;
                const bool preempt = k % 2 == 1;
                put(pd::make_switch_cpu_wide(true, preempt, in.pid, in.tid, sid(out, c, t, 20 + c),
                                             sched_type));
                put(pd::make_switch_cpu_wide(false, false, out.pid, out.tid, sid(in, c, t, 20 + c),
                                             sched_type));
                switch_records += 2;
                switches_of[out.tid]++;
                preempted_of[out.tid] += preempt;
                // The slice that ends here: since the last switch-in, or
                // since the first record of the file.
                slices.insert({c, k == 0 ? first_time : prev_in, t});
                prev_in = t;
                // Two samples of the task now running.
                for (int s = 1; s <= 2; s++) {
                    pd::sample smp;
                    smp.id = 10 + std::uint64_t(c);
                    smp.ip = 0x401000 + std::uint64_t(k * 16 + s);
                    smp.pid = in.pid;
                    smp.tid = in.tid;
                    smp.cpu = std::uint32_t(c);
                    smp.time = t + std::uint64_t(s) * 1000;
                    smp.period = 1000000;
                    smp.has_time = true;
                    put(pd::make_sample(PERF_RECORD_MISC_USER, smp, clock_type));
                    samples++;
                    samples_of[in.tid]++;
                }
            }
            put(pd::make_finished_round());
        }
        // Two wakeups of beta by alpha on CPU 0 (kring record's layout:
        // the woken task in TID, the waker and its last CPU in RAW).
        for (int i = 0; i < 2; i++) {
            kring_sched_raw raw{};
            raw.kind = KRING_SCHED_WAKEUP;
            raw.prev_pid = raw.prev_tid = 100;
            raw.next_pid = raw.next_tid = 200;
            raw.prev_state = 0;
            pd::sample smp;
            smp.id = 20 | (1ull << 62);
            smp.pid = smp.tid = 200;
            smp.time = base + 500 + std::uint64_t(i);
            smp.has_time = true;
            smp.raw = std::span(reinterpret_cast<const std::byte*>(&raw), sizeof(raw));
            put(pd::make_sample(PERF_RECORD_MISC_KERNEL, smp, sched_type | PERF_SAMPLE_RAW));
        }
        // Fork and exit of a child of alpha on CPU 0; a LOST on CPU 1.
        const std::uint64_t end = base + switches_per_cpu * step;
        pd::task_info child{500, 100, 500, 100, end + 10};
        put(pd::make_task(PERF_RECORD_FORK, child, sid(tasks[0][0], 0, end + 10, 20), sched_type));
        child.time = end + 20;
        put(pd::make_task(PERF_RECORD_EXIT, child, sid({500, 500, ""}, 0, end + 20, 20),
                          sched_type));
        put(pd::make_lost(21, 7, sid(tasks[1][0], 1, end + 30, 21), sched_type));
        // AUX: three extents and their data.
        // Extent 0: the emulated tracer's packets, a SYNC and 63 DATA;
        // extent 1: a SYNC and 127 DATA with one SEQ skipped (a gap);
        // extent 2: 100 bytes that are not packets.
        const std::uint64_t sizes[3] = {40 + 64 * 63, 40 + 64 * 127, 100};
        const std::uint64_t flags[3] = {PERF_AUX_FLAG_TRUNCATED,
                                        PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_PARTIAL, 0};
        put(pd::make_itrace_start(100, 100, sid(tasks[0][0], 0, end + 35, 30), sched_type));
        std::uint64_t off = 0, seq = 0;
        for (int i = 0; i < 3; i++) {
            put(pd::make_aux(off, sizes[i], flags[i], sid(tasks[0][0], 0, end + 40 + i, 30),
                             sched_type));
            std::vector<std::byte> payload(sizes[i], std::byte(i + 1));
            if (i < 2) {
                std::size_t at = 0;
                auto packet = [&](std::uint16_t type, std::uint16_t len) {
                    kring_aux_packet p{};
                    p.magic = type == KRING_AUX_PKT_SYNC ? KRING_AUX_SYNC_MAGIC : 0;
                    p.type = type;
                    p.len = len;
                    p.seq = seq++;
                    std::memcpy(payload.data() + at, &p, sizeof(p));
                    at += len;
                };
                packet(KRING_AUX_PKT_SYNC, 40);
                for (int n = 0; n < (i == 0 ? 63 : 127); n++) {
                    if (i == 1 && n == 50)
                        seq++;  // lost
                    packet(KRING_AUX_PKT_DATA, 64);
                }
                aux_packets += i == 0 ? 64 : 128;
            }
            ASSERT_TRUE(w->write_auxtrace(payload, off, 0x1234, 0, 100, 0));
            records++;
            aux_bytes += sizes[i];
            auxtrace_bytes += (sizes[i] + 7) & ~std::uint64_t(7);  // stored padded
            off += sizes[i];
        }
        last_time = end + 42;
        // The slices still open at the end run to the last record's time.
        for (int c = 0; c < 2; c++)
            slices.insert({c,
                           base + std::uint64_t(switches_per_cpu - 1) * step + std::uint64_t(c) * 7,
                           last_time});

        pd::features f;
        f.hostname = "test-host";
        f.osrelease = "6.12.0";
        f.arch = "x86_64";
        f.nr_cpus_available = 2;
        f.nr_cpus_online = 2;
        f.cmdline = {"kring", "record", "-a", "-e", "sched", "-e", "timer", "-e", "aux"};
        f.core_siblings = {"0-1"};
        f.thread_siblings = {"0", "1"};
        f.cpus = {{0, 0, 0}, {1, 0, 0}};
        pd::kring_section k;
        for (int c = 0; c < 2; c++) {
            pd::kring_ring_info r;
            r.cpu = c;
            r.source = 2;  // sched
            r.id = 20 + std::uint64_t(c);
            r.produced = 100 + std::uint64_t(c) * 7;
            r.written = 100;
            if (c == 1) {
                r.lost_no_space = 5;
                r.lost_paused = 2;
                r.lost_ranges.push_back({7, 1000, 1006, base, end + 30});
            }
            k.rings.push_back(r);
        }
        f.kring = k;
        ASSERT_TRUE(w->finish(f));
    }
};

class ToolWorkload : public ToolFiles {
protected:
    void SetUp() override {
        ToolFiles::SetUp();
        file_ = path("perf.data");
        ASSERT_NO_FATAL_FAILURE(w_.write(file_));
    }
    workload w_;
    std::string file_;
};

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
