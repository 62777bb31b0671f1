// kring export --pprof, end to end on the host: a perf.data file of known
// samples with call chains is written with libkring's perf_data writer,
// the built `kring` exports it, and two independent readers check the
// profile: go tool pprof (-traces: the stacks, their weights and labels;
// -tags: the labels), and libprotobuf's own parser (the profile format's
// rules: the string table, ids, references). The user frames are functions
// of this test program, mapped as /proc/self/maps says, so that the tool
// names them from the program's ELF symbols; the kernel frames are named
// by a kallsyms file the test writes. Also: a missing and a truncated
// input leave no output file behind.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <linux/perf_event.h>

#include "kring/perf_data.hpp"
#include "profile.pb.h"
#include "workload.hpp"

// The workload's user functions: distinct bodies, so that no two fold
// into one.
extern "C" {
volatile int kring_pprof_sink;
__attribute__((noinline, used)) void kring_pprof_leaf() { kring_pprof_sink = 1; }
__attribute__((noinline, used)) void kring_pprof_mid() {
    kring_pprof_leaf();
    kring_pprof_sink = 2;
}
__attribute__((noinline, used)) void kring_pprof_root() {
    kring_pprof_mid();
    kring_pprof_sink = 3;
}
__attribute__((noinline, used)) void kring_pprof_syscall() { kring_pprof_sink = 4; }
}

namespace {
namespace fs = std::filesystem;
namespace pd = kring::perf_data;
namespace pp = perftools::profiles;

// The tool tests' fixture and helpers (workload.hpp).
using kring_tool_test::lines_of;
using kring_tool_test::run_result;
using kring_tool_test::slurp;
using kring_tool_test::ToolFiles;

std::uint64_t addr_of(void (*f)()) { return reinterpret_cast<std::uint64_t>(f); }

// The mapping of /proc/self/maps that holds @addr.
struct self_mapping {
    std::uint64_t start = 0, end = 0, pgoff = 0;
    std::string path;
};
self_mapping mapping_of(std::uint64_t addr) {
    std::ifstream in("/proc/self/maps");
    for (std::string line; std::getline(in, line);) {
        std::istringstream ls(line);
        std::string range, perms, off, dev, ino, path;
        ls >> range >> perms >> off >> dev >> ino >> path;
        const auto dash = range.find('-');
        self_mapping m{std::stoull(range.substr(0, dash), nullptr, 16),
                       std::stoull(range.substr(dash + 1), nullptr, 16),
                       std::stoull(off, nullptr, 16), path};
        if (addr >= m.start && addr < m.end)
            return m;
    }
    return {};
}

// The kernel of the workload: its symbols (a kallsyms file) and _text.
constexpr std::uint64_t ktext = 0xffffffff81000000;
constexpr std::uint64_t k_entry = ktext + 0x100, k_work = ktext + 0x200, k_tick = ktext + 0x300,
                        k_end = ktext + 0x400, k_module_fn = 0xffffffffc0001000;
std::string kallsyms_text(std::uint64_t shift = 0) {
    auto line = [&](std::uint64_t a, const char* rest) {
        char b[128];
        std::snprintf(b, sizeof b, "%016llx %s\n", (unsigned long long)(a - shift), rest);
        return std::string(b);
    };
    return line(ktext, "T _text") + line(k_entry, "T k_syscall_entry") +
           line(k_work, "t k_do_work") + line(k_tick, "T k_timer_tick") + line(k_end, "T k_next") +
           line(k_module_fn, "t kring_timer_fn\t[kring]") +
           line(k_module_fn + 0x100, "t kring_other_fn\t[kring]");
}

constexpr std::uint64_t period = 1'000'000;
constexpr std::uint64_t base = 7'000'000'000;
constexpr std::uint64_t sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                      PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                      PERF_SAMPLE_CALLCHAIN;
constexpr std::uint64_t ctx_kernel = std::uint64_t(PERF_CONTEXT_KERNEL);
constexpr std::uint64_t ctx_user = std::uint64_t(PERF_CONTEXT_USER);

// One kind of sample of the workload: its task, call chain (perf's, as
// recorded) and how many of it; the stack pprof is to show, leaf first.
struct stack_case {
    std::uint32_t pid, tid;
    const char* comm;
    std::uint16_t misc;
    std::uint64_t ip;
    std::vector<std::uint64_t> chain;
    int count;
    std::vector<std::string> expect;
};

std::vector<stack_case> workload_stacks() {
    const std::uint64_t leaf = addr_of(kring_pprof_leaf), mid = addr_of(kring_pprof_mid),
                        root = addr_of(kring_pprof_root), sys = addr_of(kring_pprof_syscall);
    return {
        // User only: the leaf at its first byte, two return addresses one
        // byte into their callers.
        {100,
         100,
         "alpha",
         PERF_RECORD_MISC_USER,
         leaf,
         {ctx_user, leaf, mid + 1, root + 1},
         5,
         {"kring_pprof_leaf", "kring_pprof_mid", "kring_pprof_root"}},
        // Kernel and user. The return address k_tick is the first byte of
        // k_timer_tick: the call before it is k_do_work's last. The user
        // part's first address is where the thread entered the kernel (not a
        // return address): the first byte of kring_pprof_syscall.
        {100,
         101,
         "alpha worker",
         PERF_RECORD_MISC_KERNEL,
         k_tick + 0x10,
         {ctx_kernel, k_tick + 0x10, k_tick, k_entry + 0x20, ctx_user, sys, root + 1},
         3,
         {"k_timer_tick", "k_do_work", "k_syscall_entry", "kring_pprof_syscall",
          "kring_pprof_root"}},
        // A module's function, then user.
        {200,
         200,
         "beta",
         PERF_RECORD_MISC_KERNEL,
         k_module_fn + 8,
         {ctx_kernel, k_module_fn + 8, ctx_user, leaf, mid + 1},
         2,
         {"kring_timer_fn", "kring_pprof_leaf", "kring_pprof_mid"}},
        // No call chain: the IP alone.
        {200, 200, "beta", PERF_RECORD_MISC_USER, root + 2, {}, 1, {"kring_pprof_root"}},
    };
}

// Writes the workload to @path: COMMs, the kernel's MMAP, the test
// program's text mapping in both processes, the samples in time order.
void write_workload(const std::string& path) {
    std::vector<pd::event_attr> attrs(1);
    attrs[0].attr.size = sizeof(perf_event_attr);
    attrs[0].attr.type = PERF_TYPE_SOFTWARE;
    attrs[0].attr.config = PERF_COUNT_SW_CPU_CLOCK;
    attrs[0].attr.sample_period = period;
    attrs[0].attr.sample_type = sample_type;
    attrs[0].attr.sample_id_all = 1;
    attrs[0].name = "cpu-clock";
    attrs[0].ids = {10};
    auto w = pd::writer::create(path, attrs);
    ASSERT_TRUE(w) << w.error().message();
    auto sid = [](std::uint32_t pid, std::uint32_t tid, std::uint64_t time) {
        pd::sample_id s;
        s.pid = pid;
        s.tid = tid;
        s.time = time;
        s.has_time = true;
        s.id = 10;
        return s;
    };
    auto put = [&](const std::vector<std::byte>& r) { ASSERT_TRUE(w->write(r)); };
    put(pd::make_comm(100, 100, "alpha", true, sid(100, 100, base), sample_type));
    put(pd::make_comm(100, 101, "alpha worker", false, sid(100, 101, base), sample_type));
    put(pd::make_comm(200, 200, "beta", true, sid(200, 200, base), sample_type));
    put(pd::make_mmap2(std::uint32_t(-1), 0, ktext, ~0ull - ktext, ktext, 0, 0, 0, 5, 2,
                       "[kernel.kallsyms]_text", false, sid(std::uint32_t(-1), 0, base),
                       sample_type));
    const auto text = mapping_of(addr_of(kring_pprof_leaf));
    ASSERT_FALSE(text.path.empty());
    for (std::uint32_t pid : {100u, 200u})
        put(pd::make_mmap2(pid, pid, text.start, text.end - text.start, text.pgoff, 0, 0, 0, 5, 2,
                           text.path, true, sid(pid, pid, base), sample_type));
    std::uint64_t t = base + 1000;
    for (const auto& c : workload_stacks())
        for (int i = 0; i < c.count; i++) {
            pd::sample s;
            s.id = 10;
            s.ip = c.ip;
            s.pid = c.pid;
            s.tid = c.tid;
            s.time = t;
            s.has_time = true;
            s.period = period;
            s.callchain.bytes = std::as_bytes(std::span(c.chain));
            put(pd::make_sample(c.misc, s, sample_type));
            t += period;
        }
    pd::features f;
    f.sample_time = {base, t};
    ASSERT_TRUE(w->finish(f));
}

class PprofExport : public ToolFiles {
protected:
    void SetUp() override {
        ToolFiles::SetUp();
        data_ = path("perf.data");
        write_workload(data_);
        std::ofstream(path("kallsyms")) << kallsyms_text();
    }
    // The profile of the workload, exported.
    std::string exported() {
        const std::string out = path("cpu.pb.gz");
        auto r = kring("export --pprof '" + out + "' --kallsyms '" + path("kallsyms") + "' '" +
                       data_ + "'");
        EXPECT_EQ(r.status, 0) << r.err;
        return out;
    }

    std::string data_;
};

// ---------------------------------------------------------------------
// libprotobuf's reading

std::string gunzip(const std::string& in) {
    z_stream z{};
    if (inflateInit2(&z, 15 + 16) != Z_OK)
        return {};
    z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
    z.avail_in = uInt(in.size());
    std::string out;
    char buf[65536];
    int rc;
    do {
        z.next_out = reinterpret_cast<Bytef*>(buf);
        z.avail_out = sizeof buf;
        rc = inflate(&z, Z_NO_FLUSH);
        out.append(buf, sizeof buf - z.avail_out);
    } while (rc == Z_OK);
    inflateEnd(&z);
    return rc == Z_STREAM_END ? out : std::string();
}

// What breaks the profile format's rules (profile.proto's comments): the
// string table starts with "", every string index is in it, ids are
// non-zero and unique, every id referenced exists, a sample has one value
// per sample type. Empty when none does.
std::vector<std::string> problems(const pp::Profile& p) {
    std::vector<std::string> v;
    const auto nstr = std::int64_t(p.string_table_size());
    if (nstr == 0 || !p.string_table(0).empty())
        v.push_back("string_table[0] is not \"\"");
    auto s = [&](std::int64_t i, const char* what) {
        if (i < 0 || i >= nstr)
            v.push_back(std::string(what) + ": string index " + std::to_string(i) +
                        " out of range");
    };
    auto ids = [&](auto& list, const char* what) {
        std::set<std::uint64_t> seen;
        for (const auto& x : list) {
            if (x.id() == 0)
                v.push_back(std::string(what) + " id 0");
            else if (!seen.insert(x.id()).second)
                v.push_back(std::string(what) + " id " + std::to_string(x.id()) + " twice");
        }
        return seen;
    };
    const auto mappings = ids(p.mapping(), "mapping");
    const auto locations = ids(p.location(), "location");
    const auto functions = ids(p.function(), "function");
    for (const auto& t : p.sample_type()) {
        s(t.type(), "sample_type");
        s(t.unit(), "sample_type");
    }
    for (const auto& m : p.mapping()) {
        s(m.filename(), "mapping filename");
        s(m.build_id(), "mapping build_id");
    }
    for (const auto& f : p.function()) {
        s(f.name(), "function name");
        s(f.system_name(), "function system_name");
        s(f.filename(), "function filename");
    }
    for (const auto& l : p.location()) {
        if (l.mapping_id() && !mappings.count(l.mapping_id()))
            v.push_back("location " + std::to_string(l.id()) + ": no mapping " +
                        std::to_string(l.mapping_id()));
        for (const auto& line : l.line())
            if (!functions.count(line.function_id()))
                v.push_back("location " + std::to_string(l.id()) + ": no function " +
                            std::to_string(line.function_id()));
    }
    for (const auto& smp : p.sample()) {
        if (smp.value_size() != p.sample_type_size())
            v.push_back("a sample of " + std::to_string(smp.value_size()) + " values");
        if (smp.location_id_size() == 0)
            v.push_back("a sample without locations");
        for (std::uint64_t id : smp.location_id())
            if (!locations.count(id))
                v.push_back("a sample names location " + std::to_string(id) + ", not there");
        for (const auto& l : smp.label()) {
            s(l.key(), "label key");
            s(l.str(), "label str");
        }
    }
    s(p.period_type().type(), "period_type");
    s(p.period_type().unit(), "period_type");
    s(p.default_sample_type(), "default_sample_type");
    for (auto c : p.comment())
        s(c, "comment");
    return v;
}

bool parse_profile(const std::string& file, pp::Profile& p) {
    const std::string raw = gunzip(slurp(file));
    return !raw.empty() && p.ParseFromString(raw);
}

TEST_F(PprofExport, ProtobufReadsAValidProfile) {
    const std::string out = exported();
    pp::Profile p;
    ASSERT_TRUE(parse_profile(out, p));
    const auto v = problems(p);
    EXPECT_TRUE(v.empty()) << v.front();
    auto str = [&](std::int64_t i) { return p.string_table(int(i)); };
    ASSERT_EQ(p.sample_type_size(), 2);
    EXPECT_EQ(str(p.sample_type(0).type()), "samples");
    EXPECT_EQ(str(p.sample_type(0).unit()), "count");
    EXPECT_EQ(str(p.sample_type(1).type()), "cpu");
    EXPECT_EQ(str(p.sample_type(1).unit()), "nanoseconds");
    EXPECT_EQ(str(p.period_type().type()), "cpu");
    EXPECT_EQ(str(p.period_type().unit()), "nanoseconds");
    EXPECT_EQ(p.period(), std::int64_t(period));
    EXPECT_EQ(p.time_nanos(), std::int64_t(base));
    EXPECT_GT(p.duration_nanos(), 0);
    // One pprof sample per thread and stack, the perf samples added up.
    const auto cases = workload_stacks();
    ASSERT_EQ(p.sample_size(), int(cases.size()));
    std::int64_t count = 0, ns = 0;
    for (const auto& s : p.sample()) {
        count += s.value(0);
        ns += s.value(1);
    }
    EXPECT_EQ(count, 11);
    EXPECT_EQ(ns, 11 * std::int64_t(period));
    // Every frame's address kept as recorded (return addresses too).
    std::map<std::uint64_t, const pp::Location*> locs;
    for (const auto& l : p.location())
        locs[l.id()] = &l;
    for (std::size_t i = 0; i < cases.size(); i++) {
        std::vector<std::uint64_t> want;
        for (std::uint64_t a : cases[i].chain)
            if (!kring::callchain_view::is_marker(a))
                want.push_back(a);
        if (want.empty())
            want.push_back(cases[i].ip);
        std::vector<std::uint64_t> got;
        for (std::uint64_t id : p.sample(int(i)).location_id())
            got.push_back(locs.at(id)->address());
        EXPECT_EQ(got, want) << "stack " << i;
    }
    // The test program's mapping names it and says it has functions.
    const auto text = mapping_of(addr_of(kring_pprof_leaf));
    bool found = false;
    for (const auto& m : p.mapping())
        if (str(m.filename()) == text.path) {
            found = true;
            EXPECT_EQ(m.memory_start(), text.start);
            EXPECT_EQ(m.memory_limit(), text.end);
            EXPECT_EQ(m.file_offset(), text.pgoff);
            EXPECT_TRUE(m.has_functions());
        }
    EXPECT_TRUE(found) << text.path;
}

// The checker above catches what it is there for.
TEST(PprofRules, CheckerFindsBrokenProfiles) {
    pp::Profile p;
    p.add_string_table("");
    p.add_string_table("x");
    p.add_sample_type()->set_type(1);
    auto* l = p.add_location();
    l->set_id(1);
    auto* s = p.add_sample();
    s->add_location_id(1);
    s->add_value(1);
    EXPECT_TRUE(problems(p).empty()) << problems(p).front();

    pp::Profile bad = p;
    bad.set_string_table(0, "not empty");
    EXPECT_FALSE(problems(bad).empty());
    bad = p;
    bad.mutable_sample(0)->add_location_id(7);
    EXPECT_FALSE(problems(bad).empty());
    bad = p;
    bad.add_location()->set_id(1);
    EXPECT_FALSE(problems(bad).empty());
    bad = p;
    bad.mutable_location(0)->set_id(0);
    EXPECT_FALSE(problems(bad).empty());
    bad = p;
    bad.mutable_location(0)->add_line()->set_function_id(3);
    EXPECT_FALSE(problems(bad).empty());
    bad = p;
    bad.mutable_sample(0)->add_label()->set_key(9);
    EXPECT_FALSE(problems(bad).empty());
}

// ---------------------------------------------------------------------
// go tool pprof's reading

// Whether go (and so go tool pprof) is there.
bool have_go() { return std::system("command -v go >/dev/null 2>&1") == 0; }

// The stacks of `go tool pprof -traces`: each one's frames (leaf first),
// its weight line and its label lines.
struct trace {
    std::vector<std::string> frames;
    std::string weight;
    std::vector<std::string> labels;
};
std::vector<trace> parse_traces(const std::string& out) {
    // -----------+-------------------------------------------------------
    //         comm:  alpha worker
    //          pid:  100
    //          3ms   k_timer_tick
    //            k_do_work
    std::vector<trace> v;
    bool in = false;
    for (const auto& l : lines_of(out)) {
        if (l.rfind("-----------+", 0) == 0) {
            v.emplace_back();
            in = true;
            continue;
        }
        if (!in || l.empty())
            continue;
        std::istringstream ls(l);
        std::string first, second;
        ls >> first;
        if (first.empty())
            continue;
        if (first.back() == ':') {  // a label line: "key: value", spaces collapsed
            std::string value, word;
            while (ls >> word)
                value += (value.empty() ? "" : " ") + word;
            v.back().labels.push_back(first + " " + value);
            continue;
        }
        if (l[0] != ' ' || l.find_first_not_of(' ') < 11) {
            // "      3ms   frame": the weight, then the leaf.
            ls >> second;
            v.back().weight = first;
            v.back().frames.push_back(second);
        } else {
            v.back().frames.push_back(first);
        }
    }
    // The closing line opens no stack.
    std::erase_if(v, [](const trace& t) { return t.frames.empty(); });
    return v;
}

TEST_F(PprofExport, GoPprofShowsTheStacksTheirWeightsAndLabels) {
    if (!have_go())
        GTEST_SKIP() << "skipped: go not found (golang-go, tools/dev/deps.sh)";
    const std::string out = exported();
    auto r = run("go tool pprof -symbolize=none -traces '" + out + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    const auto traces = parse_traces(r.out);
    std::map<std::vector<std::string>, const trace*> by_stack;
    for (const auto& t : traces)
        by_stack[t.frames] = &t;
    const auto cases = workload_stacks();
    EXPECT_EQ(traces.size(), cases.size()) << r.out;
    for (const auto& c : cases) {
        auto it = by_stack.find(c.expect);
        ASSERT_NE(it, by_stack.end()) << "no stack " << c.expect.front() << "...\n" << r.out;
        // cpu nanoseconds of `count` samples of 1ms each.
        EXPECT_EQ(it->second->weight, std::to_string(c.count) + "ms") << r.out;
        const auto& labels = it->second->labels;
        auto has = [&](const std::string& want) {
            for (const auto& l : labels)
                if (l == want)
                    return true;
            return false;
        };
        EXPECT_TRUE(has("comm: " + std::string(c.comm))) << r.out;
        EXPECT_TRUE(has("pid: " + std::to_string(c.pid))) << r.out;
        EXPECT_TRUE(has("tid: " + std::to_string(c.tid))) << r.out;
    }
    // The sample counts: the other sample type.
    r = run("go tool pprof -symbolize=none -sample_index=samples -traces '" + out + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    std::multiset<std::string> weights;
    for (const auto& t : parse_traces(r.out))
        weights.insert(t.weight);
    EXPECT_EQ(weights, (std::multiset<std::string>{"5", "3", "2", "1"})) << r.out;
}

TEST_F(PprofExport, GoPprofReadsTheLabels) {
    if (!have_go())
        GTEST_SKIP() << "skipped: go not found (golang-go, tools/dev/deps.sh)";
    const std::string out = exported();
    auto r = run("go tool pprof -symbolize=none -sample_index=samples -tags '" + out + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    std::string t;
    for (const auto& l : lines_of(r.out))
        t += l + "\n";
    for (const char* want :
         {"comm: Total 11", "alpha", "alpha worker", "beta", "pid: Total 11", "tid: Total 11"})
        EXPECT_NE(t.find(want), std::string::npos) << want << "\n" << t;
}

TEST_F(PprofExport, GoPprofTopCountsTheLeaves) {
    if (!have_go())
        GTEST_SKIP() << "skipped: go not found (golang-go, tools/dev/deps.sh)";
    const std::string out = exported();
    auto r = run("go tool pprof -symbolize=none -sample_index=samples -top '" + out + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    // flat: kring_pprof_leaf 5 (user only) + 0; k_timer_tick 3;
    // kring_timer_fn 2; kring_pprof_root 1 (the IP alone).
    std::map<std::string, std::string> flat;
    for (const auto& l : lines_of(r.out)) {
        std::istringstream ls(l);
        std::vector<std::string> f;
        for (std::string x; ls >> x;)
            f.push_back(x);
        if (f.size() >= 6 && f[1].back() == '%')
            flat[f.back()] = f[0];
    }
    EXPECT_EQ(flat["kring_pprof_leaf"], "5") << r.out;
    EXPECT_EQ(flat["k_timer_tick"], "3") << r.out;
    EXPECT_EQ(flat["kring_timer_fn"], "2") << r.out;
    EXPECT_EQ(flat["kring_pprof_root"], "1") << r.out;
}

// ---------------------------------------------------------------------
// Bad input: one line, exit 1, no output file (an older one untouched).

TEST_F(PprofExport, MissingOrTruncatedInputWritesNothing) {
    const std::string out = path("old.pb.gz");
    std::ofstream(out) << "old";
    auto r = kring("export --pprof '" + out + "' '" + path("missing.data") + "'");
    EXPECT_EQ(r.status, 1);
    ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("missing.data"), std::string::npos) << r.err;
    EXPECT_EQ(slurp(out), "old");
    EXPECT_FALSE(fs::exists(out + ".tmp"));

    const std::string bytes = slurp(data_);
    const std::string cut = path("cut.data");
    std::ofstream(cut, std::ios::binary).write(bytes.data(), std::streamsize(bytes.size() / 2));
    const std::string fresh = path("fresh.pb.gz");
    r = kring("export --pprof '" + fresh + "' '" + cut + "'");
    EXPECT_EQ(r.status, 1);
    ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("truncated"), std::string::npos) << r.err;
    EXPECT_FALSE(fs::exists(fresh));
    EXPECT_FALSE(fs::exists(fresh + ".tmp"));

    r = kring("export --pprof '" + out + "' --kallsyms '" + path("no-kallsyms") + "' '" + data_ +
              "'");
    EXPECT_EQ(r.status, 1);
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_EQ(slurp(out), "old");
}

// A recording of process 100 mapping each of @files (64 KiB each, apart)
// with one sample in each.
void write_mapped(const std::string& data, const std::vector<std::string>& files) {
    auto w =
        pd::writer::create(data, {pd::sample_event("cpu-clock", PERF_TYPE_SOFTWARE,
                                                   PERF_COUNT_SW_CPU_CLOCK, sample_type, {10})});
    ASSERT_TRUE(w) << w.error().message();
    pd::sample_id id;
    id.pid = id.tid = 100;
    id.has_time = true;
    id.id = 10;
    std::uint64_t t = base;
    for (std::size_t i = 0; i < files.size(); i++) {
        const std::uint64_t start = 0x400000 + i * 0x100000;
        id.time = t++;
        ASSERT_TRUE(w->write(pd::make_mmap2(100, 100, start, 0x10000, 0, 0, 0, 0, 5, 2, files[i],
                                            true, id, sample_type)));
        pd::sample s;
        s.id = 10;
        s.ip = start + 0x10;
        s.pid = s.tid = 100;
        s.time = t++;
        s.has_time = true;
        s.period = period;
        ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_USER, s, sample_type)));
    }
    ASSERT_TRUE(w->finish({}));
}

// MMAP records naming a FIFO, a device node, a directory and a procfs
// file, with samples in each: the export opens none of them (a FIFO's
// open would wait for a writer forever, a device's would run its
// driver), names each in one warning line, and writes the profile with
// those frames as addresses. Bounded by timeout(1): only a hang reaches
// it. The same for --kallsyms naming a FIFO.
TEST_F(PprofExport, FifoAndDeviceNamedByMmapAreSkipped) {
    const std::string fifo = path("fifo");
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    const std::string data = path("hostile.data");
    const std::vector<std::pair<std::string, std::string>> files = {
        {fifo, "not a regular file (a FIFO)"},
        {"/dev/zero", "not a regular file (a character device)"},
        {"/", "not a regular file (a directory)"},
        {"/proc/self/status", "an empty file (or a procfs or sysfs one)"}};
    std::vector<std::string> names;
    for (const auto& f : files)
        names.push_back(f.first);
    write_mapped(data, names);
    const std::string out = path("hostile.pb.gz");
    auto r = run("timeout -s KILL 60 '" + std::string(kring_tool_test::kring_bin()) +
                 "' export --pprof '" + out + "' '" + data + "'");
    ASSERT_EQ(r.status, 0) << "(137: killed, still blocked after 60 s) " << r.err;
    const auto lines = lines_of(r.err);
    ASSERT_EQ(lines.size(), files.size()) << r.err;
    for (std::size_t i = 0; i < files.size(); i++)
        EXPECT_EQ(lines[i], "kring: warning: no symbols of " + files[i].first + ": " +
                                files[i].first + ": " + files[i].second);
    pp::Profile p;
    ASSERT_TRUE(parse_profile(out, p));
    EXPECT_EQ(p.mapping_size(), int(files.size()));
    EXPECT_EQ(p.function_size(), 0);

    r = run("timeout -s KILL 60 '" + std::string(kring_tool_test::kring_bin()) +
            "' export --pprof '" + out + "' --kallsyms '" + fifo + "' '" + data_ + "'");
    EXPECT_EQ(r.status, 1) << "(137: killed, still blocked after 60 s) " << r.err;
    EXPECT_EQ(r.err, "kring: " + fifo + ": not a regular file (a FIFO)\n");
}

// One file under many names ("dir/./././f"): read once, by its inode, so
// that a recording spelling one large library a thousand ways does not
// make the export read it a thousand times. A file that is not ELF is
// the witness: one warning line, where each name read it again (eight
// warning lines and one for the other twelve).
TEST_F(PprofExport, FileUnderManyNamesIsReadOnce) {
    std::ofstream(path("notelf")) << "not an ELF file\n";
    std::vector<std::string> names;
    std::string dots;
    for (int i = 0; i < 20; i++, dots += "./")
        names.push_back(dir_ + "/" + dots + "notelf");
    const std::string data = path("aliases.data");
    write_mapped(data, names);
    const std::string out = path("aliases.pb.gz");
    auto r = kring("export --pprof '" + out + "' '" + data + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    ASSERT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("no symbols of " + names[0] + ": "), std::string::npos) << r.err;
}

// A kallsyms of another boot (KASLR): relocated by the recorded _text.
TEST_F(PprofExport, KallsymsOfAnotherBootIsRelocated) {
    std::ofstream(path("kallsyms.shifted")) << kallsyms_text(0x20000000);
    const std::string out = path("shifted.pb.gz");
    auto r = kring("export --pprof '" + out + "' --kallsyms '" + path("kallsyms.shifted") + "' '" +
                   data_ + "'");
    ASSERT_EQ(r.status, 0) << r.err;
    pp::Profile p;
    ASSERT_TRUE(parse_profile(out, p));
    std::set<std::string> names;
    for (const auto& f : p.function())
        names.insert(p.string_table(int(f.name())));
    for (const char* want : {"k_timer_tick", "k_do_work", "k_syscall_entry", "kring_timer_fn"})
        EXPECT_TRUE(names.count(want)) << want;
}

}  // namespace
