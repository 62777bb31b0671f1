// kring record's synthesis: what existed before the recording, as perf
// record synthesizes it from /proc (COMM and MMAP2 of the processes, the
// kernel's mapping), written into the file ahead of the recorded records.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "kring/perf_data.hpp"
#include "kring/result.hpp"

namespace kring_tool::record {

// A small text file (/proc, /sys) up to its first NUL, without the
// trailing newline; "" when it cannot be read.
std::string read_small(const std::string& path);

// The numeric entries of @dir (/proc's processes, a process's tasks),
// sorted.
std::vector<int> list_numeric(const std::string& dir);

// Where synthesized records go, and how many went.
struct synth_out {
    kring::perf_data::writer& w;
    std::uint64_t id;  // the first event's id: the trailer must name one
    std::uint64_t records = 0;
    kring::result<void> put(const std::vector<std::byte>& b) {
        records++;
        return w.write(b);
    }
};

// The process @pid: COMM of each thread (COMM_EXEC for the leader if
// @exec), MMAP2 of each executable mapping (perf record's default), at
// @time (0: before everything). Nothing for a process that is gone.
kring::result<void> synth_process(synth_out& o, int pid, std::uint64_t time, bool exec);

// The kernel's mapping (below).
kring::result<void> synth_kernel(synth_out& o);

}  // namespace kring_tool::record
