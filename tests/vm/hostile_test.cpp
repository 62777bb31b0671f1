// In the guest: hostile and wrong input. Each case gets a clear errno or
// signal, and the console must stay free of kernel reports (checked by the
// runner after the tests).
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <memory>
#include <chrono>
#include <random>
#include <thread>

#include <gtest/gtest.h>

#include "raw_ring.hpp"
#include "test_util.hpp"
#include "errno_assert.hpp"

namespace {

using kt::page_size;

// An open, configured (KRING_SOURCE_NONE) channel.
struct configured {
    kt::raw_channel ch;
    configured(std::uint64_t flags = 0) {
        EXPECT_EQ(ch.open_dev(), 0);
        EXPECT_EQ(ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1, 0, flags)), 0);
    }
};

int mmap_errno(int fd, std::size_t len, int prot, int flags, off_t off) {
    void* p = ::mmap(nullptr, len, prot, flags, fd, off);
    if (p != MAP_FAILED) {
        ::munmap(p, len);
        return 0;
    }
    return errno;
}

TEST(Hostile, AttrValidation) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_NONE, -1);
    a.size = KRING_ATTR_SIZE_VER0 - 8;
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "short attr";
    a = kt::make_attr(KRING_SOURCE_MAX, -1);
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "unknown source";
    a = kt::make_attr(KRING_SOURCE_NONE, -1, 0, 1ULL << 40);
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "unknown flag";
    a = kt::make_attr(KRING_SOURCE_NONE, -1, 1ULL << 5);
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "unsupported sample_type bit";
    a = kt::make_attr(KRING_SOURCE_NONE, -1);
    a.reserved[2] = 1;
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "reserved field";
    a = kt::make_attr(KRING_SOURCE_NONE, 4096);
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "cpu out of range";
    a = kt::make_attr(KRING_SOURCE_SYNTHETIC, -1);
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "synthetic needs a cpu";
    a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0);
    a.config[1] = 8;
    EXPECT_ERRNO(ch.configure(a), EINVAL) << "payload smaller than its header";

    // A newer caller's larger struct: unknown bytes must be zero.
    struct {
        kring_attr a;
        std::uint64_t more[2];
    } big{};
    big.a = kt::make_attr(KRING_SOURCE_NONE, -1);
    big.a.size = sizeof(big);
    big.more[1] = 7;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_CONFIGURE, &big), E2BIG);
    big.more[1] = 0;
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_CONFIGURE, &big), 0) << "zero tail is accepted";
    a = kt::make_attr(KRING_SOURCE_NONE, -1);
    EXPECT_ERRNO(ch.configure(a), EBUSY) << "configured twice";
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_CONFIGURE, reinterpret_cast<kring_attr*>(8)), EFAULT);
}

TEST(Hostile, IoctlsBeforeConfigure) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    EXPECT_ERRNO(ch.ioctl0(KRING_IOC_ENABLE), EINVAL);
    EXPECT_ERRNO(mmap_errno(ch.fd, 2 * page_size(), PROT_READ | PROT_WRITE, MAP_SHARED, 0), EINVAL);
    kring_stats st{};
    st.size = 8;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_STATS, &st), EINVAL) << "short stats struct";
    std::uint64_t id = 0;
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_ID, &id), 0);
    EXPECT_GT(id, 0u);
}

TEST(Hostile, BadMmapArguments) {
    configured c;
    int fd = c.ch.fd;
    long ps = page_size();
    const int rw = PROT_READ | PROT_WRITE;
    EXPECT_ERRNO(mmap_errno(fd, ps, rw, MAP_SHARED, 0), EINVAL) << "control page only";
    EXPECT_ERRNO(mmap_errno(fd, 4 * ps, rw, MAP_SHARED, 0), EINVAL) << "3 data pages";
    EXPECT_ERRNO(mmap_errno(fd, 2 * ps, rw, MAP_SHARED, ps), EINVAL) << "offset";
    EXPECT_ERRNO(mmap_errno(fd, 2 * ps, rw, MAP_PRIVATE, 0), EINVAL) << "MAP_PRIVATE";
    int e = mmap_errno(fd, 2 * ps, rw | PROT_EXEC, MAP_SHARED, 0);
    EXPECT_TRUE(e == EINVAL || e == EPERM) << "PROT_EXEC: " << e;
    EXPECT_ERRNO(mmap_errno(fd, (1 + (1L << 20)) * ps, rw, MAP_SHARED, 0), EINVAL) << "too large";
    // A second mapping must match the buffer's size.
    ASSERT_EQ(c.ch.map_ring(2, true, false), 0);
    EXPECT_ERRNO(mmap_errno(fd, 3 * ps, rw, MAP_SHARED, 0), EINVAL) << "other size";
    EXPECT_EQ(mmap_errno(fd, 5 * ps, PROT_READ, MAP_SHARED, 0), 0) << "same size again";
}

TEST(Hostile, MirrorLengthRules) {
    configured c(KRING_ATTR_F_MIRROR);
    long ps = page_size();
    const int rw = PROT_READ | PROT_WRITE;
    EXPECT_ERRNO(mmap_errno(c.ch.fd, 4 * ps, rw, MAP_SHARED, 0), EINVAL) << "3 data pages";
    EXPECT_ERRNO(mmap_errno(c.ch.fd, 7 * ps, rw, MAP_SHARED, 0), EINVAL) << "2 x 3 data pages";
    EXPECT_EQ(mmap_errno(c.ch.fd, 9 * ps, rw, MAP_SHARED, 0), 0) << "2 x 4 data pages";
}

// The signal a one-byte store to @p raises in this process (0: none).
sigjmp_buf store_jmp;
void store_handler(int sig) { siglongjmp(store_jmp, sig); }

int store_signal(std::uint8_t* p) {
    struct sigaction sa {
    }, old_bus{}, old_segv{};
    sa.sa_handler = store_handler;
    ::sigaction(SIGBUS, &sa, &old_bus);
    ::sigaction(SIGSEGV, &sa, &old_segv);
    int sig = sigsetjmp(store_jmp, 1);
    if (sig == 0) {
        *static_cast<volatile std::uint8_t*>(p) = 1;
    }
    ::sigaction(SIGBUS, &old_bus, nullptr);
    ::sigaction(SIGSEGV, &old_segv, nullptr);
    return sig;
}

TEST(Hostile, DataPagesAreNotWritable) {
    configured c;
    ASSERT_EQ(c.ch.map_ring(2, true, false), 0);
    std::uint8_t* data = const_cast<std::uint8_t*>(c.ch.data);
    // A store to a data page not yet touched: the write fault is refused.
    EXPECT_EQ(store_signal(data + 100), SIGBUS);
    const std::size_t page = kt::page_size();
    // A page already mapped read-only by a read: making it writable is refused.
    volatile std::uint8_t v = data[page + 8];
    (void)v;
    EXPECT_EQ(store_signal(data + page + 8), SIGBUS);
    // The kernel writing there on our behalf: EFAULT.
    int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
    ASSERT_GE(zero, 0);
    errno = 0;
    EXPECT_EQ(::read(zero, data + 2 * page, 64), -1);
    EXPECT_ERRNO(errno, EFAULT);
    ::close(zero);
    // The control page is writable: data_tail and need_wakeup are ours.
    EXPECT_EQ(store_signal(reinterpret_cast<std::uint8_t*>(&c.ch.ctl->need_wakeup)), 0);
    c.ch.ctl->need_wakeup = 0;
    for (std::size_t i = 0; i < 4 * page; i++)
        ASSERT_EQ(c.ch.data[i], 0) << i;
}

TEST(Hostile, ReadOnlyMappingCannotBecomeWritable) {
    configured c;
    ASSERT_EQ(c.ch.map_ring(1, false, false), 0);
    errno = 0;
    EXPECT_EQ(::mprotect(c.ch.map, c.ch.map_len, PROT_READ | PROT_WRITE), -1);
    EXPECT_ERRNO(errno, EACCES);
    EXPECT_EQ(store_signal(reinterpret_cast<std::uint8_t*>(&c.ch.ctl->data_tail)), SIGSEGV)
        << "store to a read-only control page";
}

TEST(Hostile, MappingCannotBeSplitOrMoved) {
    configured c;
    ASSERT_EQ(c.ch.map_ring(2, true, false), 0);
    auto* base = static_cast<std::uint8_t*>(c.ch.map);
    long ps = page_size();
    errno = 0;
    EXPECT_EQ(::munmap(base + 2 * ps, ps), -1) << "partial munmap";
    EXPECT_ERRNO(errno, EINVAL);
    EXPECT_EQ(::munmap(base + 4 * ps, ps), -1) << "munmap of the tail";
    errno = 0;
    EXPECT_EQ(::mprotect(base + ps, ps, PROT_READ), -1) << "mprotect of a part";
    errno = 0;
    void* r = ::mremap(base, c.ch.map_len, 2 * ps, 0);
    EXPECT_EQ(r, MAP_FAILED) << "shrinking mremap";
    r = ::mremap(base, c.ch.map_len, c.ch.map_len * 2, MREMAP_MAYMOVE);
    EXPECT_EQ(r, MAP_FAILED) << "growing mremap";
    void* dst = ::mmap(nullptr, c.ch.map_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(dst, MAP_FAILED);
    r = ::mremap(base, c.ch.map_len, c.ch.map_len, MREMAP_MAYMOVE | MREMAP_FIXED, dst);
    EXPECT_EQ(r, MAP_FAILED) << "moving mremap";
    if (r == MAP_FAILED)
        ::munmap(dst, c.ch.map_len);
    // Still intact and usable.
    EXPECT_EQ(c.ch.ctl->data_size, std::uint64_t(4 * ps));
}

TEST(Hostile, ForkedChildHasNoMapping) {
    configured c;
    ASSERT_EQ(c.ch.map_ring(1, true, false), 0);
    volatile std::uint64_t v = c.ch.ctl->data_size;
    (void)v;
    int st = kt::in_child([&] {
        unsigned char vec;
        // mincore fails with ENOMEM on an unmapped range.
        return ::mincore(c.ch.map, page_size(), &vec) == -1 && errno == ENOMEM ? 0 : 1;
    });
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "status " << st;
}

TEST(Hostile, CloseWhileMappedAndRmmodRefused) {
    auto c = std::make_unique<configured>();
    ASSERT_EQ(c->ch.map_ring(1, true, false), 0);
    ::close(c->ch.fd);
    c->ch.fd = -1;
    // The mapping keeps the channel (and the module) alive.
    EXPECT_EQ(c->ch.ctl->data_size, std::uint64_t(2 * page_size()));
    errno = 0;
    long r = ::syscall(SYS_delete_module, "kring", O_NONBLOCK);
    int e = errno;
    EXPECT_EQ(r, -1) << "kring was unloaded while mapped";
    // Refused because it is in use; for an unprivileged caller, before that.
    EXPECT_TRUE(e == EWOULDBLOCK || e == EBUSY || (::geteuid() != 0 && e == EPERM))
        << "errno " << e;
    c.reset();  // munmap: the last reference goes
}

TEST(Hostile, GarbageTailWhileProducing) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_attr a = kt::make_attr(KRING_SOURCE_SYNTHETIC, 0, KRING_SAMPLE_TIME);
    a.config[1] = 64;
    ASSERT_EQ(ch.configure(a), 0);
    ASSERT_EQ(ch.map_ring(1, true, false), 0);
    ASSERT_EQ(ch.ioctl0(KRING_IOC_ENABLE), 0);
    std::atomic<bool> stop{false};
    std::thread vandal([&] {
        std::mt19937_64 rng(42);
        while (!stop.load(std::memory_order_relaxed)) {
            std::uint64_t v = rng();
            switch (v & 3) {
                case 0:
                    break;  // random
                case 1:
                    v = __atomic_load_n(&ch.ctl->data_head, __ATOMIC_RELAXED) + (v & 0xffff);
                    break;
                case 2:
                    v = ~0ULL - (v & 0xff);
                    break;
                case 3:
                    v &= 0xfff;
                    break;
            }
            __atomic_store_n(&ch.ctl->data_tail, v, __ATOMIC_RELAXED);
        }
    });
    // A second at least, and on until the generator has produced under it.
    std::this_thread::sleep_for(std::chrono::seconds(1));
    kt::wait_until([&] { return ch.stats().produced > 1000; });
    stop = true;
    vandal.join();
    ASSERT_EQ(ch.ioctl0(KRING_IOC_DISABLE), 0);
    kring_stats st = ch.stats();
    EXPECT_GT(st.produced, 1000u);
    EXPECT_EQ(st.produced, st.written + st.lost_no_space + st.lost_too_big + st.lost_paused);
    // Nothing was written outside the data area: the mapping's pages
    // beyond the buffer do not exist, and the data pages still parse as
    // far as the head says once the tail is honest again.
    EXPECT_EQ(ch.ctl->data_size, std::uint64_t(2 * page_size()));
}

// In a child: become nobody with RLIMIT_MEMLOCK 0, so that every page it
// maps is charged to the user's kring allowance. 0, or 10 or 11 when that
// fails.
int become_nobody_without_memlock() {
    if (!kt::become_nobody())
        return 10;
    rlimit rl{0, 0};
    return ::setrlimit(RLIMIT_MEMLOCK, &rl) ? 11 : 0;
}

TEST(Hostile, LockedMemoryLimitForUnprivileged) {
    int st = kt::in_child([] {
        if (int e = become_nobody_without_memlock())
            return e;
        kt::raw_channel ch;
        if (ch.open_dev())
            return 12;
        if (ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1)))
            return 13;
        // 2^12 pages is far above the per-user allowance.
        int e = ch.map_ring(12, true, false);
        if (e != EPERM)
            return 20 + (e & 0x3f);
        // A small buffer fits in the allowance.
        kt::raw_channel small;
        if (small.open_dev() || small.configure(kt::make_attr(KRING_SOURCE_NONE, -1)))
            return 14;
        return small.map_ring(2, true, false) == 0 ? 0 : 15;
    });
    EXPECT_TRUE(WIFEXITED(st)) << "status " << st;
    EXPECT_EQ(WEXITSTATUS(st), 0) << "exit code (20+errno when the big map did not get EPERM)";
}

// MemAvailable in KiB (/proc/meminfo), -1 when it cannot be read.
long mem_available_kb() { return kt::proc_value("/proc/meminfo", "MemAvailable: %ld kB"); }

// A mapping beyond the locked-memory limits is refused before a page is
// allocated, as perf_mmap() checks its limits before rb_alloc(): 256 MiB of
// data pages asked for and refused eight times in a row leave MemAvailable
// where it was right after each refusal (a buffer allocated and dropped
// would be freed only after an RCU grace period and a workqueue pass).
// 256 MiB of AUX pages are refused the same way (an AUX area is freed at
// once, so there the figure shows no difference either way).
TEST(Hostile, RefusedMappingAllocatesNothing) {
    int st = kt::in_child([] {
        if (int e = become_nobody_without_memlock())
            return e;
        long before = mem_available_kb(), lowest = before;
        if (before < 0)
            return 12;
        for (int i = 0; i < 8; i++) {
            kt::raw_channel ch;
            if (ch.open_dev() || ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1)))
                return 13;
            if (ch.map_ring(16, true, false) != EPERM)
                return 20;
            lowest = std::min(lowest, mem_available_kb());
        }
        kt::raw_channel ch;
        if (ch.open_dev() || ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1)))
            return 13;
        if (ch.map_ring(0, true, false))
            return 14;  // one data page fits in the allowance
        std::size_t aux_len = page_size() << 16;
        std::uint64_t off = ch.map_len;
        for (int i = 0; i < 8; i++) {
            kt::mapping aux = kt::map_aux(ch.fd, ch.ctl, off, aux_len, true);
            if (aux.error() != EPERM)
                return 21;
            lowest = std::min(lowest, mem_available_kb());
        }
        long dip = before - lowest;
        std::printf("MemAvailable %ld kB before, lowest %ld kB after a refusal (%ld kB less)\n",
                    before, lowest, dip);
        // 256 MiB allocated would show as 262144 kB; allow other activity.
        return dip < 65536 ? 0 : 30;
    });
    EXPECT_TRUE(WIFEXITED(st)) << "status " << st;
    EXPECT_EQ(WEXITSTATUS(st), 0)
        << "exit code (20/21: not EPERM, 30: a refused mapping allocated its pages)";
}

TEST(Hostile, ProducerModuleRefusesUnknownChannel) {
    int fd = ::open("/kring/kring_example.ko", O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        GTEST_SKIP() << "kring_example.ko is not in this guest";
    errno = 0;
    EXPECT_EQ(::syscall(SYS_finit_module, fd, "channel=999999999 count=1", 0), -1);
    // The module refuses the channel; an unprivileged caller cannot load it at all.
    EXPECT_ERRNO(errno, ::geteuid() == 0 ? ENOENT : EPERM);
    ::close(fd);
}

}  // namespace
