// libkring's perf.data component: tracepoint formats, their payloads and
// perf's tracing data.
#include <algorithm>
#include <cstring>
#include <optional>
#include <sstream>
#include <string_view>

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
            // The name is the last word ("__data_loc char[] name": not
            // the type's brackets), without its array size.
            const std::string decl = line.substr(colon + 6, semi - colon - 6);
            const auto sp = decl.find_last_of(" *");
            std::string name = sp == std::string::npos ? decl : decl.substr(sp + 1);
            if (auto br = name.find('['); br != std::string::npos)
                name.resize(br);
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

tp_payload& tp_payload::set_bytes(std::uint32_t offset, std::span<const std::byte> b) {
    if (offset >= b_.size())
        return *this;
    const std::size_t n = std::min<std::size_t>(b.size(), b_.size() - offset);
    if (n)
        std::memcpy(b_.data() + offset, b.data(), n);
    return *this;
}

namespace {

// The kernel's common fields of every event, 8 bytes, and the blank line
// after them (the layout of a tracefs format file).
constexpr std::string_view k_common_fields =
    "\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n"
    "\tfield:unsigned char common_flags;\toffset:2;\tsize:1;\tsigned:0;\n"
    "\tfield:unsigned char common_preempt_count;\toffset:3;\tsize:1;\tsigned:0;\n"
    "\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n";
constexpr std::uint32_t k_common_size = 8;
// kring's bounds on a declaration (<kring/producer.h>): names of 1..63
// characters, at most 64 fields.
constexpr std::size_t k_name_max = 63;
constexpr unsigned k_fields_max = 64;

bool is_ident(std::string_view s) {
    if (s.empty() || s.size() > k_name_max || (s[0] >= '0' && s[0] <= '9'))
        return false;
    return std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

// @s, all decimal digits, at most @max; nullopt otherwise.
std::optional<std::uint64_t> decimal(std::string_view s, std::uint64_t max) {
    if (s.empty() || s.size() > 10)
        return std::nullopt;
    std::uint64_t v = 0;
    for (char c : s) {
        if (c < '0' || c > '9')
            return std::nullopt;
        v = v * 10 + std::uint64_t(c - '0');
    }
    if (v > max)
        return std::nullopt;
    return v;
}

// Takes @prefix off the front of @s; false when @s does not start with it.
bool eat(std::string_view& s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix)
        return false;
    s.remove_prefix(prefix.size());
    return true;
}

// The number before the next ';' of @s, that ';' eaten.
std::optional<std::uint64_t> number_to_semi(std::string_view& s, std::uint64_t max) {
    const auto semi = s.find(';');
    if (semi == std::string_view::npos)
        return std::nullopt;
    auto v = decimal(s.substr(0, semi), max);
    s.remove_prefix(semi + 1);
    return v;
}

error bad_line(std::string_view line, const std::string& why) {
    return error(EINVAL,
                 "a record format: " + why + ": '" + std::string(line.substr(0, 120)) + "'");
}

// One "\tfield:TYPE NAME[N];\toffset:O;\tsize:S;\tsigned:G;" line, its
// offset moved behind the common fields.
result<std::string> rebase_field(std::string_view line) {
    std::string_view rest = line;
    const auto semi = rest.find(';');
    if (!eat(rest, "\tfield:") || semi == std::string_view::npos)
        return bad_line(line, "not a field line");
    const std::string_view decl = rest.substr(0, semi - 7);
    rest.remove_prefix(decl.size() + 1);
    std::string_view fname = decl.substr(0, decl.find('['));
    const auto sp = fname.find_last_of(' ');
    if (sp == std::string_view::npos || decl.find('\t') != std::string_view::npos)
        return bad_line(line, "not a field declaration");
    fname.remove_prefix(sp + 1);
    if (!is_ident(fname) || fname.substr(0, 7) == "common_")
        return bad_line(line, "a field name that is not an identifier, or common_*");
    std::optional<std::uint64_t> off, size, sign;
    if (eat(rest, "\toffset:"))
        off = number_to_semi(rest, 0xffff);
    if (off && eat(rest, "\tsize:"))
        size = number_to_semi(rest, 0xffff);
    if (size && eat(rest, "\tsigned:"))
        sign = number_to_semi(rest, 1);
    if (!sign || !rest.empty() || !*size)
        return bad_line(line, "not offset, size and signed");
    if (k_common_size + *off + *size > 0xffff)
        return bad_line(line, "beyond a tracepoint's payload");
    return "\tfield:" + std::string(decl) + ";\toffset:" + std::to_string(k_common_size + *off) +
           ";\tsize:" + std::to_string(*size) + ";\tsigned:" + std::to_string(*sign) + ";\n";
}

// A record format block's lines: its name, ID, fields and print fmt.
struct format_block {
    std::string name;
    std::uint32_t record_type = 0;
    std::string fields;  // rebased
    unsigned nfields = 0;
    std::string print;
};

result<format_block> parse_format_block(std::string_view block) {
    enum class want { name, id, format, fields, print, end } st = want::name;
    format_block fb;
    while (!block.empty()) {
        const auto nl = block.find('\n');
        std::string_view line = block.substr(0, nl);
        block.remove_prefix(nl == std::string_view::npos ? block.size() : nl + 1);
        std::string_view rest = line;
        switch (st) {
            case want::name:
                if (!eat(rest, "name: ") || !is_ident(rest))
                    return bad_line(line, "no name line");
                fb.name = rest;
                st = want::id;
                break;
            case want::id: {
                auto t = eat(rest, "ID: ") ? decimal(rest, 0xffffffffull) : std::nullopt;
                if (!t)
                    return bad_line(line, "no ID line");
                fb.record_type = std::uint32_t(*t);
                st = want::format;
                break;
            }
            case want::format:
                if (line != "format:")
                    return bad_line(line, "no format line");
                st = want::fields;
                break;
            case want::fields: {
                if (line.empty()) {
                    if (!fb.nfields)
                        return bad_line(line, "no fields");
                    st = want::print;
                    break;
                }
                if (++fb.nfields > k_fields_max)
                    return bad_line(line, "more than 64 fields");
                auto f = rebase_field(line);
                if (!f)
                    return f.error();
                fb.fields += *f;
                break;
            }
            case want::print:
                if (!eat(rest, "print fmt: "))
                    return bad_line(line, "no print fmt line");
                fb.print = rest;
                st = want::end;
                break;
            case want::end:
                return bad_line(line, "a line after the print fmt");
        }
    }
    if (st != want::end)
        return error(EINVAL, "a record format" + (fb.name.empty() ? "" : " " + fb.name) +
                                 " ends before its print fmt");
    return fb;
}

}  // namespace

result<kring_tracepoint> kring_format_as_tracepoint(std::string_view block, std::string system,
                                                    std::uint16_t id) {
    if (!id)
        return error(EINVAL, "a record format: tracepoint ID 0");
    if (!is_ident(system))
        return error(EINVAL, "a record format: system '" + system + "' is not an identifier");
    auto fb = parse_format_block(block);
    if (!fb)
        return fb.error();
    std::string text = "name: " + fb->name + "\nID: " + std::to_string(id) + "\nformat:\n";
    text += k_common_fields;
    text += fb->fields;
    text += "\nprint fmt: " + fb->print + "\n";
    auto f = parse_tp_format(std::move(system), std::move(text));
    if (!f)
        return f.error();
    if (f->fields.size() != fb->nfields + 4)
        return error(EINVAL, "a record format " + fb->name + ": two fields of one name");
    kring_tracepoint kt;
    kt.record_type = fb->record_type;
    kt.body_size = f->size - k_common_size;
    kt.format = std::move(*f);
    return kt;
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
