// The helpers every command shares: the summary line.
#include <fmt/core.h>

#include "command.hpp"

namespace kring_tool {

void print_summary(std::string_view command,
                   const std::vector<std::pair<std::string, std::uint64_t>>& fields) {
    std::string line = fmt::format("summary {}", command);
    for (const auto& [k, v] : fields)
        line += fmt::format(" {}={}", k, v);
    fmt::print("{}\n", line);
    std::fflush(stdout);
}

}  // namespace kring_tool
