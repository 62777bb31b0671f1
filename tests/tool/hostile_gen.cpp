// The hostile-file corpus of tests/tool/hostile_test.sh, made from code
// (no committed binary files): perf.data files written with libkring's
// perf_data writer and then damaged byte by byte, files whose records are
// well framed but say hostile things, and paths that are not files.
//
//	hostile_gen DIR
//
// writes DIR/<case>.data for every case, DIR/fifo (a FIFO named by MMAP
// records and passed as a recording), and DIR/cases.txt, one line a case:
// "<case> <class>", the class what every viewing command must do with it
// (docs/TESTING.md, "Hostile files"):
//
//   refused   not a recording: exit 1, one line on stderr
//   damaged   read up to the damage: exit 1, one line on stderr
//   unparsed  framed records too short for their type: report exits 1
//             with one line, script and export show them and exit 0 (at
//             most a few warnings, as readable)
//   readable  a whole recording that names hostile things (FIFOs and
//             devices as mapped files, storms of MMAPs, forks and CPUs,
//             tracepoint formats pointing outside their records): exit 0,
//             at most a few "kring: warning:" lines
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include <linux/perf_event.h>

#include "kring/perf_data.hpp"
#include "tp_fixture.hpp"

namespace {
namespace pd = kring::perf_data;
using bytes = std::vector<std::byte>;

constexpr std::uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                             PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                             PERF_SAMPLE_CALLCHAIN;
constexpr std::uint64_t sid_value = 10;
constexpr std::uint64_t text_start = 0x400000, text_len = 0x10000;

[[noreturn]] void die(const std::string& what) {
    std::fprintf(stderr, "hostile_gen: %s\n", what.c_str());
    std::exit(1);
}

bytes slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    bytes b(c.size());
    if (!c.empty())
        std::memcpy(b.data(), c.data(), c.size());
    return b;
}

void spit(const std::string& path, const bytes& b) {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out.write(reinterpret_cast<const char*>(b.data()), std::streamsize(b.size()));
    if (!out)
        die("cannot write " + path);
}

template <class T>
T get(const bytes& b, std::size_t off) {
    T v{};
    if (off + sizeof v > b.size())
        die("offset outside the file");
    std::memcpy(&v, b.data() + off, sizeof v);
    return v;
}
template <class T>
void put(bytes& b, std::size_t off, T v) {
    if (off + sizeof v > b.size())
        die("offset outside the file");
    std::memcpy(b.data() + off, &v, sizeof v);
}

// perf_file_header: magic, size, attr_size, attrs {offset, size}, data
// {offset, size}, event_types, the feature bitmap.
constexpr std::size_t h_attr_size = 16, h_attrs = 24, h_data = 40;

pd::sample_id sid(std::uint32_t pid, std::uint64_t t) {
    pd::sample_id s;
    s.pid = s.tid = pid;
    s.time = t;
    s.has_time = true;
    s.id = sid_value;
    return s;
}

bytes sample(std::uint32_t pid, std::uint64_t ip, std::uint64_t t, std::uint32_t cpu = 0) {
    static const std::uint64_t chain[] = {std::uint64_t(PERF_CONTEXT_USER), 0};
    std::uint64_t c[2] = {chain[0], ip};
    pd::sample s;
    s.id = sid_value;
    s.ip = ip;
    s.pid = s.tid = pid;
    s.time = t;
    s.has_time = true;
    s.cpu = cpu;
    s.period = 1'000'000;
    s.callchain.bytes = std::as_bytes(std::span(c));
    return pd::make_sample(PERF_RECORD_MISC_USER, s, st);
}

bytes mmap2(std::uint32_t pid, std::uint64_t start, std::uint64_t len, const std::string& file,
            std::uint64_t t) {
    return pd::make_mmap2(pid, pid, start, len, 0, 0, 0, 0, 5, 2, file, true, sid(pid, t), st);
}

// A recording of cpu-clock samples: @body writes its records.
void recording(const std::string& path, const std::function<void(pd::writer&)>& body,
               const std::function<void(pd::writer&)>& before = {}) {
    auto a =
        pd::sample_event("cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, st, {sid_value});
    auto w = pd::writer::create(path, {a});
    if (!w)
        die(w.error().message());
    if (before)
        before(*w);
    body(*w);
    if (auto r = w->finish({}); !r)
        die(r.error().message());
}

void write(pd::writer& w, const bytes& r) {
    if (auto ok = w.write(r); !ok)
        die(ok.error().message());
}

// The ordinary recording the damaged cases start from: a process, its
// text mapping, a few samples in it.
void ordinary(pd::writer& w) {
    write(w, pd::make_comm(100, 100, "victim", true, sid(100, 1000), st));
    write(w, mmap2(100, text_start, text_len, "/nonexistent/victim", 1001));
    for (std::uint64_t i = 0; i < 16; i++)
        write(w, sample(100, text_start + 0x100 + i, 2000 + i));
}

// The file offset of the @n-th record of @b's data section.
std::size_t record_at(const bytes& b, int n) {
    std::size_t off = get<std::uint64_t>(b, h_data);
    for (int i = 0; i < n; i++)
        off += get<std::uint16_t>(b, off + 6);
    return off;
}

struct corpus {
    std::string dir;
    std::ofstream list;

    std::string path(const std::string& name) const { return dir + "/" + name + ".data"; }
    void add(const std::string& name, const char* cls) { list << name << ' ' << cls << '\n'; }

    // A copy of the ordinary recording, changed by @edit.
    void damaged(const std::string& name, const char* cls,
                 const std::function<void(bytes&)>& edit) {
        const std::string tmp = path(name);
        recording(tmp, ordinary);
        bytes b = slurp(tmp);
        edit(b);
        spit(tmp, b);
        add(name, cls);
    }
};

void make(corpus& c) {
    // --- not a recording at all
    spit(c.path("empty"), {});
    c.add("empty", "refused");
    {
        std::string t;
        for (int i = 0; i < 64; i++)
            t += "this is not a perf.data file\n";
        bytes b(t.size());
        std::memcpy(b.data(), t.data(), t.size());
        spit(c.path("text"), b);
        c.add("text", "refused");
    }
    c.damaged("header_cut", "refused", [](bytes& b) { b.resize(60); });
    c.damaged("attr_size_bad", "refused", [](bytes& b) { put<std::uint64_t>(b, h_attr_size, 3); });
    c.damaged("attrs_oversized", "refused",
              [](bytes& b) { put<std::uint64_t>(b, h_attrs + 8, std::uint64_t(1) << 40); });
    c.damaged("attrs_past_end", "refused",
              [](bytes& b) { put<std::uint64_t>(b, h_attrs, b.size() + 4096); });
    c.damaged("ids_past_end", "refused", [](bytes& b) {
        // The attr's ids section {offset, size}: the last 16 bytes of its
        // attr_size entry.
        const auto at = get<std::uint64_t>(b, h_attrs) + get<std::uint64_t>(b, h_attr_size) - 16;
        put<std::uint64_t>(b, at, std::uint64_t(1) << 50);
    });
    c.damaged("ids_oversized", "refused", [](bytes& b) {
        const auto at = get<std::uint64_t>(b, h_attrs) + get<std::uint64_t>(b, h_attr_size) - 16;
        put<std::uint64_t>(b, at + 8, ~std::uint64_t(0) - 7);
    });

    // --- records readable up to the damage
    c.damaged("data_oversized", "damaged",
              [](bytes& b) { put<std::uint64_t>(b, h_data + 8, std::uint64_t(1) << 40); });
    c.damaged("data_past_end", "damaged",
              [](bytes& b) { put<std::uint64_t>(b, h_data, b.size() + 4096); });
    c.damaged("record_size_zero", "damaged",
              [](bytes& b) { put<std::uint16_t>(b, record_at(b, 4) + 6, 0); });
    c.damaged("record_size_past_end", "damaged",
              [](bytes& b) { put<std::uint16_t>(b, record_at(b, 4) + 6, 0xfff8); });
    c.damaged("record_size_odd", "damaged",
              [](bytes& b) { put<std::uint16_t>(b, record_at(b, 4) + 6, 13); });
    c.damaged("cut_mid_record", "damaged", [](bytes& b) { b.resize(record_at(b, 6) + 20); });
    c.damaged("features_past_end", "damaged", [](bytes& b) {
        // Every feature bit set: a table of 256 sections past the data.
        for (std::size_t i = 0; i < 32; i++)
            put<std::uint8_t>(b, 72 + i, 0xff);
    });

    // --- framed records too short or too long for their type
    c.damaged("callchain_oversized", "unparsed", [](bytes& b) {
        // The 5th record, a sample: IDENTIFIER IP TID TIME CPU PERIOD, then
        // the call chain's count.
        put<std::uint64_t>(b, record_at(b, 4) + 8 + 48, std::uint64_t(1) << 60);
    });
    c.damaged("mmap_cut", "damaged", [](bytes& b) {
        // The MMAP2 said to be 16 bytes: the rest of it read as records,
        // the first of size 0.
        put<std::uint16_t>(b, record_at(b, 1) + 6, 16);
    });
    recording(c.path("short_records"), [](pd::writer& w) {
        ordinary(w);
        // An MMAP2, a COMM, a FORK and a SAMPLE of 16 bytes each.
        for (std::uint32_t type :
             {std::uint32_t(PERF_RECORD_MMAP2), std::uint32_t(PERF_RECORD_COMM),
              std::uint32_t(PERF_RECORD_FORK), std::uint32_t(PERF_RECORD_SAMPLE)}) {
            bytes r(16, std::byte{0x41});
            put<std::uint32_t>(r, 0, type);
            put<std::uint16_t>(r, 4, 0);
            put<std::uint16_t>(r, 6, 16);
            write(w, r);
        }
    });
    c.add("short_records", "unparsed");

    // --- whole recordings that name hostile things
    recording(c.path("names_unterminated"), [](pd::writer& w) {
        bytes m = mmap2(100, text_start, text_len, std::string(200, 'A'), 1001);
        // The file name over the sample_id trailer too, no NUL anywhere.
        for (std::size_t i = 72; i < m.size(); i++)
            m[i] = std::byte{'B'};
        write(w, m);
        bytes cm = pd::make_comm(100, 100, std::string(64, 'C'), true, std::nullopt, st);
        for (std::size_t i = 16; i < cm.size(); i++)
            cm[i] = std::byte{'C'};
        write(w, cm);
        write(w, sample(100, text_start + 1, 2000));
    });
    c.add("names_unterminated", "unparsed");

    const std::string fifo = c.dir + "/fifo";
    for (auto [name, file] : {std::pair<const char*, std::string>{"mmap_fifo", fifo},
                              {"mmap_dev_zero", "/dev/zero"},
                              {"mmap_dev_null", "/dev/null"},
                              {"mmap_dir", "/"},
                              {"mmap_proc", "/proc/self/mem"}}) {
        const std::string f = file;
        recording(c.path(name), [&f](pd::writer& w) {
            write(w, pd::make_comm(100, 100, "victim", true, sid(100, 1000), st));
            write(w, mmap2(100, text_start, text_len, f, 1001));
            for (std::uint64_t i = 0; i < 4; i++)
                write(w, sample(100, text_start + 0x100 + i, 2000 + i));
        });
        c.add(name, "readable");
    }

    // 80 000 MMAPs of one process (a 8.5 MB file), one sample in the last.
    recording(c.path("mmap_storm"), [](pd::writer& w) {
        constexpr std::uint64_t n = 80'000;
        for (std::uint64_t i = 0; i < n; i++)
            write(w, mmap2(100, 0x10000000 + i * 0x2000, 0x1000, "/nonexistent/m", 1000 + i));
        write(w, sample(100, 0x10000000 + (n - 1) * 0x2000 + 8, 1000 + n));
    });
    c.add("mmap_storm", "readable");

    // 2 000 mappings, then 20 000 children that each map once and are
    // sampled: 4*10^7 copies unbounded.
    recording(c.path("fork_storm"), [](pd::writer& w) {
        for (std::uint64_t i = 0; i < 2000; i++)
            write(w, mmap2(1, 0x10000000 + i * 0x2000, 0x1000, "/nonexistent/p", 1000));
        for (std::uint32_t k = 2; k < 20'002; k++) {
            write(w, pd::make_task(PERF_RECORD_FORK, {k, 1, k, 1, 1000 + k}, sid(k, 1000 + k), st));
            write(w, mmap2(k, 0x8000, 0x1000, "/nonexistent/c", 1000 + k));
            write(w, sample(k, 0x10000008, 1000 + k));
        }
    });
    c.add("fork_storm", "readable");

    // Samples on 20 000 CPUs: a track and a line each.
    recording(c.path("cpu_storm"), [](pd::writer& w) {
        for (std::uint32_t cpu = 0; cpu < 20'000; cpu++)
            write(w, sample(100, text_start, 1000 + cpu, cpu * 7919));
        write(w, sample(100, text_start, 50'000, 0xffffffff));
    });
    c.add("cpu_storm", "readable");

    // A tracepoint whose format puts common_type 10^9 bytes and a field
    // 60000 bytes past the 16-byte RAW payloads of its samples (reading
    // common_type there to find the event runs off the file).
    {
        std::string fmt = tp_fixture::sched_wakeup;
        const auto at = fmt.find("offset:0;");
        fmt.replace(at, 9, "offset:4000;");
        const auto pid_at = fmt.find("offset:24;");
        fmt.replace(pid_at, 10, "offset:60000;");
        auto f = pd::parse_tp_format("sched", fmt);
        if (!f)
            die("the format: " + f.error().message());
        // The text the tracing data carries: libkring's parser refuses a
        // payload of 10^9 bytes, so it is put in after.
        f->text.replace(f->text.find("offset:4000;"), 12, "offset:1000000000;");
        auto w = pd::writer::create(c.path("tp_outside"),
                                    {tp_fixture::attr("sched:sched_wakeup", f->id, 1)});
        if (!w)
            die(w.error().message());
        if (auto r = w->write_tracing_data(
                pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&*f}, 4096));
            !r)
            die(r.error().message());
        for (std::uint64_t i = 0; i < 4; i++) {
            std::byte raw[16]{};
            pd::sample s;
            s.id = 1;
            s.pid = s.tid = 100;
            s.time = 1000 + i;
            s.has_time = true;
            s.period = 1;
            s.raw = raw;
            write(*w, pd::make_sample(PERF_RECORD_MISC_KERNEL, s, tp_fixture::sample_type));
        }
        if (auto r = w->finish({}); !r)
            die(r.error().message());
        c.add("tp_outside", "formats");
    }

    // The tracing data itself cut short: its formats unreadable.
    {
        auto f = pd::parse_tp_format("sched", tp_fixture::sched_wakeup);
        auto w = pd::writer::create(c.path("tracing_data_garbage"),
                                    {tp_fixture::attr("sched:sched_wakeup", f->id, 1)});
        if (!w)
            die(w.error().message());
        bytes td = pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&*f}, 4096);
        td.resize(td.size() / 2);
        for (std::size_t i = td.size() / 2; i < td.size(); i += 7)
            td[i] = std::byte{0xff};
        if (auto r = w->write_tracing_data(td); !r)
            die(r.error().message());
        std::byte raw[64]{};
        pd::sample s;
        s.id = 1;
        s.pid = s.tid = 100;
        s.time = 1000;
        s.has_time = true;
        s.raw = raw;
        write(*w, pd::make_sample(PERF_RECORD_MISC_KERNEL, s, tp_fixture::sample_type));
        if (auto r = w->finish({}); !r)
            die(r.error().message());
        c.add("tracing_data_garbage", "readable");
    }

    // --- paths that are not files, as the recording
    if (::mkfifo(fifo.c_str(), 0600) < 0 && errno != EEXIST)
        die("mkfifo " + fifo + ": " + std::strerror(errno));
    ::unlink(c.path("fifo_as_file").c_str());
    if (::symlink(fifo.c_str(), c.path("fifo_as_file").c_str()) < 0)
        die("symlink: " + std::string(std::strerror(errno)));
    c.add("fifo_as_file", "refused");
    ::unlink(c.path("dev_as_file").c_str());
    if (::symlink("/dev/zero", c.path("dev_as_file").c_str()) < 0)
        die("symlink: " + std::string(std::strerror(errno)));
    c.add("dev_as_file", "refused");
}

}  // namespace

int main(int argc, char** argv) {
    // The figures of docs/TOOL.md: N MMAPs of one process, each a new
    // mapping (disjoint) or all at one place (same: one mapping at a
    // time, a file of the same size), one sample.
    if (argc == 5 && std::string(argv[1]) == "--mmaps") {
        const std::uint64_t n = std::strtoull(argv[2], nullptr, 10);
        const bool same = std::string(argv[3]) == "same";
        recording(argv[4], [&](pd::writer& w) {
            for (std::uint64_t i = 0; i < n; i++)
                write(w, mmap2(100, 0x10000000 + (same ? 0 : i * 0x2000), 0x1000, "/nonexistent/m",
                               1000 + i));
            write(w, sample(100, 0x10000008, 1000 + n));
        });
        return 0;
    }
    if (argc != 2)
        die("usage: hostile_gen DIR | hostile_gen --mmaps N same|disjoint FILE");
    corpus c;
    c.dir = argv[1];
    c.list.open(c.dir + "/cases.txt", std::ios::trunc);
    if (!c.list)
        die("cannot write " + c.dir + "/cases.txt");
    make(c);
    c.list.close();
    return c.list ? 0 : 1;
}
