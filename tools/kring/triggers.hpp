// The kring tool's triggers: SIGUSR2 and "snapshot" lines in a control fifo
// ask for an AUX snapshot, SIGINT, SIGTERM and "stop" for the end. Shared
// by `kring aux --snapshot` and `kring record`: the signals are blocked
// and read from a signalfd, so a request never interrupts a system call
// and none is lost between two waits.
#pragma once

#include <string>

#include "kring/fd.hpp"
#include "kring/result.hpp"

namespace kring_tool {

struct triggers {
    kring::unique_fd sig, fifo;
    std::string partial;  // fifo bytes after the last newline

    // Block SIGUSR2, SIGINT and SIGTERM into a signalfd; with @fifo_path,
    // create that fifo if absent (mode 0600) and open it. A child that
    // execs must unblock them again (unblock_in_child()).
    kring::result<void> setup(const std::string& fifo_path);
    // Waits up to @ms; counts snapshot requests into @requests, says
    // whether to stop.
    bool wait(int ms, unsigned& requests);
    // Restore the signal mask setup() changed (for a forked child).
    static void unblock_in_child();
};

}  // namespace kring_tool
