// Consume throughput of libkring's reader against a memcpy of the same
// bytes, in the same run (docs/PERFORMANCE.md).
//
// The ring (kmod/ring.c built for the host, tests/host) is filled once with
// records of one size that tile the data area exactly, starting half a
// record before its end so that one record per lap wraps. Each iteration
// then "publishes" one more lap (data_head += data_size; the bytes are the
// same) and the reader consumes it: every record's header is validated and
// its first body word summed, the tail released once. BM_Memcpy copies the
// data area once per iteration: the floor any consumer that looks at its
// bytes pays.
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <vector>

#include "ring_views.hpp"
#include "kring/merger.hpp"
#include "kring/reader.hpp"
#ifdef KRING_HAVE_LIBPERF
#include "libperf_reader.h"
#endif

using kt::host_ring;

namespace {

constexpr unsigned pages = 64;  // 256 KiB: the ring stays in L2

std::unique_ptr<host_ring> filled_ring(unsigned size, bool mirrored) {
    auto r = std::make_unique<host_ring>(pages, kt::mapping_of(mirrored));
    const std::uint64_t ds = r->size();
    const std::uint64_t start = ds - size / 2 / 8 * 8;
    r->seek(start);
    // Two halves, so the producer always has room.
    const unsigned n = unsigned(ds / size);
    for (int half = 0; half < 2; half++) {
        for (unsigned i = 0; i < n / 2 + (half ? n % 2 : 0); i++)
            if (kt::write_record(&r->rb, size))
                std::abort();
        r->ctl->data_tail = r->ctl->data_head;
    }
    if (r->ctl->data_head - start != ds)
        std::abort();
    // Rewind: one full lap published, nothing consumed.
    r->ctl->data_tail = start;
    r->ctl->data_head = start;
    return r;
}

void BM_Reader(benchmark::State& state) {
    const unsigned size = unsigned(state.range(0));
    const bool mirrored = state.range(1);
    auto ring = filled_ring(size, mirrored);
    kring::reader rd(kt::view_of(*ring));
    const std::uint64_t ds = ring->size();
    std::uint64_t records = 0, sum = 0;
    for (auto _ : state) {
        ring->ctl->data_head += ds;  // the producer "wrote" one more lap
        auto n = rd.drain([&](const kring::record& r) {
            std::uint64_t w;
            std::memcpy(&w, r.bytes().data() + 8, 8);
            sum += w;
        });
        if (!n)
            state.SkipWithError(n.error().message().c_str());
        records += *n;
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(std::int64_t(records));
    state.SetBytesProcessed(std::int64_t(state.iterations() * ds));
}

void BM_ReaderTouchAll(benchmark::State& state) {
    // The same, but the consumer reads every byte (sums every word).
    const unsigned size = unsigned(state.range(0));
    auto ring = filled_ring(size, state.range(1));
    kring::reader rd(kt::view_of(*ring));
    const std::uint64_t ds = ring->size();
    std::uint64_t records = 0, sum = 0;
    for (auto _ : state) {
        ring->ctl->data_head += ds;
        auto n = rd.drain([&](const kring::record& r) {
            const std::byte* p = r.bytes().data();
            for (std::size_t i = 8; i < r.size(); i += 8) {
                std::uint64_t w;
                std::memcpy(&w, p + i, 8);
                sum += w;
            }
        });
        records += n.value();
    }
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(std::int64_t(records));
    state.SetBytesProcessed(std::int64_t(state.iterations() * ds));
}

#ifdef KRING_HAVE_LIBPERF
// The same rings read by libperf: perf_mmap__read_event() and, as libperf
// documents it, a perf_mmap__consume() per record (batch:0), or one per
// drain as libkring's reader does (batch:1). A record that wraps is copied
// out, as the reader's copy path does.
void BM_Libperf(benchmark::State& state) {
    const unsigned size = unsigned(state.range(0));
    const int batch = int(state.range(1));
    auto ring = filled_ring(size, false);
    kring_libperf_reader* rd = kring_libperf_reader_new(ring->base(), ring->size());
    const std::uint64_t ds = ring->size();
    std::uint64_t records = 0, sum = 0;
    if (!rd) {
        state.SkipWithError("kring_libperf_reader_new failed");
        return;
    }
    for (auto _ : state) {
        ring->ctl->data_head += ds;
        const std::uint64_t n = kring_libperf_drain(rd, &sum, batch);
        if (n != ds / size) {
            state.SkipWithError("libperf read a different number of records");
            break;
        }
        records += n;
    }
    kring_libperf_reader_free(rd);
    benchmark::DoNotOptimize(sum);
    state.SetItemsProcessed(std::int64_t(records));
    state.SetBytesProcessed(std::int64_t(state.iterations() * ds));
}
#endif

void BM_Memcpy(benchmark::State& state) {
    auto ring = filled_ring(64, false);
    const std::uint64_t ds = ring->size();
    std::vector<std::byte> out(ds);
    for (auto _ : state) {
        std::memcpy(out.data(), ring->data(), ds);
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(out.data());
    state.SetBytesProcessed(std::int64_t(state.iterations() * ds));
}

// Two rings of SAMPLE records (TIME | SEQ, 24 bytes) with interleaved
// times, merged: the merger's cost per record on top of the reader's.
void BM_Merge(benchmark::State& state) {
    constexpr std::uint64_t st = KRING_SAMPLE_TIME | KRING_SAMPLE_SEQ;
    host_ring a(pages, kt::mapping::mirrored), b(pages, kt::mapping::mirrored);
    const std::uint64_t ds = a.size();
    // Filled once; each iteration rewinds the tails and merges it all
    // (reader and merger set-up is outside the timing).
    const unsigned n = unsigned((ds - 64) / 24);
    for (unsigned i = 0; i < n; i++) {
        kt::write_sample(&a.rb, 2 * i);
        kt::write_sample(&b.rb, 2 * i + 1);
    }
    const std::uint64_t ha = a.ctl->data_head, hb = b.ctl->data_head;
    std::uint64_t records = 0, last = 0, bad = 0;
    for (auto _ : state) {
        state.PauseTiming();
        a.ctl->data_tail = 0;
        b.ctl->data_tail = 0;
        kring::reader ra(kt::view_of(a)), rb(kt::view_of(b));
        kring::merger m;
        m.add(ra, st);
        m.add(rb, st);
        last = 0;
        state.ResumeTiming();
        auto r = m.flush([&](std::size_t, const kring::record&, std::uint64_t t) {
            bad += t < last;
            last = t;
        });
        records += r.value();
    }
    if (bad || a.ctl->data_tail != ha || b.ctl->data_tail != hb)
        state.SkipWithError("merge out of order or incomplete");
    state.SetItemsProcessed(std::int64_t(records));
}

}  // namespace

BENCHMARK(BM_Merge);
BENCHMARK(BM_Memcpy);
BENCHMARK(BM_Reader)
    ->ArgsProduct({{32, 64, 128, 256, 1024, 8192}, {0, 1}})
    ->ArgNames({"size", "mirror"});
#ifdef KRING_HAVE_LIBPERF
BENCHMARK(BM_Libperf)->ArgsProduct({{32, 64, 256}, {0, 1}})->ArgNames({"size", "batch"});
#endif
BENCHMARK(BM_ReaderTouchAll)->ArgsProduct({{32, 128, 1024}, {0, 1}})->ArgNames({"size", "mirror"});

BENCHMARK_MAIN();
