// The fields of a recording's tracepoint samples (sched:sched_switch, ...)
// by name, decoded with Debian's libtraceevent from the formats in the
// recording's tracing data. A kring built without libtraceevent (the
// arm64 guests') decodes nothing and says so.
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
    // left out; nullopt when no format of the tracing data describes it.
    std::optional<std::vector<tp_field_value>> decode(std::span<const std::byte> raw) const;
    // Why decode() gives nothing at all ("" when it can decode).
    const std::string& unavailable() const noexcept { return why_; }

private:
    struct impl;
    std::unique_ptr<impl> p_;
    std::string why_;
};

}  // namespace kring_tool
