// The perf.data component's feature sections (userlib/perf_data/src/features.cpp):
// the kring section refusing every cut and every length beyond its bytes,
// and features::from_system() filled as perf record fills them, read back
// from a file.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <unistd.h>

#include "kring/perf_data.hpp"
#include "perf_data_util.hpp"

namespace pd = kring::perf_data;
using namespace kt;  // perf_data_util.hpp

namespace {

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

}  // namespace
