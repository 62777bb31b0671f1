// The perf.data component's tracepoints (userlib/perf_data/src/tracing.cpp):
// kernel formats (as tracefs serves 6.12's), samples built at their
// offsets, the tracing data, a producer's layout re-rendered as a
// tracepoint, and perf's tracepoint tools (perf script, perf sched)
// reading them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <sstream>
#include <string>
#include <vector>

#include <fcntl.h>
#include <unistd.h>

#include "kring/perf_data.hpp"
#include "perf_data_util.hpp"
#include "tp_fixture.hpp"

namespace pd = kring::perf_data;
using namespace kt;  // perf_data_util.hpp
constexpr std::uint64_t k_tp_type = tp_fixture::sample_type;
using tp_fixture::attr;

namespace {

TEST(PerfData, TracepointFormatsParse) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    ASSERT_TRUE(sw) << sw.error().message();
    EXPECT_EQ(sw->name, "sched_switch");
    EXPECT_EQ(sw->id, 316u);
    EXPECT_EQ(sw->size, 64u);
    EXPECT_EQ(sw->fields.size(), 11u);
    EXPECT_EQ(sw->fields.at("prev_comm").offset, 8u);
    EXPECT_EQ(sw->fields.at("prev_comm").size, 16u);
    EXPECT_EQ(sw->fields.at("prev_state").offset, 32u);
    EXPECT_EQ(sw->fields.at("next_prio").offset, 60u);
    // Built at those offsets, whatever the order of the calls; a field
    // the format lacks is skipped; a string is cut to its field.
    auto p = pd::tp_payload(*sw)
                 .set("next_pid", 200)
                 .set("no_such_field", 1)
                 .set_str("prev_comm", "a-name-longer-than-16")
                 .bytes();
    ASSERT_EQ(p.size(), 64u);
    std::uint16_t type;
    std::int32_t next_pid;
    std::memcpy(&type, p.data(), 2);
    std::memcpy(&next_pid, p.data() + 56, 4);
    EXPECT_EQ(type, 316);
    EXPECT_EQ(next_pid, 200);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(p.data() + 8), 16), "a-name-longer-th");
    for (const char* bad : {"", "name: x\nformat:\n", "name: x\nID: 7\nformat:\n",
                            "name: x\nID: 7\nformat:\n\tfield:int a;\toffset:x;\tsize:4;\n",
                            "name: x\nID: 99999999\nformat:\n\tfield:int a;\toffset:0;\tsize:4;\n"})
        EXPECT_FALSE(pd::parse_tp_format("s", bad)) << bad;
    // A dynamic string (__data_loc char[] NAME): named by its last word,
    // not by the type's brackets.
    auto exec = pd::parse_tp_format(
        "sched", std::string("name: sched_process_exec\nID: 311\nformat:\n") + tp_fixture::common +
                     "\tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n"
                     "\tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n\n"
                     "print fmt: \"filename=%s pid=%d\", __get_str(filename), REC->pid\n");
    ASSERT_TRUE(exec) << exec.error().message();
    ASSERT_TRUE(exec->fields.count("filename"));
    EXPECT_EQ(exec->fields.at("filename").offset, 8u);
    EXPECT_EQ(exec->fields.at("filename").size, 4u);
    EXPECT_FALSE(exec->fields.count("char"));
}

// sched:sched_switch and sched:sched_wakeup samples with their tracing
// data, in a file and in a stream: read back, and read by perf script and
// perf sched (timehist, latency), which need the formats to decode them.
TEST(PerfData, TracepointSamplesReadByPerfSched) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    auto wk = pd::parse_tp_format("sched", tp_fixture::sched_wakeup);
    ASSERT_TRUE(sw && wk);
    const auto td =
        pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&*sw, &*wk}, 4096);
    constexpr std::uint64_t st = k_tp_type;
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const int n = 40;  // switches each way
    const std::string names[2] = {"alpha", "beta"};
    const std::uint32_t tids[2] = {100, 200};
    for (bool pipe : {false, true}) {
        SCOPED_TRACE(pipe ? "pipe" : "file");
        const auto path = d.file(pipe ? "tp.pipe" : "tp.data");
        std::vector<pd::event_attr> attrs = {attr("sched:sched_switch", sw->id, 1),
                                             attr("sched:sched_wakeup", wk->id, 2)};
        const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0);
        auto w = pipe ? pd::writer::create_pipe(fd, attrs) : pd::writer::create(path, attrs);
        ::close(fd);
        ASSERT_TRUE(w) << w.error().message();
        ASSERT_TRUE(w->write_tracing_data(td));
        // A stream's goes once; a file's is the last one given.
        EXPECT_EQ(bool(w->write_tracing_data(td)), !pipe) << "twice";
        std::uint64_t t = 1000000;
        for (int k = 0; k < 2; k++) {
            pd::sample_id sid;
            sid.pid = sid.tid = tids[k];
            sid.time = t;
            sid.has_time = true;
            sid.id = 1;
            ASSERT_TRUE(w->write(pd::make_comm(
                tids[k], tids[k], names[k], false, sid,
                PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU)));
        }
        for (int i = 0; i < 2 * n; i++) {
            const int out = i % 2, in = 1 - out;
            t += 10000;
            // The next one is woken first (by the running one), then runs.
            auto wake = pd::tp_payload(*wk)
                            .set("common_pid", tids[out])
                            .set_str("comm", names[in])
                            .set("pid", tids[in])
                            .set("prio", 120)
                            .set("target_cpu", 0)
                            .bytes();
            pd::sample s;
            s.id = 2;
            s.pid = s.tid = tids[out];
            s.time = t;
            s.has_time = true;
            s.cpu = 0;
            s.period = 1;
            s.raw = wake;
            ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
            auto swp = pd::tp_payload(*sw)
                           .set("common_pid", tids[out])
                           .set_str("prev_comm", names[out])
                           .set("prev_pid", tids[out])
                           .set("prev_prio", 120)
                           .set("prev_state", 1)
                           .set_str("next_comm", names[in])
                           .set("next_pid", tids[in])
                           .set("next_prio", 120)
                           .bytes();
            s.id = 1;
            s.time = t + 2000;
            s.raw = swp;
            ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, st)));
        }
        const char* argv[] = {"perf_data_test"};
        ASSERT_TRUE(w->finish(pd::features::from_system(1, argv)));
        auto f = pd::file::open(path);
        ASSERT_TRUE(f) << f.error().message();
        EXPECT_FALSE(f->truncated());
        // A stream's record holds the data padded to 8 bytes.
        const auto& got = f->feats().tracing_data;
        ASSERT_GE(got.size(), td.size());
        EXPECT_LT(got.size() - td.size(), 8u);
        EXPECT_TRUE(std::equal(td.begin(), td.end(), got.begin()));
        EXPECT_TRUE(std::all_of(got.begin() + td.size(), got.end(),
                                [](std::byte b) { return b == std::byte{0}; }));
        EXPECT_EQ(records_of(*f).size(), 2 + 4u * n);

        const auto perf = find_perf();
        if (perf.empty())
            GTEST_SKIP() << "skipped: perf is not installed (linux-perf; tools/dev/deps.sh)";
        const std::string in = pipe ? "cat " + path + " | " + perf : perf;
        const std::string from = pipe ? " -i -" : " -i " + path;
        auto s = run(in + " script" + from);
        EXPECT_EQ(s.status, 0) << s.both();
        EXPECT_TRUE(complaints(s.out + s.err, {}).empty()) << s.both();
        EXPECT_EQ(count_lines(s.out, "sched:sched_switch:"), 2u * n) << s.out;
        EXPECT_EQ(count_lines(s.out, "sched:sched_wakeup:"), 2u * n) << s.out;
        EXPECT_EQ(count_lines(s.out,
                              "prev_comm=alpha prev_pid=100 prev_prio=120 prev_state=S "
                              "==> next_comm=beta next_pid=200 next_prio=120"),
                  std::size_t(n))
            << s.out;
        EXPECT_EQ(count_lines(s.out, "comm=beta pid=200 prio=120 target_cpu=000"), std::size_t(n))
            << s.out;
        // perf sched looks for its tracepoints before it reads any event:
        // it reads files, not streams (perf sched record -o - | perf sched
        // timehist -i - says "No sched_switch events found" too).
        if (pipe)
            continue;
        auto th = run(in + " sched timehist" + from);
        EXPECT_EQ(th.status, 0) << th.both();
        EXPECT_EQ(count_lines(th.out, "alpha[100]"), std::size_t(n)) << th.out;
        auto lat = run(in + " sched latency --pids" + from);
        EXPECT_EQ(lat.status, 0) << lat.both();
        // Each switch in follows a wakeup: one latency per switch in.
        // "  alpha:100 |  0.080 ms |  40 | avg: ..." : the third column.
        std::string seen;
        std::istringstream ls(lat.out);
        for (std::string l; std::getline(ls, l);) {
            if (l.find(" alpha:100 ") == std::string::npos)
                continue;
            std::istringstream cols(l);
            std::string task, runtime, switches;
            std::getline(cols, task, '|');
            std::getline(cols, runtime, '|');
            std::getline(cols, switches, '|');
            seen = switches.substr(switches.find_first_not_of(' '));
            seen.erase(seen.find_last_not_of(' ') + 1);
        }
        EXPECT_EQ(seen, std::to_string(n)) << lat.out;
    }
}

// A producer's record layout (KRING_IOC_GET_FORMATS's block) re-rendered
// as a tracepoint: the ID given, the kernel's common fields ahead, every
// offset shifted by 8, the print fmt kept; what is not a block of kring's
// rendering is refused with the line named.
TEST(PerfData, KringFormatAsTracepoint) {
    auto t = pd::kring_format_as_tracepoint(tp_fixture::producer_block, "kring", 65280);
    ASSERT_TRUE(t) << t.error().message();
    EXPECT_EQ(t->record_type, 65792u);
    EXPECT_EQ(t->body_size, 28u);
    EXPECT_EQ(t->format.system, "kring");
    EXPECT_EQ(t->format.name, "my_record");
    EXPECT_EQ(t->format.id, 65280u);
    EXPECT_EQ(t->format.size, 36u);
    EXPECT_EQ(t->format.text, tp_fixture::producer_tracepoint);
    ASSERT_EQ(t->format.fields.size(), 7u);
    EXPECT_EQ(t->format.fields.at("common_type").offset, 0u);
    EXPECT_EQ(t->format.fields.at("common_type").size, 2u);
    EXPECT_EQ(t->format.fields.at("common_flags").offset, 2u);
    EXPECT_EQ(t->format.fields.at("common_preempt_count").offset, 3u);
    EXPECT_EQ(t->format.fields.at("common_pid").offset, 4u);
    EXPECT_EQ(t->format.fields.at("common_pid").size, 4u);
    EXPECT_EQ(t->format.fields.at("total").offset, 8u);
    EXPECT_EQ(t->format.fields.at("who").offset, 16u);
    EXPECT_EQ(t->format.fields.at("who").size, 16u);
    EXPECT_EQ(t->format.fields.at("owner").offset, 32u);
    // Its payload: the common header, then the record's body as written.
    std::vector<std::byte> body(28);  // t->body_size, checked above
    const std::uint64_t total = 300;
    std::memcpy(body.data(), &total, 8);
    std::memcpy(body.data() + 8, "abc", 3);
    pd::tp_payload pl(t->format);
    pl.set("common_pid", 77).set_bytes(8, body);
    const std::vector<std::byte>& p = pl.bytes();
    ASSERT_EQ(p.size(), 36u);
    std::uint16_t type;
    std::int32_t pid;
    std::memcpy(&type, p.data(), 2);
    std::memcpy(&pid, p.data() + 4, 4);
    EXPECT_EQ(type, 65280);
    EXPECT_EQ(pid, 77);
    EXPECT_TRUE(std::equal(body.begin(), body.end(), p.begin() + 8));

    const std::string head = "name: r\nID: 65792\nformat:\n";
    const std::string field = "\tfield:u64 total;\toffset:0;\tsize:8;\tsigned:0;\n";
    const std::string tail = "\nprint fmt: \"total=%llu\", REC->total\n";
    EXPECT_TRUE(pd::kring_format_as_tracepoint(head + field + tail, "kring", 1));
    // Each of these differs from the one accepted above in one place.
    for (const std::string& bad : {
             std::string(),
             head + field,                                     // no print fmt
             head + tail,                                      // no fields
             "name: 1r\nID: 65792\nformat:\n" + field + tail,  // name
             "name: r\nID: x\nformat:\n" + field + tail,       // ID
             "name: r\nID: 65792\nformats:\n" + field + tail,  // format line
             head + "\tfield:u64 common_total;\toffset:0;\tsize:8;\tsigned:0;\n" + tail,
             head + "\tfield:u64 total;\toffset:65530;\tsize:8;\tsigned:0;\n" + tail,
             head + "\tfield:u64 total;\toffset:0;\tsize:0;\tsigned:0;\n" + tail,
             head + "\tfield:u64 total;\toffset:0;\tsize:8;\tsigned:2;\n" + tail,
             head + "\tfield:u64 total;\toffset:0;\tsize:8;\n" + tail,
             head + "\tfield:total;\toffset:0;\tsize:8;\tsigned:0;\n" + tail,
             head + field + field + tail,  // a name twice
             head + field + tail + "more\n",
         })
        EXPECT_FALSE(pd::kring_format_as_tracepoint(bad, "kring", 65280)) << bad;
    std::string many = head;
    for (int i = 0; i < 65; i++)
        many += "\tfield:u8 f" + std::to_string(i) + ";\toffset:" + std::to_string(i) +
                ";\tsize:1;\tsigned:0;\n";
    EXPECT_FALSE(pd::kring_format_as_tracepoint(many + tail, "kring", 65280)) << "65 fields";
    EXPECT_FALSE(pd::kring_format_as_tracepoint(head + field + tail, "kring", 0)) << "ID 0";
    EXPECT_FALSE(pd::kring_format_as_tracepoint(head + field + tail, "kr:ing", 1)) << "system";
}

// A producer's records as samples of their tracepoint, declared after the
// file was created (writer::add_attr(), as kring record meets them), with
// tracing data holding the re-rendered format: perf script prints every
// record's fields by name with the values written.
TEST(PerfData, KringFormatSamplesReadByPerfScript) {
    auto t = pd::kring_format_as_tracepoint(tp_fixture::producer_block, "kring", 65280);
    ASSERT_TRUE(t) << t.error().message();
    ASSERT_EQ(t->body_size, 28u);
    tmpdir d;
    ASSERT_TRUE(d.ok());
    const auto path = d.file("producer.data");
    auto w = pd::writer::create(path, {});
    ASSERT_TRUE(w) << w.error().message();
    ASSERT_TRUE(w->add_attr(attr("kring:my_record", t->format.id, 5)));
    const int n = 6;
    for (int i = 0; i < n; i++) {
        std::vector<std::byte> body(28);  // t->body_size, checked above
        const std::uint64_t total = 1000 + std::uint64_t(i);
        const std::int32_t owner = -i;
        const std::string who = "who" + std::to_string(i);
        std::memcpy(body.data(), &total, 8);
        std::memcpy(body.data() + 8, who.data(), who.size());
        std::memcpy(body.data() + 24, &owner, 4);
        const auto raw =
            pd::tp_payload(t->format).set("common_pid", 100).set_bytes(8, body).bytes();
        pd::sample s;
        s.id = 5;
        s.pid = s.tid = 100;
        s.time = 1000000 + std::uint64_t(i) * 1000;
        s.has_time = true;
        s.period = 1;
        s.raw = raw;
        ASSERT_TRUE(w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, s, k_tp_type)));
    }
    ASSERT_TRUE(w->write_tracing_data(
        pd::tracing_data(tp_fixture::header_page, tp_fixture::header_event, {&t->format}, 4096)));
    const char* argv[] = {"perf_data_test"};
    ASSERT_TRUE(w->finish(pd::features::from_system(1, argv)));
    auto f = pd::file::open(path);
    ASSERT_TRUE(f) << f.error().message();
    ASSERT_EQ(f->attrs().size(), 1u);
    EXPECT_EQ(f->attrs()[0].attr.config, 65280u);
    auto td = pd::parse_tracing_data(f->feats().tracing_data);
    ASSERT_TRUE(td) << td.error().message();
    ASSERT_EQ(td->events.size(), 1u);
    EXPECT_EQ(td->events[0].first, "kring");
    EXPECT_EQ(td->events[0].second, tp_fixture::producer_tracepoint);

    const auto perf = find_perf();
    if (perf.empty())
        GTEST_SKIP() << "skipped: perf is not installed (linux-perf; tools/dev/deps.sh)";
    auto s = run(perf + " script -i " + path);
    EXPECT_EQ(s.status, 0) << s.both();
    EXPECT_TRUE(complaints(s.out + s.err, {}).empty()) << s.both();
    EXPECT_EQ(count_lines(s.out, "kring:my_record:"), std::size_t(n)) << s.out;
    for (int i = 0; i < n; i++)
        EXPECT_EQ(
            count_lines(s.out, "kring:my_record: total=" + std::to_string(1000 + i) + " who=who" +
                                   std::to_string(i) + " owner=" + std::to_string(-i)),
            1u)
            << s.out;
}

}  // namespace
