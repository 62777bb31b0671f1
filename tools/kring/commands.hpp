// The kring tool's table of commands (commands.def): what main() adds to
// the command line, in order, each with its summary line.
#pragma once

#include <span>
#include <string_view>

#include <CLI/CLI.hpp>

#include "command.hpp"

namespace kring_tool {

struct command_entry {
    std::string_view name;     // `kring <name>`, cmd_<name>.cpp, kring-<name>.1
    std::string_view summary;  // its line in --help, its man page's NAME
    void (*add)(CLI::App* sub, context& ctx);
};

// Every command, in the order of commands.def.
std::span<const command_entry> commands();

}  // namespace kring_tool
