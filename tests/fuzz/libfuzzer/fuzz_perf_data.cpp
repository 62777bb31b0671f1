// libFuzzer: libkring's perf.data reader (kring/perf_data.hpp) over
// arbitrary bytes as a file: the header, attrs, ids, feature sections (the
// kring and AUXTRACE sections included) and the data section, then every
// record through every parser. The reader may refuse a file or report it
// truncated; it must never read outside the bytes, and every record it
// hands out must lie within them and obey the header rules.
#include <cstdint>
#include <cstring>
#include <vector>

#include "fuzz_input.hpp"
#include "kring/perf_data.hpp"

namespace pd = kring::perf_data;

namespace {

// Every field the parsers know of, in every layout they can be asked for.
constexpr std::uint64_t k_all = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
                                PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR | PERF_SAMPLE_ID |
                                PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
                                PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW;

// A RAW span must lie within its record (which lies within the file).
void parse_all(const pd::record_view& r, std::uint64_t st) {
    if (auto s = pd::parse_sample(r, st)) {
        KF_CHECK(s->raw.empty() ||
                 (s->raw.data() >= r.bytes.data() &&
                  s->raw.data() + s->raw.size() <= r.bytes.data() + r.bytes.size()));
        const auto cc = s->callchain.bytes;
        KF_CHECK(cc.size() % 8 == 0);
        KF_CHECK(cc.empty() || (cc.data() >= r.bytes.data() &&
                                cc.data() + cc.size() <= r.bytes.data() + r.bytes.size()));
        for (std::size_t i = 0; i < s->callchain.size(); i++)
            (void)s->callchain[i];
        // A sample built from what was parsed parses to the same values.
        const std::uint64_t bst = st & ~std::uint64_t{PERF_SAMPLE_CALLCHAIN};
        if (!(st & PERF_SAMPLE_READ) && s->raw.size() <= 60000) {
            auto again = pd::make_sample(r.misc(), *s, bst);
            pd::record_view rv;
            rv.bytes = again;
            auto t = pd::parse_sample(rv, bst);
            KF_CHECK(t);
            KF_CHECK(t->id == s->id && t->ip == s->ip && t->pid == s->pid && t->tid == s->tid &&
                     t->time == s->time && t->cpu == s->cpu && t->period == s->period);
            KF_CHECK(t->raw.size() >= s->raw.size() && t->raw.size() < s->raw.size() + 8);
        }
    }
    (void)pd::parse_sample_id(r, st);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::vector<std::byte> bytes(size);
    if (size)
        std::memcpy(bytes.data(), data, size);
    // The file keeps its own copy: records are checked against @data by
    // their offsets.
    auto f = pd::file::from_bytes(bytes);
    if (!f) {
        KF_CHECK(f.error().code() == EINVAL);
        return 0;
    }
    if (f->truncated())
        KF_CHECK(f->truncation_info()->offset <= size);
    std::size_t n = 0;
    std::uint64_t last = 0;
    const auto& attrs = f->attrs();
    auto r = f->for_each([&](const pd::record_view& r) {
        n++;
        KF_CHECK(r.bytes.size() >= 8 && r.bytes.size() % 8 == 0);
        KF_CHECK(r.offset + r.bytes.size() + r.auxtrace.size() <= size);
        perf_event_header h;
        std::memcpy(&h, r.bytes.data(), sizeof(h));
        KF_CHECK(h.size == r.bytes.size());
        KF_CHECK(r.type() == h.type && r.misc() == h.misc);
        KF_CHECK(std::memcmp(r.bytes.data(), data + r.offset, r.bytes.size()) == 0);
        KF_CHECK(r.auxtrace.empty() || r.type() == pd::record_auxtrace);
        if (r.type() != pd::record_auxtrace) {
            KF_CHECK(r.offset >= last);
            last = r.offset;
        }
        if (const auto* a = f->attr_of(r))
            KF_CHECK(a >= attrs.data() && a < attrs.data() + attrs.size());
        if (auto c = pd::parse_comm(r))
            KF_CHECK(c->comm.size() < r.bytes.size());
        (void)pd::parse_switch(r);
        (void)pd::parse_task(r);
        (void)pd::parse_lost(r);
        (void)pd::parse_aux(r);
        if (auto a = pd::parse_auxtrace(r))
            KF_CHECK(r.auxtrace.size() == a->size);
        // MMAP and MMAP2: a name within the record, a build id of at most
        // 20 bytes; a refusal is EINVAL with a message.
        if (auto m = pd::parse_mmap(r)) {
            KF_CHECK(m->filename.size() < r.bytes.size());
            KF_CHECK(m->build_id.size() <= pd::max_build_id_size);
        } else {
            KF_CHECK(m.error().code() == EINVAL && !m.error().message().empty());
        }
        if (auto it = pd::parse_itrace_start(r); !it)
            KF_CHECK(it.error().code() == EINVAL && !it.error().message().empty());
        for (const auto& a : attrs)
            parse_all(r, a.attr.sample_type);
        parse_all(r, k_all);
        parse_all(r, k_all | PERF_SAMPLE_READ);
    });
    KF_CHECK(r);
    for (const auto& a : attrs)
        for (auto id : a.ids)
            KF_CHECK(f->attr_by_id(id) != nullptr);
    // The kring section decoder over the raw bytes as well.
    if (auto k = pd::decode_kring_section({bytes.data(), bytes.size()}))
        KF_CHECK(k->rings.size() <= size / 8);
    return 0;
}
