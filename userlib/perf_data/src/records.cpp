// libkring's perf.data component: record views, their parsers and builders.
#include "format.hpp"

#include <linux/kring.h>

namespace kring::perf_data {

using namespace detail;

// ---------------------------------------------------------------------------
// record_view

std::uint32_t record_view::type() const noexcept { return header_of(bytes).type; }
std::uint16_t record_view::misc() const noexcept { return header_of(bytes).misc; }

// ---------------------------------------------------------------------------
// Parsers

std::optional<sample> parse_sample(const record_view& r, std::uint64_t st) noexcept {
    if (r.type() != PERF_RECORD_SAMPLE || r.bytes.size() < 8)
        return std::nullopt;
    cursor c{r.bytes.data() + 8, r.bytes.data() + r.bytes.size()};
    kring::detail::sample_body b;
    // kring's SEQ bit (63) is not perf's: a perf.data sample has no SEQ.
    if (!kring::detail::parse_sample_body(c, st & ~std::uint64_t{KRING_SAMPLE_SEQ}, b))
        return std::nullopt;
    sample s;
    // IDENTIFIER and ID hold the same value; the later one wins, as before.
    s.id = (st & PERF_SAMPLE_ID) ? b.id : b.identifier;
    s.ip = b.ip;
    s.pid = b.pid;
    s.tid = b.tid;
    s.time = b.time;
    s.has_time = st & PERF_SAMPLE_TIME;
    s.cpu = b.cpu;
    s.period = b.period;
    s.callchain = {b.callchain};
    s.raw = b.raw;
    return s;
}

std::optional<sample_id> parse_sample_id(const record_view& r, std::uint64_t st) noexcept {
    const std::size_t n = sample_id_size(st);
    if (r.bytes.size() < 8 + n)
        return std::nullopt;
    cursor c{r.bytes.data() + r.bytes.size() - n, r.bytes.data() + r.bytes.size()};
    sample_id s;
    std::uint64_t skip;
    std::uint32_t res;
    if (st & PERF_SAMPLE_TID) {
        c.get(s.pid);
        c.get(s.tid);
    }
    if (st & PERF_SAMPLE_TIME) {
        c.get(s.time);
        s.has_time = true;
    }
    if (st & PERF_SAMPLE_ID)
        c.get(s.id);
    if (st & PERF_SAMPLE_STREAM_ID)
        c.get(skip);
    if (st & PERF_SAMPLE_CPU) {
        c.get(s.cpu);
        c.get(res);
    }
    if (st & PERF_SAMPLE_IDENTIFIER)
        c.get(s.id);
    return s;
}

std::optional<comm_info> parse_comm(const record_view& r) noexcept {
    if (r.type() != PERF_RECORD_COMM || r.bytes.size() < 17)
        return std::nullopt;
    comm_info c;
    std::memcpy(&c.pid, r.bytes.data() + 8, 4);
    std::memcpy(&c.tid, r.bytes.data() + 12, 4);
    const auto* s = reinterpret_cast<const char*>(r.bytes.data() + 16);
    const std::size_t max = r.bytes.size() - 16;
    const std::size_t len = strnlen(s, max);
    if (len == max)
        return std::nullopt;  // no NUL within the record
    try {
        c.comm.assign(s, len);
    } catch (...) {
        return std::nullopt;
    }
    c.exec = r.misc() & PERF_RECORD_MISC_COMM_EXEC;
    return c;
}

std::optional<switch_info> parse_switch(const record_view& r) noexcept {
    const auto t = r.type();
    if (t != PERF_RECORD_SWITCH && t != PERF_RECORD_SWITCH_CPU_WIDE)
        return std::nullopt;
    if (r.bytes.size() < 8 || (t == PERF_RECORD_SWITCH_CPU_WIDE && r.bytes.size() < 16))
        return std::nullopt;
    switch_info s;
    s.out = r.misc() & PERF_RECORD_MISC_SWITCH_OUT;
    s.preempt = r.misc() & PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
    if (t == PERF_RECORD_SWITCH_CPU_WIDE) {
        std::memcpy(&s.next_prev_pid, r.bytes.data() + 8, 4);
        std::memcpy(&s.next_prev_tid, r.bytes.data() + 12, 4);
    }
    return s;
}

std::optional<task_info> parse_task(const record_view& r) noexcept {
    const auto t = r.type();
    if ((t != PERF_RECORD_FORK && t != PERF_RECORD_EXIT) || r.bytes.size() < 32)
        return std::nullopt;
    task_info k;
    const std::byte* b = r.bytes.data() + 8;
    std::memcpy(&k.pid, b, 4);
    std::memcpy(&k.ppid, b + 4, 4);
    std::memcpy(&k.tid, b + 8, 4);
    std::memcpy(&k.ptid, b + 12, 4);
    std::memcpy(&k.time, b + 16, 8);
    return k;
}

std::optional<lost_info> parse_lost(const record_view& r) noexcept {
    if (r.type() != PERF_RECORD_LOST || r.bytes.size() < 24)
        return std::nullopt;
    lost_info l;
    std::memcpy(&l.id, r.bytes.data() + 8, 8);
    std::memcpy(&l.lost, r.bytes.data() + 16, 8);
    return l;
}

std::optional<aux_record_info> parse_aux(const record_view& r) noexcept {
    if (r.type() != PERF_RECORD_AUX || r.bytes.size() < 32)
        return std::nullopt;
    aux_record_info a;
    std::memcpy(&a.aux_offset, r.bytes.data() + 8, 8);
    std::memcpy(&a.aux_size, r.bytes.data() + 16, 8);
    std::memcpy(&a.flags, r.bytes.data() + 24, 8);
    return a;
}

std::optional<auxtrace_info> parse_auxtrace(const record_view& r) noexcept {
    if (r.type() != record_auxtrace || r.bytes.size() < k_auxtrace_size)
        return std::nullopt;
    auxtrace_info a;
    const std::byte* b = r.bytes.data() + 8;
    std::memcpy(&a.size, b, 8);
    std::memcpy(&a.offset, b + 8, 8);
    std::memcpy(&a.reference, b + 16, 8);
    std::memcpy(&a.idx, b + 24, 4);
    std::memcpy(&a.tid, b + 28, 4);
    std::memcpy(&a.cpu, b + 32, 4);
    return a;
}

namespace {

error bad_record(const record_view& r, const char* type, const std::string& what) {
    return einval(std::string(type) + " record at offset " + std::to_string(r.offset) + ": " +
                  what);
}

// MMAP2's file identity: the device and inode, or the build id in their
// place (u8 size, 3 reserved bytes, 20 bytes of id).
bool mmap2_identity(cursor& c, bool has_build_id, mmap_info& m, std::string& why) {
    if (!has_build_id)
        return c.get(m.maj) && c.get(m.min) && c.get(m.ino) && c.get(m.ino_generation);
    std::uint8_t n;
    std::byte id[max_build_id_size];
    if (!c.get(n) || !c.skip(3) || !c.get(id))  // the body is at least 72 bytes
        return false;
    if (n > max_build_id_size) {
        why = "build id size " + std::to_string(n) + " beyond " + std::to_string(max_build_id_size);
        return false;
    }
    for (std::size_t i = 0; i < n; i++)
        m.build_id.push_back(std::to_integer<std::uint8_t>(id[i]));
    return true;
}

}  // namespace

result<mmap_info> parse_mmap(const record_view& r) {
    const auto t = r.type();
    const char* name = t == PERF_RECORD_MMAP2 ? "MMAP2" : "MMAP";
    if (t != PERF_RECORD_MMAP && t != PERF_RECORD_MMAP2)
        return bad_record(r, "MMAP", "of type " + std::to_string(t));
    mmap_info m;
    m.mmap2 = t == PERF_RECORD_MMAP2;
    const std::size_t fixed = m.mmap2 ? 72 : 40;  // where the file name starts
    if (r.bytes.size() < fixed)
        return bad_record(r, name,
                          std::to_string(r.bytes.size()) + " bytes, shorter than its " +
                              std::to_string(fixed) + "-byte fixed part");
    cursor c{r.bytes.data() + 8, r.bytes.data() + r.bytes.size()};
    c.get(m.pid);
    c.get(m.tid);
    c.get(m.start);
    c.get(m.len);
    c.get(m.pgoff);
    std::string why;
    if (m.mmap2) {
        if (!mmap2_identity(c, r.misc() & PERF_RECORD_MISC_MMAP_BUILD_ID, m, why))
            return bad_record(r, name, why.empty() ? "cut short" : why);
        c.get(m.prot);
        c.get(m.flags);
    }
    if (!c.cstring(m.filename))
        return bad_record(r, name, "file name without its NUL");
    return m;
}

result<itrace_start_info> parse_itrace_start(const record_view& r) {
    if (r.type() != PERF_RECORD_ITRACE_START)
        return bad_record(r, "ITRACE_START", "of type " + std::to_string(r.type()));
    itrace_start_info i;
    cursor c{r.bytes.data() + std::min<std::size_t>(8, r.bytes.size()),
             r.bytes.data() + r.bytes.size()};
    if (!c.get(i.pid) || !c.get(i.tid))
        return bad_record(r, "ITRACE_START",
                          std::to_string(r.bytes.size()) + " bytes, shorter than its 16");
    return i;
}

// ---------------------------------------------------------------------------
// Builders

std::vector<std::byte> make_comm(std::uint32_t pid, std::uint32_t tid, std::string_view comm,
                                 bool exec, const std::optional<sample_id>& id,
                                 std::uint64_t sample_type) {
    builder b(PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
    put(b.out(), pid);
    put(b.out(), tid);
    put_cstring(b.out(), comm.substr(0, 4096));
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_mmap2(std::uint32_t pid, std::uint32_t tid, std::uint64_t start,
                                  std::uint64_t len, std::uint64_t pgoff, std::uint32_t maj,
                                  std::uint32_t min, std::uint64_t ino, std::uint32_t prot,
                                  std::uint32_t flags, std::string_view filename, bool user,
                                  const std::optional<sample_id>& id, std::uint64_t sample_type) {
    builder b(PERF_RECORD_MMAP2, user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL);
    auto& o = b.out();
    put(o, pid);
    put(o, tid);
    put(o, start);
    put(o, len);
    put(o, pgoff);
    put(o, maj);
    put(o, min);
    put(o, ino);
    put(o, std::uint64_t{0});  // ino_generation
    put(o, prot);
    put(o, flags);
    put_cstring(o, filename.substr(0, 4096));  // PATH_MAX
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_task(std::uint32_t type, const task_info& t,
                                 const std::optional<sample_id>& id, std::uint64_t sample_type) {
    builder b(type, 0);
    auto& o = b.out();
    put(o, t.pid);
    put(o, t.ppid);
    put(o, t.tid);
    put(o, t.ptid);
    put(o, t.time);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_switch_cpu_wide(bool out, bool preempt, std::uint32_t next_prev_pid,
                                            std::uint32_t next_prev_tid, const sample_id& id,
                                            std::uint64_t sample_type) {
    std::uint16_t misc = 0;
    if (out)
        misc |= PERF_RECORD_MISC_SWITCH_OUT;
    if (out && preempt)
        misc |= PERF_RECORD_MISC_SWITCH_OUT_PREEMPT;
    builder b(PERF_RECORD_SWITCH_CPU_WIDE, misc);
    put(b.out(), next_prev_pid);
    put(b.out(), next_prev_tid);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_lost(std::uint64_t id, std::uint64_t lost,
                                 const std::optional<sample_id>& sid, std::uint64_t sample_type) {
    builder b(PERF_RECORD_LOST, 0);
    put(b.out(), id);
    put(b.out(), lost);
    b.trailer(sid, sample_type);
    return b.done();
}

std::vector<std::byte> make_aux(std::uint64_t aux_offset, std::uint64_t aux_size,
                                std::uint64_t flags, const std::optional<sample_id>& id,
                                std::uint64_t sample_type) {
    builder b(PERF_RECORD_AUX, 0);
    put(b.out(), aux_offset);
    put(b.out(), aux_size);
    put(b.out(), flags);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_itrace_start(std::uint32_t pid, std::uint32_t tid,
                                         const std::optional<sample_id>& id,
                                         std::uint64_t sample_type) {
    builder b(PERF_RECORD_ITRACE_START, 0);
    put(b.out(), pid);
    put(b.out(), tid);
    b.trailer(id, sample_type);
    return b.done();
}

std::vector<std::byte> make_sample(std::uint16_t misc, const sample& s, std::uint64_t st) {
    builder b(PERF_RECORD_SAMPLE, misc);
    auto& o = b.out();
    if (st & PERF_SAMPLE_IDENTIFIER)
        put(o, s.id);
    if (st & PERF_SAMPLE_IP)
        put(o, s.ip);
    if (st & PERF_SAMPLE_TID) {
        put(o, s.pid);
        put(o, s.tid);
    }
    if (st & PERF_SAMPLE_TIME)
        put(o, s.time);
    if (st & PERF_SAMPLE_ADDR)
        put(o, std::uint64_t{0});
    if (st & PERF_SAMPLE_ID)
        put(o, s.id);
    if (st & PERF_SAMPLE_STREAM_ID)
        put(o, s.id);
    if (st & PERF_SAMPLE_CPU) {
        put(o, s.cpu);
        put(o, std::uint32_t{0});
    }
    if (st & PERF_SAMPLE_PERIOD)
        put(o, s.period);
    if (st & PERF_SAMPLE_CALLCHAIN) {
        // At most 512 entries (kring writes at most KRING_CALLCHAIN_MAX + 2):
        // with RAW's 60000 bytes the record stays within a u16 size.
        const std::size_t nr = std::min<std::size_t>(s.callchain.size(), 512);
        put(o, std::uint64_t(nr));
        put_bytes(o, s.callchain.bytes.data(), 8 * nr);
    }
    if (st & PERF_SAMPLE_RAW) {
        // u32 size, then the bytes padded so that both end on 8 bytes; the
        // size counts the padding (as the kernel's).
        const std::size_t start = o.size();
        const std::size_t raw = std::min<std::size_t>(s.raw.size(), 60000);
        const auto padded = static_cast<std::uint32_t>(align8(raw + 4) - 4);
        put(o, padded);
        put_bytes(o, s.raw.data(), raw);
        o.insert(o.end(), padded - raw, std::byte{0});
        (void)start;
    }
    return b.done();
}

std::vector<std::byte> make_finished_round() {
    builder b(record_finished_round, 0);
    return b.done();
}

}  // namespace kring::perf_data
