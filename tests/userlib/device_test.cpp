// libkring's device layer on the host, where no kring module is loaded.
#include <cerrno>
#include <string>

#include <unistd.h>

#include <gtest/gtest.h>

#include "kring/channel.hpp"
#include "kring/device.hpp"
#include "errno_assert.hpp"

namespace {

kring::abi_info good_abi() {
    kring::abi_info a;
    a.major = KRING_ABI_MAJOR;
    a.minor = KRING_ABI_MINOR;
    a.features = kring::required_features;
    a.page_size = 4096;
    a.max_data_pages_order = 16;
    return a;
}

TEST(Device, MissingDeviceIsAnErrorValue) {
    auto d = kring::device::open("/nonexistent/kring");
    ASSERT_FALSE(d);
    EXPECT_ERRNO(d.error().code(), ENOENT);
    EXPECT_EQ(d.error().op(), kring::operation::open_device);
    // The message names the path and what to do about it.
    EXPECT_NE(d.error().message().find("/nonexistent/kring"), std::string::npos);
    EXPECT_NE(d.error().message().find("kring.ko"), std::string::npos);
}

TEST(Device, OtherDeviceIsNotKring) {
    auto d = kring::device::open("/dev/null");
    ASSERT_FALSE(d);
    EXPECT_ERRNO(d.error().code(), ENOTTY);
    EXPECT_EQ(d.error().op(), kring::operation::query_abi);
}

TEST(Device, CompatibleAbiAccepted) {
    EXPECT_TRUE(kring::check_compatible(good_abi()));
    auto newer_minor = good_abi();
    newer_minor.minor += 7;
    newer_minor.features |= 1ULL << 40;
    EXPECT_TRUE(kring::check_compatible(newer_minor));
}

TEST(Device, OtherMajorRefused) {
    for (int delta : {-1, 1}) {
        auto a = good_abi();
        a.major = static_cast<std::uint16_t>(a.major + delta);
        auto r = kring::check_compatible(a);
        ASSERT_FALSE(r) << "major " << a.major;
        EXPECT_ERRNO(r.error().code(), EPROTO);
        EXPECT_EQ(r.error().op(), kring::operation::check_abi);
    }
}

TEST(Device, MissingFeatureRefused) {
    auto a = good_abi();
    a.features = 0;
    auto r = kring::check_compatible(a);
    ASSERT_FALSE(r);
    EXPECT_ERRNO(r.error().code(), EPROTO);
    EXPECT_EQ(r.error().op(), kring::operation::check_abi);
    // The message names the missing features.
    EXPECT_NE(r.error().message().find("features 0x1"), std::string::npos);
}

TEST(Device, BadPageSizeRefused) {
    for (std::uint32_t ps : {0u, 4095u, 12288u}) {
        auto a = good_abi();
        a.page_size = ps;
        EXPECT_FALSE(kring::check_compatible(a)) << ps;
    }
}

TEST(UniqueFd, ClosesAndMoves) {
    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    {
        kring::unique_fd a(fds[0]);
        kring::unique_fd b(std::move(a));
        EXPECT_FALSE(a);
        EXPECT_EQ(b.get(), fds[0]);
    }
    errno = 0;
    EXPECT_EQ(::close(fds[0]), -1);  // already closed by b
    EXPECT_ERRNO(errno, EBADF);
    ::close(fds[1]);
}

TEST(Device, FeatureNames) {
    EXPECT_STREQ(kring::feature_name(KRING_FEAT_AUX), "aux");
    EXPECT_STREQ(kring::feature_name(KRING_FEAT_EVENT), "event");
    EXPECT_EQ(kring::feature_name(1ULL << 63), nullptr);
    EXPECT_EQ(kring::feature_names(KRING_FEAT_SCHED | KRING_FEAT_TIMER), "sched timer");
    EXPECT_EQ(kring::feature_names(KRING_FEAT_MIRROR | (1ULL << 40)), "mirror +0x10000000000");
}

// Every source and mode the options ask for is a feature the channel needs.
TEST(Device, NeededFeaturesCoverTheOptions) {
    kring::channel_options o;
    const std::uint64_t base = KRING_FEAT_ABI_QUERY | KRING_FEAT_DATA_RING;
    EXPECT_EQ(kring::needed_features(o), base);
    const std::pair<std::uint32_t, std::uint64_t> sources[] = {
        {KRING_SOURCE_SYNTHETIC, KRING_FEAT_SYNTHETIC},
        {KRING_SOURCE_SCHED, KRING_FEAT_SCHED},
        {KRING_SOURCE_TIMER, KRING_FEAT_TIMER},
        {KRING_SOURCE_AUX_TRACER, KRING_FEAT_AUX_TRACER},
        {KRING_SOURCE_EVENT, KRING_FEAT_EVENT},
    };
    for (auto [src, bit] : sources) {
        o.source = src;
        EXPECT_EQ(kring::needed_features(o), base | bit) << src;
    }
    o = {};
    o.mirror = true;
    EXPECT_EQ(kring::needed_features(o), base | KRING_FEAT_MIRROR);
    o = {};
    o.read_only = true;
    EXPECT_EQ(kring::needed_features(o), base | KRING_FEAT_OVERWRITE);
    o = {};
    o.pid = 1;
    EXPECT_EQ(kring::needed_features(o), base | KRING_FEAT_CAPTURE);
    o = {};
    o.extra_attr_flags = KRING_ATTR_F_INHERIT;
    EXPECT_EQ(kring::needed_features(o), base | KRING_FEAT_CAPTURE);
    o = {};
    o.clockid = KRING_CLOCK_MONOTONIC_RAW;
    EXPECT_EQ(kring::needed_features(o), base | KRING_FEAT_CLOCKS);
    o = {};
    o.aux_pages_order = 0;  // set, even to 0: an AUX area
    EXPECT_EQ(kring::needed_features(o), base | KRING_FEAT_AUX);
    o = {};
    o.source = KRING_SOURCE_TIMER;
    o.sample_type |= KRING_SAMPLE_CALLCHAIN;
    EXPECT_EQ(kring::needed_features(o), base | KRING_FEAT_TIMER | KRING_FEAT_CALLCHAIN);
}

}  // namespace
