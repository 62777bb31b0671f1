// The tool tests' fixtures (tool_test.cpp, browser_test.cpp): a temporary
// folder with the built `kring` run in it, and a perf.data file of a known
// workload written with libkring's perf_data writer.
#pragma once

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include <linux/kring.h>
#include <linux/kring_test.h>

#include "kring/perf_data.hpp"

namespace kring_tool_test {
namespace fs = std::filesystem;
namespace pd = kring::perf_data;

inline const char* kring_bin() {
    const char* e = std::getenv("KRING_TOOL");
    return e ? e : KRING_TOOL_PATH;
}

struct run_result {
    int status = -1;  // exit status; -1: killed by a signal
    std::string out, err;
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

inline std::vector<std::string> lines_of(const std::string& s) {
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

    // Runs @cmd through the shell, its output kept.
    run_result run(const std::string& cmd) {
        const std::string out = path("stdout"), err = path("stderr");
        const int st = std::system((cmd + " >'" + out + "' 2>'" + err + "'").c_str());
        run_result r;
        if (WIFEXITED(st))
            r.status = WEXITSTATUS(st);
        r.out = slurp(out);
        r.err = slurp(err);
        return r;
    }
    // Runs `kring ARGS` (ARGS already shell-quoted where needed).
    run_result kring(const std::string& args) {
        return run(std::string("'") + kring_bin() + "' " + args);
    }

    std::string dir_;
};

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

}  // namespace kring_tool_test
