#include <cerrno>
#include <string>

#include <gtest/gtest.h>

#include "kring/result.hpp"

namespace {

kring::result<int> half(int v) {
    if (v % 2)
        return kring::error(EINVAL, "odd value " + std::to_string(v));
    return v / 2;
}

TEST(Result, CarriesValue) {
    auto r = half(8);
    ASSERT_TRUE(r);
    EXPECT_EQ(*r, 4);
    EXPECT_EQ(r.error().code(), 0);
}

TEST(Result, CarriesErrnoAndMessage) {
    auto r = half(3);
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().code(), EINVAL);
    EXPECT_EQ(r.error().message(), "odd value 3");
    EXPECT_EQ(r.error().error_code(), std::errc::invalid_argument);
}

TEST(Result, FromErrnoNamesTheCall) {
    auto e = kring::error::from_errno(ENOENT, "cannot open /x");
    EXPECT_EQ(e.code(), ENOENT);
    EXPECT_NE(e.message().find("cannot open /x: "), std::string::npos);
    EXPECT_NE(e.message().find("No such file"), std::string::npos);
}

TEST(Result, VoidResult) {
    kring::result<void> ok;
    EXPECT_TRUE(ok);
    kring::result<void> bad = kring::error(EPERM, "no");
    EXPECT_FALSE(bad);
    EXPECT_EQ(bad.error().code(), EPERM);
}

TEST(ResultDeathTest, ValueOfErrorAborts) {
    auto r = half(5);
    EXPECT_DEATH((void)r.value(), "odd value 5");
}

}  // namespace
