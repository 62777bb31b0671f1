// kring aux: run kring's emulated hardware tracer into a channel's AUX area
// and show what arrived. Normal mode follows the AUX records and counts the
// packets, the gaps and the TRUNCATED extents; --snapshot maps the AUX area
// read-only, lets the tracer overwrite it, takes a snapshot and decodes the
// newest packets (docs/AUX.md).
#include <sys/ioctl.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/aux.hpp"
#include "kring/channel.hpp"
#include "kring/reader.hpp"

namespace kring_tool {
namespace {

struct options {
    int cpu = 0;
    unsigned order = 2;         // 2^order AUX pages
    unsigned ms = 200;          // how long the tracer runs
    unsigned sleep_ms = 1;      // consumer nap (normal mode)
    std::uint64_t per_ms = 64;  // packets per millisecond
    bool snapshot = false;
};

// Packets decoded from AUX bytes: sequence numbers and SYNC positions.
struct decoded {
    std::uint64_t packets = 0, syncs = 0, first = 0, last = 0, gaps = 0, missing = 0;
    bool bad = false;
};

void decode(const std::vector<std::byte>& b, std::size_t off, decoded& d) {
    while (off + sizeof(kring_aux_packet) <= b.size()) {
        kring_aux_packet p;
        std::memcpy(&p, b.data() + off, sizeof(p));
        if (p.len < sizeof(p) || p.len % 8 || off + p.len > b.size() ||
            (p.type != KRING_AUX_PKT_SYNC && p.type != KRING_AUX_PKT_DATA)) {
            d.bad = true;
            return;
        }
        if (d.packets && p.seq != d.last + 1) {
            d.gaps++;
            d.missing += p.seq - d.last - 1;
        }
        if (!d.packets)
            d.first = p.seq;
        d.last = p.seq;
        d.packets++;
        d.syncs += p.type == KRING_AUX_PKT_SYNC;
        off += p.len;
    }
    d.bad = d.bad || off != b.size();
}

std::size_t find_sync(const std::vector<std::byte>& b) {
    for (std::size_t off = 0; off + sizeof(kring_aux_packet) <= b.size(); off += 8) {
        kring_aux_packet p;
        std::memcpy(&p, b.data() + off, sizeof(p));
        if (p.magic == KRING_AUX_SYNC_MAGIC && p.type == KRING_AUX_PKT_SYNC)
            return off;
    }
    return b.size();
}

int fail(const kring::error& e) {
    fmt::print(stderr, "kring: {}\n", e.message());
    return 1;
}

int run(const context& ctx, const options& o) {
    kring::channel_options co;
    co.device = ctx.device.c_str();
    co.source = KRING_SOURCE_AUX_TRACER;
    co.cpu = o.cpu;
    co.config[0] = o.per_ms;
    co.aux_pages_order = static_cast<int>(o.order);
    co.aux_snapshot = o.snapshot;
    auto ch = kring::channel::open(co);
    if (!ch)
        return fail(ch.error());
    kring::reader rd(ch->ring());
    kring::aux_reader ax(ch->aux());
    if (auto r = ch->enable(); !r)
        return fail(r.error());
    fmt::print("tracer on cpu {}: {} packets/ms into {} AUX pages ({} mode) for {} ms\n", o.cpu,
               o.per_ms, 1u << o.order, o.snapshot ? "snapshot" : "normal", o.ms);

    std::uint64_t records = 0, truncated = 0, bytes = 0;
    decoded d;
    std::vector<std::byte> buf;
    auto on_record = [&](const kring::record& r) {
        auto a = kring::parse_aux(r);
        if (!a)
            return;
        records++;
        truncated += a->truncated();
        if (o.snapshot)
            return;
        auto e = ax.extent(*a);
        buf.resize(e.size());
        e.copy_to(buf.data());
        decode(buf, 0, d);
        bytes += e.size();
        ax.release(a->aux_offset + a->aux_size);
    };
    auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(o.ms);
    while (std::chrono::steady_clock::now() < end) {
        if (!o.snapshot && !rd.drain(on_record))
            return fail(kring::error(EBADMSG, "corrupt record in the data ring"));
        std::this_thread::sleep_for(std::chrono::milliseconds(o.snapshot ? 10 : o.sleep_ms));
    }
    if (o.snapshot) {
        if (::ioctl(ch->fd(), KRING_IOC_AUX_SNAPSHOT, 0) < 0)
            return fail(kring::error::from_errno(errno, "take an AUX snapshot"));
        auto e = ax.snapshot();
        buf.resize(e.size());
        e.copy_to(buf.data());
        std::size_t sync = find_sync(buf);
        decode(buf, sync, d);
        if (!rd.drain(on_record))
            return fail(kring::error(EBADMSG, "corrupt record in the data ring"));
        fmt::print("snapshot    aux_head {}, newest {} bytes{}\n", ax.head(), e.size(),
                   e.wrapped ? " (the tracer wrapped: older data overwritten)" : "");
        fmt::print("            first SYNC packet at +{}, packets {}..{} ({} packets, {} SYNC)\n",
                   sync, d.first, d.last, d.packets, d.syncs);
        fmt::print("            {} AUX records with OVERWRITE; {}\n", records,
                   d.bad || d.gaps ? "the packet stream is NOT intact" : "packet stream intact");
    } else {
        if (auto r = ch->disable(); !r)
            return fail(r.error());
        if (!rd.drain(on_record))
            return fail(kring::error(EBADMSG, "corrupt record in the data ring"));
        fmt::print("normal      {} AUX records, {} bytes, {} TRUNCATED\n", records, bytes,
                   truncated);
        fmt::print("            packets {}..{}: {} delivered, {} lost in {} gaps{}\n", d.first,
                   d.last, d.packets, d.missing, d.gaps, d.bad ? " (MALFORMED data)" : "");
    }
    return d.bad ? 1 : 0;
}

}  // namespace

void add_aux(CLI::App& app, context& ctx) {
    static options o;
    auto* sub = app.add_subcommand("aux", "run the emulated hardware tracer into an AUX area");
    sub->add_option("--cpu", o.cpu, "CPU the tracer runs on")->capture_default_str();
    sub->add_option("--order", o.order, "AUX area of 2^ORDER pages")
        ->check(CLI::Range(0u, 10u))
        ->capture_default_str();
    sub->add_option("--ms", o.ms, "milliseconds of tracing")->capture_default_str();
    sub->add_option("--rate", o.per_ms, "packets per millisecond")
        ->check(CLI::Range(1, 4096))
        ->capture_default_str();
    sub->add_option("--sleep-ms", o.sleep_ms, "consumer nap between passes (normal mode)")
        ->capture_default_str();
    sub->add_flag("--snapshot", o.snapshot, "snapshot mode: read-only AUX, newest data on request");
    sub->callback([&ctx] { ctx.exit_code = run(ctx, o); });
}

}  // namespace kring_tool
