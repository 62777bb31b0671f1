// The per-CPU timeline of a trace model as a self-contained SVG (no
// scripts, no external references): one track per CPU - a <g class="cpu">
// with its label - holding one <rect> per task slice, coloured by task,
// with a <title> tooltip (comm, pid/tid, start and length); a time axis
// below. The idle task's slices are left blank.
#pragma once

#include <string>

#include "trace_model.hpp"

namespace kring_tool {

std::string render_svg_timeline(const trace_model& m);

}  // namespace kring_tool
