// libkring: CPU lists (kring/cpus.hpp).
#include "kring/cpus.hpp"

#include <set>

namespace kring {

std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view list) {
    if (!list.empty() && list.back() == '\n')
        list.remove_suffix(1);
    auto number = [](std::string_view s) -> std::optional<unsigned> {
        if (s.empty() || s.size() > 6)
            return std::nullopt;
        unsigned v = 0;
        for (char c : s) {
            if (c < '0' || c > '9')
                return std::nullopt;
            v = v * 10 + unsigned(c - '0');
        }
        return v;
    };
    std::set<unsigned> cpus;
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
        for (unsigned c = *lo; c <= *hi; c++)
            cpus.insert(c);
    }
    if (cpus.empty())
        return std::nullopt;
    return std::vector<unsigned>(cpus.begin(), cpus.end());
}

std::string format_cpu_list(std::span<const unsigned> cpus) {
    std::string s;
    for (std::size_t i = 0; i < cpus.size();) {
        std::size_t j = i;
        while (j + 1 < cpus.size() && cpus[j + 1] == cpus[j] + 1)
            ++j;
        if (!s.empty())
            s += ',';
        s += std::to_string(cpus[i]);
        if (j > i)
            s += '-' + std::to_string(cpus[j]);
        i = j + 1;
    }
    return s;
}

}  // namespace kring
