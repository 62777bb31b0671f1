// The kring tool's commands. Each command lives in its own cmd_*.cpp and
// adds itself to the CLI11 application through one add_* function listed
// in main.cpp. Commands use libkring only: channels, readers and parsers.
//
// Errors: through report() (errors.hpp), one line on stderr, and the exit
// status it returns: 0 success, 1 runtime error, 2 usage error.
// A command's last line on stdout is its summary, machine-readable:
//	summary <command> key=value ...
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <CLI/CLI.hpp>

#include "errors.hpp"
#include "kring/result.hpp"

namespace kring_tool {

struct context {
    std::string device;  // --device, default /dev/kring
    int exit_code = 0;   // set by the command that ran
};

// A CPU list such as "0,2-3" (perf's -C syntax) into CPU numbers, sorted
// and unique; nullopt when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view list);

// "summary <command> k1=v1 k2=v2 ..." on stdout, the command's last line.
void print_summary(std::string_view command,
                   const std::vector<std::pair<std::string, std::uint64_t>>& fields);

void add_info(CLI::App& app, context& ctx);
void add_synth(CLI::App& app, context& ctx);
void add_sched(CLI::App& app, context& ctx);
void add_aux(CLI::App& app, context& ctx);
void add_record(CLI::App& app, context& ctx);
void add_report(CLI::App& app, context& ctx);
void add_script(CLI::App& app, context& ctx);
void add_export(CLI::App& app, context& ctx);
void add_stat(CLI::App& app, context& ctx);

}  // namespace kring_tool
