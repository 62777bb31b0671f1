// In the guest: another module writes into a kring channel through the
// exported producer API (kmod/examples/kring_example.c).
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "raw_ring.hpp"

namespace {

constexpr std::uint32_t example_record = KRING_RECORD_KRING_BASE + 0x100;
const char* const example_ko = "/kring/kring_example.ko";

bool have_example() { return ::access(example_ko, R_OK) == 0; }

// Loads kring_example.ko with @params (it writes into the channel they
// name while it loads): "" or what failed.
std::string load_example(const std::string& params) {
    int mod = ::open(example_ko, O_RDONLY | O_CLOEXEC);
    if (mod < 0)
        return std::string("open ") + example_ko + ": " + std::strerror(errno);
    std::string err;
    if (::syscall(SYS_finit_module, mod, params.c_str(), 0))
        err = "load kring_example " + params + ": " + std::strerror(errno);
    ::close(mod);
    return err;
}

// "" or why kring_example could not be unloaded.
std::string unload_example() {
    if (::syscall(SYS_delete_module, "kring_example", O_NONBLOCK))
        return std::string("unload kring_example: ") + std::strerror(errno);
    return "";
}

// A channel with @type's fields, 2^@order data pages mapped, enabled when
// @enable; its id goes to @id. 0 or the errno of the step that failed.
int open_channel(kt::raw_channel& ch, std::uint64_t type, unsigned order, bool enable,
                 std::uint64_t& id) {
    if (int e = ch.open_dev())
        return e;
    if (int e = ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1, type)))
        return e;
    if (int e = ch.map_ring(order, true, false))
        return e;
    if (enable)
        if (int e = ch.ioctl0(KRING_IOC_ENABLE))
            return e;
    return ch.ioctl_arg(KRING_IOC_ID, &id);
}

TEST(ProducerApi, ExampleModuleWritesIntoChannel) {
    if (!have_example())
        GTEST_SKIP() << "kring_example.ko is not in this guest";
    kt::raw_channel ch;
    const std::uint64_t type = KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_RAW;
    std::uint64_t id = 0;
    ASSERT_EQ(open_channel(ch, type, 4, true, id), 0);
    // What the producer API writes: the attr's fields and SEQ.
    const std::uint64_t layout = ch.sample_type();
    EXPECT_EQ(layout, type | KRING_SAMPLE_SEQ);

    const unsigned count = 300;
    std::string params = "channel=" + std::to_string(id) + " count=" + std::to_string(count);
    ASSERT_EQ(load_example(params), "");

    unsigned samples = 0, own = 0, bad = 0;
    std::uint64_t next_seq = 0, total = 0;
    ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
        if (h.type == KRING_RECORD_SAMPLE) {
            kt::sample s;
            std::string want = "kring example record " + std::to_string(samples);
            // kring_channel_write_raw() takes the ids from the context:
            // this thread loaded the module.
            if (!kt::parse_sample(rec, layout, s) || s.seq != next_seq ||
                s.pid != std::uint32_t(::getpid()) || s.tid != std::uint32_t(::gettid()) ||
                s.raw_size < want.size() + 1 ||
                std::string(reinterpret_cast<const char*>(s.raw)) != want)
                bad++;
            next_seq = s.seq + 1;
            samples++;
        } else if (h.type == example_record && h.size == 16 && h.misc == (own == 0 ? 1 : 0)) {
            std::uint64_t t = 0;
            std::memcpy(&t, rec + 8, 8);
            total += t;
            own++;
        } else {
            bad++;
        }
    });
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(samples, count);
    // kring_channel_write()'s (misc 1), then the handle API's (misc 0).
    EXPECT_EQ(own, 2u);
    EXPECT_EQ(total, 2 * count);
    kring_stats st = ch.stats();
    EXPECT_EQ(st.produced, count + 2);
    EXPECT_EQ(st.written, count + 2);
    // It described its record type (kring_channel_add_format()): one
    // block, as ftrace would print it.
    kring_formats q{};
    q.size = sizeof(q);
    ASSERT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), 0);
    EXPECT_EQ(q.count, 1u);
    std::string text(q.len, '\0');
    q.buf = reinterpret_cast<std::uintptr_t>(text.data());
    ASSERT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), 0);
    EXPECT_EQ(text, "name: kring_example\nID: " + std::to_string(example_record) +
                        "\nformat:\n\tfield:u64 total;\toffset:0;\tsize:8;\tsigned:0;\n\n"
                        "print fmt: \"total=%llu\", REC->total\n" +
                        std::string(1, '\0'));
    EXPECT_EQ(unload_example(), "");
    // Loaded again into the same channel: the description is there
    // already (-EEXIST, which the example takes as fine), still one.
    ASSERT_EQ(load_example("channel=" + std::to_string(id) + " count=1"), "");
    q = {};
    q.size = sizeof(q);
    ASSERT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), 0);
    EXPECT_EQ(q.count, 1u);
    EXPECT_EQ(unload_example(), "");
}

// A producer's RAW size that underflowed (raw_size = len - hdr with
// len < hdr: 2^32 - 8 here) is refused before any arithmetic: no record, no
// byte written, each one lost as too big and reported in a LOST record
// before the next record that fits. Before the bound, 2^32 - 8 wrapped to a
// 32-byte record and kring_output_sample() copied 4 GiB into it (an oops in
// memcpy).
TEST(ProducerApi, RawSizeUnderflowIsRefused) {
    if (!have_example())
        GTEST_SKIP() << "kring_example.ko is not in this guest";
    kt::raw_channel ch;
    const std::uint64_t type = KRING_SAMPLE_TID | KRING_SAMPLE_TIME | KRING_SAMPLE_RAW;
    std::uint64_t id = 0;
    ASSERT_EQ(open_channel(ch, type, 4, true, id), 0);

    // "kring example record 0".."9" are 23 bytes with their NUL: 23 - 31 = -8.
    const unsigned count = 10;
    std::string params =
        "channel=" + std::to_string(id) + " count=" + std::to_string(count) + " raw_trim=31";
    ASSERT_EQ(load_example(params), "");

    unsigned samples = 0, own = 0, losts = 0, bad = 0;
    std::uint64_t lost = 0, total = 0;
    ch.consume([&](const kring_record_header& h, const std::uint8_t* rec) {
        if (h.type == KRING_RECORD_LOST && h.size == sizeof(kring_lost_record)) {
            kring_lost_record l;
            std::memcpy(&l, rec, sizeof(l));
            lost += l.lost;
            losts++;
        } else if (h.type == example_record && h.size == 16) {
            std::uint64_t t = 0;
            std::memcpy(&t, rec + 8, 8);
            total |= t;
            own++;
        } else if (h.type == KRING_RECORD_SAMPLE) {
            samples++;
        } else {
            bad++;
        }
    });
    EXPECT_EQ(bad, 0u);
    EXPECT_EQ(samples, 0u);
    EXPECT_EQ(losts, 1u);
    EXPECT_EQ(lost, count);
    EXPECT_EQ(own, 2u);
    EXPECT_EQ(total, 0u) << "records the example module saw accepted";
    kring_stats st = ch.stats();
    std::printf("produced %llu written %llu lost_too_big %llu\n", (unsigned long long)st.produced,
                (unsigned long long)st.written, (unsigned long long)st.lost_too_big);
    EXPECT_EQ(st.produced, count + 2);
    EXPECT_EQ(st.written, 2u);
    EXPECT_EQ(st.lost_too_big, count);
    EXPECT_EQ(unload_example(), "");
}

TEST(ProducerApi, DisabledChannelTakesNothing) {
    if (!have_example())
        GTEST_SKIP() << "kring_example.ko is not in this guest";
    kt::raw_channel ch;
    std::uint64_t id = 0;
    ASSERT_EQ(open_channel(ch, KRING_SAMPLE_RAW, 1, false, id), 0);
    std::string params = "channel=" + std::to_string(id) + " count=10";
    ASSERT_EQ(load_example(params), "");
    EXPECT_EQ(ch.head(), 0u);
    EXPECT_EQ(ch.stats().produced, 0u);
    EXPECT_EQ(unload_example(), "");
}

}  // namespace
