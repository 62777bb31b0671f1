// The helpers of the perf.data component's tests (perf_data_util.hpp).
#include "perf_data_util.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <utility>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

namespace kt {

namespace fs = std::filesystem;

tmpdir::tmpdir() {
    std::string t = ::testing::TempDir() + "kring_perf_data.XXXXXX";
    if (!::mkdtemp(t.data()))
        t.clear();
    path_ = t;
}

tmpdir::~tmpdir() {
    std::error_code ec;
    if (!path_.empty() && !std::getenv("KRING_KEEP_TMP"))
        fs::remove_all(path_, ec);
}

std::vector<std::byte> read_all(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::vector<std::byte> b(c.size());
    std::memcpy(b.data(), c.data(), c.size());
    return b;
}

void write_bytes(const std::string& path, std::span<const std::byte> b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

pd::event_attr clock_attr(std::vector<std::uint64_t> ids) {
    pd::event_attr a;
    a.attr.type = PERF_TYPE_SOFTWARE;
    a.attr.config = PERF_COUNT_SW_CPU_CLOCK;
    a.attr.sample_period = 1000000;
    a.attr.sample_type = k_clock_type;
    a.attr.sample_id_all = 1;
    a.attr.exclude_kernel = 1;
    a.attr.exclude_hv = 1;
    a.name = "cpu-clock";
    a.ids = std::move(ids);
    return a;
}

pd::event_attr sched_attr(std::vector<std::uint64_t> ids) {
    pd::event_attr a;
    a.attr.type = PERF_TYPE_SOFTWARE;
    a.attr.config = PERF_COUNT_SW_DUMMY;
    a.attr.sample_type = k_sched_type;
    a.attr.sample_id_all = 1;
    a.attr.context_switch = 1;
    a.attr.task = 1;
    a.attr.comm = 1;
    a.attr.exclude_kernel = 1;
    a.attr.exclude_hv = 1;
    a.name = "kring:sched";
    a.ids = std::move(ids);
    return a;
}

pd::event_attr aux_attr(std::vector<std::uint64_t> ids) {
    pd::event_attr a = sched_attr(std::move(ids));
    a.attr.context_switch = 0;
    a.attr.task = 0;
    a.attr.comm = 0;
    a.name = "kring:aux";
    return a;
}

pd::sample_id sid(std::uint32_t pid, std::uint32_t tid, std::uint32_t cpu, std::uint64_t time,
                  std::uint64_t id) {
    pd::sample_id s;
    s.pid = pid;
    s.tid = tid;
    s.cpu = cpu;
    s.time = time;
    s.id = id;
    s.has_time = true;
    return s;
}

pd::features test_features() {
    pd::features f;
    f.hostname = "host-a";
    f.osrelease = "6.12.0-kring";
    f.version = "kring";
    f.arch = "x86_64";
    f.cpudesc = "Intel(R) Xeon(R) Gold 6148 CPU @ 2.40GHz";
    f.cpuid = "GenuineIntel,6,85,4";
    f.nr_cpus_available = 4;
    f.nr_cpus_online = 3;
    f.total_mem_kb = 16384000;
    f.cmdline = {"kring", "record", "-a", "-e", "sched", std::string(70, 'x')};
    f.core_siblings = {"0-3"};
    f.thread_siblings = {"0-1", "2-3"};
    f.cpus = {{0, 0, 0}, {0, 0, 0}, {1, 0, 1}, {1, 0, 1}};
    f.clockid = 1;
    f.sample_time = std::make_pair(std::uint64_t{1000}, std::uint64_t{99000});
    pd::kring_section k;
    k.clockid = 1;
    pd::kring_ring_info r;
    r.cpu = 2;
    r.pid = -1;
    r.source = 3;
    r.id = 21;
    r.produced = 100;
    r.written = 90;
    r.lost_no_space = 4;
    r.lost_too_big = 3;
    r.lost_paused = 2;
    r.lost_overwritten = 1;
    r.throttled = 5;
    r.wakeups = 6;
    r.nested = 7;
    r.aux_bytes = 8;
    r.aux_records = 9;
    r.aux_truncated = 10;
    r.aux_snapshots = 11;
    r.lost_ranges = {{4, 10, 13, 500, 600}, {3, 20, 22, 700, 800}};
    k.rings.push_back(r);
    pd::kring_ring_info r2;
    r2.cpu = -1;
    r2.pid = 77;
    r2.id = 22;
    k.rings.push_back(r2);
    f.kring = k;
    return f;
}

void expect_features_eq(const pd::features& a, const pd::features& b) {
    EXPECT_EQ(a.hostname, b.hostname);
    EXPECT_EQ(a.osrelease, b.osrelease);
    EXPECT_EQ(a.version, b.version);
    EXPECT_EQ(a.arch, b.arch);
    EXPECT_EQ(a.cpudesc, b.cpudesc);
    EXPECT_EQ(a.cpuid, b.cpuid);
    EXPECT_EQ(a.nr_cpus_available, b.nr_cpus_available);
    EXPECT_EQ(a.nr_cpus_online, b.nr_cpus_online);
    EXPECT_EQ(a.total_mem_kb, b.total_mem_kb);
    EXPECT_EQ(a.cmdline, b.cmdline);
    EXPECT_EQ(a.core_siblings, b.core_siblings);
    EXPECT_EQ(a.thread_siblings, b.thread_siblings);
    ASSERT_EQ(a.cpus.size(), b.cpus.size());
    for (std::size_t i = 0; i < a.cpus.size(); i++) {
        EXPECT_EQ(a.cpus[i].core_id, b.cpus[i].core_id) << i;
        EXPECT_EQ(a.cpus[i].socket_id, b.cpus[i].socket_id) << i;
        EXPECT_EQ(a.cpus[i].die_id, b.cpus[i].die_id) << i;
    }
    EXPECT_EQ(a.clockid, b.clockid);
    EXPECT_EQ(a.sample_time, b.sample_time);
    ASSERT_EQ(a.kring.has_value(), b.kring.has_value());
    if (!a.kring)
        return;
    EXPECT_EQ(a.kring->version, b.kring->version);
    EXPECT_EQ(a.kring->clockid, b.kring->clockid);
    ASSERT_EQ(a.kring->rings.size(), b.kring->rings.size());
    for (std::size_t i = 0; i < a.kring->rings.size(); i++) {
        const auto &x = a.kring->rings[i], &y = b.kring->rings[i];
        EXPECT_EQ(x.cpu, y.cpu);
        EXPECT_EQ(x.pid, y.pid);
        EXPECT_EQ(x.source, y.source);
        EXPECT_EQ(x.id, y.id);
        EXPECT_EQ(x.produced, y.produced);
        EXPECT_EQ(x.written, y.written);
        EXPECT_EQ(x.lost_no_space, y.lost_no_space);
        EXPECT_EQ(x.lost_too_big, y.lost_too_big);
        EXPECT_EQ(x.lost_paused, y.lost_paused);
        EXPECT_EQ(x.lost_overwritten, y.lost_overwritten);
        EXPECT_EQ(x.throttled, y.throttled);
        EXPECT_EQ(x.wakeups, y.wakeups);
        EXPECT_EQ(x.nested, y.nested);
        EXPECT_EQ(x.aux_bytes, y.aux_bytes);
        EXPECT_EQ(x.aux_records, y.aux_records);
        EXPECT_EQ(x.aux_truncated, y.aux_truncated);
        EXPECT_EQ(x.aux_snapshots, y.aux_snapshots);
        ASSERT_EQ(x.lost_ranges.size(), y.lost_ranges.size());
        for (std::size_t j = 0; j < x.lost_ranges.size(); j++) {
            EXPECT_EQ(x.lost_ranges[j].lost, y.lost_ranges[j].lost);
            EXPECT_EQ(x.lost_ranges[j].first_seq, y.lost_ranges[j].first_seq);
            EXPECT_EQ(x.lost_ranges[j].last_seq, y.lost_ranges[j].last_seq);
            EXPECT_EQ(x.lost_ranges[j].first_time, y.lost_ranges[j].first_time);
            EXPECT_EQ(x.lost_ranges[j].last_time, y.lost_ranges[j].last_time);
        }
    }
}

std::vector<pd::record_view> records_of(const pd::file& f) {
    std::vector<pd::record_view> v;
    EXPECT_TRUE(f.for_each([&](const pd::record_view& r) { v.push_back(r); }));
    return v;
}

every_record build_every_record() {
    every_record e;
    pd::sample s;
    s.id = 11;
    s.ip = 0x401234;
    s.pid = 100;
    s.tid = 101;
    s.time = 5000;
    s.cpu = 1;
    s.period = 1000000;
    e.recs.push_back(pd::make_sample(PERF_RECORD_MISC_USER, s, k_clock_type));
    e.recs.push_back(
        pd::make_comm(100, 101, "worker-1", true, sid(100, 101, 1, 5001, 21), k_sched_type));
    e.recs.push_back(pd::make_mmap2(100, 100, 0x400000, 0x10000, 0x1000, 8, 1, 123456,
                                    PROT_READ | PROT_EXEC, MAP_PRIVATE, "/usr/bin/worker", true,
                                    sid(100, 100, 1, 5002, 21), k_sched_type));
    pd::task_info t{200, 100, 201, 101, 5003};
    e.recs.push_back(pd::make_task(PERF_RECORD_FORK, t, sid(200, 201, 0, 5003, 20), k_sched_type));
    e.recs.push_back(
        pd::make_switch_cpu_wide(true, true, 200, 201, sid(100, 101, 0, 5004, 20), k_sched_type));
    e.recs.push_back(
        pd::make_switch_cpu_wide(false, false, 100, 101, sid(200, 201, 0, 5005, 20), k_sched_type));
    e.recs.push_back(pd::make_lost(20, 17, sid(0, 0, 0, 5006, 20), k_sched_type));
    e.recs.push_back(
        pd::make_aux(4096, 512, PERF_AUX_FLAG_TRUNCATED, sid(100, 101, 0, 5007, 20), k_sched_type));
    e.recs.push_back(pd::make_itrace_start(100, 101, sid(100, 101, 0, 5008, 20), k_sched_type));
    e.recs.push_back(pd::make_task(PERF_RECORD_EXIT, t, sid(200, 201, 0, 5009, 20), k_sched_type));
    e.recs.push_back(pd::make_finished_round());
    pd::sample r;
    r.id = 10;
    r.pid = 1;
    r.tid = 2;
    r.time = 6000;
    std::array<std::byte, 13> raw;
    for (std::size_t i = 0; i < raw.size(); i++)
        raw[i] = std::byte(i + 1);
    r.raw = raw;
    e.recs.push_back(pd::make_sample(0, r, k_clock_type | PERF_SAMPLE_RAW));
    for (int i = 0; i < 37; i++)
        e.aux_payload.push_back(std::byte(0xa0 + i));
    return e;
}

run_result run(const std::string& cmd) {
    run_result r;
    char errf[] = "/tmp/kring_perf_data_err.XXXXXX";
    const int efd = ::mkstemp(errf);
    if (efd < 0)
        return r;
    ::close(efd);
    FILE* p = ::popen((cmd + " 2>" + errf).c_str(), "r");
    if (p) {
        std::array<char, 4096> buf;
        std::size_t n;
        while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0)
            r.out.append(buf.data(), n);
        const int st = ::pclose(p);
        r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
    }
    std::ifstream e(errf);
    std::stringstream ss;
    ss << e.rdbuf();
    r.err = ss.str();
    ::unlink(errf);
    return r;
}

std::string find_perf() {
    for (const char* p : {"/usr/bin/perf", "/usr/local/bin/perf"})
        if (::access(p, X_OK) == 0 && run(std::string(p) + " --version").status == 0)
            return p;
    return {};
}

std::vector<std::string> complaints(const std::string& out,
                                    const std::vector<std::string>& allowed) {
    std::vector<std::string> lines, bad;
    std::stringstream in(out);
    for (std::string line; std::getline(in, line);)
        lines.push_back(line);
    auto is_allowed = [&](const std::string& line) {
        for (const auto& a : allowed)
            if (line.find(a) != std::string::npos)
                return true;
        return false;
    };
    for (std::size_t i = 0; i < lines.size(); i++) {
        const auto& line = lines[i];
        bool is_bad = false;
        for (const char* w :
             {"Warning", "warning", "WARNING", "error", "Error", "failed", "Unknown", "unknown"})
            is_bad |= line.find(w) != std::string::npos;
        if (is_allowed(line))
            is_bad = false;
        if (line == "Warning:") {
            std::size_t j = i + 1;
            while (j < lines.size() && lines[j].empty())
                j++;
            if (j < lines.size() && is_allowed(lines[j]))
                is_bad = false;
        }
        if (is_bad)
            bad.push_back(line);
    }
    return bad;
}

std::size_t count_lines(const std::string& out, const std::string& what) {
    std::size_t n = 0;
    std::stringstream in(out);
    std::string line;
    while (std::getline(in, line))
        n += line.find(what) != std::string::npos;
    return n;
}

std::string show(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& l : v)
        s += "  " + l + "\n";
    return s;
}

}  // namespace kt
