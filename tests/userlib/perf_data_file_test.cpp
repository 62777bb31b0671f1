// The perf.data component's reader (userlib/perf_data/src/file.cpp): files
// cut at every record offset and a writer that never finished read as
// truncated, with the reason and the offset; what is not perf.data an
// error; a TRACING_DATA record's payload stepped over; the fuzzer's seed
// corpus read.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include <fcntl.h>

#include "kring/perf_data.hpp"
#include "errno_assert.hpp"
#include "perf_data_util.hpp"
#include "tp_fixture.hpp"

namespace pd = kring::perf_data;
namespace fs = std::filesystem;
using namespace kt;  // perf_data_util.hpp
constexpr std::uint64_t k_tp_type = tp_fixture::sample_type;
using tp_fixture::attr;

namespace {

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

}  // namespace
