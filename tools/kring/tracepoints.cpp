// kring record's tracepoint events (tracepoints.hpp).
#include "tracepoints.hpp"

#include "tracefs.hpp"

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

std::uint32_t page_size() { return std::uint32_t(::sysconf(_SC_PAGESIZE)); }

kring::result<tracing_headers> read_headers(const std::string& dir) {
    auto page = slurp(dir + "/events/header_page");
    if (!page)
        return page.error();
    auto event = slurp(dir + "/events/header_event");
    if (!event)
        return event.error();
    return tracing_headers{std::move(*page), std::move(*event)};
}

}  // namespace

kring::result<sched_tracepoints> read_sched_tracepoints() {
    auto root = tracefs::root(true);
    if (!root)
        return root.error();
    const std::string& dir = *root;
    auto h = read_headers(dir);
    if (!h)
        return h.error();
    sched_tracepoints t;
    t.headers = std::move(*h);
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
    t.tracing_data = tracing_data_of(t.headers, events);
    return t;
}

tracing_headers read_tracing_headers() {
    if (auto dir = tracefs::root(false))
        if (auto h = read_headers(*dir))
            return std::move(*h);
    // The page header and the entry header as tracefs shows them
    // (kernel/trace/ring_buffer.c: ring_buffer_print_page_header(),
    // ring_buffer_print_entry_header()).
    tracing_headers h;
    h.page =
        "\tfield: u64 timestamp;\toffset:0;\tsize:8;\tsigned:0;\n"
        "\tfield: local_t commit;\toffset:8;\tsize:8;\tsigned:1;\n"
        "\tfield: int overwrite;\toffset:8;\tsize:1;\tsigned:1;\n"
        "\tfield: char data;\toffset:16;\tsize:" +
        std::to_string(page_size() - 16) + ";\tsigned:1;\n";
    h.event =
        "# compressed entry header\n\ttype_len    :    5 bits\n\ttime_delta  :   27 bits\n"
        "\tarray       :   32 bits\n\n\tpadding     : type == 29\n\ttime_extend : type == 30\n"
        "\ttime_stamp : type == 31\n\tdata max type_len  == 28\n";
    return h;
}

std::vector<std::byte> tracing_data_of(const tracing_headers& h,
                                       const std::vector<const pd::tp_format*>& events) {
    return pd::tracing_data(h.page, h.event, events, page_size());
}

}  // namespace kring_tool::record
