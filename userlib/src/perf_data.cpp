// libkring: perf.data files written and read (kring/perf_data.hpp).
//
// The encodings are perf's own (tools/perf/util/header.c, session.c and
// event.h of Linux 6.12; read by Debian's perf 6.1):
//
// - The header is written at create() with the attrs and their ids right
//   behind it and data size 0, as perf record does; finish() rewrites it
//   with the data size and the feature bitmap and appends the feature
//   sections behind the data. A header with data size 0 and no feature
//   bits is a writer that never finished: the reader scans its data section
//   up to the end of the file and reports it truncated.
// - Strings in feature sections are do_write_string()'s: a u32 length (the
//   string with its NUL, padded with NULs to 64 bytes) and the bytes.
// - HEADER_CPU_TOPOLOGY: core siblings, thread siblings, per CPU core_id and
//   socket_id, then the dies (their CPU lists and per CPU die_id). The per-CPU
//   part is written only when there is one entry per available CPU
//   (HEADER_NRCPUS), which is how many perf reads.
// - HEADER_CLOCKID holds one u64; perf reads it as the clock's resolution in
//   ns ("clockid frequency").
// - The kring section (bit 250, above every bit perf knows: perf counts it
//   when it reads the section table and never looks at it):
//	u32 version, u32 clockid, u32 nr_rings, u32 ring_size,
//	per ring: ring_size bytes (cpu, pid, source, pad, then 14 u64 in the
//	          order of kring_ring_info), u32 nr_ranges, u32 range_size,
//	          nr_ranges x range_size bytes (5 u64 each)
//   A reader takes the fields it knows from entries at least as large as
//   version 1's and skips the rest; every count is checked against the
//   section's length.
//
// AUX data. What Debian's perf 6.1 does with it (session.c, auxtrace.c;
// tried on files of this writer):
// - A PERF_RECORD_AUXTRACE record in the data section without a decoder
//   set up: perf_event__process_auxtrace() returns -EINVAL, and perf script
//   and perf report stop: "failed to process type: 71 [Invalid argument]",
//   "Error: failed to process sample", exit status non-zero. Only
//   --no-itrace (itrace_synth_opts.dont_decode) makes them skip it.
// - A PERF_RECORD_AUXTRACE_INFO sets a decoder up by its type; a type perf
//   has no decoder of (kring's tracer, PERF_AUXTRACE_UNKNOWN) is -EINVAL the
//   same way ("failed to process type: 70"). Naming a decoder perf has
//   (intel_bts, s390_cpumsf, ...) would make it decode kring's bytes as its
//   own.
// - HEADER_AUXTRACE is only an index of AUXTRACE records for a decoder; the
//   records are still read from the data section.
// - PERF_RECORD_AUX and PERF_RECORD_ITRACE_START are read and counted
//   without a decoder. An AUX record with PERF_AUX_FLAG_TRUNCATED gives
//   "Warning: AUX data lost N times out of M!", PERF_AUX_FLAG_PARTIAL
//   "AUX data had gaps in it", PERF_AUX_FLAG_COLLISION "AUX data detected
//   collision"; PERF_AUX_FLAG_OVERWRITE (snapshots) is silent.
// So a file keeps perf's records and places but moves the AUXTRACE records:
// PERF_RECORD_AUX and ITRACE_START in the data, and each AUXTRACE record
// (header, payload padded to 8 bytes, exactly as perf record writes it)
// in the feat_kring_auxtrace section, a bit perf does not know and skips,
// with the data position it was written at:
//	u32 version (1), u32 0,
//	per record: u64 data position, the 48-byte record, its payload
// write_auxtrace() keeps them in an unnamed temporary file (next to the
// output) until finish() copies them behind the other sections;
// file::for_each() hands each out after the data records written before
// it. A file with AUXTRACE records in its data section (perf record's)
// reads as well.
#include "kring/perf_data.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <unordered_map>
#include <utility>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

namespace kring::perf_data {

namespace {

constexpr std::uint64_t k_magic = 0x32454c4946524550ULL;  // "PERFILE2"
constexpr std::uint64_t k_magic_swapped = 0x50455246494c4532ULL;
constexpr std::uint64_t k_header_size = 104;
constexpr std::uint64_t k_header_size_v1 = 72;  // without the feature bitmap
constexpr std::size_t k_attr_ver0 = 64;         // PERF_ATTR_SIZE_VER0
constexpr std::size_t k_attr_size = sizeof(perf_event_attr);
constexpr std::size_t k_name_align = 64;  // NAME_ALIGN
constexpr std::size_t k_buffer = 256 * 1024;
constexpr unsigned k_feat_bits = 256;
constexpr std::size_t k_auxtrace_size = 48;  // perf_record_auxtrace
// The kring section's fixed sizes in version 1.
constexpr std::uint32_t k_ring_size_v1 = 16 + 14 * 8;
constexpr std::uint32_t k_range_size_v1 = 5 * 8;

struct file_section {
    std::uint64_t offset = 0, size = 0;
};

struct file_header {
    std::uint64_t magic = 0, size = 0, attr_size = 0;
    file_section attrs, data, event_types;
    std::uint64_t features[4] = {};
};
static_assert(sizeof(file_header) == k_header_size);

std::uint64_t align8(std::uint64_t n) { return (n + 7) & ~std::uint64_t{7}; }

template <class T>
void put(std::vector<std::byte>& out, const T& v) {
    const auto* p = reinterpret_cast<const std::byte*>(&v);
    out.insert(out.end(), p, p + sizeof(T));
}

void put_bytes(std::vector<std::byte>& out, const void* p, std::size_t n) {
    const auto* b = static_cast<const std::byte*>(p);
    out.insert(out.end(), b, b + n);
}

void pad_to(std::vector<std::byte>& out, std::size_t start, std::size_t align) {
    while ((out.size() - start) % align)
        out.push_back(std::byte{0});
}

// do_write_string(): u32 length (NUL included, padded to NAME_ALIGN), bytes.
void put_string(std::vector<std::byte>& out, std::string_view s) {
    const std::uint32_t len =
        static_cast<std::uint32_t>((s.size() + 1 + k_name_align - 1) / k_name_align * k_name_align);
    put(out, len);
    put_bytes(out, s.data(), s.size());
    out.insert(out.end(), len - s.size(), std::byte{0});
}

// A bounds-checked cursor over bytes.
struct cursor {
    const std::byte* p;
    const std::byte* end;

    std::size_t left() const noexcept { return static_cast<std::size_t>(end - p); }
    template <class T>
    bool get(T& v) noexcept {
        if (left() < sizeof(T))
            return false;
        std::memcpy(&v, p, sizeof(T));
        p += sizeof(T);
        return true;
    }
    bool skip(std::uint64_t n) noexcept {
        if (left() < n)
            return false;
        p += n;
        return true;
    }
    // do_read_string(): the string up to its first NUL within len bytes.
    bool string(std::string& s) noexcept {
        std::uint32_t len;
        if (!get(len) || left() < len)
            return false;
        const auto* c = reinterpret_cast<const char*>(p);
        s.assign(c, strnlen(c, len));
        p += len;
        return true;
    }
};

// The sample_id trailer of sample_id_all: TID, TIME, ID, STREAM_ID, CPU,
// IDENTIFIER, in that order (perf_event__synthesize_id_sample()).
void put_sample_id(std::vector<std::byte>& out, const sample_id& id, std::uint64_t st) {
    if (st & PERF_SAMPLE_TID) {
        put(out, id.pid);
        put(out, id.tid);
    }
    if (st & PERF_SAMPLE_TIME)
        put(out, id.time);
    if (st & PERF_SAMPLE_ID)
        put(out, id.id);
    if (st & PERF_SAMPLE_STREAM_ID)
        put(out, id.id);
    if (st & PERF_SAMPLE_CPU) {
        put(out, id.cpu);
        put(out, std::uint32_t{0});
    }
    if (st & PERF_SAMPLE_IDENTIFIER)
        put(out, id.id);
}

std::size_t sample_id_size(std::uint64_t st) {
    std::size_t n = 0;
    for (auto bit : {PERF_SAMPLE_TID, PERF_SAMPLE_TIME, PERF_SAMPLE_ID, PERF_SAMPLE_STREAM_ID,
                     PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER})
        if (st & bit)
            n += 8;
    return n;
}

// A record: header, then what @body appended; size set at the end.
class builder {
public:
    builder(std::uint32_t type, std::uint16_t misc) {
        out_.reserve(64);
        perf_event_header h{type, misc, 0};
        put(out_, h);
    }
    std::vector<std::byte>& out() { return out_; }
    std::vector<std::byte> done() {
        pad_to(out_, 0, 8);
        const auto size = static_cast<std::uint16_t>(
            std::min<std::size_t>(out_.size(), std::numeric_limits<std::uint16_t>::max()));
        std::memcpy(out_.data() + offsetof(perf_event_header, size), &size, sizeof(size));
        return std::move(out_);
    }
    void trailer(const std::optional<sample_id>& id, std::uint64_t st) {
        if (id)
            put_sample_id(out_, *id, st);
    }

private:
    std::vector<std::byte> out_;
};

// A NUL-terminated string padded to 8 bytes, at least one NUL.
void put_cstring(std::vector<std::byte>& out, std::string_view s) {
    const std::size_t start = out.size();
    put_bytes(out, s.data(), s.size());
    out.push_back(std::byte{0});
    pad_to(out, start, 8);
}

perf_event_header header_of(std::span<const std::byte> b) noexcept {
    perf_event_header h{};
    if (b.size() >= sizeof(h))
        std::memcpy(&h, b.data(), sizeof(h));
    return h;
}

// "0-3,6" for a sorted set of CPUs.
std::string cpu_list(const std::vector<unsigned>& cpus) {
    std::string s;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!s.empty())
            s += ',';
        s += std::to_string(cpus[i]);
        if (j > i)
            s += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return s;
}

// The CPUs of a list such as "0-3,6" (nothing for a malformed one).
std::vector<unsigned> parse_cpu_list(const std::string& s) {
    std::vector<unsigned> out;
    std::stringstream in(s);
    std::string part;
    while (std::getline(in, part, ',')) {
        unsigned a = 0, b = 0;
        char dash = 0;
        std::stringstream p(part);
        if (!(p >> a))
            continue;
        if (p >> dash && dash == '-' && p >> b) {
            for (unsigned c = a; c <= b && c - a < 65536; ++c)
                out.push_back(c);
        } else {
            out.push_back(a);
        }
    }
    return out;
}

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

// The encoded body of each feature that @f sets, by bit.
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
                put_string(b, cpu_list(v));
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

// Decodes the feature @bit's section @b into @f; false for a malformed one
// (what was decoded of it may stay).
bool decode_feature(unsigned bit, std::span<const std::byte> b, features& f,
                    std::vector<event_attr>* desc) {
    cursor c{b.data(), b.data() + b.size()};
    switch (bit) {
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
            std::uint32_t n;
            if (!c.get(n))
                return false;
            std::vector<std::string> v;
            for (std::uint32_t i = 0; i < n; ++i) {
                std::string s;
                if (!c.string(s))
                    return false;
                v.push_back(std::move(s));
            }
            f.cmdline = std::move(v);
            return true;
        }
        case feat_event_desc: {
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
        case feat_cpu_topology: {
            auto strings = [&](std::vector<std::string>& out) {
                std::uint32_t n;
                if (!c.get(n))
                    return false;
                out.clear();
                for (std::uint32_t i = 0; i < n; ++i) {
                    std::string s;
                    if (!c.string(s))
                        return false;
                    out.push_back(std::move(s));
                }
                return true;
            };
            if (!strings(f.core_siblings) || !strings(f.thread_siblings))
                return false;
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
            std::vector<std::string> dies;
            if (!strings(dies) || c.left() / 4 < n)
                return false;
            for (auto& e : f.cpus)
                c.get(e.die_id);
            return true;
        }
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

result<void> write_all(int fd, const std::byte* p, std::size_t n, const std::string& path) {
    while (n) {
        ssize_t w = ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return error::from_errno(errno, "write " + path);
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return {};
}

result<void> pwrite_all(int fd, const std::byte* p, std::size_t n, off_t off,
                        const std::string& path) {
    while (n) {
        ssize_t w = ::pwrite(fd, p, n, off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return error::from_errno(errno, "write " + path);
        }
        p += w;
        n -= static_cast<std::size_t>(w);
        off += w;
    }
    return {};
}

error einval(std::string what) { return error(EINVAL, std::move(what)); }

constexpr std::uint32_t k_auxtrace_section_version = 1;

// An unnamed temporary file next to @path (the same file system, so that
// finish() copies it within the kernel), else in /tmp.
result<unique_fd> open_spool(const std::string& path) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    for (const std::string& d : {dir, std::string("/tmp")}) {
        int fd = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0)
            return unique_fd(fd);
        std::string t = d + "/.kring-aux.XXXXXX";
        fd = ::mkostemp(t.data(), O_CLOEXEC);
        if (fd >= 0) {
            ::unlink(t.c_str());
            return unique_fd(fd);
        }
    }
    return error::from_errno(errno, "cannot create a temporary file for the AUX data of " + path);
}

// Appends the @size bytes of @from to @to (at its offset).
result<void> copy_spool(int from, int to, std::uint64_t size, const std::string& path) {
    loff_t in = 0;
    bool plain = false;
    while (in < static_cast<loff_t>(size)) {
        const std::size_t want = static_cast<std::size_t>(
            std::min<std::uint64_t>(size - static_cast<std::uint64_t>(in), 1 << 30));
        if (!plain) {
            ssize_t n = ::copy_file_range(from, &in, to, nullptr, want, 0);
            if (n > 0)
                continue;
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
                errno != EOPNOTSUPP)
                return error::from_errno(errno, "write " + path);
            plain = true;  // n == 0 or no copy_file_range here: read and write
        }
        std::vector<std::byte> buf(std::min<std::size_t>(want, k_buffer));
        ssize_t n = ::pread(from, buf.data(), buf.size(), in);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return error::from_errno(n < 0 ? errno : EIO, "read the AUX data of " + path);
        if (auto r = write_all(to, buf.data(), static_cast<std::size_t>(n), path); !r)
            return r;
        in += n;
    }
    return {};
}

}  // namespace

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

    // /proc/cpuinfo: the first CPU's model name, vendor, family, model,
    // stepping (perf's x86 cpuid string: "GenuineIntel,6,85,4").
    {
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
                // perf squashes runs of spaces of the branding string.
                std::string d;
                for (char ch : val)
                    if (!(ch == ' ' && !d.empty() && d.back() == ' '))
                        d += ch;
                while (!d.empty() && d.back() == ' ')
                    d.pop_back();
                f.cpudesc = d;
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
    {
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
    const std::string sys = "/sys/devices/system/cpu/";
    auto present = parse_cpu_list(read_text(sys + "present"));
    auto online = parse_cpu_list(read_text(sys + "online"));
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

    // Topology, as perf's build_cpu_topology(): the sibling lists of the
    // online CPUs, each once, and core/socket/die ids per CPU (-1 offline).
    std::set<unsigned> on(online.begin(), online.end());
    std::vector<std::string> cores, threads;
    f.cpus.assign(f.nr_cpus_available, cpu_topology_entry{UINT32_MAX, UINT32_MAX, UINT32_MAX});
    for (unsigned cpu = 0; cpu < f.nr_cpus_available; ++cpu) {
        if (!on.count(cpu))
            continue;
        const std::string t = sys + "cpu" + std::to_string(cpu) + "/topology/";
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
    return f;
}

// ---------------------------------------------------------------------------
// record_view

std::uint32_t record_view::type() const noexcept { return header_of(bytes).type; }
std::uint16_t record_view::misc() const noexcept { return header_of(bytes).misc; }

// ---------------------------------------------------------------------------
// writer

struct writer::impl {
    unique_fd fd;
    std::string path;
    std::vector<event_attr> attrs;
    std::vector<std::byte> buf;
    std::uint64_t data_offset = 0;
    std::uint64_t data_size = 0;  // written or buffered
    bool finished = false;
    file_header header;
    unique_fd spool;  // the AUXTRACE records until finish()
    std::uint64_t spool_size = 0;

    result<void> flush() {
        if (buf.empty())
            return {};
        auto r = write_all(fd.get(), buf.data(), buf.size(), path);
        buf.clear();
        return r;
    }
    result<void> append(const void* p, std::size_t n) {
        const auto* b = static_cast<const std::byte*>(p);
        if (buf.size() + n > k_buffer) {
            if (auto r = flush(); !r)
                return r;
            if (n >= k_buffer) {
                data_size += n;
                return write_all(fd.get(), b, n, path);
            }
        }
        buf.insert(buf.end(), b, b + n);
        data_size += n;
        return {};
    }
};

writer::writer(std::unique_ptr<impl> p) : p_(std::move(p)) {}
writer::writer(writer&&) noexcept = default;
writer& writer::operator=(writer&&) noexcept = default;
// A writer dropped without finish() leaves what it buffered in the file
// (best effort): it then reads as truncated, with every record written.
writer::~writer() {
    if (p_ && !p_->finished && p_->fd)
        (void)p_->flush();
}

result<writer> writer::create(const std::string& path, std::vector<event_attr> attrs) {
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return error::from_errno(errno, "cannot create " + path);
    auto p = std::make_unique<impl>();
    p->fd.reset(fd);
    p->path = path;
    p->attrs = std::move(attrs);
    p->buf.reserve(k_buffer);

    // header | attrs (attr + ids section each) | ids | data
    const std::uint64_t file_attr_size = k_attr_size + sizeof(file_section);
    std::vector<std::byte> front;
    file_header& h = p->header;
    h.magic = k_magic;
    h.size = k_header_size;
    h.attr_size = file_attr_size;
    h.attrs = {k_header_size, file_attr_size * p->attrs.size()};
    std::uint64_t ids_at = h.attrs.offset + h.attrs.size;
    front.resize(k_header_size);
    for (auto& a : p->attrs) {
        a.attr.size = k_attr_size;
        put(front, a.attr);
        file_section ids{ids_at, a.ids.size() * 8};
        put(front, ids);
        ids_at += ids.size;
    }
    for (const auto& a : p->attrs)
        for (auto id : a.ids)
            put(front, id);
    h.data = {align8(front.size()), 0};
    pad_to(front, 0, 8);
    std::memcpy(front.data(), &h, sizeof(h));
    p->data_offset = h.data.offset;
    if (auto r = write_all(fd, front.data(), front.size(), path); !r)
        return r.error();
    return writer(std::move(p));
}

result<void> writer::write(std::span<const std::byte> bytes) {
    if (p_->finished)
        return einval("write " + p_->path + ": the file is finished");
    const auto h = header_of(bytes);
    if (bytes.size() < sizeof(h) || h.size != bytes.size() || bytes.size() % 8)
        return einval("write " + p_->path + ": malformed record (size " +
                      std::to_string(bytes.size()) + ", header size " + std::to_string(h.size) +
                      ")");
    if (h.type == record_auxtrace)
        return einval("write " + p_->path + ": AUXTRACE records go through write_auxtrace()");
    return p_->append(bytes.data(), bytes.size());
}

result<void> writer::write_auxtrace(std::span<const std::byte> payload, std::uint64_t offset,
                                    std::uint64_t reference, std::uint32_t idx, std::uint32_t tid,
                                    std::uint32_t cpu) {
    if (p_->finished)
        return einval("write " + p_->path + ": the file is finished");
    if (!p_->spool) {
        auto s = open_spool(p_->path);
        if (!s)
            return s.error();
        p_->spool = std::move(*s);
    }
    // The entry of the feat_kring_auxtrace section: the data position, the
    // record, the payload padded to 8 bytes.
    std::vector<std::byte> rec;
    rec.reserve(8 + k_auxtrace_size);
    put(rec, p_->data_size);
    perf_event_header h{record_auxtrace, 0, static_cast<std::uint16_t>(k_auxtrace_size)};
    put(rec, h);
    put(rec, align8(payload.size()));
    put(rec, offset);
    put(rec, reference);
    put(rec, idx);
    put(rec, tid);
    put(rec, cpu);
    put(rec, std::uint32_t{0});
    const int fd = p_->spool.get();
    static constexpr std::byte zeros[8] = {};
    for (auto part : {std::span<const std::byte>(rec), payload,
                      std::span<const std::byte>(zeros, align8(payload.size()) - payload.size())})
        if (auto r = write_all(fd, part.data(), part.size(), p_->path + " (AUX spool)"); !r)
            return r;
    p_->spool_size += rec.size() + align8(payload.size());
    return {};
}

result<void> writer::finish(const features& f) {
    if (p_->finished)
        return einval("finish " + p_->path + ": already finished");
    if (auto r = p_->flush(); !r)
        return r;
    auto sections = encode_features(f, p_->attrs);
    if (p_->spool_size) {
        auto& b = sections[feat_kring_auxtrace];  // its head; the spool follows
        b.clear();
        put(b, k_auxtrace_section_version);
        put(b, std::uint32_t{0});
    }
    auto body_size = [&](unsigned bit, const std::vector<std::byte>& body) {
        return body.size() + (bit == feat_kring_auxtrace ? p_->spool_size : 0);
    };
    file_header h = p_->header;
    h.data.size = p_->data_size;
    const std::uint64_t feat_at = h.data.offset + h.data.size;
    std::vector<std::byte> tail;
    std::uint64_t body_at = feat_at + sections.size() * sizeof(file_section);
    for (const auto& [bit, body] : sections) {
        h.features[bit / 64] |= std::uint64_t{1} << (bit % 64);
        put(tail, file_section{body_at, body_size(bit, body)});
        body_at += body_size(bit, body);
    }
    const int fd = p_->fd.get();
    for (const auto& [bit, body] : sections) {
        put_bytes(tail, body.data(), body.size());
        if (bit != feat_kring_auxtrace)
            continue;
        if (auto r = write_all(fd, tail.data(), tail.size(), p_->path); !r)
            return r;
        tail.clear();
        if (auto r = copy_spool(p_->spool.get(), fd, p_->spool_size, p_->path); !r)
            return r;
    }
    if (auto r = write_all(fd, tail.data(), tail.size(), p_->path); !r)
        return r;
    if (auto r = pwrite_all(fd, reinterpret_cast<const std::byte*>(&h), sizeof(h), 0, p_->path); !r)
        return r;
    p_->header = h;
    p_->finished = true;
    p_->spool.reset();
    return {};
}

std::uint64_t writer::data_size() const noexcept { return p_->data_size; }
const std::vector<event_attr>& writer::attrs() const noexcept { return p_->attrs; }

// ---------------------------------------------------------------------------
// file

struct file::impl {
    unique_mapping map;
    std::vector<std::byte> owned;
    std::span<const std::byte> d;
    std::vector<event_attr> attrs;
    features feats;
    std::unordered_map<std::uint64_t, std::size_t> by_id;
    std::uint64_t data_begin = 0, data_end = 0;  // the readable records
    std::optional<truncation> trunc;
    // The AUXTRACE records of the feat_kring_auxtrace section.
    struct aux_entry {
        std::uint64_t data_pos, offset, payload;
    };
    std::vector<aux_entry> aux;

    void parse_aux_section(std::uint64_t at, std::uint64_t size);

    result<void> parse(const std::string& name);
    void note(std::uint64_t offset, std::string what) {
        if (!trunc)
            trunc = truncation{offset, std::move(what)};
    }
};

file::file(std::unique_ptr<impl> p) : p_(std::move(p)) {}
file::file(file&&) noexcept = default;
file& file::operator=(file&&) noexcept = default;
file::~file() = default;

result<void> file::impl::parse(const std::string& name) {
    const std::uint64_t fsize = d.size();
    auto at = [&](std::uint64_t off) { return d.data() + off; };
    // [off, off + len) within the file, without overflow.
    auto inside = [&](std::uint64_t off, std::uint64_t len) {
        return off <= fsize && len <= fsize - off;
    };
    if (fsize < k_header_size_v1)
        return einval(name + ": not a perf.data file (" + std::to_string(fsize) + " bytes)");
    file_header h;
    std::memcpy(&h, d.data(), std::min<std::uint64_t>(fsize, sizeof(h)));
    if (h.magic == k_magic_swapped)
        return einval(name + ": a perf.data file of the opposite byte order");
    if (h.magic != k_magic)
        return einval(name + ": not a perf.data file (no PERFILE2 magic)");
    if (h.size == k_header_size_v1)
        std::memset(h.features, 0, sizeof(h.features));
    else if (h.size != k_header_size || fsize < k_header_size)
        return einval(name + ": perf.data header of unknown size " + std::to_string(h.size));
    if (h.attr_size < k_attr_ver0 + sizeof(file_section) || h.attr_size > 4096)
        return einval(name + ": perf.data attr size " + std::to_string(h.attr_size) +
                      " is not one perf writes");
    if (!inside(h.attrs.offset, h.attrs.size) || h.attrs.offset < h.size)
        return einval(name + ": the attrs section lies outside the file");
    if (h.data.offset < h.size)
        return einval(name + ": the data section overlaps the header");

    // attrs and ids
    const std::uint64_t nattrs = h.attrs.size / h.attr_size;
    std::uint64_t total_ids = 0;  // ids do not share bytes: at most fsize / 8
    for (std::uint64_t i = 0; i < nattrs; ++i) {
        const std::byte* a = at(h.attrs.offset + i * h.attr_size);
        event_attr e;
        const std::size_t asz = h.attr_size - sizeof(file_section);
        std::memcpy(&e.attr, a, std::min(asz, k_attr_size));
        file_section ids;
        std::memcpy(&ids, a + asz, sizeof(ids));
        if (!inside(ids.offset, ids.size))
            return einval(name + ": the ids of attr " + std::to_string(i) +
                          " lie outside the file");
        total_ids += ids.size / 8;
        if (total_ids > fsize / 8)
            return einval(name + ": the ids of the attrs overlap");
        e.ids.resize(ids.size / 8);
        if (!e.ids.empty())
            std::memcpy(e.ids.data(), at(ids.offset), e.ids.size() * 8);
        for (auto id : e.ids)
            by_id.emplace(id, attrs.size());
        attrs.push_back(std::move(e));
    }

    // The data section: a placeholder header (the writer did not finish)
    // reads to the end of the file.
    bool features_set = false;
    for (auto w : h.features)
        features_set |= w != 0;
    const bool unfinished = h.data.size == 0 && !features_set;
    data_begin = std::min(h.data.offset, fsize);
    if (unfinished) {
        data_end = fsize;
    } else if (!inside(h.data.offset, h.data.size)) {
        data_end = fsize;
    } else {
        data_end = h.data.offset + h.data.size;
    }
    std::string why_end = unfinished ? " (data size 0: the writer did not finish)" : "";
    if (h.data.offset > fsize)
        note(fsize, "the data section at offset " + std::to_string(h.data.offset) +
                        " starts past the end of the file (" + std::to_string(fsize) + " bytes)");

    // The records: find the last whole one.
    std::uint64_t pos = data_begin;
    while (pos < data_end) {
        const std::uint64_t left = data_end - pos;
        perf_event_header rh;
        if (left < sizeof(rh)) {
            note(pos, "record header cut short at offset " + std::to_string(pos) + why_end);
            break;
        }
        std::memcpy(&rh, at(pos), sizeof(rh));
        if (rh.size == 0) {
            note(pos, "record of size 0 at offset " + std::to_string(pos) + why_end);
            break;
        }
        if (rh.size % 8) {
            note(pos, "record size " + std::to_string(rh.size) +
                          " is not a multiple of 8 at offset " + std::to_string(pos) + why_end);
            break;
        }
        if (rh.size > left) {
            note(pos, "record of size " + std::to_string(rh.size) + " at offset " +
                          std::to_string(pos) + " runs past " +
                          (data_end == fsize ? "the end of the file" : "the data section") +
                          why_end);
            break;
        }
        std::uint64_t whole = rh.size;
        if (rh.type == record_auxtrace) {
            std::uint64_t payload;
            if (rh.size < k_auxtrace_size) {
                note(pos, "AUXTRACE record of size " + std::to_string(rh.size) + " at offset " +
                              std::to_string(pos) + " is too short" + why_end);
                break;
            }
            std::memcpy(&payload, at(pos + 8), 8);
            if (payload > left - rh.size) {
                note(pos, "AUXTRACE payload of " + std::to_string(payload) + " bytes at offset " +
                              std::to_string(pos) + " runs past " +
                              (data_end == fsize ? "the end of the file" : "the data section") +
                              why_end);
                break;
            }
            whole += payload;
        }
        pos += whole;
    }
    if (pos >= data_end) {
        if (unfinished)
            note(pos,
                 "data size 0 at offset " + std::to_string(pos) + ": the writer did not finish");
        else if (!inside(h.data.offset, h.data.size) && h.data.offset <= fsize)
            note(pos, "the data section (" + std::to_string(h.data.size) + " bytes at offset " +
                          std::to_string(h.data.offset) + ") runs past the end of the file (" +
                          std::to_string(fsize) + " bytes)");
    }
    data_end = std::min(pos, data_end);
    if (unfinished || !inside(h.data.offset, h.data.size))
        return {};  // no feature sections to read

    // Feature sections: the table behind the data, one entry per bit.
    const std::uint64_t feat_at = h.data.offset + h.data.size;
    std::uint64_t slot = 0;
    for (unsigned bit = 0; bit < k_feat_bits; ++bit) {
        if (!(h.features[bit / 64] & (std::uint64_t{1} << (bit % 64))))
            continue;
        const std::uint64_t entry = feat_at + slot++ * sizeof(file_section);
        if (!inside(entry, sizeof(file_section))) {
            note(std::min(entry, fsize), "the feature section table is cut short at offset " +
                                             std::to_string(std::min(entry, fsize)));
            break;
        }
        file_section s;
        std::memcpy(&s, at(entry), sizeof(s));
        if (!inside(s.offset, s.size)) {
            note(fsize, "feature section " + std::to_string(bit) + " (" + std::to_string(s.size) +
                            " bytes at offset " + std::to_string(s.offset) +
                            ") runs past the end of the file");
            continue;
        }
        if (bit == feat_kring_auxtrace) {
            parse_aux_section(s.offset, s.size);
            continue;
        }
        std::vector<event_attr> desc;
        if (decode_feature(bit, {at(s.offset), s.size}, feats, &desc) && bit == feat_event_desc) {
            // Names of the events, matched by position.
            for (std::size_t i = 0; i < desc.size() && i < attrs.size(); ++i)
                attrs[i].name = desc[i].name;
        }
    }
    return {};
}

// The section: u32 version, u32 0, then per record its data position
// (u64, nondecreasing), the AUXTRACE record and its payload.
void file::impl::parse_aux_section(std::uint64_t at, std::uint64_t size) {
    cursor c{d.data() + at, d.data() + at + size};
    std::uint32_t version = 0, zero;
    if (!c.get(version) || !c.get(zero) || version != k_auxtrace_section_version)
        return;  // another version's: not read
    std::uint64_t last = 0;
    while (c.left()) {
        const std::uint64_t off = static_cast<std::uint64_t>(c.p - d.data());
        std::uint64_t pos, payload;
        perf_event_header h;
        const bool ok = c.left() >= 8 + k_auxtrace_size && c.get(pos) && pos >= last && c.get(h) &&
                        h.type == record_auxtrace && h.size >= k_auxtrace_size && h.size % 8 == 0 &&
                        c.left() + sizeof(h) >= h.size && c.get(payload) &&
                        c.left() + 16 >= h.size && payload <= c.left() + 16 - h.size;
        if (!ok) {
            note(off, "the AUXTRACE record at offset " + std::to_string(off) +
                          " of the kring AUXTRACE section cannot be read");
            return;
        }
        aux.push_back({pos, off + 8, payload});
        c.p = d.data() + off + 8 + h.size + payload;
        last = pos;
    }
}

result<file> file::open(const std::string& path) {
    auto p = std::make_unique<impl>();
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd)
        return error::from_errno(errno, "cannot open " + path);
    struct stat st;
    if (::fstat(fd.get(), &st) < 0)
        return error::from_errno(errno, "cannot stat " + path);
    if (!S_ISREG(st.st_mode))
        return einval(path + ": not a regular file");
    if (st.st_size > 0) {
        auto m = unique_mapping::map(fd.get(), static_cast<std::size_t>(st.st_size), PROT_READ, 0,
                                     ("cannot map " + path).c_str());
        if (!m)
            return m.error();
        // A private, read-only view is enough; MAP_SHARED is what the
        // mapping owner does.
        p->map = std::move(*m);
        p->d = {static_cast<const std::byte*>(p->map.get()), p->map.size()};
    }
    if (auto r = p->parse(path); !r)
        return r.error();
    return file(std::move(p));
}

result<file> file::from_bytes(std::vector<std::byte> bytes) {
    auto p = std::make_unique<impl>();
    p->owned = std::move(bytes);
    p->d = {p->owned.data(), p->owned.size()};
    if (auto r = p->parse("perf.data bytes"); !r)
        return r.error();
    return file(std::move(p));
}

const std::vector<event_attr>& file::attrs() const noexcept { return p_->attrs; }
const features& file::feats() const noexcept { return p_->feats; }

const event_attr* file::attr_by_id(std::uint64_t id) const noexcept {
    auto it = p_->by_id.find(id);
    return it == p_->by_id.end() ? nullptr : &p_->attrs[it->second];
}

const event_attr* file::attr_of(const record_view& r) const noexcept {
    const auto& attrs = p_->attrs;
    if (attrs.empty())
        return nullptr;
    if (attrs.size() == 1)
        return &attrs[0];
    const std::uint32_t type = r.type();
    if (type >= record_header_attr)
        return nullptr;
    const std::uint64_t st = attrs[0].attr.sample_type;
    if (type == PERF_RECORD_SAMPLE) {
        if (auto s = parse_sample(r, st); s && (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)))
            return attr_by_id(s->id);
        return nullptr;
    }
    if (!attrs[0].attr.sample_id_all)
        return nullptr;
    if (auto s = parse_sample_id(r, st); s && (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)))
        return attr_by_id(s->id);
    return nullptr;
}

result<void> file::for_each(const std::function<void(const record_view&)>& f) const {
    const auto& p = *p_;
    auto aux = p.aux.begin();
    // The AUXTRACE records of the section written before data position @pos.
    auto aux_until = [&](std::uint64_t pos) {
        for (; aux != p.aux.end() && aux->data_pos <= pos; ++aux) {
            perf_event_header h;
            std::memcpy(&h, p.d.data() + aux->offset, sizeof(h));
            record_view r;
            r.offset = aux->offset;
            r.bytes = p.d.subspan(aux->offset, h.size);
            r.auxtrace = p.d.subspan(aux->offset + h.size, aux->payload);
            f(r);
        }
    };
    std::uint64_t pos = p.data_begin;
    // parse() checked every record up to data_end.
    while (pos < p.data_end) {
        aux_until(pos - p.data_begin);
        perf_event_header h;
        std::memcpy(&h, p.d.data() + pos, sizeof(h));
        record_view r;
        r.offset = pos;
        r.bytes = p.d.subspan(pos, h.size);
        std::uint64_t whole = h.size;
        if (h.type == record_auxtrace) {
            std::uint64_t payload;
            std::memcpy(&payload, p.d.data() + pos + 8, 8);
            r.auxtrace = p.d.subspan(pos + h.size, payload);
            whole += payload;
        }
        f(r);
        pos += whole;
    }
    // Those written after the last record; none past a damaged record.
    aux_until(p.data_end - p.data_begin);
    return {};
}

bool file::truncated() const noexcept { return p_->trunc.has_value(); }
const std::optional<truncation>& file::truncation_info() const noexcept { return p_->trunc; }

// ---------------------------------------------------------------------------
// Parsers

std::optional<sample> parse_sample(const record_view& r, std::uint64_t st) noexcept {
    if (r.type() != PERF_RECORD_SAMPLE || r.bytes.size() < 8)
        return std::nullopt;
    cursor c{r.bytes.data() + 8, r.bytes.data() + r.bytes.size()};
    sample s;
    std::uint64_t skip;
    if ((st & PERF_SAMPLE_IDENTIFIER) && !c.get(s.id))
        return std::nullopt;
    if ((st & PERF_SAMPLE_IP) && !c.get(s.ip))
        return std::nullopt;
    if ((st & PERF_SAMPLE_TID) && !(c.get(s.pid) && c.get(s.tid)))
        return std::nullopt;
    if (st & PERF_SAMPLE_TIME) {
        if (!c.get(s.time))
            return std::nullopt;
        s.has_time = true;
    }
    if ((st & PERF_SAMPLE_ADDR) && !c.get(skip))
        return std::nullopt;
    if ((st & PERF_SAMPLE_ID) && !c.get(s.id))
        return std::nullopt;
    if ((st & PERF_SAMPLE_STREAM_ID) && !c.get(skip))
        return std::nullopt;
    if (st & PERF_SAMPLE_CPU) {
        std::uint32_t res;
        if (!(c.get(s.cpu) && c.get(res)))
            return std::nullopt;
    }
    if ((st & PERF_SAMPLE_PERIOD) && !c.get(s.period))
        return std::nullopt;
    if (st & PERF_SAMPLE_READ)
        return s;  // its layout depends on read_format: RAW cannot be found
    if (st & PERF_SAMPLE_CALLCHAIN) {
        std::uint64_t nr;
        if (!c.get(nr) || c.left() / 8 < nr)
            return std::nullopt;
        c.p += nr * 8;
    }
    if (st & PERF_SAMPLE_RAW) {
        std::uint32_t size;
        if (!c.get(size) || c.left() < size)
            return std::nullopt;
        s.raw = {c.p, size};
    }
    return s;
}

std::optional<sample_id> parse_sample_id(const record_view& r, std::uint64_t st) noexcept {
    const std::size_t n = sample_id_size(st);
    if (r.bytes.size() < 8 + n)
        return std::nullopt;
    cursor c{r.bytes.data() + r.bytes.size() - n, r.bytes.data() + r.bytes.size()};
    sample_id s;
    std::uint64_t skip;
    std::uint32_t res;
    if (st & PERF_SAMPLE_TID) {
        c.get(s.pid);
        c.get(s.tid);
    }
    if (st & PERF_SAMPLE_TIME) {
        c.get(s.time);
        s.has_time = true;
    }
    if (st & PERF_SAMPLE_ID)
        c.get(s.id);
    if (st & PERF_SAMPLE_STREAM_ID)
        c.get(skip);
    if (st & PERF_SAMPLE_CPU) {
        c.get(s.cpu);
        c.get(res);
    }
    if (st & PERF_SAMPLE_IDENTIFIER)
        c.get(s.id);
    return s;
}

std::optional<comm_info> parse_comm(const record_view& r) noexcept {
    if (r.type() != PERF_RECORD_COMM || r.bytes.size() < 17)
        return std::nullopt;
    comm_info c;
    std::memcpy(&c.pid, r.bytes.data() + 8, 4);
    std::memcpy(&c.tid, r.bytes.data() + 12, 4);
    const auto* s = reinterpret_cast<const char*>(r.bytes.data() + 16);
    const std::size_t max = r.bytes.size() - 16;
    const std::size_t len = strnlen(s, max);
    if (len == max)
        return std::nullopt;  // no NUL within the record
    try {
        c.comm.assign(s, len);
    } catch (...) {
        return std::nullopt;
    }
    c.exec = r.misc() & PERF_RECORD_MISC_COMM_EXEC;
    return c;
}

std::optional<switch_info> parse_switch(const record_view& r) noexcept {
    const auto t = r.type();
    if (t != PERF_RECORD_SWITCH && t != PERF_RECORD_SWITCH_CPU_WIDE)
        return std::nullopt;
    if (r.bytes.size() < 8 || (t == PERF_RECORD_SWITCH_CPU_WIDE && r.bytes.size() < 16))
        return std::nullopt;
    switch_info s;
    s.out = r.misc() & PERF_RECORD_MISC_SWITCH_OUT;
    s.preempt = r.misc() & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
    if (t == PERF_RECORD_SWITCH_CPU_WIDE) {
        std::memcpy(&s.next_prev_pid, r.bytes.data() + 8, 4);
        std::memcpy(&s.next_prev_tid, r.bytes.data() + 12, 4);
    }
    return s;
}

std::optional<task_info> parse_task(const record_view& r) noexcept {
    const auto t = r.type();
    if ((t != PERF_RECORD_FORK && t != PERF_RECORD_EXIT) || r.bytes.size() < 32)
        return std::nullopt;
    task_info k;
    const std::byte* b = r.bytes.data() + 8;
    std::memcpy(&k.pid, b, 4);
    std::memcpy(&k.ppid, b + 4, 4);
    std::memcpy(&k.tid, b + 8, 4);
    std::memcpy(&k.ptid, b + 12, 4);
    std::memcpy(&k.time, b + 16, 8);
    return k;
}

std::optional<lost_info> parse_lost(const record_view& r) noexcept {
    if (r.type() != PERF_RECORD_LOST || r.bytes.size() < 24)
        return std::nullopt;
    lost_info l;
    std::memcpy(&l.id, r.bytes.data() + 8, 8);
    std::memcpy(&l.lost, r.bytes.data() + 16, 8);
    return l;
}

std::optional<aux_record_info> parse_aux(const record_view& r) noexcept {
    if (r.type() != PERF_RECORD_AUX || r.bytes.size() < 32)
        return std::nullopt;
    aux_record_info a;
    std::memcpy(&a.aux_offset, r.bytes.data() + 8, 8);
    std::memcpy(&a.aux_size, r.bytes.data() + 16, 8);
    std::memcpy(&a.flags, r.bytes.data() + 24, 8);
    return a;
}

std::optional<auxtrace_info> parse_auxtrace(const record_view& r) noexcept {
    if (r.type() != record_auxtrace || r.bytes.size() < k_auxtrace_size)
        return std::nullopt;
    auxtrace_info a;
    const std::byte* b = r.bytes.data() + 8;
    std::memcpy(&a.size, b, 8);
    std::memcpy(&a.offset, b + 8, 8);
    std::memcpy(&a.reference, b + 16, 8);
    std::memcpy(&a.idx, b + 24, 4);
    std::memcpy(&a.tid, b + 28, 4);
    std::memcpy(&a.cpu, b + 32, 4);
    return a;
}

// ---------------------------------------------------------------------------
// Builders

std::vector<std::byte> make_comm(std::uint32_t pid, std::uint32_t tid, std::string_view comm,
                                 bool exec, const std::optional<sample_id>& id,
                                 std::uint64_t sample_type) {
    builder b(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
    put(b.out(), pid);
    put(b.out(), tid);
    put_cstring(b.out(), comm.substr(0, 4096));
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_mmap2(std::uint32_t pid, std::uint32_t tid, std::uint64_t start,
                                  std::uint64_t len, std::uint64_t pgoff, std::uint32_t maj,
                                  std::uint32_t min, std::uint64_t ino, std::uint32_t prot,
                                  std::uint32_t flags, std::string_view filename, bool user,
                                  const std::optional<sample_id>& id, std::uint64_t sample_type) {
    builder b(PERF_RECORD_MMAP2, user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL);
    auto& o = b.out();
    put(o, pid);
    put(o, tid);
    put(o, start);
    put(o, len);
    put(o, pgoff);
    put(o, maj);
    put(o, min);
    put(o, ino);
    put(o, std::uint64_t{0});  // ino_generation
    put(o, prot);
    put(o, flags);
    put_cstring(o, filename.substr(0, 4096));  // PATH_MAX
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_task(std::uint32_t type, const task_info& t,
                                 const std::optional<sample_id>& id, std::uint64_t sample_type) {
    builder b(type, 0);
    auto& o = b.out();
    put(o, t.pid);
    put(o, t.ppid);
    put(o, t.tid);
    put(o, t.ptid);
    put(o, t.time);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_switch_cpu_wide(bool out, bool preempt, std::uint32_t next_prev_pid,
                                            std::uint32_t next_prev_tid, const sample_id& id,
                                            std::uint64_t sample_type) {
    std::uint16_t misc = 0;
    if (out)
        misc |= PERF_RECORD_MISC_SWITCH_OUT;
    if (out && preempt)
        misc |= PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
    builder b(PERF_RECORD_SWITCH_CPU_WIDE, misc);
    put(b.out(), next_prev_pid);
    put(b.out(), next_prev_tid);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_lost(std::uint64_t id, std::uint64_t lost,
                                 const std::optional<sample_id>& sid, std::uint64_t sample_type) {
    builder b(PERF_RECORD_LOST, 0);
    put(b.out(), id);
    put(b.out(), lost);
    b.trailer(sid, sample_type);
    return b.done();
}

std::vector<std::byte> make_aux(std::uint64_t aux_offset, std::uint64_t aux_size,
                                std::uint64_t flags, const std::optional<sample_id>& id,
                                std::uint64_t sample_type) {
    builder b(PERF_RECORD_AUX, 0);
    put(b.out(), aux_offset);
    put(b.out(), aux_size);
    put(b.out(), flags);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_itrace_start(std::uint32_t pid, std::uint32_t tid,
                                         const std::optional<sample_id>& id,
                                         std::uint64_t sample_type) {
    builder b(PERF_RECORD_ITRACE_START, 0);
    put(b.out(), pid);
    put(b.out(), tid);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_sample(std::uint16_t misc, const sample& s, std::uint64_t st) {
    builder b(PERF_RECORD_SAMPLE, misc);
    auto& o = b.out();
    if (st & PERF_SAMPLE_IDENTIFIER)
        put(o, s.id);
    if (st & PERF_SAMPLE_IP)
        put(o, s.ip);
    if (st & PERF_SAMPLE_TID) {
        put(o, s.pid);
        put(o, s.tid);
    }
    if (st & PERF_SAMPLE_TIME)
        put(o, s.time);
    if (st & PERF_SAMPLE_ADDR)
        put(o, std::uint64_t{0});
    if (st & PERF_SAMPLE_ID)
        put(o, s.id);
    if (st & PERF_SAMPLE_STREAM_ID)
        put(o, s.id);
    if (st & PERF_SAMPLE_CPU) {
        put(o, s.cpu);
        put(o, std::uint32_t{0});
    }
    if (st & PERF_SAMPLE_PERIOD)
        put(o, s.period);
    if (st & PERF_SAMPLE_CALLCHAIN)
        put(o, std::uint64_t{0});
    if (st & PERF_SAMPLE_RAW) {
        // u32 size, then the bytes padded so that both end on 8 bytes; the
        // size counts the padding (as the kernel's).
        const std::size_t start = o.size();
        const std::size_t raw = std::min<std::size_t>(s.raw.size(), 60000);
        const auto padded = static_cast<std::uint32_t>(align8(raw + 4) - 4);
        put(o, padded);
        put_bytes(o, s.raw.data(), raw);
        o.insert(o.end(), padded - raw, std::byte{0});
        (void)start;
    }
    return b.done();
}

std::vector<std::byte> make_finished_round() {
    builder b(record_finished_round, 0);
    return b.done();
}

}  // namespace kring::perf_data
