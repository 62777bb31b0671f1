// SPDX-License-Identifier: GPL-2.0
/*
 * Helpers of the host tests of kmod/ring.c, over the host ring of
 * tests/common/host_ring.hpp: the test record format (tests/common/test_record.h, shared with
 * the KUnit suite: kTestType, word() and time_of() below name its parts),
 * and a consumer that validates what it reads.
 */
#pragma once

#include "host_ring.hpp"

namespace kt {

// The control page's counters are the ring's, and they add up.
inline void expect_counts_mirrored(host_ring& r) {
    kring_ring_counts c;

    kring_ring_read_counts(&r.rb, &c);
    EXPECT_EQ(r.ctl->records_written, c.written);
    EXPECT_EQ(r.ctl->records_discarded, c.discarded);
    EXPECT_EQ(r.ctl->lost_no_space, c.lost_no_space);
    EXPECT_EQ(r.ctl->lost_too_big, c.lost_too_big);
    EXPECT_EQ(r.ctl->lost_paused, c.lost_paused);
    EXPECT_EQ(r.ctl->lost_overwritten, c.lost_overwritten);
    EXPECT_EQ(r.ctl->wakeups, c.wakeups);
    EXPECT_EQ(c.produced,
              c.written + c.discarded + c.lost_no_space + c.lost_too_big + c.lost_paused);
}

enum class rec_end { Commit, Discard, Partial, OneCall };

/*
 * A test record of @size bytes (a multiple of 8) by kring_output_write():
 * the whole record in one call, its seq predicted (the next one: right for
 * a writer nothing interrupts before its begin takes it).
 */
inline int write_one_call(kring_ring* rb, unsigned size, uint64_t* seq, uint64_t t) {
    const uint64_t s = (uint64_t)local64_read(&rb->seq);
    std::vector<uint64_t> body(size > 8 ? (size - 8) / 8 : 0);

    for (size_t j = 0; j < body.size(); j++)
        body[j] = j ? word(s, j) : s;
    if (seq)
        *seq = s;
    return kring_output_write(rb, kTestType, 0, body.data(), size - 8, t);
}

/*
 * Write one test record of @size bytes: begin, header, seq, words, in
 * copies of @chunk bytes (0: one copy). rec_end::Partial writes only the seq
 * and lets kring_output_end() zero the rest; rec_end::OneCall writes it
 * with write_one_call(). Returns begin's result;
 * *@seq gets the sequence number either way.
 */
inline int write_record(kring_ring* rb, unsigned size, uint64_t* seq = nullptr, unsigned chunk = 0,
                        rec_end end = rec_end::Commit, uint64_t* time = nullptr) {
    /* Per call: a nested writer must not scribble over ours. */
    uint64_t small[64];
    std::vector<uint64_t> large;
    uint64_t* body = small;
    size_t words;
    kring_output_handle h;
    uint64_t t;
    int err;

    /*
     * The sequence number is known only after begin: stamp the record
     * with the time of the next one (a nested writer may take that one
     * first; *@time tells which time was passed).
     */
    t = time_of((uint64_t)local64_read(&rb->seq));
    if (time)
        *time = t;
    if (end == rec_end::OneCall)
        return write_one_call(rb, size, seq, t);
    err = kring_output_begin(&h, rb, size, t);
    if (seq)
        *seq = h.seq;
    if (err)
        return err;
    kring_output_header(&h, kTestType, 0);
    if (h.rec_size <= 8)
        goto out;
    words = (h.rec_size - 8) / 8;
    if (words > 64) {
        large.resize(words);
        body = large.data();
    }
    body[0] = h.seq;
    for (size_t j = 1; j < words; j++)
        body[j] = word(h.seq, j);
    if (end == rec_end::Partial) {
        kring_output_copy(&h, body, 8);
    } else if (!chunk) {
        kring_output_copy(&h, body, (unsigned)words * 8);
    } else {
        const char* p = reinterpret_cast<const char*>(body);
        unsigned left = (unsigned)words * 8;

        while (left) {
            unsigned n = std::min(left, chunk);

            kring_output_copy(&h, p, n);
            p += n;
            left -= n;
        }
    }
out:
    if (end == rec_end::Discard)
        kring_output_discard(&h);
    else
        kring_output_end(&h);
    return 0;
}

/*
 * write_record() in place: begin, then the whole record (header, seq,
 * words) stored through kring_output_ptr(). Returns begin's result, or
 * -EFAULT (the record committed through kring_output_copy() instead) when
 * kring_output_ptr() gave no address.
 */
inline int write_record_in_place(kring_ring* rb, unsigned size, uint64_t* seq = nullptr) {
    kring_output_handle h;
    uint64_t t = time_of((uint64_t)local64_read(&rb->seq));
    int err = kring_output_begin(&h, rb, size, t);

    if (seq)
        *seq = h.seq;
    if (err)
        return err;
    std::vector<uint64_t> rec(h.rec_size / 8);
    kring_record_header hdr = {kTestType, 0, static_cast<uint16_t>(h.rec_size)};
    memcpy(rec.data(), &hdr, sizeof(hdr));
    if (rec.size() > 1)
        rec[1] = h.seq;
    for (size_t j = 2; j < rec.size(); j++)
        rec[j] = word(h.seq, j - 1);
    void* p = kring_output_ptr(&h);
    if (!p) {
        kring_output_copy(&h, rec.data(), h.rec_size);
        kring_output_end(&h);
        return -EFAULT;
    }
    EXPECT_EQ(h.rem, 0u);
    memcpy(p, rec.data(), rec.size() * 8);
    kring_output_end(&h);
    return 0;
}

struct tally {
    uint64_t records = 0; /* test records read */
    uint64_t bare = 0;    /* header-only test records */
    uint64_t pads = 0;
    uint64_t lost = 0;          /* sum of LOST records' counts */
    std::vector<uint64_t> seqs; /* test records' seqs, in ring order */
    std::vector<uint64_t> pad_seqs;
    std::vector<kring_lost_record> losts;
    bool partial_zero = false; /* test records written rec_end::Partial */
};

/*
 * Check the record at @pos and add it to @t. Returns its size, or 0 (with
 * a test failure) when it is malformed.
 */
inline unsigned check_record(const host_ring& r, uint64_t pos, tally& t, uint64_t limit) {
    kring_record_header hdr;

    r.read(pos, &hdr, sizeof(hdr));
    if (hdr.size < 8 || hdr.size % 8 || hdr.size > limit) {
        ADD_FAILURE() << "bad record size " << hdr.size << " at " << pos << " (limit " << limit
                      << ")";
        return 0;
    }
    switch (hdr.type) {
        case kTestType: {
            std::vector<uint64_t> body((hdr.size - 8) / 8);

            EXPECT_EQ(hdr.misc, 0);
            t.records++;
            if (body.empty()) {
                t.bare++;
                break;
            }
            r.read(pos + 8, body.data(), body.size() * 8);
            t.seqs.push_back(body[0]);
            for (size_t j = 1; j < body.size(); j++) {
                uint64_t want = t.partial_zero ? 0 : word(body[0], j);

                if (body[j] != want) {
                    ADD_FAILURE() << "record seq " << body[0] << " word " << j << " is " << body[j]
                                  << " at " << pos;
                    return 0;
                }
            }
            break;
        }
        case KRING_RECORD_PAD:
            t.pads++;
            if (hdr.size >= 16) {
                uint64_t s;

                r.read(pos + 8, &s, 8);
                t.pad_seqs.push_back(s);
            }
            break;
        case KRING_RECORD_LOST: {
            kring_lost_record l;

            if (hdr.size != sizeof(l)) {
                ADD_FAILURE() << "LOST of size " << hdr.size;
                return 0;
            }
            r.read(pos, &l, sizeof(l));
            EXPECT_EQ(l.id, r.rb.id);
            EXPECT_GT(l.lost, 0u);
            EXPECT_LE(l.first_seq, l.last_seq);
            EXPECT_LE(l.first_time, l.last_time);
            t.lost += l.lost;
            t.losts.push_back(l);
            break;
        }
        default:
            ADD_FAILURE() << "unknown record type " << hdr.type << " at " << pos;
            return 0;
    }
    return hdr.size;
}

/*
 * Forward consumer: read every record between data_tail and data_head
 * (acquire, C), then release the space (store-release, D) if @release.
 */
inline bool consume(host_ring& r, tally& t, bool release = true) {
    uint64_t tail = r.tail(), head = r.head();

    if (head - tail > r.size()) {
        ADD_FAILURE() << "head " << head << " more than a ring ahead of tail " << tail;
        return false;
    }
    while (tail != head) {
        unsigned n = check_record(r, tail, t, head - tail);

        if (!n)
            return false;
        tail += n;
    }
    if (release)
        r.set_tail(tail);
    return true;
}

/*
 * Backward reader (perf's overwrite_rb_find_range()): walk from data_head
 * towards older records until a never-written header or the end of the
 * data area.
 */
inline bool walk_backward(host_ring& r, tally& t) {
    uint64_t head = r.head(), pos = head;

    while (pos - head < r.size()) {
        kring_record_header hdr;

        r.read(pos, &hdr, sizeof(hdr));
        if (!hdr.size)
            break;
        if (pos - head + hdr.size > r.size())
            break; /* overwritten at its end */
        if (!check_record(r, pos, t, r.size() - (pos - head)))
            return false;
        pos += hdr.size;
    }
    return true;
}

/* Every seq the test produced, and what happened to it. */
struct record_ledger {
    std::vector<uint64_t> written, discarded;
    std::vector<std::pair<uint64_t, uint64_t>> lost; /* seq, time */

    void note(int rc, uint64_t seq, rec_end end, uint64_t time) {
        if (rc)
            lost.emplace_back(seq, time);
        else if (end == rec_end::Discard)
            discarded.push_back(seq);
        else
            written.push_back(seq);
    }
};

/*
 * Exact accounting: the consumer saw every written seq once, every
 * discarded seq as a PAD, and LOST records whose counts add up to the lost
 * seqs, each of which a LOST range (and its time span) covers.
 */
inline void check_ledger(const record_ledger& l, const tally& t) {
    std::vector<uint64_t> seen = t.seqs, want = l.written;

    std::sort(seen.begin(), seen.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(seen, want);
    seen = t.pad_seqs;
    want = l.discarded;
    std::sort(seen.begin(), seen.end());
    std::sort(want.begin(), want.end());
    EXPECT_EQ(seen, want);
    EXPECT_EQ(t.lost, l.lost.size());
    for (auto [s, tm] : l.lost) {
        bool covered = false;

        for (const auto& lr : t.losts)
            if (lr.first_seq <= s && s <= lr.last_seq && lr.first_time <= tm && tm <= lr.last_time)
                covered = true;
        EXPECT_TRUE(covered) << "lost seq " << s << " in no LOST range";
    }
}

}  // namespace kt
