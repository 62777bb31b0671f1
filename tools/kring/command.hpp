// The kring tool's commands. Each command lives in its own cmd_*.cpp and
// adds itself to the CLI11 application through one add_* function listed
// in main.cpp. A command reports failure with one line on stderr
// ("kring: what failed: why") and a non-zero exit status.
#pragma once

#include <string>

#include <CLI/CLI.hpp>

namespace kring_tool {

struct context {
    std::string device;  // --device, default /dev/kring
    int exit_code = 0;   // set by the command that ran
};

void add_info(CLI::App& app, context& ctx);
void add_synth(CLI::App& app, context& ctx);
void add_sched(CLI::App& app, context& ctx);
void add_aux(CLI::App& app, context& ctx);

}  // namespace kring_tool
