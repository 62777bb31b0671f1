// SPDX-License-Identifier: GPL-2.0
/*
 * Runs the ring cases KUnit runs in the kernel (tests/common/ring_cases.h)
 * on the host build of ring.c, one GoogleTest test per case and parameter:
 * RingCases.<case> and RingCases.<case>/<parameter>, e.g.
 * RingCases.ring_wrap_every_offset/size_13. The KUnit subset they use is
 * tests/host/kunit_host.h; a case may also not make ring.c warn.
 */
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

extern "C" {
#include "kunit_host.h"

extern const struct kunit_case* const kring_ring_host_cases;
}

extern "C" void kunit_host_fail(struct kunit*, const char* file, int line, const char* fmt, ...) {
    char msg[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    ADD_FAILURE_AT(file, line) << msg;
}

namespace {

class RingCase : public ::testing::Test {
public:
    RingCase(const kunit_case* c, const void* param) : case_(c) { test_.param_value = param; }

    void TestBody() override {
        test_.rand = 0x9e3779b97f4a7c15ULL;
        kunit_host_current = &test_;
        kring_host_warnings = 0;
        // A failed assertion comes back here, from C frames only
        // (kunit_host.h); test_ is a member, not a local, so it is
        // intact after the longjmp().
        if (setjmp(test_.abort) == 0)
            case_->run_case(&test_);
        kunit_host_release(&test_);
        kunit_host_current = nullptr;
        EXPECT_EQ(kring_host_warnings, 0UL) << "ring.c warned";
    }

private:
    const kunit_case* case_;
    struct kunit test_ = {};
};

// "size 13" -> "size_13": a test name without spaces.
std::string name_of(const char* desc) {
    std::string s(desc);

    for (char& c : s)
        if (c == ' ')
            c = '_';
    return s;
}

void register_case(const kunit_case* c, const std::string& name, const void* param) {
    ::testing::RegisterTest("RingCases", name.c_str(), nullptr, nullptr, __FILE__, __LINE__,
                            [=]() -> ::testing::Test* { return new RingCase(c, param); });
}

const bool registered = [] {
    for (const kunit_case* c = kring_ring_host_cases; c->run_case; c++) {
        char desc[KUNIT_PARAM_DESC_SIZE] = "";

        if (!c->generate_params) {
            register_case(c, c->name, nullptr);
            continue;
        }
        for (const void* p = c->generate_params(nullptr, desc); p; p = c->generate_params(p, desc))
            register_case(c, std::string(c->name) + "/" + name_of(desc), p);
    }
    return true;
}();

}  // namespace
