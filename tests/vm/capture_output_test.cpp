// In the guest: KRING_IOC_SET_OUTPUT sends one channel's records into
// another's buffer, under perf's constraints.
#include <sys/wait.h>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"

namespace {

constexpr std::uint64_t id_type = kt::sched_type | KRING_SAMPLE_IDENTIFIER;

kring_attr with_id(kring_attr a) {
    a.sample_type = id_type;
    return a;
}

// A timer channel on CPU 0 writes into the buffer of a sched channel on
// CPU 0; both ids appear there, each with its own payload.
TEST(CaptureOutput, SameCpuShareOneBuffer) {
    kt::raw_channel sched, timer;
    ASSERT_EQ(sched.open_dev(), 0);
    ASSERT_EQ(sched.configure(with_id(kt::attr(KRING_SOURCE_SCHED, 0, -1))), 0);
    ASSERT_EQ(timer.open_dev(), 0);
    kring_attr t = with_id(kt::attr(KRING_SOURCE_TIMER, 0, -1));
    t.config[0] = 200;
    ASSERT_EQ(timer.configure(t), 0);
    ASSERT_EQ(timer.set_output(sched.fd), 0);
    ASSERT_EQ(sched.map_ring(6, true, false), 0);
    std::uint64_t sched_id = 0, timer_id = 0;
    ASSERT_EQ(sched.ioctl_arg(KRING_IOC_ID, &sched_id), 0);
    ASSERT_EQ(timer.ioctl_arg(KRING_IOC_ID, &timer_id), 0);
    ASSERT_EQ(sched.ioctl0(KRING_IOC_ENABLE), 0);
    ASSERT_EQ(timer.ioctl0(KRING_IOC_ENABLE), 0);
    // Redirected and enabled: no changes now.
    EXPECT_ERRNO(timer.set_output(-1), EBUSY);
    long from_sched = 0, from_timer = 0, bad = 0;
    std::uint64_t last = 0, decreasing = 0;
    // One layout for both: the same attr.sample_type, RAW and SEQ added.
    const std::uint64_t type = sched.sample_type();
    EXPECT_EQ(type, id_type | KRING_SAMPLE_SEQ);
    EXPECT_EQ(timer.sample_type(), type);
    auto take = [&](const kring_record_header& h, const std::uint8_t* rec) {
        kt::sample s;
        if (h.type != KRING_RECORD_SAMPLE || !kt::parse_sample(rec, type, s)) {
            bad++;
            return;
        }
        if (s.time < last)
            decreasing++;
        last = s.time;
        if (s.id == sched_id && s.raw_size >= sizeof(kring_sched_raw))
            from_sched++;
        else if (s.id == timer_id && s.raw_size >= sizeof(kring_timer_raw) &&
                 s.raw_size < sizeof(kring_sched_raw))
            from_timer++;
        else
            bad++;
        if (s.cpu != 0)
            bad++;
    };
    // Until both sources have written (this thread's naps switch on CPU 0).
    kt::pin_to(0);
    kt::wait_until([&] {
        sched.consume(take);
        return from_sched > 0 && from_timer > 10;
    });
    kt::unpin();
    ASSERT_EQ(timer.ioctl0(KRING_IOC_DISABLE), 0);
    ASSERT_EQ(sched.ioctl0(KRING_IOC_DISABLE), 0);
    sched.consume(take);
    std::printf("set-output: %ld sched + %ld timer records in one buffer\n", from_sched,
                from_timer);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(decreasing, 0u);
    EXPECT_GT(from_sched, 0);
    EXPECT_GT(from_timer, 10);
}

TEST(CaptureOutput, Constraints) {
    kt::raw_channel c0, c1, mine, other, mapped, synth;
    ASSERT_EQ(c0.open_dev(), 0);
    ASSERT_EQ(c0.configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
    ASSERT_EQ(c1.open_dev(), 0);
    ASSERT_EQ(c1.configure(kt::attr(KRING_SOURCE_SCHED, kt::online_cpus() > 1 ? 1 : 0, -1)), 0);
    if (kt::online_cpus() > 1) {
        EXPECT_ERRNO(c1.set_output(c0.fd), EINVAL);  // other CPU
    }
    EXPECT_ERRNO(c0.set_output(c0.fd), EINVAL);  // itself
    EXPECT_ERRNO(c0.set_output(0), EINVAL);      // not a kring fd (stdin)
    EXPECT_ERRNO(c0.set_output(12345), EBADF);

    // Per-thread: the same task is fine, another one is not.
    pid_t child = ::fork();
    if (child == 0) {
        ::pause();
        ::_exit(0);
    }
    ASSERT_GT(child, 0);
    ASSERT_EQ(mine.open_dev(), 0);
    ASSERT_EQ(mine.configure(kt::attr(KRING_SOURCE_SCHED, -1, 0)), 0);
    ASSERT_EQ(other.open_dev(), 0);
    ASSERT_EQ(other.configure(kt::attr(KRING_SOURCE_SCHED, -1, child)), 0);
    EXPECT_ERRNO(other.set_output(mine.fd), EINVAL);
    EXPECT_ERRNO(mine.set_output(c0.fd), EINVAL);  // per-thread into per-CPU
    kt::raw_channel mine2;
    ASSERT_EQ(mine2.open_dev(), 0);
    kring_attr t = kt::attr(KRING_SOURCE_TIMER, -1, 0);
    t.config[0] = 100;
    ASSERT_EQ(mine2.configure(t), 0);
    EXPECT_EQ(mine2.set_output(mine.fd), 0);
    // Redirected: no buffer of its own to map.
    EXPECT_ERRNO(mine2.map_ring(1, true, false), EINVAL);
    EXPECT_EQ(mine2.set_output(-1), 0);  // undone
    EXPECT_EQ(mine2.map_ring(1, true, false), 0);
    // A channel mapped itself cannot be redirected; a synthetic one neither.
    ASSERT_EQ(mapped.open_dev(), 0);
    ASSERT_EQ(mapped.configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
    ASSERT_EQ(mapped.map_ring(1, true, false), 0);
    EXPECT_ERRNO(mapped.set_output(c0.fd), EBUSY);
    ASSERT_EQ(synth.open_dev(), 0);
    ASSERT_EQ(synth.configure(kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, kt::sched_type)), 0);
    EXPECT_ERRNO(synth.set_output(c0.fd), EINVAL);
    // Different clocks cannot share a buffer.
    kt::raw_channel raw;
    ASSERT_EQ(raw.open_dev(), 0);
    kring_attr r = kt::attr(KRING_SOURCE_SCHED, 0, -1);
    r.clockid = KRING_CLOCK_MONOTONIC_RAW;
    ASSERT_EQ(raw.configure(r), 0);
    EXPECT_ERRNO(raw.set_output(c0.fd), EINVAL);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);
}

}  // namespace
