// libkring: channels and their mappings.
#include "kring/channel.hpp"

#include "kring/barrier.hpp"

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

namespace kring {

namespace {

// Each feature a channel may need and what in its options asks for it.
struct need {
    std::uint64_t bit;
    const char* why;
};

std::vector<need> needs(const channel_options& o) {
    std::vector<need> n = {{KRING_FEAT_DATA_RING, "a data ring"}};
    const std::uint64_t flags = o.extra_attr_flags;
    if (o.mirror || (flags & KRING_ATTR_F_MIRROR))
        n.push_back({KRING_FEAT_MIRROR, "a mirrored mapping"});
    if (o.overwrite || o.read_only || (flags & KRING_ATTR_F_OVERWRITE))
        n.push_back({KRING_FEAT_OVERWRITE, "an overwrite ring"});
    switch (o.source) {
        case KRING_SOURCE_SYNTHETIC:
            n.push_back({KRING_FEAT_SYNTHETIC, "the synthetic source"});
            break;
        case KRING_SOURCE_SCHED:
            n.push_back({KRING_FEAT_SCHED, "the sched source"});
            break;
        case KRING_SOURCE_TIMER:
            n.push_back({KRING_FEAT_TIMER, "the timer source"});
            break;
        case KRING_SOURCE_AUX_TRACER:
            n.push_back({KRING_FEAT_AUX_TRACER, "the AUX tracer source"});
            break;
        case KRING_SOURCE_EVENT:
            n.push_back({KRING_FEAT_EVENT, "the event source (perf events)"});
            break;
        default:
            break;
    }
    if (o.pid)
        n.push_back({KRING_FEAT_CAPTURE, "following a task (pid)"});
    if (flags & (KRING_ATTR_F_INHERIT | KRING_ATTR_F_EXCLUDE_KERNEL))
        n.push_back({KRING_FEAT_CAPTURE, "a capture flag (inherit, exclude-kernel)"});
    if (o.clockid != KRING_CLOCK_DEFAULT)
        n.push_back({KRING_FEAT_CLOCKS, "a record clock (clockid)"});
    if (o.aux_pages_order || o.aux_watermark)
        n.push_back({KRING_FEAT_AUX, "an AUX area"});
    if (o.sample_type & KRING_SAMPLE_CALLCHAIN)
        n.push_back({KRING_FEAT_CALLCHAIN, "call chains (KRING_SAMPLE_CALLCHAIN)"});
    return n;
}

}  // namespace

std::uint64_t needed_features(const channel_options& o) {
    std::uint64_t f = required_features;
    for (const need& n : needs(o))
        f |= n.bit;
    return f;
}

result<channel> channel::open(const channel_options& o) {
    auto dev = device::open(o.device);
    if (!dev)
        return dev.error();
    const abi_info abi = dev->abi();
    for (const need& n : needs(o))
        if (!(abi.features & n.bit))
            return error(EOPNOTSUPP, "the kring module does not offer feature '" +
                                         std::string(feature_name(n.bit)) + "', needed for " +
                                         n.why);
    if (o.data_pages_order > abi.max_data_pages_order)
        return error(EINVAL, "data_pages_order " + std::to_string(o.data_pages_order) +
                                 " exceeds the module's maximum " +
                                 std::to_string(abi.max_data_pages_order));

    channel ch(std::move(*dev));
    ch.opts_ = o;

    kring_attr a;
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.source = o.source;
    a.flags = o.extra_attr_flags | (o.mirror ? KRING_ATTR_F_MIRROR : 0) |
              (o.overwrite ? KRING_ATTR_F_OVERWRITE : 0);
    a.sample_type = o.sample_type;
    a.cpu = o.cpu.value_or(-1);
    a.pid = o.pid.value_or(-1);
    a.wakeup_events = o.wakeup_events.value_or(0);
    a.wakeup_watermark = o.wakeup_watermark.value_or(0);
    for (int i = 0; i < 4; i++)
        a.config[i] = o.config[i];
    a.clockid = o.clockid;
    a.aux_watermark = o.aux_watermark.value_or(0);
    if (::ioctl(ch.fd(), KRING_IOC_CONFIGURE, &a) < 0)
        return error::from_errno(errno, "KRING_IOC_CONFIGURE");
    auto st = ch.stats();
    if (!st)
        return st.error();
    ch.sample_type_ = st->size >= KRING_STATS_SIZE_VER2 ? st->sample_type : o.sample_type;

    const std::size_t ps = abi.page_size;
    const std::uint64_t data_size = std::uint64_t(ps) << o.data_pages_order;
    const std::size_t len = ps + (o.mirror ? 2 : 1) * data_size;
    const int prot = o.read_only ? PROT_READ : PROT_READ | PROT_WRITE;
    auto m = unique_mapping::map(ch.fd(), len, prot, 0, "mmap of the data ring");
    if (!m)
        return m.error();
    ch.map_ = std::move(*m);

    auto* ctl = static_cast<kring_ctl_page*>(ch.map_.get());
    std::uint64_t off = barrier::load_relaxed(ctl->data_offset);
    std::uint64_t size = barrier::load_relaxed(ctl->data_size);
    if (off != ps || size != data_size)
        return error(EPROTO, "control page describes data_offset " + std::to_string(off) +
                                 " data_size " + std::to_string(size) + ", expected " +
                                 std::to_string(ps) + "/" + std::to_string(data_size));
    ch.view_.ctl = ctl;
    ch.view_.data = static_cast<const std::byte*>(ch.map_.get()) + off;
    ch.view_.data_size = size;
    ch.view_.mirrored = o.mirror;
    ch.view_.overwrite =
        o.overwrite || o.read_only || (barrier::load_relaxed(ctl->flags) & KRING_CTL_F_OVERWRITE);
    ch.view_.kind = ring_kind::kring;

    if (o.aux_pages_order)
        if (auto r = ch.map_aux(*o.aux_pages_order, o.aux_snapshot); !r)
            return r.error();
    return ch;
}

result<std::vector<channel>> channel::open_per_cpu(channel_options o) {
    const long n = ::sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return error::from_errno(errno, "sysconf(_SC_NPROCESSORS_ONLN)");
    std::vector<channel> chans;
    chans.reserve(std::size_t(n));
    for (int cpu = 0; cpu < int(n); cpu++) {
        o.cpu = cpu;
        auto ch = open(o);
        if (!ch)
            return ch.error().with_context("cpu " + std::to_string(cpu));
        chans.push_back(std::move(*ch));
    }
    return chans;
}

result<void> channel::map_aux(unsigned order, bool snapshot) {
    if (aux_map_)
        return error(EBUSY, "the AUX area is already mapped");
    // perf's protocol writes aux_offset/aux_size into the control page:
    // it must be mapped writable (a read-write data mapping).
    if (opts_.read_only)
        return error(EINVAL,
                     "the AUX area needs a writable control page "
                     "(a read-write data mapping)");
    if (!(abi().features & feat_aux))
        return error(EOPNOTSUPP, "the kring module does not offer the AUX area");
    const std::size_t ps = abi().page_size;
    const std::uint64_t aux_size = std::uint64_t(ps) << order;
    // aux_offset: page aligned, at or after the end of the data mapping.
    const std::uint64_t aux_offset = map_.size();
    auto* ctl = view_.ctl;
    barrier::store_relaxed(ctl->aux_offset, aux_offset);
    barrier::store_relaxed(ctl->aux_size, aux_size);
    auto m = unique_mapping::map(fd(), aux_size, snapshot ? PROT_READ : PROT_READ | PROT_WRITE,
                                 aux_offset, "mmap of the AUX area");
    if (!m)
        return m.error();
    aux_map_ = std::move(*m);
    aux_.ctl = ctl;
    aux_.data = static_cast<const std::byte*>(aux_map_.get());
    aux_.size = aux_size;
    aux_.snapshot = snapshot;
    return {};
}

result<void> channel::ioctl_void(unsigned long req, const char* what) const {
    if (::ioctl(fd(), req, 0) < 0)
        return error::from_errno(errno, what);
    return {};
}

result<void> channel::enable() { return ioctl_void(KRING_IOC_ENABLE, "KRING_IOC_ENABLE"); }
result<void> channel::disable() { return ioctl_void(KRING_IOC_DISABLE, "KRING_IOC_DISABLE"); }
result<void> channel::pause_output() {
    return ioctl_void(KRING_IOC_PAUSE_OUTPUT, "KRING_IOC_PAUSE_OUTPUT");
}
result<void> channel::resume_output() {
    return ioctl_void(KRING_IOC_RESUME_OUTPUT, "KRING_IOC_RESUME_OUTPUT");
}
result<void> channel::aux_pause() { return ioctl_void(KRING_IOC_AUX_PAUSE, "KRING_IOC_AUX_PAUSE"); }
result<void> channel::aux_resume() {
    return ioctl_void(KRING_IOC_AUX_RESUME, "KRING_IOC_AUX_RESUME");
}
result<void> channel::aux_snapshot() {
    return ioctl_void(KRING_IOC_AUX_SNAPSHOT, "KRING_IOC_AUX_SNAPSHOT");
}
result<void> channel::reset() { return ioctl_void(KRING_IOC_RESET, "KRING_IOC_RESET"); }

result<void> channel::set_wakeup(std::uint32_t watermark, std::uint32_t events) {
    kring_wakeup w{watermark, events};
    if (::ioctl(fd(), KRING_IOC_SET_WAKEUP, &w) < 0)
        return error::from_errno(errno, "KRING_IOC_SET_WAKEUP");
    return {};
}

result<std::uint64_t> channel::id() const {
    std::uint64_t id = 0;
    if (::ioctl(fd(), KRING_IOC_ID, &id) < 0)
        return error::from_errno(errno, "KRING_IOC_ID");
    return id;
}

result<kring_stats> channel::stats() const {
    kring_stats st;
    std::memset(&st, 0, sizeof(st));
    st.size = sizeof(st);
    if (::ioctl(fd(), KRING_IOC_STATS, &st) < 0)
        return error::from_errno(errno, "KRING_IOC_STATS");
    return st;
}

result<std::vector<std::string>> channel::formats() const {
    // The size first, then the text; a producer may add a format in
    // between (ENOSPC): ask again, a bounded number of times (each
    // channel holds at most KRING_FORMATS_MAX).
    for (int attempt = 0; attempt <= KRING_FORMATS_MAX; attempt++) {
        kring_formats q;
        std::memset(&q, 0, sizeof(q));
        q.size = sizeof(q);
        if (::ioctl(fd(), KRING_IOC_GET_FORMATS, &q) < 0)
            return error::from_errno(errno == ENOTTY ? ENOTSUP : errno, "KRING_IOC_GET_FORMATS");
        // The module's own bounds, before anything is allocated by them.
        if (q.len > KRING_FORMATS_MAX_BYTES || q.count > KRING_FORMATS_MAX)
            return error(EPROTO, "KRING_IOC_GET_FORMATS: " + std::to_string(q.count) +
                                     " formats of " + std::to_string(q.len) +
                                     " bytes, above the ABI's bounds");
        std::string text(q.len, '\0');
        q.buf = reinterpret_cast<std::uintptr_t>(text.data());
        if (q.len && ::ioctl(fd(), KRING_IOC_GET_FORMATS, &q) < 0) {
            if (errno == ENOSPC)
                continue;
            return error::from_errno(errno, "KRING_IOC_GET_FORMATS");
        }
        std::vector<std::string> out;
        out.reserve(q.count);
        for (std::size_t at = 0; at < text.size();) {
            const std::size_t end = text.find('\0', at);
            if (end == std::string::npos)
                return error(EPROTO, "KRING_IOC_GET_FORMATS: a format without its NUL");
            out.emplace_back(text, at, end - at);
            at = end + 1;
        }
        if (out.size() != q.count)
            return error(EPROTO, "KRING_IOC_GET_FORMATS: " + std::to_string(out.size()) +
                                     " formats in the text, " + std::to_string(q.count) +
                                     " counted");
        return out;
    }
    return error(EAGAIN, "KRING_IOC_GET_FORMATS: the formats kept changing");
}

}  // namespace kring
