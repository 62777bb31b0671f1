// The kring tool's one error reporter and its summary line.
#include <cstdio>

#include <fmt/core.h>

#include "command.hpp"

namespace kring_tool {

int report(const kring::error& e, std::string_view hint) {
    std::fflush(stdout);
    if (hint.empty())
        fmt::print(stderr, "kring: {}\n", e.message());
    else
        fmt::print(stderr, "kring: {} ({})\n", e.message(), hint);
    return exit_runtime;
}

int report(std::string_view what) {
    std::fflush(stdout);
    fmt::print(stderr, "kring: {}\n", what);
    return exit_runtime;
}

void print_summary(std::string_view command,
                   const std::vector<std::pair<std::string, std::uint64_t>>& fields) {
    std::string line = fmt::format("summary {}", command);
    for (const auto& [k, v] : fields)
        line += fmt::format(" {}={}", k, v);
    fmt::print("{}\n", line);
    std::fflush(stdout);
}

}  // namespace kring_tool
