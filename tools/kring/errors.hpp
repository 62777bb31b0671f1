// The kring tool's errors: its exit statuses and its one error reporter.
//
// A command reports a failure through report() - one line on stderr,
// "kring: <what failed>: <errno text>", with a hint in parentheses where
// one helps - and returns its exit status:
//	0  success (and, for the commands that verify, every check passed)
//	1  runtime error: a system call failed, or a check found a mismatch
//	2  usage error: a bad option or argument (CLI11's own errors too)
#pragma once

#include <string>
#include <string_view>

#include "kring/result.hpp"

namespace kring_tool {

enum exit_status : int {
    exit_ok = 0,
    exit_runtime = 1,
    exit_usage = 2,
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

}  // namespace kring_tool
