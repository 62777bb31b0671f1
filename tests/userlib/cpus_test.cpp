// CPU lists (kring/cpus.hpp): perf's -C syntax and sysfs's lists.
#include <gtest/gtest.h>

#include "kring/cpus.hpp"

namespace {

using cpus = std::vector<unsigned>;

TEST(CpuList, ParsesNumbersAndRangesSortedOnce) {
    EXPECT_EQ(kring::parse_cpu_list("0"), cpus({0}));
    EXPECT_EQ(kring::parse_cpu_list("0-3,6"), cpus({0, 1, 2, 3, 6}));
    EXPECT_EQ(kring::parse_cpu_list("6,2-3,3,0"), cpus({0, 2, 3, 6}));
    EXPECT_EQ(kring::parse_cpu_list("4-4"), cpus({4}));
    // sysfs prints its lists with a newline
    EXPECT_EQ(kring::parse_cpu_list("0-1\n"), cpus({0, 1}));
}

TEST(CpuList, RefusesWhatIsNotAList) {
    for (const char* bad : {"", "\n", ",", "1,", ",1", "3-1", "-1", "1-", "a", "1 2", "0x1",
                            "1234567", "1--2", "1-2-3", "1\n\n"})
        EXPECT_EQ(kring::parse_cpu_list(bad), std::nullopt) << "'" << bad << "'";
}

TEST(CpuList, FormatsWithRanges) {
    EXPECT_EQ(kring::format_cpu_list(cpus{}), "");
    EXPECT_EQ(kring::format_cpu_list(cpus{5}), "5");
    EXPECT_EQ(kring::format_cpu_list(cpus{0, 1, 2, 3, 6}), "0-3,6");
    EXPECT_EQ(kring::format_cpu_list(cpus{0, 2, 4, 5}), "0,2,4-5");
    // parse . format is the identity on a parsed list
    auto l = kring::parse_cpu_list("9,0-2,4,5,6");
    ASSERT_TRUE(l);
    EXPECT_EQ(kring::format_cpu_list(*l), "0-2,4-6,9");
    EXPECT_EQ(kring::parse_cpu_list(kring::format_cpu_list(*l)), l);
}

}  // namespace
