// libkring's perf.data writer and reader (kring/perf_data.hpp): round trips
// of every record builder and feature, files cut at every record offset and
// a writer that never finished, and Debian's perf reading the files this
// writer makes (perf script, perf report), AUX data included.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iterator>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kring/perf_data.hpp"
#include "errno_assert.hpp"
#include "tp_fixture.hpp"

namespace pd = kring::perf_data;
namespace fs = std::filesystem;

// Two functions of this binary that the samples of the perf test land in.
extern "C" __attribute__((noinline)) int kring_perf_data_hot(int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * i;
    asm volatile("" : "+r"(s));
    return s;
}
extern "C" __attribute__((noinline)) int kring_perf_data_cold(int n) {
    int s = 1;
    for (int i = 0; i < n; i++)
        s ^= i;
    asm volatile("" : "+r"(s));
    return s;
}

namespace {

constexpr std::uint64_t k_clock_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                       PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
constexpr std::uint64_t k_sched_type =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

// A directory of its own under the test's temporary directory.
class tmpdir {
public:
    tmpdir() {
        std::string t = ::testing::TempDir() + "kring_perf_data.XXXXXX";
        if (!::mkdtemp(t.data()))
            t.clear();
        path_ = t;
    }
    ~tmpdir() {
        std::error_code ec;
        if (!path_.empty() && !std::getenv("KRING_KEEP_TMP"))
            fs::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    bool ok() const { return !path_.empty(); }

private:
    std::string path_;
};

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

// Every builder once, in a file with a clock and a sched event; the
// records' expected values are checked by the PerfDataRoundTrip tests.
struct every_record {
    std::vector<std::vector<std::byte>> recs;
    std::vector<std::byte> aux_payload;
};

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

// Every builder's record written once (build_every_record()) with an
// AUXTRACE payload, read back: one test per kind of record.
class PerfDataRoundTrip : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_TRUE(d_.ok());
        const auto path = d_.file("rt.data");
        e_ = build_every_record();
        for (const auto& r : e_.recs) {
            ASSERT_EQ(r.size() % 8, 0u);
            perf_event_header h;
            std::memcpy(&h, r.data(), sizeof(h));
            ASSERT_EQ(h.size, r.size());
        }
        auto w = pd::writer::create(path, {clock_attr({10, 11}), sched_attr({20, 21})});
        ASSERT_TRUE(w) << w.error().message();
        for (std::size_t i = 0; i < e_.recs.size() - 1; i++)
            ASSERT_TRUE(w->write(e_.recs[i]));
        ASSERT_TRUE(w->write_auxtrace(e_.aux_payload, 4096, 0xfeed, 3, 101, 1));
        ASSERT_TRUE(w->write(e_.recs.back()));
        feats_ = test_features();
        ASSERT_TRUE(w->finish(feats_));
        EXPECT_FALSE(w->write(e_.recs[0]));  // finished
        data_size_ = w->data_size();

        auto f = pd::file::open(path);
        ASSERT_TRUE(f) << f.error().message();
        f_.emplace(std::move(*f));
        v_ = records_of(*f_);
        ASSERT_EQ(v_.size(), e_.recs.size() + 1);
    }

    tmpdir d_;
    every_record e_;
    pd::features feats_;
    std::uint64_t data_size_ = 0;
    std::optional<pd::file> f_;
    std::vector<pd::record_view> v_;
};

TEST_F(PerfDataRoundTrip, HeaderAttrsAndFeatures) {
    EXPECT_FALSE(f_->truncated()) << f_->truncation_info()->what;
    ASSERT_EQ(f_->attrs().size(), 2u);
    EXPECT_EQ(f_->attrs()[0].name, "cpu-clock");
    EXPECT_EQ(f_->attrs()[1].name, "kring:sched");
    EXPECT_EQ(f_->attrs()[0].ids, (std::vector<std::uint64_t>{10, 11}));
    EXPECT_EQ(f_->attrs()[1].ids, (std::vector<std::uint64_t>{20, 21}));
    EXPECT_EQ(f_->attrs()[0].attr.sample_type, k_clock_type);
    EXPECT_EQ(f_->attrs()[0].attr.config, std::uint64_t{PERF_COUNT_SW_CPU_CLOCK});
    EXPECT_EQ(f_->attrs()[0].attr.sample_period, 1000000u);
    EXPECT_EQ(f_->attrs()[1].attr.context_switch, 1u);
    EXPECT_EQ(f_->attrs()[1].attr.sample_id_all, 1u);
    EXPECT_EQ(f_->attr_by_id(11), &f_->attrs()[0]);
    EXPECT_EQ(f_->attr_by_id(21), &f_->attrs()[1]);
    EXPECT_EQ(f_->attr_by_id(99), nullptr);
    expect_features_eq(f_->feats(), feats_);

    expect_features_eq(f_->feats(), feats_);
}

TEST_F(PerfDataRoundTrip, DataSizeCountsEveryRecordButAuxtrace) {
    std::uint64_t size = 0;
    for (const auto& r : v_)
        if (r.type() != pd::record_auxtrace)
            size += r.bytes.size();
    EXPECT_EQ(size, data_size_);
}

TEST_F(PerfDataRoundTrip, SampleAndComm) {
    auto s = pd::parse_sample(v_[0], k_clock_type);
    ASSERT_TRUE(s);
    EXPECT_EQ(v_[0].misc(), PERF_RECORD_MISC_USER);
    EXPECT_EQ(s->id, 11u);
    EXPECT_EQ(s->ip, 0x401234u);
    EXPECT_EQ(s->pid, 100u);
    EXPECT_EQ(s->tid, 101u);
    EXPECT_EQ(s->time, 5000u);
    EXPECT_TRUE(s->has_time);
    EXPECT_EQ(s->cpu, 1u);
    EXPECT_EQ(s->period, 1000000u);
    EXPECT_EQ(f_->attr_of(v_[0]), &f_->attrs()[0]);

    auto c = pd::parse_comm(v_[1]);
    ASSERT_TRUE(c);
    EXPECT_EQ(c->pid, 100u);
    EXPECT_EQ(c->tid, 101u);
    EXPECT_EQ(c->comm, "worker-1");
    EXPECT_TRUE(c->exec);
    auto cid = pd::parse_sample_id(v_[1], k_sched_type);
    ASSERT_TRUE(cid);
    EXPECT_EQ(cid->time, 5001u);
    EXPECT_EQ(cid->id, 21u);
    EXPECT_EQ(cid->cpu, 1u);
    EXPECT_EQ(cid->pid, 100u);
    EXPECT_EQ(cid->tid, 101u);
    EXPECT_EQ(f_->attr_of(v_[1]), &f_->attrs()[1]);
}

TEST_F(PerfDataRoundTrip, Mmap2AsPerfLaysItOut) {
    EXPECT_EQ(v_[2].type(), std::uint32_t{PERF_RECORD_MMAP2});
    EXPECT_EQ(v_[2].misc(), PERF_RECORD_MISC_USER);
    {  // MMAP2's body as perf_record_mmap2 lays it out
        const std::byte* b = v_[2].bytes.data() + 8;
        std::uint64_t start, len, pgoff, ino;
        std::uint32_t maj, min, prot, flags;
        std::memcpy(&start, b + 8, 8);
        std::memcpy(&len, b + 16, 8);
        std::memcpy(&pgoff, b + 24, 8);
        std::memcpy(&maj, b + 32, 4);
        std::memcpy(&min, b + 36, 4);
        std::memcpy(&ino, b + 40, 8);
        std::memcpy(&prot, b + 56, 4);
        std::memcpy(&flags, b + 60, 4);
        EXPECT_EQ(start, 0x400000u);
        EXPECT_EQ(len, 0x10000u);
        EXPECT_EQ(pgoff, 0x1000u);
        EXPECT_EQ(maj, 8u);
        EXPECT_EQ(min, 1u);
        EXPECT_EQ(ino, 123456u);
        EXPECT_EQ(prot, unsigned(PROT_READ | PROT_EXEC));
        EXPECT_EQ(flags, unsigned(MAP_PRIVATE));
        EXPECT_STREQ(reinterpret_cast<const char*>(b + 64), "/usr/bin/worker");
        EXPECT_EQ(pd::parse_sample_id(v_[2], k_sched_type)->time, 5002u);
    }
}

TEST_F(PerfDataRoundTrip, ForkAndSwitches) {
    auto fork = pd::parse_task(v_[3]);
    ASSERT_TRUE(fork);
    EXPECT_EQ(v_[3].type(), std::uint32_t{PERF_RECORD_FORK});
    EXPECT_EQ(fork->pid, 200u);
    EXPECT_EQ(fork->ppid, 100u);
    EXPECT_EQ(fork->tid, 201u);
    EXPECT_EQ(fork->ptid, 101u);
    EXPECT_EQ(fork->time, 5003u);

    auto out = pd::parse_switch(v_[4]);
    ASSERT_TRUE(out);
    EXPECT_TRUE(out->out);
    EXPECT_TRUE(out->preempt);
    EXPECT_EQ(out->next_prev_pid, 200u);
    EXPECT_EQ(out->next_prev_tid, 201u);
    EXPECT_EQ(pd::parse_sample_id(v_[4], k_sched_type)->tid, 101u);
    auto in = pd::parse_switch(v_[5]);
    ASSERT_TRUE(in);
    EXPECT_FALSE(in->out);
    EXPECT_FALSE(in->preempt);
    EXPECT_EQ(in->next_prev_pid, 100u);
    EXPECT_EQ(pd::parse_sample_id(v_[5], k_sched_type)->time, 5005u);
}

TEST_F(PerfDataRoundTrip, LostAuxItraceExitFinishedRound) {
    auto lost = pd::parse_lost(v_[6]);
    ASSERT_TRUE(lost);
    EXPECT_EQ(lost->id, 20u);
    EXPECT_EQ(lost->lost, 17u);
    EXPECT_EQ(f_->attr_of(v_[6]), &f_->attrs()[1]);

    auto aux = pd::parse_aux(v_[7]);
    ASSERT_TRUE(aux);
    EXPECT_EQ(aux->aux_offset, 4096u);
    EXPECT_EQ(aux->aux_size, 512u);
    EXPECT_EQ(aux->flags, std::uint64_t{PERF_AUX_FLAG_TRUNCATED});

    EXPECT_EQ(v_[8].type(), std::uint32_t{PERF_RECORD_ITRACE_START});
    EXPECT_EQ(pd::parse_sample_id(v_[8], k_sched_type)->time, 5008u);
    auto exit = pd::parse_task(v_[9]);
    ASSERT_TRUE(exit);
    EXPECT_EQ(v_[9].type(), std::uint32_t{PERF_RECORD_EXIT});
    EXPECT_EQ(exit->pid, 200u);

    EXPECT_EQ(v_[10].type(), std::uint32_t{pd::record_finished_round});
    EXPECT_EQ(v_[10].bytes.size(), 8u);
    EXPECT_EQ(f_->attr_of(v_[10]), nullptr);
}

TEST_F(PerfDataRoundTrip, AuxtraceKeptBehindTheData) {
    auto at = pd::parse_auxtrace(v_[11]);
    ASSERT_TRUE(at);
    EXPECT_EQ(at->size, 40u);  // 37 padded to 8
    EXPECT_EQ(at->offset, 4096u);
    EXPECT_EQ(at->reference, 0xfeedu);
    EXPECT_EQ(at->idx, 3u);
    EXPECT_EQ(at->tid, 101u);
    EXPECT_EQ(at->cpu, 1u);
    ASSERT_EQ(v_[11].auxtrace.size(), 40u);
    // Kept in the feat_kring_auxtrace section, behind the data.
    EXPECT_GT(v_[11].offset, v_[12].offset);
    EXPECT_TRUE(std::equal(e_.aux_payload.begin(), e_.aux_payload.end(), v_[11].auxtrace.begin()));
}

TEST_F(PerfDataRoundTrip, RawSamplePadded) {
    auto raw = pd::parse_sample(v_[12], k_clock_type | PERF_SAMPLE_RAW);
    ASSERT_TRUE(raw);
    EXPECT_EQ(raw->id, 10u);
    EXPECT_EQ(raw->time, 6000u);
    ASSERT_GE(raw->raw.size(), 13u);
    EXPECT_EQ(raw->raw.size() % 8, 4u);  // u32 size + bytes end on 8 bytes
    for (std::size_t i = 0; i < 13; i++)
        EXPECT_EQ(raw->raw[i], std::byte(i + 1));
}

TEST_F(PerfDataRoundTrip, ParsersRefuseOtherTypesAndShortRecords) {
    // Parsers refuse records of other types or too short.
    EXPECT_FALSE(pd::parse_comm(v_[0]));
    EXPECT_FALSE(pd::parse_sample(v_[1], k_clock_type));
    EXPECT_FALSE(pd::parse_switch(v_[3]));
    EXPECT_FALSE(pd::parse_task(v_[4]));
    EXPECT_FALSE(pd::parse_lost(v_[7]));
    EXPECT_FALSE(pd::parse_aux(v_[6]));
    EXPECT_FALSE(pd::parse_auxtrace(v_[10]));
    pd::record_view shortr;
    shortr.bytes = std::span<const std::byte>(v_[0].bytes.data(), 16);
    EXPECT_FALSE(pd::parse_sample(shortr, k_clock_type));
}

TEST(PerfData, SampleFieldsInPerfOrder) {
    // ID, STREAM_ID and ADDR, which kring does not write, are skipped in
    // perf's order; the trailer puts IDENTIFIER last.
    const std::uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
                             PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
                             PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD;
    pd::sample s;
    s.id = 7;
    s.ip = 8;
    s.pid = 9;
    s.tid = 10;
    s.time = 11;
    s.cpu = 12;
    s.period = 13;
    auto b = pd::make_sample(0, s, st);
    EXPECT_EQ(b.size(), 8u + 8 * 8);
    pd::record_view r;
    r.bytes = b;
    auto p = pd::parse_sample(r, st);
    ASSERT_TRUE(p);
    EXPECT_EQ(p->id, 7u);
    EXPECT_EQ(p->ip, 8u);
    EXPECT_EQ(p->tid, 10u);
    EXPECT_EQ(p->cpu, 12u);
    EXPECT_EQ(p->period, 13u);

    const std::uint64_t all = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |
                              PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
    auto l = pd::make_lost(1, 2, sid(3, 4, 5, 6, 77), all);
    ASSERT_EQ(l.size(), 24u + 6 * 8);
    std::uint64_t last, time;
    std::uint32_t pid, cpu;
    std::memcpy(&last, l.data() + l.size() - 8, 8);
    std::memcpy(&pid, l.data() + 24, 4);
    std::memcpy(&time, l.data() + 32, 8);
    std::memcpy(&cpu, l.data() + 56, 4);
    EXPECT_EQ(last, 77u);  // IDENTIFIER last
    EXPECT_EQ(pid, 3u);    // TID first
    EXPECT_EQ(time, 6u);
    EXPECT_EQ(cpu, 5u);
    r.bytes = l;
    auto id = pd::parse_sample_id(r, all);
    ASSERT_TRUE(id);
    EXPECT_EQ(id->id, 77u);
    EXPECT_EQ(id->tid, 4u);
    EXPECT_EQ(id->time, 6u);
    EXPECT_EQ(id->cpu, 5u);
}

TEST(PerfData, KringSectionRejectsBadLengths) {
    auto k = *test_features().kring;
    auto b = pd::encode(k);
    ASSERT_TRUE(pd::decode_kring_section(b));
    // Every cut of the section is refused or decodes fewer rings, never
    // read past the bytes.
    for (std::size_t n = 0; n + 8 <= b.size(); n += 4) {
        std::vector<std::byte> cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(n));
        auto d = pd::decode_kring_section(cut);
        EXPECT_FALSE(d) << "cut at " << n;
    }
    auto big = b;
    const std::uint32_t nr = 0x40000000;
    std::memcpy(big.data() + 8, &nr, 4);
    EXPECT_FALSE(pd::decode_kring_section(big));
    auto small = b;
    const std::uint32_t ring_size = 8;
    std::memcpy(small.data() + 12, &ring_size, 4);
    EXPECT_FALSE(pd::decode_kring_section(small));
}

TEST(PerfData, FeaturesFromSystem) {
    const char* argv[] = {"kring", "record", "-a"};
    auto f = pd::features::from_system(3, argv);
    EXPECT_EQ(f.cmdline, (std::vector<std::string>{"kring", "record", "-a"}));
    EXPECT_FALSE(f.osrelease.empty());
    EXPECT_FALSE(f.arch.empty());
    EXPECT_GT(f.total_mem_kb, 0u);
    EXPECT_GE(f.nr_cpus_available, f.nr_cpus_online);
    EXPECT_EQ(f.nr_cpus_online, static_cast<std::uint32_t>(::sysconf(_SC_NPROCESSORS_ONLN)));
    EXPECT_EQ(f.cpus.size(), f.nr_cpus_available);
    EXPECT_FALSE(f.core_siblings.empty());
    EXPECT_FALSE(f.thread_siblings.empty());
#if defined(__x86_64__)
    // perf's x86 cpuid: vendor,family,model,stepping.
    EXPECT_EQ(std::count(f.cpuid.begin(), f.cpuid.end(), ','), 3) << f.cpuid;
    EXPECT_FALSE(f.cpudesc.empty());
    EXPECT_EQ(f.cpudesc.find("  "), std::string::npos) << f.cpudesc;
#endif
    // It round-trips through a file.
    tmpdir d;
    ASSERT_TRUE(d.ok());
    auto w = pd::writer::create(d.file("sys.data"), {clock_attr({1})});
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->finish(f));
    auto r = pd::file::open(d.file("sys.data"));
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->truncated());
    expect_features_eq(r->feats(), f);
}

// A file with two rounds of records; returns the record offsets.
std::vector<std::uint64_t> write_small_file(const std::string& path, bool finish) {
    auto e = build_every_record();
    auto w = pd::writer::create(path, {clock_attr({10, 11}), sched_attr({20, 21})});
    EXPECT_TRUE(w);
    std::vector<std::uint64_t> offs;
    std::uint64_t at = 0;
    for (std::size_t i = 0; i < e.recs.size(); i++) {
        offs.push_back(at);
        EXPECT_TRUE(w->write(e.recs[i]));
        at += e.recs[i].size();
        if (i == 5) {
            EXPECT_TRUE(w->write_auxtrace(e.aux_payload, 0, 1, 0, 101, 0));
        }
    }
    if (finish) {
        EXPECT_TRUE(w->finish(test_features()));
    }
    return offs;
}

TEST(PerfData, TruncatedAtEveryOffset) {
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("full.data");
    auto offs = write_small_file(path, true);
    const auto full = read_all(path);
    auto f = pd::file::open(path);
    ASSERT_TRUE(f);
    ASSERT_FALSE(f->truncated());
    const std::size_t nrec = records_of(*f).size();
    ASSERT_EQ(nrec, offs.size() + 1);  // and the AUXTRACE record
    // The header's data section (perf_file_header: offset at 40, size at 48).
    std::uint64_t data_at, data_size;
    std::memcpy(&data_at, full.data() + 40, 8);
    std::memcpy(&data_size, full.data() + 48, 8);
    ASSERT_GT(data_size, offs.back());
    // Cut at every 8-byte offset in the last records (from the 4th record
    // on) and in the features (the AUXTRACE section's included).
    for (std::uint64_t cut = data_at + offs[3]; cut < full.size(); cut += 8) {
        SCOPED_TRACE("cut at " + std::to_string(cut));
        const auto p = d.file("cut.data");
        write_bytes(p, std::span<const std::byte>(full.data(), cut));
        auto c = pd::file::open(p);
        ASSERT_TRUE(c) << c.error().message();
        ASSERT_TRUE(c->truncated());
        const auto& t = *c->truncation_info();
        std::size_t n = 0;
        std::uint64_t end = data_at;
        ASSERT_TRUE(c->for_each([&](const pd::record_view& r) {
            n++;
            end = r.offset + r.bytes.size() + r.auxtrace.size();
            EXPECT_LE(end, cut);
        }));
        if (cut < data_at + data_size) {
            // The first record that is not whole is where it stops.
            std::size_t whole = 0;
            while (whole < offs.size() && data_at + offs[whole] + 8 <= cut &&
                   (whole + 1 < offs.size() ? data_at + offs[whole + 1] <= cut
                                            : data_at + data_size <= cut))
                whole++;
            EXPECT_EQ(n, whole);
            EXPECT_EQ(t.offset, whole < offs.size() ? data_at + offs[whole] : cut);
            EXPECT_EQ(t.offset, end);
            EXPECT_NE(t.what.find(std::to_string(t.offset)), std::string::npos) << t.what;
        } else {
            // The data is whole, the features are cut (the AUXTRACE record
            // is there when its section is).
            EXPECT_GE(n, nrec - 1);
            EXPECT_GE(t.offset, data_at + data_size);
            EXPECT_LE(t.offset, cut);
        }
    }
}

TEST(PerfData, UnfinishedWriterReadsAsTruncated) {
    tmpdir d;
    ASSERT_TRUE(d.ok());
    // A writer that never finished, its buffer flushed at a record boundary
    // (the whole file), then cut inside the last record.
    const auto path = d.file("unfinished.data");
    {
        auto e = build_every_record();
        auto w = pd::writer::create(path, {clock_attr({10, 11}), sched_attr({20, 21})});
        ASSERT_TRUE(w);
        // More than the writer's buffer, so that part of it reaches the file.
        std::size_t n = 0;
        while (w->data_size() < 300 * 1024) {
            ASSERT_TRUE(w->write(e.recs[n % (e.recs.size() - 1)]));
            n++;
        }
        // No finish(): the copy below is what a killed writer leaves.
        std::error_code ec;
        fs::copy_file(path, d.file("killed.data"), ec);
        ASSERT_FALSE(ec);
    }
    auto k = pd::file::open(d.file("killed.data"));
    ASSERT_TRUE(k) << k.error().message();
    EXPECT_TRUE(k->truncated());
    EXPECT_EQ(k->attrs().size(), 2u);  // the attrs are there from the start
    std::size_t n = 0;
    std::uint64_t end = 0;
    ASSERT_TRUE(k->for_each([&](const pd::record_view& r) {
        n++;
        end = r.offset + r.bytes.size();
    }));
    EXPECT_GT(n, 1000u);
    EXPECT_EQ(k->truncation_info()->offset, end);
    EXPECT_NE(k->truncation_info()->what.find("did not finish"), std::string::npos)
        << k->truncation_info()->what;

    // Destroyed without finish(): the header still says data size 0, and
    // every record written is there.
    auto u = pd::file::open(path);
    ASSERT_TRUE(u);
    EXPECT_TRUE(u->truncated());
    EXPECT_GT(records_of(*u).size(), n);
    const auto full = read_all(path);
    std::uint64_t data_size;
    std::memcpy(&data_size, full.data() + 48, 8);
    EXPECT_EQ(data_size, 0u);

    // Cut inside a record.
    const auto cut = std::span<const std::byte>(full.data(), full.size() - 12);
    write_bytes(d.file("cut.data"), cut);
    auto c = pd::file::open(d.file("cut.data"));
    ASSERT_TRUE(c);
    ASSERT_TRUE(c->truncated());
    std::uint64_t last = 0;
    ASSERT_TRUE(c->for_each([&](const pd::record_view& r) { last = r.offset + r.bytes.size(); }));
    EXPECT_EQ(c->truncation_info()->offset, last);
    EXPECT_LT(last, cut.size());
    EXPECT_NE(c->truncation_info()->what.find("past the end of the file"), std::string::npos)
        << c->truncation_info()->what;
}

TEST(PerfData, TruncationReasons) {
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("r.data");
    write_small_file(path, true);
    const auto full = read_all(path);
    std::uint64_t data_at;
    std::memcpy(&data_at, full.data() + 40, 8);
    auto with = [&](std::uint64_t off, std::uint16_t size) {
        auto b = full;
        std::memcpy(b.data() + data_at + off + 6, &size, 2);
        return pd::file::from_bytes(b);
    };
    auto z = with(0, 0);
    ASSERT_TRUE(z);
    ASSERT_TRUE(z->truncated());
    EXPECT_EQ(z->truncation_info()->offset, data_at);
    EXPECT_NE(z->truncation_info()->what.find("size 0"), std::string::npos);
    auto odd = with(0, 12);
    ASSERT_TRUE(odd);
    ASSERT_TRUE(odd->truncated());
    EXPECT_NE(odd->truncation_info()->what.find("multiple of 8"), std::string::npos);
    auto big = with(0, 0xfff8);
    ASSERT_TRUE(big);
    ASSERT_TRUE(big->truncated());
    EXPECT_NE(big->truncation_info()->what.find("runs past"), std::string::npos);
    EXPECT_EQ(records_of(*big).size(), 0u);

    // The data section ends past the end of the file.
    auto b = full;
    const std::uint64_t huge = 1 << 20;
    std::memcpy(b.data() + 48, &huge, 8);
    auto past = pd::file::from_bytes(b);
    ASSERT_TRUE(past);
    ASSERT_TRUE(past->truncated());
    EXPECT_GT(records_of(*past).size(), 5u);
    // And starts past it.
    b = full;
    const std::uint64_t far = full.size() + 64;
    std::memcpy(b.data() + 40, &far, 8);
    auto start = pd::file::from_bytes(b);
    ASSERT_TRUE(start);
    ASSERT_TRUE(start->truncated());
    EXPECT_EQ(start->truncation_info()->offset, full.size());
    EXPECT_EQ(records_of(*start).size(), 0u);
}

TEST(PerfData, NotPerfDataIsAnError) {
    tmpdir d;
    ASSERT_TRUE(d.ok());
    auto missing = pd::file::open(d.file("none.data"));
    ASSERT_FALSE(missing);
    EXPECT_ERRNO(missing.error().code(), ENOENT);
    EXPECT_NE(missing.error().message().find("none.data"), std::string::npos);
    write_bytes(d.file("empty.data"), {});
    auto empty = pd::file::open(d.file("empty.data"));
    ASSERT_FALSE(empty);
    EXPECT_ERRNO(empty.error().code(), EINVAL);

    write_small_file(d.file("ok.data"), true);
    const auto full = read_all(d.file("ok.data"));
    auto bad = full;
    bad[0] = std::byte{'X'};
    auto m = pd::file::from_bytes(bad);
    ASSERT_FALSE(m);
    EXPECT_NE(m.error().message().find("PERFILE2"), std::string::npos);
    bad = full;
    const std::uint64_t attr_size = 8;
    std::memcpy(bad.data() + 16, &attr_size, 8);
    EXPECT_FALSE(pd::file::from_bytes(bad));
    bad = full;
    const std::uint64_t attrs_at = full.size();
    std::memcpy(bad.data() + 24, &attrs_at, 8);
    EXPECT_FALSE(pd::file::from_bytes(bad));

    // The writer refuses malformed records.
    auto w = pd::writer::create(d.file("w.data"), {clock_attr({1})});
    ASSERT_TRUE(w);
    std::vector<std::byte> rec(16);
    perf_event_header h{PERF_RECORD_SAMPLE, 0, 24};
    std::memcpy(rec.data(), &h, sizeof(h));
    EXPECT_ERRNO(w->write(rec).error().code(), EINVAL);
    h.size = 12;
    std::memcpy(rec.data(), &h, sizeof(h));
    EXPECT_FALSE(w->write(std::span<const std::byte>(rec.data(), 12)));
    EXPECT_FALSE(w->write(std::span<const std::byte>(rec.data(), 4)));
    auto no = pd::writer::create(d.file("no/such/dir.data"), {});
    ASSERT_FALSE(no);
    EXPECT_ERRNO(no.error().code(), ENOENT);
}

// Regression (libFuzzer): an attr without ids (ids section of size 0) read
// an empty id array from a null pointer.
TEST(PerfData, AttrWithoutIds) {
    tmpdir d;
    ASSERT_TRUE(d.ok());
    auto w = pd::writer::create(d.file("noids.data"), {clock_attr({}), sched_attr({5})});
    ASSERT_TRUE(w);
    ASSERT_TRUE(w->finish({}));
    auto f = pd::file::open(d.file("noids.data"));
    ASSERT_TRUE(f) << f.error().message();
    ASSERT_EQ(f->attrs().size(), 2u);
    EXPECT_TRUE(f->attrs()[0].ids.empty());
    EXPECT_EQ(f->attrs()[1].ids, std::vector<std::uint64_t>{5});
    EXPECT_EQ(f->attrs()[0].name, "cpu-clock");
    EXPECT_FALSE(f->truncated());
    EXPECT_TRUE(records_of(*f).empty());
}

// ---------------------------------------------------------------------------
// perf reads the files.

struct run_result {
    int status = -1;
    std::string out, err;
    std::string both() const { return "stdout:\n" + out + "stderr:\n" + err; }
};

// @cmd through the shell, its stdout and stderr apart.
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

// perf's lines that say something went wrong. A line of @allowed text is
// not, nor the "Warning:" line right before it.
std::vector<std::string> complaints(const std::string& out,
                                    const std::vector<std::string>& allowed = {}) {
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

// The executable mapping of this binary (/proc/self/maps).
struct exe_map {
    std::uint64_t start = 0, end = 0, pgoff = 0, ino = 0;
    unsigned maj = 0, min = 0;
    std::string path;
};

std::optional<exe_map> find_exe_map() {
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec)
        return std::nullopt;
    std::ifstream in("/proc/self/maps");
    std::string line;
    const auto hot = reinterpret_cast<std::uint64_t>(&kring_perf_data_hot);
    while (std::getline(in, line)) {
        exe_map m;
        char perms[8] = {};
        unsigned long long s, e, off, ino;
        int pos = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off,
                        &m.maj, &m.min, &ino, &pos) < 7)
            continue;
        m.start = s;
        m.end = e;
        m.pgoff = off;
        m.ino = ino;
        m.path = line.substr(static_cast<std::size_t>(pos));
        if (perms[2] == 'x' && m.path == exe && hot >= m.start && hot < m.end)
            return m;
    }
    return std::nullopt;
}

// A file shaped like a kring recording (docs/TOOL.md): cpu-clock samples
// in this binary's functions, two tasks switching on two CPUs, fork and
// exit, a LOST record, rounds, the kring section.
struct recording {
    std::size_t switches = 0, samples = 0, hot = 0, lost = 0;
};

// @pipe: perf's pipe format (create_pipe() writing to the file, which it
// never seeks: what a pipe would carry).
recording write_recording(const std::string& path, const exe_map& m, bool with_lost,
                          bool pipe = false) {
    recording rec;
    const std::uint32_t pid = static_cast<std::uint32_t>(::getpid());
    const std::uint32_t other = 4242;
    std::vector<pd::event_attr> attrs = {clock_attr({10, 11}), sched_attr({20, 21})};
    kring::result<pd::writer> w = kring::error(EBADF, "no output");
    if (pipe) {
        kring::unique_fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        EXPECT_TRUE(fd) << path;
        w = pd::writer::create_pipe(fd.get(), std::move(attrs));
    } else {
        w = pd::writer::create(path, std::move(attrs));
    }
    EXPECT_TRUE(w) << w.error().message();
    std::uint64_t t = 1000000000;
    auto put = [&](const std::vector<std::byte>& b) { EXPECT_TRUE(w->write(b)); };
    put(pd::make_comm(pid, pid, "pd-test-a", false, sid(pid, pid, 0, t, 20), k_sched_type));
    put(pd::make_mmap2(pid, pid, m.start, m.end - m.start, m.pgoff, m.maj, m.min, m.ino,
                       PROT_READ | PROT_EXEC, MAP_PRIVATE, m.path, true, sid(pid, pid, 0, t, 20),
                       k_sched_type));
    put(pd::make_task(PERF_RECORD_FORK, {other, pid, other, pid, t + 10},
                      sid(other, other, 1, t + 10, 21), k_sched_type));
    put(pd::make_comm(other, other, "pd-test-b", false, sid(other, other, 1, t + 11, 21),
                      k_sched_type));
    put(pd::make_finished_round());
    const auto hot = reinterpret_cast<std::uint64_t>(&kring_perf_data_hot) + 4;
    const auto cold = reinterpret_cast<std::uint64_t>(&kring_perf_data_cold) + 4;
    t += 1000;
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < 8; i++) {
            t += 1000;
            pd::sample s;
            const bool on_hot = i % 4 != 3;
            s.id = on_hot ? 10 : 11;
            s.cpu = on_hot ? 0 : 1;
            s.ip = on_hot ? hot : cold;
            s.pid = on_hot ? pid : other;
            s.tid = s.pid;
            s.time = t;
            s.period = 1000000;
            put(pd::make_sample(PERF_RECORD_MISC_USER, s, k_clock_type));
            rec.samples++;
            rec.hot += on_hot;
        }
        // A switch pair on each CPU: the two tasks change places.
        for (std::uint32_t cpu = 0; cpu < 2; cpu++) {
            const std::uint32_t prev = (cpu + round) % 2 ? other : pid;
            const std::uint32_t next = prev == pid ? other : pid;
            t += 100;
            put(pd::make_switch_cpu_wide(true, round % 2 == 0, next, next,
                                         sid(prev, prev, cpu, t, 20 + cpu), k_sched_type));
            t += 100;
            put(pd::make_switch_cpu_wide(false, false, prev, prev,
                                         sid(next, next, cpu, t, 20 + cpu), k_sched_type));
            rec.switches += 2;
        }
        if (with_lost && round == 3) {
            put(pd::make_lost(21, 5, sid(0, 0, 1, t + 1, 21), k_sched_type));
            rec.lost++;
        }
        put(pd::make_finished_round());
    }
    t += 1000;
    put(pd::make_task(PERF_RECORD_EXIT, {other, pid, other, pid, t}, sid(other, other, 1, t, 21),
                      k_sched_type));
    put(pd::make_finished_round());
    auto f = test_features();
    const char* argv[] = {"kring", "record", "-a", "-e", "sched", "-e", "timer"};
    auto sys = pd::features::from_system(7, argv);
    f.hostname = sys.hostname;
    f.osrelease = sys.osrelease;
    f.arch = sys.arch;
    f.cpudesc = sys.cpudesc;
    f.cpuid = sys.cpuid;
    f.nr_cpus_available = sys.nr_cpus_available;
    f.nr_cpus_online = sys.nr_cpus_online;
    f.core_siblings = sys.core_siblings;
    f.thread_siblings = sys.thread_siblings;
    f.cpus = sys.cpus;
    f.cmdline = sys.cmdline;
    f.sample_time = std::make_pair(std::uint64_t{1000000000}, t);
    EXPECT_TRUE(w->finish(f));
    return rec;
}

std::string fmt_pct(double p) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.2f%%", p);
    return b;
}

std::string show(const std::vector<std::string>& v) {
    std::string s;
    for (const auto& l : v)
        s += "  " + l + "\n";
    return s;
}

TEST(PerfData, PerfScriptAndReportReadIt) {
    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "perf is not installed (Debian: linux-perf; tools/dev/deps.sh)";
    auto m = find_exe_map();
    ASSERT_TRUE(m) << "no executable mapping of this binary in /proc/self/maps";
    // Keep the functions in the binary.
    ASSERT_NE(kring_perf_data_hot(10) + kring_perf_data_cold(10), -1);
    tmpdir d;
    ASSERT_TRUE(d.ok());

    for (bool with_lost : {false, true}) {
        SCOPED_TRACE(with_lost ? "with a LOST record" : "without loss");
        const auto path = d.file(with_lost ? "lost.data" : "rec.data");
        const auto rec = write_recording(path, *m, with_lost);
        // perf warns of LOST records as it does of its own recordings'
        // (perf_session__warn_about_errors): exactly that warning, with
        // the count written, is expected.
        std::vector<std::string> allowed;
        if (with_lost)
            allowed = {"Processed ", "Check IO/CPU overload"};

        auto s = run(perf + " script -i " + path + " --show-switch-events");
        EXPECT_EQ(s.status, 0) << s.both();
        auto bad = complaints(s.out + s.err, allowed);
        EXPECT_TRUE(bad.empty()) << "perf script complained:\n" << show(bad) << s.both();
        EXPECT_EQ(count_lines(s.out, "PERF_RECORD_SWITCH_CPU_WIDE"), rec.switches) << s.out;
        EXPECT_EQ(count_lines(s.out, "PERF_RECORD_SWITCH_CPU_WIDE OUT"), rec.switches / 2);
        EXPECT_EQ(count_lines(s.out, "cpu-clock:"), rec.samples) << s.out;
        EXPECT_EQ(count_lines(s.out, "kring_perf_data_hot+"), rec.hot) << s.out;

        auto r = run(perf + " report --stdio -i " + path);
        EXPECT_EQ(r.status, 0) << r.both();
        bad = complaints(r.out + r.err, allowed);
        EXPECT_TRUE(bad.empty()) << "perf report complained:\n" << show(bad) << r.both();
        if (with_lost) {
            EXPECT_EQ(count_lines(r.err, "lost " + std::to_string(rec.lost) + " chunks"), 1u)
                << r.both();
        }
        std::stringstream in(r.out);
        // The top entry: the first line with a percentage.
        std::string line, top;
        while (std::getline(in, line))
            if (line.find('%') != std::string::npos && line.rfind('#', 0) != 0) {
                top = line;
                break;
            }
        EXPECT_NE(top.find("kring_perf_data_hot"), std::string::npos) << r.out;
        const auto pct = 100.0 * double(rec.hot) / double(rec.samples);
        EXPECT_NE(top.find(fmt_pct(pct)), std::string::npos) << top;
    }
}

// The same recording in perf's pipe format, fed to perf through a pipe
// (perf script -i -, perf report -i -): the same switches, samples and top
// entry as the file; read back by file::open() as complete, every record
// in order, the stream's attr and feature records not among them. A cut
// stream is truncated with every whole record before the cut.
TEST(PerfData, PipeFormatReadsLikeTheFile) {
    auto m = find_exe_map();
    ASSERT_TRUE(m) << "no executable mapping of this binary in /proc/self/maps";
    ASSERT_NE(kring_perf_data_hot(10) + kring_perf_data_cold(10), -1);
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto file = d.file("rec.data"), stream = d.file("rec.pipe");
    const auto rec = write_recording(file, *m, false);
    ASSERT_EQ(write_recording(stream, *m, false, true).samples, rec.samples);

    auto ff = pd::file::open(file);
    auto fs = pd::file::open(stream);
    ASSERT_TRUE(ff && fs) << (fs ? "" : fs.error().message());
    EXPECT_FALSE(fs->truncated()) << fs->truncation_info()->what;
    ASSERT_EQ(fs->attrs().size(), 2u);
    EXPECT_EQ(fs->attrs()[0].ids, (std::vector<std::uint64_t>{10, 11}));
    EXPECT_EQ(fs->attrs()[1].ids, (std::vector<std::uint64_t>{20, 21}));
    EXPECT_EQ(fs->attrs()[0].name, "cpu-clock");
    EXPECT_EQ(fs->feats().hostname, ff->feats().hostname);
    EXPECT_EQ(fs->feats().sample_time, ff->feats().sample_time);
    EXPECT_FALSE(fs->feats().kring.has_value());  // perf's features only
    auto a = records_of(*ff), b = records_of(*fs);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); i++)
        ASSERT_TRUE(
            std::equal(a[i].bytes.begin(), a[i].bytes.end(), b[i].bytes.begin(), b[i].bytes.end()))
            << "record " << i;

    // Cut before the features: every record, truncated.
    std::ifstream in(stream, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t last = std::size_t(b.back().offset + b.back().bytes.size());
    std::vector<std::byte> cut(last);
    std::memcpy(cut.data(), bytes.data(), last);
    auto fc = pd::file::from_bytes(cut);
    ASSERT_TRUE(fc) << fc.error().message();
    EXPECT_TRUE(fc->truncated());
    EXPECT_EQ(records_of(*fc).size(), b.size());
    // Cut inside the attrs: no attr, an error that says so.
    cut.resize(20);
    auto fa = pd::file::from_bytes(cut);
    ASSERT_FALSE(fa);
    EXPECT_NE(fa.error().message().find("without an attr record"), std::string::npos)
        << fa.error().message();

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "perf is not installed (Debian: linux-perf; tools/dev/deps.sh)";
    for (const char* form : {"file", "pipe"}) {
        SCOPED_TRACE(form);
        auto s = run(std::string(form) == "file"
                         ? perf + " script -i " + file + " --show-switch-events"
                         : "cat " + stream + " | " + perf + " script -i - --show-switch-events");
        EXPECT_EQ(s.status, 0) << s.both();
        auto bad = complaints(s.out + s.err, {});
        EXPECT_TRUE(bad.empty()) << "perf script complained:\n" << show(bad) << s.both();
        EXPECT_EQ(count_lines(s.out, "PERF_RECORD_SWITCH_CPU_WIDE"), rec.switches) << s.out;
        EXPECT_EQ(count_lines(s.out, "cpu-clock:"), rec.samples) << s.out;
        EXPECT_EQ(count_lines(s.out, "kring_perf_data_hot+"), rec.hot) << s.out;
        auto r = run(std::string(form) == "file"
                         ? perf + " report --stdio -i " + file
                         : "cat " + stream + " | " + perf + " report --stdio -i -");
        EXPECT_EQ(r.status, 0) << r.both();
        bad = complaints(r.out + r.err, {});
        EXPECT_TRUE(bad.empty()) << "perf report complained:\n" << show(bad) << r.both();
        EXPECT_NE(r.out.find("kring_perf_data_hot"), std::string::npos) << r.out;
    }
}

// AUX data as kring stores it (userlib/perf_data/): PERF_RECORD_ITRACE_START and
// PERF_RECORD_AUX in the data, the AUXTRACE records with their payloads in
// the feat_kring_auxtrace section. perf reads the file without a word, and
// the payloads come back in their place.
TEST(PerfData, PerfReadsAux) {
    auto m = find_exe_map();
    ASSERT_TRUE(m);
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("aux.data");
    const std::uint32_t pid = static_cast<std::uint32_t>(::getpid());
    auto w = pd::writer::create(path, {clock_attr({10, 11}), aux_attr({30, 31})});
    ASSERT_TRUE(w);
    std::uint64_t t = 2000000000;
    ASSERT_TRUE(
        w->write(pd::make_comm(pid, pid, "pd-aux", false, sid(pid, pid, 0, t, 30), k_sched_type)));
    ASSERT_TRUE(w->write(pd::make_mmap2(pid, pid, m->start, m->end - m->start, m->pgoff, m->maj,
                                        m->min, m->ino, PROT_READ | PROT_EXEC, MAP_PRIVATE, m->path,
                                        true, sid(pid, pid, 0, t, 30), k_sched_type)));
    const auto hot = reinterpret_cast<std::uint64_t>(&kring_perf_data_hot) + 4;
    std::vector<std::vector<std::byte>> payloads;
    std::size_t samples = 0;
    for (std::uint32_t cpu = 0; cpu < 2; cpu++) {
        t += 100;
        ASSERT_TRUE(w->write(
            pd::make_itrace_start(pid, pid, sid(pid, pid, cpu, t, 30 + cpu), k_sched_type)));
    }
    for (int i = 0; i < 6; i++) {
        const std::uint32_t cpu = i % 2;
        pd::sample s;
        s.id = 10 + cpu;
        s.cpu = cpu;
        s.ip = hot;
        s.pid = s.tid = pid;
        s.time = t += 100;
        s.period = 1000000;
        ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_USER, s, k_clock_type)));
        samples++;
        // Sizes that are and are not multiples of 8, one large.
        std::vector<std::byte> p(i == 4 ? 200000 : 64 + 13 * i);
        for (std::size_t k = 0; k < p.size(); k++)
            p[k] = std::byte((k * 7 + i) & 0xff);
        const std::uint64_t flags = i == 5 ? PERF_AUX_FLAG_OVERWRITE : 0;
        ASSERT_TRUE(w->write(pd::make_aux(4096 * i, p.size(), flags,
                                          sid(pid, pid, cpu, t += 10, 30 + cpu), k_sched_type)));
        ASSERT_TRUE(w->write_auxtrace(p, 4096 * i, 0x100 + i, cpu, pid, cpu));
        payloads.push_back(std::move(p));
        ASSERT_TRUE(w->write(pd::make_finished_round()));
    }
    auto f = test_features();
    f.nr_cpus_available = 2;
    f.cpus.resize(2);
    ASSERT_TRUE(w->finish(f));

    // Read back: each AUXTRACE record right after its AUX record.
    auto r = pd::file::open(path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->truncated());
    auto v = records_of(*r);
    std::size_t n = 0;
    for (std::size_t i = 0; i < v.size(); i++) {
        if (v[i].type() != pd::record_auxtrace)
            continue;
        ASSERT_LT(n, payloads.size());
        ASSERT_GT(i, 0u);
        auto aux = pd::parse_aux(v[i - 1]);
        ASSERT_TRUE(aux) << "record before AUXTRACE " << n << " is type " << v[i - 1].type();
        EXPECT_EQ(aux->aux_size, payloads[n].size());
        auto a = pd::parse_auxtrace(v[i]);
        ASSERT_TRUE(a);
        EXPECT_EQ(a->offset, 4096u * n);
        EXPECT_EQ(a->reference, 0x100u + n);
        EXPECT_EQ(a->cpu, n % 2);
        EXPECT_EQ(a->tid, pid);
        EXPECT_EQ(a->size, (payloads[n].size() + 7) / 8 * 8);
        ASSERT_EQ(v[i].auxtrace.size(), a->size);
        EXPECT_TRUE(std::equal(payloads[n].begin(), payloads[n].end(), v[i].auxtrace.begin())) << n;
        n++;
    }
    EXPECT_EQ(n, payloads.size());

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "perf is not installed (Debian: linux-perf; tools/dev/deps.sh)";
    auto s = run(perf + " script -i " + path);
    EXPECT_EQ(s.status, 0) << s.both();
    auto bad = complaints(s.out + s.err);
    EXPECT_TRUE(bad.empty()) << "perf script complained:\n" << show(bad) << s.both();
    EXPECT_EQ(count_lines(s.out, "kring_perf_data_hot+"), samples) << s.out;
    auto rep = run(perf + " report --stdio -i " + path);
    EXPECT_EQ(rep.status, 0) << rep.both();
    bad = complaints(rep.out + rep.err);
    EXPECT_TRUE(bad.empty()) << "perf report complained:\n" << show(bad) << rep.both();
    EXPECT_NE(rep.out.find("kring_perf_data_hot"), std::string::npos) << rep.out;
    // perf's own dump sees the AUX records (and nothing it cannot read).
    auto dump = run(perf + " report -D -i " + path);
    EXPECT_EQ(dump.status, 0) << dump.err;
    EXPECT_EQ(count_lines(dump.out, "PERF_RECORD_AUX "), payloads.size());
    EXPECT_EQ(count_lines(dump.out, "PERF_RECORD_ITRACE_START"), 2u);
}

// The fuzzer's seed corpus (tests/fuzz/libfuzzer/corpus/perf_data): files of
// this writer, small. KRING_WRITE_PERF_DATA_CORPUS=1 writes them anew.
TEST(PerfData, SeedCorpus) {
    const std::string dir = KRING_SOURCE_DIR "/tests/fuzz/libfuzzer/corpus/perf_data";
    if (std::getenv("KRING_WRITE_PERF_DATA_CORPUS")) {
        fs::create_directories(dir);
        write_small_file(dir + "/every-record.data", true);
        write_small_file(dir + "/unfinished.data", false);
        auto full = read_all(dir + "/every-record.data");
        write_bytes(dir + "/cut.data", std::span<const std::byte>(full.data(), full.size() / 2));
        auto w = pd::writer::create(dir + "/aux.data", {aux_attr({30})});
        ASSERT_TRUE(w);
        std::vector<std::byte> p(21, std::byte{0x5a});
        ASSERT_TRUE(w->write(pd::make_aux(0, p.size(), PERF_AUX_FLAG_OVERWRITE,
                                          sid(1, 1, 0, 10, 30), k_sched_type)));
        ASSERT_TRUE(w->write_auxtrace(p, 0, 1, 0, 1, 0));
        ASSERT_TRUE(w->write(pd::make_finished_round()));
        pd::features f;
        f.kring = test_features().kring;
        ASSERT_TRUE(w->finish(f));
        // A stream (perf's pipe format): attrs, records, features.
        kring::unique_fd out(
            ::open((dir + "/stream.data").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        auto pw = pd::writer::create_pipe(out.get(), {clock_attr({10}), sched_attr({20})});
        ASSERT_TRUE(pw);
        ASSERT_TRUE(
            pw->write(pd::make_comm(1, 1, "stream", false, sid(1, 1, 0, 5, 20), k_sched_type)));
        ASSERT_TRUE(pw->write_auxtrace(p, 0, 1, 0, 1, 0));
        ASSERT_TRUE(pw->write(pd::make_finished_round()));
        pd::features pf;
        pf.hostname = "stream";
        ASSERT_TRUE(pw->finish(pf));
    }
    std::size_t files = 0, truncated = 0;
    for (const auto& e : fs::directory_iterator(dir)) {
        SCOPED_TRACE(e.path().string());
        EXPECT_LT(e.file_size(), 8192u);
        auto f = pd::file::open(e.path().string());
        if (e.path().extension() != ".data") {
            // What the fuzzer found (regress-*): read without a fault
            // (this binary's ASan flavour tells), whatever it holds.
            if (f)
                records_of(*f);
            continue;
        }
        files++;
        ASSERT_TRUE(f) << f.error().message();
        truncated += f->truncated();
        EXPECT_GT(records_of(*f).size(), 0u);
    }
    EXPECT_GE(files, 5u);
    EXPECT_GE(truncated, 2u);  // the unfinished and the cut one
}

}  // namespace

// ---------------------------------------------------------------------------
// Tracepoints: kernel formats (as tracefs serves 6.12's), samples built at
// their offsets, the tracing data, and perf's tracepoint tools reading it.

constexpr std::uint64_t k_tp_type = tp_fixture::sample_type;
using tp_fixture::attr;

TEST(PerfData, TracepointFormatsParse) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    ASSERT_TRUE(sw) << sw.error().message();
    EXPECT_EQ(sw->name, "sched_switch");
    EXPECT_EQ(sw->id, 316u);
    EXPECT_EQ(sw->size, 64u);
    EXPECT_EQ(sw->fields.size(), 11u);
    EXPECT_EQ(sw->fields.at("prev_comm").offset, 8u);
    EXPECT_EQ(sw->fields.at("prev_comm").size, 16u);
    EXPECT_EQ(sw->fields.at("prev_state").offset, 32u);
    EXPECT_EQ(sw->fields.at("next_prio").offset, 60u);
    // Built at those offsets, whatever the order of the calls; a field
    // the format lacks is skipped; a string is cut to its field.
    auto p = pd::tp_payload(*sw)
                 .set("next_pid", 200)
                 .set("no_such_field", 1)
                 .set_str("prev_comm", "a-name-longer-than-16")
                 .bytes();
    ASSERT_EQ(p.size(), 64u);
    std::uint16_t type;
    std::int32_t next_pid;
    std::memcpy(&type, p.data(), 2);
    std::memcpy(&next_pid, p.data() + 56, 4);
    EXPECT_EQ(type, 316);
    EXPECT_EQ(next_pid, 200);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(p.data() + 8), 16), "a-name-longer-th");
    for (const char* bad : {"", "name: x\nformat:\n", "name: x\nID: 7\nformat:\n",
                            "name: x\nID: 7\nformat:\n\tfield:int a;\toffset:x;\tsize:4;\n",
                            "name: x\nID: 99999999\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\n"})
        EXPECT_FALSE(pd::parse_tp_format("s", bad)) << bad;
    // A dynamic string (__data_loc char[] NAME): named by its last word,
    // not by the type's brackets.
    auto exec = pd::parse_tp_format(
        "sched", std::string("name: sched_process_exec\nID: 311\nformat:\n") + tp_fixture::common +
                     "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
                     "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n\n"
                     "print fmt: \"filename=%s pid=%d\", __get_str(filename), REC->pid\n");
    ASSERT_TRUE(exec) << exec.error().message();
    ASSERT_TRUE(exec->fields.count("filename"));
    EXPECT_EQ(exec->fields.at("filename").offset, 8u);
    EXPECT_EQ(exec->fields.at("filename").size, 4u);
    EXPECT_FALSE(exec->fields.count("char"));
}

// sched:sched_switch and sched:sched_wakeup samples with their tracing
// data, in a file and in a stream: read back, and read by perf script and
// perf sched (timehist, latency), which need the formats to decode them.
TEST(PerfData, TracepointSamplesReadByPerfSched) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    auto wk = pd::parse_tp_format("sched", tp_fixture::sched_wakeup);
    ASSERT_TRUE(sw && wk);
    const auto td =
        pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&*sw, &*wk}, 4096);
    constexpr std::uint64_t st = k_tp_type;
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const int n = 40;  // switches each way
    const std::string names[2] = {"alpha", "beta"};
    const std::uint32_t tids[2] = {100, 200};
    for (bool pipe : {false, true}) {
        SCOPED_TRACE(pipe ? "pipe" : "file");
        const auto path = d.file(pipe ? "tp.pipe" : "tp.data");
        std::vector<pd::event_attr> attrs = {attr("sched:sched_switch", sw->id, 1),
                                             attr("sched:sched_wakeup", wk->id, 2)};
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
        auto w = pipe ? pd::writer::create_pipe(fd, attrs) : pd::writer::create(path, attrs);
        ::close(fd);
        ASSERT_TRUE(w) << w.error().message();
        ASSERT_TRUE(w->write_tracing_data(td));
        // A stream's goes once; a file's is the last one given.
        EXPECT_EQ(bool(w->write_tracing_data(td)), !pipe) << "twice";
        std::uint64_t t = 1000000;
        for (int k = 0; k < 2; k++) {
            pd::sample_id sid;
            sid.pid = sid.tid = tids[k];
            sid.time = t;
            sid.has_time = true;
            sid.id = 1;
            ASSERT_TRUE(w->write(pd::make_comm(
                tids[k], tids[k], names[k], false, sid,
                PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)));
        }
        for (int i = 0; i < 2 * n; i++) {
            const int out = i % 2, in = 1 - out;
            t += 10000;
            // The next one is woken first (by the running one), then runs.
            auto wake = pd::tp_payload(*wk)
                            .set("common_pid", tids[out])
                            .set_str("comm", names[in])
                            .set("pid", tids[in])
                            .set("prio", 120)
                            .set("target_cpu", 0)
                            .bytes();
            pd::sample s;
            s.id = 2;
            s.pid = s.tid = tids[out];
            s.time = t;
            s.has_time = true;
            s.cpu = 0;
            s.period = 1;
            s.raw = wake;
            ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
            auto swp = pd::tp_payload(*sw)
                           .set("common_pid", tids[out])
                           .set_str("prev_comm", names[out])
                           .set("prev_pid", tids[out])
                           .set("prev_prio", 120)
                           .set("prev_state", 1)
                           .set_str("next_comm", names[in])
                           .set("next_pid", tids[in])
                           .set("next_prio", 120)
                           .bytes();
            s.id = 1;
            s.time = t + 2000;
            s.raw = swp;
            ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
        }
        const char* argv[] = {"perf_data_test"};
        ASSERT_TRUE(w->finish(pd::features::from_system(1, argv)));
        auto f = pd::file::open(path);
        ASSERT_TRUE(f) << f.error().message();
        EXPECT_FALSE(f->truncated());
        // A stream's record holds the data padded to 8 bytes.
        const auto& got = f->feats().tracing_data;
        ASSERT_GE(got.size(), td.size());
        EXPECT_LT(got.size() - td.size(), 8u);
        EXPECT_TRUE(std::equal(td.begin(), td.end(), got.begin()));
        EXPECT_TRUE(std::all_of(got.begin() + td.size(), got.end(),
                                [](std::byte b) { return b == std::byte{0}; }));
        EXPECT_EQ(records_of(*f).size(), 2 + 4u * n);

        const auto perf = find_perf();
        if (perf.empty())
            GTEST_SKIP() << "skipped: perf is not installed (linux-perf; tools/dev/deps.sh)";
        const std::string in = pipe ? "cat " + path + " | " + perf : perf;
        const std::string from = pipe ? " -i -" : " -i " + path;
        auto s = run(in + " script" + from);
        EXPECT_EQ(s.status, 0) << s.both();
        EXPECT_TRUE(complaints(s.out + s.err, {}).empty()) << s.both();
        EXPECT_EQ(count_lines(s.out, "sched:sched_switch:"), 2u * n) << s.out;
        EXPECT_EQ(count_lines(s.out, "sched:sched_wakeup:"), 2u * n) << s.out;
        EXPECT_EQ(count_lines(s.out,
                              "prev_comm=alpha prev_pid=100 prev_prio=120 prev_state=S "
                              "==> next_comm=beta next_pid=200 next_prio=120"),
                  std::size_t(n))
            << s.out;
        EXPECT_EQ(count_lines(s.out, "comm=beta pid=200 prio=120 target_cpu=000"), std::size_t(n))
            << s.out;
        // perf sched looks for its tracepoints before it reads any event:
        // it reads files, not streams (perf sched record -o - | perf sched
        // timehist -i - says "No sched_switch events found" too).
        if (pipe)
            continue;
        auto th = run(in + " sched timehist" + from);
        EXPECT_EQ(th.status, 0) << th.both();
        EXPECT_EQ(count_lines(th.out, "alpha[100]"), std::size_t(n)) << th.out;
        auto lat = run(in + " sched latency --pids" + from);
        EXPECT_EQ(lat.status, 0) << lat.both();
        // Each switch in follows a wakeup: one latency per switch in.
        // "  alpha:100 |  0.080 ms |  40 | avg: ..." : the third column.
        std::string seen;
        std::istringstream ls(lat.out);
        for (std::string l; std::getline(ls, l);) {
            if (l.find(" alpha:100 ") == std::string::npos)
                continue;
            std::istringstream cols(l);
            std::string task, runtime, switches;
            std::getline(cols, task, '|');
            std::getline(cols, runtime, '|');
            std::getline(cols, switches, '|');
            seen = switches.substr(switches.find_first_not_of(' '));
            seen.erase(seen.find_last_not_of(' ') + 1);
        }
        EXPECT_EQ(seen, std::to_string(n)) << lat.out;
    }
}

// An event declared after the file was created (writer::add_attr()) and
// the tracing data given at the end: the attrs go after the features, and
// perf script reads both events' samples; a stream refuses the late event.
TEST(PerfData, EventAddedAfterCreateReadByPerf) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    auto wk = pd::parse_tp_format("sched", tp_fixture::sched_wakeup);
    ASSERT_TRUE(sw && wk);
    constexpr std::uint64_t st = k_tp_type;
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("late.data");
    auto w = pd::writer::create(path, {attr("sched:sched_switch", sw->id, 1)});
    ASSERT_TRUE(w) << w.error().message();
    auto put = [&](std::uint64_t id, std::uint64_t t, const std::vector<std::byte>& raw) {
        pd::sample s;
        s.id = id;
        s.pid = s.tid = 100;
        s.time = t;
        s.has_time = true;
        s.period = 1;
        s.raw = raw;
        return bool(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
    };
    const auto swp = pd::tp_payload(*sw).set_str("prev_comm", "alpha").set("prev_pid", 100).bytes();
    ASSERT_TRUE(put(1, 1000, swp));
    ASSERT_TRUE(w->add_attr(attr("sched:sched_wakeup", wk->id, 2)));
    const auto wkp = pd::tp_payload(*wk).set_str("comm", "beta").set("pid", 200).bytes();
    ASSERT_TRUE(put(2, 2000, wkp));
    ASSERT_TRUE(put(1, 3000, swp));
    ASSERT_TRUE(w->write_tracing_data(
        pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&*sw, &*wk}, 4096)));
    const char* argv[] = {"perf_data_test"};
    ASSERT_TRUE(w->finish(pd::features::from_system(1, argv)));
    auto f = pd::file::open(path);
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_FALSE(f->truncated());
    ASSERT_EQ(f->attrs().size(), 2u);
    EXPECT_EQ(f->attrs()[1].name, "sched:sched_wakeup");
    EXPECT_EQ(f->attrs()[1].ids, std::vector<std::uint64_t>{2});
    EXPECT_EQ(records_of(*f).size(), 3u);

    // A stream cannot take an event late.
    const int fd =
        ::open(d.file("late.pipe").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    auto pw = pd::writer::create_pipe(fd, {attr("sched:sched_switch", sw->id, 1)});
    ::close(fd);
    ASSERT_TRUE(pw);
    auto late = pw->add_attr(attr("sched:sched_wakeup", wk->id, 2));
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().code(), EINVAL);

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "skipped: perf is not installed (linux-perf; tools/dev/deps.sh)";
    auto s = run(perf + " script -i " + path);
    EXPECT_EQ(s.status, 0) << s.both();
    EXPECT_TRUE(complaints(s.out + s.err, {}).empty()) << s.both();
    EXPECT_EQ(count_lines(s.out, "sched:sched_switch:"), 2u) << s.out;
    EXPECT_EQ(count_lines(s.out, "sched:sched_wakeup: comm=beta pid=200"), 1u) << s.out;
}

// A TRACING_DATA record inside a file's data (perf writes them in streams;
// a file may carry one too): every walk of the data steps over its payload
// the same way, so the records handed out are those the file was checked
// for, the payload not read as records.
TEST(PerfData, TracingDataRecordInAFileKeepsItsPayload) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    ASSERT_TRUE(sw);
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("td.data");
    auto w = pd::writer::create(path, {attr("sched:sched_switch", sw->id, 1)});
    ASSERT_TRUE(w);
    const auto raw = pd::tp_payload(*sw).bytes();
    pd::sample s;
    s.id = 1;
    s.has_time = true;
    s.raw = raw;
    ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, k_tp_type)));
    // The record, then 8 bytes of payload: a FINISHED_ROUND's, which must
    // not come out as a record of its own.
    std::vector<std::byte> td(16);
    const perf_event_header h{pd::record_header_tracing_data, 0, 16};
    const std::uint32_t payload = 8;
    std::memcpy(td.data(), &h, sizeof(h));
    std::memcpy(td.data() + 8, &payload, 4);
    ASSERT_TRUE(w->write(td));
    ASSERT_TRUE(w->write(pd::make_finished_round()));
    ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, k_tp_type)));
    ASSERT_TRUE(w->finish({}));
    auto f = pd::file::open(path);
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_FALSE(f->truncated());
    std::vector<std::uint32_t> types;
    for (const auto& r : records_of(*f))
        types.push_back(r.type());
    EXPECT_EQ(types, (std::vector<std::uint32_t>{PERF_RECORD_SAMPLE, pd::record_header_tracing_data,
                                                 PERF_RECORD_SAMPLE}));
}

// A producer's record layout (KRING_IOC_GET_FORMATS's block) re-rendered
// as a tracepoint: the ID given, the kernel's common fields ahead, every
// offset shifted by 8, the print fmt kept; what is not a block of kring's
// rendering is refused with the line named.
TEST(PerfData, KringFormatAsTracepoint) {
    auto t = pd::kring_format_as_tracepoint(tp_fixture::producer_block, "kring", 65280);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->record_type, 65792u);
    EXPECT_EQ(t->body_size, 28u);
    EXPECT_EQ(t->format.system, "kring");
    EXPECT_EQ(t->format.name, "my_record");
    EXPECT_EQ(t->format.id, 65280u);
    EXPECT_EQ(t->format.size, 36u);
    EXPECT_EQ(t->format.text, tp_fixture::producer_tracepoint);
    ASSERT_EQ(t->format.fields.size(), 7u);
    EXPECT_EQ(t->format.fields.at("common_type").offset, 0u);
    EXPECT_EQ(t->format.fields.at("common_type").size, 2u);
    EXPECT_EQ(t->format.fields.at("common_flags").offset, 2u);
    EXPECT_EQ(t->format.fields.at("common_preempt_count").offset, 3u);
    EXPECT_EQ(t->format.fields.at("common_pid").offset, 4u);
    EXPECT_EQ(t->format.fields.at("common_pid").size, 4u);
    EXPECT_EQ(t->format.fields.at("total").offset, 8u);
    EXPECT_EQ(t->format.fields.at("who").offset, 16u);
    EXPECT_EQ(t->format.fields.at("who").size, 16u);
    EXPECT_EQ(t->format.fields.at("owner").offset, 32u);
    // Its payload: the common header, then the record's body as written.
    std::vector<std::byte> body(28);  // t->body_size, checked above
    const std::uint64_t total = 300;
    std::memcpy(body.data(), &total, 8);
    std::memcpy(body.data() + 8, "abc", 3);
    pd::tp_payload pl(t->format);
    pl.set("common_pid", 77).set_bytes(8, body);
    const std::vector<std::byte>& p = pl.bytes();
    ASSERT_EQ(p.size(), 36u);
    std::uint16_t type;
    std::int32_t pid;
    std::memcpy(&type, p.data(), 2);
    std::memcpy(&pid, p.data() + 4, 4);
    EXPECT_EQ(type, 65280);
    EXPECT_EQ(pid, 77);
    EXPECT_TRUE(std::equal(body.begin(), body.end(), p.begin() + 8));

    const std::string head = "name: r\nID: 65792\nformat:\n";
    const std::string field = "\tfield:u64 total;\toffset:0;\tsize:8;\tsigned:0;\n";
    const std::string tail = "\nprint fmt: \"total=%llu\", REC->total\n";
    EXPECT_TRUE(pd::kring_format_as_tracepoint(head + field + tail, "kring", 1));
    // Each of these differs from the one accepted above in one place.
    for (const std::string& bad : {
             std::string(),
             head + field,                                     // no print fmt
             head + tail,                                      // no fields
             "name: 1r\nID: 65792\nformat:\n" + field + tail,  // name
             "name: r\nID: x\nformat:\n" + field + tail,       // ID
             "name: r\nID: 65792\nformats:\n" + field + tail,  // format line
             head + "\tfield:u64 common_total;\toffset:0;\tsize:8;\tsigned:0;\n" + tail,
             head + "\tfield:u64 total;\toffset:65530;\tsize:8;\tsigned:0;\n" + tail,
             head + "\tfield:u64 total;\toffset:0;\tsize:0;\tsigned:0;\n" + tail,
             head + "\tfield:u64 total;\toffset:0;\tsize:8;\tsigned:2;\n" + tail,
             head + "\tfield:u64 total;\toffset:0;\tsize:8;\n" + tail,
             head + "\tfield:total;\toffset:0;\tsize:8;\tsigned:0;\n" + tail,
             head + field + field + tail,  // a name twice
             head + field + tail + "more\n",
         })
        EXPECT_FALSE(pd::kring_format_as_tracepoint(bad, "kring", 65280)) << bad;
    std::string many = head;
    for (int i = 0; i < 65; i++)
        many += "\tfield:u8 f" + std::to_string(i) + ";\toffset:" + std::to_string(i) +
                ";\tsize:1;\tsigned:0;\n";
    EXPECT_FALSE(pd::kring_format_as_tracepoint(many + tail, "kring", 65280)) << "65 fields";
    EXPECT_FALSE(pd::kring_format_as_tracepoint(head + field + tail, "kring", 0)) << "ID 0";
    EXPECT_FALSE(pd::kring_format_as_tracepoint(head + field + tail, "kr:ing", 1)) << "system";
}

// A producer's records as samples of their tracepoint, declared after the
// file was created (writer::add_attr(), as kring record meets them), with
// tracing data holding the re-rendered format: perf script prints every
// record's fields by name with the values written.
TEST(PerfData, KringFormatSamplesReadByPerfScript) {
    auto t = pd::kring_format_as_tracepoint(tp_fixture::producer_block, "kring", 65280);
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_EQ(t->body_size, 28u);
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("producer.data");
    auto w = pd::writer::create(path, {});
    ASSERT_TRUE(w) << w.error().message();
    ASSERT_TRUE(w->add_attr(attr("kring:my_record", t->format.id, 5)));
    const int n = 6;
    for (int i = 0; i < n; i++) {
        std::vector<std::byte> body(28);  // t->body_size, checked above
        const std::uint64_t total = 1000 + std::uint64_t(i);
        const std::int32_t owner = -i;
        const std::string who = "who" + std::to_string(i);
        std::memcpy(body.data(), &total, 8);
        std::memcpy(body.data() + 8, who.data(), who.size());
        std::memcpy(body.data() + 24, &owner, 4);
        const auto raw =
            pd::tp_payload(t->format).set("common_pid", 100).set_bytes(8, body).bytes();
        pd::sample s;
        s.id = 5;
        s.pid = s.tid = 100;
        s.time = 1000000 + std::uint64_t(i) * 1000;
        s.has_time = true;
        s.period = 1;
        s.raw = raw;
        ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, k_tp_type)));
    }
    ASSERT_TRUE(w->write_tracing_data(
        pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&t->format}, 4096)));
    const char* argv[] = {"perf_data_test"};
    ASSERT_TRUE(w->finish(pd::features::from_system(1, argv)));
    auto f = pd::file::open(path);
    ASSERT_TRUE(f) << f.error().message();
    ASSERT_EQ(f->attrs().size(), 1u);
    EXPECT_EQ(f->attrs()[0].attr.config, 65280u);
    auto td = pd::parse_tracing_data(f->feats().tracing_data);
    ASSERT_TRUE(td) << td.error().message();
    ASSERT_EQ(td->events.size(), 1u);
    EXPECT_EQ(td->events[0].first, "kring");
    EXPECT_EQ(td->events[0].second, tp_fixture::producer_tracepoint);

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "skipped: perf is not installed (linux-perf; tools/dev/deps.sh)";
    auto s = run(perf + " script -i " + path);
    EXPECT_EQ(s.status, 0) << s.both();
    EXPECT_TRUE(complaints(s.out + s.err, {}).empty()) << s.both();
    EXPECT_EQ(count_lines(s.out, "kring:my_record:"), std::size_t(n)) << s.out;
    for (int i = 0; i < n; i++)
        EXPECT_EQ(
            count_lines(s.out, "kring:my_record: total=" + std::to_string(1000 + i) + " who=who" +
                                   std::to_string(i) + " owner=" + std::to_string(-i)),
            1u)
            << s.out;
}
