// Helpers of libkring's in-guest tests (kring_vm_lib_tests).
#pragma once

#include <linux/membarrier.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

#include "kring/kring.hpp"
#include "test_util.hpp"

namespace kt {

using clk = std::chrono::steady_clock;

// Options of a synthetic channel on @cpu writing @count records.
inline kring::channel_options synth(int cpu, std::uint64_t count, std::uint64_t rate = 0,
                                    std::uint64_t payload = 64, unsigned order = 2) {
    kring::channel_options o;
    o.source = KRING_SOURCE_SYNTHETIC;
    o.sample_type = synth_type;
    o.cpu = cpu;
    o.data_pages_order = order;
    o.config[0] = rate;
    o.config[1] = payload;
    o.config[3] = count;
    return o;
}

// A synthetic SAMPLE checked field by field: payload checksum, seq, CPU.
inline bool synth_ok(const kring::record& r, int cpu, std::uint64_t* seq_out = nullptr,
                     std::uint64_t* time_out = nullptr) {
    auto s = kring::parse_sample(r, synth_type);
    if (!s || s->raw.size() < sizeof(kring_synth_payload))
        return false;
    kring_synth_payload p;
    std::memcpy(&p, s->raw.data(), sizeof(p));
    if (p.len < sizeof(p) || p.len > s->raw.size() || p.seq != s->seq ||
        p.cpu != std::uint32_t(cpu) || s->cpu != std::uint32_t(cpu))
        return false;
    const auto* body = reinterpret_cast<const std::uint8_t*>(s->raw.data()) + sizeof(p);
    if (kring_synth_checksum(s->seq, body, p.len - std::uint32_t(sizeof(p))) != p.checksum)
        return false;
    if (seq_out)
        *seq_out = s->seq;
    if (time_out)
        *time_out = s->time;
    return true;
}

// An RCU grace period (membarrier's MEMBARRIER_CMD_GLOBAL, Linux 4.3+): a
// writer of perf's or kring's ring that was inside a record when it began
// has finished and published data_head when it returns.
inline bool grace_period() { return ::syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0; }

// Open a channel or skip the test when /dev/kring is missing.
#define LIB_OPEN(var, opts)                    \
    auto var = kring::channel::open(opts);     \
    if (!var && var.error().code() == ENOENT)  \
        GTEST_SKIP() << var.error().message(); \
    ASSERT_TRUE(var) << var.error().message()

}  // namespace kt
