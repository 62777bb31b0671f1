// kring synth: run the module's synthetic generator on every CPU into one
// data ring per CPU, consume them, verify every record (sequence number and
// checksum) and print what was produced, delivered and lost.
//
// It is the data ring's end-to-end demo: with a small ring and a consumer
// that sleeps (--sleep-us) records are lost, and the figures show that
// every one of them is accounted for (produced = delivered + lost).
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/device.hpp"

namespace kring_tool {
namespace {

constexpr std::uint64_t sample_type = KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_CPU |
                                      KRING_SAMPLE_RAW | KRING_SAMPLE_SEQ;

struct options {
    std::uint64_t count = 100000;  // records per CPU
    std::uint64_t rate = 0;        // records per second per CPU, 0 = flat out
    std::uint32_t payload = 64;    // RAW bytes per record
    unsigned order = 2;            // 2^order data pages per CPU
    unsigned sleep_us = 1000;      // consumer nap between passes
    bool nest = false;
    bool mirror = false;
    double timeout_s = 60;
};

struct cpu_ring {
    int cpu = 0;
    kring::device dev;
    void* map = nullptr;
    std::size_t map_len = 0;
    kring_ctl_page* ctl = nullptr;
    const std::uint8_t* data = nullptr;
    std::size_t data_size = 0;
    std::uint64_t tail = 0;
    std::vector<std::uint8_t> scratch;
    // what the consumer saw
    std::uint64_t delivered = 0, lost = 0, lost_records = 0, bad = 0, out_of_order = 0;
    std::uint64_t next_seq = 0;
    kring_stats st{};

    explicit cpu_ring(kring::device d) : dev(std::move(d)) {}
    cpu_ring(const cpu_ring&) = delete;
    cpu_ring& operator=(const cpu_ring&) = delete;
    ~cpu_ring() {
        if (map)
            ::munmap(map, map_len);
    }
};

std::string errno_msg(const char* what, int cpu) {
    return fmt::format("{} (cpu {}): {}", what, cpu, std::strerror(errno));
}

bool setup(cpu_ring& r, const options& o, std::string& err) {
    kring_attr a;
    std::memset(&a, 0, sizeof(a));
    a.size = sizeof(a);
    a.source = KRING_SOURCE_SYNTHETIC;
    a.flags = o.mirror ? KRING_ATTR_F_MIRROR : 0;
    a.sample_type = sample_type;
    a.cpu = r.cpu;
    a.pid = -1;
    a.config[0] = o.rate;
    a.config[1] = o.payload;
    a.config[2] = o.nest ? KRING_SYNTH_F_NEST : 0;
    a.config[3] = o.count;
    if (::ioctl(r.dev.fd(), KRING_IOC_CONFIGURE, &a) < 0) {
        err = errno_msg("configure the synthetic source", r.cpu);
        return false;
    }
    std::size_t ps = r.dev.abi().page_size;
    r.data_size = ps << o.order;
    r.map_len = ps + (o.mirror ? 2 : 1) * r.data_size;
    r.map = ::mmap(nullptr, r.map_len, PROT_READ | PROT_WRITE, MAP_SHARED, r.dev.fd(), 0);
    if (r.map == MAP_FAILED) {
        r.map = nullptr;
        err = errno_msg("map the data ring", r.cpu);
        return false;
    }
    r.ctl = static_cast<kring_ctl_page*>(r.map);
    r.data = static_cast<const std::uint8_t*>(r.map) + ps;
    r.scratch.resize(65536);
    return true;
}

// The record at ring position @pos, contiguous, or nullptr if malformed.
const std::uint8_t* record_at(cpu_ring& r, std::uint64_t pos, std::uint64_t avail,
                              bool mirror) {
    std::size_t off = pos & (r.data_size - 1);
    kring_record_header h;
    std::memcpy(&h, r.data + off, sizeof(h));  // 8-byte aligned: never split
    if (h.size < sizeof(h) || h.size % 8 || h.size > avail)
        return nullptr;
    if (off + h.size <= r.data_size || mirror)
        return r.data + off;
    std::size_t first = r.data_size - off;
    std::memcpy(r.scratch.data(), r.data + off, first);
    std::memcpy(r.scratch.data() + first, r.data, h.size - first);
    return r.scratch.data();
}

void check_sample(cpu_ring& r, const std::uint8_t* rec, std::size_t size) {
    // TID, TIME, CPU, RAW{size, payload}, SEQ: see uapi/linux/kring.h.
    constexpr std::size_t raw_at = 8 + 8 + 8 + 8;
    std::uint32_t cpu, raw_size;
    std::memcpy(&cpu, rec + 24, 4);
    std::memcpy(&raw_size, rec + raw_at, 4);
    kring_synth_payload p;
    if (raw_at + 4 + raw_size + 8 != size || raw_size < sizeof(p)) {
        r.bad++;
        return;
    }
    const std::uint8_t* raw = rec + raw_at + 4;
    std::uint64_t seq;
    std::memcpy(&seq, raw + raw_size, 8);
    std::memcpy(&p, raw, sizeof(p));
    const std::uint8_t* body = raw + sizeof(p);
    std::uint32_t n = p.len >= sizeof(p) && p.len <= raw_size ? p.len - sizeof(p) : 0;
    if (p.seq != seq || cpu != std::uint32_t(r.cpu) || p.cpu != cpu ||
        kring_synth_checksum(seq, body, n) != p.checksum) {
        r.bad++;
        return;
    }
    if (seq < r.next_seq)
        r.out_of_order++;
    r.next_seq = seq + 1;
    r.delivered++;
}

// One pass over a ring: read every record up to the head, then release the
// tail once. Barriers (perf ring-buffer doc 2.3): the acquire load of
// data_head is (C), pairing with the kernel's smp_wmb() (B) before it
// publishes the head; the release store of data_tail is (D), pairing with
// the kernel's control dependency (A) on data_tail.
bool drain(cpu_ring& r, bool mirror) {
    std::uint64_t head = __atomic_load_n(&r.ctl->data_head, __ATOMIC_ACQUIRE);
    while (r.tail < head) {
        const std::uint8_t* rec = record_at(r, r.tail, head - r.tail, mirror);
        if (!rec)
            return false;
        kring_record_header h;
        std::memcpy(&h, rec, sizeof(h));
        if (h.type == KRING_RECORD_LOST && h.size >= sizeof(kring_lost_record)) {
            kring_lost_record l;
            std::memcpy(&l, rec, sizeof(l));
            r.lost += l.lost;
            r.lost_records++;
        } else if (h.type == KRING_RECORD_SAMPLE) {
            check_sample(r, rec, h.size);
        } else if (h.type != KRING_RECORD_PAD) {
            r.bad++;
        }
        r.tail += h.size;
    }
    __atomic_store_n(&r.ctl->data_tail, r.tail, __ATOMIC_RELEASE);
    return true;
}

int run(const context& ctx, const options& o) {
    const int ncpu = static_cast<int>(::sysconf(_SC_NPROCESSORS_ONLN));
    std::vector<std::unique_ptr<cpu_ring>> rings;
    for (int cpu = 0; cpu < ncpu; cpu++) {
        auto dev = kring::device::open(ctx.device.c_str());
        if (!dev) {
            fmt::print(stderr, "kring: {}\n", dev.error().message());
            return 1;
        }
        auto r = std::make_unique<cpu_ring>(std::move(*dev));
        r->cpu = cpu;
        std::string err;
        if (!setup(*r, o, err)) {
            fmt::print(stderr, "kring: {}\n", err);
            return 1;
        }
        rings.push_back(std::move(r));
    }
    for (auto& r : rings)
        if (::ioctl(r->dev.fd(), KRING_IOC_ENABLE, 0) < 0) {
            fmt::print(stderr, "kring: {}\n", errno_msg("enable", r->cpu));
            return 1;
        }

    auto t0 = std::chrono::steady_clock::now();
    auto deadline = t0 + std::chrono::duration<double>(o.timeout_s);
    bool done = false;
    while (!done && std::chrono::steady_clock::now() < deadline) {
        done = true;
        for (auto& r : rings) {
            if (!drain(*r, o.mirror)) {
                fmt::print(stderr, "kring: corrupt record on cpu {} at {}\n", r->cpu, r->tail);
                return 1;
            }
            r->st.size = sizeof(r->st);
            if (::ioctl(r->dev.fd(), KRING_IOC_STATS, &r->st) < 0) {
                fmt::print(stderr, "kring: {}\n", errno_msg("read stats", r->cpu));
                return 1;
            }
            if (r->st.produced < o.count || r->delivered + r->lost < r->st.produced)
                done = false;
        }
        if (!done && o.sleep_us)
            ::usleep(o.sleep_us);
    }
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();

    fmt::print("{:>4} {:>10} {:>10} {:>10} {:>6} {:>7} {:>7}\n", "cpu", "produced", "delivered",
               "lost", "LOST", "nested", "bad");
    std::uint64_t tp = 0, td = 0, tl = 0, tb = 0;
    bool exact = true;
    for (auto& r : rings) {
        fmt::print("{:>4} {:>10} {:>10} {:>10} {:>6} {:>7} {:>7}\n", r->cpu, r->st.produced,
                   r->delivered, r->lost, r->lost_records, r->st.nested, r->bad + r->out_of_order);
        tp += r->st.produced;
        td += r->delivered;
        tl += r->lost;
        tb += r->bad + r->out_of_order;
        exact = exact && r->delivered + r->lost == r->st.produced;
    }
    fmt::print("all  {:>10} {:>10} {:>10}   in {:.2f} s; produced {} delivered + lost\n", tp,
               td, tl, secs, exact ? "==" : "!=");
    if (!done) {
        fmt::print(stderr, "kring: timed out after {:.0f} s before every record was accounted for\n",
                   o.timeout_s);
        return 1;
    }
    if (!exact || tb) {
        fmt::print(stderr, "kring: accounting mismatch or {} corrupt records\n", tb);
        return 1;
    }
    return 0;
}

}  // namespace

void add_synth(CLI::App& app, context& ctx) {
    static options o;
    auto* sub = app.add_subcommand(
        "synth", "run the synthetic generator on every CPU, verify and count the records");
    sub->add_option("-n,--count", o.count, "records per CPU")->capture_default_str();
    sub->add_option("--rate", o.rate, "records per second per CPU (0: flat out)")
        ->capture_default_str();
    sub->add_option("--payload", o.payload, "payload bytes per record")
        ->check(CLI::Range(24u, 8192u))
        ->capture_default_str();
    sub->add_option("--order", o.order, "data ring of 2^ORDER pages per CPU")
        ->check(CLI::Range(0u, 16u))
        ->capture_default_str();
    sub->add_option("--sleep-us", o.sleep_us, "consumer sleep between passes (microseconds)")
        ->capture_default_str();
    sub->add_option("--timeout", o.timeout_s, "give up after this many seconds")
        ->capture_default_str();
    sub->add_flag("--nest", o.nest, "an hrtimer writer interrupts the task-context writer");
    sub->add_flag("--mirror", o.mirror, "map the data pages twice (wrapped records contiguous)");
    sub->callback([&ctx] { ctx.exit_code = run(ctx, o); });
}

}  // namespace kring_tool
