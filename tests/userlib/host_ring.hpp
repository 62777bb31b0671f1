// A data ring written by the host build of kmod/ring.c (tests/host) and laid
// out as the module maps it: one control page and, right after it, a
// contiguous data area, either mirrored (the data pages mapped twice in a
// row, through a memfd) or followed by a PROT_NONE guard page, so that a
// reader that strays beyond the area faults.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "kring/record.hpp"
#include "kring/ring.hpp"
#include "ring_test_util.hpp"

namespace kt {

using kt::kPage;

class host_ring {
public:
    host_ring(unsigned nr_pages, bool mirrored, unsigned flags = 0, std::uint64_t id = 7)
        : pages_(nr_pages), mirrored_(mirrored) {
        const std::size_t size = std::size_t(nr_pages) * kPage;
        fd_ = ::memfd_create("kring-test-ring", MFD_CLOEXEC);
        if (fd_ < 0 || ::ftruncate(fd_, off_t(size)))
            std::abort();
        // Reserve control page + area + area (mirror) or + guard page.
        map_len_ = kPage + (mirrored ? 2 * size : size + kPage);
        map_ = static_cast<char*>(
            ::mmap(nullptr, map_len_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (map_ == MAP_FAILED)
            std::abort();
        ctl_ = static_cast<kring_ctl_page*>(::mmap(map_, kPage, PROT_READ | PROT_WRITE,
                                                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
        res_ = map_ + kPage;
        if (ctl_ == MAP_FAILED || ::mmap(res_, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                                         fd_, 0) == MAP_FAILED)
            std::abort();
        if (mirrored && ::mmap(res_ + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                               fd_, 0) == MAP_FAILED)
            std::abort();
        std::vector<void*> addrs(nr_pages);
        for (unsigned i = 0; i < nr_pages; i++)
            addrs[i] = res_ + std::size_t(i) * kPage;
        addrs_ = addrs;
        if (kring_ring_init(&rb, ctl_, addrs_.data(), nr_pages, flags, id))
            std::abort();
    }
    ~host_ring() {
        ::munmap(map_, map_len_);
        ::close(fd_);
    }
    host_ring(const host_ring&) = delete;
    host_ring& operator=(const host_ring&) = delete;

    kring::ring_view view() const {
        kring::ring_view v;
        v.ctl = ctl_;
        v.data = reinterpret_cast<const std::byte*>(res_);
        v.data_size = std::uint64_t(pages_) * kPage;
        v.mirrored = mirrored_;
        v.overwrite = rb.flags & KRING_RING_OVERWRITE;
        v.kind = kring::ring_kind::kring;
        return v;
    }
    std::uint64_t size() const { return std::uint64_t(pages_) * kPage; }
    // Move an empty, quiet ring to position @pos (as if read up to there).
    void seek(std::uint64_t pos) {
        local_set(&rb.head, long(pos));
        ctl_->data_head = pos;
        ctl_->data_tail = pos;
        local_set(&rb.wakeup_pos, long(pos));
    }
    kring_ctl_page* ctl() const { return ctl_; }
    char* data() const { return res_; }
    // The mapping as perf's tools see theirs: the control page, the data.
    void* base() const { return map_; }

    kring_ring rb;

private:
    unsigned pages_;
    bool mirrored_;
    kring_ctl_page* ctl_;
    int fd_;
    char* map_;  // the whole mapping: control page, then the data area
    std::size_t map_len_;
    char* res_;  // the data area
    std::vector<void*> addrs_;
};

// Check a test record (kt::write_record's format) word by word.
inline bool check_test_record(const kring::record& r, std::uint64_t& seq_out) {
    if (r.type() != kt::kTestType || r.size() < 16)
        return false;
    std::uint64_t seq;
    std::memcpy(&seq, r.bytes().data() + 8, 8);
    for (std::size_t j = 1; 8 + 8 * j < r.size(); j++) {
        std::uint64_t w;
        std::memcpy(&w, r.bytes().data() + 8 + 8 * j, 8);
        if (w != kt::word(seq, j))
            return false;
    }
    seq_out = seq;
    return true;
}

// Write a SAMPLE record with sample_type TIME | SEQ (plus RAW when
// @raw_len) at time @t through the ring core. Returns begin's result.
inline int write_sample(kring_ring* rb, std::uint64_t t, std::uint32_t raw_len = 0) {
    kring_output_handle h;
    unsigned size = 8 + 8 + 8;
    unsigned raw_padded = 0;
    if (raw_len)
        raw_padded = (raw_len + 4 + 7) / 8 * 8;
    size += raw_padded;
    int err = kring_output_begin(&h, rb, size, t);
    if (err)
        return err;
    kring_output_header(&h, KRING_RECORD_SAMPLE, 0);
    kring_output_copy(&h, &t, 8);
    if (raw_len) {
        std::vector<std::uint8_t> raw(raw_padded, 0);
        std::memcpy(raw.data(), &raw_len, 4);
        for (std::uint32_t i = 0; i < raw_len; i++)
            raw[4 + i] = std::uint8_t(i ^ h.seq);
        kring_output_copy(&h, raw.data(), raw_padded);
    }
    std::uint64_t seq = h.seq;
    kring_output_copy(&h, &seq, 8);
    kring_output_end(&h);
    return 0;
}

}  // namespace kt
