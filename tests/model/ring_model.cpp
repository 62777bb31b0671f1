// A relacy model of the data ring's producer/consumer protocol (kmod/ring*.c,
// kmod/clock.c), checked under the C++ memory model by exploring thread
// interleavings, the stale values each load may legally return, and
// interrupts at every point where kring_irq_point() sits in the ring core.
//
// Two threads: the producer CPU and the consumer (and a second, smaller
// model: the producer CPU and a CPU changing the wake-up settings).
//
//  - The producer writes records through reserve (a local cmpxchg on the
//    private head), copy and commit; at every interrupt point it may be
//    interrupted (a nondeterministic choice relacy explores) by a nested
//    writer that runs to completion, or by kring_floor_advance() as the
//    floor tick does. Only the outermost writer publishes data_head: barrier
//    B, then the store, then, if the head left the wake-up window, the
//    wake-up evaluation (ring_wakeup_eval(): a watermark crossing or a
//    wakeup_events count a reservation made due, the window set anew and
//    the count's generation read again after it) with the need-wakeup check
//    behind barrier E, then ->nest drops to 0 and the head is re-read for
//    writers that interrupted the publication.
//  - The consumer loads the timestamp floor (acquire), data_head, barrier C,
//    reads and verifies the records, barrier D, stores data_tail; before
//    "sleeping" it stores need_wakeup, barrier F, and loads data_head again.
//    The producer's data_tail load is acquire: the control dependency A of
//    the kernel, which the C++ model does not have.
//
// Checked: no record is read before it is complete (relacy's data race
// detection on the record words, and a checksum); data_head never moves
// back; every reserved record is published once all writers are done;
// produced == written + lost and every written record is read exactly once;
// a consumer that decides to sleep is woken by a later publication (E/F)
// if a wake-up fell due above where it went to sleep (a watermark crossing
// or a record whose reservation made a count due);
// a record published after the consumer saw floor F (read before head H),
// at or above H, has TIME >= F.
//
// Then every barrier is removed or weakened, one at a time, and the model
// must fail each time: that is what shows it can fail at all.
//
// Usage: kring_ring_model [--iterations N] [--verbose] [VARIANT...]
#include <relacy/relacy.hpp>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <streambuf>

namespace {

enum variant : unsigned {
    correct,
    no_ctrl_a,              // producer's data_tail load relaxed: no A
    no_wmb_b,               // no release barrier before the data_head store
    no_rmb_c,               // consumer: no acquire after its data_head load
    no_mb_d,                // consumer: no barrier before its data_tail store
    no_mb_e,                // producer: no full barrier before loading need_wakeup
    no_mb_f,                // consumer: no full barrier before re-loading data_head
    nested_publishes,       // a nested writer publishes data_head itself
    nest_drop_first,        // ->nest drops to 0 before data_head is stored
    no_recheck,             // the outermost writer does not re-read ->head
    floor_ignores_nest,     // the floor rises while a writer is in flight
    floor_ignores_pending,  // ... while a reserved record is unpublished
    floor_store_relaxed,    // the floor store is not a release
    floor_load_relaxed,     // the consumer's floor load is not an acquire
    wake_no_reread,         // the wake-up window is set without reading the generation again
    wake_first_round,       // the window is tested only on the publication's first round
    wake_head_moved,        // a count is taken while ->head moved past the head published
    no_dirty_recheck,       // the re-check looks at ->head only, not at the counters' mark
    // The wake-up settings against the window (settings_model):
    set_no_wmb_g,   // setter: no write barrier between the settings and ->wake_cfg
    set_no_rmb_h,   // writer: no read barrier between ->wake_cfg and the settings
    set_no_mb_i,    // setter: no full barrier between ->wake_cfg and the zeroing
    set_no_mb_j,    // writer: no full barrier between its window and ->wake_cfg again
    set_no_reread,  // writer: sets its window without reading ->wake_cfg again
    variant_count
};
constexpr unsigned first_settings_variant = set_no_wmb_g;

const char* const variant_names[variant_count] = {
    "correct",
    "no-ctrl-A",
    "no-wmb-B",
    "no-rmb-C",
    "no-mb-D",
    "no-mb-E",
    "no-mb-F",
    "nested-publishes",
    "nest-drop-first",
    "no-recheck",
    "floor-ignores-nest",
    "floor-ignores-pending",
    "floor-store-relaxed",
    "floor-load-relaxed",
    "wake-no-reread",
    "wake-first-round",
    "wake-head-moved",
    "no-dirty-recheck",
    "set-no-wmb-G",
    "set-no-rmb-H",
    "set-no-mb-I",
    "set-no-mb-J",
    "set-no-reread",
};

// The variant under test. Set before each simulation, constant during it.
variant g_variant = correct;
bool is(variant v) { return g_variant == v; }

constexpr unsigned slots = 2;         // record slots in the data area
constexpr unsigned outer_writes = 3;  // writers in task context
constexpr unsigned irq_budget = 2;    // interrupts per execution (nest depth <= 3)
constexpr unsigned irq_odds = 12;
constexpr unsigned consumer_rounds = 3;
constexpr unsigned max_records = outer_writes + irq_budget;
constexpr unsigned watermark = 2;  // records (positions) per watermark wake-up

unsigned checksum(unsigned seq, unsigned time) {
    return seq * 2654435761u ^ time * 40503u ^ 0x5a5a;
}

struct ring_model : rl::test_suite<ring_model, 2> {
    // The control page and the data pages: shared with the consumer.
    rl::atomic<unsigned> data_head, data_tail, need_wakeup, floor;
    rl::var<unsigned> rec_seq[slots], rec_time[slots], rec_sum[slots];

    // struct kring_ring: the producer CPU's own (thread 0 only).
    unsigned head, pub_head, nest, seq, clock, floor_set, irqs_left;
    unsigned produced, written, lost;
    unsigned counts_dirty, ctl_lost;  // ring_mark_counts(), the control page's copy
    unsigned wakeup_pos, wakeup_gen, wakeup_seen, wake_lo, wake_len;
    unsigned due_above;    // highest position at which a wakeup_events count fell due
    unsigned woken_above;  // highest head published with need_wakeup seen set

    // The consumer's results, checked in after().
    unsigned tail, seen, slept, slept_at;
    unsigned floor_val[consumer_rounds], floor_head[consumer_rounds], floors;

    void before() {
        data_head.store(0, rl::mo_relaxed, $);
        data_tail.store(0, rl::mo_relaxed, $);
        need_wakeup.store(0, rl::mo_relaxed, $);
        floor.store(0, rl::mo_relaxed, $);
        for (unsigned i = 0; i < slots; i++) {
            rec_seq[i]($) = 0;
            rec_time[i]($) = 0;
            rec_sum[i]($) = 0;
        }
        head = pub_head = nest = seq = floor_set = 0;
        clock = 1;
        irqs_left = irq_budget;
        produced = written = lost = due_above = woken_above = 0;
        counts_dirty = ctl_lost = 0;
        wakeup_pos = wakeup_gen = wakeup_seen = wake_lo = wake_len = 0;
        tail = seen = slept = slept_at = floors = 0;
    }

    // ---- the producer CPU ----

    // kring_irq_point(): maybe an interrupt that runs to completion here.
    void irq() {
        if (!irqs_left)
            return;
        // One chance in irq_odds each of a nested writer and of the floor
        // tick, so that interrupts land in every part of the executions.
        switch (rl::rand(irq_odds)) {
            case 1:
                irqs_left--;
                write();
                break;
            case 2:
                irqs_left--;
                floor_advance();
                break;
            default:
                break;
        }
    }

    // kring_floor_advance()
    void floor_advance() {
        unsigned now = clock++;
        if (!is(floor_ignores_nest) && nest)
            return;
        if (!is(floor_ignores_pending) && head != pub_head)
            return;
        if (now <= floor_set)
            return;
        floor_set = now;
        floor.store(now, is(floor_store_relaxed) ? rl::mo_relaxed : rl::mo_release, $);
    }

    // ring_wakeup_issue(): a wake-up is due; does the consumer want it?
    void wakeup_issue(unsigned h) {
        if (!is(no_mb_e))
            rl::atomic_thread_fence(rl::mo_seq_cst, $);  // E, pairs with F
        if (need_wakeup.load(rl::mo_relaxed, $) && h > woken_above)
            woken_above = h;
    }

    // ring_wakeup_pending(): has head @h left the wake-up window?
    bool wakeup_pending(unsigned h) { return h - wake_lo >= wake_len; }

    // ring_wakeup_eval(): the outermost writer published @h outside the window
    void wakeup_eval(unsigned h) {
        bool due = false;
        unsigned gen = wakeup_gen;
        irq();
        if (!is(wake_head_moved) && head != h) {  // the next round looks
            wake_len = 0;
            return;
        }
        if (gen != wakeup_seen) {
            wakeup_seen = gen;
            due = true;
        }
        if (h - wakeup_pos >= watermark) {
            wakeup_pos += (h - wakeup_pos) / watermark * watermark;
            due = true;
        }
        irq();
        wake_lo = wakeup_pos;
        wake_len = watermark;
        irq();
        if (!is(wake_no_reread) && wakeup_gen != wakeup_seen)
            wake_len = 0;
        irq();
        if (due)
            wakeup_issue(h);
    }

    // ring_wakeup_events(): this reservation (ending at @end) makes the
    // wakeup_events count due, or not (relacy chooses)
    void wakeup_events(unsigned end) {
        if (!rl::rand(2))
            return;
        wakeup_gen++;
        wake_len = 0;
        if (end > due_above)
            due_above = end;
    }

    // ring_publish()
    void publish() {
        if (nest > 1) {
            if (is(nested_publishes)) {
                rl::atomic_thread_fence(rl::mo_release, $);
                data_head.store(head, rl::mo_relaxed, $);
                pub_head = head;
            }
            nest--;
            return;
        }
        for (bool first = true;; first = false) {
            unsigned h = head;
            irq();
            if (counts_dirty) {  // ring_mirror_counts(): the mark cleared first
                counts_dirty = 0;
                irq();
                ctl_lost = lost;
            }
            if (is(nest_drop_first)) {
                nest = 0;
                irq();
            }
            if (!is(no_wmb_b))
                rl::atomic_thread_fence(rl::mo_release, $);  // B, pairs with C
            data_head.store(h, rl::mo_relaxed, $);
            pub_head = h;
            irq();
            if ((first || !is(wake_first_round)) && wakeup_pending(h))
                wakeup_eval(h);
            nest = 0;
            irq();
            if (is(no_recheck) || (h == head && (is(no_dirty_recheck) || !counts_dirty)))
                return;
            nest = 1;
        }
    }

    // kring_output_begin(), the copy and kring_output_end()
    void write() {
        nest++;
        irq();
        unsigned s = seq++;
        produced++;
        irq();
        unsigned off, time;
        for (;;) {
            off = head;
            time = clock++;  // the ring clock is read inside the loop
            unsigned t = data_tail.load(is(no_ctrl_a) ? rl::mo_relaxed : rl::mo_acquire, $);
            if (off + 1 - t > slots) {  // no space: counted lost
                lost++;
                counts_dirty = 1;
                irq();
                publish();
                return;
            }
            irq();
            if (head == off) {  // the local cmpxchg
                head = off + 1;
                break;
            }
        }
        irq();
        wakeup_events(off + 1);
        unsigned i = off % slots;
        rec_seq[i]($) = s;
        irq();
        rec_time[i]($) = time;
        rec_sum[i]($) = checksum(s, time);
        irq();
        written++;
        publish();
    }

    // ---- the consumer ----

    void read_record(unsigned pos) {
        unsigned i = pos % slots;
        unsigned s = rec_seq[i]($), time = rec_time[i]($), sum = rec_sum[i]($);
        RL_ASSERT(sum == checksum(s, time));
        RL_ASSERT(s < max_records && !(seen & (1u << s)));
        seen |= 1u << s;
        // Published after the floor was seen, at or above the head read
        // after it: its time is not below that floor.
        for (unsigned k = 0; k < floors; k++)
            if (pos >= floor_head[k])
                RL_ASSERT(time >= floor_val[k]);
    }

    void consume() {
        unsigned last = 0;
        for (unsigned r = 0; r < consumer_rounds; r++) {
            unsigned f = floor.load(is(floor_load_relaxed) ? rl::mo_relaxed : rl::mo_acquire, $);
            unsigned h = data_head.load(rl::mo_relaxed, $);
            if (!is(no_rmb_c))
                rl::atomic_thread_fence(rl::mo_acquire, $);  // C, pairs with B
            RL_ASSERT(h >= last);                            // data_head never moves back
            RL_ASSERT(h - tail <= slots);
            last = h;
            if (f) {
                floor_val[floors] = f;
                floor_head[floors++] = h;
            }
            for (unsigned p = tail; p != h; p++)
                read_record(p);
            if (!is(no_mb_d))
                rl::atomic_thread_fence(rl::mo_seq_cst, $);  // D, pairs with A
            data_tail.store(h, rl::mo_relaxed, $);
            tail = h;
        }
        // About to sleep: ask for a wake-up, then look once more.
        need_wakeup.store(1, rl::mo_relaxed, $);
        if (!is(no_mb_f))
            rl::atomic_thread_fence(rl::mo_seq_cst, $);  // F, pairs with E
        if (data_head.load(rl::mo_relaxed, $) == tail) {
            slept = 1;
            slept_at = tail;
        }
    }

    void thread(unsigned index) {
        if (index == 0) {
            for (unsigned w = 0; w < outer_writes; w++) {
                irq();
                write();
                floor_advance();  // as kring_capture_emit() does after a record
            }
        } else {
            consume();
        }
    }

    void after() {
        unsigned h = data_head.load(rl::mo_relaxed, $);
        RL_ASSERT(h == head);  // every reservation is published
        RL_ASSERT(produced == written + lost);
        RL_ASSERT(ctl_lost == lost);  // the control page's counters are the ring's
        for (unsigned p = tail; p != h; p++)
            read_record(p);
        RL_ASSERT(static_cast<unsigned>(__builtin_popcount(seen)) == written);
        // The last position a wake-up fell due at: a count's, or the last
        // watermark crossing below the final head.
        unsigned due = due_above;
        if (h / watermark * watermark > due)
            due = h / watermark * watermark;
        if (slept && due > slept_at)
            RL_ASSERT(woken_above > slept_at);  // no lost wake-up
    }
};

// New wake-up settings from another CPU (kring_ring_set_wakeup()) against
// the outermost writer setting its wake-up window (ring_wakeup_eval()), the
// part of it that reads the settings. Thread 0 is the writer CPU, which
// sets its window twice (each time the old one ran out), thread 1 the
// setter, which lowers the watermark. Checked: once both are done the
// window is either zeroed (the next publication looks again) or set for
// the new watermark; a window of the old one never outlives the call.
struct settings_model : rl::test_suite<settings_model, 2> {
    static constexpr unsigned old_wm = 4, new_wm = 1;
    rl::atomic<unsigned> watermark, wake_cfg, wake_len;

    void before() {
        watermark.store(old_wm, rl::mo_relaxed, $);
        wake_cfg.store(0, rl::mo_relaxed, $);
        wake_len.store(0, rl::mo_relaxed, $);
    }

    void eval() {
        unsigned cfg = wake_cfg.load(rl::mo_relaxed, $);
        if (!is(set_no_rmb_h))
            rl::atomic_thread_fence(rl::mo_acquire, $);  // H, pairs with G
        unsigned wm = watermark.load(rl::mo_relaxed, $);
        wake_len.store(wm, rl::mo_relaxed, $);  // the window: wm long
        if (!is(set_no_mb_j))
            rl::atomic_thread_fence(rl::mo_seq_cst, $);  // J, pairs with I
        if (!is(set_no_reread) && wake_cfg.load(rl::mo_relaxed, $) != cfg)
            wake_len.store(0, rl::mo_relaxed, $);
    }

    void thread(unsigned index) {
        if (index == 0) {
            eval();
            eval();
        } else {
            watermark.store(new_wm, rl::mo_relaxed, $);
            if (!is(set_no_wmb_g))
                rl::atomic_thread_fence(rl::mo_release, $);  // G, pairs with H
            wake_cfg.store(1, rl::mo_relaxed, $);
            if (!is(set_no_mb_i))
                rl::atomic_thread_fence(rl::mo_seq_cst, $);  // I, pairs with J
            wake_len.store(0, rl::mo_relaxed, $);
        }
    }

    void after() {
        unsigned len = wake_len.load(rl::mo_relaxed, $);
        RL_ASSERT(len == 0 || len == new_wm);
    }
};

// Relacy prints its report to a stream while its own allocator is active:
// a stream that never allocates.
struct discard_buf : std::streambuf {
    int overflow(int c) override { return c; }
};

}  // namespace

int main(int argc, char** argv) {
    unsigned long iterations = 200000;
    bool verbose = false;
    bool pick[variant_count] = {};
    bool picked = false;
    for (int i = 1; i < argc; i++) {
        if (!std::strcmp(argv[i], "--iterations") && i + 1 < argc) {
            iterations = std::strtoul(argv[++i], nullptr, 0);
        } else if (!std::strcmp(argv[i], "--verbose")) {
            verbose = true;
        } else {
            unsigned v = 0;
            while (v < variant_count && std::strcmp(argv[i], variant_names[v]))
                v++;
            if (v == variant_count) {
                std::fprintf(stderr, "kring_ring_model: unknown variant or option %s\n", argv[i]);
                return 2;
            }
            pick[v] = picked = true;
        }
    }
    static discard_buf sink_buf;
    static std::ostream sink(&sink_buf);
    int failures = 0;
    for (unsigned v = 0; v < variant_count; v++) {
        if (picked && !pick[v])
            continue;
        g_variant = static_cast<variant>(v);
        rl::test_params p;
        p.iteration_count = iterations;
        p.search_type = rl::random_scheduler_type;
        p.output_stream = verbose ? &std::cout : &sink;
        p.progress_stream = &sink;
        bool ok = true;
        if (v < first_settings_variant)
            ok = rl::simulate<ring_model>(p);
        if (ok && (v == correct || v >= first_settings_variant)) {
            rl::test_params q = p;
            ok = rl::simulate<settings_model>(q);
            p.test_result = q.test_result;
            p.stop_iteration = q.stop_iteration;
        }
        bool want = v == correct;
        if (ok)
            std::printf("%-22s passed %lu iterations%s\n", variant_names[v], iterations,
                        want ? "" : "  <- FAIL: the model missed a broken protocol");
        else
            std::printf("%-22s %s at iteration %lu%s\n", variant_names[v],
                        rl::test_result_str(p.test_result),
                        static_cast<unsigned long>(p.stop_iteration),
                        want ? "  <- FAIL" : " (caught, as it must be)");
        failures += ok != want;
    }
    std::printf("kring_ring_model: %s\n", failures ? "FAILED" : "passed");
    return failures ? 1 : 0;
}
