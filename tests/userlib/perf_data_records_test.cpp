// The perf.data component's parsers of MMAP, MMAP2 (with and without a
// build id) and ITRACE_START (userlib/perf_data/src/records.cpp): the
// builders' records read back, perf's own MMAP layout, and hostile records
// (cut short, a header size beyond the bytes, a file name without its NUL,
// a build id size beyond 20, another type), each an EINVAL naming the
// record's offset and what is wrong.
#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include <sys/mman.h>

#include "kring/perf_data.hpp"
#include "errno_assert.hpp"

namespace pd = kring::perf_data;

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
