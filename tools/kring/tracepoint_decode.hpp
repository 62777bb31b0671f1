// The fields of a recording's tracepoint samples (sched:sched_switch, ...)
// by name, from the formats in the recording's tracing data, which
// Debian's libtraceevent parses. A format with a field a RAW cannot hold
// (past the 65523 bytes a sample's RAW holds, a negative offset or size,
// a __data_loc that is not a u32, no common_type, common_type elsewhere
// than in the formats before) is refused; the RAWs are read by kring
// alone, every field within the RAW (a dynamic array's data too). A kring
// built without libtraceevent (the arm64 guests') decodes nothing and
// says so.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace kring_tool {

struct tp_field_value {
    std::string name;
    std::variant<std::int64_t, std::string> value;
};

class tracepoint_decoder {
public:
    // From perf's tracing data (empty: a decoder that knows no event).
    explicit tracepoint_decoder(std::span<const std::byte> tracing_data);
    ~tracepoint_decoder();
    tracepoint_decoder(const tracepoint_decoder&) = delete;
    tracepoint_decoder& operator=(const tracepoint_decoder&) = delete;

    // The fields of @raw (a tracepoint sample's RAW), the common_* ones
    // left out; nullopt when no accepted format describes it (its
    // common_type names none) or a field lies outside it.
    std::optional<std::vector<tp_field_value>> decode(std::span<const std::byte> raw) const;
    // Why decode() gives nothing at all ("" when it can decode).
    const std::string& unavailable() const noexcept { return why_; }
    // The formats of the tracing data that were refused, and why.
    struct refused_format {
        std::string name;  // "sched:sched_switch"
        std::string why;   // "field prev_pid at offset ..."
    };
    const std::vector<refused_format>& refused() const noexcept { return refused_; }

private:
    struct impl;
    std::unique_ptr<impl> p_;
    std::string why_;
    std::vector<refused_format> refused_;
};

}  // namespace kring_tool
