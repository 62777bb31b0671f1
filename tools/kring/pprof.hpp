// kring export --pprof: the CPU samples of a perf.data file as a pprof
// profile (google/pprof's perftools.profiles.Profile, gzipped protobuf),
// what `go tool pprof` and continuous-profiling services read.
//
// Two values a sample: ("samples", "count") and ("cpu", "nanoseconds"),
// the latter the sample's period (kring's timer samples every PERIOD ns
// of CPU). The perf samples of one thread with one stack are one pprof
// sample (their values added up), labelled pid, tid (numbers) and comm
// (the thread's name then). A stack is the sample's call chain, leaf first
// (its IP alone without one); every location carries its address, its
// mapping (the process's MMAP2 records, the kernel's MMAP) and, where the
// symbols say, its function: user addresses through the ELF symbol tables
// of the mapped files, kernel addresses through a kallsyms file. A return
// address (every frame but the first of each context) names the function
// of address - 1, the call itself.
#pragma once

#include <string>

#include "trace_model.hpp"

namespace kring_tool {

struct pprof_options {
    std::string output;    // the profile (- for stdout)
    std::string kallsyms;  // the recording machine's /proc/kallsyms ("": none)
};

// Whether this kring was built with pprof support (libprotobuf, zlib,
// libelf).
bool have_pprof() noexcept;

// Writes @m's profile to o.output (through o.output + ".tmp", renamed
// when complete) and prints the summary line. Returns the exit status.
int write_pprof(const pprof_options& o, const trace_model& m);

}  // namespace kring_tool
