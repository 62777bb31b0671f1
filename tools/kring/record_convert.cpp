// kring record's conversion of kring records into perf.data records
// (record_convert.hpp).
#include "record_convert.hpp"

#include <algorithm>
#include <cstring>

#include <fmt/core.h>

namespace kring_tool::record {

namespace {

// The sched source's cpu for a switch whose CPU its reader may not see.
constexpr std::uint32_t cpu_hidden = 0xffffffffu;

// A task name of the sched source's RAW: 16 bytes, NUL padded.
std::string_view comm_of(const char* comm16) { return {comm16, strnlen(comm16, 16)}; }

}  // namespace

// GET_FORMATS is asked about at most this many record types per producer
// channel (it describes at most KRING_FORMATS_MAX); undescribed records
// are counted by type for this many types.
constexpr std::size_t producer_asks_max = 2 * KRING_FORMATS_MAX;
constexpr std::size_t producer_types_max = 16;

std::string kind_name(kind k) {
    switch (k) {
        case kind::sched:
            return "sched";
        case kind::timer:
            return "timer";
        case kind::aux:
            return "aux";
        case kind::producer:
            return "producer";
        case kind::event:
            return "event";
    }
    return "?";
}

pd::event_attr tracepoint_attr(std::string name, std::uint32_t id, std::vector<std::uint64_t> ids) {
    return pd::sample_event(std::move(name), PERF_TYPE_TRACEPOINT, id, st_tracepoint,
                            std::move(ids));
}

recorder::recorder(bool snapshot_mode, kring::merge_options mo)
    : snapshot(snapshot_mode), merger(mo) {}

void recorder::put(const std::vector<std::byte>& b) {
    if (write_failed)
        return;
    if (auto r = w->write(b); !r) {
        write_failed = true;
        write_error = r.error();
        return;
    }
    written_records++;
}

void recorder::note_time(std::uint64_t t) {
    if (!t)
        return;
    if (!first_time || t < first_time)
        first_time = t;
    last_time = std::max(last_time, t);
}

void recorder::comm_once(std::uint32_t pid, std::uint32_t tid, const char* comm16,
                         const pd::sample_id& at) {
    if (!tid)
        return;  // the idle task: perf knows it as swapper
    std::string comm(comm_of(comm16));
    if (comm.empty())
        return;
    if (!comms_seen.insert({pid, tid, comm}).second)
        return;
    pd::sample_id sid = at;
    sid.pid = pid;
    sid.tid = tid;
    put(pd::make_comm(pid, tid, comm, false, sid, st_trailer));
}

void recorder::on_sched(ring& r, const kring::sample_info& s) {
    kring_sched_raw raw;
    if (s.raw.size() < sizeof(raw)) {
        bad++;
        return;
    }
    std::memcpy(&raw, s.raw.data(), sizeof(raw));
    pd::sample_id sid;
    sid.time = s.time;
    sid.cpu = raw.cpu;
    sid.id = r.id;
    sid.has_time = true;
    switch (raw.kind) {
        case KRING_SCHED_SWITCH:
            on_switch(r, s, raw, sid);
            break;
        case KRING_SCHED_FORK:
            on_fork(s, raw, sid);
            break;
        case KRING_SCHED_EXIT:
            on_exit(s, raw, sid);
            break;
        case KRING_SCHED_WAKEUP:
            on_wakeup(r, s, raw);
            break;
        default:
            bad++;
    }
}

void recorder::on_switch(ring& r, const kring::sample_info& s, const kring_sched_raw& raw,
                         const pd::sample_id& sid) {
    switches++;
    comm_once(raw.prev_pid, raw.prev_tid, raw.prev_comm, sid);
    comm_once(raw.next_pid, raw.next_tid, raw.next_comm, sid);
    // Involuntary: preempted, or still runnable when switched out.
    bool preempt = (raw.flags & KRING_SCHED_F_PREEMPT) || raw.prev_state == 0;
    pd::sample_id out = sid, in = sid;
    out.pid = raw.prev_pid;
    out.tid = raw.prev_tid;
    in.pid = raw.next_pid;
    in.tid = raw.next_tid;
    put(pd::make_switch_cpu_wide(true, preempt, raw.next_pid, raw.next_tid, out, st_trailer));
    put(pd::make_switch_cpu_wide(false, false, raw.prev_pid, raw.prev_tid, in, st_trailer));
    if (tp && tp->sched_stat_runtime && raw.cpu != cpu_hidden)
        put_runtime(r, s, raw);
    if (tp)
        put_sched_switch(r, s, raw);
}

void recorder::put_runtime(ring& r, const kring::sample_info& s, const kring_sched_raw& raw) {
    // sched:sched_stat_runtime of prev, the followed side, for the run a
    // recorded switch in on this CPU began.
    auto it = on_cpu.find(raw.cpu);
    if (it != on_cpu.end() && raw.prev_tid && s.tid == raw.prev_tid &&
        it->second.first == raw.prev_tid && s.time >= it->second.second) {
        pd::tp_payload pl(*tp->sched_stat_runtime);
        pl.set("common_pid", raw.prev_tid)
            .set_str("comm", comm_of(raw.prev_comm))
            .set("pid", raw.prev_tid)
            .set("runtime", std::int64_t(s.time - it->second.second));
        put_tracepoint(r.id | tp_runtime_id_bit, raw.prev_pid, raw.prev_tid, s.time, raw.cpu,
                       pl.bytes());
        runtimes++;
    }
    on_cpu[raw.cpu] = {raw.next_tid, s.time};
}

void recorder::put_sched_switch(ring& r, const kring::sample_info& s, const kring_sched_raw& raw) {
    // sched:sched_switch, in the context of prev (perf's).
    pd::tp_payload pl(tp->sched_switch);
    pl.set("common_pid", raw.prev_tid)
        .set_str("prev_comm", comm_of(raw.prev_comm))
        .set("prev_pid", raw.prev_tid)
        .set("prev_prio", raw.prev_prio)
        .set("prev_state", std::int64_t(raw.prev_state))
        .set_str("next_comm", comm_of(raw.next_comm))
        .set("next_pid", raw.next_tid)
        .set("next_prio", raw.next_prio);
    put_tracepoint(r.id | tp_switch_id_bit, raw.prev_pid, raw.prev_tid, s.time, raw.cpu,
                   pl.bytes());
}

void recorder::on_fork(const kring::sample_info& s, const kring_sched_raw& raw, pd::sample_id sid) {
    forks++;
    comm_once(raw.prev_pid, raw.prev_tid, raw.prev_comm, sid);
    pd::task_info t;
    t.pid = raw.next_pid;
    t.tid = raw.next_tid;
    t.ppid = raw.prev_pid;
    t.ptid = raw.prev_tid;
    t.time = s.time;
    sid.pid = raw.prev_pid;
    sid.tid = raw.prev_tid;
    put(pd::make_task(PERF_RECORD_FORK, t, sid, st_trailer));
}

void recorder::on_exit(const kring::sample_info& s, const kring_sched_raw& raw, pd::sample_id sid) {
    exits++;
    pd::task_info t;
    t.pid = t.ppid = raw.prev_pid;
    t.tid = t.ptid = raw.prev_tid;
    t.time = s.time;
    sid.pid = raw.prev_pid;
    sid.tid = raw.prev_tid;
    put(pd::make_task(PERF_RECORD_EXIT, t, sid, st_trailer));
}

void recorder::on_wakeup(ring& r, const kring::sample_info& s, const kring_sched_raw& raw) {
    wakeups++;
    pd::sample ps;
    ps.id = r.id | wakeup_id_bit;
    ps.pid = raw.next_pid;
    ps.tid = raw.next_tid;
    ps.time = s.time;
    ps.has_time = true;
    ps.cpu = raw.cpu;
    ps.raw = s.raw;
    put(pd::make_sample(PERF_RECORD_MISC_KERNEL, ps, st_wakeup));
    if (!tp)
        return;
    // sched:sched_wakeup, in the waker's context; target_cpu is where the
    // woken task last ran (kring_sched_raw).
    pd::tp_payload pl(tp->sched_wakeup);
    pl.set("common_pid", raw.prev_tid)
        .set_str("comm", comm_of(raw.next_comm))
        .set("pid", raw.next_tid)
        .set("prio", raw.next_prio)
        .set("success", 1)
        .set("target_cpu", std::int64_t(raw.prev_state));
    put_tracepoint(r.id | tp_wakeup_id_bit, raw.prev_pid, raw.prev_tid, s.time,
                   raw.cpu == cpu_hidden ? std::uint32_t(std::max(r.cpu, 0)) : raw.cpu, pl.bytes());
}

void recorder::put_tracepoint(std::uint64_t id, std::uint32_t pid, std::uint32_t tid,
                              std::uint64_t time, std::uint32_t cpu,
                              std::span<const std::byte> payload) {
    tp_samples++;
    pd::sample ps;
    ps.id = id;
    ps.pid = pid;
    ps.tid = tid;
    ps.time = time;
    ps.has_time = true;
    ps.cpu = cpu;
    ps.period = 1;
    ps.raw = payload;
    put(pd::make_sample(PERF_RECORD_MISC_KERNEL, ps, st_tracepoint));
}

void recorder::on_timer(ring& r, const kring::sample_info& s) {
    samples++;
    bool user = false;
    kring_timer_raw raw;
    if (s.raw.size() >= sizeof(raw)) {
        std::memcpy(&raw, s.raw.data(), sizeof(raw));
        user = raw.flags & KRING_TIMER_F_USER;
    }
    put(pd::make_sample(user ? PERF_RECORD_MISC_USER : PERF_RECORD_MISC_KERNEL,
                        events::perf_fields_of(s, r.id), timer_st));
}

void recorder::on_event(ring& r, const kring::sample_info& s, std::uint16_t misc) {
    event_samples++;
    put(events::sample_of(s, misc, r.id, r.out_st));
}

void recorder::on_aux(ring& r, const kring::aux_info& a) {
    // Snapshot mode: disabling a tracer that a snapshot left stopped
    // publishes the same window again (same offset and size): no new
    // data, not a snapshot, not written.
    if (snapshot && r.windows.empty() && r.last_aux_end &&
        a.aux_offset + a.aux_size == r.last_aux_end && a.aux_size == r.last_aux_size) {
        dup_aux++;
        return;
    }
    r.last_aux_end = a.aux_offset + a.aux_size;
    r.last_aux_size = a.aux_size;
    aux_records++;
    pd::sample_id sid;
    sid.time = a.time;
    sid.has_time = a.has_time;
    sid.cpu = std::uint32_t(std::max(r.cpu, 0));
    sid.pid = sid.tid = std::uint32_t(std::max(r.pid, 0));  // CPU mode: 0, no task
    sid.id = r.id;
    put(pd::make_aux(a.aux_offset, a.aux_size, a.flags, sid, st_trailer));
    std::span<const std::byte> payload;
    if (snapshot) {
        // The window copied when the snapshot was taken (the AUX record
        // comes through the data ring afterwards, in order).
        if (r.windows.empty())
            return;
        buf = std::move(r.windows.front());
        r.windows.pop_front();
        payload = buf;
    } else if (r.ax) {
        auto e = r.ax->extent(a);
        buf.resize(e.size());
        e.copy_to(buf.data());
        payload = buf;
        r.ax->release(a.aux_offset + a.aux_size);
    }
    if (payload.empty() || write_failed)
        return;
    if (auto res = w->write_auxtrace(payload, a.aux_offset, a.time, std::uint32_t(r.index),
                                     std::uint32_t(r.pid), std::uint32_t(std::max(r.cpu, 0)));
        !res) {
        write_failed = true;
        write_error = res.error();
        return;
    }
    auxtrace_bytes += payload.size();
    r.aux_bytes_written += payload.size();
}

const recorder::producer_event* recorder::producer_event_of(ring& r, std::uint32_t type) {
    if (auto it = producer_events.find(type); it != producer_events.end())
        return &it->second;
    // Producers describe a type before they write it: its format is there
    // now or never. Asked once per new type, for a bounded number of types.
    if (r.asked.size() >= producer_asks_max || !r.asked.insert(type).second)
        return nullptr;
    auto blocks = r.ch.formats();
    if (!blocks) {
        if (producer_format_error.empty())
            producer_format_error = blocks.error().message();
        return nullptr;
    }
    for (const auto& b : *blocks) {
        if (producer_events.size() >= KRING_FORMATS_MAX)
            break;
        while (tp && (next_tp_id == tp->sched_switch.id || next_tp_id == tp->sched_wakeup.id ||
                      (tp->sched_stat_runtime && next_tp_id == tp->sched_stat_runtime->id)))
            next_tp_id++;
        if (next_tp_id > 0xffff)
            break;
        auto t = pd::kring_format_as_tracepoint(b, "kring", std::uint16_t(next_tp_id));
        if (!t) {
            if (producer_format_error.empty())
                producer_format_error = t.error().message();
            continue;
        }
        if (producer_events.count(t->record_type))
            continue;  // declared at an earlier ask
        const std::uint64_t id =
            r.id | producer_id_bit | (std::uint64_t(producer_events.size()) << 32);
        if (auto res = w->add_attr(tracepoint_attr("kring:" + t->format.name, t->format.id, {id}));
            !res) {
            if (producer_format_error.empty())
                producer_format_error = res.error().message();
            break;
        }
        next_tp_id++;
        const std::uint32_t rt = t->record_type;
        producer_events.emplace(rt, producer_event{std::move(*t), id});
    }
    auto it = producer_events.find(type);
    return it == producer_events.end() ? nullptr : &it->second;
}

void recorder::on_producer(ring& r, const kring::record& rec) {
    // A record of the producer's own type says no task, CPU or time: no
    // task (-1), the ring's CPU, the time of the record before it (the
    // merger hands records out in time order, so the file stays in order).
    std::span<const std::byte> body = rec.bytes().subspan(sizeof(kring_record_header));
    std::uint32_t pid = std::uint32_t(-1), tid = std::uint32_t(-1);
    std::uint32_t cpu = std::uint32_t(std::max(r.cpu, 0));
    std::uint64_t time = last_time;
    if (rec.type() == KRING_RECORD_SAMPLE) {
        auto s = kring::parse_sample(rec, r.sample_type);
        if (!s) {
            bad++;
            return;
        }
        note_time(s->time);
        body = s->raw;
        pid = s->pid;
        tid = s->tid;
        cpu = s->cpu;
        time = s->time;
    }
    const producer_event* e = producer_event_of(r, rec.type());
    if (!e) {
        producer_undescribed_total++;
        if (auto it = producer_undescribed.find(rec.type()); it != producer_undescribed.end())
            it->second++;
        else if (producer_undescribed.size() < producer_types_max)
            producer_undescribed.emplace(rec.type(), 1);
        return;
    }
    if (body.size() < e->tp.body_size) {
        producer_short++;
        return;
    }
    pd::tp_payload pl(e->tp.format);
    pl.set("common_pid", std::int32_t(tid)).set_bytes(8, body.first(e->tp.body_size));
    producer_records++;
    put_tracepoint(e->id, pid, tid, time, cpu, pl.bytes());
}

std::vector<std::byte> recorder::tracing_data() const {
    std::vector<const pd::tp_format*> events;
    if (tp) {
        events.push_back(&tp->sched_switch);
        events.push_back(&tp->sched_wakeup);
        if (tp->sched_stat_runtime)
            events.push_back(&*tp->sched_stat_runtime);
    }
    events.insert(events.end(), event_formats.begin(), event_formats.end());
    for (const auto& [type, e] : producer_events)
        events.push_back(&e.tp.format);
    if (events.empty())
        return {};
    return tracing_data_of(tp ? tp->headers : read_tracing_headers(), events);
}

void recorder::on_record(ring& r, const kring::record& rec) {
    records++;
    if (r.k == kind::producer &&
        (rec.type() == KRING_RECORD_SAMPLE || rec.type() > KRING_RECORD_PAD)) {
        on_producer(r, rec);
        return;
    }
    switch (rec.type()) {
        case KRING_RECORD_SAMPLE: {
            auto s = kring::parse_sample(rec, r.sample_type);
            if (!s) {
                bad++;
                return;
            }
            note_time(s->time);
            if (r.k == kind::sched)
                on_sched(r, *s);
            else if (r.k == kind::timer)
                on_timer(r, *s);
            else if (r.k == kind::event)
                on_event(r, *s, rec.misc());
            return;
        }
        case KRING_RECORD_LOST: {
            auto l = kring::parse_lost(rec);
            if (!l) {
                bad++;
                return;
            }
            lost += l->lost;
            on_cpu.clear();
            if (l->has_range)
                r.lost_ranges.push_back(
                    {l->lost, l->first_seq, l->last_seq, l->first_time, l->last_time});
            // Time 0: perf delivers it at once instead of sorting it.
            pd::sample_id sid;
            sid.cpu = std::uint32_t(std::max(r.cpu, 0));
            sid.pid = sid.tid = std::uint32_t(r.pid);
            sid.id = r.id;
            put(pd::make_lost(r.id, l->lost, sid, st_trailer));
            return;
        }
        case KRING_RECORD_AUX: {
            auto a = kring::parse_aux(rec);
            if (!a) {
                bad++;
                return;
            }
            note_time(a->time);
            on_aux(r, *a);
            return;
        }
        case KRING_RECORD_ITRACE_START: {
            kring_itrace_start_record it;
            if (rec.size() < sizeof(it)) {
                bad++;
                return;
            }
            std::memcpy(&it, rec.bytes().data(), sizeof(it));
            pd::sample_id sid;
            sid.time = it.time;
            sid.has_time = true;
            sid.cpu = std::uint32_t(std::max(r.cpu, 0));
            sid.pid = it.pid;
            sid.tid = it.tid;
            sid.id = r.id;
            put(pd::make_itrace_start(it.pid, it.tid, sid, st_trailer));
            return;
        }
        default:
            return;  // PAD and kring's own: nothing for perf
    }
}

// One pass: every record the merger can emit in order now, then
// FINISHED_ROUND if anything was written.
kring::result<void> recorder::flush(bool all) {
    std::uint64_t before = written_records;
    auto cb = [&](std::size_t src, const kring::record& rec, std::uint64_t) {
        on_record(*rings[src], rec);
    };
    auto n = all ? merger.flush(cb) : merger.drain(cb);
    if (!n)
        return n.error();
    if (write_failed)
        return write_error;
    if (written_records != before) {
        put(pd::make_finished_round());
        if (write_failed)
            return write_error;
    }
    return {};
}

// Snapshot mode: copy every AUX ring's newest window (the AUX record
// follows in the data ring); @restart false leaves the tracers stopped.
kring::result<void> recorder::aux_snapshot(bool restart) {
    for (auto& r : rings) {
        if (r->k != kind::aux || !r->ax)
            continue;
        auto copy = [&]() -> kring::result<void> {
            auto e = r->ax->snapshot();
            std::vector<std::byte> win(e.size());
            e.copy_to(win.data());
            r->windows.push_back(std::move(win));
            return {};
        };
        kring::result<void> res = restart ? r->ch.with_aux_snapshot(copy) : r->ch.aux_snapshot();
        if (res && !restart)
            res = copy();
        if (!res)
            return res.error().with_context("AUX snapshot of " + ring_name(*r));
        r->snapshots++;
    }
    return {};
}

std::string recorder::ring_name(const ring& r) {
    if (r.cpu >= 0 && r.pid >= 0)
        return fmt::format("{} ring of task {} on cpu {}", kind_name(r.k), r.pid, r.cpu);
    if (r.cpu >= 0)
        return fmt::format("{} ring of cpu {}", kind_name(r.k), r.cpu);
    return fmt::format("{} ring of task {}", kind_name(r.k), r.pid);
}

}  // namespace kring_tool::record
