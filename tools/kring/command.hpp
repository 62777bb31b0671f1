// The kring tool's commands. Each command lives in its own cmd_*.cpp and
// adds itself to the CLI11 application through one add_* function listed
// in main.cpp. Commands use libkring only: channels, readers and parsers.
//
// Errors: a command reports a failure through report() - one line on
// stderr, "kring: <what failed>: <errno text>", with a hint in parentheses
// where one helps - and returns its exit status:
//	0  success (and, for the commands that verify, every check passed)
//	1  runtime error: a system call failed, or a check found a mismatch
//	2  usage error: a bad option or argument (CLI11's own errors too)
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

#include "kring/result.hpp"

namespace kring_tool {

enum exit_status : int {
    exit_ok = 0,
    exit_runtime = 1,
    exit_usage = 2,
};

struct context {
    std::string device;  // --device, default /dev/kring
    int exit_code = 0;   // set by the command that ran
};

// "kring: <e.message()>" (plus " (<hint>)" when given) on stderr; returns
// exit_runtime.
int report(const kring::error& e, std::string_view hint = {});
// The same for a failure that is not an errno: "kring: <what>".
int report(std::string_view what);

// The device every command opens (--device), for report()'s hint: an error
// of opening it is reported as one fixed line,
//	kring: cannot open <device>: <errno text> (<hint>)
// with a hint for ENOENT (the module is not loaded) and EACCES/EPERM (the
// node's mode, kring.dev_mode; docs/SECURITY.md). main() sets it.
void set_device_path(std::string path);
// The hint report() gives for an error of opening the device (empty when
// @e is not one): the one helper every command goes through.
std::string device_hint(const kring::error& e);

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
