// kring record's session: its options, what they ask for and the state
// run()'s steps pass from one to the next (cmd_record.cpp), and the
// recording's end (record_end.cpp): the file's features and header, then
// the summary.
#pragma once

#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <linux/kring.h>

#include "command.hpp"
#include "event_spec.hpp"
#include "record_convert.hpp"
#include "triggers.hpp"

namespace kring_tool::record {

// kring record's options, as CLI11 fills them.
struct options {
    bool all_cpus = false;
    std::string cpu_list;
    int pid_arg = 0, tid_arg = 0;
    std::optional<int> pid, tid;
    std::vector<std::string> events;
    std::uint64_t count = 0, freq = 0;  // -c, -F (0: not given)
    std::vector<std::string> filter;    // --filter (refused: no filter support yet)
    unsigned pages = 64;
    bool mirror = false, overwrite = false;
    unsigned aux_pages = 16;
    bool snapshot = false;
    bool call_graph = false;
    std::string snapshot_size;
    std::string clock = "monotonic";
    double duration = 0;
    std::string output = "perf.data";
    std::string control;
    std::vector<std::string> command;
};

// What -e asked for (event_spec.hpp).
using event_set = events::event_set;

// The POSIX clock a user-space reading of the channel clock uses;
// KRING_CLOCK_LOCAL (local_clock()) has none.
inline std::optional<clockid_t> posix_clock(std::uint32_t k) {
    switch (k) {
        case KRING_CLOCK_DEFAULT:
        case KRING_CLOCK_MONOTONIC:
            return CLOCK_MONOTONIC;
        case KRING_CLOCK_MONOTONIC_RAW:
            return CLOCK_MONOTONIC_RAW;
        case KRING_CLOCK_BOOTTIME:
            return CLOCK_BOOTTIME;
        default:
            return std::nullopt;
    }
}

// The command's child: waits on @go until every channel is enabled, then
// execs. @ready's write end is close-on-exec: the parent sees EOF once the
// exec happened, or the child's errno if it failed.
struct child_proc {
    pid_t pid = -1;
    int go_w = -1, ready_r = -1;
};

// One channel's target: a CPU, a task, or a task on a CPU (inherited by
// its children when the command is followed).
struct target {
    std::optional<int> cpu;
    std::optional<pid_t> pid;
    bool inherit = false;
};

// The recording's state, passed from step to step.
struct session {
    const context& ctx;
    options o;
    event_set ev;
    std::uint32_t clock = KRING_CLOCK_MONOTONIC;
    std::vector<int> cpus;
    bool command = false;   // -- COMMAND
    bool followed = false;  // a task's channels (the hint for EACCES)
    triggers trig;
    std::optional<child_proc> child;
    std::optional<recorder> rec;
    std::chrono::steady_clock::time_point t0;  // just before the channels are enabled
    bool tty = false;
    int child_status = -1;  // the command's wait status, once it ended
    bool stop_signal = false;
    std::uint64_t first_id = 0;  // the file's first event's id, for synthesized records
    std::uint64_t lost_by[4] = {0, 0, 0, 0};  // no_space, too_big, paused, overwritten

    session(const context& c, options opts) : ctx(c), o(std::move(opts)) {}

    // Before the command is released: it exits 127 without exec.
    void abandon_child() {
        if (child) {
            ::close(child->go_w);
            ::waitpid(child->pid, nullptr, 0);
            child.reset();
        }
    }
    // A failure before the command is released.
    int abandon(const kring::error& e, std::string_view hint = {}) {
        abandon_child();
        return report(e, hint);
    }
};

// The file's features (perf's header sections and kring's section, where
// the loss by cause is also summed into s.lost_by) and its header: the file
// is complete. @rc: the status so far; a failure is reported if it is the
// first. Returns the status.
int finish_file(session& s, const std::vector<std::string>& argv_all, int rc);

// On a terminal, a last human line under the status line; everywhere the
// summary. Then the malformed records, if any, are the failure (@rc the
// status so far). Returns the status.
int print_end(const session& s, int rc);

}  // namespace kring_tool::record
