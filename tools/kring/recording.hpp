// What report, script and export share: the recording they read, a
// perf.data file (a positional FILE, or -i as perf's; perf.data by
// default), and the skeleton of their run: load it whole (trace_model),
// warn once if it is truncated or has tracepoint formats kring refuses,
// show it, exit 1 if it was either.
#pragma once

#include <functional>
#include <string>

#include <CLI/CLI.hpp>

#include "trace_model.hpp"

namespace kring_tool {

// The recording as the positional "file" of @sub (its default shown).
void add_recording_file(CLI::App* sub, std::string& path);
// The recording as -i,--input, perf's way.
void add_recording_input(CLI::App* sub, std::string& path);

// Loads @path and runs @show on it. A file that cannot be read is reported
// (exit_runtime); a truncated one, or one with refused tracepoint
// formats, is warned about first. Returns what @show returns if that is a
// failure, else exit_runtime for a truncated file or refused formats,
// else exit_ok.
int show_recording(const std::string& path, const std::function<int(const trace_model&)>& show);

}  // namespace kring_tool
