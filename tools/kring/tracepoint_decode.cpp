// tracepoint_decode.hpp with libtraceevent.
#include "tracepoint_decode.hpp"

#include <cstring>

extern "C" {
#include <traceevent/event-parse.h>
}

#include "kring/perf_data.hpp"

namespace kring_tool {

struct tracepoint_decoder::impl {
    tep_handle* tep = nullptr;
    ~impl() {
        if (tep)
            tep_free(tep);
    }
};

tracepoint_decoder::tracepoint_decoder(std::span<const std::byte> tracing_data)
    : p_(std::make_unique<impl>()) {
    if (tracing_data.empty()) {
        why_ = "the recording has no tracing data";
        return;
    }
    auto t = kring::perf_data::parse_tracing_data(tracing_data);
    if (!t) {
        why_ = t.error().message();
        return;
    }
    p_->tep = tep_alloc();
    if (!p_->tep) {
        why_ = "libtraceevent: no memory";
        return;
    }
    tep_set_long_size(p_->tep, t->long_size);
    tep_set_page_size(p_->tep, int(t->page_size));
    tep_set_file_bigendian(p_->tep, t->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_local_bigendian(p_->tep, TEP_LITTLE_ENDIAN);
    for (const auto& [sys, text] : t->events)
        (void)tep_parse_event(p_->tep, text.data(), text.size(), sys.c_str());
}

tracepoint_decoder::~tracepoint_decoder() = default;

std::optional<std::vector<tp_field_value>> tracepoint_decoder::decode(
    std::span<const std::byte> raw) const {
    if (!p_->tep || raw.size() < 2)
        return std::nullopt;
    tep_record rec{};
    rec.data = const_cast<std::byte*>(raw.data());
    rec.size = int(raw.size());
    tep_event* ev = tep_find_event_by_record(p_->tep, &rec);
    if (!ev)
        return std::nullopt;
    std::vector<tp_field_value> out;
    for (tep_format_field* f = ev->format.fields; f; f = f->next) {
        // A field past the RAW data (a shorter record than its format).
        if (f->offset < 0 || f->size < 0 ||
            std::size_t(f->offset) + std::size_t(f->size) > raw.size())
            return std::nullopt;
        const char* at = reinterpret_cast<const char*>(raw.data()) + f->offset;
        if ((f->flags & TEP_FIELD_IS_STRING) ||
            ((f->flags & TEP_FIELD_IS_ARRAY) && f->elementsize == 1 &&
             !(f->flags & TEP_FIELD_IS_DYNAMIC))) {
            out.push_back({f->name, std::string(at, strnlen(at, std::size_t(f->size)))});
            continue;
        }
        if ((f->flags & (TEP_FIELD_IS_ARRAY | TEP_FIELD_IS_DYNAMIC)) || f->size > 8)
            continue;  // not a number or a string: left out
        unsigned long long v = 0;
        if (tep_read_number_field(f, raw.data(), &v) != 0)
            return std::nullopt;
        std::int64_t sv = std::int64_t(v);
        if ((f->flags & TEP_FIELD_IS_SIGNED) && f->size < 8) {
            const unsigned bits = unsigned(f->size) * 8;
            sv = std::int64_t(v << (64 - bits)) >> (64 - bits);
        }
        out.push_back({f->name, sv});
    }
    return out;
}

}  // namespace kring_tool
