// tracefs: its root, its tracepoints and their files (tracefs.hpp).
#include "tracefs.hpp"

#include <dirent.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>

#include <fmt/core.h>

namespace kring_tool::tracefs {

namespace {

constexpr std::size_t file_max = 1u << 20;

// 0: @dir has events/; else the errno of looking (ENOENT: not mounted).
int has_events(const std::string& dir) {
    struct stat st;
    if (::stat((dir + "/events").c_str(), &st) == 0)
        return S_ISDIR(st.st_mode) ? 0 : ENOTDIR;
    return errno;
}

kring::error not_readable(const std::string& dir) {
    return kring::error(EACCES, fmt::format("cannot read {}/events: {} (tracefs is root's: run "
                                            "as root, or mount it with gid=GROUP and "
                                            "mode=0750 for a group of yours)",
                                            dir, std::strerror(EACCES)));
}

// The names of @dir's subdirectories, sorted; an error naming @dir.
kring::result<std::vector<std::string>> subdirs(const std::string& dir) {
    std::unique_ptr<DIR, int (*)(DIR*)> d(::opendir(dir.c_str()), ::closedir);
    if (!d)
        return kring::error::from_errno(errno, "read " + dir);
    std::vector<std::string> names;
    while (dirent* e = ::readdir(d.get())) {
        if (e->d_name[0] == '.')
            continue;
        struct stat st;
        if (e->d_type == DT_DIR ||
            (e->d_type == DT_UNKNOWN && ::stat((dir + "/" + e->d_name).c_str(), &st) == 0 &&
             S_ISDIR(st.st_mode)))
            names.emplace_back(e->d_name);
    }
    std::sort(names.begin(), names.end());
    return names;
}

}  // namespace

kring::result<std::string> root(bool may_mount) {
    if (const char* env = std::getenv("KRING_TRACEFS"); env && *env) {
        int e = has_events(env);
        if (e == EACCES)
            return not_readable(env);
        if (e)
            return kring::error(ENODEV, fmt::format("KRING_TRACEFS={}: no events/ directory "
                                                    "there ({})",
                                                    env, std::strerror(e)));
        return std::string(env);
    }
    bool denied = false;
    for (const char* d : {default_root, debugfs_root}) {
        int e = has_events(d);
        if (e == 0)
            return std::string(d);
        denied |= e == EACCES;
    }
    if (denied)
        return not_readable(default_root);
    if (may_mount && ::geteuid() == 0) {
        if (::mount("nodev", default_root, "tracefs", 0, nullptr) == 0 &&
            has_events(default_root) == 0)
            return std::string(default_root);
        return kring::error::from_errno(
            errno,
            fmt::format("tracefs is not mounted and mounting it on {} failed", default_root));
    }
    return kring::error(ENODEV, fmt::format("tracefs is not mounted: as root, mount -t tracefs "
                                            "nodev {} (kring mounts it itself when run as root)",
                                            default_root));
}

kring::result<std::vector<tracepoint_name>> list(const std::string& root) {
    const std::string events = root + "/events";
    auto systems = subdirs(events);
    if (!systems)
        return systems.error().code() == EACCES ? not_readable(root) : systems.error();
    std::vector<tracepoint_name> all;
    for (const auto& s : *systems) {
        auto names = subdirs(events + "/" + s);
        if (!names)
            continue;  // a system this user cannot read: none of its events
        for (const auto& n : *names)
            if (::access((events + "/" + s + "/" + n + "/id").c_str(), F_OK) == 0)
                all.push_back({s, n});
    }
    return all;
}

kring::result<std::uint32_t> read_id(const std::string& root, const tracepoint_name& t) {
    const std::string path = root + "/events/" + t.system + "/" + t.name + "/id";
    auto text = read_file(path);
    if (!text)
        return text.error();
    char* end = nullptr;
    errno = 0;
    unsigned long long v = std::strtoull(text->c_str(), &end, 10);
    if (end == text->c_str() || errno || v > 0xffffffffull || (*end && *end != '\n'))
        return kring::error(EINVAL, path + ": not a tracepoint id");
    return std::uint32_t(v);
}

kring::result<std::string> read_file(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return kring::error::from_errno(errno ? errno : ENOENT, "read " + path);
    std::string s;
    char buf[4096];
    while (f.read(buf, sizeof(buf)) || f.gcount() > 0) {
        s.append(buf, std::size_t(f.gcount()));
        if (s.size() > file_max)
            return kring::error(EFBIG, "read " + path + ": larger than 1 MiB");
    }
    if (f.bad())
        return kring::error::from_errno(EIO, "read " + path);
    return s;
}

}  // namespace kring_tool::tracefs
