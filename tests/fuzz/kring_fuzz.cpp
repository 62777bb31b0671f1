// kring_fuzz: a seeded syscall fuzzer for /dev/kring, run in the guest.
//
// Several processes (forked from one parent, so they share open file
// descriptions), each with several threads, run random operations on a
// shared pool of kring fds: open, configure with random attrs, every ioctl
// with random commands and payloads, mmap / munmap / mremap / mprotect /
// madvise of the data ring and the AUX area with random lengths, offsets
// and protections, random values written to every user-writable control
// page field, loads from every mapped page, a consumer walking the ring,
// poll and epoll, read and write, set-output graphs, fd passing over unix
// sockets, fork, close, exit, and (as root, optionally) CPU hotplug. Some
// processes drop to the unprivileged user nobody first.
//
// What it checks by itself: every failed call returns an errno from the
// documented set, no process dies of a signal it did not expect, the run
// ends within its time limit (else it prints what every thread was doing),
// and when everything is closed the module's reference count is back to
// where it started. The kernel console is checked by the runner: any BUG,
// WARNING, KASAN, KCSAN, lockdep or hung-task report fails the run.
//
// The seed fixes every thread's sequence of operations (not their
// interleaving): `kring_fuzz --seed N` with the same --procs, --threads
// and --ops replays a run.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <grp.h>
#include <time.h>
#include <ucontext.h>
#include <unistd.h>

#include <linux/kring.h>
#include <linux/kring_test.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

// ---------------------------------------------------------------------
// Operations and what the processes share

// clang-format off
#define FUZZ_OPS(X) \
    X(open) X(close) X(dup) X(configure) X(ioctl) X(ioctl_garbage) \
    X(mmap_data) X(mmap_aux) X(munmap) X(mremap) X(mprotect) X(madvise) \
    X(ctl_write) X(load) X(consume) X(poll) X(epoll) X(rw) X(set_output) \
    X(send_fd) X(recv_fd) X(fork) X(hotplug)
// clang-format on

enum op_kind {
#define X(n) op_##n,
    FUZZ_OPS(X)
#undef X
        op_count
};

const char* const op_names[] = {
#define X(n) #n,
    FUZZ_OPS(X)
#undef X
};

// Relative frequency of each operation.
const unsigned op_weight[op_count] = {
    // clang-format off
    /* open */ 6, /* close */ 4, /* dup */ 2, /* configure */ 10, /* ioctl */ 16,
    /* ioctl_garbage */ 4, /* mmap_data */ 10, /* mmap_aux */ 6, /* munmap */ 6, /* mremap */ 2,
    /* mprotect */ 2, /* madvise */ 3, /* ctl_write */ 10, /* load */ 6, /* consume */ 5,
    /* poll */ 3, /* epoll */ 2, /* rw */ 1, /* set_output */ 3, /* send_fd */ 2,
    /* recv_fd */ 2, /* fork */ 1, /* hotplug */ 1,
    // clang-format on
};

constexpr int max_procs = 16;
constexpr int max_threads = 8;
constexpr int fd_slots = 16;
constexpr int map_slots = 16;
constexpr int fd_base = 64;  // kring fds live at >= 64, away from stdio and sockets

// Lives in a MAP_SHARED anonymous mapping made before the first fork.
struct shared_state {
    std::atomic<std::uint64_t> ops;
    std::atomic<std::uint64_t> calls[op_count];
    std::atomic<std::uint64_t> succeeded[op_count];
    std::atomic<std::uint64_t> errnos[256];
    std::atomic<std::uint64_t> signals;  // SIGSEGV/SIGBUS caught where expected
    std::atomic<int> failed;
    std::atomic<int> pids[max_procs];                 // the workers, for pidfd_getfd
    std::atomic<int> cur_op[max_procs][max_threads];  // for a stall report
    std::atomic<std::uint64_t> cur_n[max_procs][max_threads];
    char failure[512];
};
shared_state* g_sh;

struct options {
    std::uint64_t seed = 0;
    std::uint64_t ops = 20000;  // in all
    int procs = 4;
    int threads = 3;
    int nobody = 1;  // of the processes, this many drop to nobody
    bool hotplug = false;
    int time_limit = 600;
    int stall = 120;  // seconds without one completed operation
    bool verbose = false;
};
options g_opt;
long g_page;
int g_ncpus;

void fail(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void fail(const char* fmt, ...) {
    int expected = 0;
    if (!g_sh->failed.compare_exchange_strong(expected, 1))
        return;
    va_list ap;
    va_start(ap, fmt);
    std::vsnprintf(g_sh->failure, sizeof(g_sh->failure), fmt, ap);
    va_end(ap);
}

// Every errno a kring call may return on hostile input (besides success).
bool errno_allowed(int e) {
    switch (e) {
        case EINVAL:
        case ENOMEM:
        case ENODEV:
        case EOPNOTSUPP:
        case EBUSY:
        case EAGAIN:
        case EACCES:
        case ENOSPC:
        case EFAULT:
        case E2BIG:
        case EXDEV:
        case EPERM:
        case ESRCH:
        case ENOTTY:
        case EBADF:
        case EINTR:
        case ENXIO:
        case EOVERFLOW:
        case EMFILE:
        case ENFILE:
        case EEXIST:
        case ENOENT:
        case ENOSYS:  // a syscall the kernel was built without (madvise in the tiny kernels)
            return true;
        default:
            return false;
    }
}

// ---------------------------------------------------------------------
// Random numbers: splitmix64, one stream per thread.

struct rng {
    std::uint64_t s;
    explicit rng(std::uint64_t seed) : s(seed) {}
    std::uint64_t next() {
        std::uint64_t z = (s += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    std::uint64_t below(std::uint64_t n) { return n ? next() % n : 0; }
    bool chance(unsigned pct) { return below(100) < pct; }
    template <class T, std::size_t N>
    T pick(const T (&a)[N]) {
        return a[below(N)];
    }
    // A value a hostile caller would try: edges, small, huge, random.
    std::uint64_t nasty() {
        static const std::uint64_t edges[] = {0,
                                              1,
                                              2,
                                              7,
                                              8,
                                              4095,
                                              4096,
                                              4097,
                                              0x7fffffff,
                                              0x80000000,
                                              0xffffffff,
                                              0x100000000ULL,
                                              0x7fffffffffffffffULL,
                                              0x8000000000000000ULL,
                                              ~0ULL,
                                              ~0ULL - 7,
                                              1ULL << 40,
                                              0xffff888000000000ULL};
        switch (below(4)) {
            case 0:
                return pick(edges);
            case 1:
                return below(1 << 20);
            case 2:
                return next() & ~7ULL;
            default:
                return next();
        }
    }
};

std::uint64_t stream_seed(int proc, int thread) {
    rng r(g_opt.seed ^ (0x1000003ULL * static_cast<std::uint64_t>(proc + 1)) ^
          (0x7f4a7c15ULL * static_cast<std::uint64_t>(thread + 1)));
    return r.next();
}

// ---------------------------------------------------------------------
// Faults where they are expected: a thread arms a sigjmp_buf around each
// access to a kring mapping; SIGSEGV and SIGBUS there jump back.

// volatile, and fenced around the access: the stores must happen around
// the faulting access, not be merged or moved by the compiler.
thread_local sigjmp_buf* volatile t_jmp;

// The faulting instruction's address in a signal's context.
unsigned long long fault_ip(const void* uc) {
    const auto& mc = static_cast<const ucontext_t*>(uc)->uc_mcontext;
#if defined(__x86_64__)
    return static_cast<unsigned long long>(mc.gregs[REG_RIP]);
#elif defined(__aarch64__)
    return static_cast<unsigned long long>(mc.pc);
#else
    return 0;
#endif
}

void on_fault(int sig, siginfo_t* si, void* uc) {
    if (t_jmp) {
        sigjmp_buf* j = t_jmp;
        t_jmp = nullptr;
        siglongjmp(*j, sig);
    }
    // A fault outside a guarded access: say where (addr2line -e kring_fuzz
    // on the ip), then die of it.
    char msg[128];
    int n = std::snprintf(msg, sizeof(msg), "kring_fuzz: signal %d at ip %#llx, address %p\n", sig,
                          fault_ip(uc), si->si_addr);
    if (::write(2, msg, static_cast<std::size_t>(n)) < 0) {}
    ::signal(sig, SIG_DFL);
    ::raise(sig);
}

template <class F>
int guarded(F&& f) {  // 0, or the signal the access raised
    sigjmp_buf j;
    int sig = sigsetjmp(j, 1);
    if (sig == 0) {
        t_jmp = &j;
        std::atomic_signal_fence(std::memory_order_seq_cst);
        f();
        std::atomic_signal_fence(std::memory_order_seq_cst);
        t_jmp = nullptr;
        return 0;
    }
    g_sh->signals.fetch_add(1, std::memory_order_relaxed);
    return sig;
}

// ---------------------------------------------------------------------
// One process's view: the fd slots (shared by its threads) and its
// mappings. Threads race on the fd slots on purpose: a slot's fd may be
// closed, or replaced by another kring fd, while another thread uses it.
// The mapping table is guarded by a reader-writer lock so that an access
// never lands on memory the process reused for something else.

struct map_ent {
    std::uint8_t* addr = nullptr;
    std::size_t len = 0;
    int prot = 0;
    int fd = -1;
    bool aux = false;
};

struct proc_state {
    int index = 0;
    bool root = false;
    std::atomic<int> fds[fd_slots];
    std::shared_mutex maps_lock;
    std::array<map_ent, map_slots> maps;
    int sock_in = -1, sock_out = -1;  // SCM_RIGHTS from the previous / to the next process
    std::uint8_t* guard = nullptr;    // a PROT_NONE page after a scratch page
};
proc_state* g_ps;

// A slot's fd, mostly one that is open (a closed one gives EBADF, a case
// worth some calls, not most).
int slot_fd(rng& r) {
    int fd = -1;
    for (int i = 0; i < 3 && fd < 0; i++)
        fd = g_ps->fds[r.below(fd_slots)].load(std::memory_order_relaxed);
    return fd;
}

// Moves @fd to >= fd_base and puts it in a random slot; the fd it replaces
// is closed.
void adopt_fd(rng& r, int fd) {
    if (fd < 0)
        return;
    int hi = ::fcntl(fd, F_DUPFD_CLOEXEC, fd_base);
    ::close(fd);
    if (hi < 0)
        return;
    int old = g_ps->fds[r.below(fd_slots)].exchange(hi);
    if (old >= 0)
        ::close(old);
}

// Records a call's outcome; false (and a failure) on an errno outside the
// documented set.
bool outcome(op_kind k, long rc, int err, const char* what) {
    if (rc >= 0) {
        g_sh->succeeded[k].fetch_add(1, std::memory_order_relaxed);
        return true;
    }
    g_sh->errnos[err & 255].fetch_add(1, std::memory_order_relaxed);
    if (!errno_allowed(err)) {
        fail("%s returned errno %d (%s), not one kring documents", what, err, std::strerror(err));
        return false;
    }
    return true;
}

// ---------------------------------------------------------------------
// Arguments

// Mostly an attr the module accepts (so that channels get configured,
// mapped and fed), with one field made hostile a quarter of the time.
void random_attr(rng& r, kring_attr& a) {
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    static const std::uint32_t sources[] = {
        KRING_SOURCE_NONE,  KRING_SOURCE_NONE,  KRING_SOURCE_SYNTHETIC,  KRING_SOURCE_SYNTHETIC,
        KRING_SOURCE_SCHED, KRING_SOURCE_TIMER, KRING_SOURCE_AUX_TRACER, KRING_SOURCE_AUX_TRACER};
    a.source = r.pick(sources);
    a.flags = r.below(4);  // OVERWRITE | MIRROR
    static const std::uint64_t sample_bits[] = {
        KRING_SAMPLE_IDENTIFIER, KRING_SAMPLE_IP,  KRING_SAMPLE_TID,    KRING_SAMPLE_TIME,
        KRING_SAMPLE_ID,         KRING_SAMPLE_CPU, KRING_SAMPLE_PERIOD, KRING_SAMPLE_RAW};
    for (std::uint64_t b : sample_bits)
        if (r.chance(50))
            a.sample_type |= b;
    a.cpu = static_cast<int>(r.below(std::max(g_ncpus, 1)));
    a.pid = -1;
    a.wakeup_events = static_cast<std::uint32_t>(r.below(4));
    a.wakeup_watermark = r.chance(50) ? 0 : static_cast<std::uint32_t>(r.below(8192));
    switch (a.source) {
        case KRING_SOURCE_SYNTHETIC:
            // Mostly bounded: a rate and a stop count; sometimes unbounded.
            a.config[0] = r.chance(50) ? 0 : 1000 + r.below(100000);
            a.config[1] = 24 + 8 * r.below(r.chance(90) ? 16 : 600);
            a.config[2] = r.below(2);  // KRING_SYNTH_F_NEST
            a.config[3] = r.chance(90) ? 1 + r.below(3000) : 0;
            if (a.config[3] == 0 && a.config[0] == 0)
                a.config[0] = 5000;
            break;
        case KRING_SOURCE_SCHED:
        case KRING_SOURCE_TIMER:
            if (a.source == KRING_SOURCE_SCHED) {
                a.config[0] = r.below(2);
            } else {
                a.config[0] = r.chance(80) ? 1 + r.below(20000) : 0;
                a.config[1] = 10000 + r.below(10000000);
                if (r.chance(50))
                    a.flags |= KRING_ATTR_F_EXCLUDE_KERNEL;
            }
            [[fallthrough]];
        case KRING_SOURCE_AUX_TRACER:
            // Any capture mode: per-CPU, per-thread, or a task on one CPU
            // (with inherit).
            if (r.chance(50)) {
                const int pids[] = {0, static_cast<int>(::getpid()), static_cast<int>(::getppid()),
                                    1};
                a.pid = r.pick(pids);
                if (r.chance(50))
                    a.cpu = -1;
                if (r.chance(40))
                    a.flags |= KRING_ATTR_F_INHERIT;
            }
            if (a.source == KRING_SOURCE_AUX_TRACER) {
                a.config[0] = r.below(300);
                a.config[1] = 8 * r.below(64);
                a.config[2] = r.below(40);
                a.config[3] = r.chance(80) ? r.below(20000) : 0;
            }
            break;
        default:
            break;
    }
    static const std::uint32_t clocks[] = {0, 1, 4, 7, 0x100};
    a.clockid = r.pick(clocks);
    a.aux_watermark = static_cast<std::uint32_t>(r.below(65536));
    if (!r.chance(25))
        return;
    switch (r.below(12)) {
        case 0:
            a.source = static_cast<std::uint32_t>(r.nasty());
            break;
        case 1:
            a.flags = r.nasty();
            break;
        case 2:
            a.sample_type = r.nasty();
            break;
        case 3: {
            static const int cpus[] = {-1, 2, 4096, -2, 0x7fffffff};
            a.cpu = r.pick(cpus);
            break;
        }
        case 4: {
            static const int pids[] = {-2, 0x7fffffff, 2, 0};
            a.pid = r.pick(pids);
            break;
        }
        case 5:
            a.wakeup_events = static_cast<std::uint32_t>(r.nasty());
            break;
        case 6:
            a.wakeup_watermark = static_cast<std::uint32_t>(r.nasty());
            break;
        case 7:
            a.config[r.below(4)] = r.nasty();
            break;
        case 8:
            a.clockid = static_cast<std::uint32_t>(r.nasty());
            break;
        case 9:
            a.aux_watermark = static_cast<std::uint32_t>(r.nasty());
            break;
        case 10:
            a.reserved[r.below(3)] = r.nasty();
            break;
        default:
            a.flags |= KRING_ATTR_F_INHERIT;
            break;
    }
}

// A payload pointer for an ioctl: mostly a valid buffer of random bytes,
// sometimes NULL, a kernel address, a PROT_NONE page, or a buffer that
// runs into the PROT_NONE page.
void* random_arg(rng& r, std::uint8_t* buf, std::size_t n) {
    for (std::size_t i = 0; i < n; i += 8) {
        std::uint64_t v = r.chance(50) ? 0 : r.nasty();
        std::memcpy(buf + i, &v, std::min<std::size_t>(8, n - i));
    }
    switch (r.below(12)) {
        case 0:
            return nullptr;
        case 1:
            return reinterpret_cast<void*>(0xffffffff81000000ULL);
        case 2:
            return g_ps->guard;
        case 3:
            return g_ps->guard - 1 - r.below(64);  // runs into the guard page
        case 4:
            return reinterpret_cast<void*>(r.next());
        default:
            return buf;
    }
}

unsigned long random_cmd(rng& r, std::uint32_t* size_out) {
    static const unsigned long cmds[] = {
        KRING_IOC_QUERY_ABI,     KRING_IOC_CONFIGURE,  KRING_IOC_ENABLE,
        KRING_IOC_DISABLE,       KRING_IOC_RESET,      KRING_IOC_PAUSE_OUTPUT,
        KRING_IOC_RESUME_OUTPUT, KRING_IOC_SET_WAKEUP, KRING_IOC_ID,
        KRING_IOC_STATS,         KRING_IOC_SET_OUTPUT, KRING_IOC_AUX_SNAPSHOT,
        KRING_IOC_AUX_PAUSE,     KRING_IOC_AUX_RESUME, KRING_IOC_GET_FORMATS};
    unsigned long c = r.pick(cmds);
    *size_out = _IOC_SIZE(c);
    return c;
}

// ---------------------------------------------------------------------
// The operations

thread_local int t_epoll = -1;

void do_open(rng& r) {
    int fd = ::open("/dev/kring", r.chance(90) ? O_RDWR : (r.chance(50) ? O_RDONLY : O_WRONLY));
    int e = errno;
    outcome(op_open, fd, e, "open(/dev/kring)");
    adopt_fd(r, fd);
}

void do_close(rng& r) {
    int old = g_ps->fds[r.below(fd_slots)].exchange(-1);
    if (old >= 0)
        outcome(op_close, ::close(old), errno, "close");
}

void do_dup(rng& r) {
    int fd = slot_fd(r);
    if (fd < 0)
        return;
    int d = ::dup(fd);
    outcome(op_dup, d, errno, "dup");
    adopt_fd(r, d);
}

void do_configure(rng& r) {
    int fd = slot_fd(r);
    struct {
        kring_attr a;
        std::uint8_t tail[152];
    } big;
    std::memset(&big, 0, sizeof(big));
    random_attr(r, big.a);
    if (r.chance(10)) {
        static const std::uint32_t sizes[] = {0,
                                              8,
                                              KRING_ATTR_SIZE_VER0 - 8,
                                              KRING_ATTR_SIZE_VER0,
                                              sizeof(kring_attr) + 8,
                                              sizeof(big),
                                              4096,
                                              ~0U};
        big.a.size = r.pick(sizes);
        if (r.chance(50))
            big.tail[r.below(sizeof(big.tail))] = static_cast<std::uint8_t>(r.next());
    }
    void* arg = r.chance(95) ? static_cast<void*>(&big) : random_arg(r, nullptr, 0);
    long rc = ::ioctl(fd, KRING_IOC_CONFIGURE, arg);
    outcome(op_configure, rc, errno, "ioctl(KRING_IOC_CONFIGURE)");
    if (rc == 0 && r.chance(60))
        ::ioctl(fd, KRING_IOC_ENABLE, 0);
}

void do_ioctl(rng& r) {
    int fd = slot_fd(r);
    std::uint32_t size;
    unsigned long cmd = random_cmd(r, &size);
    alignas(8) std::uint8_t buf[512];
    void* arg = random_arg(r, buf, sizeof(buf));
    long rc;
    if (cmd == KRING_IOC_SET_OUTPUT) {
        long target = r.chance(80) ? slot_fd(r) : static_cast<long>(r.nasty());
        rc = ::ioctl(fd, cmd, target);
    } else if (_IOC_DIR(cmd) == _IOC_NONE) {
        rc = ::ioctl(fd, cmd, r.chance(80) ? 0UL : r.next());
    } else {
        if (arg == buf && (cmd == KRING_IOC_STATS || cmd == KRING_IOC_QUERY_ABI) && r.chance(70)) {
            // A plausible size field, so the copy-out path runs.
            std::uint32_t sz = r.chance(70) ? size : static_cast<std::uint32_t>(r.below(600));
            std::memcpy(buf, &sz, 4);
        }
        if (arg == buf && cmd == KRING_IOC_GET_FORMATS && r.chance(70)) {
            // A plausible request, so the text is copied out: into the
            // rest of buf, a bad address or the guard page, or sizes only.
            kring_formats q{};
            q.size = r.chance(80) ? sizeof(q) : static_cast<std::uint32_t>(r.below(64));
            q.len = static_cast<std::uint32_t>(r.below(sizeof(buf) - sizeof(q) + 1));
            if (r.chance(80))
                q.buf = reinterpret_cast<std::uintptr_t>(
                    random_arg(r, buf + sizeof(q), sizeof(buf) - sizeof(q)));
            std::memcpy(buf, &q, sizeof(q));
        }
        rc = ::ioctl(fd, cmd, arg);
    }
    char what[64];
    std::snprintf(what, sizeof(what), "ioctl(0x%lx)", cmd);
    outcome(op_ioctl, rc, errno, what);
}

void do_ioctl_garbage(rng& r) {
    int fd = slot_fd(r);
    alignas(8) std::uint8_t buf[512];
    unsigned long cmd;
    switch (r.below(3)) {
        case 0:  // kring's magic, any number, direction and size
            cmd = _IOC(r.below(4), KRING_IOC_MAGIC, r.below(0x20), r.below(0x200));
            break;
        case 1:  // a real command with the wrong size
        {
            std::uint32_t size;
            unsigned long c = random_cmd(r, &size);
            cmd = _IOC(_IOC_DIR(c), _IOC_TYPE(c), _IOC_NR(c), r.below(0x200));
        } break;
        default:
            cmd = static_cast<unsigned int>(r.next());
    }
    long rc = ::ioctl(fd, cmd, random_arg(r, buf, sizeof(buf)));
    outcome(op_ioctl_garbage, rc, errno, "ioctl(garbage)");
}

// Inserts a new mapping, or unmaps it when the table is full.
void keep_map(const map_ent& m) {
    std::unique_lock lk(g_ps->maps_lock);
    for (auto& e : g_ps->maps)
        if (!e.addr) {
            e = m;
            return;
        }
    ::munmap(m.addr, m.len);
}

int random_prot(rng& r) {
    static const int prots[] = {PROT_READ,
                                PROT_READ | PROT_WRITE,
                                PROT_READ | PROT_WRITE,
                                PROT_READ,
                                PROT_WRITE,
                                PROT_NONE,
                                PROT_READ | PROT_EXEC,
                                PROT_READ | PROT_WRITE | PROT_EXEC};
    return r.pick(prots);
}

int random_mflags(rng& r) {
    int f = r.chance(92) ? MAP_SHARED : MAP_PRIVATE;
    if (r.chance(10))
        f |= MAP_POPULATE;
    if (r.chance(5))
        f |= MAP_LOCKED;
    if (r.chance(3))
        f |= MAP_NORESERVE;
    return f;
}

void do_mmap_data(rng& r) {
    int fd = slot_fd(r);
    std::size_t pages = r.chance(85) ? 1 + (1UL << r.below(6)) : r.below(80);
    if (r.chance(20))
        pages = 1 + 2 * (1UL << r.below(5));  // the mirrored layout
    std::size_t len = pages * g_page;
    if (r.chance(3))
        len += r.below(g_page);
    off_t off = r.chance(92) ? 0 : static_cast<off_t>(r.below(64) * g_page);
    int prot = random_prot(r);
    void* p = ::mmap(nullptr, len, prot, random_mflags(r), fd, off);
    if (!outcome(op_mmap_data, p == MAP_FAILED ? -1 : 0, errno, "mmap(data)") || p == MAP_FAILED)
        return;
    keep_map({static_cast<std::uint8_t*>(p), len, prot, fd, false});
}

void do_mmap_aux(rng& r) {
    // Ask for the AUX area through a writable data mapping's control page,
    // then map it (perf's protocol), mostly with consistent values.
    std::uint64_t off = 0, size = 0;
    int fd = -1;
    {
        std::shared_lock lk(g_ps->maps_lock);
        const map_ent& m = g_ps->maps[r.below(map_slots)];
        if (!m.addr || m.aux || !(m.prot & PROT_WRITE))
            return;
        fd = r.chance(85) ? m.fd : slot_fd(r);
        off = r.chance(85) ? (m.len + r.below(4) * g_page) : r.nasty();
        off &= r.chance(90) ? ~static_cast<std::uint64_t>(g_page - 1) : ~0ULL;
        size = r.chance(85) ? (static_cast<std::uint64_t>(g_page) << r.below(6)) : r.nasty();
        if (r.chance(10))
            size = g_page * (1 + r.below(12));  // not a power of two
        auto* ctl = reinterpret_cast<kring_ctl_page*>(m.addr);
        guarded([&] {
            ctl->aux_offset = off;
            ctl->aux_size = size;
        });
    }
    std::size_t len = r.chance(90) ? size : r.below(1 << 20);
    if (len > (64UL << 20))
        len = g_page;
    // Read-write (normal mode) or read-only (snapshot mode), mostly.
    int prot = r.chance(90) ? (PROT_READ | (r.chance(50) ? PROT_WRITE : 0)) : random_prot(r);
    void* p = ::mmap(nullptr, len, prot, random_mflags(r), fd, static_cast<off_t>(off));
    if (!outcome(op_mmap_aux, p == MAP_FAILED ? -1 : 0, errno, "mmap(aux)") || p == MAP_FAILED)
        return;
    keep_map({static_cast<std::uint8_t*>(p), len, prot, fd, true});
}

void do_munmap(rng& r) {
    std::unique_lock lk(g_ps->maps_lock);
    map_ent& m = g_ps->maps[r.below(map_slots)];
    if (!m.addr)
        return;
    if (r.chance(80)) {
        outcome(op_munmap, ::munmap(m.addr, m.len), errno, "munmap");
        m = map_ent{};
        return;
    }
    // A partial unmap (a VMA split): kring refuses it, or the whole
    // mapping is unmapped here if the kernel allowed it.
    std::size_t pages = (m.len + g_page - 1) / g_page;
    std::size_t at = r.below(pages) * g_page;
    int rc = ::munmap(m.addr + at, g_page);
    outcome(op_munmap, rc, errno, "munmap(part)");
    if (rc == 0) {
        ::munmap(m.addr, m.len);
        m = map_ent{};
    }
}

void do_mremap(rng& r) {
    std::unique_lock lk(g_ps->maps_lock);
    map_ent& m = g_ps->maps[r.below(map_slots)];
    if (!m.addr)
        return;
    std::size_t nlen = r.chance(50) ? m.len : (r.chance(50) ? m.len + g_page : g_page);
    int flags = r.chance(70) ? MREMAP_MAYMOVE : 0;
    void* p = ::mremap(m.addr, m.len, nlen, flags);
    outcome(op_mremap, p == MAP_FAILED ? -1 : 0, errno, "mremap");
    if (p != MAP_FAILED) {
        m.addr = static_cast<std::uint8_t*>(p);
        m.len = nlen;
    }
}

void do_mprotect(rng& r) {
    std::unique_lock lk(g_ps->maps_lock);
    map_ent& m = g_ps->maps[r.below(map_slots)];
    if (!m.addr)
        return;
    int prot = random_prot(r);
    bool whole = r.chance(80);
    int rc = ::mprotect(m.addr, whole ? m.len : g_page, prot);
    outcome(op_mprotect, rc, errno, "mprotect");
    if (rc == 0)
        m.prot = whole ? prot : (m.prot & prot);  // a split leaves the rest as it was
}

void do_madvise(rng& r) {
    std::shared_lock lk(g_ps->maps_lock);
    const map_ent& m = g_ps->maps[r.below(map_slots)];
    if (!m.addr)
        return;
    static const int advice[] = {MADV_NORMAL,
                                 MADV_RANDOM,
                                 MADV_SEQUENTIAL,
                                 MADV_WILLNEED,
                                 MADV_DONTNEED,
                                 MADV_FREE,
                                 MADV_REMOVE,
                                 MADV_DONTFORK,
                                 MADV_DOFORK,
                                 MADV_MERGEABLE,
                                 MADV_DONTDUMP,
                                 MADV_WIPEONFORK,
                                 MADV_COLD,
                                 MADV_PAGEOUT,
                                 22 /* POPULATE_READ */,
                                 23 /* POPULATE_WRITE */,
                                 14 /* HUGEPAGE */};
    int adv = r.pick(advice);
    // Never MADV_DONTFORK/DOFORK's cousins that change the VMA layout of
    // memory the process itself relies on: only kring mappings get here.
    int rc = ::madvise(m.addr, r.chance(70) ? m.len : g_page, adv);
    outcome(op_madvise, rc, errno, "madvise");
}

// Offsets of the control-page fields a user can write (the page is
// writable in a read-write mapping).
void do_ctl_write(rng& r) {
    std::shared_lock lk(g_ps->maps_lock);
    const map_ent& m = g_ps->maps[r.below(map_slots)];
    if (!m.addr || m.aux)
        return;
    static const unsigned fields[] = {1024, 1032, 1032, 1032, 1040, 1048, 1056, 1064,
                                      1064, 1072, 1080, 152,  152,  96,   160,  120};
    unsigned at = r.chance(85) ? r.pick(fields) : static_cast<unsigned>(r.below(g_page / 8) * 8);
    auto* ctl = reinterpret_cast<volatile kring_ctl_page*>(m.addr);
    std::uint64_t v;
    int sig = guarded([&] {
        std::uint64_t head = ctl->data_head;
        std::uint64_t size = ctl->data_size;
        switch (r.below(5)) {
            case 0:
                v = head;
                break;
            case 1:
                v = head - size + 8 * r.below(16);
                break;
            case 2:
                v = head + 8 * r.below(64);
                break;
            default:
                v = r.nasty();
        }
        *reinterpret_cast<volatile std::uint64_t*>(m.addr + at) = v;
    });
    if (!sig)
        g_sh->succeeded[op_ctl_write].fetch_add(1, std::memory_order_relaxed);
    else if (m.prot & PROT_WRITE && at < g_page && sig != SIGSEGV && sig != SIGBUS)
        fail("store to control page offset %u raised signal %d", at, sig);
    // Sometimes a store into the data pages, which must fault.
    if (r.chance(10) && m.len > static_cast<std::size_t>(g_page)) {
        std::size_t off = g_page + r.below(m.len - g_page);
        int s2 = guarded([&] { m.addr[off] = 1; });
        if (s2 == 0)
            fail("a store into a kring data page at offset %zu did not fault", off);
    }
}

void do_load(rng& r) {
    std::shared_lock lk(g_ps->maps_lock);
    const map_ent& m = g_ps->maps[r.below(map_slots)];
    if (!m.addr)
        return;
    volatile std::uint64_t sink = 0;
    int sig = guarded([&] {
        std::size_t pages = (m.len + g_page - 1) / g_page;
        for (unsigned i = 0; i < 8; i++) {
            std::size_t off = r.below(pages) * g_page + r.below(g_page / 8) * 8;
            if (off + 8 <= m.len)
                sink = sink + *reinterpret_cast<volatile std::uint64_t*>(m.addr + off);
        }
    });
    if (!sig)
        g_sh->succeeded[op_load].fetch_add(1, std::memory_order_relaxed);
}

// A consumer: acquire data_head, walk the records between tail and head
// checking their headers, release data_tail (forward mode's protocol).
void do_consume(rng& r) {
    std::shared_lock lk(g_ps->maps_lock);
    const map_ent& m = g_ps->maps[r.below(map_slots)];
    if (!m.addr || m.aux || !(m.prot & PROT_READ) || m.len < 2 * static_cast<std::size_t>(g_page))
        return;
    auto* ctl = reinterpret_cast<kring_ctl_page*>(m.addr);
    int sig = guarded([&] {
        std::uint64_t head = __atomic_load_n(&ctl->data_head, __ATOMIC_ACQUIRE);
        std::uint64_t tail = __atomic_load_n(&ctl->data_tail, __ATOMIC_RELAXED);
        std::uint64_t size = ctl->data_size;
        std::uint64_t off = ctl->data_offset;
        // Every figure comes from memory this or another process may
        // have scribbled on: validate before use, as a reader must.
        if (size == 0 || (size & (size - 1)) || off != static_cast<std::uint64_t>(g_page) ||
            off + size > m.len || head - tail > size)
            return;
        unsigned n = 0;
        while (tail != head && n++ < 4096) {
            kring_record_header h;
            std::uint64_t at = tail & (size - 1);
            if (at + sizeof(h) > size)
                break;
            std::memcpy(&h, m.addr + off + at, sizeof(h));
            if (h.size < sizeof(h) || (h.size & 7) || h.size > head - tail)
                break;
            tail += h.size;
        }
        if (m.prot & PROT_WRITE)
            __atomic_store_n(&ctl->data_tail, tail, __ATOMIC_RELEASE);
    });
    if (!sig)
        g_sh->succeeded[op_consume].fetch_add(1, std::memory_order_relaxed);
}

void do_poll(rng& r) {
    struct pollfd p[3];
    for (auto& e : p) {
        e.fd = slot_fd(r);
        e.events = static_cast<short>(r.chance(80) ? POLLIN : r.next());
        e.revents = 0;
    }
    int rc = ::poll(p, 1 + r.below(3), static_cast<int>(r.below(3)));
    outcome(op_poll, rc, errno, "poll");
}

// An epoll set holding kring fds that other threads close: the file's
// last reference may then go while it is still on the epoll set.
void do_epoll(rng& r) {
    if (t_epoll < 0) {
        int e = ::epoll_create1(EPOLL_CLOEXEC);
        if (e < 0)
            return;
        t_epoll = ::fcntl(e, F_DUPFD_CLOEXEC, fd_base + 4 * fd_slots);
        ::close(e);
        if (t_epoll < 0)
            return;
    }
    int fd = slot_fd(r);
    struct epoll_event ev = {};
    ev.events = EPOLLIN;
    if (r.chance(30))
        ev.events |= EPOLLET;
    if (r.chance(20))
        ev.events |= EPOLLONESHOT;
    switch (r.below(4)) {
        case 0:
            ::epoll_ctl(t_epoll, EPOLL_CTL_ADD, fd, &ev);
            break;
        case 1:
            ::epoll_ctl(t_epoll, EPOLL_CTL_DEL, fd, &ev);
            break;
        case 2:
            ::epoll_ctl(t_epoll, EPOLL_CTL_MOD, fd, &ev);
            break;
        default: {
            struct epoll_event out[8];
            int rc = ::epoll_wait(t_epoll, out, 8, static_cast<int>(r.below(3)));
            outcome(op_epoll, rc, errno, "epoll_wait");
            break;
        }
    }
    if (r.chance(5)) {
        ::close(t_epoll);
        t_epoll = -1;
    }
}

void do_rw(rng& r) {
    int fd = slot_fd(r);
    alignas(8) std::uint8_t buf[256];
    std::size_t n = r.below(sizeof(buf));
    long rc;
    if (r.chance(50))
        rc = ::read(fd, buf, n);
    else
        rc = ::write(fd, buf, n);
    outcome(op_rw, rc, errno, "read/write");
}

// A redirect that the module accepts: a capture channel (sched, timer
// or AUX tracer) and a target on the same CPU with the same clock, made
// here, the target often mapped and both often enabled; both fds then go
// to the slots, where the other operations close, unmap, redirect and
// pass them around under the group.
void set_output_group(rng& r) {
    static const std::uint32_t capture[] = {KRING_SOURCE_SCHED, KRING_SOURCE_TIMER,
                                            KRING_SOURCE_AUX_TRACER};
    static const std::uint32_t targets[] = {KRING_SOURCE_NONE, KRING_SOURCE_SYNTHETIC,
                                            KRING_SOURCE_SCHED, KRING_SOURCE_TIMER};
    static const std::uint32_t clocks[] = {0, 1, 4, 7};
    const int cpu = static_cast<int>(r.below(std::max(g_ncpus, 1)));
    const std::uint32_t clock = r.pick(clocks);
    int fds[2] = {::open("/dev/kring", O_RDWR), ::open("/dev/kring", O_RDWR)};
    for (int i = 0; i < 2; i++) {
        kring_attr a;
        std::memset(&a, 0, sizeof(a));
        a.size = sizeof(a);
        a.source = i == 0 ? r.pick(capture) : r.pick(targets);
        a.cpu = cpu;
        a.pid = -1;
        a.clockid = clock;
        a.sample_type = KRING_SAMPLE_TIME | KRING_SAMPLE_TID;
        if (a.source == KRING_SOURCE_SYNTHETIC)
            a.config[3] = 1 + r.below(2000);
        if (a.source == KRING_SOURCE_TIMER)
            a.config[0] = 1 + r.below(5000);
        if (fds[i] >= 0)
            ::ioctl(fds[i], KRING_IOC_CONFIGURE, &a);
    }
    if (r.chance(70) && fds[1] >= 0) {
        std::size_t len = (1 + (1UL << r.below(3))) * g_page;
        void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fds[1], 0);
        if (p != MAP_FAILED)
            keep_map({static_cast<std::uint8_t*>(p), len, PROT_READ | PROT_WRITE, fds[1], false});
    }
    long rc = ::ioctl(fds[0], KRING_IOC_SET_OUTPUT, static_cast<long>(fds[1]));
    outcome(op_set_output, rc, errno, "ioctl(KRING_IOC_SET_OUTPUT) of a compatible pair");
    for (int i = 0; i < 2; i++) {
        if (fds[i] >= 0 && r.chance(70))
            ::ioctl(fds[i], KRING_IOC_ENABLE, 0);
        adopt_fd(r, fds[i]);
    }
}

void do_set_output(rng& r) {
    if (r.chance(40)) {
        set_output_group(r);
        return;
    }
    int fd = slot_fd(r);
    long target = r.chance(85) ? slot_fd(r) : -1;
    if (r.chance(5))
        target = fd;  // itself
    long rc = ::ioctl(fd, KRING_IOC_SET_OUTPUT, target);
    outcome(op_set_output, rc, errno, "ioctl(KRING_IOC_SET_OUTPUT)");
}

void do_send_fd(rng& r) {
    int fd = slot_fd(r);
    if (fd < 0 || g_ps->sock_out < 0)
        return;
    char data = 'k';
    struct iovec iov = {&data, 1};
    alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof(cbuf);
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof(int));
    long rc = ::sendmsg(g_ps->sock_out, &msg, MSG_DONTWAIT | MSG_NOSIGNAL);
    if (rc >= 0)
        g_sh->succeeded[op_send_fd].fetch_add(1, std::memory_order_relaxed);
}

// Takes a copy of a kring fd of another process with pidfd_getfd() (the
// way fds move where there is no AF_UNIX, as in the tiny debug kernels).
void grab_fd(rng& r) {
    int peer = g_sh->pids[r.below(g_opt.procs)].load();
    if (peer <= 0)
        return;
    int pidfd = static_cast<int>(::syscall(SYS_pidfd_open, peer, 0));
    if (pidfd < 0)
        return;
    int fd = static_cast<int>(
        ::syscall(SYS_pidfd_getfd, pidfd, fd_base + static_cast<int>(r.below(fd_slots)), 0));
    ::close(pidfd);
    if (fd < 0)
        return;
    g_sh->succeeded[op_recv_fd].fetch_add(1, std::memory_order_relaxed);
    adopt_fd(r, fd);
}

void do_recv_fd(rng& r) {
    if (g_ps->sock_in < 0 || r.chance(30)) {
        grab_fd(r);
        return;
    }
    char data;
    struct iovec iov = {&data, 1};
    alignas(struct cmsghdr) char cbuf[CMSG_SPACE(sizeof(int))];
    struct msghdr msg = {};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cbuf;
    msg.msg_controllen = sizeof(cbuf);
    if (::recvmsg(g_ps->sock_in, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC) < 0)
        return;
    struct cmsghdr* c = CMSG_FIRSTHDR(&msg);
    if (!c || c->cmsg_type != SCM_RIGHTS)
        return;
    int fd;
    std::memcpy(&fd, CMSG_DATA(c), sizeof(int));
    g_sh->succeeded[op_recv_fd].fetch_add(1, std::memory_order_relaxed);
    adopt_fd(r, fd);
}

// A child shares the open file descriptions and gets a copy of the
// address space without kring's mappings (they are not inherited). It runs
// a few raw calls (no locks, no allocation: other threads of the parent
// may hold them) and exits with its fds open and maybe a fresh mapping.
void do_fork(rng& r) {
    int fds[4];
    for (int& f : fds)
        f = slot_fd(r);
    std::uint8_t* probe;
    {
        std::shared_lock lk(g_ps->maps_lock);
        probe = g_ps->maps[r.below(map_slots)].addr;
    }
    std::uint64_t cseed = r.next();
    std::fflush(nullptr);
    pid_t pid = ::fork();
    if (pid == 0) {
        rng cr(cseed);
        if (probe)
            guarded([&] { (void)*reinterpret_cast<volatile std::uint8_t*>(probe); });
        for (int i = 0; i < 16; i++) {
            int fd = fds[cr.below(4)];
            switch (cr.below(5)) {
                case 0:
                    ::ioctl(fd, KRING_IOC_ENABLE, 0);
                    break;
                case 1:
                    ::ioctl(fd, KRING_IOC_DISABLE, 0);
                    break;
                case 2: {
                    void* p =
                        ::mmap(nullptr, (1 + (1UL << cr.below(3))) * g_page,
                               PROT_READ | (cr.chance(50) ? PROT_WRITE : 0), MAP_SHARED, fd, 0);
                    if (p != MAP_FAILED && cr.chance(50))
                        ::munmap(p, g_page);  // partial, then exit with the rest mapped
                    break;
                }
                case 3:
                    ::close(fd);
                    break;
                default:
                    ::ioctl(fd, KRING_IOC_AUX_SNAPSHOT, 0);
                    break;
            }
        }
        ::_exit(0);
    }
    if (pid < 0)
        return;
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
    if (WIFSIGNALED(status))
        fail("a forked child died of signal %d", WTERMSIG(status));
    else
        g_sh->succeeded[op_fork].fetch_add(1, std::memory_order_relaxed);
}

void set_cpu1(bool on) {
    int fd = ::open("/sys/devices/system/cpu/cpu1/online", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    ssize_t n = ::write(fd, on ? "1" : "0", 1);
    (void)n;
    ::close(fd);
}

void do_hotplug(rng& r) {
    if (!g_opt.hotplug || !g_ps->root || g_ps->index != 0 || g_ncpus < 2)
        return;
    static std::atomic<bool> off{false};
    bool to = !off.load();
    if (!to || r.chance(50)) {
        set_cpu1(!to ? true : false);
        off.store(to);
        g_sh->succeeded[op_hotplug].fetch_add(1, std::memory_order_relaxed);
    }
}

void run_op(op_kind k, rng& r) {
    g_sh->calls[k].fetch_add(1, std::memory_order_relaxed);
    switch (k) {
#define X(n)       \
    case op_##n:   \
        do_##n(r); \
        break;
        FUZZ_OPS(X)
#undef X
        default:
            break;
    }
}

op_kind pick_op(rng& r) {
    static const unsigned total = [] {
        unsigned t = 0;
        for (unsigned w : op_weight)
            t += w;
        return t;
    }();
    unsigned x = static_cast<unsigned>(r.below(total));
    for (int k = 0; k < op_count; k++) {
        if (x < op_weight[k])
            return static_cast<op_kind>(k);
        x -= op_weight[k];
    }
    return op_ioctl;
}

// ---------------------------------------------------------------------
// Processes and threads

void thread_main(int proc, int thread, std::uint64_t nops) {
    rng r(stream_seed(proc, thread));
    for (std::uint64_t i = 0; i < nops && !g_sh->failed.load(std::memory_order_relaxed); i++) {
        op_kind k = pick_op(r);
        g_sh->cur_op[proc][thread].store(k, std::memory_order_relaxed);
        g_sh->cur_n[proc][thread].store(i, std::memory_order_relaxed);
        run_op(k, r);
        g_sh->ops.fetch_add(1, std::memory_order_relaxed);
        if (g_opt.verbose && i % 5000 == 0)
            std::fprintf(stderr, "kring_fuzz: proc %d thread %d at op %" PRIu64 "\n", proc, thread,
                         i);
    }
    g_sh->cur_op[proc][thread].store(-1, std::memory_order_relaxed);
    if (t_epoll >= 0)
        ::close(t_epoll);
}

bool become_nobody() {
    return ::setgroups(0, nullptr) == 0 && ::setgid(65534) == 0 && ::setuid(65534) == 0 &&
           ::prctl(PR_SET_DUMPABLE, 1) == 0;
}

int proc_main(int index, int sock_in, int sock_out) {
    static proc_state ps;
    g_ps = &ps;
    ps.index = index;
    ps.sock_in = sock_in;
    ps.sock_out = sock_out;
    // A scratch page followed by a PROT_NONE page: an ioctl payload that
    // starts near the end of the first runs into the second.
    auto* two = static_cast<std::uint8_t*>(
        ::mmap(nullptr, 2 * g_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (two == MAP_FAILED || ::mprotect(two + g_page, g_page, PROT_NONE)) {
        fail("process %d: scratch pages: %s", index, std::strerror(errno));
        return 1;
    }
    ps.guard = two + g_page;
    if (index >= g_opt.procs - g_opt.nobody && ::geteuid() == 0 && !become_nobody()) {
        fail("process %d could not become nobody: %s", index, std::strerror(errno));
        return 1;
    }
    ps.root = ::geteuid() == 0;
    // The fds the parent opened (slots 0..fd_slots-1 at fd_base + slot)
    // are shared with every process.
    for (int i = 0; i < fd_slots; i++)
        ps.fds[i].store(::fcntl(fd_base + i, F_GETFD) >= 0 ? fd_base + i : -1);
    std::uint64_t per_thread = g_opt.ops / (g_opt.procs * g_opt.threads) + 1;
    std::vector<std::thread> ts;
    for (int t = 1; t < g_opt.threads; t++)
        ts.emplace_back(thread_main, index, t, per_thread);
    thread_main(index, 0, per_thread);
    for (auto& t : ts)
        t.join();
    if (g_opt.hotplug && ps.root && index == 0)
        set_cpu1(true);
    // Exit with whatever is still open and mapped: the kernel cleans up.
    return 0;
}

long module_refcnt() {
    FILE* f = std::fopen("/sys/module/kring/refcnt", "r");
    if (!f)
        return -1;
    long v = -1;
    if (std::fscanf(f, "%ld", &v) != 1)
        v = -1;
    std::fclose(f);
    return v;
}

void stall_report(const std::vector<pid_t>& pids) {
    std::fprintf(stderr, "kring_fuzz: STALL, %" PRIu64 " ops done; threads at:\n",
                 g_sh->ops.load());
    for (int p = 0; p < g_opt.procs; p++)
        for (int t = 0; t < g_opt.threads; t++) {
            int k = g_sh->cur_op[p][t].load();
            std::fprintf(stderr, "  proc %d thread %d: op #%" PRIu64 " %s\n", p, t,
                         g_sh->cur_n[p][t].load(), k >= 0 ? op_names[k] : "(done)");
        }
    // The kernel stacks of every task of the fuzzer, then the blocked tasks.
    for (pid_t pid : pids) {
        char cmd[160];
        std::snprintf(cmd, sizeof(cmd),
                      "for t in /proc/%d/task/*; do echo \"== $t\"; cat $t/stack; done",
                      static_cast<int>(pid));
        if (std::system(cmd) != 0)
            continue;
    }
    int fd = ::open("/proc/sysrq-trigger", O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
        if (::write(fd, "w", 1) < 0)
            std::perror("sysrq");
        ::close(fd);
    }
}

void usage() {
    std::fprintf(stderr,
                 "usage: kring_fuzz [--seed N] [--ops N] [--procs N] [--threads N] [--nobody N]\n"
                 "                  [--hotplug] [--time-limit S] [--stall S] [--verbose]\n");
}

bool parse(int argc, char** argv) {
    for (int i = 1; i < argc; i++) {
        std::string a = argv[i];
        auto val = [&](std::uint64_t& out) {
            if (i + 1 >= argc)
                return false;
            char* end;
            out = std::strtoull(argv[++i], &end, 0);
            return *end == 0;
        };
        std::uint64_t v;
        if (a == "--seed") {
            if (!val(g_opt.seed))
                return false;
        } else if (a == "--ops") {
            if (!val(g_opt.ops))
                return false;
        } else if (a == "--procs" && val(v) && v >= 1 && v <= max_procs) {
            g_opt.procs = static_cast<int>(v);
        } else if (a == "--threads" && val(v) && v >= 1 && v <= max_threads) {
            g_opt.threads = static_cast<int>(v);
        } else if (a == "--nobody" && val(v) && v <= max_procs) {
            g_opt.nobody = static_cast<int>(v);
        } else if (a == "--time-limit" && val(v) && v >= 1 && v < 1000000) {
            g_opt.time_limit = static_cast<int>(v);
        } else if (a == "--stall" && val(v) && v >= 1 && v < 100000) {
            g_opt.stall = static_cast<int>(v);
        } else if (a == "--hotplug") {
            g_opt.hotplug = true;
        } else if (a == "--verbose") {
            g_opt.verbose = true;
        } else {
            return false;
        }
    }
    if (g_opt.nobody > g_opt.procs)
        g_opt.nobody = g_opt.procs;
    return true;
}

}  // namespace

int main(int argc, char** argv) {
    g_page = ::sysconf(_SC_PAGESIZE);
    g_ncpus = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    {
        struct timespec ts;
        ::clock_gettime(CLOCK_REALTIME, &ts);
        g_opt.seed =
            static_cast<std::uint64_t>(ts.tv_nsec) ^ (static_cast<std::uint64_t>(ts.tv_sec) << 20);
    }
    if (!parse(argc, argv)) {
        usage();
        return 2;
    }
    void* sh = ::mmap(nullptr, sizeof(shared_state), PROT_READ | PROT_WRITE,
                      MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (sh == MAP_FAILED) {
        std::perror("kring_fuzz: mmap");
        return 1;
    }
    g_sh = new (sh) shared_state();

    std::printf("kring_fuzz: seed=%" PRIu64 " ops=%" PRIu64
                " procs=%d threads=%d nobody=%d%s\n"
                "kring_fuzz: replay: kring_fuzz --seed %" PRIu64 " --ops %" PRIu64
                " --procs %d --threads %d --nobody %d%s\n",
                g_opt.seed, g_opt.ops, g_opt.procs, g_opt.threads, g_opt.nobody,
                g_opt.hotplug ? " hotplug" : "", g_opt.seed, g_opt.ops, g_opt.procs, g_opt.threads,
                g_opt.nobody, g_opt.hotplug ? " --hotplug" : "");
    std::fflush(stdout);

    struct sigaction sa = {};
    sa.sa_sigaction = on_fault;
    sa.sa_flags = SA_NODEFER | SA_SIGINFO;
    ::sigaction(SIGSEGV, &sa, nullptr);
    ::sigaction(SIGBUS, &sa, nullptr);
    ::signal(SIGPIPE, SIG_IGN);

    long base_ref = module_refcnt();
    if (base_ref < 0) {
        std::fprintf(stderr, "kring_fuzz: kring is not loaded (no /sys/module/kring/refcnt)\n");
        return 1;
    }

    // The shared pool: a few fds opened (and some configured) by the
    // parent, inherited by every process at fd_base + slot.
    {
        rng r(g_opt.seed);
        for (int i = 0; i < fd_slots / 2; i++) {
            int fd = ::open("/dev/kring", O_RDWR);
            if (fd < 0) {
                std::fprintf(stderr, "kring_fuzz: open /dev/kring: %s\n", std::strerror(errno));
                return 1;
            }
            if (::dup2(fd, fd_base + i) < 0) {
                std::perror("kring_fuzz: dup2");
                return 1;
            }
            ::close(fd);
            if (i % 2 == 0) {
                kring_attr a;
                random_attr(r, a);
                ::ioctl(fd_base + i, KRING_IOC_CONFIGURE, &a);
            }
        }
    }
    // A ring of unix datagram sockets: process i receives on in[i] and
    // sends to the next one's.
    // A kernel without AF_UNIX (the tiny debug kernels) leaves fd passing
    // to pidfd_getfd().
    int in[max_procs], out[max_procs];
    for (int i = 0; i < g_opt.procs; i++) {
        int sv[2];
        if (::socketpair(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0, sv) < 0) {
            if (i == 0)
                std::printf("kring_fuzz: no AF_UNIX sockets (%s): fds move by pidfd_getfd only\n",
                            std::strerror(errno));
            sv[0] = sv[1] = -1;
        }
        in[i] = sv[0];
        out[i] = sv[1];
    }
    struct timespec t0;
    ::clock_gettime(CLOCK_MONOTONIC, &t0);
    std::vector<pid_t> pids;
    std::fflush(nullptr);
    for (int i = 0; i < g_opt.procs; i++) {
        pid_t pid = ::fork();
        if (pid == 0)
            ::_exit(proc_main(i, in[i], out[(i + 1) % g_opt.procs]));
        if (pid < 0) {
            std::perror("kring_fuzz: fork");
            return 1;
        }
        pids.push_back(pid);
        g_sh->pids[i].store(pid);
    }
    // The parent lets go of everything: only the workers hold the pool.
    for (int i = 0; i < fd_slots; i++)
        ::close(fd_base + i);
    for (int i = 0; i < g_opt.procs; i++) {
        if (in[i] >= 0) {
            ::close(in[i]);
            ::close(out[i]);
        }
    }

    int rc = 0;
    std::size_t left = pids.size();
    std::vector<bool> done(pids.size());
    std::uint64_t last_ops = 0;
    int last_progress_ms = 0;
    for (int waited_ms = 0; left > 0; waited_ms += 100) {
        for (std::size_t i = 0; i < pids.size(); i++) {
            if (done[i])
                continue;
            int status;
            pid_t w = ::waitpid(pids[i], &status, WNOHANG);
            if (w != pids[i])
                continue;
            done[i] = true;
            left--;
            if (WIFSIGNALED(status)) {
                fail("process %zu died of signal %d", i, WTERMSIG(status));
            } else if (WEXITSTATUS(status) != 0 && !g_sh->failed.load()) {
                fail("process %zu exited with %d", i, WEXITSTATUS(status));
            }
        }
        std::uint64_t now_ops = g_sh->ops.load();
        if (now_ops != last_ops) {
            last_ops = now_ops;
            last_progress_ms = waited_ms;
        }
        bool no_progress = waited_ms - last_progress_ms >= g_opt.stall * 1000;
        if (left && (no_progress || waited_ms >= g_opt.time_limit * 1000)) {
            stall_report(pids);
            if (no_progress)
                fail("stall: no operation completed in %d s", g_opt.stall);
            else
                fail("stall: the run did not end in %d s", g_opt.time_limit);
            for (pid_t p : pids)
                ::kill(p, SIGKILL);
            rc = 1;
            break;
        }
        if (left)
            ::usleep(100000);
    }
    struct timespec t1;
    ::clock_gettime(CLOCK_MONOTONIC, &t1);
    double secs = static_cast<double>(t1.tv_sec - t0.tv_sec) +
                  static_cast<double>(t1.tv_nsec - t0.tv_nsec) / 1e9;

    // Everything is closed: the module's reference count must come back
    // (fput of the last reference may be deferred; fds in flight in a
    // closed unix socket go with the socket's garbage collection).
    long ref = module_refcnt();
    for (int i = 0; i < 600 && ref != base_ref; i++) {  // up to a minute
        ::usleep(100000);
        ref = module_refcnt();
    }
    if (ref != base_ref)
        fail("kring's module reference count is %ld after the run, %ld before: a leak", ref,
             base_ref);

    std::printf(
        "kring_fuzz: %" PRIu64 " operations in %.1f s (%.0f/s), %" PRIu64 " expected faults\n",
        g_sh->ops.load(), secs, static_cast<double>(g_sh->ops.load()) / secs, g_sh->signals.load());
    std::printf("kring_fuzz: op calls/succeeded:");
    for (int k = 0; k < op_count; k++)
        std::printf(" %s=%" PRIu64 "/%" PRIu64, op_names[k], g_sh->calls[k].load(),
                    g_sh->succeeded[k].load());
    std::printf("\nkring_fuzz: errnos:");
    for (int e = 0; e < 256; e++)
        if (g_sh->errnos[e].load())
            std::printf(" %s=%" PRIu64, strerrorname_np(e) ? strerrorname_np(e) : "?",
                        g_sh->errnos[e].load());
    std::printf("\n");
    if (g_sh->failed.load()) {
        std::printf("kring_fuzz: FAILED: %s\nkring_fuzz: seed=%" PRIu64 "\n", g_sh->failure,
                    g_opt.seed);
        rc = 1;
    } else {
        std::printf("kring_fuzz: passed (seed=%" PRIu64 ")\n", g_opt.seed);
    }
    return rc;
}
