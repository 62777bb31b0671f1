// libkring: the memory-ordering helpers of the ring protocols, in one place.
//
// Every access libkring makes to a field the kernel reads or writes
// concurrently goes through one of these functions. Each names the kernel
// barrier it pairs with (perf ring-buffer documentation, section 2.3, and
// uapi/linux/kring.h):
//
//	kernel (producer)                 consumer (libkring)
//	READ data_tail      (A: ctrl dep) load_head()      (C: acquire)
//	write record                      read records
//	smp_wmb()           (B)           store_tail()     (D: release)
//	WRITE data_head                   -- next batch --
//
//	A pairs with D: the kernel does not overwrite bytes the consumer is
//	still reading. B pairs with C: the consumer sees the record bytes the
//	head it loaded covers.
//
//	kernel (wake-up)                  consumer (about to sleep)
//	STORE data_head                   arm_need_wakeup(): STORE need_wakeup = 1
//	smp_mb()            (E)           smp_mb()                    (F)
//	LOAD need_wakeup                  LOAD data_head; sleep only if unchanged
//
//	E pairs with F: either the kernel sees need_wakeup and wakes the
//	consumer, or the consumer sees the new head and does not sleep.
//
// The AUX area follows the same protocol with aux_head/aux_tail: the AUX
// producer checks aux_tail (A) before writing, and publishes aux_head after
// smp_wmb() (B).
#pragma once

#include <atomic>
#include <cstdint>

#include <linux/types.h>

namespace kring::barrier {

// The control page's fields are __u64 (unsigned long long).
using u64 = __u64;

namespace detail {
inline std::atomic_ref<u64> ref(const u64& x) noexcept {
    return std::atomic_ref<u64>(const_cast<u64&>(x));
}
}  // namespace detail

// (C) Load-acquire of data_head / aux_head. Pairs with the kernel's
// smp_wmb() (B) before its store of the head: the record bytes below the
// returned head are visible after this load.
inline std::uint64_t load_head(const u64& head) noexcept {
    return detail::ref(head).load(std::memory_order_acquire);
}

// (D) Store-release of data_tail / aux_tail. Pairs with the kernel's
// control dependency on its load of the tail (A): every read of the
// released bytes happens before the kernel may write over them.
inline void store_tail(u64& tail, u64 value) noexcept {
    detail::ref(tail).store(value, std::memory_order_release);
}

// A field only the consumer writes (data_tail, aux_tail) read back, or a
// kernel figure read after load_head() ordered it (relaxed, 64-bit,
// untorn). The figures are stored by the kernel before B, so after C they
// are at least as new as the records below the head.
inline std::uint64_t load_relaxed(const u64& x) noexcept {
    return detail::ref(x).load(std::memory_order_relaxed);
}

// Set-up stores the kernel reads only after a later system call (mmap of
// the AUX area reads aux_offset/aux_size): no ordering needed, but untorn.
inline void store_relaxed(u64& x, u64 value) noexcept {
    detail::ref(x).store(value, std::memory_order_relaxed);
}

// A 32-bit field written once by the kernel (the control page's size).
inline std::uint32_t load_relaxed32(const __u32& x) noexcept {
    return std::atomic_ref<__u32>(const_cast<__u32&>(x)).load(std::memory_order_relaxed);
}

// (F) Store need_wakeup = @value and, when arming (@value != 0), a full
// barrier before the caller re-loads data_head. Pairs with the kernel's
// smp_mb() (E) between its data_head store and its need_wakeup load.
inline void arm_need_wakeup(u64& need_wakeup, u64 value = 1) noexcept {
    detail::ref(need_wakeup).store(value, std::memory_order_relaxed);
    if (value)
        std::atomic_thread_fence(std::memory_order_seq_cst);  // F, pairs with E
}

// The timestamp floor of a buffer, loaded with acquire BEFORE the caller
// loads data_head (C): the kernel raises the floor only after the head that
// covers every record below it was published (its store-release of the
// floor is ordered after B/the head store), so "floor f loaded, then the
// head shows no record" means no record with a time below f can appear.
inline std::uint64_t load_floor(const u64& floor) noexcept {
    return detail::ref(floor).load(std::memory_order_acquire);
}

}  // namespace kring::barrier
