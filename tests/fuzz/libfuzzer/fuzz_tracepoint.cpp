// libFuzzer: the kring tool's tracepoint decoder
// (tools/kring/tracepoint_decode.cpp: Debian's libtraceevent reads the
// formats of a recording's tracing data, kring reads the samples' RAWs)
// on the path report, script and export take. Bytes that read as a
// perf.data file (libkring's reader) are one: its tracing data makes the
// decoder, and every RAW of a tracepoint event's samples is decoded, as
// trace_model.cpp does. Other bytes are a u16 RAW length, that many
// bytes of RAW, then tracing data, so that the format text and the RAW
// are mutated directly. A decoder never reads outside a RAW (ASan), and
// what it decodes is no longer than the RAW.
#include <cstdint>
#include <cstring>
#include <span>
#include <vector>

#include "fuzz_input.hpp"
#include "kring/perf_data.hpp"
#include "tracepoint_decode.hpp"

namespace pd = kring::perf_data;

namespace {

// @raw copied to a heap block of its own size, so that ASan sees a read
// past its end.
void decode(const kring_tool::tracepoint_decoder& d, std::span<const std::byte> raw) {
    std::vector<std::byte> own(raw.begin(), raw.end());
    auto v = d.decode(own);
    if (!v)
        return;
    KF_CHECK(d.unavailable().empty());
    for (const auto& f : *v) {
        KF_CHECK(!f.name.empty());
        if (const auto* s = std::get_if<std::string>(&f.value))
            KF_CHECK(s->size() <= own.size());
    }
}

void check_refused(const kring_tool::tracepoint_decoder& d) {
    for (const auto& r : d.refused())
        KF_CHECK(!r.name.empty() && !r.why.empty());
}

}  // namespace

// libtraceevent 1.7.1 leaks a token on some malformed field lines
// (tep_parse_format(), e.g. "field:clongnext_comm[16];"): Debian's
// library, not this harness's to fix. The tool parses each format once.
// The library has no frame pointers: where the fast unwinder loses its
// frames the leak shows as asprintf()'s alone, which neither kring nor
// this harness calls.
extern "C" const char* __lsan_default_suppressions() {
    return "leak:libtraceevent.so\nleak:__vasprintf_internal\n";
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    const auto* bytes = reinterpret_cast<const std::byte*>(data);
    if (size >= 8 && std::memcmp(data, "PERFILE2", 8) == 0) {
        auto f = pd::file::from_bytes(std::vector<std::byte>(bytes, bytes + size));
        if (!f)
            return 0;
        const kring_tool::tracepoint_decoder d(f->feats().tracing_data);
        check_refused(d);
        (void)f->for_each([&](const pd::record_view& r) {
            const pd::event_attr* a = f->attr_of(r);
            if (r.type() != PERF_RECORD_SAMPLE || !a || a->attr.type != PERF_TYPE_TRACEPOINT)
                return;
            if (auto s = pd::parse_sample(r, a->attr.sample_type))
                decode(d, s->raw);
        });
        return 0;
    }
    kf::input in(data, size);
    const auto n = in.take<std::uint16_t>();
    const auto raw = in.bytes(n);
    const auto rest = in.bytes(in.left());
    const kring_tool::tracepoint_decoder d(
        {reinterpret_cast<const std::byte*>(rest.data()), rest.size()});
    check_refused(d);
    decode(d, {reinterpret_cast<const std::byte*>(raw.data()), raw.size()});
    return 0;
}
