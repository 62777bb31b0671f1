// kring record's tracepoint events (tracepoints.hpp).
#include "tracepoints.hpp"

#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace kring_tool::record {

namespace pd = kring::perf_data;

namespace {

kring::result<std::string> slurp(const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    if (!f)
        return kring::error::from_errno(errno ? errno : ENOENT, "read " + path);
    std::ostringstream s;
    s << f.rdbuf();
    if (f.bad())
        return kring::error::from_errno(EIO, "read " + path);
    return s.str();
}

}  // namespace

kring::result<sched_tracepoints> read_sched_tracepoints() {
    std::string dir;
    for (const char* d : {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"})
        if (::access((std::string(d) + "/events/header_page").c_str(), F_OK) == 0) {
            dir = d;
            break;
        }
    if (dir.empty())
        return kring::error(ENOENT, "no tracefs with event formats (/sys/kernel/tracing)");
    auto page = slurp(dir + "/events/header_page");
    if (!page)
        return page.error();
    auto event = slurp(dir + "/events/header_event");
    if (!event)
        return event.error();
    sched_tracepoints t;
    for (auto [name, into] :
         {std::pair{"sched_switch", &t.sched_switch}, std::pair{"sched_wakeup", &t.sched_wakeup}}) {
        const std::string path = dir + "/events/sched/" + name + "/format";
        auto text = slurp(path);
        if (!text)
            return text.error();
        auto f = pd::parse_tp_format("sched", std::move(*text));
        if (!f)
            return f.error().with_context(path);
        *into = std::move(*f);
    }
    std::vector<const pd::tp_format*> events{&t.sched_switch, &t.sched_wakeup};
    // Without sched_stat_runtime (or with a layout other than comm, pid,
    // runtime) perf sched's Runtime column stays 0: not an error.
    if (auto text = slurp(dir + "/events/sched/sched_stat_runtime/format"))
        if (auto f = pd::parse_tp_format("sched", std::move(*text));
            f && f->fields.count("pid") && f->fields.count("runtime")) {
            t.sched_stat_runtime = std::move(*f);
            events.push_back(&*t.sched_stat_runtime);
        }
    t.tracing_data =
        pd::tracing_data(*page, *event, events, std::uint32_t(::sysconf(_SC_PAGESIZE)));
    return t;
}

}  // namespace kring_tool::record
