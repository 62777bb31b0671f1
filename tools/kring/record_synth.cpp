// kring record's synthesis from /proc (record_synth.hpp).
#include "record_synth.hpp"

#include <dirent.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include <fmt/core.h>

#include "record_convert.hpp"

namespace kring_tool::record {

std::string read_small(const std::string& path) {
    std::ifstream f(path);
    std::string s;
    std::getline(f, s, '\0');
    while (!s.empty() && (s.back() == '\n' || s.back() == '\0'))
        s.pop_back();
    return s;
}

std::vector<int> list_numeric(const std::string& dir) {
    std::vector<int> v;
    DIR* d = ::opendir(dir.c_str());
    if (!d)
        return v;
    while (auto* e = ::readdir(d)) {
        char* end = nullptr;
        long n = std::strtol(e->d_name, &end, 10);
        if (*e->d_name && !*end && n > 0)
            v.push_back(int(n));
    }
    ::closedir(d);
    std::sort(v.begin(), v.end());
    return v;
}

// The process @pid: COMM of each thread, MMAP2 of each executable mapping
// (perf record's default), at @time (0: before everything).
kring::result<void> synth_process(synth_out& o, int pid, std::uint64_t time, bool exec) {
    std::string base = fmt::format("/proc/{}", pid);
    auto tids = list_numeric(base + "/task");
    if (tids.empty())
        return {};  // gone meanwhile
    for (int tid : tids) {
        std::string comm = read_small(fmt::format("{}/task/{}/comm", base, tid));
        if (comm.empty())
            continue;
        pd::sample_id sid;
        sid.pid = std::uint32_t(pid);
        sid.tid = std::uint32_t(tid);
        sid.time = time;
        sid.id = o.id;
        if (auto r = o.put(pd::make_comm(pid, tid, comm, exec && tid == pid, sid, st_trailer)); !r)
            return r;
    }
    std::ifstream maps(base + "/maps");
    std::string line;
    while (std::getline(maps, line)) {
        // start-end perms offset maj:min inode   path
        unsigned long long start, end, pgoff, ino;
        unsigned maj, min;
        char perms[8] = {};
        int path_at = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &start, &end, perms,
                        &pgoff, &maj, &min, &ino, &path_at) < 7)
            continue;
        if (perms[2] != 'x')
            continue;
        std::string path = path_at > 0 ? line.substr(std::size_t(path_at)) : std::string();
        if (path.empty())
            path = "//anon";
        std::uint32_t prot =
            (perms[0] == 'r' ? PROT_READ : 0) | (perms[1] == 'w' ? PROT_WRITE : 0) | PROT_EXEC;
        std::uint32_t flags = perms[3] == 's' ? MAP_SHARED : MAP_PRIVATE;
        pd::sample_id sid;
        sid.pid = std::uint32_t(pid);
        sid.tid = std::uint32_t(pid);
        sid.time = time;
        sid.id = o.id;
        if (auto r = o.put(pd::make_mmap2(pid, pid, start, end - start, pgoff, maj, min, ino, prot,
                                          flags, path, true, sid, st_trailer));
            !r)
            return r;
    }
    return {};
}

// The kernel's mapping as perf record synthesizes it: a MMAP of
// "[kernel.kallsyms]<ref>" from the reference symbol to the end of the
// address space with pgoff = its address, which gives perf the relocation
// reference it needs to resolve kernel samples (perf report --kallsyms with
// the recording machine's /proc/kallsyms). The reference is _text, or
// _stext where kallsyms has no _text (arm64), perf's own order. Nothing
// when the addresses are hidden (kptr_restrict): perf then says it cannot
// resolve kernel samples.
kring::result<void> synth_kernel(synth_out& o) {
    static constexpr const char* refs[] = {"_text", "_stext"};
    std::ifstream f("/proc/kallsyms");
    std::string line;
    unsigned long long found[std::size(refs)] = {};
    while (std::getline(f, line) && !found[0]) {
        char type = 0;
        char name[128] = {};
        unsigned long long addr = 0;
        if (std::sscanf(line.c_str(), "%llx %c %127s", &addr, &type, name) != 3)
            continue;
        for (std::size_t i = 0; i < std::size(refs); i++)
            if (!found[i] && std::strcmp(name, refs[i]) == 0)
                found[i] = addr;
    }
    std::size_t ref = found[0] ? 0 : 1;
    unsigned long long text = found[ref];
    if (!text)
        return {};
    pd::sample_id sid;
    sid.pid = std::uint32_t(-1);
    sid.tid = 0;
    sid.id = o.id;
    return o.put(pd::make_mmap2(
        std::uint32_t(-1), 0, text, ~0ull - text, text, 0, 0, 0, PROT_READ | PROT_EXEC, MAP_PRIVATE,
        std::string("[kernel.kallsyms]") + refs[ref], false, sid, st_trailer));
}

}  // namespace kring_tool::record
