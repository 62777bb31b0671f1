// libkring: CPU lists, as the kernel prints them in sysfs and as perf's -C
// takes them ("0-3,6").
//
//	auto cpus = kring::parse_cpu_list("0,2-3");   // {0, 2, 3}
//	kring::format_cpu_list(*cpus);                  // "0,2-3"
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace kring {

// The CPUs of @list, sorted, each once: comma-separated numbers and ranges
// a-b (a <= b), numbers of at most 6 digits; one trailing newline (as sysfs
// prints it) is allowed. nullopt for anything else, the empty list included.
std::optional<std::vector<unsigned>> parse_cpu_list(std::string_view list);

// @cpus (sorted) as a list with ranges: {0, 1, 2, 3, 6} -> "0-3,6".
std::string format_cpu_list(std::span<const unsigned> cpus);

}  // namespace kring
