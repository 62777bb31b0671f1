// The perf.data component's writer (userlib/perf_data/src/writer.cpp), read
// by Debian's perf: a recording shaped like kring's in a file and in perf's
// pipe format (perf script, perf report), AUX data with its payloads, and
// an event declared after the file was created.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "kring/perf_data.hpp"
#include "perf_data_util.hpp"
#include "tp_fixture.hpp"

namespace pd = kring::perf_data;
namespace fs = std::filesystem;
using namespace kt;  // perf_data_util.hpp
constexpr std::uint64_t k_tp_type = tp_fixture::sample_type;
using tp_fixture::attr;

// Two functions of this binary that the samples of the perf test land in.
extern "C" __attribute__((noinline)) int kring_perf_data_hot(int n) {
    int s = 0;
    for (int i = 0; i < n; i++)
        s += i * i;
    asm volatile("" : "+r"(s));
    return s;
}
extern "C" __attribute__((noinline)) int kring_perf_data_cold(int n) {
    int s = 1;
    for (int i = 0; i < n; i++)
        s ^= i;
    asm volatile("" : "+r"(s));
    return s;
}

namespace {

// The executable mapping of this binary (/proc/self/maps).
struct exe_map {
    std::uint64_t start = 0, end = 0, pgoff = 0, ino = 0;
    unsigned maj = 0, min = 0;
    std::string path;
};

std::optional<exe_map> find_exe_map() {
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/self/exe", ec).string();
    if (ec)
        return std::nullopt;
    std::ifstream in("/proc/self/maps");
    std::string line;
    const auto hot = reinterpret_cast<std::uint64_t>(&kring_perf_data_hot);
    while (std::getline(in, line)) {
        exe_map m;
        char perms[8] = {};
        unsigned long long s, e, off, ino;
        int pos = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx %7s %llx %x:%x %llu %n", &s, &e, perms, &off,
                        &m.maj, &m.min, &ino, &pos) < 7)
            continue;
        m.start = s;
        m.end = e;
        m.pgoff = off;
        m.ino = ino;
        m.path = line.substr(static_cast<std::size_t>(pos));
        if (perms[2] == 'x' && m.path == exe && hot >= m.start && hot < m.end)
            return m;
    }
    return std::nullopt;
}

// A file shaped like a kring recording (docs/TOOL.md): cpu-clock samples
// in this binary's functions, two tasks switching on two CPUs, fork and
// exit, a LOST record, rounds, the kring section.
struct recording {
    std::size_t switches = 0, samples = 0, hot = 0, lost = 0;
};

// @pipe: perf's pipe format (create_pipe() writing to the file, which it
// never seeks: what a pipe would carry).
recording write_recording(const std::string& path, const exe_map& m, bool with_lost,
                          bool pipe = false) {
    recording rec;
    const std::uint32_t pid = static_cast<std::uint32_t>(::getpid());
    const std::uint32_t other = 4242;
    std::vector<pd::event_attr> attrs = {clock_attr({10, 11}), sched_attr({20, 21})};
    kring::result<pd::writer> w = kring::error(EBADF, "no output");
    if (pipe) {
        kring::unique_fd fd(::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        EXPECT_TRUE(fd) << path;
        w = pd::writer::create_pipe(fd.get(), std::move(attrs));
    } else {
        w = pd::writer::create(path, std::move(attrs));
    }
    EXPECT_TRUE(w) << w.error().message();
    std::uint64_t t = 1000000000;
    auto put = [&](const std::vector<std::byte>& b) { EXPECT_TRUE(w->write(b)); };
    put(pd::make_comm(pid, pid, "pd-test-a", false, sid(pid, pid, 0, t, 20), k_sched_type));
    put(pd::make_mmap2(pid, pid, m.start, m.end - m.start, m.pgoff, m.maj, m.min, m.ino,
                       PROT_READ | PROT_EXEC, MAP_PRIVATE, m.path, true, sid(pid, pid, 0, t, 20),
                       k_sched_type));
    put(pd::make_task(PERF_RECORD_FORK, {other, pid, other, pid, t + 10},
                      sid(other, other, 1, t + 10, 21), k_sched_type));
    put(pd::make_comm(other, other, "pd-test-b", false, sid(other, other, 1, t + 11, 21),
                      k_sched_type));
    put(pd::make_finished_round());
    const auto hot = reinterpret_cast<std::uint64_t>(&kring_perf_data_hot) + 4;
    const auto cold = reinterpret_cast<std::uint64_t>(&kring_perf_data_cold) + 4;
    t += 1000;
    for (int round = 0; round < 6; round++) {
        for (int i = 0; i < 8; i++) {
            t += 1000;
            pd::sample s;
            const bool on_hot = i % 4 != 3;
            s.id = on_hot ? 10 : 11;
            s.cpu = on_hot ? 0 : 1;
            s.ip = on_hot ? hot : cold;
            s.pid = on_hot ? pid : other;
            s.tid = s.pid;
            s.time = t;
            s.period = 1000000;
            put(pd::make_sample(PERF_RECORD_MISC_USER, s, k_clock_type));
            rec.samples++;
            rec.hot += on_hot;
        }
        // A switch pair on each CPU: the two tasks change places.
        for (std::uint32_t cpu = 0; cpu < 2; cpu++) {
            const std::uint32_t prev = (cpu + round) % 2 ? other : pid;
            const std::uint32_t next = prev == pid ? other : pid;
            t += 100;
            put(pd::make_switch_cpu_wide(true, round % 2 == 0, next, next,
                                         sid(prev, prev, cpu, t, 20 + cpu), k_sched_type));
            t += 100;
            put(pd::make_switch_cpu_wide(false, false, prev, prev,
                                         sid(next, next, cpu, t, 20 + cpu), k_sched_type));
            rec.switches += 2;
        }
        if (with_lost && round == 3) {
            put(pd::make_lost(21, 5, sid(0, 0, 1, t + 1, 21), k_sched_type));
            rec.lost++;
        }
        put(pd::make_finished_round());
    }
    t += 1000;
    put(pd::make_task(PERF_RECORD_EXIT, {other, pid, other, pid, t}, sid(other, other, 1, t, 21),
                      k_sched_type));
    put(pd::make_finished_round());
    auto f = test_features();
    const char* argv[] = {"kring", "record", "-a", "-e", "sched", "-e", "timer"};
    auto sys = pd::features::from_system(7, argv);
    f.hostname = sys.hostname;
    f.osrelease = sys.osrelease;
    f.arch = sys.arch;
    f.cpudesc = sys.cpudesc;
    f.cpuid = sys.cpuid;
    f.nr_cpus_available = sys.nr_cpus_available;
    f.nr_cpus_online = sys.nr_cpus_online;
    f.core_siblings = sys.core_siblings;
    f.thread_siblings = sys.thread_siblings;
    f.cpus = sys.cpus;
    f.cmdline = sys.cmdline;
    f.sample_time = std::make_pair(std::uint64_t{1000000000}, t);
    EXPECT_TRUE(w->finish(f));
    return rec;
}

std::string fmt_pct(double p) {
    char b[32];
    std::snprintf(b, sizeof(b), "%.2f%%", p);
    return b;
}

TEST(PerfData, PerfScriptAndReportReadIt) {
    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "perf is not installed (Debian: linux-perf; tools/dev/deps.sh)";
    auto m = find_exe_map();
    ASSERT_TRUE(m) << "no executable mapping of this binary in /proc/self/maps";
    // Keep the functions in the binary.
    ASSERT_NE(kring_perf_data_hot(10) + kring_perf_data_cold(10), -1);
    tmpdir d;
    ASSERT_TRUE(d.ok());

    for (bool with_lost : {false, true}) {
        SCOPED_TRACE(with_lost ? "with a LOST record" : "without loss");
        const auto path = d.file(with_lost ? "lost.data" : "rec.data");
        const auto rec = write_recording(path, *m, with_lost);
        // perf warns of LOST records as it does of its own recordings'
        // (perf_session__warn_about_errors): exactly that warning, with
        // the count written, is expected.
        std::vector<std::string> allowed;
        if (with_lost)
            allowed = {"Processed ", "Check IO/CPU overload"};

        auto s = run(perf + " script -i " + path + " --show-switch-events");
        EXPECT_EQ(s.status, 0) << s.both();
        auto bad = complaints(s.out + s.err, allowed);
        EXPECT_TRUE(bad.empty()) << "perf script complained:\n" << show(bad) << s.both();
        EXPECT_EQ(count_lines(s.out, "PERF_RECORD_SWITCH_CPU_WIDE"), rec.switches) << s.out;
        EXPECT_EQ(count_lines(s.out, "PERF_RECORD_SWITCH_CPU_WIDE OUT"), rec.switches / 2);
        EXPECT_EQ(count_lines(s.out, "cpu-clock:"), rec.samples) << s.out;
        EXPECT_EQ(count_lines(s.out, "kring_perf_data_hot+"), rec.hot) << s.out;

        auto r = run(perf + " report --stdio -i " + path);
        EXPECT_EQ(r.status, 0) << r.both();
        bad = complaints(r.out + r.err, allowed);
        EXPECT_TRUE(bad.empty()) << "perf report complained:\n" << show(bad) << r.both();
        if (with_lost) {
            EXPECT_EQ(count_lines(r.err, "lost " + std::to_string(rec.lost) + " chunks"), 1u)
                << r.both();
        }
        std::stringstream in(r.out);
        // The top entry: the first line with a percentage.
        std::string line, top;
        while (std::getline(in, line))
            if (line.find('%') != std::string::npos && line.rfind('#', 0) != 0) {
                top = line;
                break;
            }
        EXPECT_NE(top.find("kring_perf_data_hot"), std::string::npos) << r.out;
        const auto pct = 100.0 * double(rec.hot) / double(rec.samples);
        EXPECT_NE(top.find(fmt_pct(pct)), std::string::npos) << top;
    }
}

// The same recording in perf's pipe format, fed to perf through a pipe
// (perf script -i -, perf report -i -): the same switches, samples and top
// entry as the file; read back by file::open() as complete, every record
// in order, the stream's attr and feature records not among them. A cut
// stream is truncated with every whole record before the cut.
TEST(PerfData, PipeFormatReadsLikeTheFile) {
    auto m = find_exe_map();
    ASSERT_TRUE(m) << "no executable mapping of this binary in /proc/self/maps";
    ASSERT_NE(kring_perf_data_hot(10) + kring_perf_data_cold(10), -1);
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto file = d.file("rec.data"), stream = d.file("rec.pipe");
    const auto rec = write_recording(file, *m, false);
    ASSERT_EQ(write_recording(stream, *m, false, true).samples, rec.samples);

    auto ff = pd::file::open(file);
    auto fs = pd::file::open(stream);
    ASSERT_TRUE(ff && fs) << (fs ? "" : fs.error().message());
    EXPECT_FALSE(fs->truncated()) << fs->truncation_info()->what;
    ASSERT_EQ(fs->attrs().size(), 2u);
    EXPECT_EQ(fs->attrs()[0].ids, (std::vector<std::uint64_t>{10, 11}));
    EXPECT_EQ(fs->attrs()[1].ids, (std::vector<std::uint64_t>{20, 21}));
    EXPECT_EQ(fs->attrs()[0].name, "cpu-clock");
    EXPECT_EQ(fs->feats().hostname, ff->feats().hostname);
    EXPECT_EQ(fs->feats().sample_time, ff->feats().sample_time);
    EXPECT_FALSE(fs->feats().kring.has_value());  // perf's features only
    auto a = records_of(*ff), b = records_of(*fs);
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); i++)
        ASSERT_TRUE(
            std::equal(a[i].bytes.begin(), a[i].bytes.end(), b[i].bytes.begin(), b[i].bytes.end()))
            << "record " << i;

    // Cut before the features: every record, truncated.
    std::ifstream in(stream, std::ios::binary);
    std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::size_t last = std::size_t(b.back().offset + b.back().bytes.size());
    std::vector<std::byte> cut(last);
    std::memcpy(cut.data(), bytes.data(), last);
    auto fc = pd::file::from_bytes(cut);
    ASSERT_TRUE(fc) << fc.error().message();
    EXPECT_TRUE(fc->truncated());
    EXPECT_EQ(records_of(*fc).size(), b.size());
    // Cut inside the attrs: no attr, an error that says so.
    cut.resize(20);
    auto fa = pd::file::from_bytes(cut);
    ASSERT_FALSE(fa);
    EXPECT_NE(fa.error().message().find("without an attr record"), std::string::npos)
        << fa.error().message();

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "perf is not installed (Debian: linux-perf; tools/dev/deps.sh)";
    for (const char* form : {"file", "pipe"}) {
        SCOPED_TRACE(form);
        auto s = run(std::string(form) == "file"
                         ? perf + " script -i " + file + " --show-switch-events"
                         : "cat " + stream + " | " + perf + " script -i - --show-switch-events");
        EXPECT_EQ(s.status, 0) << s.both();
        auto bad = complaints(s.out + s.err, {});
        EXPECT_TRUE(bad.empty()) << "perf script complained:\n" << show(bad) << s.both();
        EXPECT_EQ(count_lines(s.out, "PERF_RECORD_SWITCH_CPU_WIDE"), rec.switches) << s.out;
        EXPECT_EQ(count_lines(s.out, "cpu-clock:"), rec.samples) << s.out;
        EXPECT_EQ(count_lines(s.out, "kring_perf_data_hot+"), rec.hot) << s.out;
        auto r = run(std::string(form) == "file"
                         ? perf + " report --stdio -i " + file
                         : "cat " + stream + " | " + perf + " report --stdio -i -");
        EXPECT_EQ(r.status, 0) << r.both();
        bad = complaints(r.out + r.err, {});
        EXPECT_TRUE(bad.empty()) << "perf report complained:\n" << show(bad) << r.both();
        EXPECT_NE(r.out.find("kring_perf_data_hot"), std::string::npos) << r.out;
    }
}

// AUX data as kring stores it (userlib/perf_data/): PERF_RECORD_ITRACE_START and
// PERF_RECORD_AUX in the data, the AUXTRACE records with their payloads in
// the feat_kring_auxtrace section. perf reads the file without a word, and
// the payloads come back in their place.
TEST(PerfData, PerfReadsAux) {
    auto m = find_exe_map();
    ASSERT_TRUE(m);
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("aux.data");
    const std::uint32_t pid = static_cast<std::uint32_t>(::getpid());
    auto w = pd::writer::create(path, {clock_attr({10, 11}), aux_attr({30, 31})});
    ASSERT_TRUE(w);
    std::uint64_t t = 2000000000;
    ASSERT_TRUE(
        w->write(pd::make_comm(pid, pid, "pd-aux", false, sid(pid, pid, 0, t, 30), k_sched_type)));
    ASSERT_TRUE(w->write(pd::make_mmap2(pid, pid, m->start, m->end - m->start, m->pgoff, m->maj,
                                        m->min, m->ino, PROT_READ | PROT_EXEC, MAP_PRIVATE, m->path,
                                        true, sid(pid, pid, 0, t, 30), k_sched_type)));
    const auto hot = reinterpret_cast<std::uint64_t>(&kring_perf_data_hot) + 4;
    std::vector<std::vector<std::byte>> payloads;
    std::size_t samples = 0;
    for (std::uint32_t cpu = 0; cpu < 2; cpu++) {
        t += 100;
        ASSERT_TRUE(w->write(
            pd::make_itrace_start(pid, pid, sid(pid, pid, cpu, t, 30 + cpu), k_sched_type)));
    }
    for (int i = 0; i < 6; i++) {
        const std::uint32_t cpu = i % 2;
        pd::sample s;
        s.id = 10 + cpu;
        s.cpu = cpu;
        s.ip = hot;
        s.pid = s.tid = pid;
        s.time = t += 100;
        s.period = 1000000;
        ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_USER, s, k_clock_type)));
        samples++;
        // Sizes that are and are not multiples of 8, one large.
        std::vector<std::byte> p(i == 4 ? 200000 : 64 + 13 * i);
        for (std::size_t k = 0; k < p.size(); k++)
            p[k] = std::byte((k * 7 + i) & 0xff);
        const std::uint64_t flags = i == 5 ? PERF_AUX_FLAG_OVERWRITE : 0;
        ASSERT_TRUE(w->write(pd::make_aux(4096 * i, p.size(), flags,
                                          sid(pid, pid, cpu, t += 10, 30 + cpu), k_sched_type)));
        ASSERT_TRUE(w->write_auxtrace(p, 4096 * i, 0x100 + i, cpu, pid, cpu));
        payloads.push_back(std::move(p));
        ASSERT_TRUE(w->write(pd::make_finished_round()));
    }
    auto f = test_features();
    f.nr_cpus_available = 2;
    f.cpus.resize(2);
    ASSERT_TRUE(w->finish(f));

    // Read back: each AUXTRACE record right after its AUX record.
    auto r = pd::file::open(path);
    ASSERT_TRUE(r) << r.error().message();
    EXPECT_FALSE(r->truncated());
    auto v = records_of(*r);
    std::size_t n = 0;
    for (std::size_t i = 0; i < v.size(); i++) {
        if (v[i].type() != pd::record_auxtrace)
            continue;
        ASSERT_LT(n, payloads.size());
        ASSERT_GT(i, 0u);
        auto aux = pd::parse_aux(v[i - 1]);
        ASSERT_TRUE(aux) << "record before AUXTRACE " << n << " is type " << v[i - 1].type();
        EXPECT_EQ(aux->aux_size, payloads[n].size());
        auto a = pd::parse_auxtrace(v[i]);
        ASSERT_TRUE(a);
        EXPECT_EQ(a->offset, 4096u * n);
        EXPECT_EQ(a->reference, 0x100u + n);
        EXPECT_EQ(a->cpu, n % 2);
        EXPECT_EQ(a->tid, pid);
        EXPECT_EQ(a->size, (payloads[n].size() + 7) / 8 * 8);
        ASSERT_EQ(v[i].auxtrace.size(), a->size);
        EXPECT_TRUE(std::equal(payloads[n].begin(), payloads[n].end(), v[i].auxtrace.begin())) << n;
        n++;
    }
    EXPECT_EQ(n, payloads.size());

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "perf is not installed (Debian: linux-perf; tools/dev/deps.sh)";
    auto s = run(perf + " script -i " + path);
    EXPECT_EQ(s.status, 0) << s.both();
    auto bad = complaints(s.out + s.err);
    EXPECT_TRUE(bad.empty()) << "perf script complained:\n" << show(bad) << s.both();
    EXPECT_EQ(count_lines(s.out, "kring_perf_data_hot+"), samples) << s.out;
    auto rep = run(perf + " report --stdio -i " + path);
    EXPECT_EQ(rep.status, 0) << rep.both();
    bad = complaints(rep.out + rep.err);
    EXPECT_TRUE(bad.empty()) << "perf report complained:\n" << show(bad) << rep.both();
    EXPECT_NE(rep.out.find("kring_perf_data_hot"), std::string::npos) << rep.out;
    // perf's own dump sees the AUX records (and nothing it cannot read).
    auto dump = run(perf + " report -D -i " + path);
    EXPECT_EQ(dump.status, 0) << dump.err;
    EXPECT_EQ(count_lines(dump.out, "PERF_RECORD_AUX "), payloads.size());
    EXPECT_EQ(count_lines(dump.out, "PERF_RECORD_ITRACE_START"), 2u);
}

// An event declared after the file was created (writer::add_attr()) and
// the tracing data given at the end: the attrs go after the features, and
// perf script reads both events' samples; a stream refuses the late event.
TEST(PerfData, EventAddedAfterCreateReadByPerf) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    auto wk = pd::parse_tp_format("sched", tp_fixture::sched_wakeup);
    ASSERT_TRUE(sw && wk);
    constexpr std::uint64_t st = k_tp_type;
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("late.data");
    auto w = pd::writer::create(path, {attr("sched:sched_switch", sw->id, 1)});
    ASSERT_TRUE(w) << w.error().message();
    auto put = [&](std::uint64_t id, std::uint64_t t, const std::vector<std::byte>& raw) {
        pd::sample s;
        s.id = id;
        s.pid = s.tid = 100;
        s.time = t;
        s.has_time = true;
        s.period = 1;
        s.raw = raw;
        return bool(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
    };
    const auto swp = pd::tp_payload(*sw).set_str("prev_comm", "alpha").set("prev_pid", 100).bytes();
    ASSERT_TRUE(put(1, 1000, swp));
    ASSERT_TRUE(w->add_attr(attr("sched:sched_wakeup", wk->id, 2)));
    const auto wkp = pd::tp_payload(*wk).set_str("comm", "beta").set("pid", 200).bytes();
    ASSERT_TRUE(put(2, 2000, wkp));
    ASSERT_TRUE(put(1, 3000, swp));
    ASSERT_TRUE(w->write_tracing_data(
        pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&*sw, &*wk}, 4096)));
    const char* argv[] = {"perf_data_test"};
    ASSERT_TRUE(w->finish(pd::features::from_system(1, argv)));
    auto f = pd::file::open(path);
    ASSERT_TRUE(f) << f.error().message();
    EXPECT_FALSE(f->truncated());
    ASSERT_EQ(f->attrs().size(), 2u);
    EXPECT_EQ(f->attrs()[1].name, "sched:sched_wakeup");
    EXPECT_EQ(f->attrs()[1].ids, std::vector<std::uint64_t>{2});
    EXPECT_EQ(records_of(*f).size(), 3u);

    // A stream cannot take an event late.
    const int fd =
        ::open(d.file("late.pipe").c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    ASSERT_GE(fd, 0);
    auto pw = pd::writer::create_pipe(fd, {attr("sched:sched_switch", sw->id, 1)});
    ::close(fd);
    ASSERT_TRUE(pw);
    auto late = pw->add_attr(attr("sched:sched_wakeup", wk->id, 2));
    ASSERT_FALSE(late);
    EXPECT_EQ(late.error().code(), EINVAL);

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "skipped: perf is not installed (linux-perf; tools/dev/deps.sh)";
    auto s = run(perf + " script -i " + path);
    EXPECT_EQ(s.status, 0) << s.both();
    EXPECT_TRUE(complaints(s.out + s.err, {}).empty()) << s.both();
    EXPECT_EQ(count_lines(s.out, "sched:sched_switch:"), 2u) << s.out;
    EXPECT_EQ(count_lines(s.out, "sched:sched_wakeup: comm=beta pid=200"), 1u) << s.out;
}

}  // namespace
