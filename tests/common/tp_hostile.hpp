// Hostile tracing data: perf.data files whose tracing data declares a
// tracepoint format (sched:evil, ID 300) with fields outside what a
// sample's RAW can hold, or RAWs whose __data_loc fields point outside
// them, next to a sound sched:sched_switch (ID 316) and a sample of each.
// kring report, script and export read them (tests/tool/tool_test.cpp);
// the libFuzzer harness of the tracepoint decoder starts from them
// (tests/fuzz/libfuzzer/tracepoint_seeds.cpp writes its seeds).
#pragma once

#include <cstdint>
#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "kring/perf_data.hpp"
#include "tp_fixture.hpp"

namespace tp_hostile {

namespace pd = kring::perf_data;

constexpr std::uint32_t evil_id = 300;
constexpr std::uint64_t evil_sid = 1, switch_sid = 2;

struct shape {
    const char* name;
    std::string format;  // the text of sched:evil
    // The RAWs of sched:evil's samples (common_type 300 at offset 0).
    std::vector<std::vector<std::byte>> raws;
    bool refused;  // kring refuses the format (else it decodes the RAWs)
    // Accepted: what the first RAW decodes to ("pid=0"); the others are
    // not decoded.
    const char* first = "";
};

// A RAW of @n bytes: common_type = 300 at offset 0, then zeros.
inline std::vector<std::byte> evil_raw(std::size_t n) {
    std::vector<std::byte> b(n);
    const std::uint16_t t = evil_id;
    std::memcpy(b.data(), &t, sizeof(t));
    return b;
}

// A RAW of sched:evil's __data_loc shape: `name` (the u32 at offset 8)
// says @len bytes at @off; "hello" and its NUL at offset 16.
inline std::vector<std::byte> loc_raw(std::uint32_t off, std::uint32_t len) {
    auto b = evil_raw(24);
    const std::uint32_t loc = (len << 16) | off;
    std::memcpy(b.data() + 8, &loc, sizeof(loc));
    std::memcpy(b.data() + 16, "hello", 6);
    return b;
}

inline std::string evil_format(const std::string& common_type, const std::string& fields,
                               const std::string& print = "\"pid=%d\", REC->pid") {
    return "name: evil\nID: 300\nformat:\n" + common_type +
           "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
           "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
           "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n" +
           fields + "\nprint fmt: " + print + "\n";
}

inline const std::string common_type_at_0 =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n";
inline const std::string pid_at_8 = "\tfield:int pid;\toffset:8;\tsize:4;\tsigned:1;\n";

// The shapes: the first is the one libtraceevent's own lookup of the
// event type (tep_find_event_by_record()) reads a gigabyte past.
inline std::vector<shape> shapes() {
    return {
        {"common_type_far",
         evil_format(
             "\tfield:unsigned short common_type;\toffset:1073741824;\tsize:2;\tsigned:0;\n",
             pid_at_8),
         {evil_raw(16)},
         true},
        {"common_type_past_raw",
         evil_format("\tfield:unsigned short common_type;\toffset:65528;\tsize:2;\tsigned:0;\n",
                     pid_at_8),
         {evil_raw(16)},
         true},
        {"no_common_type", evil_format("", pid_at_8), {evil_raw(16)}, true},
        {"field_far",
         evil_format(common_type_at_0,
                     "\tfield:int pid;\toffset:2147483640;\tsize:4;\tsigned:1;\n"),
         {evil_raw(16)},
         true},
        {"field_negative",
         evil_format(common_type_at_0,
                     "\tfield:int pid;\toffset:4294967292;\tsize:4;\tsigned:1;\n"),
         {evil_raw(16)},
         true},
        {"field_size_negative",
         evil_format(common_type_at_0,
                     "\tfield:char comm[16];\toffset:8;\tsize:4294967295;\tsigned:0;\n"),
         {evil_raw(16)},
         true},
        {"data_loc_wide",
         evil_format(common_type_at_0,
                     "\tfield:__data_loc char[] name;\toffset:8;\tsize:8;\tsigned:0;\n"),
         {loc_raw(16, 6)},
         true},
        // Text libtraceevent does not read as fields, or as a format.
        {"field_line_unreadable",
         evil_format(common_type_at_0, "\tfield:int pid;\toffset:8;\tsize:4;\tsigned:1; x\n"),
         {evil_raw(16)},
         true},
        {"no_name", evil_format(common_type_at_0, pid_at_8).substr(11), {evil_raw(16)}, true},
        // A text that ends in an unclosed '[', which libtraceevent 1.7.1's
        // field parser reads past (a NULL token).
        {"bracket_at_end",
         "name: evil\nID: 300\nformat:\n" + common_type_at_0 + "\n\tfield:char comm[",
         {evil_raw(24)},
         true},
        // Sound formats, RAWs whose __data_loc points outside them (the
        // first RAW's is sound; a 24-byte RAW is 28 in its sample, padded).
        {"data_loc_outside",
         evil_format(common_type_at_0,
                     "\tfield:__data_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"),
         {loc_raw(16, 6), loc_raw(60000, 16), loc_raw(16, 0xffff), loc_raw(20, 16)},
         false,
         "name=hello"},
        {"rel_loc_outside",
         evil_format(common_type_at_0,
                     "\tfield:__rel_loc char[] name;\toffset:8;\tsize:4;\tsigned:0;\n"),
         {loc_raw(4, 6), loc_raw(65000, 4)},
         false,
         "name=hello"},
        // Declarations as real kernels write them (tcp:tcp_probe's
        // sizeof() array, a __user pointer after the kernel's
        // sanitize_field_type()): sound, decoded.
        {"kernel_declarations",
         evil_format(common_type_at_0,
                     pid_at_8 +
                         "\tfield:__u8 saddr[sizeof(struct sockaddr_in6)];\toffset:12;\tsize:28;"
                         "\tsigned:0;\n"
                         "\tfield:const char __attribute__((user)) * filename;\toffset:40;"
                         "\tsize:8;\tsigned:0;\n"),
         {evil_raw(48)},
         false,
         "pid=0 saddr=\"\" filename=0"},
        // A print fmt libtraceevent 1.7.1's parser dereferences NULL on (a
        // field the format lacks, inside __print_flags()): kring does not
        // hand it the print fmt, the fields are sound.
        {"print_flags_missing_field",
         evil_format(common_type_at_0, pid_at_8,
                     "\"%s\", __print_flags(REC->nope, \"|\", { 1, \"A\" })"),
         {evil_raw(16)},
         false,
         "pid=0"},
    };
}

// The file of @s at @path: the attrs of sched:evil and sched:sched_switch,
// the tracing data with both formats, the RAWs of @s, then one
// sched_switch sample. Empty, or what failed.
inline std::string write_file(const std::string& path, const shape& s) {
    auto sw = pd::parse_tp_format("sched", tp_fixture::sched_switch);
    if (!sw)
        return sw.error().message();
    // Not a format parse_tp_format() takes: the text as it is.
    pd::tp_format evil;
    evil.system = "sched";
    evil.name = "evil";
    evil.id = evil_id;
    evil.text = s.format;
    auto w = pd::writer::create(path, {tp_fixture::attr("sched:evil", evil_id, evil_sid),
                                       tp_fixture::attr("sched:sched_switch", sw->id, switch_sid)});
    if (!w)
        return w.error().message();
    if (auto r = w->write_tracing_data(pd::tracing_data(
            tp_fixture::header_page, tp_fixture::header_event, {&evil, &*sw}, 4096));
        !r)
        return r.error().message();
    std::uint64_t t = 1000;
    auto put = [&](std::uint64_t sid, std::span<const std::byte> raw) {
        pd::sample smp;
        smp.id = sid;
        smp.pid = smp.tid = 100;
        smp.time = t++;
        smp.has_time = true;
        smp.period = 1;
        smp.raw = raw;
        return w->write(pd::make_sample(PERF_RECORD_MISC_KERNEL, smp, tp_fixture::sample_type));
    };
    for (const auto& raw : s.raws)
        if (auto r = put(evil_sid, raw); !r)
            return r.error().message();
    auto good = pd::tp_payload(*sw)
                    .set_str("prev_comm", "alpha")
                    .set("prev_pid", 100)
                    .set_str("next_comm", "beta")
                    .set("next_pid", 200)
                    .bytes();
    if (auto r = put(switch_sid, good); !r)
        return r.error().message();
    if (auto r = w->finish({}); !r)
        return r.error().message();
    return {};
}

}  // namespace tp_hostile
