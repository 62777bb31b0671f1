// libkring's perf.data component: the reader (file).
#include "format.hpp"

#include <functional>
#include <unordered_map>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace kring::perf_data {

using namespace detail;

// ---------------------------------------------------------------------------
// file

struct file::impl {
    unique_mapping map;
    std::vector<std::byte> owned;
    std::span<const std::byte> d;
    std::vector<event_attr> attrs;
    features feats;
    std::unordered_map<std::uint64_t, std::size_t> by_id;
    std::uint64_t data_begin = 0, data_end = 0;  // the readable records
    std::optional<truncation> trunc;
    // The AUXTRACE records of the feat_kring_auxtrace section.
    struct aux_entry {
        std::uint64_t data_pos, offset, payload;
    };
    std::vector<aux_entry> aux;

    bool pipe = false;  // perf's pipe format: header records among the data

    const std::byte* at(std::uint64_t off) const { return d.data() + off; }
    // [off, off + len) within the file, without overflow.
    bool inside(std::uint64_t off, std::uint64_t len) const {
        return off <= d.size() && len <= d.size() - off;
    }

    void parse_aux_section(std::uint64_t at, std::uint64_t size);

    // parse(): the header, the attrs and their ids, the data section's
    // whole records, the feature sections.
    result<void> parse(const std::string& name);
    result<file_header> read_header(const std::string& name) const;
    result<void> read_attrs(const file_header& h, const std::string& name);
    // The readable records; false when no feature table follows them.
    bool find_data(const file_header& h);
    void read_features(const file_header& h);
    result<void> parse_pipe(const std::string& name);
    std::uint64_t whole_records(
        std::uint64_t pos, std::uint64_t end, const std::string& why_end,
        const std::function<bool(std::uint64_t, const perf_event_header&)>& f);
    void add_attr(event_attr e) {
        for (auto id : e.ids)
            by_id.emplace(id, attrs.size());
        attrs.push_back(std::move(e));
    }
    // A feature section's body into feats (EVENT_DESC names the attrs, by
    // position).
    void read_feature(unsigned bit, std::span<const std::byte> body) {
        std::vector<event_attr> desc;
        if (decode_feature(bit, body, feats, &desc) && bit == feat_event_desc)
            for (std::size_t i = 0; i < desc.size() && i < attrs.size(); ++i)
                attrs[i].name = desc[i].name;
    }
    void note(std::uint64_t offset, std::string what) {
        if (!trunc)
            trunc = truncation{offset, std::move(what)};
    }
};

namespace {

// Records whose payload follows them in the data, its size in the record at
// offset 8: AUXTRACE's (a u64) and a stream's TRACING_DATA (a u32).
struct payload_rule {
    const char* name;
    std::uint16_t min_size;  // the record's, for the size word to lie inside it
    bool wide;               // the size is a u64 (else a u32)
};

std::optional<payload_rule> payload_rule_of(std::uint32_t type) {
    if (type == record_auxtrace)
        return payload_rule{"AUXTRACE", static_cast<std::uint16_t>(k_auxtrace_size), true};
    if (type == record_header_tracing_data)
        return payload_rule{"TRACING_DATA", 16, false};
    return std::nullopt;
}

std::uint64_t payload_size(const std::byte* rec, const payload_rule& r) {
    if (r.wide) {
        std::uint64_t n;
        std::memcpy(&n, rec + 8, 8);
        return n;
    }
    std::uint32_t n;
    std::memcpy(&n, rec + 8, 4);
    return n;
}

// The payload after the record at @rec (whole_records() checked it), 0 for
// a type without one.
std::uint64_t payload_after(const std::byte* rec, std::uint32_t type) {
    const auto r = payload_rule_of(type);
    return r ? payload_size(rec, *r) : 0;
}

}  // namespace

file::file(std::unique_ptr<impl> p) : p_(std::move(p)) {}
file::file(file&&) noexcept = default;
file& file::operator=(file&&) noexcept = default;
file::~file() = default;

result<void> file::impl::parse(const std::string& name) {
    const std::uint64_t fsize = d.size();
    if (fsize >= k_pipe_header_size) {
        std::uint64_t magic, size;
        std::memcpy(&magic, d.data(), 8);
        std::memcpy(&size, d.data() + 8, 8);
        if (magic == k_magic && size == k_pipe_header_size)
            return parse_pipe(name);
    }
    auto h = read_header(name);
    if (!h)
        return h.error();
    if (auto r = read_attrs(*h, name); !r)
        return r;
    if (find_data(*h))
        read_features(*h);
    return {};
}

result<file_header> file::impl::read_header(const std::string& name) const {
    const std::uint64_t fsize = d.size();
    if (fsize < k_header_size_v1)
        return einval(name + ": not a perf.data file (" + std::to_string(fsize) + " bytes)");
    file_header h;
    std::memcpy(&h, d.data(), std::min<std::uint64_t>(fsize, sizeof(h)));
    if (h.magic == k_magic_swapped)
        return einval(name + ": a perf.data file of the opposite byte order");
    if (h.magic != k_magic)
        return einval(name + ": not a perf.data file (no PERFILE2 magic)");
    if (h.size == k_header_size_v1)
        std::memset(h.features, 0, sizeof(h.features));
    else if (h.size != k_header_size || fsize < k_header_size)
        return einval(name + ": perf.data header of unknown size " + std::to_string(h.size));
    if (h.attr_size < k_attr_ver0 + sizeof(file_section) || h.attr_size > 4096)
        return einval(name + ": perf.data attr size " + std::to_string(h.attr_size) +
                      " is not one perf writes");
    if (!inside(h.attrs.offset, h.attrs.size) || h.attrs.offset < h.size)
        return einval(name + ": the attrs section lies outside the file");
    if (h.data.offset < h.size)
        return einval(name + ": the data section overlaps the header");
    return h;
}

result<void> file::impl::read_attrs(const file_header& h, const std::string& name) {
    const std::uint64_t fsize = d.size();
    const std::uint64_t nattrs = h.attrs.size / h.attr_size;
    std::uint64_t total_ids = 0;  // ids do not share bytes: at most fsize / 8
    for (std::uint64_t i = 0; i < nattrs; ++i) {
        const std::byte* a = at(h.attrs.offset + i * h.attr_size);
        event_attr e;
        const std::size_t asz = h.attr_size - sizeof(file_section);
        std::memcpy(&e.attr, a, std::min(asz, k_attr_size));
        file_section ids;
        std::memcpy(&ids, a + asz, sizeof(ids));
        if (!inside(ids.offset, ids.size))
            return einval(name + ": the ids of attr " + std::to_string(i) +
                          " lie outside the file");
        total_ids += ids.size / 8;
        if (total_ids > fsize / 8)
            return einval(name + ": the ids of the attrs overlap");
        e.ids.resize(ids.size / 8);
        if (!e.ids.empty())
            std::memcpy(e.ids.data(), at(ids.offset), e.ids.size() * 8);
        add_attr(std::move(e));
    }
    return {};
}

bool file::impl::find_data(const file_header& h) {
    const std::uint64_t fsize = d.size();
    // A placeholder header (the writer did not finish) reads to the end of
    // the file.
    bool features_set = false;
    for (auto w : h.features)
        features_set |= w != 0;
    const bool unfinished = h.data.size == 0 && !features_set;
    data_begin = std::min(h.data.offset, fsize);
    if (unfinished) {
        data_end = fsize;
    } else if (!inside(h.data.offset, h.data.size)) {
        data_end = fsize;
    } else {
        data_end = h.data.offset + h.data.size;
    }
    std::string why_end = unfinished ? " (data size 0: the writer did not finish)" : "";
    if (h.data.offset > fsize)
        note(fsize, "the data section at offset " + std::to_string(h.data.offset) +
                        " starts past the end of the file (" + std::to_string(fsize) + " bytes)");

    // The records: find the last whole one.
    std::uint64_t pos = whole_records(data_begin, data_end, why_end, nullptr);
    if (pos >= data_end) {
        if (unfinished)
            note(pos,
                 "data size 0 at offset " + std::to_string(pos) + ": the writer did not finish");
        else if (!inside(h.data.offset, h.data.size) && h.data.offset <= fsize)
            note(pos, "the data section (" + std::to_string(h.data.size) + " bytes at offset " +
                          std::to_string(h.data.offset) + ") runs past the end of the file (" +
                          std::to_string(fsize) + " bytes)");
    }
    data_end = std::min(pos, data_end);
    return !unfinished && inside(h.data.offset, h.data.size);
}

void file::impl::read_features(const file_header& h) {
    const std::uint64_t fsize = d.size();
    // The table behind the data, one entry per bit.
    const std::uint64_t feat_at = h.data.offset + h.data.size;
    std::uint64_t slot = 0;
    for (unsigned bit = 0; bit < k_feat_bits; ++bit) {
        if (!(h.features[bit / 64] & (std::uint64_t{1} << (bit % 64))))
            continue;
        const std::uint64_t entry = feat_at + slot++ * sizeof(file_section);
        if (!inside(entry, sizeof(file_section))) {
            note(std::min(entry, fsize), "the feature section table is cut short at offset " +
                                             std::to_string(std::min(entry, fsize)));
            break;
        }
        file_section s;
        std::memcpy(&s, at(entry), sizeof(s));
        if (!inside(s.offset, s.size)) {
            note(fsize, "feature section " + std::to_string(bit) + " (" + std::to_string(s.size) +
                            " bytes at offset " + std::to_string(s.offset) +
                            ") runs past the end of the file");
            continue;
        }
        if (bit == feat_kring_auxtrace) {
            parse_aux_section(s.offset, s.size);
            continue;
        }
        read_feature(bit, {at(s.offset), s.size});
    }
}

// perf's pipe format (writer::create_pipe()): the attrs and the features
// are records among the data. A stream is complete when it ends with the
// features its writer's finish() appends.
result<void> file::impl::parse_pipe(const std::string& name) {
    pipe = true;
    bool features_last = false;
    std::string bad;
    data_begin = k_pipe_header_size;
    data_end = whole_records(
        data_begin, d.size(), "", [&](std::uint64_t pos, const perf_event_header& rh) {
            cursor c{d.data() + pos + sizeof(rh), d.data() + pos + rh.size};
            if (rh.type == record_header_attr) {
                event_attr e;
                std::uint32_t type, asz;
                if (!c.get(type) || !c.get(asz) || asz < k_attr_ver0 ||
                    asz > rh.size - sizeof(rh) || (rh.size - sizeof(rh) - asz) % 8) {
                    bad = "attr record of size " + std::to_string(rh.size) + " at offset " +
                          std::to_string(pos) + " cannot be read";
                    return false;
                }
                std::memcpy(&e.attr, d.data() + pos + sizeof(rh),
                            std::min<std::size_t>(asz, k_attr_size));
                e.ids.resize((rh.size - sizeof(rh) - asz) / 8);
                if (!e.ids.empty())
                    std::memcpy(e.ids.data(), d.data() + pos + sizeof(rh) + asz, e.ids.size() * 8);
                add_attr(std::move(e));
                return true;
            }
            if (rh.type == record_header_tracing_data) {
                read_feature(feat_tracing_data,
                             d.subspan(pos + rh.size, payload_after(d.data() + pos, rh.type)));
                return true;
            }
            if (rh.type == k_record_header_feature) {
                std::uint64_t bit = 0;
                if (!c.get(bit)) {
                    bad = "feature record at offset " + std::to_string(pos) + " is too short";
                    return false;
                }
                if (bit < k_feat_bits)
                    read_feature(unsigned(bit), {c.p, c.left()});
                features_last = true;
                return true;
            }
            features_last = false;
            return true;
        });
    if (attrs.empty())
        return einval(name + ": a perf pipe stream without an attr record" +
                      (bad.empty() ? "" : " (" + bad + ")"));
    if (!bad.empty())
        note(data_end, bad);
    else if (!features_last)
        note(data_end, "the stream ends at offset " + std::to_string(data_end) +
                           " before its features: the writer did not finish");
    return {};
}

// Walk the records of [@pos, @end) and return where the last whole one
// ends, noting why the walk stopped short (@why_end added); @f (if any)
// sees each whole record and may stop the walk by returning false.
std::uint64_t file::impl::whole_records(
    std::uint64_t pos, const std::uint64_t end, const std::string& why_end,
    const std::function<bool(std::uint64_t, const perf_event_header&)>& f) {
    const std::uint64_t data_end = end, fsize = d.size();
    while (pos < data_end) {
        const std::uint64_t left = data_end - pos;
        perf_event_header rh;
        if (left < sizeof(rh)) {
            note(pos, "record header cut short at offset " + std::to_string(pos) + why_end);
            break;
        }
        std::memcpy(&rh, at(pos), sizeof(rh));
        if (rh.size == 0) {
            note(pos, "record of size 0 at offset " + std::to_string(pos) + why_end);
            break;
        }
        if (rh.size % 8) {
            note(pos, "record size " + std::to_string(rh.size) +
                          " is not a multiple of 8 at offset " + std::to_string(pos) + why_end);
            break;
        }
        if (rh.size > left) {
            note(pos, "record of size " + std::to_string(rh.size) + " at offset " +
                          std::to_string(pos) + " runs past " +
                          (data_end == fsize ? "the end of the file" : "the data section") +
                          why_end);
            break;
        }
        std::uint64_t whole = rh.size;
        if (const auto pr = payload_rule_of(rh.type)) {
            if (rh.size < pr->min_size) {
                note(pos, std::string(pr->name) + " record of size " + std::to_string(rh.size) +
                              " at offset " + std::to_string(pos) + " is too short" + why_end);
                break;
            }
            const std::uint64_t payload = payload_size(at(pos), *pr);
            if (payload > left - rh.size) {
                note(pos, std::string(pr->name) + " payload of " + std::to_string(payload) +
                              " bytes at offset " + std::to_string(pos) + " runs past " +
                              (data_end == fsize ? "the end of the file" : "the data section") +
                              why_end);
                break;
            }
            whole += payload;
        }
        if (f && !f(pos, rh))
            break;
        pos += whole;
    }
    return pos;
}

// The section: u32 version, u32 0, then per record its data position
// (u64, nondecreasing), the AUXTRACE record and its payload.
void file::impl::parse_aux_section(std::uint64_t at, std::uint64_t size) {
    cursor c{d.data() + at, d.data() + at + size};
    std::uint32_t version = 0, zero;
    if (!c.get(version) || !c.get(zero) || version != k_auxtrace_section_version)
        return;  // another version's: not read
    std::uint64_t last = 0;
    while (c.left()) {
        const std::uint64_t off = static_cast<std::uint64_t>(c.p - d.data());
        std::uint64_t pos, payload;
        perf_event_header h;
        const bool ok = c.left() >= 8 + k_auxtrace_size && c.get(pos) && pos >= last && c.get(h) &&
                        h.type == record_auxtrace && h.size >= k_auxtrace_size && h.size % 8 == 0 &&
                        c.left() + sizeof(h) >= h.size && c.get(payload) &&
                        c.left() + 16 >= h.size && payload <= c.left() + 16 - h.size;
        if (!ok) {
            note(off, "the AUXTRACE record at offset " + std::to_string(off) +
                          " of the kring AUXTRACE section cannot be read");
            return;
        }
        aux.push_back({pos, off + 8, payload});
        c.p = d.data() + off + 8 + h.size + payload;
        last = pos;
    }
}

result<file> file::open(const std::string& path) {
    if (path == "-") {
        // A stream on standard input: read to its end, then parse.
        std::vector<std::byte> bytes;
        for (;;) {
            const std::size_t have = bytes.size();
            bytes.resize(have + k_buffer);
            const ssize_t n = ::read(STDIN_FILENO, bytes.data() + have, k_buffer);
            if (n < 0 && errno == EINTR) {
                bytes.resize(have);
                continue;
            }
            if (n < 0)
                return error::from_errno(errno, "cannot read standard input");
            bytes.resize(have + static_cast<std::size_t>(n));
            if (n == 0)
                break;
        }
        return from_owned(std::move(bytes), "standard input");
    }
    auto p = std::make_unique<impl>();
    // O_NONBLOCK: a FIFO given as the file is refused below (not a
    // regular file) rather than waited on for a writer.
    unique_fd fd(::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY));
    if (!fd)
        return error::from_errno(errno, "cannot open " + path);
    struct stat st;
    if (::fstat(fd.get(), &st) < 0)
        return error::from_errno(errno, "cannot stat " + path);
    if (!S_ISREG(st.st_mode))
        return einval(path + ": not a regular file");
    if (st.st_size > 0) {
        auto m = unique_mapping::map(fd.get(), static_cast<std::size_t>(st.st_size), PROT_READ, 0,
                                     ("cannot map " + path).c_str());
        if (!m)
            return m.error();
        // A private, read-only view is enough; MAP_SHARED is what the
        // mapping owner does.
        p->map = std::move(*m);
        p->d = {static_cast<const std::byte*>(p->map.get()), p->map.size()};
    }
    if (auto r = p->parse(path); !r)
        return r.error();
    return file(std::move(p));
}

result<file> file::from_owned(std::vector<std::byte> bytes, const std::string& name) {
    auto p = std::make_unique<impl>();
    p->owned = std::move(bytes);
    p->d = {p->owned.data(), p->owned.size()};
    if (auto r = p->parse(name); !r)
        return r.error();
    return file(std::move(p));
}

result<file> file::from_bytes(std::vector<std::byte> bytes) {
    return from_owned(std::move(bytes), "perf.data bytes");
}

const std::vector<event_attr>& file::attrs() const noexcept { return p_->attrs; }
const features& file::feats() const noexcept { return p_->feats; }

const event_attr* file::attr_by_id(std::uint64_t id) const noexcept {
    auto it = p_->by_id.find(id);
    return it == p_->by_id.end() ? nullptr : &p_->attrs[it->second];
}

const event_attr* file::attr_of(const record_view& r) const noexcept {
    const auto& attrs = p_->attrs;
    if (attrs.empty())
        return nullptr;
    if (attrs.size() == 1)
        return &attrs[0];
    const std::uint32_t type = r.type();
    if (type >= record_header_attr)
        return nullptr;
    const std::uint64_t st = attrs[0].attr.sample_type;
    if (type == PERF_RECORD_SAMPLE) {
        if (auto s = parse_sample(r, st); s && (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)))
            return attr_by_id(s->id);
        return nullptr;
    }
    if (!attrs[0].attr.sample_id_all)
        return nullptr;
    if (auto s = parse_sample_id(r, st); s && (st & (PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_ID)))
        return attr_by_id(s->id);
    return nullptr;
}

result<void> file::for_each(const std::function<void(const record_view&)>& f) const {
    const auto& p = *p_;
    auto aux = p.aux.begin();
    // The AUXTRACE records of the section written before data position @pos.
    auto aux_until = [&](std::uint64_t pos) {
        for (; aux != p.aux.end() && aux->data_pos <= pos; ++aux) {
            perf_event_header h;
            std::memcpy(&h, p.d.data() + aux->offset, sizeof(h));
            record_view r;
            r.offset = aux->offset;
            r.bytes = p.d.subspan(aux->offset, h.size);
            r.auxtrace = p.d.subspan(aux->offset + h.size, aux->payload);
            f(r);
        }
    };
    std::uint64_t pos = p.data_begin;
    // parse() checked every record up to data_end.
    while (pos < p.data_end) {
        aux_until(pos - p.data_begin);
        perf_event_header h;
        std::memcpy(&h, p.d.data() + pos, sizeof(h));
        // The same step as whole_records(): the record and its payload.
        const std::uint64_t payload = payload_after(p.d.data() + pos, h.type);
        if (p.pipe && (h.type == record_header_attr || h.type == k_record_header_feature ||
                       h.type == record_header_tracing_data)) {
            pos += h.size + payload;  // the stream's header, read by parse_pipe()
            continue;
        }
        record_view r;
        r.offset = pos;
        r.bytes = p.d.subspan(pos, h.size);
        if (h.type == record_auxtrace)
            r.auxtrace = p.d.subspan(pos + h.size, payload);
        f(r);
        pos += h.size + payload;
    }
    // Those written after the last record; none past a damaged record.
    aux_until(p.data_end - p.data_begin);
    return {};
}

bool file::truncated() const noexcept { return p_->trunc.has_value(); }
const std::optional<truncation>& file::truncation_info() const noexcept { return p_->trunc; }

}  // namespace kring::perf_data
