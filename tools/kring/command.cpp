// The helpers every command shares: the summary line.
#include <cstdio>

#include <fmt/core.h>

#include "command.hpp"

namespace kring_tool {

namespace {
std::FILE* summary_stream = nullptr;  // stdout unless set
}  // namespace

void print_summary(std::string_view command,
                   const std::vector<std::pair<std::string, std::uint64_t>>& fields) {
    std::string line = fmt::format("summary {}", command);
    for (const auto& [k, v] : fields)
        line += fmt::format(" {}={}", k, v);
    std::FILE* f = summary_stream ? summary_stream : stdout;
    fmt::print(f, "{}\n", line);
    std::fflush(f);
}

void summary_to_stderr() { summary_stream = stderr; }

}  // namespace kring_tool
