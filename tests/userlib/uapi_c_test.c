/* The uapi header compiles as C (this file) and as C++ (uapi_cxx_test.cpp). */
#include <stddef.h>

#include <linux/kring.h>
#include <linux/kring_test.h>

_Static_assert(sizeof(struct kring_abi_info) == 56, "kring_abi_info size");
_Static_assert(offsetof(struct kring_abi_info, features) == 8, "features offset");
_Static_assert(offsetof(struct kring_abi_info, page_size) == 16, "page_size offset");

int kring_uapi_c_abi_info_size(void);
int kring_uapi_c_abi_info_size(void)
{
	return (int)sizeof(struct kring_abi_info);
}

/* The attr is versioned by size: the first published layout is fixed. */
_Static_assert(sizeof(struct kring_attr) == KRING_ATTR_SIZE_VER0, "kring_attr size");
_Static_assert(offsetof(struct kring_attr, config) == 40, "config offset");
_Static_assert(offsetof(struct kring_attr, clockid) == 72, "clockid offset");
_Static_assert(offsetof(struct kring_attr, reserved) == 80, "reserved offset");

/*
 * The stats are versioned by size: each published size ends at the field
 * it added, and the AUX figures sit where reserved[0..3] of the first
 * version were (KRING_STATS_AUX_BYTES .. _CHUNK_ORDER indexed them).
 */
_Static_assert(sizeof(struct kring_stats) == KRING_STATS_SIZE_VER2, "kring_stats size");
_Static_assert(offsetof(struct kring_stats, nested) == 64, "nested offset");
_Static_assert(offsetof(struct kring_stats, aux_bytes) == 72, "aux_bytes offset");
_Static_assert(offsetof(struct kring_stats, aux_records) == 80, "aux_records offset");
_Static_assert(offsetof(struct kring_stats, aux_truncated) == 88, "aux_truncated offset");
_Static_assert(offsetof(struct kring_stats, aux_chunk_order) == 96, "aux_chunk_order offset");
_Static_assert(offsetof(struct kring_stats, throttled) == KRING_STATS_SIZE_VER0, "throttled offset");
_Static_assert(offsetof(struct kring_stats, sample_type) == KRING_STATS_SIZE_VER1,
	       "sample_type offset");

/* Records: 8-byte aligned, at most KRING_RECORD_MAX_SIZE, RAW padded. */
_Static_assert(KRING_RECORD_MAX_SIZE == 65528, "largest record");
_Static_assert(KRING_RECORD_MAX_SIZE % KRING_RECORD_ALIGN == 0, "largest record aligned");
_Static_assert(KRING_RAW_PADDED(0) == 4 && KRING_RAW_PADDED(4) == 4 &&
	       KRING_RAW_PADDED(5) == 12 && KRING_RAW_PADDED(12) == 12, "RAW padding");
/* 64 bits wide for a 64-bit size (a 32-bit mask once cut it to 4 bytes). */
_Static_assert(KRING_RAW_PADDED(0xFFFFFFFDULL) == 0x100000004ULL, "RAW padding, wide");
_Static_assert(KRING_SAMPLE_SEQ == 1ULL << 63, "SEQ is sample_type's top bit");

/* Deprecated names keep their 1.0 values, frozen (docs/ARCHITECTURE.md). */
_Static_assert(KRING_ATTR_F_ALL == 0x3ULL, "KRING_ATTR_F_ALL frozen at 1.0");
_Static_assert(KRING_ATTR_F_CAPTURE_ALL == 0x300ULL, "KRING_ATTR_F_CAPTURE_ALL frozen at 1.0");
_Static_assert(KRING_SAMPLE_SUPPORTED == 0x80000000000105c7ULL,
	       "KRING_SAMPLE_SUPPORTED frozen at 1.0");
_Static_assert(KRING_STATS_AUX_BYTES == 0 && KRING_STATS_AUX_RECORDS == 1 &&
	       KRING_STATS_AUX_TRUNCATED == 2 && KRING_STATS_AUX_CHUNK_ORDER == 3,
	       "KRING_STATS_AUX_* frozen at 1.0");
_Static_assert(offsetof(struct kring_stats, aux_bytes) + 8 * KRING_STATS_AUX_CHUNK_ORDER ==
	       offsetof(struct kring_stats, aux_chunk_order), "AUX indexes from aux_bytes");

/* AUX records: perf's PERF_RECORD_AUX and ITRACE_START bodies first. */
_Static_assert(offsetof(struct kring_aux_record, aux_offset) == 8, "aux_offset offset");
_Static_assert(offsetof(struct kring_aux_record, aux_size) == 16, "aux_size offset");
_Static_assert(offsetof(struct kring_aux_record, flags) == 24, "aux flags offset");
_Static_assert(sizeof(struct kring_aux_record) == 48, "kring_aux_record size");
_Static_assert(offsetof(struct kring_itrace_start_record, tid) == 12, "itrace tid offset");
_Static_assert(sizeof(struct kring_itrace_start_record) == 32, "itrace_start size");

/* Capture sources: RAW payloads of the sched and timer sources. */
_Static_assert(sizeof(struct kring_sched_raw) == 72, "kring_sched_raw size");
_Static_assert(offsetof(struct kring_sched_raw, cpu) == 4, "sched cpu offset");
_Static_assert(offsetof(struct kring_sched_raw, prev_state) == 32, "prev_state offset");
_Static_assert(offsetof(struct kring_sched_raw, prev_comm) == 40, "prev_comm offset");
_Static_assert(offsetof(struct kring_sched_raw, next_comm) == 56, "next_comm offset");
_Static_assert(sizeof(struct kring_timer_raw) == 16, "kring_timer_raw size");
_Static_assert(offsetof(struct kring_timer_raw, overruns) == 8, "overruns offset");
