// In the guest: the timer source samples a busy loop at the requested
// frequency and finds its instruction pointers inside the loop.
#include <algorithm>
#include <chrono>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"

// The busy loop lives in its own section so its address range is known:
// the linker defines __start_/__stop_ symbols for it.
extern "C" const char __start_kring_spin[];
extern "C" const char __stop_kring_spin[];
// The call-chain tests' loop and its caller, and their loops with a bad
// frame pointer, likewise (this file is built with frame pointers).
extern "C" const char __start_kring_cc_hot[];
extern "C" const char __stop_kring_cc_hot[];
extern "C" const char __start_kring_cc_worker[];
extern "C" const char __stop_kring_cc_worker[];
extern "C" const char __start_kring_badfp[];
extern "C" const char __stop_kring_badfp[];

namespace {

__attribute__((noinline, section("kring_spin"))) void spin_chunk(volatile std::uint64_t* x) {
    for (int i = 0; i < 20000; i++)
        *x = *x * 3 + i;
}

bool in(std::uint64_t ip, const char* start, const char* stop) {
    const char* p = reinterpret_cast<const char*>(ip);
    return p >= start && p < stop;
}

TEST(CaptureTimer, RefusesBadConfig) {
    kt::raw_channel a, b, c;
    ASSERT_EQ(a.open_dev(), 0);
    EXPECT_ERRNO(a.configure(kt::attr(KRING_SOURCE_TIMER, -1, 0)), EINVAL);  // no frequency
    ASSERT_EQ(b.open_dev(), 0);
    kring_attr at = kt::attr(KRING_SOURCE_TIMER, -1, 0);
    at.config[0] = 1000000;
    EXPECT_ERRNO(b.configure(at), EINVAL);
    ASSERT_EQ(c.open_dev(), 0);
    at = kt::attr(KRING_SOURCE_TIMER, -1, 0);
    at.config[1] = 100;  // 100 ns
    EXPECT_ERRNO(c.configure(at), EINVAL);
}

// Per-thread timer on this thread at 200 Hz while it spins for 2 s of CPU
// time: the periods the samples cover are within 10% of frequency x CPU
// time, and the user-mode samples' IPs fall inside the loop.
TEST(CaptureTimer, PerThreadCountAndIps) {
    const unsigned hz = 200;
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, -1, 0);
    a.config[0] = hz;
    ASSERT_EQ(ch.open(a, 6), 0);
    volatile std::uint64_t x = 1;
    const std::uint64_t want_cpu = 2000000000ull;
    ASSERT_EQ(ch.enable(), 0);
    std::uint64_t c0 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID);
    std::uint64_t c1 = c0;
    while (c1 - c0 < want_cpu) {
        for (int i = 0; i < 10; i++)
            spin_chunk(&x);
        c1 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID);
    }
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    const std::uint32_t self = kt::gettid_();
    long user = 0, in_loop = 0, foreign = 0;
    std::uint64_t weighted = 0;
    for (const auto& r : ch.recs) {
        if (r.s.tid != self)
            foreign++;
        weighted += r.s.period;
        if (r.timer.flags & KRING_TIMER_F_USER) {
            user++;
            const char* ip = reinterpret_cast<const char*>(r.s.ip);
            if (ip >= __start_kring_spin && ip < __stop_kring_spin)
                in_loop++;
        }
    }
    double expected = double(hz) * double(c1 - c0) / 1e9;
    double got = double(ch.recs.size());
    std::printf(
        "timer: %zu samples (%.1f weighted by period), expected %.1f (%u Hz x %.3f s CPU); "
        "%ld user, %ld in the loop\n",
        ch.recs.size(), double(weighted) * hz / 1e9, expected, hz, double(c1 - c0) / 1e9, user,
        in_loop);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_EQ(ch.lost, 0u);
    EXPECT_EQ(foreign, 0);
    // A late expiry (a busy host stalls the emulated CPU) folds periods into
    // one sample whose PERIOD says so: the periods covered are what must
    // match the CPU time; how many samples carry them depends on the
    // host's pace (printed above, not asserted).
    double periods = double(weighted) * hz / 1e9;
    EXPECT_NEAR(periods, expected, expected * 0.10);
    EXPECT_GT(got, 0);
    EXPECT_GT(user, long(got * 0.5));
    EXPECT_GE(double(in_loop), double(user) * 0.9);
}

// With KRING_ATTR_F_EXCLUDE_KERNEL a thread that spends most of its time in
// system calls gets user-mode samples only. It runs for at least 0.5 s of
// CPU time and until 21 samples were written (how many come in a given
// time depends on the host's pace).
TEST(CaptureTimer, ExcludeKernel) {
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, -1, 0, KRING_ATTR_F_EXCLUDE_KERNEL);
    a.config[0] = 500;
    ASSERT_EQ(ch.open(a, 4), 0);
    ASSERT_EQ(ch.enable(), 0);
    std::uint64_t c0 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID), c1 = c0;
    volatile std::uint64_t x = 1;
    const auto deadline = std::chrono::steady_clock::now() + kt::patience;
    while ((c1 - c0 < 500000000ull || ch.recs.size() <= 20) &&
           std::chrono::steady_clock::now() < deadline) {
        for (int i = 0; i < 200; i++)
            ::syscall(SYS_getppid);
        spin_chunk(&x);
        c1 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID);
        if (c1 - c0 >= 500000000ull)
            ch.drain();
    }
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    // A kernel address has its top bit set on x86-64 and arm64 alike (a
    // user one may be above 2^47 on arm64: 48- and 52-bit user spaces).
    long kernel = 0;
    for (const auto& r : ch.recs)
        kernel += !(r.timer.flags & KRING_TIMER_F_USER) || (r.s.ip >> 63) != 0;
    std::printf("exclude-kernel: %zu samples, %ld in kernel mode\n", ch.recs.size(), kernel);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_GT(ch.recs.size(), 20u);
    EXPECT_EQ(kernel, 0);
}

// A per-CPU timer samples whatever runs on its CPU, idle included, and only
// there, and keeps sampling: it runs until it has written a sample at least
// 500 ms after the enable, and its samples cover the periods from the
// enable to the last one (a late expiry folds periods into one sample).
TEST(CaptureTimer, PerCpuSamplesItsCpu) {
    kt::channel ch;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, 0, -1);
    a.config[1] = 10000000;  // 10 ms
    ASSERT_EQ(ch.open(a, 6), 0);
    std::uint64_t t0 = kt::now_ns();
    ASSERT_EQ(ch.enable(), 0);
    auto last_time = [&] { return ch.recs.empty() ? 0 : ch.recs.back().s.time; };
    EXPECT_TRUE(kt::wait_until(
        [&] {
            ch.drain();
            return last_time() >= t0 + 500000000ull;
        },
        kt::patience, std::chrono::milliseconds(20)))
        << "no sample 500 ms after the enable";
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    long wrong_cpu = 0;
    std::uint64_t weighted = 0, t1 = t0;
    for (const auto& r : ch.recs) {
        wrong_cpu += r.s.cpu != 0 || r.timer.cpu != 0;
        weighted += r.s.period;
        t1 = std::max(t1, r.s.time);
    }
    double expected = double(t1 - t0) / 1e7;
    std::printf("per-CPU timer: %zu samples, %.1f periods covered, %.1f expected\n", ch.recs.size(),
                double(weighted) / 1e7, expected);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_EQ(wrong_cpu, 0);
    EXPECT_NEAR(double(weighted) / 1e7, expected, expected * 0.10 + 1);
}

// ---- Call chains (KRING_SAMPLE_CALLCHAIN) ---------------------------------

constexpr std::uint64_t cc_type = kt::timer_type | KRING_SAMPLE_CALLCHAIN;

kring_attr cc_attr(unsigned hz, std::uint64_t depth = 0) {
    kring_attr a = kt::make_attr(KRING_SOURCE_TIMER, -1, cc_type);
    a.pid = 0;
    a.config[0] = hz;
    a.config[2] = depth;
    return a;
}

__attribute__((noinline)) std::uint64_t cc_note(std::uint64_t x) {
    __asm__ volatile("" : "+r"(x));
    return x;
}

// The loop, in a function that calls another after it (not as a tail
// call), so that it has a frame record of its own: a frame pointer walk
// from a leaf misses the leaf's caller, whose return address is still in
// a register or on top of the stack, not in a record (perf's call graphs
// have the same gap).
__attribute__((noinline, section("kring_cc_hot"))) std::uint64_t cc_hot(std::uint64_t x) {
    for (int i = 0; i < 20000; i++) {
        x = x * 3 + std::uint64_t(i);
        __asm__ volatile("" : "+r"(x));
    }
    x = cc_note(x);
    __asm__ volatile("" : "+r"(x));
    return x;
}

// Its caller, whose return address the walk must find.
__attribute__((noinline, section("kring_cc_worker"))) std::uint64_t cc_worker(std::uint64_t x) {
    for (int i = 0; i < 10; i++)
        x = cc_hot(x);
    __asm__ volatile("" : "+r"(x));
    return x;
}

// Runs @body until @ch holds @want samples of this thread that @keep
// accepts, and for at least @cpu_ns of CPU time; bounded by kt::patience.
template <class Body, class Keep>
std::size_t sample_until(kt::channel& ch, std::size_t want, std::uint64_t cpu_ns, Body body,
                         Keep keep) {
    const std::uint32_t self = kt::gettid_();
    const auto deadline = std::chrono::steady_clock::now() + kt::patience;
    const std::uint64_t c0 = kt::now_ns(CLOCK_THREAD_CPUTIME_ID);
    std::size_t n = 0, seen = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        body();
        ch.drain();
        for (; seen < ch.recs.size(); seen++)
            n += ch.recs[seen].s.tid == self && keep(ch.recs[seen]);
        if (n >= want && kt::now_ns(CLOCK_THREAD_CPUTIME_ID) - c0 >= cpu_ns)
            break;
    }
    return n;
}

// Every chain is perf's: a context marker, the sample's IP, addresses of
// that context (kernel ones with the top bit set), then maybe the user
// part; at most @depth addresses, markers not counted. "" or what is wrong.
std::string chain_shape(const kt::rec& r, unsigned depth) {
    const auto& c = r.chain;
    const bool user = r.timer.flags & KRING_TIMER_F_USER;
    if (c.size() < 2)
        return "fewer than 2 entries";
    if (c[0] != (user ? KRING_CONTEXT_USER : KRING_CONTEXT_KERNEL))
        return "does not open with its context's marker";
    if (c[1] != r.s.ip)
        return "its first address is not the sample's IP";
    unsigned addrs = 0;
    bool in_user = user;
    for (std::size_t i = 1; i < c.size(); i++) {
        if (c[i] == KRING_CONTEXT_USER && !in_user) {
            in_user = true;
            continue;
        }
        if (c[i] >= std::uint64_t(-4095))
            return "a marker out of place at " + std::to_string(i);
        if (!in_user && !(c[i] >> 63))
            return "a user address in the kernel part at " + std::to_string(i);
        addrs++;
    }
    if (addrs > depth)
        return std::to_string(addrs) + " addresses, above the depth " + std::to_string(depth);
    return {};
}

TEST(CaptureTimer, CallChainsRefuseBadConfig) {
    kt::raw_channel a, b, c, d, e;
    ASSERT_EQ(a.open_dev(), 0);
    EXPECT_ERRNO(a.configure(cc_attr(100, KRING_CALLCHAIN_MAX + 1)), EINVAL) << "depth";
    ASSERT_EQ(b.open_dev(), 0);
    kring_attr at = cc_attr(100, 4);
    at.sample_type = kt::timer_type;
    EXPECT_ERRNO(b.configure(at), EINVAL) << "a depth without call chains";
    ASSERT_EQ(c.open_dev(), 0);
    at = kt::make_attr(KRING_SOURCE_SCHED, -1, kt::sched_type | KRING_SAMPLE_CALLCHAIN);
    at.pid = 0;
    EXPECT_ERRNO(c.configure(at), EINVAL) << "the sched source";
    ASSERT_EQ(d.open_dev(), 0);
    EXPECT_ERRNO(d.configure(kt::make_attr(KRING_SOURCE_NONE, -1, KRING_SAMPLE_CALLCHAIN)), EINVAL)
        << "a producer channel";
    ASSERT_EQ(e.open_dev(), 0);
    EXPECT_EQ(e.configure(cc_attr(100)), 0);
    EXPECT_EQ(e.sample_type() & KRING_SAMPLE_CALLCHAIN, KRING_SAMPLE_CALLCHAIN);
}

// User-mode samples of a loop called by cc_worker: every chain is well
// formed, and those taken in the loop name cc_worker as the caller.
TEST(CaptureTimer, CallChainsWalkUserFrames) {
    kt::channel ch;
    ASSERT_EQ(ch.open(cc_attr(1000), 8), 0);
    ASSERT_EQ(ch.enable(), 0);
    std::uint64_t x = 1;
    auto in_loop = [](const kt::rec& r) {
        return (r.timer.flags & KRING_TIMER_F_USER) &&
               in(r.s.ip, __start_kring_cc_hot, __stop_kring_cc_hot);
    };
    sample_until(
        ch, 100, 200000000ull, [&] { x = cc_worker(x); }, in_loop);
    ASSERT_EQ(ch.disable(), 0);
    ch.drain();
    std::size_t loop = 0, via_worker = 0;
    for (const auto& r : ch.recs) {
        std::string bad = chain_shape(r, KRING_CALLCHAIN_MAX);
        ASSERT_EQ(bad, "") << "sample at " << std::hex << r.s.ip;
        if (r.s.tid != std::uint32_t(kt::gettid_()) || !in_loop(r))
            continue;
        loop++;
        // The caller's return address comes right after the IP.
        via_worker +=
            r.chain.size() > 2 && in(r.chain[2], __start_kring_cc_worker, __stop_kring_cc_worker);
    }
    std::printf("call chains: %zu samples, %zu in the loop, %zu of them via cc_worker\n",
                ch.recs.size(), loop, via_worker);
    EXPECT_EQ(ch.bad, 0u);
    EXPECT_EQ(ch.lost, 0u);
    ASSERT_GE(loop, 100u);
    // Samples on the few instructions before the frame is set up or
    // after it is torn down see the caller's frame instead.
    EXPECT_GE(double(via_worker), double(loop) * 0.9);
    EXPECT_NE(x, 0u);
}

// Kernel-mode samples (a thread in system calls) carry the kernel part
// and then the task's user part; with CONFIG_STACKTRACE the kernel part
// goes beyond the IP. A depth of 3 bounds every chain.
TEST(CaptureTimer, CallChainsOfKernelSamples) {
    for (unsigned depth : {0u, 3u}) {
        SCOPED_TRACE("depth " + std::to_string(depth));
        kt::channel ch;
        ASSERT_EQ(ch.open(cc_attr(1000, depth), 8), 0);
        ASSERT_EQ(ch.enable(), 0);
        int fd = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        std::vector<char> buf(1 << 16);
        auto kernel = [](const kt::rec& r) { return !(r.timer.flags & KRING_TIMER_F_USER); };
        sample_until(
            ch, 50, 200000000ull,
            [&] {
                for (int i = 0; i < 20; i++)
                    ASSERT_EQ(::read(fd, buf.data(), buf.size()), ssize_t(buf.size()));
            },
            kernel);
        ::close(fd);
        ASSERT_EQ(ch.disable(), 0);
        ch.drain();
        const unsigned max = depth ? depth : KRING_CALLCHAIN_MAX;
        std::size_t ksamples = 0, deep = 0, with_user = 0;
        for (const auto& r : ch.recs) {
            ASSERT_EQ(chain_shape(r, max), "") << "sample at " << std::hex << r.s.ip;
            if (r.s.tid != std::uint32_t(kt::gettid_()) || !kernel(r))
                continue;
            ksamples++;
            auto u = std::find(r.chain.begin(), r.chain.end(), KRING_CONTEXT_USER);
            deep += u - r.chain.begin() > 2;
            with_user += u != r.chain.end() && u + 1 != r.chain.end() && !(u[1] >> 63);
        }
        std::printf(
            "kernel call chains: %zu kernel samples, %zu deeper than the IP, %zu with "
            "a user part\n",
            ksamples, deep, with_user);
        EXPECT_EQ(ch.bad, 0u);
        ASSERT_GE(ksamples, 50u);
        if (depth == 0) {
            // The user part follows unless the depth was spent on the kernel's.
            EXPECT_GE(double(with_user), double(ksamples) * 0.9);
            if (kt::kallsyms_has("stack_trace_save"))
                EXPECT_GE(double(deep), double(ksamples) * 0.9);
            else
                std::printf(
                    "kernel call chains: no stack_trace_save (CONFIG_STACKTRACE off): "
                    "the IP alone, not checked deeper\n");
        }
    }
}

// The loop with a frame pointer that is not one: @fp in the frame pointer
// register while it spins (restored after), in both architectures' way.
__attribute__((noinline, section("kring_badfp"))) void spin_with_fp(std::uint64_t fp,
                                                                    std::uint64_t n) {
#if defined(__x86_64__)
    // Below the red zone, then rbp saved on the stack.
    __asm__ volatile(
        "sub $128, %%rsp\n\tpush %%rbp\n\tmov %1, %%rbp\n"
        "1:\tsub $1, %0\n\tjnz 1b\n\tpop %%rbp\n\tadd $128, %%rsp"
        : "+r"(n)
        : "r"(fp)
        : "memory", "cc");
#elif defined(__aarch64__)
    __asm__ volatile(
        "mov x9, x29\n\tmov x29, %1\n"
        "1:\tsubs %0, %0, #1\n\tb.ne 1b\n\tmov x29, x9"
        : "+r"(n)
        : "r"(fp)
        : "x9", "memory", "cc");
#else
    (void)fp;
    (void)n;
#endif
}

// A hostile user stack costs the walk nothing: a kernel address, an
// unmapped or unaligned one, or a record that points at itself ends it
// at once, with what it read so far.
TEST(CaptureTimer, CallChainsSurviveBadFramePointers) {
#if !defined(__x86_64__) && !defined(__aarch64__)
    GTEST_SKIP() << "skipped: no frame pointer register written for this architecture";
#endif
    struct bad {
        const char* what;
        std::uint64_t fp;
        std::size_t user_addrs;  // the IP and what the walk may add
    };
    // A frame record on this stack (above the loop's stack pointer, as
    // the walk requires) whose next record is itself.
    alignas(16) volatile std::uint64_t on_stack[2];
    on_stack[0] = reinterpret_cast<std::uint64_t>(&on_stack[0]);
    on_stack[1] = 0x1234;
    const std::uint64_t unmapped = kt::unmapped_above_stack();
    ASSERT_NE(unmapped, 0u) << "no unmapped page above the stack";
    const bad cases[] = {
        {"kernel address", 0xffffffff81000000ull, 1},
        {"unmapped", unmapped, 1},
        {"unaligned", reinterpret_cast<std::uint64_t>(&on_stack[0]) + 1, 1},
        {"record pointing at itself", reinterpret_cast<std::uint64_t>(&on_stack[0]), 2},
    };
    for (const bad& b : cases) {
        SCOPED_TRACE(b.what);
        kt::channel ch;
        ASSERT_EQ(ch.open(cc_attr(1000), 8), 0);
        ASSERT_EQ(ch.enable(), 0);
        auto in_asm = [](const kt::rec& r) {
            return (r.timer.flags & KRING_TIMER_F_USER) &&
                   in(r.s.ip, __start_kring_badfp, __stop_kring_badfp);
        };
        sample_until(
            ch, 20, 50000000ull, [&] { spin_with_fp(b.fp, 20000000); }, in_asm);
        ASSERT_EQ(ch.disable(), 0);
        ch.drain();
        std::size_t n = 0, exact = 0;
        for (const auto& r : ch.recs) {
            ASSERT_EQ(chain_shape(r, KRING_CALLCHAIN_MAX), "");
            if (r.s.tid != std::uint32_t(kt::gettid_()) || !in_asm(r))
                continue;
            n++;
            exact +=
                r.chain.size() == 1 + b.user_addrs && (b.user_addrs < 2 || r.chain[2] == 0x1234);
        }
        std::printf("bad frame pointer (%s): %zu samples in the loop, %zu as expected\n", b.what, n,
                    exact);
        ASSERT_GE(n, 20u);
        // Samples on the loop's first or last instructions see the real rbp.
        EXPECT_GE(double(exact), double(n) * 0.9);
    }
}

}  // namespace
