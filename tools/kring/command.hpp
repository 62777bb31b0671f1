// The kring tool's commands. Each command of commands.def lives in its own
// cmd_<name>.cpp and fills its subcommand through add_<name>(). Commands
// use libkring only: channels, readers and parsers.
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

// "summary <command> k1=v1 k2=v2 ..." on stdout, the command's last line.
void print_summary(std::string_view command,
                   const std::vector<std::pair<std::string, std::uint64_t>>& fields);
// The summary line goes to standard error from now on: for a command whose
// standard output carries data (kring record -o -).
void summary_to_stderr();

// One add_<name>() per command of commands.def, in cmd_<name>.cpp: it
// fills @sub, the command's subcommand (main() made it with the command's
// name and summary), with its options, footer and callback.
#define KRING_COMMAND(name, summary) void add_##name(CLI::App* sub, context& ctx);
#include "commands.def"
#undef KRING_COMMAND

}  // namespace kring_tool
