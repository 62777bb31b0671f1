// export --pprof's replay of the MMAP, FORK and exec records
// (tools/kring/address_spaces.hpp): what a process has mapped where, and
// what that costs. The cost is counted, not timed: steps() is the number
// of mappings the calls touched, and a recording of M MMAPs must take
// O(M log M) whatever their shape. A crafted recording of 80 000 MMAPs
// of one process once took 27 s (every MMAP scanned every mapping).
#include <gtest/gtest.h>

#include <cstdint>
#include <string>

#include "address_spaces.hpp"

namespace {

using kring_tool::address_spaces;
using kring_tool::region;

region r(std::uint64_t start, std::uint64_t end, std::string file = "/x") {
    return {start, end, 0, std::move(file), {}};
}

std::string file_at(const address_spaces& s, std::uint32_t pid, std::uint64_t addr) {
    const region* g = s.find(pid, addr);
    return g ? g->file : "-";
}

TEST(AddressSpaces, NewMappingReplacesWhatItOverlaps) {
    address_spaces s;
    s.map(1, r(0x1000, 0x3000, "/a"));
    s.map(1, r(0x3000, 0x5000, "/b"));
    s.map(1, r(0x6000, 0x7000, "/c"));
    EXPECT_EQ(file_at(s, 1, 0x1000), "/a");
    EXPECT_EQ(file_at(s, 1, 0x4fff), "/b");
    EXPECT_EQ(file_at(s, 1, 0x5000), "-");
    // Overlaps the end of /a and the start of /b: both go, /c stays.
    s.map(1, r(0x2000, 0x3001, "/d"));
    EXPECT_EQ(file_at(s, 1, 0x1000), "-");
    EXPECT_EQ(file_at(s, 1, 0x2000), "/d");
    EXPECT_EQ(file_at(s, 1, 0x4000), "-");
    EXPECT_EQ(file_at(s, 1, 0x6000), "/c");
    // Touching is not overlapping.
    s.map(1, r(0x5000, 0x6000, "/e"));
    EXPECT_EQ(file_at(s, 1, 0x6000), "/c");
    EXPECT_EQ(file_at(s, 1, 0x5fff), "/e");
    // One mapping over all of them.
    s.map(1, r(0, ~0ull, "/all"));
    EXPECT_EQ(file_at(s, 1, 0x2000), "/all");
    EXPECT_EQ(file_at(s, 1, 0x6000), "/all");
    // No bytes: nothing changes. Another process: its own.
    s.map(1, r(0x2000, 0x2000, "/empty"));
    EXPECT_EQ(file_at(s, 1, 0x2000), "/all");
    EXPECT_EQ(file_at(s, 2, 0x2000), "-");
}

TEST(AddressSpaces, ForkCopiesAndExecClears) {
    address_spaces s;
    s.map(1, r(0x1000, 0x2000, "/parent"));
    s.fork(1, 2);
    EXPECT_EQ(file_at(s, 2, 0x1000), "/parent");
    // The child's own mapping is its own; the parent's stay the parent's.
    s.map(2, r(0x1000, 0x2000, "/child"));
    EXPECT_EQ(file_at(s, 2, 0x1000), "/child");
    EXPECT_EQ(file_at(s, 1, 0x1000), "/parent");
    s.map(1, r(0x3000, 0x4000, "/later"));
    EXPECT_EQ(file_at(s, 2, 0x3000), "-");
    s.exec(1);
    EXPECT_EQ(file_at(s, 1, 0x1000), "-");
    EXPECT_EQ(file_at(s, 2, 0x1000), "/child");
}

// M MMAPs of one process, disjoint (each a new mapping) or each over the
// last (each replaces one): steps within a small multiple of M, where
// scanning every mapping on every MMAP takes M^2 / 2.
TEST(AddressSpaces, MmapStormCostsLinearSteps) {
    constexpr std::uint64_t m = 80'000;
    address_spaces disjoint;
    for (std::uint64_t i = 0; i < m; i++)
        disjoint.map(7, r(0x10000 + i * 0x2000, 0x10000 + i * 0x2000 + 0x1000));
    EXPECT_LE(disjoint.steps(), 3 * m);
    EXPECT_EQ(file_at(disjoint, 7, 0x10000 + (m - 1) * 0x2000), "/x");

    address_spaces stacked;
    for (std::uint64_t i = 0; i < m; i++)
        stacked.map(7, r(0x10000 + i * 0x1000, 0x10000 + i * 0x1000 + 0x1800));
    EXPECT_LE(stacked.steps(), 4 * m);

    // Half the storm disjoint, then one mapping over all of it: k = M / 2
    // erased at once, each erased once.
    address_spaces wiped;
    for (std::uint64_t i = 0; i < m / 2; i++)
        wiped.map(7, r(0x10000 + i * 0x2000, 0x10000 + i * 0x2000 + 0x1000));
    wiped.map(7, r(0, ~0ull));
    EXPECT_LE(wiped.steps(), 3 * m);
}

// A fork storm on a process of many mappings, each child mapping once:
// the copies stop at the budget, and say so.
TEST(AddressSpaces, ForkStormCopiesWithinTheBudget) {
    constexpr std::uint64_t maps = 10'000, forks = 10'000, budget = 100'000;
    address_spaces s(budget);
    for (std::uint64_t i = 0; i < maps; i++)
        s.map(1, r(0x10000 + i * 0x2000, 0x10000 + i * 0x2000 + 0x1000));
    for (std::uint32_t c = 2; c < 2 + forks; c++) {
        s.fork(1, c);
        s.map(c, r(0x8000, 0x9000));
    }
    EXPECT_TRUE(s.budget_spent());
    EXPECT_LE(s.steps(), 3 * maps + budget + 4 * forks);
    // The first children have their copies; the last one has its own only.
    EXPECT_EQ(file_at(s, 2, 0x10000), "/x");
    EXPECT_EQ(file_at(s, 1 + forks, 0x10000), "-");
    EXPECT_EQ(file_at(s, 1 + forks, 0x8000), "/x");
}

}  // namespace
