// In the guest: the event source (KRING_SOURCE_EVENT), an in-kernel perf
// counter per channel. A tracepoint's RAW record decodes with its tracefs
// format; a software event's SAMPLEs are as many as perf's own count of
// it; and kring's verdict on a configure is perf_event_open()'s, errno
// included, for a table of events, capture modes, users and paranoid
// levels (the permission oracle).
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"

namespace {

constexpr std::uint64_t event_type =
    KRING_SAMPLE_IP | KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD;

// tracefs, mounted if it is not (root), or "".
std::string tracefs() {
    for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
        if (::access((std::string(d) + "/events").c_str(), R_OK) == 0)
            return d;
    if (::mount("nodev", "/sys/kernel/tracing", "tracefs", 0, nullptr) == 0)
        return "/sys/kernel/tracing";
    return "";
}

// The id of tracepoint SUBSYS/NAME, or -1.
long tracepoint_id(const std::string& name) {
    std::string t = tracefs();
    if (t.empty())
        return -1;
    std::string s = kt::read_text(t + "/events/" + name + "/id");
    return s.empty() ? -1 : std::strtol(s.c_str(), nullptr, 10);
}

// A field of a tracepoint's format: its offset and size, from the line
// "field:TYPE NAME;\toffset:N;\tsize:N;...".
struct field {
    int offset = -1, size = 0;
};

field format_field(const std::string& event, const std::string& name) {
    field f;
    std::string fmt = kt::read_text(tracefs() + "/events/" + event + "/format");
    for (std::size_t at = 0; (at = fmt.find("field:", at)) != std::string::npos; at++) {
        std::size_t semi = fmt.find(';', at);
        if (semi == std::string::npos)
            break;
        std::string decl = fmt.substr(at, semi - at);
        std::size_t sp = decl.find_last_of(" *");
        std::string fname = decl.substr(sp + 1);
        if (std::size_t br = fname.find('['); br != std::string::npos)
            fname = fname.substr(0, br);
        if (fname != name)
            continue;
        std::sscanf(fmt.c_str() + semi, ";\toffset:%d;\tsize:%d;", &f.offset, &f.size);
        return f;
    }
    return f;
}

kring_attr event_attr(std::uint32_t type, std::uint64_t config, std::uint64_t period, int cpu,
                      int pid, std::uint64_t sample_type, std::uint64_t flags = 0) {
    kring_attr a = kt::make_attr(KRING_SOURCE_EVENT, cpu, sample_type, flags);
    a.pid = pid;
    a.config[0] = type;
    a.config[1] = config;
    a.config[2] = period;
    return a;
}

// perf_event_open() of the attr kring makes for @a (kmod/sources/event.c),
// as the caller: the fd, or -errno.
int perf_open(const kring_attr& a) {
    perf_event_attr pa;
    std::memset(&pa, 0, sizeof(pa));
    pa.size = sizeof(pa);
    pa.type = KRING_EVENT_TYPE(a.config[0]);
    pa.config = a.config[1];
    pa.sample_period = a.config[2];
    pa.disabled = 1;
    pa.exclude_kernel = (a.flags & KRING_ATTR_F_EXCLUDE_KERNEL) ? 1 : 0;
    pa.exclude_callchain_kernel = pa.exclude_kernel;
    pa.inherit = (a.flags & KRING_ATTR_F_INHERIT) ? 1 : 0;
    if (a.sample_type & KRING_SAMPLE_RAW)
        pa.sample_type = PERF_SAMPLE_RAW;
    long fd = ::syscall(SYS_perf_event_open, &pa, a.pid, a.cpu, -1, PERF_FLAG_FD_CLOEXEC);
    return fd < 0 ? -errno : int(fd);
}

// ---- (a) a tracepoint's RAW record --------------------------------------

// sched:sched_process_exec on every CPU around children that exec a known
// binary: one SAMPLE per exec, whose RAW (perf's raw record) decodes with
// the tracefs format to the file name and the child's pid.
TEST(EventSource, ExecTracepointRawPerCpu) {
    if (::geteuid() != 0)
        GTEST_SKIP() << "needs root (tracefs, CPU-wide RAW data)";
    const char* bin = "/bin/true";
    if (::access(bin, X_OK) != 0)
        GTEST_SKIP() << "no " << bin;
    long id = tracepoint_id("sched/sched_process_exec");
    if (id < 0)
        GTEST_SKIP() << "no sched:sched_process_exec in tracefs";
    field fname = format_field("sched/sched_process_exec", "filename");
    field fpid = format_field("sched/sched_process_exec", "pid");
    ASSERT_GE(fname.offset, 0);
    ASSERT_EQ(fname.size, 4) << "filename is a __data_loc";
    ASSERT_GE(fpid.offset, 0);
    const int ncpu = kt::online_cpus();
    std::vector<kt::channel> chs(ncpu);
    for (int c = 0; c < ncpu; c++) {
        ASSERT_EQ(chs[c].open(event_attr(PERF_TYPE_TRACEPOINT, id, 1, c, -1,
                                         event_type | KRING_SAMPLE_RAW)),
                  0)
            << "cpu " << c;
        ASSERT_EQ(chs[c].enable(), 0);
    }
    constexpr int n = 7;
    std::set<pid_t> kids;
    for (int i = 0; i < n; i++) {
        pid_t p = ::fork();
        ASSERT_GE(p, 0);
        if (p == 0) {
            ::execl(bin, bin, static_cast<char*>(nullptr));
            ::_exit(127);
        }
        kids.insert(p);
        int st = kt::wait_child(p);
        ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    }
    // Each exec's record was written in the child before it exited.
    int found = 0, bad = 0;
    for (auto& ch : chs) {
        ASSERT_EQ(ch.disable(), 0);
        ch.drain();
        EXPECT_EQ(ch.lost, 0u);
        for (auto& r : ch.recs) {
            const std::uint8_t* raw = r.s.raw;
            std::uint32_t size = r.s.raw_size;
            if (!raw || size < std::uint32_t(fname.offset + 4) ||
                size < std::uint32_t(fpid.offset + 4)) {
                bad++;
                continue;
            }
            std::uint32_t loc, pid;
            std::memcpy(&loc, raw + fname.offset, 4);
            std::memcpy(&pid, raw + fpid.offset, 4);
            std::uint32_t off = loc & 0xffff, len = loc >> 16;
            if (off + len > size || len == 0) {
                bad++;
                continue;
            }
            std::string name(reinterpret_cast<const char*>(raw + off),
                             strnlen(reinterpret_cast<const char*>(raw + off), len));
            if (!kids.count(pid_t(pid)))
                continue;  // another exec of the system
            EXPECT_EQ(name, bin);
            EXPECT_EQ(r.s.tid, pid) << "the exec'ing task's SAMPLE";
            EXPECT_EQ(r.s.period, 1u);
            found += name == bin;
        }
    }
    std::printf("sched_process_exec: %d of %d execs of %s decoded, %d undecodable\n", found, n, bin,
                bad);
    EXPECT_EQ(bad, 0);
    EXPECT_EQ(found, n);
}

// ---- (b) a software event against perf's own count -----------------------

// page-faults with period 1 on a per-thread channel of this thread: its
// SAMPLEs are as many as a perf counter of the same event counts in the
// same window (perf's enabled first and disabled last; the steps between
// them run once before, so that they fault nowhere).
TEST(EventSource, PageFaultsEqualPerfCount) {
    constexpr int pages = 300;
    const long ps = ::sysconf(_SC_PAGESIZE);
    kt::channel ch;
    kring_attr a = event_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1, -1, 0, event_type,
                              KRING_ATTR_F_EXCLUDE_KERNEL);
    int e = ch.open(a, 8);
    if (e == EACCES || e == EPERM)
        GTEST_SKIP() << "perf_event_paranoid refuses a per-thread page-faults counter";
    ASSERT_EQ(e, 0);
    int pfd = perf_open(a);
    ASSERT_GE(pfd, 0) << std::strerror(-pfd);
    std::uint64_t perf_count = 0;
    long samples = 0;
    for (int round = 0; round < 2; round++) {
        void* area =
            ::mmap(nullptr, pages * ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ASSERT_NE(area, MAP_FAILED);
        auto* m = static_cast<volatile char*>(area);
        ASSERT_EQ(::ioctl(pfd, PERF_EVENT_IOC_RESET, 0), 0);
        ASSERT_EQ(::ioctl(pfd, PERF_EVENT_IOC_ENABLE, 0), 0);
        ASSERT_EQ(ch.enable(), 0);
        for (int i = 0; i < pages; i++)
            m[i * ps] = 1;
        ASSERT_EQ(ch.disable(), 0);
        ASSERT_EQ(::ioctl(pfd, PERF_EVENT_IOC_DISABLE, 0), 0);
        ASSERT_EQ(::read(pfd, &perf_count, sizeof(perf_count)), ssize_t(sizeof(perf_count)));
        ::munmap(area, pages * ps);
        ch.recs.clear();
        samples = ch.drain();
        EXPECT_EQ(ch.lost, 0u);
    }
    ::close(pfd);
    int tid = kt::gettid_();
    long ours = 0;
    for (auto& r : ch.recs)
        ours += r.s.tid == std::uint32_t(tid) && r.s.period == 1;
    std::printf("page-faults: perf counted %llu, kring wrote %ld SAMPLEs (%ld of this thread)\n",
                static_cast<unsigned long long>(perf_count), samples, ours);
    EXPECT_GE(perf_count, std::uint64_t(pages));
    EXPECT_EQ(std::uint64_t(samples), perf_count);
    EXPECT_EQ(ours, samples);
}

// ---- (c) the permission oracle -------------------------------------------

enum user_kind { user_root, user_nobody, user_perfmon, user_kinds };
const char* const user_names[] = {"root", "nobody", "nobody+CAP_PERFMON"};

// Drop to nobody, keeping only CAP_PERFMON in the permitted and effective
// sets when @perfmon.
bool drop_to(user_kind u) {
    if (u == user_root)
        return true;
    if (u == user_perfmon && ::prctl(PR_SET_KEEPCAPS, 1) != 0)
        return false;
    if (!kt::become_nobody())
        return false;
    if (u != user_perfmon)
        return true;
    __user_cap_header_struct h{_LINUX_CAPABILITY_VERSION_3, 0};
    __user_cap_data_struct d[2] = {};
    d[CAP_TO_INDEX(CAP_PERFMON)].permitted = CAP_TO_MASK(CAP_PERFMON);
    d[CAP_TO_INDEX(CAP_PERFMON)].effective = CAP_TO_MASK(CAP_PERFMON);
    return ::syscall(SYS_capset, &h, d) == 0 && ::prctl(PR_SET_DUMPABLE, 1) == 0;
}

struct oracle_event {
    const char* name;
    bool tracepoint, raw, exclude_kernel;
};

const oracle_event oracle_events[] = {
    {"page-faults", false, false, false}, {"page-faults:u", false, false, true},
    {"exec", true, false, false},         {"exec:u", true, false, true},
    {"exec+RAW", true, true, false},      {"exec:u+RAW", true, true, true},
};
constexpr int n_events = sizeof(oracle_events) / sizeof(oracle_events[0]);
enum mode_kind { mode_cpu, mode_self, mode_other, mode_kinds };
const char* const mode_names[] = {"per-CPU", "self", "other user's task"};

struct verdict {
    int kring, perf;  // 0 or errno
};

// In a child as @u: each event in each mode, kring's configure and perf's
// open of the same attr.
bool oracle_row(user_kind u, long tp_id, pid_t other, verdict (&out)[n_events][mode_kinds]) {
    int fds[2];
    if (::pipe(fds))
        return false;
    pid_t child = ::fork();
    if (child == 0) {
        ::close(fds[0]);
        verdict v[n_events][mode_kinds];
        if (!drop_to(u))
            ::_exit(2);
        for (int e = 0; e < n_events; e++)
            for (int m = 0; m < mode_kinds; m++) {
                const oracle_event& ev = oracle_events[e];
                int cpu = m == mode_cpu ? 0 : -1;
                int pid = m == mode_cpu ? -1 : m == mode_self ? 0 : other;
                kring_attr a = ev.tracepoint
                                   ? event_attr(PERF_TYPE_TRACEPOINT, tp_id, 1, cpu, pid,
                                                event_type | (ev.raw ? KRING_SAMPLE_RAW : 0))
                                   : event_attr(PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, 1,
                                                cpu, pid, event_type);
                if (ev.exclude_kernel)
                    a.flags |= KRING_ATTR_F_EXCLUDE_KERNEL;
                kt::raw_channel ch;
                v[e][m].kring = ch.open_dev();
                if (!v[e][m].kring)
                    v[e][m].kring = ch.configure(a);
                int fd = perf_open(a);
                v[e][m].perf = fd < 0 ? -fd : 0;
                if (fd >= 0)
                    ::close(fd);
            }
        ::_exit(::write(fds[1], v, sizeof(v)) == ssize_t(sizeof(v)) ? 0 : 3);
    }
    ::close(fds[1]);
    bool ok = child > 0 && ::read(fds[0], out, sizeof(out)) == ssize_t(sizeof(out));
    ::close(fds[0]);
    int st = child > 0 ? kt::wait_child(child) : -1;
    return ok && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

std::string errname(int e) {
    switch (e) {
        case 0:
            return "ok";
        case EACCES:
            return "EACCES";
        case EPERM:
            return "EPERM";
        case EINVAL:
            return "EINVAL";
        case ENOENT:
            return "ENOENT";
        default:
            return std::to_string(e);
    }
}

// kring's verdict on KRING_IOC_CONFIGURE equals perf_event_open()'s for the
// same attr as the same user, at kernel.perf_event_paranoid -1, 0, 1, 2 and
// 3 (Debian's: CAP_SYS_ADMIN only), kring.paranoid at -1 (the sysctl alone
// decides, as for perf). A level the kernel does not know (3 upstream)
// reads as 2 to both.
TEST(EventSource, PermissionOracle) {
    const char* sysctl = "/proc/sys/kernel/perf_event_paranoid";
    const char* param = "/sys/module/kring/parameters/paranoid";
    if (::geteuid() != 0 || ::access(sysctl, W_OK) || ::access(param, W_OK))
        GTEST_SKIP() << "needs root, " << sysctl << " and " << param;
    long tp_id = tracepoint_id("sched/sched_process_exec");
    if (tp_id < 0)
        GTEST_SKIP() << "no sched:sched_process_exec in tracefs";
    std::string old_sysctl = kt::read_text(sysctl), old_param = kt::read_text(param);
    // Another user's task: uid/gid 12345, waiting to be killed.
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    pid_t other = ::fork();
    ASSERT_GE(other, 0);
    if (other == 0) {
        if (::setgroups(0, nullptr) || ::setgid(12345) || ::setuid(12345))
            ::_exit(1);
        char x = 1;
        if (::write(ready[1], &x, 1) != 1)
            ::_exit(1);
        for (;;)
            ::pause();
    }
    char x;
    ASSERT_EQ(::read(ready[0], &x, 1), 1);
    ::close(ready[0]);
    ::close(ready[1]);
    bool set_ok = kt::write_text(param, "-1");
    int disagree = 0, cells = 0;
    bool rows_ok = set_ok;
    std::string table;
    for (int level : {-1, 0, 1, 2, 3}) {
        if (!kt::write_text(sysctl, std::to_string(level))) {
            rows_ok = false;
            break;
        }
        for (int u = 0; u < user_kinds; u++) {
            verdict v[n_events][mode_kinds];
            if (!oracle_row(user_kind(u), tp_id, other, v)) {
                rows_ok = false;
                continue;
            }
            for (int e = 0; e < n_events; e++)
                for (int m = 0; m < mode_kinds; m++) {
                    bool same = v[e][m].kring == v[e][m].perf;
                    cells++;
                    disagree += !same;
                    char line[200];
                    std::snprintf(line, sizeof(line),
                                  "%2d  %-19s %-12s %-18s perf %-7s kring %-7s%s\n", level,
                                  user_names[u], oracle_events[e].name, mode_names[m],
                                  errname(v[e][m].perf).c_str(), errname(v[e][m].kring).c_str(),
                                  same ? "" : "  DISAGREE");
                    table += line;
                }
        }
    }
    kt::write_text(sysctl, old_sysctl);
    kt::write_text(param, old_param);
    ::kill(other, SIGKILL);
    kt::wait_child(other);
    std::printf(
        "paranoid user                event        mode               verdicts\n%s"
        "%d cells, %d disagreements\n",
        table.c_str(), cells, disagree);
    ASSERT_TRUE(rows_ok) << "could not set the levels or run a user's row";
    EXPECT_EQ(cells, 5 * user_kinds * n_events * mode_kinds);
    EXPECT_EQ(disagree, 0);
}

}  // namespace
