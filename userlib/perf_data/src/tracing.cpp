// libkring's perf.data component: tracepoint formats, their payloads and
// perf's tracing data.
#include <algorithm>
#include <cstring>
#include <sstream>

#include "format.hpp"

namespace kring::perf_data {

using namespace detail;

namespace {

// "KEY:VALUE;" inside a field line; nullopt without it.
std::optional<std::uint32_t> number_after(std::string_view line, std::string_view key) {
    const auto at = line.find(key);
    if (at == std::string_view::npos)
        return std::nullopt;
    const char* p = line.data() + at + key.size();
    const char* end = line.data() + line.size();
    std::uint64_t v = 0;
    const char* q = p;
    while (q < end && *q >= '0' && *q <= '9' && v <= 0xffffffffull)
        v = v * 10 + std::uint64_t(*q++ - '0');
    if (q == p || q == end || *q != ';' || v > 0xffffffffull)
        return std::nullopt;
    return std::uint32_t(v);
}

// The tracing data's first bytes (trace-event-info.c's tracing_data_header()).
constexpr char k_tracing_magic[10] = {'\x17', '\x08', '\x44', 't', 'r', 'a', 'c', 'i', 'n', 'g'};

// @s and its NUL (do_read_string()'s strings in the tracing data).
void put_cstr(std::vector<std::byte>& out, const std::string& s) {
    put_bytes(out, s.c_str(), s.size() + 1);
}

}  // namespace

result<tp_format> parse_tp_format(std::string system, std::string text) {
    tp_format f;
    f.system = std::move(system);
    std::istringstream in(text);
    std::string line;
    bool in_fields = false;
    while (std::getline(in, line)) {
        if (line.rfind("name: ", 0) == 0) {
            f.name = line.substr(6);
        } else if (line.rfind("ID: ", 0) == 0) {
            char* end = nullptr;
            const unsigned long id = std::strtoul(line.c_str() + 4, &end, 10);
            if (end == line.c_str() + 4 || *end || id > 0xffff)
                return error(EINVAL, "a format's ID line reads '" + line + "'");
            f.id = std::uint32_t(id);
        } else if (line == "format:") {
            in_fields = true;
        } else if (in_fields && line.find("field:") != std::string::npos) {
            // "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;"
            const auto semi = line.find(';');
            const auto colon = line.find("field:");
            if (semi == std::string::npos || semi < colon)
                return error(EINVAL, "a format's field line reads '" + line + "'");
            std::string decl = line.substr(colon + 6, semi - colon - 6);
            if (auto br = decl.find('['); br != std::string::npos)
                decl.resize(br);
            const auto sp = decl.find_last_of(" *");
            std::string name = sp == std::string::npos ? decl : decl.substr(sp + 1);
            auto off = number_after(line, "offset:");
            auto size = number_after(line, "size:");
            if (name.empty() || !off || !size)
                return error(EINVAL, "a format's field line reads '" + line + "'");
            f.fields[name] = {*off, *size};
            f.size = std::max(f.size, *off + *size);
        } else if (line.rfind("print fmt:", 0) == 0) {
            in_fields = false;
        }
    }
    if (f.name.empty() || !f.id || f.fields.empty())
        return error(EINVAL, "not a tracepoint format (name, ID and fields)");
    if (f.size > 0xffff)
        return error(EINVAL,
                     "the format of " + f.name + " is " + std::to_string(f.size) + " bytes");
    f.text = std::move(text);
    return f;
}

tp_payload::tp_payload(const tp_format& f) : f_(f), b_(f.size) { set("common_type", f.id); }

tp_payload& tp_payload::set(std::string_view field, std::int64_t v) {
    auto it = f_.fields.find(field);
    if (it == f_.fields.end() || !it->second.size || it->second.size > 8)
        return *this;
    // Little-endian hosts: the value's low bytes (x86-64, arm64).
    std::memcpy(b_.data() + it->second.offset, &v, it->second.size);
    return *this;
}

tp_payload& tp_payload::set_str(std::string_view field, std::string_view s) {
    auto it = f_.fields.find(field);
    if (it == f_.fields.end())
        return *this;
    const std::size_t n = std::min<std::size_t>(s.size(), it->second.size);
    if (!n)
        return *this;
    std::memcpy(b_.data() + it->second.offset, s.data(), n);
    return *this;
}

std::vector<std::byte> tracing_data(std::string_view header_page, std::string_view header_event,
                                    const std::vector<const tp_format*>& events,
                                    std::uint32_t page_size) {
    std::vector<std::byte> out;
    put_bytes(out, k_tracing_magic, sizeof(k_tracing_magic));
    put_cstr(out, "0.6");
    out.push_back(std::byte{0});             // little-endian
    out.push_back(std::byte{sizeof(long)});  // the size of long
    put(out, page_size);
    put_cstr(out, "header_page");
    put(out, std::uint64_t(header_page.size()));
    put_bytes(out, header_page.data(), header_page.size());
    put_cstr(out, "header_event");
    put(out, std::uint64_t(header_event.size()));
    put_bytes(out, header_event.data(), header_event.size());
    put(out, std::uint32_t{0});  // no ftrace formats
    // The events by system, in the order given.
    std::vector<std::string> systems;
    for (const auto* e : events)
        if (std::find(systems.begin(), systems.end(), e->system) == systems.end())
            systems.push_back(e->system);
    put(out, std::uint32_t(systems.size()));
    for (const auto& s : systems) {
        put_cstr(out, s);
        put(out, std::uint32_t(std::count_if(events.begin(), events.end(),
                                             [&](const tp_format* e) { return e->system == s; })));
        for (const auto* e : events)
            if (e->system == s) {
                put(out, std::uint64_t(e->text.size()));
                put_bytes(out, e->text.data(), e->text.size());
            }
    }
    put(out, std::uint32_t{0});  // kallsyms: perf resolves symbols itself
    put(out, std::uint32_t{0});  // printk formats
    put(out, std::uint64_t{0});  // saved command lines
    return out;
}

result<tracing_events> parse_tracing_data(std::span<const std::byte> data) {
    detail::cursor c{data.data(), data.data() + data.size()};
    auto bad = [](const std::string& what) { return error(EINVAL, "tracing data: " + what); };
    char magic[sizeof(k_tracing_magic)];
    if (!c.get(magic) || std::memcmp(magic, k_tracing_magic, sizeof(magic)) != 0)
        return bad("no tracing data magic");
    // A NUL-terminated string of at most @max bytes.
    auto cstring = [&](std::string& s, std::size_t max) {
        const auto* p = reinterpret_cast<const char*>(c.p);
        const std::size_t n = strnlen(p, std::min(c.left(), max));
        if (n == std::min(c.left(), max))
            return false;
        s.assign(p, n);
        c.p += n + 1;
        return true;
    };
    std::string version, name;
    tracing_events t;
    std::uint8_t endian = 0;
    if (!cstring(version, 16) || !c.get(endian) || !c.get(t.long_size) || !c.get(t.page_size))
        return bad("its header runs past the end");
    t.big_endian = endian != 0;
    // A u64 size, then that many bytes.
    auto blob = [&](std::string* out) {
        std::uint64_t n;
        if (!c.get(n) || n > c.left())
            return false;
        if (out)
            out->assign(reinterpret_cast<const char*>(c.p), n);
        c.p += n;
        return true;
    };
    for (const char* h : {"header_page", "header_event"})
        if (!cstring(name, 16) || name != h || !blob(nullptr))
            return bad(std::string("no ") + h);
    std::uint32_t count;
    if (!c.get(count))
        return bad("no ftrace format count");
    for (std::uint32_t i = 0; i < count; i++)
        if (!blob(nullptr))
            return bad("an ftrace format runs past the end");
    std::uint32_t systems;
    if (!c.get(systems))
        return bad("no system count");
    for (std::uint32_t i = 0; i < systems; i++) {
        std::string sys;
        if (!cstring(sys, 256) || !c.get(count))
            return bad("a system's name or count runs past the end");
        for (std::uint32_t j = 0; j < count; j++) {
            std::string text;
            if (!blob(&text))
                return bad("an event format of " + sys + " runs past the end");
            t.events.emplace_back(sys, std::move(text));
        }
    }
    return t;
}

}  // namespace kring::perf_data
