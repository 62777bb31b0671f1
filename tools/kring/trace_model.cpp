// The analysis model of a perf.data file (trace_model.hpp).
#include "trace_model.hpp"

#include <algorithm>
#include <cstdio>
#include <cstring>

#include <linux/kring.h>

#include <fmt/core.h>

#include "aux_packets.hpp"

namespace kring_tool {
namespace pd = kring::perf_data;

namespace {

// The fields a non-SAMPLE record's sample_id trailer holds.
void take_sample_id(const pd::record_view& r, const pd::event_attr* attr, trace_event& e) {
    if (!attr || !attr->attr.sample_id_all)
        return;
    const std::uint64_t st = attr->attr.sample_type;
    auto sid = pd::parse_sample_id(r, st);
    if (!sid)
        return;
    if (st & PERF_SAMPLE_TID) {
        e.task = {sid->pid, sid->tid};
        e.has_task = true;
    }
    if (sid->has_time) {
        e.time = sid->time;
        e.has_time = true;
    }
    if (st & PERF_SAMPLE_CPU)
        e.cpu = std::int32_t(sid->cpu);
    if (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) {
        e.id = sid->id;
        e.has_id = true;
    }
}

// Each parse_<record>() below fills @e from one kind of record; false when
// the record is too short or malformed for its type.

bool parse_sample(const pd::record_view& r, const pd::event_attr* attr, trace_event& e,
                  const tracepoint_decoder& tpd) {
    if (!attr)
        return false;
    const std::uint64_t st = attr->attr.sample_type;
    auto s = pd::parse_sample(r, st);
    if (!s)
        return false;
    e.kind = event_kind::sample;
    e.a = s->ip;
    e.b = s->period;
    e.callchain = s->callchain.to_vector();
    if (attr->attr.type == PERF_TYPE_TRACEPOINT) {
        e.kind = event_kind::tracepoint;
        if (auto v = tpd.decode(s->raw)) {
            e.tp = std::move(*v);
            e.tp_decoded = true;
        }
    }
    // A wakeup: the woken task in TID, the waker in RAW (kring record).
    kring_sched_raw raw;
    if (attr->name == "kring:sched_wakeup" && s->raw.size() >= sizeof(raw)) {
        std::memcpy(&raw, s->raw.data(), sizeof(raw));
        if (raw.kind == KRING_SCHED_WAKEUP) {
            e.kind = event_kind::wakeup;
            e.other = {raw.prev_pid, raw.prev_tid};
            e.idx = std::uint32_t(raw.prev_state);
        }
    }
    if (st & PERF_SAMPLE_TID) {
        e.task = {s->pid, s->tid};
        e.has_task = true;
    }
    e.time = s->time;
    e.has_time = s->has_time;
    if (st & PERF_SAMPLE_CPU)
        e.cpu = std::int32_t(s->cpu);
    if (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) {
        e.id = s->id;
        e.has_id = true;
    }
    return true;
}

bool parse_switch(const pd::record_view& r, trace_event& e) {
    auto s = pd::parse_switch(r);
    if (!s)
        return false;
    e.kind = s->out ? event_kind::switch_out : event_kind::switch_in;
    e.preempt = s->preempt;
    e.cpu_wide = e.type == PERF_RECORD_SWITCH_CPU_WIDE;
    e.other = {s->next_prev_pid, s->next_prev_tid};
    return true;
}

bool parse_comm(const pd::record_view& r, trace_event& e) {
    auto c = pd::parse_comm(r);
    if (!c)
        return false;
    e.kind = event_kind::comm;
    e.task = {c->pid, c->tid};
    e.has_task = true;
    e.text = c->comm;
    e.exec = c->exec;
    return true;
}

bool parse_task(const pd::record_view& r, trace_event& e) {
    auto t = pd::parse_task(r);
    if (!t)
        return false;
    e.kind = e.type == PERF_RECORD_FORK ? event_kind::fork : event_kind::exit;
    e.task = {t->pid, t->tid};
    e.has_task = true;
    e.other = {t->ppid, t->ptid};
    if (!e.has_time) {
        e.time = t->time;
        e.has_time = true;
    }
    return true;
}

bool parse_mmap(const pd::record_view& r, trace_event& e) {
    auto m = pd::parse_mmap(r);
    if (!m)
        return false;
    e.kind = event_kind::mmap;
    e.task = {m->pid, m->tid};
    e.has_task = true;
    e.a = m->start;
    e.b = m->len;
    e.c = m->pgoff;
    e.text = std::move(m->filename);
    e.build_id = std::move(m->build_id);
    return true;
}

bool parse_lost(const pd::record_view& r, trace_event& e) {
    auto l = pd::parse_lost(r);
    if (!l)
        return false;
    e.kind = event_kind::lost;
    e.a = l->id;
    e.b = l->lost;
    return true;
}

bool parse_aux(const pd::record_view& r, trace_event& e) {
    auto a = pd::parse_aux(r);
    if (!a)
        return false;
    e.kind = event_kind::aux;
    e.a = a->aux_offset;
    e.b = a->aux_size;
    e.c = a->flags;
    return true;
}

bool parse_itrace_start(const pd::record_view& r, trace_event& e) {
    auto i = pd::parse_itrace_start(r);
    if (!i)
        return false;
    e.kind = event_kind::itrace_start;
    e.task = {i->pid, i->tid};
    e.has_task = true;
    return true;
}

bool parse_auxtrace(const pd::record_view& r, trace_event& e) {
    auto a = pd::parse_auxtrace(r);
    if (!a)
        return false;
    e.kind = event_kind::auxtrace;
    e.a = a->size;
    e.b = a->offset;
    e.c = a->reference;
    e.idx = a->idx;
    e.cpu = std::int32_t(a->cpu);
    e.task = {0, a->tid};
    // kring's emulated tracer: packets from the first SYNC on (a snapshot
    // window starts mid-packet).
    packet_stats d;
    const std::size_t from = find_sync(r.auxtrace);
    decode_packets(r.auxtrace, from, d);
    e.packets = d.packets;
    e.gaps = d.gaps;
    e.bad = d.bad || from == r.auxtrace.size();
    return true;
}

// One record into an event; false when the record is too short or
// malformed for its type (the event still counts, as kind other).
bool parse(const pd::file& f, const pd::record_view& r, trace_event& e,
           const tracepoint_decoder& tpd) {
    e.type = r.type();
    e.misc = r.misc();
    e.size = std::uint32_t(r.bytes.size());
    e.offset = r.offset;
    const pd::event_attr* attr = f.attr_of(r);
    if (attr)
        e.event_name = attr->name;
    switch (e.type) {
        case PERF_RECORD_SAMPLE:
            return parse_sample(r, attr, e, tpd);
        case pd::record_auxtrace:
            return parse_auxtrace(r, e);
        case pd::record_finished_round:
            e.kind = event_kind::finished_round;
            return true;
        default:
            break;
    }
    // The kernel's records: the sample_id trailer first, then the body
    // (whose task, when it has one, is the record's).
    if (e.type < PERF_RECORD_MAX)
        take_sample_id(r, attr, e);
    switch (e.type) {
        case PERF_RECORD_SWITCH:
        case PERF_RECORD_SWITCH_CPU_WIDE:
            return parse_switch(r, e);
        case PERF_RECORD_COMM:
            return parse_comm(r, e);
        case PERF_RECORD_FORK:
        case PERF_RECORD_EXIT:
            return parse_task(r, e);
        case PERF_RECORD_MMAP:
        case PERF_RECORD_MMAP2:
            return parse_mmap(r, e);
        case PERF_RECORD_LOST:
            return parse_lost(r, e);
        case PERF_RECORD_AUX:
            return parse_aux(r, e);
        case PERF_RECORD_ITRACE_START:
            return parse_itrace_start(r, e);
        default:
            return true;
    }
}

}  // namespace

const char* event_name(event_kind k) noexcept {
    switch (k) {
        case event_kind::sample:
            return "sample";
        case event_kind::wakeup:
            return "wakeup";
        case event_kind::tracepoint:
            return "tracepoint";
        case event_kind::switch_out:
            return "switch-out";
        case event_kind::switch_in:
            return "switch-in";
        case event_kind::comm:
            return "comm";
        case event_kind::fork:
            return "fork";
        case event_kind::exit:
            return "exit";
        case event_kind::mmap:
            return "mmap";
        case event_kind::lost:
            return "lost";
        case event_kind::aux:
            return "aux";
        case event_kind::itrace_start:
            return "itrace-start";
        case event_kind::auxtrace:
            return "auxtrace";
        case event_kind::finished_round:
            return "finished-round";
        case event_kind::other:
            break;
    }
    return "other";
}

std::string record_type_name(std::uint32_t type) {
    switch (type) {
        case PERF_RECORD_MMAP:
            return "MMAP";
        case PERF_RECORD_LOST:
            return "LOST";
        case PERF_RECORD_COMM:
            return "COMM";
        case PERF_RECORD_EXIT:
            return "EXIT";
        case PERF_RECORD_THROTTLE:
            return "THROTTLE";
        case PERF_RECORD_UNTHROTTLE:
            return "UNTHROTTLE";
        case PERF_RECORD_FORK:
            return "FORK";
        case PERF_RECORD_READ:
            return "READ";
        case PERF_RECORD_SAMPLE:
            return "SAMPLE";
        case PERF_RECORD_MMAP2:
            return "MMAP2";
        case PERF_RECORD_AUX:
            return "AUX";
        case PERF_RECORD_ITRACE_START:
            return "ITRACE_START";
        case PERF_RECORD_LOST_SAMPLES:
            return "LOST_SAMPLES";
        case PERF_RECORD_SWITCH:
            return "SWITCH";
        case PERF_RECORD_SWITCH_CPU_WIDE:
            return "SWITCH_CPU_WIDE";
        case PERF_RECORD_NAMESPACES:
            return "NAMESPACES";
        case PERF_RECORD_KSYMBOL:
            return "KSYMBOL";
        case PERF_RECORD_BPF_EVENT:
            return "BPF_EVENT";
        case PERF_RECORD_CGROUP:
            return "CGROUP";
        case PERF_RECORD_TEXT_POKE:
            return "TEXT_POKE";
        case PERF_RECORD_AUX_OUTPUT_HW_ID:
            return "AUX_OUTPUT_HW_ID";
        case pd::record_header_attr:
            return "HEADER_ATTR";
        case pd::record_finished_round:
            return "FINISHED_ROUND";
        case pd::record_id_index:
            return "ID_INDEX";
        case pd::record_auxtrace_info:
            return "AUXTRACE_INFO";
        case pd::record_auxtrace:
            return "AUXTRACE";
        case pd::record_auxtrace_error:
            return "AUXTRACE_ERROR";
        case pd::record_time_conv:
            return "TIME_CONV";
        case pd::record_finished_init:
            return "FINISHED_INIT";
        default:
            return fmt::format("TYPE_{}", type);
    }
}

std::string aux_flag_names(std::uint64_t flags) {
    std::string s;
    auto add = [&](std::uint64_t bit, const char* name) {
        if (flags & bit) {
            if (!s.empty())
                s += '|';
            s += name;
        }
    };
    add(PERF_AUX_FLAG_TRUNCATED, "truncated");
    add(PERF_AUX_FLAG_OVERWRITE, "overwrite");
    add(PERF_AUX_FLAG_PARTIAL, "partial");
    add(PERF_AUX_FLAG_COLLISION, "collision");
    const std::uint64_t rest =
        flags & ~std::uint64_t(PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_OVERWRITE |
                               PERF_AUX_FLAG_PARTIAL | PERF_AUX_FLAG_COLLISION);
    if (rest) {
        if (!s.empty())
            s += '|';
        s += fmt::format("{:#x}", rest);
    }
    return s.empty() ? "0" : s;
}

std::string format_time(std::uint64_t ns) {
    return fmt::format("{}.{:09}", ns / 1000000000, ns % 1000000000);
}

std::string escape_token(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (unsigned char c : s) {
        if (c <= ' ' || c >= 0x7f || c == '"' || c == '\\' || c == '=')
            out += fmt::format("\\x{:02x}", c);
        else
            out += char(c);
    }
    return out.empty() ? "\"\"" : out;
}

std::string trace_model::comm_of(task_id t) const {
    if (auto it = comms.find(t); it != comms.end())
        return it->second;
    if (t.pid == 0 && t.tid == 0)
        return "swapper";
    return fmt::format(":{}", t.tid);
}

void warn_truncated(const trace_model& m) {
    if (!m.truncation)
        return;
    std::fflush(stdout);
    fmt::print(stderr, "kring: {}: truncated at offset {}: {} (the records before it are shown)\n",
               m.path, m.truncation->offset, m.truncation->what);
}

void warn_refused_formats(const trace_model& m) {
    if (m.tp_refused.empty())
        return;
    const auto& r = m.tp_refused.front();
    const auto more = m.tp_refused.size() - 1;
    std::fflush(stdout);
    fmt::print(stderr, "kring: {}: tracing data: format {} refused: {} ({})\n", m.path, r.name,
               r.why,
               more ? fmt::format("and {} more; their samples are not decoded", more)
                    : std::string("its samples are not decoded"));
}

namespace {

// Every record of @f in file order, parsed; those too short or malformed
// for their type counted in @unparsed.
kring::result<std::vector<trace_event>> read_events(const pd::file& f,
                                                    const tracepoint_decoder& tpd,
                                                    std::uint64_t& unparsed) {
    std::vector<trace_event> in_file;
    auto r = f.for_each([&](const pd::record_view& rv) {
        trace_event e;
        if (!parse(f, rv, e, tpd)) {
            unparsed++;
            e.kind = event_kind::other;
        }
        in_file.push_back(std::move(e));
    });
    if (!r)
        return r.error();
    return in_file;
}

// Time order across CPUs: a record without a time keeps its place after
// the record before it in the file.
std::vector<trace_event> in_time_order(std::vector<trace_event> in_file) {
    std::vector<std::uint64_t> key(in_file.size());
    std::uint64_t last = 0;
    for (std::size_t i = 0; i < in_file.size(); i++) {
        if (in_file[i].has_time)
            last = in_file[i].time;
        key[i] = last;
    }
    std::vector<std::size_t> order(in_file.size());
    for (std::size_t i = 0; i < order.size(); i++)
        order[i] = i;
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return key[a] < key[b]; });
    std::vector<trace_event> events;
    events.reserve(in_file.size());
    for (std::size_t i : order) {
        // pid and tid -1: perf's "no task" (a producer's own record types).
        trace_event& e = in_file[i];
        if (e.has_task && e.task.pid == UINT32_MAX && e.task.tid == UINT32_MAX)
            e.has_task = false;
        events.push_back(std::move(e));
    }
    return events;
}

void take_time_span(trace_model& m) {
    for (const auto& e : m.events) {
        if (e.has_time && e.time) {
            if (!m.has_times || e.time < m.first_time)
                m.first_time = e.time;
            if (!m.has_times || e.time > m.last_time)
                m.last_time = e.time;
            m.has_times = true;
        }
    }
}

// One event into the totals, the comms and the tasks' counts.
void count_event(trace_model& m, const trace_event& e) {
    switch (e.kind) {
        case event_kind::comm:
            m.comms[e.task] = e.text;
            break;
        case event_kind::fork:
            if (!m.comms.count(e.task))
                if (auto it = m.comms.find(e.other); it != m.comms.end())
                    m.comms[e.task] = it->second;
            break;
        case event_kind::sample:
            m.samples++;
            if (e.has_task)
                m.tasks[e.task].samples++;
            break;
        case event_kind::tracepoint:
            m.tracepoints++;
            break;
        case event_kind::wakeup:
            m.wakeups++;
            if (e.has_task)
                m.tasks[e.task].wakeups++;
            break;
        case event_kind::switch_out:
        case event_kind::switch_in: {
            m.switches++;
            const bool out = e.kind == event_kind::switch_out;
            (out ? m.switches_out : m.switches_in)++;
            if (!e.has_task)
                break;
            auto& t = m.tasks[e.task];
            t.switches += out;
            t.preempted += out && e.preempt;
            break;
        }
        case event_kind::lost:
            m.lost_records++;
            m.lost += e.b;
            break;
        case event_kind::aux:
            m.aux_records++;
            m.aux_bytes += e.b;
            m.aux_truncated += !!(e.c & PERF_AUX_FLAG_TRUNCATED);
            m.aux_overwrite += !!(e.c & PERF_AUX_FLAG_OVERWRITE);
            m.aux_partial += !!(e.c & PERF_AUX_FLAG_PARTIAL);
            m.aux_collision += !!(e.c & PERF_AUX_FLAG_COLLISION);
            break;
        case event_kind::auxtrace:
            m.auxtrace_records++;
            m.auxtrace_bytes += e.a;
            m.aux_packets += e.packets;
            m.aux_gaps += e.gaps;
            m.aux_undecoded += e.bad;
            break;
        default:
            break;
    }
}

// In time order: the totals, the comms (each event's comm as it was when
// the event happened) and the tasks' counts.
void count(trace_model& m) {
    for (auto& e : m.events) {
        m.by_type[e.type]++;
        m.by_cpu[e.cpu]++;
        if (e.cpu >= 0)
            m.cpus.insert(e.cpu);
        count_event(m, e);
        if (e.has_task)
            e.comm = m.comm_of(e.task);
    }
}

// The tasks' slices on each CPU from the switch records with a task, a CPU
// and a time, and each task's runtime (the sum of its slices).
void build_slices(trace_model& m) {
    struct running {
        task_id task;
        std::uint64_t start = 0;
        bool open_start = false;
    };
    std::map<std::int32_t, std::optional<running>> on_cpu;
    std::set<std::int32_t> cpu_seen_switch;
    auto close = [&](std::int32_t cpu, const running& run, std::uint64_t end, bool open_end) {
        m.slices[cpu].push_back(
            {cpu, run.task, run.start, std::max(end, run.start), run.open_start, open_end});
    };
    for (const auto& e : m.events) {
        const bool out = e.kind == event_kind::switch_out;
        if ((!out && e.kind != event_kind::switch_in) || !e.has_task || e.cpu < 0 || !e.has_time)
            continue;
        auto& cur = on_cpu[e.cpu];
        const bool first = cpu_seen_switch.insert(e.cpu).second;
        // The running task's slice ends here, whether this is its own
        // switch-out or the switch-in of another (its switch-out missing).
        if (cur)
            close(e.cpu, *cur, e.time, false);
        else if (out && first)  // on CPU since before the recording
            close(e.cpu, {e.task, std::min(m.first_time, e.time), true}, e.time, false);
        if (out)
            cur.reset();
        else
            cur = running{e.task, e.time, false};
    }
    for (auto& [cpu, cur] : on_cpu)
        if (cur)
            close(cpu, *cur, std::max(m.last_time, cur->start), true);
    for (auto& [cpu, list] : m.slices)
        for (const auto& s : list)
            m.tasks[s.task].runtime += s.end - s.start;
}

}  // namespace

kring::result<trace_model> trace_model::load(const std::string& path) {
    auto f = pd::file::open(path);
    if (!f)
        return f.error();
    trace_model m;
    m.path = path;
    m.attrs = f->attrs();
    m.feats = f->feats();
    const tracepoint_decoder tpd(m.feats.tracing_data);
    m.tp_undecoded = tpd.unavailable();
    m.tp_refused = tpd.refused();
    auto in_file = read_events(*f, tpd, m.unparsed);
    if (!in_file)
        return in_file.error();
    if (f->truncated())
        m.truncation = f->truncation_info();
    m.events = in_time_order(std::move(*in_file));
    take_time_span(m);
    count(m);
    build_slices(m);
    for (auto& [id, t] : m.tasks) {
        t.id = id;
        t.comm = m.comm_of(id);
    }
    return m;
}

}  // namespace kring_tool
