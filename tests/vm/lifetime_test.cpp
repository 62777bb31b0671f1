// In the guest: 10^4 open / configure / mmap / fault / munmap / close cycles
// (data rings of several sizes, mirrored or not, with and without an AUX
// area, closed before or after their mappings go, some shared with a
// forked child) leave nothing behind: the module's reference count, the
// locked-memory charge of the user who mapped them, the pages kring holds
// for rings (its own exact count), and, on a kernel with kmemleak (debug),
// no unreferenced object allocated by kring. Free memory is printed.
#include <sys/resource.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "raw_ring.hpp"
#include "test_util.hpp"

namespace {

long read_long(const char* path) {
    std::ifstream f(path);
    long v = -1;
    f >> v;
    return f ? v : -1;
}

// The pages kring holds for rings, as the module counts them where each
// is allocated and where each is freed; -1 without debugfs.
long ring_pages() { return read_long("/sys/kernel/debug/kring/pages"); }

// ring_pages() once it reads 0, or what it reads after kt::patience:
// buffers are freed after a grace period, on a workqueue.
long ring_pages_once_freed() {
    long pages = ring_pages();
    kt::wait_until(
        [&] {
            pages = ring_pages();
            return pages == 0;
        },
        kt::patience, std::chrono::milliseconds(100));
    return pages;
}

long mem_available_kb() { return kt::proc_value("/proc/meminfo", "MemAvailable: %ld kB"); }

// MemAvailable once the page cache and reclaimable slab are dropped.
long settled_mem_available_kb() {
    ::sync();
    if (std::FILE* f = std::fopen("/proc/sys/vm/drop_caches", "w")) {
        std::fputs("3", f);
        std::fclose(f);
    }
    return mem_available_kb();
}

// Runs @fn in a child as nobody with RLIMIT_MEMLOCK 0 (so every page it
// maps is charged to the user's kring allowance); returns fn's result
// (>= 0) or -1 when the child failed.
template <class F>
long as_nobody(F&& fn) {
    int p[2];
    if (::pipe(p))
        return -1;
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(p[0]);
        rlimit rl{0, 0};
        long r = -1;
        if (kt::become_nobody() && ::setrlimit(RLIMIT_MEMLOCK, &rl) == 0)
            r = fn();
        if (::write(p[1], &r, sizeof(r)) != sizeof(r))
            ::_exit(1);
        ::_exit(0);
    }
    ::close(p[1]);
    long r = -1;
    if (::read(p[0], &r, sizeof(r)) != sizeof(r))
        r = -1;
    ::close(p[0]);
    int st = 0;
    ::waitpid(pid, &st, 0);
    return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? r : -1;
}

// How many one-page rings (two pages charged each) nobody can map before
// the allowance runs out: the allowance in use, measured from outside.
long fill_allowance() {
    return as_nobody([] {
        std::vector<std::unique_ptr<kt::raw_channel>> chs;
        for (int i = 0; i < 4096; i++) {
            auto ch = std::make_unique<kt::raw_channel>();
            if (ch->open_dev() || ch->configure(kt::make_attr(KRING_SOURCE_NONE, -1)))
                return -2L;
            int e = ch->map_ring(0, true, false);
            if (e == EPERM)
                return long(chs.size());
            if (e)
                return -3L;
            chs.push_back(std::move(ch));
        }
        return -4L;  // no limit reached
    });
}

// One cycle, its shape chosen by @x.
int cycle(std::uint32_t x) {
    const std::size_t ps = kt::page_size();
    kt::raw_channel ch;
    if (ch.open_dev())
        return 1;
    kring_attr a = kt::make_attr(KRING_SOURCE_NONE, -1);
    const bool mirror = x & 1;
    if (mirror)
        a.flags |= KRING_ATTR_F_MIRROR;
    if (ch.configure(a))
        return 2;
    const unsigned order = (x >> 1) % 4;
    if (ch.map_ring(order, true, mirror))
        return 3;
    // Fault every page in: the control page and each data page (twice
    // over when mirrored).
    volatile const std::uint8_t* d = ch.data;
    for (std::size_t off = 0; off < ch.data_size * (mirror ? 2 : 1); off += ps)
        (void)d[off];
    kt::mapping aux;
    if (x & 8) {
        const std::uint64_t aux_size = ps << ((x >> 4) % 3);
        const std::uint64_t aux_off = (ch.map_len + aux_size - 1) / aux_size * aux_size;
        aux = kt::map_aux(ch.fd, ch.ctl, aux_off, aux_size, !(x & 64));
        if (aux.error())
            return 4;
        volatile const std::uint8_t* p = static_cast<const std::uint8_t*>(aux.addr());
        (void)p[0];
    }
    if ((x & 0x380) == 0x380) {  // one cycle in eight
        // A child shares the fd (kring's mappings are not copied by fork,
        // as perf's), maps the buffer itself, and exits first.
        pid_t pid = ::fork();
        if (pid == 0) {
            void* m = ::mmap(nullptr, ch.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, ch.fd, 0);
            if (m == MAP_FAILED)
                ::_exit(1);
            ::_exit(static_cast<kring_ctl_page*>(m)->data_size == ch.data_size ? 0 : 2);
        }
        int st = 0;
        ::waitpid(pid, &st, 0);
        if (!WIFEXITED(st) || WEXITSTATUS(st))
            return 5;
    }
    if (x & 256) {
        // Close the fd first: the mappings keep the channel alive.
        ::close(ch.fd);
        ch.fd = -1;
    }
    return 0;  // the rest goes with ch and aux, in reverse order
}

bool kmemleak(const char* cmd) {
    std::FILE* f = std::fopen("/sys/kernel/debug/kmemleak", "w");
    if (!f)
        return false;
    bool ok = std::fputs(cmd, f) >= 0;
    return std::fclose(f) == 0 && ok;
}

TEST(Lifetime, CyclesLeaveNothingBehind) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root (to become nobody and to read kmemleak)";
    const char* env = std::getenv("KRING_LIFETIME_CYCLES");
    const long cycles = env ? std::atol(env) : 10000;
    const long ref0 = read_long("/sys/module/kring/refcnt");
    ASSERT_GE(ref0, 0) << "no /sys/module/kring/refcnt";
    // No ring exists once the earlier tests' last frees are done.
    ASSERT_GE(ring_pages(), 0) << "no /sys/kernel/debug/kring/pages";
    ASSERT_EQ(ring_pages_once_freed(), 0)
        << "ring pages held before the cycles (an earlier test's leak?)";
    const long allowance0 = fill_allowance();
    ASSERT_GT(allowance0, 0) << "could not measure the locked-memory allowance";

    // Warm the slab caches, then take the memory baseline.
    ASSERT_EQ(as_nobody([] {
                  for (std::uint32_t i = 0; i < 200; i++)
                      if (int r = cycle(i * 2654435761u))
                          return long(r);
                  return 0L;
              }),
              0);
    const bool leak_check = kmemleak("clear");
    std::fprintf(stderr, "lifetime: baseline taken (kmemleak %s)\n", leak_check ? "on" : "off");

    // Two halves, free memory printed before, between and after (for the
    // record: a leak would grow with the cycles in both halves).
    long avail[3];
    for (int half = 0; half < 2; half++) {
        avail[half] = settled_mem_available_kb();
        const long failed = as_nobody([cycles, half] {
            std::uint32_t x = 12345u + 7919u * half;
            for (long i = 0; i < cycles / 2; i++) {
                x = x * 1664525u + 1013904223u;
                if (int r = cycle(x))
                    return i * 10 + r;
                if (i % 1000 == 999)
                    std::fprintf(stderr, "lifetime: %ld cycles\n", i + 1);
            }
            return 0L;
        });
        ASSERT_EQ(failed, 0) << "cycle " << failed / 10 << " failed at step " << failed % 10;
    }
    avail[2] = settled_mem_available_kb();

    // The last fput() of a mapping may be deferred: wait for it.
    long ref = read_long("/sys/module/kring/refcnt");
    kt::wait_until(
        [&] {
            ref = read_long("/sys/module/kring/refcnt");
            return ref == ref0;
        },
        kt::patience, std::chrono::milliseconds(100));
    const long pages = ring_pages_once_freed();
    const long allowance = fill_allowance();
    std::printf(
        "%ld cycles: module refcnt %ld -> %ld, nobody's allowance %ld -> %ld one-page "
        "rings, ring pages held after %ld, MemAvailable %ld -> %ld -> %ld kB\n",
        cycles, ref0, ref, allowance0, allowance, pages, avail[0], avail[1], avail[2]);
    EXPECT_EQ(ref, ref0) << "module references leaked";
    // A buffer's charge goes when the buffer is freed: every buffer was.
    EXPECT_EQ(allowance, allowance0) << "locked-memory charge leaked";
    // Every page, exactly: one lost apart from its buffer shows here.
    EXPECT_EQ(pages, 0) << "ring pages leaked";
    // MemAvailable is printed, not judged: it moves by more than 10 MB
    // either way over a half without any leak (the page allocator's
    // per-CPU lists, slab caches), as much as a leak of every page would
    // take. The page count above is exact, kmemleak (debug) covers the
    // rest of kring's allocations.
    if (!leak_check) {
        std::printf("kmemleak: not in this kernel (the debug kernel has it)\n");
        return;
    }
    // kmemleak reports objects unreferenced for at least 5 s, after a scan
    // (two scans: the first only marks candidates).
    ::sleep(6);
    std::fprintf(stderr, "lifetime: kmemleak scan\n");
    ASSERT_TRUE(kmemleak("scan"));
    ASSERT_TRUE(kmemleak("scan"));
    std::ifstream f("/sys/kernel/debug/kmemleak");
    std::string line, report;
    int objects = 0, kring_objects = 0;
    bool in_kring = false;
    while (std::getline(f, line)) {
        if (line.rfind("unreferenced object", 0) == 0) {
            objects++;
            in_kring = false;
        }
        if (line.find("[kring]") != std::string::npos && !in_kring) {
            in_kring = true;
            kring_objects++;
        }
        if (kring_objects && report.size() < 4000)
            report += line + "\n";
    }
    std::printf("kmemleak: %d unreferenced objects, %d allocated by kring\n", objects,
                kring_objects);
    EXPECT_EQ(kring_objects, 0) << report;
}

}  // namespace
