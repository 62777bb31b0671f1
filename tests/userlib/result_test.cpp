#include <cerrno>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "kring/result.hpp"
#include "errno_assert.hpp"

namespace {

kring::result<int> half(int v) {
    if (v % 2)
        return kring::error(EINVAL, "odd value " + std::to_string(v));
    return v / 2;
}

kring::result<void> even(int v) {
    if (v % 2)
        return kring::error(EINVAL, "odd value " + std::to_string(v));
    return {};
}

TEST(Result, CarriesValue) {
    auto r = half(8);
    ASSERT_TRUE(r);
    EXPECT_TRUE(r.has_value());
    EXPECT_EQ(*r, 4);
    EXPECT_EQ(r.value(), 4);
}

TEST(Result, CarriesErrnoAndMessage) {
    auto r = half(3);
    ASSERT_FALSE(r);
    EXPECT_FALSE(r.has_value());
    EXPECT_ERRNO(r.error().code(), EINVAL);
    EXPECT_EQ(r.error().message(), "odd value 3");
    EXPECT_EQ(r.error().error_code(), std::errc::invalid_argument);
}

TEST(Result, FromErrnoNamesTheCall) {
    auto e = kring::error::from_errno(ENOENT, "cannot open /x");
    EXPECT_ERRNO(e.code(), ENOENT);
    EXPECT_NE(e.message().find("cannot open /x: "), std::string::npos);
    EXPECT_NE(e.message().find("No such file"), std::string::npos);
    EXPECT_EQ(e.op(), kring::operation::other);
}

TEST(Result, ContextKeepsCodeAndOperation) {
    auto e = kring::error::from_errno(EACCES, "cannot open /x", kring::operation::open_device);
    EXPECT_EQ(e.op(), kring::operation::open_device);
    auto c = e.with_context("cpu 3");
    EXPECT_ERRNO(c.code(), EACCES);
    EXPECT_EQ(c.op(), kring::operation::open_device);
    EXPECT_EQ(c.message(), "cpu 3: " + e.message());
}

TEST(Result, VoidResult) {
    kring::result<void> ok;
    EXPECT_TRUE(ok);
    EXPECT_NO_THROW(ok.value());
    kring::result<void> bad = kring::error(EPERM, "no");
    EXPECT_FALSE(bad);
    EXPECT_ERRNO(bad.error().code(), EPERM);
}

TEST(Result, ArrowReachesTheValue) {
    kring::result<std::string> r = std::string("abc");
    EXPECT_EQ(r->size(), 3u);
}

TEST(Result, MoveOnlyValue) {
    kring::result<std::unique_ptr<int>> r = std::make_unique<int>(7);
    ASSERT_TRUE(r);
    std::unique_ptr<int> p = std::move(r).value();
    EXPECT_EQ(*p, 7);
}

TEST(Result, ValueOr) {
    EXPECT_EQ(half(8).value_or(-1), 4);
    EXPECT_EQ(half(7).value_or(-1), -1);
}

TEST(Result, AndThenChainsAndPassesErrorsOn) {
    auto quarter = [](int v) { return half(v); };
    EXPECT_EQ(*half(8).and_then(quarter), 2);
    auto r = half(6).and_then(quarter);  // 3 is odd
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().message(), "odd value 3");
    auto s = half(5).and_then(quarter);
    ASSERT_FALSE(s);
    EXPECT_EQ(s.error().message(), "odd value 5");
    auto v = even(4).and_then([] { return half(4); });
    EXPECT_EQ(*v, 2);
    auto w = even(3).and_then([] { return half(4); });
    EXPECT_ERRNO(w.error().code(), EINVAL);
}

TEST(Result, TransformMapsTheValue) {
    auto r = half(8).transform([](int v) { return std::to_string(v); });
    static_assert(std::is_same_v<decltype(r), kring::result<std::string>>);
    EXPECT_EQ(*r, "4");
    auto e = half(9).transform([](int v) { return v + 1; });
    EXPECT_EQ(e.error().message(), "odd value 9");
    auto n = even(2).transform([] { return 5; });
    EXPECT_EQ(*n, 5);
}

TEST(Result, OrElseRecovers) {
    auto r = half(5).or_else([](const kring::error& e) -> kring::result<int> {
        return e.code() == EINVAL ? kring::result<int>(0) : e;
    });
    EXPECT_EQ(*r, 0);
    EXPECT_EQ(*half(4).or_else([](const kring::error& e) -> kring::result<int> { return e; }), 2);
    auto v = even(1).or_else([](const kring::error&) -> kring::result<void> { return {}; });
    EXPECT_TRUE(v);
}

// value() on an error throws, as std::expected's does.
TEST(Result, ValueOfErrorThrows) {
    auto r = half(5);
    try {
        (void)r.value();
        FAIL() << "value() of an error returned";
    } catch (const kring::bad_result_access& e) {
        EXPECT_STREQ(e.what(), "odd value 5");
        EXPECT_ERRNO(e.error().code(), EINVAL);
    }
    kring::result<void> bad = kring::error(EPERM, "no");
    EXPECT_THROW(bad.value(), kring::bad_result_access);
}

#ifndef NDEBUG
// error() of a value and operator* of an error are preconditions: asserted
// in debug builds.
TEST(ResultDeathTest, PreconditionsAsserted) {
    auto ok = half(8);
    EXPECT_DEATH((void)ok.error(), "has_value");
    auto bad = half(5);
    EXPECT_DEATH((void)*bad, "has_value");
}
#endif

}  // namespace
