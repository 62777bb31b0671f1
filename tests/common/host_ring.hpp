// SPDX-License-Identifier: GPL-2.0
/*
 * The one host ring of the tests: kmod/ring.c built for the host (the
 * shim of tests/host) writing into pages laid out in one of three ways:
 *
 *  - scattered (the default): each data page alone between two PROT_NONE
 *    pages, so that a copy across a page boundary must go through the page
 *    array, and any stray access faults (the ring core's suites);
 *  - mapping::plain: the layout of a mapped channel, the control page and
 *    right after it the data area, followed by a PROT_NONE page (libkring's
 *    suites read it through a ring_view, tests/userlib/ring_views.hpp);
 *  - mapping::mirrored: the same with the data pages mapped twice in a row,
 *    as kring.ko maps a mirrored channel.
 *
 * With the ring core's KRING_RING_MIRRORED flag and no mapping, the data
 * pages are mirrored between guard pages and the control page is a page
 * of its own.
 *
 *	kt::host_ring r(4);                                // ring core suites
 *	kt::host_ring m(4, kt::mapping::mirrored);          // libkring suites
 */
#pragma once

#include <algorithm>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

extern "C" {
#include "ring.h"
#include "test_record.h"
}

/* The shim's function-like macros clash with the C++ library's names. */
#undef min
#undef max
#undef min_t
#undef round_up
#undef ilog2
#undef is_power_of_2
#undef likely
#undef unlikely

namespace kt {

/* The test record format (tests/common/test_record.h, shared with KUnit). */
constexpr uint32_t kTestType = KRING_TEST_RECORD_TYPE;
constexpr unsigned kPage = PAGE_SIZE;
inline uint64_t word(uint64_t seq, uint64_t j) { return kring_test_word(seq, j); }
inline uint64_t time_of(uint64_t seq) { return kring_test_time(seq); }

template <typename T>
inline T load_acquire(T& x) {
    return std::atomic_ref<T>(x).load(std::memory_order_acquire);
}
template <typename T>
inline T load_relaxed(T& x) {
    return std::atomic_ref<T>(x).load(std::memory_order_relaxed);
}
template <typename T>
inline void store_release(T& x, std::type_identity_t<T> v) {
    std::atomic_ref<T>(x).store(v, std::memory_order_release);
}

/*
 * One page of usable memory between two PROT_NONE pages: any access
 * beyond it faults.
 */
class guarded_page {
public:
    guarded_page() {
        map_ = static_cast<char*>(
            mmap(nullptr, 3 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (map_ == MAP_FAILED)
            abort();
        if (mprotect(map_ + kPage, kPage, PROT_READ | PROT_WRITE))
            abort();
    }
    ~guarded_page() { munmap(map_, 3 * kPage); }
    guarded_page(const guarded_page&) = delete;
    guarded_page& operator=(const guarded_page&) = delete;
    void* addr() const { return map_ + kPage; }

private:
    char* map_;
};

/*
 * @nr_pages pages mapped twice in a row (a memfd), as kring.ko maps a
 * channel's data area (vmap()), between two PROT_NONE pages.
 */
class mirrored_area {
public:
    explicit mirrored_area(unsigned nr_pages) : len_(size_t(nr_pages) * kPage) {
        int fd = memfd_create("kring_ring_test", 0);

        map_ = static_cast<char*>(
            mmap(nullptr, 2 * len_ + 2 * kPage, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (fd < 0 || ftruncate(fd, static_cast<off_t>(len_)) || map_ == MAP_FAILED)
            abort();
        for (int i = 0; i < 2; i++)
            if (mmap(map_ + kPage + i * len_, len_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                     fd, 0) == MAP_FAILED)
                abort();
        close(fd);
    }
    ~mirrored_area() { munmap(map_, 2 * len_ + 2 * kPage); }
    mirrored_area(const mirrored_area&) = delete;
    mirrored_area& operator=(const mirrored_area&) = delete;
    char* addr() const { return map_ + kPage; }

private:
    size_t len_;
    char* map_;
};

// How a mapped ring's pages are laid out (see the top of this file).
enum class mapping { plain, mirrored };
inline mapping mapping_of(bool mirrored) { return mirrored ? mapping::mirrored : mapping::plain; }

class host_ring {
public:
    // Scattered data pages; KRING_RING_MIRRORED in @flags mirrors them.
    // init_rc is kring_ring_init()'s result (the set-up tests check it).
    explicit host_ring(unsigned nr_pages, unsigned flags = 0, uint64_t id = 42)
        : addrs_(nr_pages), pages_(nr_pages), mirrored_(flags & KRING_RING_MIRRORED) {
        ctl_page_ = std::make_unique<guarded_page>();
        if (flags & KRING_RING_MIRRORED) {
            mirror_ = std::make_unique<mirrored_area>(nr_pages);
            for (unsigned i = 0; i < nr_pages; i++)
                addrs_[i] = mirror_->addr() + size_t(i) * kPage;
        } else {
            data_ = std::vector<guarded_page>(nr_pages);
            for (unsigned i = 0; i < nr_pages; i++)
                addrs_[i] = data_[i].addr();
        }
        ctl = static_cast<kring_ctl_page*>(ctl_page_->addr());
        init_rc = kring_ring_init(&rb, ctl, addrs_.data(), nr_pages, flags, id);
    }

    // The layout of a mapped channel: control page, then the data area
    // (mirrored or followed by a PROT_NONE page). Aborts if the ring core
    // refuses the set-up.
    host_ring(unsigned nr_pages, mapping m, unsigned flags = 0, uint64_t id = 7)
        : addrs_(nr_pages), pages_(nr_pages), mirrored_(m == mapping::mirrored) {
        const size_t size = size_t(nr_pages) * kPage;
        fd_ = ::memfd_create("kring-test-ring", MFD_CLOEXEC);
        if (fd_ < 0 || ::ftruncate(fd_, off_t(size)))
            abort();
        // Reserve control page + area + area (mirror) or + guard page.
        map_len_ = kPage + (mirrored_ ? 2 * size : size + kPage);
        map_ = static_cast<char*>(
            ::mmap(nullptr, map_len_, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
        if (map_ == MAP_FAILED)
            abort();
        ctl = static_cast<kring_ctl_page*>(::mmap(map_, kPage, PROT_READ | PROT_WRITE,
                                                  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
        area_ = map_ + kPage;
        if (ctl == MAP_FAILED || ::mmap(area_, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                                        fd_, 0) == MAP_FAILED)
            abort();
        if (mirrored_ && ::mmap(area_ + size, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
                                fd_, 0) == MAP_FAILED)
            abort();
        for (unsigned i = 0; i < nr_pages; i++)
            addrs_[i] = area_ + size_t(i) * kPage;
        init_rc = kring_ring_init(&rb, ctl, addrs_.data(), nr_pages, flags, id);
        if (init_rc)
            abort();
    }

    ~host_ring() {
        if (map_) {
            ::munmap(map_, map_len_);
            ::close(fd_);
        }
    }
    host_ring(const host_ring&) = delete;
    host_ring& operator=(const host_ring&) = delete;

    uint64_t size() const { return uint64_t(pages_) * kPage; }
    unsigned pages() const { return pages_; }
    bool mirrored() const { return mirrored_; }
    uint64_t head() { return load_acquire(ctl->data_head); }
    uint64_t tail() { return load_relaxed(ctl->data_tail); }
    void set_tail(uint64_t t) { store_release(ctl->data_tail, t); }

    // A mapped ring's data area and whole mapping (control page first, as
    // perf's tools see theirs); nullptr for scattered pages.
    char* data() const { return area_; }
    void* base() const { return map_; }

    /* Copy @len bytes at ring position @pos out of the data pages. */
    void read(uint64_t pos, void* dst, size_t len) const {
        char* out = static_cast<char*>(dst);

        while (len) {
            uint64_t off = pos & (kPage - 1);
            size_t n = std::min<size_t>(len, kPage - off);
            const char* src = static_cast<const char*>(addrs_[(pos / kPage) & (addrs_.size() - 1)]);

            memcpy(out, src + off, n);
            out += n;
            pos += n;
            len -= n;
        }
    }
    uint8_t* byte_at(uint64_t pos) const {
        return static_cast<uint8_t*>(addrs_[(pos / kPage) & (addrs_.size() - 1)]) +
               (pos & (kPage - 1));
    }

    /*
     * Move an empty, quiet ring to position @pos, as if the consumer had
     * read everything up to there.
     */
    void seek(uint64_t pos) {
        local_set(&rb.head, (long)pos);
        ctl->data_head = pos;
        ctl->data_tail = pos;
        local_set(&rb.wakeup_pos, (long)pos);
        local_set(&rb.wake_len, 0);
    }

    kring_ring rb;
    kring_ctl_page* ctl;
    int init_rc;

private:
    std::vector<void*> addrs_;
    unsigned pages_;
    bool mirrored_;
    // Scattered pages.
    std::unique_ptr<guarded_page> ctl_page_;
    std::vector<guarded_page> data_;
    std::unique_ptr<mirrored_area> mirror_;
    // A mapping.
    int fd_ = -1;
    char* map_ = nullptr;
    size_t map_len_ = 0;
    char* area_ = nullptr;
};

}  // namespace kt
