// errno comparisons whose failure names the values: ASSERT_ERRNO(errno,
// EACCES) fails with "errno is EPERM (1), expected EACCES (13)", where
// ASSERT_EQ would print "1" and "13". For errno, error::code(), and the
// kernel's negative errno (ASSERT_ERRNO(rc, -ENOSPC)).
#pragma once

#include <string.h>

#include <string>

#include <gtest/gtest.h>

namespace kt {

// "EACCES (13)", "-EINVAL (-22)" (the kernel's negative errno); the bare
// number for what is no errno.
inline std::string errno_name(long long e) {
    const long long m = e < 0 ? -e : e;
    const char* n = m > 0 && m < 4096 ? ::strerrorname_np(static_cast<int>(m)) : nullptr;
    if (!n)
        return std::to_string(e);
    return (e < 0 ? "-" : "") + std::string(n) + " (" + std::to_string(e) + ")";
}

inline ::testing::AssertionResult errno_eq(const char* actual_expr, const char* expected_expr,
                                           long long actual, long long expected) {
    if (actual == expected)
        return ::testing::AssertionSuccess();
    (void)expected_expr;  // errno_name(expected) names it
    return ::testing::AssertionFailure()
           << actual_expr << " is " << errno_name(actual) << ", expected " << errno_name(expected);
}

}  // namespace kt

// EXPECT_PRED_FORMAT2 would name the expansion of errno (__errno_location()):
// the arguments are stringified here, before they expand.
#define EXPECT_ERRNO(actual, expected) \
    GTEST_ASSERT_(::kt::errno_eq(#actual, #expected, actual, expected), GTEST_NONFATAL_FAILURE_)
#define ASSERT_ERRNO(actual, expected) \
    GTEST_ASSERT_(::kt::errno_eq(#actual, #expected, actual, expected), GTEST_FATAL_FAILURE_)
