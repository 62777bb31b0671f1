// The oracle of the AUX tests: a tracer channel with its data ring and AUX
// area mapped through raw syscalls, and an independent parser of the
// emulated tracer's packets and of the AUX records that delimit them. It
// shares no code with libkring or the kring tool's decoder on purpose: a
// bug there must not hide itself here.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "raw_ring.hpp"

namespace kt {

struct tracer_cfg {
    int cpu = 0;
    int pid = -1;  // task mode when not -1
    std::uint64_t per_tick = 64, payload = 32, sync_every = 16, limit = 0;
    unsigned data_order = 4, aux_pages = 16;
    bool aux_rw = true;
};

// A tracer channel with its data ring and AUX area mapped.
struct aux_channel {
    kt::raw_channel ch;
    kt::mapping aux_map;
    std::uint8_t* aux = nullptr;
    std::size_t aux_len = 0;
    std::size_t ps = kt::page_size();
    std::uint64_t aux_tail = 0;

    // 0 or the errno of the first step that failed.
    int setup(const tracer_cfg& c, std::uint64_t flags = 0) {
        if (int e = ch.open_dev())
            return e;
        kring_attr a = kt::make_attr(KRING_SOURCE_AUX_TRACER, c.cpu);
        a.config[0] = c.per_tick;
        a.config[1] = c.payload;
        a.config[2] = c.sync_every;
        a.config[3] = c.limit;
        a.pid = c.pid;
        a.flags |= flags;
        a.clockid = KRING_CLOCK_MONOTONIC;  // packet times compare with kt::now_ns()
        if (int e = ch.configure(a))
            return e;
        if (int e = ch.map_ring(c.data_order, true, false))
            return e;
        return map_aux(ch.map_len, c.aux_pages * ps, c.aux_rw);
    }
    int map_aux(std::uint64_t offset, std::uint64_t size, bool rw) {
        aux_map = kt::map_aux(ch.fd, ch.ctl, offset, size, rw);
        if (int e = aux_map.error())
            return e;
        aux = static_cast<std::uint8_t*>(aux_map.addr());
        aux_len = size;
        return 0;
    }
    // aux_head with acquire (C): pairs with the producer's smp_wmb() (B).
    std::uint64_t aux_head() const { return __atomic_load_n(&ch.ctl->aux_head, __ATOMIC_ACQUIRE); }
    // Store-release (D): pairs with the producer's smp_mb() (A).
    void release_aux(std::uint64_t tail) {
        aux_tail = tail;
        __atomic_store_n(&ch.ctl->aux_tail, tail, __ATOMIC_RELEASE);
    }
    // AUX bytes [pos, pos + n) copied out linearly.
    std::vector<std::uint8_t> bytes(std::uint64_t pos, std::uint64_t n) const {
        std::vector<std::uint8_t> v(n);
        for (std::uint64_t i = 0; i < n; i++)
            v[i] = aux[(pos + i) & (aux_len - 1)];
        return v;
    }
};

// Parses a packet stream; returns false (with @why) on anything malformed.
struct packet_parser {
    explicit packet_parser(std::uint64_t p) : payload(p) {}
    std::uint64_t payload;
    std::vector<std::uint64_t> seqs;
    std::vector<std::uint64_t> times;
    std::vector<bool> sync;
    std::vector<std::uint32_t> cpus;
    std::string why;

    bool parse(const std::vector<std::uint8_t>& b, std::size_t from = 0) {
        std::size_t off = from;
        while (off < b.size()) {
            kring_aux_packet p;
            if (b.size() - off < sizeof(p))
                return fail("truncated header at " + std::to_string(off));
            std::memcpy(&p, b.data() + off, sizeof(p));
            bool is_sync = p.type == KRING_AUX_PKT_SYNC;
            if (is_sync ? (p.magic != KRING_AUX_SYNC_MAGIC || p.len != sizeof(p))
                        : (p.type != KRING_AUX_PKT_DATA || p.magic || p.len != sizeof(p) + payload))
                return fail("bad packet at " + std::to_string(off));
            if (b.size() - off < p.len)
                return fail("packet runs past the extent at " + std::to_string(off));
            for (std::uint32_t i = 0; i < p.len - sizeof(p); i++)
                if (b[off + sizeof(p) + i] != kring_synth_byte(p.seq, i))
                    return fail("bad payload byte in packet " + std::to_string(p.seq));
            seqs.push_back(p.seq);
            times.push_back(p.time);
            sync.push_back(is_sync);
            cpus.push_back(p.cpu);
            off += p.len;
        }
        return true;
    }
    bool fail(std::string w) {
        why = std::move(w);
        return false;
    }
};

// Offset of the first SYNC packet in @b (8-byte aligned scan), or npos.
std::size_t find_sync(const std::vector<std::uint8_t>& b) {
    for (std::size_t off = 0; off + sizeof(kring_aux_packet) <= b.size(); off += 8) {
        kring_aux_packet p;
        std::memcpy(&p, b.data() + off, sizeof(p));
        if (p.magic == KRING_AUX_SYNC_MAGIC && p.type == KRING_AUX_PKT_SYNC && p.len == sizeof(p))
            return off;
    }
    return std::string::npos;
}

// What a tracer wrote: its AUX records, their packets (parsed by read())
// and its ITRACE_STARTs. Any other record, a read error, an extent that
// does not follow the previous one or a malformed packet counts as bad.
struct tracer_output {
    explicit tracer_output(std::uint64_t payload) : pp(payload) {}
    packet_parser pp;
    std::vector<kring_aux_record> recs;
    std::vector<kring_itrace_start_record> itraces;
    int bad = 0;
    std::uint64_t next_pos = 0, bytes = 0, truncated = 0;
    std::size_t parsed = 0;  // recs before this one are parsed and released

    // Drain the data ring into recs and itraces.
    void drain(aux_channel& a) {
        long n = a.ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
            if (h.type == KRING_RECORD_AUX && h.size == sizeof(kring_aux_record)) {
                kring_aux_record r;
                std::memcpy(&r, rec, sizeof(r));
                recs.push_back(r);
            } else if (h.type == KRING_RECORD_ITRACE_START &&
                       h.size == sizeof(kring_itrace_start_record)) {
                kring_itrace_start_record r;
                std::memcpy(&r, rec, sizeof(r));
                itraces.push_back(r);
            } else {
                bad++;
            }
        });
        if (n < 0)
            bad++;
    }

    // Drain, then parse and release every new extent.
    void read(aux_channel& a) {
        drain(a);
        for (; parsed < recs.size(); parsed++) {
            const auto& r = recs[parsed];
            if (r.aux_offset != next_pos) {
                pp.why = "extent at " + std::to_string(r.aux_offset) + ", expected " +
                         std::to_string(next_pos);
                bad++;
            }
            truncated += (r.flags & KRING_AUX_FLAG_TRUNCATED) != 0;
            if (!pp.parse(a.bytes(r.aux_offset, r.aux_size)))
                bad++;
            next_pos = r.aux_offset + r.aux_size;
            bytes += r.aux_size;
            a.release_aux(next_pos);
        }
    }

    // read(), for an area with room for every packet: no TRUNCATED gap,
    // nothing malformed.
    void read_whole(aux_channel& a) {
        read(a);
        ASSERT_EQ(bad, 0) << pp.why;
        ASSERT_EQ(truncated, 0u);
    }
};

}  // namespace kt
