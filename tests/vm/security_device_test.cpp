// In the guest: what /dev/kring refuses an unprivileged caller, and what no
// record carries (docs/SECURITY.md). A configure that claims more than a
// page is refused from its size; the test generators need privilege; no
// record carries a kernel address.
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"
#include "security.hpp"

using kt::exited_ok;
using kt::is_root;

namespace {

// A configure that claims more than a page is refused from its size alone:
// the kernel does not scan a gigabyte of user memory for zeroes.
TEST(Security, AttrLargerThanAPageIsRefused) {
    const std::size_t ps = ::sysconf(_SC_PAGESIZE);
    std::vector<std::uint64_t> buf(2 * ps / 8, 0);
    auto* a = reinterpret_cast<kring_attr*>(buf.data());
    *a = kt::make_attr(KRING_SOURCE_NONE, -1);
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    a->size = 1u << 30;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_CONFIGURE, a), E2BIG);
    a->size = ps + 8;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_CONFIGURE, a), E2BIG);
    a->size = ps;  // a page, zero past the struct: a newer caller's, fine
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_CONFIGURE, a), 0);
}

// The synthetic generator and the emulated AUX tracer run kernel work on
// behalf of the caller: root only, unless kring.test_sources=1.
TEST(Security, TestGeneratorsNeedPrivilege) {
    kt::module_param p("test_sources");
    if (!is_root() || !p.usable())
        GTEST_SKIP() << "needs root and kring's test_sources parameter";
    auto configure_both = [](bool drop) {
        return kt::in_child([drop] {
            if (drop && !kt::become_nobody())
                return 1;
            kt::raw_channel s, a;
            if (s.open_dev() || a.open_dev())
                return 2;
            int es = s.configure(kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, kt::sched_type));
            int ea = a.configure(kt::make_attr(KRING_SOURCE_AUX_TRACER, 0, 0));
            // 0: both allowed; 3: both EACCES; else the errors
            if (es == 0 && ea == 0)
                return 0;
            if (es == EACCES && ea == EACCES)
                return 3;
            return 10 + (es & 0x3f);
        });
    };
    ASSERT_TRUE(p.set("0"));
    int nobody_default = configure_both(true);
    int root_default = configure_both(false);
    ASSERT_TRUE(p.set("1"));
    int nobody_allowed = configure_both(true);
    EXPECT_TRUE(WIFEXITED(nobody_default) && WEXITSTATUS(nobody_default) == 3)
        << "unprivileged: status " << nobody_default << " (3 = EACCES for both)";
    EXPECT_TRUE(exited_ok(root_default)) << root_default;
    EXPECT_TRUE(exited_ok(nobody_allowed)) << nobody_allowed;
}

// A SAMPLE's IP field never holds an address of kring's own code.
TEST(Security, SyntheticRecordsCarryNoCodeAddress) {
    if (!is_root())
        GTEST_SKIP() << "the synthetic generator needs privilege";
    const std::uint64_t type = KRING_SAMPLE_IP | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
                               KRING_SAMPLE_CPU | KRING_SAMPLE_RAW;
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, type);
    a.config[3] = 200;
    ASSERT_EQ(ch.configure(a), 0);
    const std::uint64_t layout = ch.sample_type();  // type and SEQ
    ASSERT_EQ(ch.map_ring(4, true, false), 0);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    long n = 0, with_ip = 0, bad = 0;
    for (auto end = std::chrono::steady_clock::now() + kt::patience;
         n < 200 && std::chrono::steady_clock::now() < end;) {
        ::usleep(10000);
        ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            kt::sample s;
            if (h.type != KRING_RECORD_SAMPLE)
                return;
            if (!kt::parse_sample(rec, layout, s)) {
                bad++;
                return;
            }
            n++;
            if (s.ip)
                with_ip++;
        });
    }
    ASSERT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(n, 200);
    EXPECT_EQ(with_ip, 0) << "an address in a record defeats module KASLR";
}

}  // namespace
