// tracepoint_decode.hpp with libtraceevent: libtraceevent reads the
// formats' name, ID and fields (tep_parse_format()); every byte of a RAW
// is read here, within its bounds. No libtraceevent call is handed a
// record: its own readers (tep_find_event_by_record(),
// tep_read_number_field(), tep_print_event()) take offsets and sizes from
// the file's formats and read wherever they point. Nor is it handed a
// format's print fmt, which kring does not use: libtraceevent 1.7.1's
// parser of it dereferences NULL on a field the format lacks inside
// __print_flags() / __print_symbolic(), or after such a call failed to
// parse in an earlier format (a static flag outlives the parse). The
// lines it is handed are checked first (format_lines()): its field
// parser dereferences NULL on an unclosed '[' too.
#include "tracepoint_decode.hpp"

#include <algorithm>
#include <cstring>
#include <map>
#include <string_view>
#include <vector>

extern "C" {
#include <traceevent/event-parse.h>
}

#include <linux/perf_event.h>

#include "kring/perf_data.hpp"

namespace kring_tool {

namespace {

// The most bytes a sample's RAW holds: a record is at most 0xffff bytes
// (perf_event_header.size is a u16), of which its header and the RAW's
// u32 size are not the RAW's.
constexpr std::size_t k_raw_max = 0xffff - sizeof(perf_event_header) - sizeof(std::uint32_t);

// The unsigned number of @size bytes (at most 8) at @p, in the file's
// byte order.
std::uint64_t load_uint(const std::byte* p, std::size_t size, bool big_endian) {
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < size; i++)
        v = (v << 8) | std::to_integer<std::uint64_t>(p[big_endian ? i : size - 1 - i]);
    return v;
}

bool is_number_size(int size) { return size == 1 || size == 2 || size == 4 || size == 8; }

// Why @f cannot lie in a RAW ("" when it can): its bytes past the most a
// RAW holds, a negative offset or size, a __data_loc / __rel_loc that is
// not a u32.
std::string misplaced(const tep_format_field& f) {
    const std::string name = f.name ? f.name : "(unnamed)";
    if (f.offset < 0 || f.size < 0 || std::size_t(f.offset) + std::size_t(f.size) > k_raw_max)
        return "field " + name + " at offset " + std::to_string(f.offset) + ", " +
               std::to_string(f.size) + " bytes, lies outside the " + std::to_string(k_raw_max) +
               " bytes a RAW holds";
    if ((f.flags & TEP_FIELD_IS_DYNAMIC) && f.size != 4)
        return "field " + name + " is a dynamic array of " + std::to_string(f.size) +
               " bytes, not a u32 offset and length";
    return {};
}

// A field that is text: a string, a char array, a dynamic char array.
bool is_text(const tep_format_field& f) {
    return (f.flags & TEP_FIELD_IS_STRING) ||
           ((f.flags & TEP_FIELD_IS_ARRAY) && f.elementsize == 1);
}

bool is_ident(std::string_view s) {
    return !s.empty() && s.size() <= 128 && std::all_of(s.begin(), s.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
               c == '_';
    });
}

bool is_number(std::string_view s) {
    return !s.empty() && s.size() <= 10 &&
           std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// Takes @prefix off the front of @s; false when @s does not start with it.
bool eat(std::string_view& s, std::string_view prefix) {
    if (s.substr(0, prefix.size()) != prefix)
        return false;
    s.remove_prefix(prefix.size());
    return true;
}

// A field's declaration ("unsigned short common_type", "char comm[16]",
// "__data_loc char[] name", "const char __attribute__((user)) * p",
// "__u8 saddr[sizeof(struct sockaddr_in6)]"): identifiers, spaces and
// '*', at most one [...] of identifiers, spaces, + - * and parentheses,
// parentheses balanced inside and outside it. libtraceevent 1.7.1 reads past the end
// of its text, dereferencing NULL, on an unclosed '['.
bool is_declaration(std::string_view d) {
    if (d.empty() || d.size() > 256)
        return false;
    int depth = 0, brackets = 0, bracket_depth = 0;
    bool in_brackets = false;
    for (char c : d) {
        const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                          (c >= '0' && c <= '9') || c == '_' || c == ' ' || c == '*';
        if (c == '[') {
            if (in_brackets || ++brackets > 1)
                return false;
            in_brackets = true;
            bracket_depth = depth;
        } else if (c == ']') {
            if (!in_brackets || depth != bracket_depth)
                return false;
            in_brackets = false;
        } else if (c == '(' || c == ')') {
            depth += c == '(' ? 1 : -1;
            if (depth < 0 || (in_brackets && depth < bracket_depth))
                return false;
        } else if (!word && !(in_brackets && (c == '+' || c == '-'))) {
            return false;
        }
    }
    return depth == 0 && !in_brackets;
}

// "\tfield:DECL;\toffset:N;\tsize:N;\tsigned:N;" (blanks around
// allowed) as the kernel writes it; "" when @line is not that.
std::string field_line(std::string_view line) {
    auto blanks = [&] { line.remove_prefix(std::min(line.find_first_not_of(" \t"), line.size())); };
    blanks();
    if (!eat(line, "field:"))
        return {};
    const auto semi = line.find(';');
    if (semi == std::string_view::npos || !is_declaration(line.substr(0, semi)))
        return {};
    std::string out = "\tfield:" + std::string(line.substr(0, semi)) + ";";
    line.remove_prefix(semi + 1);
    for (const char* key : {"offset:", "size:", "signed:"}) {
        blanks();
        const auto end = line.find(';');
        if (!eat(line, key) || end == std::string_view::npos ||
            !is_number(line.substr(0, end - std::strlen(key))))
            return {};
        out += "\t" + std::string(key) + std::string(line.substr(0, end - std::strlen(key))) + ";";
        line.remove_prefix(end - std::strlen(key) + 1);
    }
    blanks();
    return line.empty() ? out : std::string();
}

// @text re-written for libtraceevent: its name, ID and fields as the
// kernel writes them, each line checked, the common fields (the lines
// before the first blank one) apart from the others, and an empty print
// fmt in place of its own, which kring does not use. Error: the line that
// does not read so.
kring::result<std::string> format_lines(std::string_view text) {
    std::vector<std::vector<std::string>> groups(1);
    std::string name, id;
    unsigned n = 0;
    bool format = false;
    while (!text.empty()) {
        const auto nl = text.find('\n');
        std::string_view line = text.substr(0, nl);
        text.remove_prefix(nl == std::string_view::npos ? text.size() : nl + 1);
        n++;
        auto bad = [&] {
            return kring::error(EINVAL,
                                "its line " + std::to_string(n) + " does not read as a format's");
        };
        if (n == 1) {
            if (!eat(line, "name: ") || !is_ident(line))
                return bad();
            name = line;
        } else if (n == 2) {
            if (!eat(line, "ID: ") || !is_number(line) ||
                std::stoull(std::string(line)) > 0x7fffffff)
                return bad();
            id = line;
        } else if (n == 3) {
            if (line != "format:")
                return bad();
            format = true;
        } else if (line.find_first_not_of(" \t") == std::string_view::npos) {
            if (!groups.back().empty())
                groups.emplace_back();
        } else if (line.rfind("print fmt:", 0) == 0) {
            break;
        } else {
            auto f = field_line(line);
            if (f.empty())
                return bad();
            groups.back().push_back(std::move(f));
        }
    }
    if (groups.back().empty())
        groups.pop_back();
    if (!format || groups.empty() || groups.size() > 2)
        return kring::error(EINVAL, "it does not read as a format (name, ID, fields)");
    std::string out = "name: " + name + "\nID: " + id + "\nformat:\n";
    for (const auto& g : groups) {
        for (const auto& l : g)
            out += l + "\n";
        out += "\n";
    }
    if (groups.size() == 1)
        out += "\n";
    return out + "print fmt: \"\"\n";
}

// @s for a message: at most 64 bytes, '?' for those outside printable
// ASCII.
std::string printable(std::string_view s) {
    std::string n(s.substr(0, 64));
    for (char& c : n)
        if (c <= ' ' || c > '~')
            c = '?';
    return n;
}

// The name a format's text gives, for a message ("?" without a name line).
std::string name_line(std::string_view text) {
    if (text.rfind("name: ", 0) != 0)
        return "?";
    return printable(text.substr(6, std::min<std::size_t>(text.find('\n'), 70) - 6));
}

}  // namespace

struct tracepoint_decoder::impl {
    tep_handle* tep = nullptr;
    bool big_endian = false;
    // Where every accepted format has common_type, the event's ID.
    std::size_t type_offset = 0, type_size = 0;
    // The accepted formats by ID (libtraceevent owns them).
    std::map<std::int64_t, const tep_event*> events;
    ~impl() {
        if (tep)
            tep_free(tep);
    }
    // Why @ev is refused ("" when it is accepted).
    std::string check(const tep_event& ev);
};

std::string tracepoint_decoder::impl::check(const tep_event& ev) {
    const tep_format_field* type = nullptr;
    for (const auto* list : {ev.format.common_fields, ev.format.fields})
        for (const tep_format_field* f = list; f; f = f->next) {
            if (auto why = misplaced(*f); !why.empty())
                return why;
            if (list == ev.format.common_fields && f->name &&
                std::strcmp(f->name, "common_type") == 0)
                type = f;
        }
    if (!type)
        return "no field common_type";
    if (!is_number_size(type->size))
        return "common_type is " + std::to_string(type->size) + " bytes";
    if (!type_size) {
        type_offset = std::size_t(type->offset);
        type_size = std::size_t(type->size);
    } else if (std::size_t(type->offset) != type_offset || std::size_t(type->size) != type_size) {
        return "common_type at offset " + std::to_string(type->offset) + ", " +
               std::to_string(type->size) + " bytes, where the formats before had it at " +
               std::to_string(type_offset) + ", " + std::to_string(type_size) + " bytes";
    }
    if (events.count(ev.id))
        return "its ID " + std::to_string(ev.id) + " is another format's";
    return {};
}

tracepoint_decoder::tracepoint_decoder(std::span<const std::byte> tracing_data)
    : p_(std::make_unique<impl>()) {
    if (tracing_data.empty()) {
        why_ = "the recording has no tracing data";
        return;
    }
    auto t = kring::perf_data::parse_tracing_data(tracing_data);
    if (!t) {
        why_ = t.error().message();
        return;
    }
    p_->tep = tep_alloc();
    if (!p_->tep) {
        why_ = "libtraceevent: no memory";
        return;
    }
    p_->big_endian = t->big_endian;
    tep_set_long_size(p_->tep, t->long_size);
    tep_set_page_size(p_->tep, int(t->page_size));
    tep_set_file_bigendian(p_->tep, t->big_endian ? TEP_BIG_ENDIAN : TEP_LITTLE_ENDIAN);
    tep_set_local_bigendian(p_->tep, TEP_LITTLE_ENDIAN);
    for (const auto& [sys, text] : t->events) {
        auto lines = format_lines(text);
        if (!lines) {
            refused_.push_back({printable(sys) + ":" + name_line(text), lines.error().message()});
            continue;
        }
        tep_event* ev = nullptr;
        (void)tep_parse_format(p_->tep, &ev, lines->data(), lines->size(), sys.c_str());
        // libtraceevent keeps an event whose fields it could not read, as
        // far as it read them (flagged failed).
        if (!ev || (ev->flags & TEP_EVENT_FL_FAILED)) {
            refused_.push_back(
                {sys + ":" + name_line(text), ev ? "libtraceevent does not read its fields"
                                                 : "libtraceevent does not read its name and ID"});
            continue;
        }
        const std::string name = printable(sys) + ":" + (ev->name ? ev->name : "?");
        if (auto why = p_->check(*ev); !why.empty())
            refused_.push_back({name, why});
        else
            p_->events.emplace(ev->id, ev);
    }
}

tracepoint_decoder::~tracepoint_decoder() = default;

std::optional<std::vector<tp_field_value>> tracepoint_decoder::decode(
    std::span<const std::byte> raw) const {
    const impl& d = *p_;
    if (d.events.empty() || raw.size() < d.type_offset + d.type_size)
        return std::nullopt;
    const auto type = load_uint(raw.data() + d.type_offset, d.type_size, d.big_endian);
    const auto it = d.events.find(std::int64_t(type));
    if (it == d.events.end())
        return std::nullopt;
    std::vector<tp_field_value> out;
    for (const tep_format_field* f = it->second->format.fields; f; f = f->next) {
        // A RAW shorter than its format: not decoded. (check() bounded
        // every offset and size: no sum below overflows.)
        const auto off = std::size_t(f->offset), size = std::size_t(f->size);
        if (off + size > raw.size())
            return std::nullopt;
        const std::byte* at = raw.data() + off;
        if (f->flags & TEP_FIELD_IS_DYNAMIC) {
            // A u32: the data's offset in the RAW (__rel_loc: from the
            // field's end) in the low 16 bits, its length in the high.
            const auto loc = load_uint(at, 4, d.big_endian);
            std::size_t data = loc & 0xffff;
            const std::size_t len = loc >> 16;
            if (f->flags & TEP_FIELD_IS_RELATIVE)
                data += off + size;
            if (data + len > raw.size())
                return std::nullopt;  // outside its RAW: not decoded
            if (is_text(*f)) {
                const char* s = reinterpret_cast<const char*>(raw.data() + data);
                out.push_back({f->name, std::string(s, strnlen(s, len))});
            }
            continue;  // other dynamic arrays: left out
        }
        if (is_text(*f)) {
            const char* s = reinterpret_cast<const char*>(at);
            out.push_back({f->name, std::string(s, strnlen(s, size))});
            continue;
        }
        if ((f->flags & TEP_FIELD_IS_ARRAY) || !is_number_size(f->size))
            continue;  // not a number or a string: left out
        const std::uint64_t v = load_uint(at, size, d.big_endian);
        std::int64_t sv = std::int64_t(v);
        if ((f->flags & TEP_FIELD_IS_SIGNED) && size < 8) {
            const unsigned bits = unsigned(size) * 8;
            sv = std::int64_t(v << (64 - bits)) >> (64 - bits);
        }
        out.push_back({f->name, sv});
    }
    return out;
}

}  // namespace kring_tool
