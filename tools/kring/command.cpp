// The helpers every command shares: CPU lists and the summary line.
#include <set>

#include <fmt/core.h>

#include "command.hpp"

namespace kring_tool {

std::optional<std::vector<int>> parse_cpu_list(std::string_view list) {
    std::set<int> cpus;
    auto number = [](std::string_view s) -> std::optional<int> {
        if (s.empty() || s.size() > 6)
            return std::nullopt;
        int v = 0;
        for (char c : s) {
            if (c < '0' || c > '9')
                return std::nullopt;
            v = v * 10 + (c - '0');
        }
        return v;
    };
    while (!list.empty()) {
        auto comma = list.find(',');
        std::string_view item = list.substr(0, comma);
        list = comma == std::string_view::npos ? std::string_view{} : list.substr(comma + 1);
        if (comma != std::string_view::npos && list.empty())
            return std::nullopt;  // trailing comma
        auto dash = item.find('-');
        auto lo = number(item.substr(0, dash));
        auto hi = dash == std::string_view::npos ? lo : number(item.substr(dash + 1));
        if (!lo || !hi || *hi < *lo)
            return std::nullopt;
        for (int c = *lo; c <= *hi; c++)
            cpus.insert(c);
    }
    if (cpus.empty())
        return std::nullopt;
    return std::vector<int>(cpus.begin(), cpus.end());
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
