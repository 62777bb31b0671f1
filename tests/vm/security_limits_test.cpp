// In the guest: what one user may hold (docs/SECURITY.md). A user's
// channels and locked memory are bounded, also through the user namespaces
// it owns.
#include <fcntl.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "capture.hpp"
#include "security.hpp"

using kt::exited_ok;
using kt::is_root;

namespace {

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

}  // namespace
