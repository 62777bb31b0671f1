// libFuzzer: the tracepoint format parser of libkring's perf.data
// component (pd::parse_tp_format(), the text tracefs serves and a
// recording's tracing data holds) over arbitrary text. A format it accepts
// has every field inside its size, a payload built from it is that size
// whatever is set, and its tracing data holds its text; parsing the text
// again gives the same format. The same text as a block of kring's own
// rendering (KRING_IOC_GET_FORMATS: pd::kring_format_as_tracepoint()),
// when accepted, becomes a tracepoint whose 8-byte common header comes
// first, whose fields lie inside it, and whose text parses as a format.
#include <cstdint>
#include <string>

#include "fuzz_input.hpp"
#include "kring/perf_data.hpp"

namespace pd = kring::perf_data;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::string text(reinterpret_cast<const char*>(data), size);
    if (auto k = pd::kring_format_as_tracepoint(text, "kring", 0xff00)) {
        const pd::tp_format& kf = k->format;
        KF_CHECK(kf.id == 0xff00 && kf.size == 8 + k->body_size && kf.size <= 0xffff + 8);
        for (const char* c : {"common_type", "common_flags", "common_preempt_count", "common_pid"})
            KF_CHECK(kf.fields.count(c) && kf.fields.find(c)->second.offset < 8);
        for (const auto& [name, fd] : kf.fields)
            KF_CHECK(std::uint64_t(fd.offset) + fd.size <= kf.size);
        auto back = pd::parse_tp_format("kring", kf.text);
        KF_CHECK(back && back->id == kf.id && back->fields.size() == kf.fields.size());
    }
    auto f = pd::parse_tp_format("fuzz", text);
    if (!f)
        return 0;
    KF_CHECK(f->id > 0 && f->id <= 0xffff && !f->name.empty() && !f->fields.empty());
    KF_CHECK(f->size <= 0xffff);
    for (const auto& [name, fd] : f->fields) {
        KF_CHECK(!name.empty());
        KF_CHECK(std::uint64_t(fd.offset) + fd.size <= f->size);
    }
    pd::tp_payload p(*f);
    for (const auto& [name, fd] : f->fields) {
        p.set(name, -1);
        p.set_str(name, std::string(fd.size + 3, 'x'));
    }
    KF_CHECK(p.bytes().size() == f->size);
    auto td = pd::tracing_data("page", "event", {&*f}, 4096);
    KF_CHECK(td.size() > text.size());
    auto again = pd::parse_tp_format("fuzz", f->text);
    KF_CHECK(again && again->id == f->id && again->size == f->size &&
             again->fields.size() == f->fields.size());
    return 0;
}
