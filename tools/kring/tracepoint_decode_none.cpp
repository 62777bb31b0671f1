// tracepoint_decode.hpp without libtraceevent: nothing is decoded.
#include "tracepoint_decode.hpp"

namespace kring_tool {

struct tracepoint_decoder::impl {};

tracepoint_decoder::tracepoint_decoder(std::span<const std::byte>)
    : why_("this kring was built without libtraceevent") {}

tracepoint_decoder::~tracepoint_decoder() = default;

std::optional<std::vector<tp_field_value>> tracepoint_decoder::decode(
    std::span<const std::byte>) const {
    return std::nullopt;
}

}  // namespace kring_tool
