// SPDX-License-Identifier: GPL-2.0
/*
 * The uapi control page and records against perf's: every field a perf
 * consumer reads sits where perf puts it, with perf's numbers.
 */
#include <cstddef>

#include <gtest/gtest.h>
#include <linux/perf_event.h>
#include <linux/kring.h>

extern "C" int kring_uapi_c_ctl_size(void);

namespace {

#define EXPECT_SAME_OFFSET(field)                                     \
    EXPECT_EQ(offsetof(struct kring_ctl_page, field),                 \
              offsetof(struct perf_event_mmap_page, field))           \
        << #field;                                                    \
    EXPECT_EQ(sizeof(((struct kring_ctl_page*)nullptr)->field),       \
              sizeof(((struct perf_event_mmap_page*)nullptr)->field)) \
        << #field

TEST(UapiLayout, CtlPageMatchesPerfMmapPage) {
    EXPECT_SAME_OFFSET(version);
    EXPECT_SAME_OFFSET(compat_version);
    EXPECT_SAME_OFFSET(lock);
    EXPECT_SAME_OFFSET(index);
    EXPECT_SAME_OFFSET(offset);
    EXPECT_SAME_OFFSET(time_enabled);
    EXPECT_SAME_OFFSET(time_running);
    EXPECT_SAME_OFFSET(capabilities);
    EXPECT_SAME_OFFSET(pmc_width);
    EXPECT_SAME_OFFSET(time_shift);
    EXPECT_SAME_OFFSET(time_mult);
    EXPECT_SAME_OFFSET(time_offset);
    EXPECT_SAME_OFFSET(time_zero);
    EXPECT_SAME_OFFSET(size);
    EXPECT_SAME_OFFSET(__reserved_1);
    EXPECT_SAME_OFFSET(time_cycles);
    EXPECT_SAME_OFFSET(time_mask);
    EXPECT_SAME_OFFSET(data_head);
    EXPECT_SAME_OFFSET(data_tail);
    EXPECT_SAME_OFFSET(data_offset);
    EXPECT_SAME_OFFSET(data_size);
    EXPECT_SAME_OFFSET(aux_head);
    EXPECT_SAME_OFFSET(aux_tail);
    EXPECT_SAME_OFFSET(aux_offset);
    EXPECT_SAME_OFFSET(aux_size);
    EXPECT_EQ(sizeof(struct kring_ctl_page), sizeof(struct perf_event_mmap_page));
    EXPECT_EQ(sizeof(struct kring_ctl_page), 1088u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, data_head), 1024u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, aux_size), 1080u);
    /* The C compiler agrees with the C++ one. */
    EXPECT_EQ((size_t)kring_uapi_c_ctl_size(), sizeof(struct kring_ctl_page));
}

TEST(UapiLayout, LiveFiguresInPerfsReservedSpace) {
    size_t res = offsetof(struct perf_event_mmap_page, __reserved);

    EXPECT_EQ(res, 96u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, records_written), 96u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, lost_no_space), 104u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, lost_too_big), 112u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, lost_paused), 120u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, lost_overwritten), 128u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, wakeups), 136u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, flags), 144u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, need_wakeup), 152u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, timestamp_floor), 160u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, records_discarded), 168u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, wakeup_time), (size_t)KRING_CTL_SIZE_VER1);
    EXPECT_EQ(offsetof(struct kring_ctl_page, wakeup_watermark), 184u);
    EXPECT_EQ(offsetof(struct kring_ctl_page, __reserved_kring), (size_t)KRING_CTL_SIZE_VER2);
    EXPECT_EQ(offsetof(struct kring_ctl_page, __reserved) +
                  sizeof(((struct kring_ctl_page*)nullptr)->__reserved),
              1024u);
    /* Every live figure is a naturally aligned __u64. */
    for (size_t off = 96; off < KRING_CTL_SIZE_VER2; off += 8)
        EXPECT_EQ(off % 8, 0u);
}

TEST(UapiLayout, CapabilityBitsAreTheBitfieldsOfPerf) {
    struct perf_event_mmap_page pc;

    memset(&pc, 0, sizeof(pc));
    pc.cap_bit0 = 1;
    EXPECT_EQ(pc.capabilities, KRING_CAP_BIT0);
    pc.capabilities = 0;
    pc.cap_bit0_is_deprecated = 1;
    EXPECT_EQ(pc.capabilities, KRING_CAP_BIT0_IS_DEPRECATED);
    pc.capabilities = 0;
    pc.cap_user_rdpmc = 1;
    EXPECT_EQ(pc.capabilities, KRING_CAP_USER_RDPMC);
    pc.capabilities = 0;
    pc.cap_user_time = 1;
    EXPECT_EQ(pc.capabilities, KRING_CAP_USER_TIME);
    pc.capabilities = 0;
    pc.cap_user_time_zero = 1;
    EXPECT_EQ(pc.capabilities, KRING_CAP_USER_TIME_ZERO);
    pc.capabilities = 0;
    pc.cap_user_time_short = 1;
    EXPECT_EQ(pc.capabilities, KRING_CAP_USER_TIME_SHORT);
}

TEST(UapiLayout, RecordHeaderIsPerfs) {
    EXPECT_EQ(sizeof(struct kring_record_header), sizeof(struct perf_event_header));
    EXPECT_EQ(offsetof(struct kring_record_header, type), offsetof(struct perf_event_header, type));
    EXPECT_EQ(offsetof(struct kring_record_header, misc), offsetof(struct perf_event_header, misc));
    EXPECT_EQ(offsetof(struct kring_record_header, size), offsetof(struct perf_event_header, size));
    EXPECT_EQ(KRING_RECORD_LOST, PERF_RECORD_LOST);
    EXPECT_EQ(KRING_RECORD_SAMPLE, PERF_RECORD_SAMPLE);
    EXPECT_EQ(KRING_RECORD_AUX, PERF_RECORD_AUX);
    EXPECT_EQ(KRING_RECORD_ITRACE_START, PERF_RECORD_ITRACE_START);
    EXPECT_GT(KRING_RECORD_KRING_BASE, PERF_RECORD_MAX);
    EXPECT_GE(KRING_RECORD_PAD, KRING_RECORD_KRING_BASE);
}

TEST(UapiLayout, LostRecordStartsWithPerfsBody) {
    /* perf: struct { header; u64 id; u64 lost; } (+ sample_id) */
    EXPECT_EQ(offsetof(struct kring_lost_record, id), 8u);
    EXPECT_EQ(offsetof(struct kring_lost_record, lost), 16u);
    EXPECT_EQ(offsetof(struct kring_lost_record, first_seq), 24u);
    EXPECT_EQ(offsetof(struct kring_lost_record, last_seq), 32u);
    EXPECT_EQ(offsetof(struct kring_lost_record, first_time), 40u);
    EXPECT_EQ(offsetof(struct kring_lost_record, last_time), 48u);
    EXPECT_EQ(sizeof(struct kring_lost_record), 56u);
}

TEST(UapiLayout, SampleBitsArePerfs) {
    EXPECT_EQ(KRING_SAMPLE_IP, (__u64)PERF_SAMPLE_IP);
    EXPECT_EQ(KRING_SAMPLE_TID, (__u64)PERF_SAMPLE_TID);
    EXPECT_EQ(KRING_SAMPLE_TIME, (__u64)PERF_SAMPLE_TIME);
    EXPECT_EQ(KRING_SAMPLE_ID, (__u64)PERF_SAMPLE_ID);
    EXPECT_EQ(KRING_SAMPLE_CPU, (__u64)PERF_SAMPLE_CPU);
    EXPECT_EQ(KRING_SAMPLE_PERIOD, (__u64)PERF_SAMPLE_PERIOD);
    EXPECT_EQ(KRING_SAMPLE_RAW, (__u64)PERF_SAMPLE_RAW);
    EXPECT_EQ(KRING_SAMPLE_IDENTIFIER, (__u64)PERF_SAMPLE_IDENTIFIER);
    /* SEQ is far above every bit perf defines. */
    EXPECT_GT(KRING_SAMPLE_SEQ, (__u64)PERF_SAMPLE_MAX);
    constexpr __u64 perf_bits = KRING_SAMPLE_IP | KRING_SAMPLE_TID | KRING_SAMPLE_TIME |
                                KRING_SAMPLE_ID | KRING_SAMPLE_CPU | KRING_SAMPLE_PERIOD |
                                KRING_SAMPLE_RAW | KRING_SAMPLE_IDENTIFIER;
    EXPECT_EQ(perf_bits & ~((__u64)PERF_SAMPLE_MAX - 1), 0u);
}

TEST(UapiLayout, RecordSizeRulesFitPerfsHeader) {
    struct perf_event_header h;

    /* The largest record is the largest 8-byte multiple a header holds. */
    h.size = (__u16)KRING_RECORD_MAX_SIZE;
    EXPECT_EQ(h.size, KRING_RECORD_MAX_SIZE);
    EXPECT_EQ(KRING_RECORD_MAX_SIZE % KRING_RECORD_ALIGN, 0u);
    EXPECT_GT(KRING_RECORD_MAX_SIZE + KRING_RECORD_ALIGN, 0xffffu);
    /* perf's RAW rule: size + 4 is a multiple of 8, the pad under 8. */
    for (__u32 n = 0; n < 64; n++) {
        __u32 p = KRING_RAW_PADDED(n);

        EXPECT_EQ((p + 4) % 8, 0u) << n;
        EXPECT_GE(p, n) << n;
        EXPECT_LT(p - n, 8u) << n;
    }
}

TEST(UapiLayout, StatsGrowBySize) {
    /* The AUX figures took reserved[0..3] of the first version. */
    EXPECT_EQ(offsetof(struct kring_stats, aux_bytes), 72u);
    EXPECT_EQ(offsetof(struct kring_stats, aux_chunk_order), 96u);
    EXPECT_EQ(offsetof(struct kring_stats, throttled) + 8, (size_t)KRING_STATS_SIZE_VER1);
    EXPECT_EQ(offsetof(struct kring_stats, sample_type) + 8, (size_t)KRING_STATS_SIZE_VER2);
    EXPECT_EQ(sizeof(struct kring_stats), (size_t)KRING_STATS_SIZE_VER2);
    EXPECT_EQ(_IOC_SIZE(KRING_IOC_STATS), sizeof(struct kring_stats));
}

}  // namespace
