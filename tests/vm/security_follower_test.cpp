// In the guest: what a follower learns of the tasks it does not follow
// (docs/SECURITY.md). An unprivileged follower sees no other task, no field
// of any of its records tells anything of one, nor does its floor time
// their switches; root, the control, sees them.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "security.hpp"

using kt::exited_ok;
using kt::follow_in_child;
using kt::followed_run;
using kt::is_root;
using kt::spin;

namespace {

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

}  // namespace
