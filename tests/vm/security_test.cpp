// In the guest: what an unprivileged user may do with /dev/kring and the
// protections behind it (docs/SECURITY.md). The test generators need
// privilege; no record carries a kernel address; a follower stops at the
// exec of an image it may not observe, and does not follow a task holding
// capabilities it lacks (but does follow one into its user's own user
// namespace); records name tasks in the owner's pid namespace;
// an unprivileged follower sees no other task, and no field of any of
// its records tells anything of one, nor does its floor time their
// switches; the attr is bounded;
// hard-irq samples are throttled and counted, and a throttled timer stops
// interrupting; the floor ticks of a CPU's channels share interrupts; a
// user's channels and locked memory are bounded, also through the user
// namespaces it owns; the set-output graph has no chains, wakes
// its pollers and keeps RESET away from running writers; a buffer written
// from two CPUs through set-output stays intact.
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "errno_assert.hpp"

namespace {

bool is_root() { return ::geteuid() == 0; }

// Burn a little CPU time where the compiler cannot see the loop is empty.
void spin(int n) {
    for (int i = 0; i < n; i++)
        asm volatile("" ::: "memory");
}

bool exited_ok(int status) { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }

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

// Follow @child (which waits for a byte on @go, then does its thing and
// exits) with a per-thread sched channel; its records and stats flags.
struct followed_run {
    int err = 0;  // errno of the step that failed, 0 if none
    std::vector<kt::rec> recs;
    std::uint32_t flags = 0;
};

followed_run follow(pid_t child, int go) {
    followed_run r;
    kt::channel c;
    if ((r.err = c.open(kt::attr(KRING_SOURCE_SCHED, -1, child), 7)) || (r.err = c.enable()))
        return r;
    if (::write(go, "g", 1) != 1)
        r.err = errno;
    int status = 0;
    ::waitpid(child, &status, 0);
    c.disable();
    c.drain();
    r.recs = c.recs;
    r.flags = c.ch.stats().flags;
    return r;
}

// fork a child that waits for a byte on the returned descriptor, then runs
// @fn and exits with its result.
pid_t fork_waiting(int& go, const std::function<int()>& fn) {
    int p[2];
    if (::pipe(p))
        return -1;
    pid_t pid = ::fork();
    if (pid == 0) {
        ::close(p[1]);
        char b;
        if (::read(p[0], &b, 1) != 1)
            ::_exit(100);
        ::_exit(fn());
    }
    ::close(p[0]);
    go = p[1];
    return pid;
}

// In a child process (as nobody when @drop): fork a task running @task,
// follow it to its end, and exit with @judge(the run, the task's pid).
// Exit statuses 1 to 3 are failures to set that up.
int follow_in_child(bool drop, const std::function<int()>& task,
                    const std::function<int(const followed_run&, pid_t)>& judge) {
    return kt::in_child([&] {
        if (drop && !kt::become_nobody())
            return 1;
        int go = -1;
        pid_t child = fork_waiting(go, task);
        if (child < 0)
            return 2;
        followed_run r = follow(child, go);
        if (r.err) {
            std::printf("following the child: %s\n", std::strerror(r.err));
            return 3;
        }
        return judge(r, child);
    });
}

bool names_a_task(const char* comm, std::uint32_t pid, std::uint32_t tid, std::int32_t prio) {
    return comm[0] || pid || tid || prio;
}

// Counts of a followed child's switches: records, those naming a task on
// the other side, those whose other side is blank.
struct other_side {
    long records = 0, named = 0, blank = 0;
};

other_side count_other_side(const std::vector<kt::rec>& recs, pid_t child) {
    other_side o;
    for (const kt::rec& r : recs) {
        const kring_sched_raw& s = r.sched;
        if (s.kind != KRING_SCHED_SWITCH)
            continue;
        o.records++;
        bool prev_is_child = s.prev_tid == std::uint32_t(child);
        bool other_named = prev_is_child
                               ? names_a_task(s.next_comm, s.next_pid, s.next_tid, s.next_prio)
                               : names_a_task(s.prev_comm, s.prev_pid, s.prev_tid, s.prev_prio);
        (other_named ? o.named : o.blank)++;
    }
    return o;
}

// A follower without CAP_PERFMON sees its own tasks' side of each switch;
// the task on the other side (another user's, the idle task) is blank. Root
// sees both sides: the same run as root is the control.
TEST(Security, UnprivilegedFollowerSeesNoOtherTask) {
    if (!is_root())
        GTEST_SKIP() << "needs root to drop to another user";
    auto run = [](bool drop) {
        auto sleeper = [] { return kt::sleep_switches(100) ? 0 : 9; };
        return follow_in_child(drop, sleeper, [drop](const followed_run& r, pid_t child) {
            other_side o = count_other_side(r.recs, child);
            std::printf("%s follower: %ld switches, other side named in %ld, blank in %ld\n",
                        drop ? "unprivileged" : "root", o.records, o.named, o.blank);
            if (o.records < 20)
                return 4;
            if (drop)
                return o.named == 0 ? 0 : 5;
            return o.named > 0 ? 0 : 6;
        });
    };
    int nobody = run(true);
    int root = run(false);
    EXPECT_TRUE(exited_ok(nobody)) << "status " << nobody << " (5: another task was named)";
    EXPECT_TRUE(exited_ok(root)) << "status " << root << " (6: root saw no other task)";
}

// ---- every field of a follower's records, against foreign tasks ----------

// The SAMPLE fields the follower asks for: all of them.
constexpr std::uint64_t every_field = KRING_SAMPLE_IDENTIFIER | KRING_SAMPLE_IP | KRING_SAMPLE_TID |
                                      KRING_SAMPLE_TIME | KRING_SAMPLE_ID | KRING_SAMPLE_CPU |
                                      KRING_SAMPLE_PERIOD | KRING_SAMPLE_RAW;
// Where the CPU pair's reserved word sits in such a record: header, id, ip,
// pid/tid, time, id, then {cpu, res}.
constexpr std::size_t cpu_res_offset = sizeof(kring_record_header) + 5 * 8 + 4;
constexpr std::uint32_t cpu_hidden = 0xffffffffu;
constexpr std::uint64_t timer_hz = 1000;

// One record of the follower's channels, with what parse_sample() skips.
struct field_rec {
    kt::sample s;
    kring_sched_raw sched{};
    kring_timer_raw timer{};
    std::uint32_t cpu_res = 0;
    bool raw_ok = false;  // RAW has its size and zero padding
};

// What a follower's records told: the facts of foreign tasks (which an
// unprivileged follower must not learn) and the follower's own fields
// that are not what they must be.
struct field_verdict {
    int err = 0;  // errno of a setup step that failed
    long records = 0, switches = 0, switch_ins = 0, wakeups = 0, foreign_wakeups = 0, forks = 0,
         exits = 0, timer_samples = 0;
    long named = 0;      // a foreign side's pid, tid, prio or comm; a foreign timer sample
    long state = 0;      // a foreign prev's prev_state
    long preempt = 0;    // a foreign prev's KRING_SCHED_F_PREEMPT
    long waker_cpu = 0;  // the CPU a foreign waker ran on
    long wrong = 0;      // a field of the follower's own that is not as it must be
    std::uint64_t lost = 0, bad = 0;
    char first[200] = {};  // the first fact or wrong field, described

    long leaks() const { return named + state + preempt + waker_cpu; }
    bool seen_all() const { return named && state && preempt && waker_cpu; }
};

// Read @c's records into @out; false on a malformed ring.
bool drain_fields(kt::raw_channel& c, std::uint64_t layout, bool sched, std::vector<field_rec>& out,
                  field_verdict& v) {
    return c.consume([&](const kring_record_header& h, const std::uint8_t* p) {
        if (h.type == KRING_RECORD_LOST) {
            kring_lost_record l;
            std::memcpy(&l, p, sizeof(l) <= h.size ? sizeof(l) : h.size);
            v.lost += l.lost;
            return;
        }
        field_rec r;
        if (h.type != KRING_RECORD_SAMPLE || !kt::parse_sample(p, layout, r.s)) {
            v.bad++;
            return;
        }
        std::memcpy(&r.cpu_res, p + cpu_res_offset, 4);
        std::size_t n = sched ? sizeof(r.sched) : sizeof(r.timer);
        r.raw_ok = r.s.raw_size == KRING_RAW_PADDED(n);
        for (std::size_t i = n; r.raw_ok && i < r.s.raw_size; i++)
            r.raw_ok = r.s.raw[i] == 0;
        if (r.raw_ok)
            std::memcpy(sched ? static_cast<void*>(&r.sched) : static_cast<void*>(&r.timer),
                        r.s.raw, n);
        r.s.raw = nullptr;
        out.push_back(r);
    }) >= 0;
}

bool side_named(const char* comm, std::uint32_t pid, std::uint32_t tid, std::int32_t prio) {
    for (int i = 0; i < 16; i++)
        if (comm[i])
            return true;
    return pid || tid || prio;
}

// The context every record is judged in: the follower's own tasks, its CPU,
// its channels' ids, the window they were enabled in.
struct field_context {
    std::set<std::uint32_t> own;
    pid_t exited = 0;  // the child that exits with status 7
    std::uint32_t cpu = 0;
    std::uint64_t sched_id = 0, timer_id = 0, t0 = 0, t1 = 0;
};

void note(field_verdict& v, long& counter, const char* what, const field_rec& r) {
    counter++;
    if (!v.first[0])
        std::snprintf(v.first, sizeof(v.first),
                      "%s: kind %u flags %#x cpu %u/%u state %#llx prev %u/%u prio %d next "
                      "%u/%u prio %d tid %u",
                      what, r.sched.kind, r.sched.flags, r.sched.cpu, r.s.cpu,
                      (unsigned long long)r.sched.prev_state, r.sched.prev_pid, r.sched.prev_tid,
                      r.sched.prev_prio, r.sched.next_pid, r.sched.next_tid, r.sched.next_prio,
                      r.s.tid);
}

// Every field of one sched record, by the table of docs/SECURITY.md.
void judge_sched(const field_context& x, const field_rec& r, field_verdict& v) {
    const kring_sched_raw& k = r.sched;
    auto own = [&](std::uint32_t tid) { return tid && x.own.count(tid); };
    // The follower's own tasks are normal ones (prio 100-139), but their
    // effective priority may be an RT one while priority inheritance
    // boosts them (on PREEMPT_RT, for a spinlock an RT thread waits on):
    // any kernel priority, 0-139.
    auto own_side = [&](std::uint32_t pid, std::uint32_t tid, std::int32_t prio, const char* comm) {
        return own(tid) && pid == tid && prio >= 0 && prio < 140 && comm[0] && !comm[15];
    };
    v.records++;
    if (r.s.id != x.sched_id || r.s.id2 != x.sched_id || r.s.ip != 0 || r.s.period != 1 ||
        !own(r.s.tid) || r.s.pid != r.s.tid || r.s.time < x.t0 || r.s.time > x.t1 || r.cpu_res ||
        !r.raw_ok || k.cpu != r.s.cpu || (k.flags & ~KRING_SCHED_F_PREEMPT))
        return note(v, v.wrong, "sample field", r);
    bool prev_own = own(k.prev_tid), next_own = own(k.next_tid);
    switch (k.kind) {
        case KRING_SCHED_SWITCH:
            v.switches++;
            if ((r.s.tid != k.prev_tid && r.s.tid != k.next_tid) || k.cpu != x.cpu ||
                (prev_own && !own_side(k.prev_pid, k.prev_tid, k.prev_prio, k.prev_comm)) ||
                (next_own && !own_side(k.next_pid, k.next_tid, k.next_prio, k.next_comm)))
                return note(v, v.wrong, "switch", r);
            if (!prev_own) {
                v.switch_ins++;
                if (side_named(k.prev_comm, k.prev_pid, k.prev_tid, k.prev_prio))
                    note(v, v.named, "switch in: prev named", r);
                if (k.prev_state)
                    note(v, v.state, "switch in: prev's state", r);
                if (k.flags & KRING_SCHED_F_PREEMPT)
                    note(v, v.preempt, "switch in: prev preempted", r);
            }
            if (!next_own && side_named(k.next_comm, k.next_pid, k.next_tid, k.next_prio))
                note(v, v.named, "switch out: next named", r);
            return;
        case KRING_SCHED_WAKEUP:
            v.wakeups++;
            // prev_state: the CPU the woken task last ran on, its own.
            if (r.s.tid != k.next_tid || !next_own || k.flags || k.prev_state != x.cpu ||
                !own_side(k.next_pid, k.next_tid, k.next_prio, k.next_comm) ||
                (prev_own &&
                 (!own_side(k.prev_pid, k.prev_tid, k.prev_prio, k.prev_comm) || k.cpu != x.cpu)))
                return note(v, v.wrong, "wakeup", r);
            if (prev_own)
                return;
            v.foreign_wakeups++;
            if (side_named(k.prev_comm, k.prev_pid, k.prev_tid, k.prev_prio))
                note(v, v.named, "wakeup: waker named", r);
            if (k.cpu != cpu_hidden || r.s.cpu != cpu_hidden)
                note(v, v.waker_cpu, "wakeup: waker's CPU", r);
            return;
        case KRING_SCHED_FORK:
            v.forks++;
            if (r.s.tid != k.prev_tid || k.flags || k.prev_state || k.cpu != x.cpu ||
                !own_side(k.prev_pid, k.prev_tid, k.prev_prio, k.prev_comm) ||
                !own_side(k.next_pid, k.next_tid, k.next_prio, k.next_comm))
                note(v, v.wrong, "fork", r);
            return;
        case KRING_SCHED_EXIT:
            v.exits++;
            if (r.s.tid != k.prev_tid || k.flags || k.cpu != x.cpu ||
                !own_side(k.prev_pid, k.prev_tid, k.prev_prio, k.prev_comm) ||
                side_named(k.next_comm, k.next_pid, k.next_tid, k.next_prio) ||
                k.prev_tid != std::uint32_t(x.exited) || k.prev_state != (7u << 8))
                note(v, v.wrong, "exit", r);
            return;
        default:
            note(v, v.wrong, "kind", r);
    }
}

// Every field of one timer sample: all of it the interrupted task's, which
// must be one of the follower's own, in user mode (the channel excludes
// the kernel).
void judge_timer(const field_context& x, const field_rec& r, field_verdict& v) {
    v.records++;
    v.timer_samples++;
    if (!x.own.count(r.s.tid))
        return note(v, v.named, "timer: another task's sample", r);
    const kring_timer_raw& t = r.timer;
    if (r.s.id != x.timer_id || r.s.id2 != x.timer_id || r.s.pid != r.s.tid || !r.s.ip ||
        r.s.ip >= 0x0000800000000000ull || r.s.time < x.t0 || r.s.time > x.t1 || r.cpu_res ||
        !r.raw_ok || t.flags != KRING_TIMER_F_USER || t.cpu != r.s.cpu || r.s.cpu != x.cpu ||
        t.overruns < 1 || r.s.period != t.overruns * (1000000000ull / timer_hz))
        note(v, v.wrong, "timer sample", r);
}

// The foreign tasks' controls, shared with them through an anonymous
// shared page.
struct foreign_ctl {
    std::atomic<int> spin{0};  // the spinner reads /dev/zero while set
};

// Run in the follower's child (as nobody when @drop), pinned to @cpu, with
// a root partner answering on (@to_a, @from_a) on the same CPU and another
// on (@to_c, @from_c) on a second CPU (-1: none), and a spinner started by
// a byte on @spin_go: follow this thread with inherit in a sched channel
// (wakeups too) and a timer channel, fork a child that exits with 7, then
// ping-pong, sleep while the spinner runs and ping-pong across CPUs in
// batches; judge every record. Without @drop, go on until every kind of
// foreign fact has been seen (bounded), as the privileged control.
field_verdict follow_against_foreign(bool drop, int cpu, int to_a, int from_a, int to_c, int from_c,
                                     int spin_go, foreign_ctl* ctl) {
    field_verdict v;
    if (drop && !kt::become_nobody()) {
        v.err = EPERM;
        return v;
    }
    field_context x;
    x.cpu = std::uint32_t(cpu);
    x.own.insert(std::uint32_t(kt::gettid_()));
    kt::raw_channel sc, tc;
    kring_attr sa = kt::make_attr(KRING_SOURCE_SCHED, -1, every_field, KRING_ATTR_F_INHERIT);
    sa.pid = 0;
    sa.config[0] = KRING_SCHED_CFG_WAKEUPS;
    kring_attr ta = kt::make_attr(KRING_SOURCE_TIMER, -1, every_field,
                                  KRING_ATTR_F_INHERIT | KRING_ATTR_F_EXCLUDE_KERNEL);
    ta.pid = 0;
    ta.config[0] = timer_hz;
    if ((v.err = sc.open_dev()) || (v.err = sc.configure(sa)) ||
        (v.err = sc.map_ring(kt::order_of_4k(8), true, false)) || (v.err = tc.open_dev()) ||
        (v.err = tc.configure(ta)) || (v.err = tc.map_ring(kt::order_of_4k(6), true, false)) ||
        (v.err = sc.ioctl_arg(KRING_IOC_ID, &x.sched_id)) ||
        (v.err = tc.ioctl_arg(KRING_IOC_ID, &x.timer_id)))
        return v;
    const std::uint64_t slayout = sc.sample_type(), tlayout = tc.sample_type();
    std::vector<field_rec> srecs, trecs;
    x.t0 = kt::now_ns();
    if ((v.err = sc.ioctl0(KRING_IOC_ENABLE)) || (v.err = tc.ioctl0(KRING_IOC_ENABLE)))
        return v;
    pid_t kid = ::fork();
    if (kid == 0) {
        for (int i = 0; i < 3; i++)
            ::usleep(1000);
        ::_exit(7);
    }
    x.own.insert(std::uint32_t(kid));
    x.exited = kid;
    kt::wait_child(kid);
    auto ping = [](int to, int from, int rounds) {
        char b = 'p';
        for (int i = 0; i < rounds; i++)
            if (::write(to, &b, 1) != 1 || ::read(from, &b, 1) != 1)
                return false;
        return true;
    };
    field_context seen_x = x;  // the control's running count of foreign facts
    seen_x.t1 = ~0ull;
    field_verdict seen;
    std::size_t judged = 0;
    const int min_batches = 4, max_batches = 60;
    for (int batch = 0; batch < max_batches; batch++) {
        if (!ping(to_a, from_a, 100)) {
            v.err = EPIPE;
            break;
        }
        ctl->spin = 1;
        if (::write(spin_go, "s", 1) != 1) {
            v.err = EPIPE;
            break;
        }
        for (int i = 0; i < 20; i++)
            ::usleep(1000);
        ctl->spin = 0;
        if (to_c >= 0 && !ping(to_c, from_c, 50)) {
            v.err = EPIPE;
            break;
        }
        spin(200000);  // user time for the timer to sample
        if (!drain_fields(sc, slayout, true, srecs, v) ||
            !drain_fields(tc, tlayout, false, trecs, v))
            v.bad++;
        for (; judged < srecs.size(); judged++)
            judge_sched(seen_x, srecs[judged], seen);
        if (batch + 1 >= min_batches && (drop || seen.seen_all()))
            break;
    }
    sc.ioctl0(KRING_IOC_DISABLE);
    tc.ioctl0(KRING_IOC_DISABLE);
    x.t1 = kt::now_ns();
    if (!drain_fields(sc, slayout, true, srecs, v) || !drain_fields(tc, tlayout, false, trecs, v))
        v.bad++;
    for (const field_rec& r : srecs)
        judge_sched(x, r, v);
    for (const field_rec& r : trecs)
        judge_timer(x, r, v);
    return v;
}

// An unprivileged follower of its own thread learns nothing of the tasks
// that share its CPU: on a CPU where root's tasks block in a pipe, are
// preempted in the kernel, vfork and exit, and wake it from another CPU,
// no field of any record it reads (sched switch, wakeup, fork, exit, timer
// sample; SAMPLE id, ip, pid/tid, time, cpu, period; every RAW field and
// its padding) tells of any of them: not their ids, prio or comm, not the
// state or the preemption they left the CPU in, not the CPU a waker ran
// on. Root, following the same way, sees all of these (the control that the
// foreign tasks were there), and both see every field of their own tasks.
// One follower (@drop: as nobody, else as root) of its own thread on CPU 0
// among foreign tasks that switch, wake each other, run in the kernel and
// fork and wait on vfork children, on CPU 0 and (a partner) on CPU 1.
field_verdict follow_among_foreign_tasks(bool drop) {
    const int cpu = 0;
    field_verdict v;
    int a[2], b[2], c2[2], d2[2], go[2], res[2];
    if (::pipe(a) || ::pipe(b) || ::pipe(c2) || ::pipe(d2) || ::pipe(go) || ::pipe(res)) {
        v.err = errno;
        return v;
    }
    void* page =
        ::mmap(nullptr, kt::page_size(), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (page == MAP_FAILED) {
        v.err = errno;
        return v;
    }
    auto* ctl = new (page) foreign_ctl;
    auto partner = [](int on, int from, int to) {
        return [=] {
            if (!kt::pin_to(on))
                return 1;
            char x;
            while (::read(from, &x, 1) == 1 && ::write(to, &x, 1) == 1) {}
            return 0;
        };
    };
    bool second = kt::online_cpus() > 1 && kt::in_child([] { return kt::pin_to(1) ? 0 : 1; }) == 0;
    std::vector<pid_t> foreign;
    foreign.push_back(kt::fork_child(partner(cpu, a[0], b[1])));
    if (second)
        foreign.push_back(kt::fork_child(partner(1, c2[0], d2[1])));
    foreign.push_back(kt::fork_child([&] {  // in the kernel, preemptible at cond_resched()
        if (!kt::pin_to(cpu))
            return 1;
        int zero = ::open("/dev/zero", O_RDONLY | O_CLOEXEC);
        std::vector<char> buf(256 * 1024);
        char x;
        while (::read(go[0], &x, 1) == 1)
            while (ctl->spin)
                if (::read(zero, buf.data(), buf.size()) < 0)
                    return 1;
        return 0;
    }));
    foreign.push_back(kt::fork_child([&] {  // waits on vfork children, which exit
        if (!kt::pin_to(cpu))
            return 1;
        for (;;) {
            pid_t p = ::vfork();
            if (p == 0)
                ::_exit(0);
            if (p < 0)
                return 1;
            ::waitpid(p, nullptr, 0);
            ::usleep(300);
        }
    }));
    pid_t f = kt::fork_child([&] {
        if (!kt::pin_to(cpu))
            return 1;
        field_verdict r =
            follow_against_foreign(drop, cpu, a[1], b[0], second ? c2[1] : -1, d2[0], go[1], ctl);
        return ::write(res[1], &r, sizeof(r)) == ssize_t(sizeof(r)) ? 0 : 1;
    });
    ssize_t got = ::read(res[0], &v, sizeof(v));
    kt::wait_child(f);
    for (pid_t p : foreign)
        ::kill(p, SIGKILL);
    for (pid_t p : foreign)
        kt::wait_child(p);
    for (int fd :
         {a[0], a[1], b[0], b[1], c2[0], c2[1], d2[0], d2[1], go[0], go[1], res[0], res[1]})
        ::close(fd);
    ::munmap(page, kt::page_size());
    if (got != ssize_t(sizeof(v)))
        v.err = EPIPE;
    std::printf(
        "%s follower: %ld records (%ld switches, %ld in from another task, %ld wakeups, %ld "
        "by another task, %ld forks, %ld exits, %ld timer samples), %llu lost; another "
        "task's name %ld, state %ld, preemption %ld, waker's CPU %ld; own fields wrong %ld\n",
        drop ? "unprivileged" : "root", v.records, v.switches, v.switch_ins, v.wakeups,
        v.foreign_wakeups, v.forks, v.exits, v.timer_samples, (unsigned long long)v.lost, v.named,
        v.state, v.preempt, v.waker_cpu, v.wrong);
    if (v.first[0])
        std::printf("  first: %s\n", v.first);
    return v;
}

TEST(Security, FollowerLearnsNothingOfForeignTasks) {
    if (!is_root())
        GTEST_SKIP() << "needs root to run the foreign tasks";
    field_verdict nobody = follow_among_foreign_tasks(true);
    ASSERT_EQ(nobody.err, 0) << std::strerror(nobody.err);
    EXPECT_EQ(nobody.bad, 0u);
    EXPECT_EQ(nobody.wrong, 0) << nobody.first;
    EXPECT_EQ(nobody.leaks(), 0) << nobody.first;
    EXPECT_GT(nobody.switch_ins, 0);
    EXPECT_GT(nobody.foreign_wakeups, 0);
    EXPECT_EQ(nobody.forks, 1);
    EXPECT_EQ(nobody.exits, 1);
}

// The same tasks followed by root: every field is there, so the blanks
// above are blanks, not fields that never had anything to show.
TEST(Security, RootFollowerSeesForeignTasks) {
    if (!is_root())
        GTEST_SKIP() << "needs root to run the foreign tasks";
    field_verdict root = follow_among_foreign_tasks(false);
    ASSERT_EQ(root.err, 0) << std::strerror(root.err);
    EXPECT_EQ(root.bad, 0u);
    EXPECT_EQ(root.wrong, 0) << root.first;
    EXPECT_GT(root.named, 0);
    EXPECT_GT(root.state, 0);
    EXPECT_GT(root.preempt, 0);
    EXPECT_GT(root.waker_cpu, 0);
    EXPECT_EQ(root.forks, 1);
    EXPECT_EQ(root.exits, 1);
}

// The timestamp floor of a channel bound to a CPU tells the follower when
// its own records' times are settled; it must not time the other tasks'
// switches on that CPU. An unprivileged follower of its own thread, bound
// to CPU 0 and asleep there, ping-pongs from a second thread (which it does
// not follow) with one of root's tasks on CPU 0, reading the floor after
// each round: the floor moves only with the floor tick (at most once per
// kring.floor_tick_us, each expiry a multiple of it) and the follower's own
// records, however many switches each round makes. Root's floor (the
// control) moves with the switches.
struct floor_polls {
    int err = 0;
    long distinct = 0, rounds = 0;
    std::uint64_t window = 0;  // ns between the first and last read
};

floor_polls poll_floor(bool drop, int to, int from) {
    floor_polls r;
    if (drop && !kt::become_nobody()) {
        r.err = EPERM;
        return r;
    }
    kt::raw_channel ch;
    int wake[2];
    if (::pipe(wake)) {
        r.err = errno;
        return r;
    }
    if ((r.err = ch.open_dev()) || (r.err = ch.configure(kt::attr(KRING_SOURCE_SCHED, 0, 0))) ||
        (r.err = ch.map_ring(2, true, false)) || (r.err = ch.ioctl0(KRING_IOC_ENABLE)))
        return r;
    std::thread poller([&] {  // on CPU 0 too: affinity is inherited
        const kring_ctl_page* ctl = ch.ctl;
        std::uint64_t last = __atomic_load_n(&ctl->timestamp_floor, __ATOMIC_ACQUIRE);
        std::uint64_t t0 = kt::now_ns();
        r.distinct = 1;
        char b = 'f';
        for (; r.rounds < 2000; r.rounds++) {
            if (::write(to, &b, 1) != 1 || ::read(from, &b, 1) != 1) {
                r.err = EPIPE;
                break;
            }
            std::uint64_t f = __atomic_load_n(&ctl->timestamp_floor, __ATOMIC_ACQUIRE);
            if (f != last)
                r.distinct++;
            last = f;
        }
        r.window = kt::now_ns() - t0;
        if (::write(wake[1], &b, 1) != 1)
            r.err = EPIPE;
    });
    char b;
    if (::read(wake[0], &b, 1) != 1)  // asleep on CPU 0, recording nothing
        r.err = EIO;
    poller.join();
    ch.ioctl0(KRING_IOC_DISABLE);
    ::close(wake[0]);
    ::close(wake[1]);
    return r;
}

TEST(Security, FollowerFloorDoesNotTimeForeignSwitches) {
    if (!is_root())
        GTEST_SKIP() << "needs root to run the foreign task";
    std::string tick = kt::read_sysfs("/sys/module/kring/parameters/floor_tick_us");
    if (tick.empty())
        GTEST_SKIP() << "no kring.floor_tick_us";
    const std::uint64_t period = std::strtoull(tick.c_str(), nullptr, 10) * 1000;
    auto run = [&](bool drop) {
        floor_polls r;
        int a[2], b[2], res[2];
        if (::pipe(a) || ::pipe(b) || ::pipe(res)) {
            r.err = errno;
            return r;
        }
        pid_t partner = kt::fork_child([&] {
            if (!kt::pin_to(0))
                return 1;
            char x;
            while (::read(a[0], &x, 1) == 1 && ::write(b[1], &x, 1) == 1) {}
            return 0;
        });
        pid_t f = kt::fork_child([&] {
            if (!kt::pin_to(0))
                return 1;
            floor_polls m = poll_floor(drop, a[1], b[0]);
            return ::write(res[1], &m, sizeof(m)) == ssize_t(sizeof(m)) ? 0 : 1;
        });
        if (::read(res[0], &r, sizeof(r)) != ssize_t(sizeof(r)))
            r.err = EPIPE;
        kt::wait_child(f);
        ::kill(partner, SIGKILL);
        kt::wait_child(partner);
        for (int fd : {a[0], a[1], b[0], b[1], res[0], res[1]})
            ::close(fd);
        std::printf(
            "%s follower: %ld rounds with another task in %.1f ms, the floor took %ld "
            "values\n",
            drop ? "unprivileged" : "root", r.rounds, double(r.window) / 1e6, r.distinct);
        return r;
    };
    // The tick's expiries are multiples of its period and it runs once per
    // expiry: in the window, the first value, one tick late from before it,
    // at most window / period + 1 others, and the followed thread's switch
    // out as it goes to sleep (if the rounds came first).
    auto bound = [&](const floor_polls& r) { return long(period ? r.window / period + 2 : 0) + 2; };
    floor_polls nobody = run(true);
    ASSERT_EQ(nobody.err, 0) << std::strerror(nobody.err);
    EXPECT_LE(nobody.distinct, bound(nobody)) << "the floor moved with other tasks' switches";
    floor_polls root = run(false);
    ASSERT_EQ(root.err, 0) << std::strerror(root.err);
    EXPECT_GT(root.distinct, bound(root)) << "root's floor did not move with the switches";
}

// A task of the follower's own user that holds capabilities the follower
// lacks (kept across its change of ids, as a service started with ambient
// capabilities holds them) is not followed, as ptrace's read mode refuses
// it (cap_ptrace_access_check()); the same task without them is.
TEST(Security, TaskWithCapabilitiesTheFollowerLacksIsNotFollowed) {
    if (!is_root())
        GTEST_SKIP() << "needs root to make a nobody task that holds capabilities";
    auto run = [](bool keep_caps) {
        int ready[2], hold[2];
        if (::pipe(ready) || ::pipe(hold))
            return -1;
        pid_t target = kt::fork_child([&] {
            ::close(ready[0]);
            ::close(hold[1]);
            if (keep_caps && ::prctl(PR_SET_KEEPCAPS, 1))
                return 1;
            if (!kt::become_nobody())
                return 1;
            char c = 0;
            if (::write(ready[1], &c, 1) != 1)
                return 1;
            return ::read(hold[0], &c, 1) < 0 ? 1 : 0;  // until the parent closes
        });
        ::close(ready[1]);
        ::close(hold[0]);
        char c;
        bool up = ::read(ready[0], &c, 1) == 1;
        int status = up ? kt::in_child([&] {
            if (!kt::become_nobody())
                return 1;
            kt::channel ch;
            kring_attr a = kt::attr(KRING_SOURCE_SCHED, -1, target);
            int e = ch.open(a, 4);
            std::printf("following a nobody task %s its capabilities: %s\n",
                        keep_caps ? "with" : "without", e ? std::strerror(e) : "allowed");
            return e == 0 ? 10 : e == EACCES ? 11 : 12;
        })
                        : -1;
        ::close(ready[0]);
        ::close(hold[1]);
        kt::wait_child(target);
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    };
    EXPECT_EQ(run(true), 11) << "10: followed, 12: another error";
    EXPECT_EQ(run(false), 10) << "11: refused its own capability-less task";
}

// A task that enters a user namespace its own user made (unshare -U, a
// rootless sandbox) holds every capability there, and so does its user,
// which owns the namespace: it is followed on, as ptrace may read it; the
// channel is not revoked.
TEST(Security, TaskInItsUsersOwnUserNamespaceIsFollowed) {
    if (!is_root())
        GTEST_SKIP() << "needs root to drop to another user";
    int can = kt::in_child([] { return kt::become_nobody() && !::unshare(CLONE_NEWUSER) ? 0 : 1; });
    if (!exited_ok(can))
        GTEST_SKIP() << "nobody may not make a user namespace on this kernel";
    auto task = [] {
        if (::unshare(CLONE_NEWUSER))
            return 1;
        return kt::sleep_switches(40) ? 0 : 9;
    };
    int st = follow_in_child(true, task, [](const followed_run& r, pid_t child) {
        long switches = 0;
        for (const kt::rec& r2 : r.recs)
            switches += r2.sched.kind == KRING_SCHED_SWITCH && r2.s.tid == std::uint32_t(child);
        bool revoked = r.flags & KRING_STATS_F_REVOKED;
        std::printf("a task in its user's own user namespace: %ld switches, %s\n", switches,
                    revoked ? "revoked" : "still followed");
        return revoked ? 4 : switches < 20 ? 5 : 0;
    });
    EXPECT_TRUE(exited_ok(st)) << "status " << st << " (4: revoked, 5: too few switches)";
}

// Records name tasks in the pid namespace the channel was configured from,
// as perf names them in its event's namespace: a task that is pid 1 of a
// new pid namespace and follows itself reads tid 1 in its samples and on
// its side of each switch, not its pid in the initial namespace.
TEST(Security, RecordsNameTasksInTheOwnersPidNamespace) {
    if (!is_root())
        GTEST_SKIP() << "needs root to make a pid namespace";
    if (::access("/proc/self/ns/pid", F_OK) != 0)
        GTEST_SKIP() << "this kernel has no pid namespaces (CONFIG_PID_NS)";
    int status = kt::in_child([] {
        if (::unshare(CLONE_NEWPID))
            return 1;
        int inner = kt::in_child([] {
            if (::getpid() != 1)
                return 2;
            kt::channel c;
            if (c.open(kt::attr(KRING_SOURCE_SCHED, -1, 0), 4) || c.enable())
                return 3;
            kt::sleep_switches(20);
            c.disable();
            c.drain();
            long own = 0, wrong = 0;
            for (const kt::rec& r : c.recs) {
                if (r.sched.kind != KRING_SCHED_SWITCH)
                    continue;
                own++;
                bool mine = r.s.pid == 1 && r.s.tid == 1 &&
                            (r.sched.prev_tid == 1 || r.sched.next_tid == 1);
                if (!mine) {
                    if (!wrong)
                        std::printf("a switch names pid %u tid %u, prev %u, next %u\n", r.s.pid,
                                    r.s.tid, r.sched.prev_tid, r.sched.next_tid);
                    wrong++;
                }
            }
            std::printf("pid 1 of a new namespace: %ld switches, %ld not naming it 1\n", own,
                        wrong);
            return own < 10 ? 4 : wrong ? 5 : 0;
        });
        return WIFEXITED(inner) ? WEXITSTATUS(inner) : 6;
    });
    EXPECT_TRUE(exited_ok(status))
        << "status " << status << " (4: too few switches, 5: a record named another pid)";
}

// A followed task that execs a setuid-root image is not followed any more
// once the exec commits its credentials (perf stops a task's events there):
// no record of what the new image does, and the channel says it was
// revoked. Followed by root, the same exec stays visible: the control.
TEST(Security, ExecOfSetuidImageStopsAFollower) {
    if (!is_root() || ::access("/bin/busybox", X_OK) != 0)
        GTEST_SKIP() << "needs root and /bin/busybox to make a setuid image";
    const char* dir = "/tmp/kring-suid";
    const std::string image = std::string(dir) + "/busybox";
    ASSERT_EQ(kt::make_setuid_copy("/bin/busybox", image), "");
    auto run = [&image](bool drop) {
        auto exec_setuid = [&image] {
            ::execl(image.c_str(), "busybox", "sleep", "1", static_cast<char*>(nullptr));
            return 99;
        };
        return follow_in_child(drop, exec_setuid, [drop](const followed_run& r, pid_t) {
            // The image's own activity: `sleep` going to sleep, and its
            // exit. (The exec renames the task a moment before it commits
            // the new credentials; a preemption in between may be recorded
            // under the new name, with the old credentials: not counted.)
            long after_exec = 0;
            for (const kt::rec& x : r.recs) {
                const kring_sched_raw& k = x.sched;
                bool preempted = k.kind == KRING_SCHED_SWITCH && k.prev_state == 0;
                if (!preempted && (!std::strncmp(k.prev_comm, "busybox", 16) ||
                                   !std::strncmp(k.next_comm, "busybox", 16)))
                    after_exec++;
            }
            bool revoked = r.flags & KRING_STATS_F_REVOKED;
            std::printf("%s follower: %zu records, %ld of the new image, revoked %d\n",
                        drop ? "unprivileged" : "root", r.recs.size(), after_exec, revoked);
            if (drop)
                return !revoked ? 4 : after_exec ? 5 : 0;
            return revoked ? 6 : after_exec ? 0 : 7;
        });
    };
    int nobody = run(true);
    int root = run(false);
    ::unlink(image.c_str());
    ::rmdir(dir);
    EXPECT_TRUE(exited_ok(nobody))
        << "status " << nobody << " (4: not revoked, 5: records of the setuid image)";
    EXPECT_TRUE(exited_ok(root)) << "status " << root << " (6: revoked, 7: no record of the exec)";
}

// Samples of a timer channel on CPU 0 in 10 ms windows of the record clock
// (throttle.c's windows, aligned on the same monotonic clock).
struct timer_run {
    std::uint64_t written = 0, throttled = 0;
    std::uint64_t sampled_ns = 0;  // the PERIOD of the samples written, summed
    int max_per_window = 0;
    // From ENABLE's return to the last sample's time: every period in
    // there was accounted for by the time that sample was written (a
    // timer held up at the end, on a loaded host, counts its periods
    // only when it fires, and DISABLE may come first).
    double accounted_secs = 0;
};

// Runs the timer for @ms at least, and on until it has written a sample
// and, when @throttle, had one throttled (how many come in a given time
// depends on the host's pace), for at most kt::patience.
timer_run run_timer(std::uint64_t hz, int ms, bool throttle = false) {
    timer_run t;
    kt::channel c;
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, 0, -1);
    a.config[0] = hz;
    EXPECT_EQ(c.open(a, 8), 0);
    EXPECT_EQ(c.enable(), 0);
    const std::uint64_t on = kt::now_ns();
    for (int i = 0; i < ms / 20; i++) {
        ::usleep(20000);
        c.drain();
    }
    kt::wait_until(
        [&] {
            c.drain();
            return !c.recs.empty() && (!throttle || c.ch.stats().throttled > 0);
        },
        kt::patience, std::chrono::milliseconds(20));
    EXPECT_EQ(c.disable(), 0);
    c.drain();
    kring_stats st = c.ch.stats();
    EXPECT_GE(st.size, std::uint32_t(KRING_STATS_SIZE_VER1));
    EXPECT_EQ(c.bad, 0u);
    std::map<std::uint64_t, int> windows;
    std::uint64_t last = on;
    for (const kt::rec& r : c.recs) {
        t.max_per_window = std::max(t.max_per_window, ++windows[r.s.time / 10000000]);
        t.sampled_ns += r.s.period;
        last = std::max(last, r.s.time);
    }
    t.accounted_secs = double(last - on) / 1e9;
    t.written = c.recs.size();
    t.throttled = st.throttled;
    return t;
}

// kring.max_sample_rate bounds the samples one CPU writes per second; the
// dropped ones are counted in the channel's throttled figure.
TEST(Security, SampleRateIsThrottled) {
    kt::module_param rate("max_sample_rate"), pct("cpu_time_max_percent");
    if (!is_root() || !rate.usable() || !pct.usable())
        GTEST_SKIP() << "needs root and kring's throttle parameters";
    ASSERT_TRUE(pct.set("0"));
    ASSERT_TRUE(rate.set("500"));  // 5 per 10 ms window
    timer_run t = run_timer(5000, 1000, true);
    std::printf("max_sample_rate=500: %llu written, %llu throttled, at most %d per 10 ms\n",
                (unsigned long long)t.written, (unsigned long long)t.throttled, t.max_per_window);
    EXPECT_GT(t.written, 0u);
    EXPECT_GT(t.throttled, 0u);
    // A sample admitted at the end of a window may carry a time just past it.
    EXPECT_LE(t.max_per_window, 5 + 1);
}

// Local timer interrupts CPU 0 has taken (/proc/interrupts, LOC), -1 when
// the kernel does not say.
// CPU 0's local timer interrupts: the LOC line on x86-64, the arch_timer
// line on arm64 (" 11:  1234  567  GICv3  30 Level  arch_timer"); -1 if
// there is neither.
long cpu0_timer_interrupts() {
    long n = kt::proc_value("/proc/interrupts", " LOC: %ld");
    if (n >= 0)
        return n;
    std::ifstream f("/proc/interrupts");
    std::string line;
    while (std::getline(f, line)) {
        if (line.size() < 10 || line.compare(line.size() - 10, 10, "arch_timer") != 0)
            continue;
        long irq = 0;
        if (std::sscanf(line.c_str(), " %ld: %ld", &irq, &n) == 2)
            return n;
    }
    return -1;
}

// A throttled timer does not tick again before the CPU's next window: a
// 20 kHz timer limited to 500 samples per second costs CPU 0 about the
// interrupts of the samples it may write and one per 10 ms window, not
// one per period (the periods skipped are counted as throttled).
TEST(Security, ThrottledTimerStopsInterrupting) {
    kt::module_param rate("max_sample_rate"), pct("cpu_time_max_percent");
    if (!is_root() || !rate.usable() || !pct.usable())
        GTEST_SKIP() << "needs root and kring's throttle parameters";
    long before = cpu0_timer_interrupts();
    if (before < 0)
        GTEST_SKIP() << "no LOC line in /proc/interrupts";
    ASSERT_TRUE(pct.set("0"));
    ASSERT_TRUE(rate.set("500"));
    const std::uint64_t t0 = kt::now_ns();
    timer_run t = run_timer(20000, 1000, true);
    long taken = cpu0_timer_interrupts() - before;
    const double secs = double(kt::now_ns() - t0) / 1e9;
    // Every period of the timer is accounted for: in a sample's PERIOD
    // (more than one when the timer fired late, e.g. on a loaded host)
    // or throttled, the periods skipped to the next window.
    const std::uint64_t sampled = t.sampled_ns / 50000;  // 20 kHz: 50 us
    const double due = 20000 * t.accounted_secs;
    std::printf(
        "20 kHz timer at max_sample_rate=500: %llu written (%llu periods), %llu throttled, "
        "of %.0f periods due; %ld timer interrupts on CPU 0 in %.2f s\n",
        (unsigned long long)t.written, (unsigned long long)sampled, (unsigned long long)t.throttled,
        due, taken, secs);
    EXPECT_GT(t.written, 0u);
    EXPECT_LE(t.max_per_window, 5 + 1);
    EXPECT_GT(t.throttled, 0u);
    // Up to the last sample every period is counted; the margin is for
    // the clock reads around ENABLE and rounding.
    EXPECT_GE(double(t.throttled + sampled), 0.9 * due - 400)
        << "periods of a throttled timer went uncounted";
    // 500 samples, 100 windows, the kernel's own tick (HZ <= 1000) and
    // other timers a second: far below the 20000 periods. (A loaded host
    // stretches the run: counted per second of it.)
    EXPECT_LT(taken, 5000 * secs) << "a throttled timer still interrupts every period";
}

// Every channel bound to a CPU has a floor tick there (kring.floor_tick_us,
// 10 ms by default, hard irq). The ticks are aligned on their period, so
// the ticks of 200 channels bound to CPU 0 expire together: about 100
// interrupts a second, not 20000.
TEST(Security, FloorTicksOfManyChannelsShareOneInterrupt) {
    if (!is_root())
        GTEST_SKIP() << "per-CPU capture needs privilege";
    if (kt::read_sysfs("/sys/module/kring/parameters/floor_tick_us") != "10000")
        GTEST_SKIP() << "kring.floor_tick_us is not the default 10000";
    long before = cpu0_timer_interrupts();
    if (before < 0)
        GTEST_SKIP() << "no LOC line in /proc/interrupts";
    std::vector<std::unique_ptr<kt::raw_channel>> chans;
    for (int i = 0; i < 200; i++) {
        auto c = std::make_unique<kt::raw_channel>();
        ASSERT_EQ(c->open_dev(), 0);
        ASSERT_EQ(c->configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
        ASSERT_EQ(c->map_ring(0, true, false), 0);
        ASSERT_EQ(c->ioctl0(KRING_IOC_ENABLE), 0);
        chans.push_back(std::move(c));
    }
    long start = cpu0_timer_interrupts();
    const std::uint64_t t0 = kt::now_ns();
    ::usleep(1000000);
    long taken = cpu0_timer_interrupts() - start;
    const double secs = double(kt::now_ns() - t0) / 1e9;
    for (auto& c : chans)
        EXPECT_EQ(c->ioctl0(KRING_IOC_DISABLE), 0);
    std::printf("200 channels bound to CPU 0: %ld timer interrupts there in %.2f s\n", taken, secs);
    // 100 floor ticks, the kernel's own tick (HZ <= 1000) and other timers
    // a second (the sleep lasts longer on a loaded host: per second of it).
    EXPECT_LT(taken, 5000 * secs) << "the floor ticks of the channels do not share interrupts";
}

// kring.max_user_channels bounds the channels one unprivileged user holds
// open: EMFILE beyond it (as fs.inotify.max_user_instances); a close frees
// a place, a fork or dup makes no channel; root is not bound.
TEST(Security, ChannelsPerUserAreBounded) {
    kt::module_param max("max_user_channels");
    if (!is_root() || !max.usable())
        GTEST_SKIP() << "needs root and kring's max_user_channels parameter";
    ASSERT_TRUE(max.set("4"));
    auto open_kring = [] { return ::open("/dev/kring", O_RDWR | O_CLOEXEC); };
    int status = kt::in_child([&] {
        if (!kt::become_nobody())
            return 1;
        std::vector<int> fds;
        for (int i = 0; i < 4; i++) {
            int fd = open_kring();
            if (fd < 0)
                return 2;
            fds.push_back(fd);
        }
        if (::dup(fds[0]) < 0)
            return 3;
        errno = 0;
        if (open_kring() >= 0 || errno != EMFILE)
            return 4;
        // A child shares the parent's channels and is refused a fifth too.
        int child = kt::in_child([&] {
            errno = 0;
            return open_kring() < 0 && errno == EMFILE ? 0 : 1;
        });
        if (!exited_ok(child))
            return 5;
        ::close(fds.back());
        fds.pop_back();
        return open_kring() >= 0 ? 0 : 6;
    });
    EXPECT_TRUE(exited_ok(status))
        << "status " << status << " (2: refused under the limit, 4: not refused beyond it, "
        << "5: refused a child nothing, 6: a close freed no place)";
    std::vector<int> fds;
    for (int i = 0; i < 8; i++) {
        int fd = open_kring();
        EXPECT_GE(fd, 0) << "root was refused channel " << i << ": " << std::strerror(errno);
        if (fd >= 0)
            fds.push_back(fd);
    }
    for (int fd : fds)
        ::close(fd);
}

// The first of the kuids mapped into the namespace of in_subid_namespace(),
// as an /etc/subuid range would give them to nobody.
constexpr int subid_base = 100000;

// Runs @before as nobody, then @inside in a user namespace nobody made and
// owns, with the namespace's uids and gids 0 .. @ids - 1 mapped onto kuids
// and kgids subid_base onward: what nobody gets from newuidmap and
// newgidmap with a subordinate range. The test, root, writes the maps as
// those setuid helpers would. @inside starts as the namespace's root (kuid
// subid_base, every capability in the namespace, none outside it). Each
// returns 0 or an exit code of its own; the child exits 90 when nobody may
// not make a user namespace here, 91 when the maps were refused. Returns
// the wait status.
int in_subid_namespace(int ids, const std::function<int()>& before,
                       const std::function<int()>& inside) {
    int up[2], down[2];
    if (::pipe2(up, O_CLOEXEC) || ::pipe2(down, O_CLOEXEC))
        return -1;
    pid_t child = kt::fork_child([&] {
        char c = 1;
        if (!kt::become_nobody())
            return 1;
        if (int e = before())
            return e;
        bool made = ::unshare(CLONE_NEWUSER) == 0;
        c = made ? 1 : 0;
        if (::write(up[1], &c, 1) != 1 || !made)
            return 90;
        if (::read(down[0], &c, 1) != 1 || !c)
            return 91;
        if (::setresgid(0, 0, 0) || ::setresuid(0, 0, 0))
            return 91;
        return inside();
    });
    // The child's ends: a child that exits early is an end of file here.
    ::close(up[1]);
    ::close(down[0]);
    char c = 0;
    if (child > 0 && ::read(up[0], &c, 1) == 1 && c) {
        std::string map = "0 " + std::to_string(subid_base) + " " + std::to_string(ids) + "\n";
        std::string proc = "/proc/" + std::to_string(child);
        c = kt::write_text(proc + "/uid_map", map) && kt::write_text(proc + "/gid_map", map);
        // A child gone meanwhile is seen by the wait below.
        (void)!::write(down[1], &c, 1);
    }
    ::close(up[0]);
    ::close(down[1]);
    return child < 0 ? -1 : kt::wait_child(child);
}

// The caller, in a user namespace of its own, makes another inside it that
// it owns, mapping its uid and gid there onto root's of the new one: what
// an unprivileged sandbox does (unshare -U -r). Returns 0 or errno.
int nest_user_namespace() {
    uid_t uid = ::getuid();
    gid_t gid = ::getgid();
    // A change of ids made the process non-dumpable, which gives its /proc
    // files to root, whom the namespace does not map: its maps could not
    // be written.
    if (::prctl(PR_SET_DUMPABLE, 1) || ::unshare(CLONE_NEWUSER))
        return errno;
    if (!kt::write_text("/proc/self/uid_map", "0 " + std::to_string(uid) + " 1\n") ||
        !kt::write_text("/proc/self/setgroups", "deny") ||
        !kt::write_text("/proc/self/gid_map", "0 " + std::to_string(gid) + " 1\n"))
        return errno ? errno : EIO;
    return 0;
}

// Opens channels into @fds until one is refused or @most are open; returns
// how many it opened, -1 when the refusal was not EMFILE.
int open_until_refused(int most, std::vector<int>& fds) {
    for (int n = 0; n < most; n++) {
        int fd = ::open("/dev/kring", O_RDWR | O_CLOEXEC);
        if (fd < 0)
            return errno == EMFILE ? n : -1;
        fds.push_back(fd);
    }
    return most;
}

// kring.max_user_channels counts what a user holds through the user
// namespaces it owns too, as the kernel's ucounts count inotify instances:
// nobody, with a range of 8 subordinate ids mapped into a namespace of its
// own (and a namespace nested in that one), holds at most the limit in
// all, not the limit once per id. When all are closed, the whole limit is
// there again, for one id of the nested namespace: nothing leaked at any
// level.
TEST(Security, ChannelsPerUserAreBoundedAcrossUserNamespaces) {
    kt::module_param max("max_user_channels");
    if (!is_root() || !max.usable())
        GTEST_SKIP() << "needs root and kring's max_user_channels parameter";
    constexpr int limit = 16, ids = 8, outside = 3;
    ASSERT_TRUE(max.set(std::to_string(limit)));
    std::vector<int> fds;
    auto before = [&] { return open_until_refused(outside, fds) == outside ? 0 : 2; };
    int status = in_subid_namespace(ids, before, [&] {
        int total = outside;
        std::string per_id;
        for (int i = 0; i < ids; i++) {
            // Real uid i (the one charged), saved uid 0 to come back.
            if (::setresuid(i, i, 0))
                return 3;
            int n = open_until_refused(limit + 1, fds);
            if (n < 0 || ::setresuid(0, 0, 0))
                return 4;
            total += n;
            per_id += " " + std::to_string(n);
        }
        if (int e = nest_user_namespace()) {
            std::printf("no nested user namespace: %s\n", std::strerror(e));
            return 5;
        }
        int nested = open_until_refused(limit + 1, fds);
        if (nested < 0)
            return 4;
        total += nested;
        std::printf(
            "limit %d: nobody %d, its %d subordinate ids%s, a nested namespace %d: "
            "%d channels\n",
            limit, outside, ids, per_id.c_str(), nested, total);
        if (total > limit)
            return 6;
        if (total < limit)
            return 7;
        for (int fd : fds)
            ::close(fd);
        fds.clear();
        int again = open_until_refused(limit + 1, fds);
        std::printf("all closed: %d channels for one id of the nested namespace\n", again);
        return again == limit ? 0 : 8;
    });
    if (WIFEXITED(status) && WEXITSTATUS(status) == 90)
        GTEST_SKIP() << "nobody may not make a user namespace on this kernel";
    EXPECT_TRUE(exited_ok(status))
        << "status " << status << " (2: nobody refused under the limit, 3/5: no id change or "
        << "nested namespace, 4: not EMFILE, 6: more than the limit in all, 7: refused below "
        << "it, 8: the limit not all back after closing, 91: maps refused)";
}

// The locked-memory allowance (kring.mlock_kb per CPU) counts what a user
// maps through the user namespaces it owns too: nobody, without
// RLIMIT_MEMLOCK, maps at most its allowance in all, from itself, 8
// subordinate ids and a nested namespace, not the allowance once per id.
// When all are unmapped and closed, the whole allowance is there again.
TEST(Security, LockedMemoryPerUserIsBoundedAcrossUserNamespaces) {
    kt::module_param kb("mlock_kb");
    if (!is_root() || !kb.usable())
        GTEST_SKIP() << "needs root and kring's mlock_kb parameter";
    // 8 pages per online CPU, whatever a page is (mlock_kb is in KiB);
    // each mapping below is 2 (control and data).
    const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
    const long allowance = 8 * cpus;
    constexpr int ids = 8, outside = 2;
    ASSERT_TRUE(kb.set(std::to_string(8 * kt::page_size() / 1024)));
    std::vector<std::unique_ptr<kt::raw_channel>> maps;
    // Maps 2-page rings until one is refused (EPERM) or @most are mapped:
    // the number mapped, -1 for another error.
    auto map_until_refused = [&](long most) -> long {
        for (long n = 0; n < most; n++) {
            auto ch = std::make_unique<kt::raw_channel>();
            if (ch->open_dev() || ch->configure(kt::make_attr(KRING_SOURCE_NONE, -1)))
                return -1;
            int e = ch->map_ring(0, true, false);
            if (e)
                return e == EPERM ? n : -1;
            maps.push_back(std::move(ch));
        }
        return most;
    };
    auto before = [&] {
        rlimit rl{0, 0};
        if (::setrlimit(RLIMIT_MEMLOCK, &rl))
            return 2;
        return map_until_refused(outside) == outside ? 0 : 2;
    };
    int status = in_subid_namespace(ids, before, [&] {
        long pages = 2 * outside;
        std::string per_id;
        for (int i = 0; i < ids; i++) {
            if (::setresuid(i, i, 0))
                return 3;
            long n = map_until_refused(allowance);
            if (n < 0 || ::setresuid(0, 0, 0))
                return 4;
            pages += 2 * n;
            per_id += " " + std::to_string(2 * n);
        }
        if (int e = nest_user_namespace()) {
            std::printf("no nested user namespace: %s\n", std::strerror(e));
            return 5;
        }
        long nested = map_until_refused(allowance);
        if (nested < 0)
            return 4;
        pages += 2 * nested;
        std::printf(
            "allowance %ld pages: nobody %d, its %d subordinate ids%s, a nested "
            "namespace %ld: %ld pages mapped\n",
            allowance, 2 * outside, ids, per_id.c_str(), 2 * nested, pages);
        if (pages > allowance)
            return 6;
        if (pages < allowance)
            return 7;
        maps.clear();
        long again = map_until_refused(allowance);
        std::printf("all unmapped: %ld pages for the nested namespace\n", 2 * again);
        return 2 * again == allowance ? 0 : 8;
    });
    if (WIFEXITED(status) && WEXITSTATUS(status) == 90)
        GTEST_SKIP() << "nobody may not make a user namespace on this kernel";
    EXPECT_TRUE(exited_ok(status))
        << "status " << status << " (2: nobody refused under its allowance, 3/5: no id "
        << "change or nested namespace, 4: not EPERM, 6: more than the allowance in all, "
        << "7: refused below it, 8: the allowance not all back after unmapping, 91: maps "
        << "refused)";
}

// kring.cpu_time_max_percent is wired to the samples' time: with it off
// nothing is throttled; at 1 % (100 us of each 10 ms window) timer samples
// on CPU 0 are throttled and counted. How many run per window depends on
// what a sample costs on this machine, and is checked on a driven clock in
// KUnit (kring_throttle); here 32 timers on one CPU make sure a window sees
// far more than 100 us of samples, whether their interrupts come on time
// (6400 ticks a window) or late, all due at once (a loaded host).
TEST(Security, CpuTimeIsThrottled) {
    kt::module_param rate("max_sample_rate"), pct("cpu_time_max_percent");
    if (!is_root() || !rate.usable() || !pct.usable())
        GTEST_SKIP() << "needs root and kring's throttle parameters";
    ASSERT_TRUE(rate.set("0"));
    ASSERT_TRUE(pct.set("0"));
    timer_run free = run_timer(20000, 200);
    EXPECT_GT(free.written, 0u);
    EXPECT_EQ(free.throttled, 0u) << "throttled with both limits off";

    ASSERT_TRUE(pct.set("1"));
    std::vector<kt::channel> chans(32);
    kring_attr a = kt::attr(KRING_SOURCE_TIMER, 0, -1);
    a.config[0] = 20000;
    for (kt::channel& c : chans)
        ASSERT_EQ(c.open(a, 2), 0);
    for (kt::channel& c : chans)
        ASSERT_EQ(c.enable(), 0);
    std::uint64_t throttled = 0;
    const bool seen = kt::wait_until(
        [&] {
            throttled = 0;
            for (kt::channel& c : chans) {
                c.drain();
                throttled += c.ch.stats().throttled;
            }
            return throttled > 0;
        },
        kt::patience, std::chrono::milliseconds(20));
    std::uint64_t written = 0;
    for (kt::channel& c : chans) {
        EXPECT_EQ(c.disable(), 0);
        c.drain();
        written += c.recs.size();
        EXPECT_EQ(c.bad, 0u);
    }
    std::printf(
        "cpu_time_max_percent: off %llu written, %llu throttled; 1%% with 32 timers "
        "%llu written, %llu throttled\n",
        (unsigned long long)free.written, (unsigned long long)free.throttled,
        (unsigned long long)written, (unsigned long long)throttled);
    EXPECT_TRUE(seen) << "no sample throttled at 1 % in " << kt::patience.count() << " s";
    EXPECT_GT(written, 0u);
}

// Set-output builds no chains and no cycles: a target is never redirected,
// a redirected channel is never a target.
TEST(Security, SetOutputGraphHasNoChains) {
    if (!is_root())
        GTEST_SKIP() << "per-CPU capture needs privilege";
    kt::raw_channel a, b, c;
    for (kt::raw_channel* ch : {&a, &b, &c}) {
        ASSERT_EQ(ch->open_dev(), 0);
        ASSERT_EQ(ch->configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
    }
    EXPECT_EQ(a.set_output(b.fd), 0);
    EXPECT_ERRNO(b.set_output(c.fd), EINVAL) << "b is a target";
    EXPECT_ERRNO(c.set_output(a.fd), EINVAL) << "a is redirected";
    EXPECT_ERRNO(b.set_output(a.fd), EINVAL) << "a cycle";
    EXPECT_EQ(a.set_output(-1), 0);
    EXPECT_EQ(b.set_output(c.fd), 0);
}

// A redirected channel polls its target's buffer: its poller wakes when
// records arrive there. RESET of the target waits for its writers to stop.
TEST(Security, RedirectedChannelPollsAndResetsWithItsTarget) {
    if (!is_root())
        GTEST_SKIP() << "per-CPU capture needs privilege";
    kt::raw_channel src, dst;
    ASSERT_EQ(src.open_dev(), 0);
    ASSERT_EQ(src.configure(kt::attr(KRING_SOURCE_SCHED, 0, -1)), 0);
    ASSERT_EQ(dst.open_dev(), 0);
    kring_attr d = kt::attr(KRING_SOURCE_SCHED, 0, -1);
    d.wakeup_events = 1;
    ASSERT_EQ(dst.configure(d), 0);
    ASSERT_EQ(src.set_output(dst.fd), 0);
    ASSERT_EQ(dst.map_ring(6, true, false), 0);
    __atomic_store_n(&dst.ctl->need_wakeup, 1, __ATOMIC_SEQ_CST);
    ASSERT_EQ(src.ioctl0(KRING_IOC_ENABLE), 0);
    // Polling on CPU 0: going to sleep in poll() is a switch there.
    ASSERT_TRUE(kt::pin_to(0));
    pollfd p{src.fd, POLLIN, 0};
    int n = ::poll(&p, 1, int(std::chrono::milliseconds(kt::patience).count()));
    kt::unpin();
    EXPECT_EQ(n, 1) << "the redirected channel's poller was not woken";
    EXPECT_TRUE(p.revents & POLLIN);
    EXPECT_ERRNO(dst.ioctl0(KRING_IOC_RESET), EBUSY) << "a writer into the buffer is enabled";
    ASSERT_EQ(src.ioctl0(KRING_IOC_DISABLE), 0);
    EXPECT_EQ(dst.ioctl0(KRING_IOC_RESET), 0);
    kring_stats st = dst.stats();
    EXPECT_EQ(st.produced, 0u);
}

// One buffer, writers on two CPUs: a per-thread sched channel with wakeup
// records (written on the waker's CPU) redirected into a per-thread timer
// channel of the same thread (written where the thread runs). The buffer's
// write lock keeps every record intact and the accounting exact; a debug
// kernel would warn if two CPUs entered the ring at once.
// What the shared buffer of TwoCpuWritersShareOneBufferIntact holds: its
// SAMPLEs (the sched channel's wakeups among them), LOST counts and
// anything malformed.
struct shared_buffer_tally {
    std::uint64_t layout, sched_id;
    long wakeups = 0, samples = 0, bad = 0;
    std::uint64_t lost = 0;

    void drain(kt::raw_channel& ch) {
        long r = ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            kt::sample x;
            if (h.type == KRING_RECORD_LOST) {
                kring_lost_record l;
                std::memcpy(&l, rec, sizeof(l));
                lost += l.lost;
                return;
            }
            if (h.type != KRING_RECORD_SAMPLE || !kt::parse_sample(rec, layout, x)) {
                bad++;
                return;
            }
            samples++;
            kring_sched_raw r{};
            if (x.id == sched_id && x.raw_size >= sizeof(r)) {
                std::memcpy(&r, x.raw, sizeof(r));
                wakeups += r.kind == KRING_SCHED_WAKEUP;
            }
        });
        if (r < 0)
            bad++;
    }
};

TEST(Security, TwoCpuWritersShareOneBufferIntact) {
    if (!is_root() || kt::online_cpus() < 2)
        GTEST_SKIP() << "needs root and two CPUs";
    constexpr std::uint64_t id_type = kt::sched_type | KRING_SAMPLE_IDENTIFIER;
    int ping[2], pong[2];
    ASSERT_EQ(::pipe(ping), 0);
    ASSERT_EQ(::pipe(pong), 0);
    std::atomic<bool> stop{false};
    std::atomic<int> tid{0};
    // The followed thread, on CPU 0: woken through a pipe from CPU 1.
    std::thread followed([&] {
        kt::pin_to(0);
        tid = kt::gettid_();
        char b;
        while (::read(ping[0], &b, 1) == 1 && b == 'p') {
            spin(2000);
            if (::write(pong[1], "p", 1) != 1)
                break;
        }
    });
    while (!tid)
        ::usleep(1000);
    kt::raw_channel timer, sched;
    ASSERT_EQ(timer.open_dev(), 0);
    kring_attr t = kt::attr(KRING_SOURCE_TIMER, -1, tid);
    t.sample_type = id_type;
    t.config[0] = 2000;
    ASSERT_EQ(timer.configure(t), 0);
    ASSERT_EQ(sched.open_dev(), 0);
    kring_attr s = kt::attr(KRING_SOURCE_SCHED, -1, tid);
    s.sample_type = id_type;
    s.config[0] = KRING_SCHED_CFG_WAKEUPS;
    int e = sched.configure(s);
    if (e == EOPNOTSUPP) {
        ::close(ping[1]);
        followed.join();
        GTEST_SKIP() << "no wakeup tracepoints on this kernel";
    }
    ASSERT_EQ(e, 0);
    ASSERT_EQ(sched.set_output(timer.fd), 0);
    ASSERT_EQ(timer.map_ring(8, true, false), 0);
    const std::uint64_t layout = timer.sample_type();  // id_type and SEQ
    EXPECT_EQ(sched.sample_type(), layout);
    ASSERT_EQ(timer.ioctl0(KRING_IOC_ENABLE), 0);
    ASSERT_EQ(sched.ioctl0(KRING_IOC_ENABLE), 0);
    std::uint64_t sched_id = 0;
    ASSERT_EQ(sched.ioctl_arg(KRING_IOC_ID, &sched_id), 0);
    shared_buffer_tally tally{layout, sched_id};
    auto drain = [&] { tally.drain(timer); };
    // 1.5 s at least, and on until more than 10 wakeups were recorded.
    std::atomic<bool> enough{false};
    std::thread waker([&] {
        kt::pin_to(1);
        char b;
        while (!enough && ::write(ping[1], "p", 1) == 1 && ::read(pong[0], &b, 1) == 1) {}
        stop = true;
    });
    const std::uint64_t t0 = kt::now_ns();
    while (!stop) {
        ::usleep(20000);
        drain();
        const std::uint64_t ran = kt::now_ns() - t0;
        if ((ran >= 1500000000ull && tally.wakeups > 10) ||
            ran >= std::uint64_t(std::chrono::nanoseconds(kt::patience).count()))
            enough = true;
    }
    waker.join();
    ASSERT_EQ(sched.ioctl0(KRING_IOC_DISABLE), 0);
    ASSERT_EQ(timer.ioctl0(KRING_IOC_DISABLE), 0);
    drain();
    ::close(ping[1]);
    followed.join();
    kring_stats st = timer.stats();
    std::printf("two-CPU buffer: %ld samples (%ld wakeups), %llu lost\n", tally.samples,
                tally.wakeups, (unsigned long long)tally.lost);
    EXPECT_EQ(tally.bad, 0);
    EXPECT_GT(tally.wakeups, 10);
    EXPECT_EQ(st.produced, st.written + st.lost_no_space + st.lost_too_big + st.lost_paused);
    EXPECT_EQ(std::uint64_t(tally.samples), st.written);
}

}  // namespace
