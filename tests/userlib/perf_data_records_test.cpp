// The perf.data component's records (userlib/perf_data/src/records.cpp):
// the parsers of MMAP, MMAP2 (with and without a build id) and ITRACE_START
// (the builders' records read back, perf's own MMAP layout, and hostile
// records: cut short, a header size beyond the bytes, a file name without
// its NUL, a build id size beyond 20, another type, each an EINVAL naming
// the record's offset and what is wrong); every builder's record written
// to a file and read back, one test per kind of record
// (PerfDataRoundTrip); the sample fields in perf's order.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "kring/perf_data.hpp"
#include "errno_assert.hpp"
#include "perf_data_util.hpp"

namespace pd = kring::perf_data;
using namespace kt;  // perf_data_util.hpp

namespace {

constexpr std::uint64_t k_st = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER;

pd::record_view view(const std::vector<std::byte>& b, std::uint64_t offset = 4096) {
    pd::record_view v;
    v.offset = offset;
    v.bytes = b;
    return v;
}

template <class T>
void put_at(std::vector<std::byte>& b, std::size_t at, T v) {
    std::memcpy(b.data() + at, &v, sizeof(v));
}

std::vector<std::byte> mmap2(std::string_view file = "/usr/lib/libc.so.6") {
    pd::sample_id sid;
    sid.pid = 7;
    sid.tid = 8;
    sid.time = 1234;
    sid.id = 5;
    return pd::make_mmap2(7, 8, 0x7f0000001000, 0x2000, 0x3000, 8, 1, 99, PROT_READ | PROT_EXEC,
                          MAP_PRIVATE, file, true, sid, k_st);
}

// An MMAP2 with @n in its build id size and bytes 1..20 as the id.
std::vector<std::byte> mmap2_build_id(std::uint8_t n) {
    auto b = mmap2();
    put_at<std::uint16_t>(b, 4, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
    b[40] = std::byte{n};
    b[41] = b[42] = b[43] = std::byte{0};
    for (std::size_t i = 0; i < 20; i++)
        b[44 + i] = std::byte(i + 1);
    return b;
}

// A PERF_RECORD_MMAP as the kernel lays it out (no builder writes one).
std::vector<std::byte> mmap1(std::string_view file) {
    std::vector<std::byte> b(40 + (file.size() + 8) / 8 * 8);
    put_at<std::uint32_t>(b, 0, PERF_RECORD_MMAP);
    put_at<std::uint16_t>(b, 4, PERF_RECORD_MISC_USER);
    put_at<std::uint16_t>(b, 6, std::uint16_t(b.size()));
    put_at<std::uint32_t>(b, 8, 11);
    put_at<std::uint32_t>(b, 12, 12);
    put_at<std::uint64_t>(b, 16, 0x400000);
    put_at<std::uint64_t>(b, 24, 0x1000);
    put_at<std::uint64_t>(b, 32, 0x200);
    std::memcpy(b.data() + 40, file.data(), file.size());
    return b;
}

// The error of @r: EINVAL, its message naming the offset and @what.
template <class T>
void expect_refused(const kring::result<T>& r, const std::string& what) {
    ASSERT_FALSE(r) << "accepted, expected: " << what;
    EXPECT_ERRNO(r.error().code(), EINVAL);
    EXPECT_NE(r.error().message().find("at offset 4096"), std::string::npos) << r.error().message();
    EXPECT_NE(r.error().message().find(what), std::string::npos) << r.error().message();
}

}  // namespace

TEST(PerfDataRecords, Mmap2ReadBack) {
    const auto b = mmap2();
    auto m = pd::parse_mmap(view(b));
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_TRUE(m->mmap2);
    EXPECT_EQ(m->pid, 7u);
    EXPECT_EQ(m->tid, 8u);
    EXPECT_EQ(m->start, 0x7f0000001000u);
    EXPECT_EQ(m->len, 0x2000u);
    EXPECT_EQ(m->pgoff, 0x3000u);
    EXPECT_EQ(m->maj, 8u);
    EXPECT_EQ(m->min, 1u);
    EXPECT_EQ(m->ino, 99u);
    EXPECT_EQ(m->prot, unsigned(PROT_READ | PROT_EXEC));
    EXPECT_EQ(m->flags, unsigned(MAP_PRIVATE));
    EXPECT_TRUE(m->build_id.empty());
    EXPECT_EQ(m->filename, "/usr/lib/libc.so.6");
    // The sample_id trailer behind the name is the trailer's.
    EXPECT_EQ(pd::parse_sample_id(view(b), k_st)->time, 1234u);
}

TEST(PerfDataRecords, Mmap2BuildIdInPlaceOfTheInode) {
    for (std::uint8_t n : {0, 1, 20}) {
        const auto b = mmap2_build_id(n);
        auto m = pd::parse_mmap(view(b));
        ASSERT_TRUE(m) << m.error().message();
        ASSERT_EQ(m->build_id.size(), n);
        for (std::size_t i = 0; i < n; i++)
            EXPECT_EQ(m->build_id[i], i + 1);
        EXPECT_EQ(m->maj, 0u);
        EXPECT_EQ(m->ino, 0u);
        EXPECT_EQ(m->prot, unsigned(PROT_READ | PROT_EXEC));
        EXPECT_EQ(m->filename, "/usr/lib/libc.so.6");
    }
}

TEST(PerfDataRecords, MmapAsTheKernelLaysItOut) {
    const auto b = mmap1("/bin/true");
    auto m = pd::parse_mmap(view(b));
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_FALSE(m->mmap2);
    EXPECT_EQ(m->pid, 11u);
    EXPECT_EQ(m->tid, 12u);
    EXPECT_EQ(m->start, 0x400000u);
    EXPECT_EQ(m->len, 0x1000u);
    EXPECT_EQ(m->pgoff, 0x200u);
    EXPECT_EQ(m->filename, "/bin/true");
    // An empty name is a name: the NUL at 40.
    auto e = pd::parse_mmap(view(mmap1("")));
    ASSERT_TRUE(e) << e.error().message();
    EXPECT_EQ(e->filename, "");
}

TEST(PerfDataRecords, MmapCutShortIsRefused) {
    const auto b1 = mmap1("/bin/true");
    const auto b2 = mmap2();
    for (std::size_t n : {0, 4, 8, 16, 39}) {
        // A copy of exactly n bytes: ASan sees any read beyond them.
        std::vector<std::byte> cut(b1.begin(), b1.begin() + std::ptrdiff_t(n));
        if (n < 8) {
            expect_refused(pd::parse_mmap(view(cut)), "of type 0");
            continue;
        }
        expect_refused(pd::parse_mmap(view(cut)), "shorter than its 40-byte fixed part");
    }
    for (std::size_t n : {8, 40, 64, 71}) {
        std::vector<std::byte> cut(b2.begin(), b2.begin() + std::ptrdiff_t(n));
        expect_refused(pd::parse_mmap(view(cut)), "MMAP2 record");
        expect_refused(pd::parse_mmap(view(cut)), "shorter than its 72-byte fixed part");
    }
}

TEST(PerfDataRecords, HeaderSizeBeyondTheBytesReadsOnlyTheBytes) {
    // header.size says 4096, the view holds the fixed part and a name: the
    // parser reads the bytes it was given (ASan: a copy of exactly those).
    auto b = mmap2("/x");
    put_at<std::uint16_t>(b, 6, 4096);
    std::vector<std::byte> exact(b.begin(), b.begin() + 80);
    auto m = pd::parse_mmap(view(exact));
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_EQ(m->filename, "/x");
    // Cut inside the name: no NUL left.
    std::vector<std::byte> cut(b.begin(), b.begin() + 73);
    expect_refused(pd::parse_mmap(view(cut)), "file name without its NUL");
}

TEST(PerfDataRecords, FileNameWithoutNulIsRefused) {
    // The name runs over the trailer to the record's end, no NUL anywhere.
    auto b = mmap2(std::string(40, 'A'));
    for (std::size_t i = 72; i < b.size(); i++)
        b[i] = std::byte{'B'};
    expect_refused(pd::parse_mmap(view(b)), "MMAP2 record");
    expect_refused(pd::parse_mmap(view(b)), "file name without its NUL");
    auto b1 = mmap1("/bin/true");
    for (std::size_t i = 40; i < b1.size(); i++)
        b1[i] = std::byte{'C'};
    expect_refused(pd::parse_mmap(view(b1)), "file name without its NUL");
    // A record that ends where the name starts has no NUL either.
    std::vector<std::byte> bare(b.begin(), b.begin() + 72);
    expect_refused(pd::parse_mmap(view(bare)), "file name without its NUL");
}

TEST(PerfDataRecords, BuildIdSizeBeyond20IsRefused) {
    for (std::uint8_t n : {21, 24, 255})
        expect_refused(pd::parse_mmap(view(mmap2_build_id(n))),
                       "build id size " + std::to_string(n) + " beyond 20");
    // Without the misc bit the same bytes are maj, min and ino: no build id.
    auto b = mmap2_build_id(255);
    put_at<std::uint16_t>(b, 4, PERF_RECORD_MISC_USER);
    auto m = pd::parse_mmap(view(b));
    ASSERT_TRUE(m) << m.error().message();
    EXPECT_TRUE(m->build_id.empty());
    EXPECT_EQ(m->maj, 255u);
}

TEST(PerfDataRecords, ItraceStartReadBack) {
    pd::sample_id sid;
    sid.time = 99;
    const auto b = pd::make_itrace_start(21, 22, sid, k_st);
    auto i = pd::parse_itrace_start(view(b));
    ASSERT_TRUE(i) << i.error().message();
    EXPECT_EQ(i->pid, 21u);
    EXPECT_EQ(i->tid, 22u);
    EXPECT_EQ(pd::parse_sample_id(view(b), k_st)->time, 99u);
    for (std::size_t n : {8, 12, 15}) {
        std::vector<std::byte> cut(b.begin(), b.begin() + std::ptrdiff_t(n));
        expect_refused(pd::parse_itrace_start(view(cut)), "ITRACE_START record");
        expect_refused(pd::parse_itrace_start(view(cut)), "shorter than its 16");
    }
}

TEST(PerfDataRecords, OtherTypesAreRefused) {
    const auto comm = pd::make_comm(1, 1, "x", false, std::nullopt, 0);
    expect_refused(pd::parse_mmap(view(comm)), "of type 3");
    expect_refused(pd::parse_itrace_start(view(mmap2())), "of type 10");
    expect_refused(pd::parse_itrace_start(view({})), "of type 0");
}

// ---- every builder's record through a file and back ------------------------

namespace {

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

}  // namespace
