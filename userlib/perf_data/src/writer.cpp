// libkring's perf.data component: the writer.
#include "format.hpp"

#include <fcntl.h>
#include <optional>
#include <sys/stat.h>
#include <unistd.h>

namespace kring::perf_data {

using namespace detail;

namespace {

// All @n bytes, at the file position, or at @off (pwrite) when given.
result<void> write_all(int fd, const std::byte* p, std::size_t n, const std::string& path,
                       std::optional<off_t> off = std::nullopt) {
    while (n) {
        ssize_t w = off ? ::pwrite(fd, p, n, *off) : ::write(fd, p, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return error::from_errno(errno, "write " + path);
        }
        p += w;
        n -= static_cast<std::size_t>(w);
        if (off)
            *off += w;
    }
    return {};
}

// An unnamed temporary file next to @path (the same file system, so that
// finish() copies it within the kernel), else in /tmp.
result<unique_fd> open_spool(const std::string& path) {
    const auto slash = path.rfind('/');
    const std::string dir = slash == std::string::npos ? "." : path.substr(0, slash + 1);
    for (const std::string& d : {dir, std::string("/tmp")}) {
        int fd = ::open(d.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
        if (fd >= 0)
            return unique_fd(fd);
        std::string t = d + "/.kring-aux.XXXXXX";
        fd = ::mkostemp(t.data(), O_CLOEXEC);
        if (fd >= 0) {
            ::unlink(t.c_str());
            return unique_fd(fd);
        }
    }
    return error::from_errno(errno, "cannot create a temporary file for the AUX data of " + path);
}

// Appends the @size bytes of @from to @to (at its offset).
result<void> copy_spool(int from, int to, std::uint64_t size, const std::string& path) {
    loff_t in = 0;
    bool plain = false;
    while (in < static_cast<loff_t>(size)) {
        const std::size_t want = static_cast<std::size_t>(
            std::min<std::uint64_t>(size - static_cast<std::uint64_t>(in), 1 << 30));
        if (!plain) {
            ssize_t n = ::copy_file_range(from, &in, to, nullptr, want, 0);
            if (n > 0)
                continue;
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && errno != EXDEV && errno != ENOSYS && errno != EINVAL &&
                errno != EOPNOTSUPP)
                return error::from_errno(errno, "write " + path);
            plain = true;  // n == 0 or no copy_file_range here: read and write
        }
        std::vector<std::byte> buf(std::min<std::size_t>(want, k_buffer));
        ssize_t n = ::pread(from, buf.data(), buf.size(), in);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return error::from_errno(n < 0 ? errno : EIO, "read the AUX data of " + path);
        if (auto r = write_all(to, buf.data(), static_cast<std::size_t>(n), path); !r)
            return r;
        in += n;
    }
    return {};
}

// A file's attrs section at file offset @at, appended to @out: each attr
// with the section of its ids, then the ids. Returns the section.
file_section put_attrs(std::vector<std::byte>& out, std::vector<event_attr>& attrs,
                       std::uint64_t at) {
    const std::uint64_t file_attr_size = k_attr_size + sizeof(file_section);
    const file_section s{at, file_attr_size * attrs.size()};
    std::uint64_t ids_at = s.offset + s.size;
    for (auto& a : attrs) {
        a.attr.size = k_attr_size;
        put(out, a.attr);
        file_section ids{ids_at, a.ids.size() * 8};
        put(out, ids);
        ids_at += ids.size;
    }
    for (const auto& a : attrs)
        for (auto id : a.ids)
            put(out, id);
    return s;
}

}  // namespace

// ---------------------------------------------------------------------------
// writer

struct writer::impl {
    unique_fd fd;
    std::string path;
    bool pipe = false;  // perf's pipe format (create_pipe())
    std::vector<event_attr> attrs;
    std::vector<std::byte> buf;
    std::uint64_t data_offset = 0;
    std::uint64_t data_size = 0;  // written or buffered
    bool finished = false;
    file_header header;
    unique_fd spool;  // the AUXTRACE records until finish()
    std::uint64_t spool_size = 0;
    std::vector<std::byte> tracing;  // a file's HEADER_TRACING_DATA
    bool tracing_set = false;
    bool attrs_added = false;  // add_attr(): the attrs go after the data

    result<void> flush() {
        if (buf.empty())
            return {};
        auto r = write_all(fd.get(), buf.data(), buf.size(), path);
        buf.clear();
        return r;
    }
    result<void> append(const void* p, std::size_t n) {
        const auto* b = static_cast<const std::byte*>(p);
        if (buf.size() + n > k_buffer) {
            if (auto r = flush(); !r)
                return r;
            if (n >= k_buffer) {
                data_size += n;
                return write_all(fd.get(), b, n, path);
            }
        }
        buf.insert(buf.end(), b, b + n);
        data_size += n;
        return {};
    }
};

writer::writer(std::unique_ptr<impl> p) : p_(std::move(p)) {}
writer::writer(writer&&) noexcept = default;
writer& writer::operator=(writer&&) noexcept = default;
// A writer dropped without finish() leaves what it buffered in the file
// (best effort): it then reads as truncated, with every record written.
writer::~writer() {
    if (p_ && !p_->finished && p_->fd)
        (void)p_->flush();
}

// perf's pipe format (tools/perf/Documentation/perf.data-file-format.txt,
// "Pipe-mode data"): a 16-byte header, then every attr as a
// PERF_RECORD_HEADER_ATTR record (the attr, then its ids), then the
// records; finish() appends the features as PERF_RECORD_HEADER_FEATURE
// records, perf's own only (perf refuses a feature it does not know in a
// pipe): the kring section is not in a stream. Nothing is ever sought.
result<writer> writer::create_pipe(int out, std::vector<event_attr> attrs) {
    const std::string name =
        out == STDOUT_FILENO ? "standard output" : "the stream on fd " + std::to_string(out);
    int fd = ::fcntl(out, F_DUPFD_CLOEXEC, 3);
    if (fd < 0)
        return error::from_errno(errno, name);
    auto p = std::make_unique<impl>();
    p->fd.reset(fd);
    p->path = name;
    p->pipe = true;
    p->attrs = std::move(attrs);
    p->buf.reserve(k_buffer);
    std::vector<std::byte> front;
    put(front, k_magic);
    put(front, k_pipe_header_size);
    for (auto& a : p->attrs) {
        a.attr.size = k_attr_size;
        const std::uint64_t size = 8 + k_attr_size + 8 * a.ids.size();
        if (size > std::numeric_limits<std::uint16_t>::max())
            return einval(name + ": " + std::to_string(a.ids.size()) +
                          " ids are more than a pipe's attr record holds");
        put(front, perf_event_header{record_header_attr, 0, static_cast<std::uint16_t>(size)});
        put(front, a.attr);
        for (auto id : a.ids)
            put(front, id);
    }
    if (auto r = write_all(fd, front.data(), front.size(), p->path); !r)
        return r.error();
    return writer(std::move(p));
}

result<writer> writer::create(const std::string& path, std::vector<event_attr> attrs) {
    if (path == "-")
        return create_pipe(STDOUT_FILENO, std::move(attrs));
    int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return error::from_errno(errno, "cannot create " + path);
    auto p = std::make_unique<impl>();
    p->fd.reset(fd);
    p->path = path;
    p->attrs = std::move(attrs);
    p->buf.reserve(k_buffer);

    // header | attrs (attr + ids section each) | ids | data
    const std::uint64_t file_attr_size = k_attr_size + sizeof(file_section);
    std::vector<std::byte> front;
    file_header& h = p->header;
    h.magic = k_magic;
    h.size = k_header_size;
    h.attr_size = file_attr_size;
    front.resize(k_header_size);
    h.attrs = put_attrs(front, p->attrs, k_header_size);
    h.data = {align8(front.size()), 0};
    pad_to(front, 0, 8);
    std::memcpy(front.data(), &h, sizeof(h));
    p->data_offset = h.data.offset;
    if (auto r = write_all(fd, front.data(), front.size(), path); !r)
        return r.error();
    return writer(std::move(p));
}

result<void> writer::write(std::span<const std::byte> bytes) {
    if (p_->finished)
        return einval("write " + p_->path + ": the file is finished");
    const auto h = header_of(bytes);
    if (bytes.size() < sizeof(h) || h.size != bytes.size() || bytes.size() % 8)
        return einval("write " + p_->path + ": malformed record (size " +
                      std::to_string(bytes.size()) + ", header size " + std::to_string(h.size) +
                      ")");
    if (h.type == record_auxtrace)
        return einval("write " + p_->path + ": AUXTRACE records go through write_auxtrace()");
    if (auto r = p_->append(bytes.data(), bytes.size()); !r)
        return r;
    // A stream's reader gets each round when it is complete (and a reader
    // that went away is known then, not at the end).
    if (p_->pipe && h.type == record_finished_round)
        return p_->flush();
    return {};
}

result<void> writer::write_tracing_data(std::span<const std::byte> data) {
    if (p_->finished)
        return einval("write " + p_->path + ": the file is finished");
    if (!p_->pipe) {
        p_->tracing.assign(data.begin(), data.end());
        return {};
    }
    if (p_->tracing_set || p_->data_size)
        return einval("write " + p_->path +
                      ": a stream's tracing data goes once, before the first record");
    p_->tracing_set = true;
    // perf_event__synthesize_tracing_data(): the record's size word is the
    // data's, padded to 8; the data follows the record.
    std::vector<std::byte> rec;
    put(rec, perf_event_header{record_header_tracing_data, 0, 16});
    put(rec, static_cast<std::uint32_t>(align8(data.size())));
    put(rec, std::uint32_t{0});
    static constexpr std::byte zeros[8] = {};
    const std::span<const std::byte> parts[] = {
        rec, data, {zeros, align8(data.size()) - data.size()}};
    for (auto part : parts)
        if (auto r = p_->append(part.data(), part.size()); !r)
            return r;
    return p_->flush();
}

result<void> writer::add_attr(event_attr a) {
    if (p_->finished)
        return einval("write " + p_->path + ": the file is finished");
    if (p_->pipe)
        return einval("write " + p_->path + ": an event added to a stream");
    a.attr.size = k_attr_size;
    p_->attrs.push_back(std::move(a));
    p_->attrs_added = true;
    return {};
}

result<void> writer::write_auxtrace(std::span<const std::byte> payload, std::uint64_t offset,
                                    std::uint64_t reference, std::uint32_t idx, std::uint32_t tid,
                                    std::uint32_t cpu) {
    if (p_->finished)
        return einval("write " + p_->path + ": the file is finished");
    // The record, then the payload padded to 8 bytes: in the stream (perf's
    // pipe mode), or an entry of the feat_kring_auxtrace section behind
    // its data position.
    std::vector<std::byte> rec;
    rec.reserve(8 + k_auxtrace_size);
    if (!p_->pipe)
        put(rec, p_->data_size);
    put(rec, perf_event_header{record_auxtrace, 0, static_cast<std::uint16_t>(k_auxtrace_size)});
    put(rec, align8(payload.size()));
    put(rec, offset);
    put(rec, reference);
    put(rec, idx);
    put(rec, tid);
    put(rec, cpu);
    put(rec, std::uint32_t{0});
    static constexpr std::byte zeros[8] = {};
    const std::span<const std::byte> parts[] = {
        rec, payload, {zeros, align8(payload.size()) - payload.size()}};
    if (p_->pipe) {
        for (auto part : parts)
            if (auto r = p_->append(part.data(), part.size()); !r)
                return r;
        return {};
    }
    if (!p_->spool) {
        auto s = open_spool(p_->path);
        if (!s)
            return s.error();
        p_->spool = std::move(*s);
    }
    for (auto part : parts)
        if (auto r =
                write_all(p_->spool.get(), part.data(), part.size(), p_->path + " (AUX spool)");
            !r)
            return r;
    p_->spool_size += rec.size() + align8(payload.size());
    return {};
}

result<void> writer::finish(const features& f) {
    if (p_->finished)
        return einval("finish " + p_->path + ": already finished");
    if (auto r = p_->flush(); !r)
        return r;
    auto sections = encode_features(f, p_->attrs);
    sections.erase(feat_tracing_data);  // write_tracing_data()'s
    if (!p_->pipe && !p_->tracing.empty())
        sections[feat_tracing_data] = p_->tracing;
    if (p_->pipe) {
        // perf's features, one record each (a body a record cannot hold is
        // left out); the stream is complete once they are there.
        std::vector<std::byte> tail;
        for (const auto& [bit, body] : sections) {
            const std::uint64_t size = align8(16 + body.size());
            if (bit >= feat_kring || size > std::numeric_limits<std::uint16_t>::max())
                continue;
            put(tail,
                perf_event_header{k_record_header_feature, 0, static_cast<std::uint16_t>(size)});
            put(tail, std::uint64_t{bit});
            put_bytes(tail, body.data(), body.size());
            pad_to(tail, 0, 8);
        }
        if (auto r = write_all(p_->fd.get(), tail.data(), tail.size(), p_->path); !r)
            return r;
        p_->finished = true;
        return {};
    }
    if (p_->spool_size) {
        auto& b = sections[feat_kring_auxtrace];  // its head; the spool follows
        b.clear();
        put(b, k_auxtrace_section_version);
        put(b, std::uint32_t{0});
    }
    auto body_size = [&](unsigned bit, const std::vector<std::byte>& body) {
        return body.size() + (bit == feat_kring_auxtrace ? p_->spool_size : 0);
    };
    file_header h = p_->header;
    h.data.size = p_->data_size;
    const std::uint64_t feat_at = h.data.offset + h.data.size;
    std::vector<std::byte> tail;
    std::uint64_t body_at = feat_at + sections.size() * sizeof(file_section);
    for (const auto& [bit, body] : sections) {
        h.features[bit / 64] |= std::uint64_t{1} << (bit % 64);
        put(tail, file_section{body_at, body_size(bit, body)});
        body_at += body_size(bit, body);
    }
    const int fd = p_->fd.get();
    for (const auto& [bit, body] : sections) {
        put_bytes(tail, body.data(), body.size());
        if (bit != feat_kring_auxtrace)
            continue;
        if (auto r = write_all(fd, tail.data(), tail.size(), p_->path); !r)
            return r;
        tail.clear();
        if (auto r = copy_spool(p_->spool.get(), fd, p_->spool_size, p_->path); !r)
            return r;
    }
    // With an attr added, every attr at the end (perf reads the features
    // right after the data); the copy at the front is left unreferenced.
    if (p_->attrs_added)
        h.attrs = put_attrs(tail, p_->attrs, body_at);
    if (auto r = write_all(fd, tail.data(), tail.size(), p_->path); !r)
        return r;
    if (auto r = write_all(fd, reinterpret_cast<const std::byte*>(&h), sizeof(h), p_->path, 0); !r)
        return r;
    p_->header = h;
    p_->finished = true;
    p_->spool.reset();
    return {};
}

std::uint64_t writer::data_size() const noexcept { return p_->data_size; }
const std::vector<event_attr>& writer::attrs() const noexcept { return p_->attrs; }

}  // namespace kring::perf_data
