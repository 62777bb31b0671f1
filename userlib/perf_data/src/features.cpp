// libkring's perf.data component: the feature sections (HEADER_*), the kring section and
// features::from_system().
#include "format.hpp"

#include <fstream>
#include <set>
#include <sstream>

#include <sys/utsname.h>
#include <unistd.h>

#include "kring/cpus.hpp"

namespace kring::perf_data {

using namespace detail;

namespace {

std::string read_text(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    std::string s = ss.str();
    while (!s.empty() && (s.back() == '\n' || s.back() == ' '))
        s.pop_back();
    return s;
}

std::optional<std::uint32_t> read_u32(const std::string& path) {
    std::ifstream in(path);
    long long v;
    if (!(in >> v))
        return std::nullopt;
    return static_cast<std::uint32_t>(v);
}

}  // namespace

namespace detail {

std::map<unsigned, std::vector<std::byte>> encode_features(const features& f,
                                                           const std::vector<event_attr>& attrs) {
    std::map<unsigned, std::vector<std::byte>> s;
    auto str = [&](unsigned bit, const std::string& v) {
        if (!v.empty())
            put_string(s[bit], v);
    };
    str(feat_hostname, f.hostname);
    str(feat_osrelease, f.osrelease);
    str(feat_version, f.version);
    str(feat_arch, f.arch);
    if (f.nr_cpus_available || f.nr_cpus_online) {
        put(s[feat_nrcpus], f.nr_cpus_available);
        put(s[feat_nrcpus], f.nr_cpus_online);
    }
    str(feat_cpudesc, f.cpudesc);
    str(feat_cpuid, f.cpuid);
    if (f.total_mem_kb)
        put(s[feat_total_mem], f.total_mem_kb);
    if (!f.cmdline.empty()) {
        auto& b = s[feat_cmdline];
        put(b, static_cast<std::uint32_t>(f.cmdline.size()));
        for (const auto& a : f.cmdline)
            put_string(b, a);
    }
    {  // always: it names the events
        auto& b = s[feat_event_desc];
        put(b, static_cast<std::uint32_t>(attrs.size()));
        put(b, static_cast<std::uint32_t>(k_attr_size));
        for (const auto& a : attrs) {
            put(b, a.attr);
            put(b, static_cast<std::uint32_t>(a.ids.size()));
            put_string(b, a.name);
            for (auto id : a.ids)
                put(b, id);
        }
    }
    if (!f.core_siblings.empty() || !f.thread_siblings.empty()) {
        auto& b = s[feat_cpu_topology];
        put(b, static_cast<std::uint32_t>(f.core_siblings.size()));
        for (const auto& c : f.core_siblings)
            put_string(b, c);
        put(b, static_cast<std::uint32_t>(f.thread_siblings.size()));
        for (const auto& c : f.thread_siblings)
            put_string(b, c);
        if (!f.cpus.empty() && f.cpus.size() == f.nr_cpus_available) {
            for (const auto& c : f.cpus) {
                put(b, c.core_id);
                put(b, c.socket_id);
            }
            // The dies: one CPU list per (socket, die), then die_id per CPU.
            std::map<std::pair<std::uint32_t, std::uint32_t>, std::vector<unsigned>> dies;
            for (unsigned i = 0; i < f.cpus.size(); ++i)
                if (f.cpus[i].socket_id != UINT32_MAX)
                    dies[{f.cpus[i].socket_id, f.cpus[i].die_id}].push_back(i);
            put(b, static_cast<std::uint32_t>(dies.size()));
            for (const auto& [k, v] : dies)
                put_string(b, format_cpu_list(v));
            for (const auto& c : f.cpus)
                put(b, c.die_id);
        }
    }
    if (f.sample_time) {
        put(s[feat_sample_time], f.sample_time->first);
        put(s[feat_sample_time], f.sample_time->second);
    }
    if (f.clockid)
        put(s[feat_clockid], *f.clockid);
    if (f.kring)
        s[feat_kring] = encode(*f.kring);
    return s;
}

namespace {

// A u32 count and as many strings; nothing when the body ends first.
std::optional<std::vector<std::string>> read_strings(cursor& c) {
    std::uint32_t n;
    if (!c.get(n))
        return std::nullopt;
    std::vector<std::string> v;
    for (std::uint32_t i = 0; i < n; ++i) {
        std::string s;
        if (!c.string(s))
            return std::nullopt;
        v.push_back(std::move(s));
    }
    return v;
}

// EVENT_DESC: each attr, its name and its ids.
bool decode_event_desc(cursor& c, std::vector<event_attr>* desc) {
    std::uint32_t n, sz;
    if (!c.get(n) || !c.get(sz) || sz < k_attr_ver0)
        return false;
    std::vector<event_attr> v;
    for (std::uint32_t i = 0; i < n; ++i) {
        event_attr a;
        std::uint32_t nids;
        if (c.left() < sz)
            return false;
        std::memcpy(&a.attr, c.p, std::min<std::size_t>(sz, k_attr_size));
        c.p += sz;
        if (!c.get(nids) || !c.string(a.name) || c.left() / 8 < nids)
            return false;
        a.ids.resize(nids);
        for (auto& id : a.ids)
            c.get(id);
        v.push_back(std::move(a));
    }
    if (desc)
        *desc = std::move(v);
    return true;
}

// CPU_TOPOLOGY: the sibling lists, then (newer perf) the core and socket
// ids per CPU, then the die lists and ids.
bool decode_cpu_topology(cursor& c, features& f) {
    auto core = read_strings(c);
    if (!core)
        return false;
    f.core_siblings = std::move(*core);
    auto thread = read_strings(c);
    if (!thread)
        return false;
    f.thread_siblings = std::move(*thread);
    if (c.left() == 0)
        return true;
    const std::uint32_t n = f.nr_cpus_available;
    if (c.left() / 8 < n)
        return false;
    std::vector<cpu_topology_entry> cpus(n);
    for (auto& e : cpus) {
        c.get(e.core_id);
        c.get(e.socket_id);
    }
    f.cpus = std::move(cpus);
    if (c.left() == 0)
        return true;
    if (!read_strings(c) || c.left() / 4 < n)
        return false;
    for (auto& e : f.cpus)
        c.get(e.die_id);
    return true;
}

}  // namespace

bool decode_feature(unsigned bit, std::span<const std::byte> b, features& f,
                    std::vector<event_attr>* desc) {
    cursor c{b.data(), b.data() + b.size()};
    switch (bit) {
        case feat_tracing_data:
            f.tracing_data.assign(b.begin(), b.end());
            return true;
        case feat_hostname:
            return c.string(f.hostname);
        case feat_osrelease:
            return c.string(f.osrelease);
        case feat_version:
            return c.string(f.version);
        case feat_arch:
            return c.string(f.arch);
        case feat_cpudesc:
            return c.string(f.cpudesc);
        case feat_cpuid:
            return c.string(f.cpuid);
        case feat_nrcpus:
            return c.get(f.nr_cpus_available) && c.get(f.nr_cpus_online);
        case feat_total_mem:
            return c.get(f.total_mem_kb);
        case feat_cmdline: {
            auto v = read_strings(c);
            if (!v)
                return false;
            f.cmdline = std::move(*v);
            return true;
        }
        case feat_event_desc:
            return decode_event_desc(c, desc);
        case feat_cpu_topology:
            return decode_cpu_topology(c, f);
        case feat_sample_time: {
            std::uint64_t a, z;
            if (!c.get(a) || !c.get(z))
                return false;
            f.sample_time = std::make_pair(a, z);
            return true;
        }
        case feat_clockid: {
            std::uint64_t v;
            if (!c.get(v))
                return false;
            f.clockid = v;
            return true;
        }
        case feat_kring:
            f.kring = decode_kring_section(b);
            return f.kring.has_value();
        default:
            return true;  // not known here: skipped
    }
}

}  // namespace detail

// ---------------------------------------------------------------------------
// The kring section.

std::vector<std::byte> encode(const kring_section& s) {
    std::vector<std::byte> b;
    put(b, s.version);
    put(b, s.clockid);
    put(b, static_cast<std::uint32_t>(s.rings.size()));
    put(b, k_ring_size_v1);
    for (const auto& r : s.rings) {
        put(b, r.cpu);
        put(b, r.pid);
        put(b, r.source);
        put(b, std::uint32_t{0});
        for (auto v : {r.id, r.produced, r.written, r.lost_no_space, r.lost_too_big, r.lost_paused,
                       r.lost_overwritten, r.throttled, r.wakeups, r.nested, r.aux_bytes,
                       r.aux_records, r.aux_truncated, r.aux_snapshots})
            put(b, v);
        put(b, static_cast<std::uint32_t>(r.lost_ranges.size()));
        put(b, k_range_size_v1);
        for (const auto& l : r.lost_ranges)
            for (auto v : {l.lost, l.first_seq, l.last_seq, l.first_time, l.last_time})
                put(b, v);
    }
    pad_to(b, 0, 8);
    return b;
}

std::optional<kring_section> decode_kring_section(std::span<const std::byte> bytes) {
    cursor c{bytes.data(), bytes.data() + bytes.size()};
    kring_section s;
    std::uint32_t nr, ring_size;
    if (!c.get(s.version) || !c.get(s.clockid) || !c.get(nr) || !c.get(ring_size))
        return std::nullopt;
    if (s.version < 1 || ring_size < k_ring_size_v1)
        return std::nullopt;
    // Each ring takes at least ring_size + 8 bytes: no allocation beyond
    // what the bytes can hold.
    if (c.left() / (std::uint64_t{ring_size} + 8) < nr)
        return std::nullopt;
    s.rings.reserve(nr);
    for (std::uint32_t i = 0; i < nr; ++i) {
        kring_ring_info r;
        const std::byte* start = c.p;
        std::uint32_t pad = 0;
        c.get(r.cpu);
        c.get(r.pid);
        c.get(r.source);
        c.get(pad);
        for (auto* v : {&r.id, &r.produced, &r.written, &r.lost_no_space, &r.lost_too_big,
                        &r.lost_paused, &r.lost_overwritten, &r.throttled, &r.wakeups, &r.nested,
                        &r.aux_bytes, &r.aux_records, &r.aux_truncated, &r.aux_snapshots})
            c.get(*v);
        c.p = start + ring_size;  // checked above: ring_size + 8 bytes are there
        std::uint32_t nranges = 0, range_size = 0;
        c.get(nranges);
        c.get(range_size);
        if (range_size < k_range_size_v1 || c.left() / range_size < nranges)
            return std::nullopt;
        r.lost_ranges.resize(nranges);
        for (auto& l : r.lost_ranges) {
            const std::byte* rs = c.p;
            for (auto* v : {&l.lost, &l.first_seq, &l.last_seq, &l.first_time, &l.last_time})
                c.get(*v);
            c.p = rs + range_size;
        }
        s.rings.push_back(std::move(r));
        if (i + 1 < nr && c.left() / (std::uint64_t{ring_size} + 8) < nr - i - 1)
            return std::nullopt;
    }
    return s;
}

// ---------------------------------------------------------------------------
// features::from_system

namespace {

// perf squashes runs of spaces of the branding string, and trailing ones.
std::string squash_spaces(const std::string& val) {
    std::string d;
    for (char ch : val)
        if (!(ch == ' ' && !d.empty() && d.back() == ' '))
            d += ch;
    while (!d.empty() && d.back() == ' ')
        d.pop_back();
    return d;
}

// /proc/cpuinfo: the first CPU's model name, vendor, family, model,
// stepping (perf's x86 cpuid string: "GenuineIntel,6,85,4").
void read_cpuinfo(features& f) {
    std::ifstream in("/proc/cpuinfo");
    std::string line, vendor, family, model, stepping;
    while (std::getline(in, line)) {
        if (line.empty() && !f.cpudesc.empty())
            break;
        auto colon = line.find(':');
        if (colon == std::string::npos)
            continue;
        std::string key = line.substr(0, colon);
        while (!key.empty() && (key.back() == ' ' || key.back() == '\t'))
            key.pop_back();
        std::string val = line.substr(colon + 1);
        if (!val.empty() && val.front() == ' ')
            val.erase(0, 1);
        if (key == "model name" && f.cpudesc.empty()) {
            f.cpudesc = squash_spaces(val);
        } else if (key == "vendor_id" && vendor.empty()) {
            vendor = val;
        } else if (key == "cpu family" && family.empty()) {
            family = val;
        } else if (key == "model" && model.empty()) {
            model = val;
        } else if (key == "stepping" && stepping.empty()) {
            stepping = val;
        }
    }
    if (!vendor.empty() && !family.empty() && !model.empty())
        f.cpuid = vendor + "," + family + "," + model + "," + stepping;
}

void read_meminfo(features& f) {
    std::ifstream in("/proc/meminfo");
    std::string key;
    std::uint64_t kb;
    while (in >> key >> kb) {
        if (key == "MemTotal:") {
            f.total_mem_kb = kb;
            break;
        }
        in.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
    }
}

// A file of the kernel's CPU directory.
std::string sys_cpu(const std::string& rest) { return "/sys/devices/system/cpu/" + rest; }

// The CPU counts; the online CPUs.
std::vector<unsigned> read_cpu_counts(features& f) {
    auto present = parse_cpu_list(read_text(sys_cpu("present"))).value_or(std::vector<unsigned>{});
    auto online = parse_cpu_list(read_text(sys_cpu("online"))).value_or(std::vector<unsigned>{});
    if (present.empty()) {
        long n = ::sysconf(_SC_NPROCESSORS_CONF);
        for (long i = 0; i < n; ++i)
            present.push_back(static_cast<unsigned>(i));
    }
    if (online.empty())
        online = present;
    if (!present.empty())
        f.nr_cpus_available = *std::max_element(present.begin(), present.end()) + 1;
    f.nr_cpus_online = static_cast<std::uint32_t>(online.size());
    return online;
}

// Topology, as perf's build_cpu_topology(): the sibling lists of the
// online CPUs, each once, and core/socket/die ids per CPU (-1 offline).
void read_topology(features& f, const std::vector<unsigned>& online) {
    std::set<unsigned> on(online.begin(), online.end());
    std::vector<std::string> cores, threads;
    f.cpus.assign(f.nr_cpus_available, cpu_topology_entry{UINT32_MAX, UINT32_MAX, UINT32_MAX});
    for (unsigned cpu = 0; cpu < f.nr_cpus_available; ++cpu) {
        if (!on.count(cpu))
            continue;
        const std::string t = sys_cpu("cpu" + std::to_string(cpu) + "/topology/");
        std::string core = read_text(t + "package_cpus_list");
        if (core.empty())
            core = read_text(t + "core_siblings_list");
        std::string thread = read_text(t + "core_cpus_list");
        if (thread.empty())
            thread = read_text(t + "thread_siblings_list");
        if (!core.empty() && std::find(cores.begin(), cores.end(), core) == cores.end())
            cores.push_back(core);
        if (!thread.empty() && std::find(threads.begin(), threads.end(), thread) == threads.end())
            threads.push_back(thread);
        auto& e = f.cpus[cpu];
        e.core_id = read_u32(t + "core_id").value_or(UINT32_MAX);
        e.socket_id = read_u32(t + "physical_package_id").value_or(UINT32_MAX);
        e.die_id = read_u32(t + "die_id").value_or(0);
    }
    f.core_siblings = std::move(cores);
    f.thread_siblings = std::move(threads);
}

}  // namespace

features features::from_system(int argc, const char* const* argv) {
    features f;
    struct utsname u;
    if (::uname(&u) == 0) {
        f.hostname = u.nodename;
        f.osrelease = u.release;
        f.arch = u.machine;
    }
    f.version = "kring";
    for (int i = 0; i < argc && argv && argv[i]; ++i)
        f.cmdline.emplace_back(argv[i]);
    read_cpuinfo(f);
    read_meminfo(f);
    read_topology(f, read_cpu_counts(f));
    return f;
}

}  // namespace kring::perf_data
