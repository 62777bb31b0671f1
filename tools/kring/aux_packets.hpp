// The kring tool's decoder of the emulated tracer's AUX packets (struct
// kring_aux_packet): the one place the tool reads AUX bytes as packets.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include <linux/kring_test.h>

namespace kring_tool {

// What a run of packets held: sequence numbers, SYNC packets and gaps.
struct packet_stats {
    std::uint64_t packets = 0, syncs = 0, first = 0, last = 0, gaps = 0, missing = 0;
    bool bad = false;  // a malformed packet, or bytes left over after the last
};

// Decode the packets of @bytes from @offset to the end into @d (which may
// carry the sequence of earlier extents: gaps are counted across calls).
void decode_packets(std::span<const std::byte> bytes, std::size_t offset, packet_stats& d);

// The offset of the first SYNC packet in @bytes (8-byte steps), or
// bytes.size() if there is none: where decoding a snapshot window starts.
std::size_t find_sync(std::span<const std::byte> bytes);

}  // namespace kring_tool
