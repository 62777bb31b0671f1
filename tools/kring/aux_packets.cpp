// The kring tool's AUX packet decoder.
#include "aux_packets.hpp"

#include <cstring>

#include <linux/kring.h>

namespace kring_tool {

void decode_packets(std::span<const std::byte> b, std::size_t off, packet_stats& d) {
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

std::size_t find_sync(std::span<const std::byte> b) {
    for (std::size_t off = 0; off + sizeof(kring_aux_packet) <= b.size(); off += 8) {
        kring_aux_packet p;
        std::memcpy(&p, b.data() + off, sizeof(p));
        if (p.magic == KRING_AUX_SYNC_MAGIC && p.type == KRING_AUX_PKT_SYNC)
            return off;
    }
    return b.size();
}

}  // namespace kring_tool
