// The kring tool's snapshot and stop triggers (triggers.hpp).
#include "triggers.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <fmt/core.h>

#include "errors.hpp"

namespace kring_tool {
namespace {

sigset_t trigger_signals() {
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGUSR2);
    sigaddset(&set, SIGINT);
    sigaddset(&set, SIGTERM);
    return set;
}

}  // namespace

kring::result<void> triggers::setup(const std::string& fifo_path) {
    sigset_t set = trigger_signals();
    if (::sigprocmask(SIG_BLOCK, &set, nullptr) < 0)
        return kring::error::from_errno(errno, "block signals");
    // An ignored signal is discarded, never queued for the signalfd: a
    // shell starts background jobs with SIGINT ignored, and `kill -INT`
    // must still stop them.
    for (int s : {SIGUSR2, SIGINT, SIGTERM})
        ::signal(s, SIG_DFL);
    sig = kring::unique_fd(::signalfd(-1, &set, SFD_CLOEXEC | SFD_NONBLOCK));
    if (sig.get() < 0)
        return kring::error::from_errno(errno, "signalfd");
    if (fifo_path.empty())
        return {};
    if (::mkfifo(fifo_path.c_str(), 0600) < 0 && errno != EEXIST)
        return kring::error::from_errno(errno, "mkfifo " + fifo_path);
    struct stat st;
    if (::stat(fifo_path.c_str(), &st) < 0 || !S_ISFIFO(st.st_mode))
        return kring::error(EINVAL, fifo_path + " exists and is not a fifo");
    // O_RDWR: the fifo never reports end-of-file between writers.
    fifo = kring::unique_fd(::open(fifo_path.c_str(), O_RDWR | O_NONBLOCK | O_CLOEXEC));
    if (fifo.get() < 0)
        return kring::error::from_errno(errno, "open " + fifo_path);
    return {};
}

void triggers::unblock_in_child() {
    sigset_t set = trigger_signals();
    ::sigprocmask(SIG_UNBLOCK, &set, nullptr);
}

bool triggers::wait(int ms, unsigned& requests) {
    pollfd p[2] = {{sig.get(), POLLIN, 0}, {fifo.get(), POLLIN, 0}};
    if (::poll(p, fifo.get() >= 0 ? 2 : 1, ms) <= 0)
        return false;
    bool stop = false;
    signalfd_siginfo si;
    while (::read(sig.get(), &si, sizeof(si)) == sizeof(si)) {
        if (si.ssi_signo == SIGUSR2)
            requests++;
        else
            stop = true;
    }
    char b[256];
    ssize_t n;
    while (fifo.get() >= 0 && (n = ::read(fifo.get(), b, sizeof(b))) > 0) {
        partial.append(b, static_cast<std::size_t>(n));
        for (std::size_t nl; (nl = partial.find('\n')) != std::string::npos;
             partial.erase(0, nl + 1)) {
            std::string cmd = partial.substr(0, nl);
            if (cmd == "snapshot")
                requests++;
            else if (cmd == "stop")
                stop = true;
            else if (!cmd.empty())
                (void)report(fmt::format("unknown control command '{}' (snapshot, stop)", cmd));
        }
    }
    return stop;
}

}  // namespace kring_tool
