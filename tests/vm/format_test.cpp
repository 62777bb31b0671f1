// In the guest: self-describing records. KRING_IOC_GET_FORMATS lists the
// layouts a channel carries in ftrace's event format language: each
// source's RAW data, as the uapi structs lay it out (one check for every
// source), and a producer module's own types (kmod/examples/kring_example.c,
// ProducerApi.*); the ioctl's size negotiation and refusals; libkring's
// channel::formats().
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <map>
#include <regex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "errno_assert.hpp"
#include "kring/channel.hpp"
#include "raw_ring.hpp"
#include "test_util.hpp"

namespace {

struct field {
    std::string type;
    unsigned offset = 0, size = 0, is_signed = 0;
};

struct format {
    std::string name;
    unsigned id = 0;
    std::map<std::string, field> fields;
};

// The blocks of the ioctl's text, each parsed; a block that does not read
// as ftrace's format fails the test.
std::vector<format> parse(const std::string& text, unsigned count) {
    std::vector<format> out;
    const std::regex head(R"(^name: (\w+)\nID: (\d+)\nformat:\n)");
    const std::regex line(
        R"(\tfield:([\w ]+?) (\w+)(\[\d+\])?;\toffset:(\d+);\tsize:(\d+);\tsigned:([01]);\n)");
    for (std::size_t at = 0; at < text.size();) {
        const std::size_t end = text.find('\0', at);
        EXPECT_NE(end, std::string::npos) << "a block without its NUL";
        if (end == std::string::npos)
            break;
        const std::string b = text.substr(at, end - at);
        at = end + 1;
        std::smatch m;
        EXPECT_TRUE(std::regex_search(b, m, head)) << b;
        if (m.empty())
            continue;
        format f;
        f.name = m[1];
        f.id = unsigned(std::stoul(m[2]));
        std::string rest = m.suffix();
        while (std::regex_search(rest, m, line) && m.position(0) == 0) {
            field fd;
            fd.type = std::string(m[1]) + std::string(m[3]);
            fd.offset = unsigned(std::stoul(m[4]));
            fd.size = unsigned(std::stoul(m[5]));
            fd.is_signed = unsigned(std::stoul(m[6]));
            f.fields[m[2]] = fd;
            rest = m.suffix();
        }
        EXPECT_EQ(rest.rfind("\nprint fmt: \"", 0), 0u) << "after the fields: " << rest;
        out.push_back(f);
    }
    EXPECT_EQ(out.size(), count);
    return out;
}

// The formats of @ch through the raw ioctl: size first, then the text.
std::vector<format> formats_of(kt::raw_channel& ch) {
    kring_formats q{};
    q.size = sizeof(q);
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), 0);
    std::string text(q.len, '\x7f');
    const unsigned count = q.count;
    q.buf = reinterpret_cast<std::uintptr_t>(text.data());
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), 0);
    EXPECT_EQ(q.len, text.size());
    EXPECT_EQ(q.count, count);
    return parse(text, count);
}

// Opens @ch as a channel of @source following this thread: 0 or the errno.
int open_own(kt::raw_channel& ch, std::uint32_t source, std::uint64_t type,
             std::uint64_t config0 = 0) {
    if (int e = ch.open_dev())
        return e;
    kring_attr a = kt::make_attr(source, -1, type);
    a.pid = 0;
    a.config[0] = config0;
    return ch.configure(a);
}

// Each source that describes its data, how it is opened here, and the
// uapi struct its one format describes: the struct's size is all the test
// needs of it. The fields come from the struct in the kernel
// (KRING_FORMAT_FIELD(): offsetof(), sizeof_field(), is_signed_type()).
struct declared {
    std::uint32_t source;
    int cpu;  // -1: following this thread
    std::uint64_t sample_type, config0;
    const char* format;
    unsigned id;
    std::size_t size;
};

const declared every_source[] = {
    {KRING_SOURCE_SYNTHETIC, 0, KRING_SAMPLE_RAW, 0, "kring_synthetic", KRING_RECORD_SAMPLE,
     sizeof(kring_synth_payload)},
    {KRING_SOURCE_SCHED, -1, kt::sched_type, 0, "kring_sched", KRING_RECORD_SAMPLE,
     sizeof(kring_sched_raw)},
    {KRING_SOURCE_TIMER, -1, kt::timer_type, 100, "kring_timer", KRING_RECORD_SAMPLE,
     sizeof(kring_timer_raw)},
    // The emulated hardware tracer: the header of its AUX packets.
    {KRING_SOURCE_AUX_TRACER, 0, 0, 0, "kring_aux_packet", KRING_RECORD_AUX,
     sizeof(kring_aux_packet)},
};

// The sources whose records carry no layout of kring's: the event source's
// RAW is a tracepoint's raw record, described by tracefs
// (events/SUBSYS/NAME/format), not by KRING_IOC_GET_FORMATS.
const std::uint32_t without_format[] = {KRING_SOURCE_EVENT};

// Every source's format, as the ioctl serves it, matches its struct: its
// name and ID, and its fields in offset order cover the struct's bytes
// with no gap and no overlap (a member the kernel's table left out leaves
// a gap; a table of another struct ends elsewhere). Every source is in
// the list above or in without_format[].
TEST(Formats, EverySourceMatchesItsStruct) {
    EXPECT_EQ(std::size(every_source) + std::size(without_format),
              std::size_t(KRING_SOURCE_MAX - 1))
        << "a source this test does not know";
    for (const declared& d : every_source) {
        SCOPED_TRACE(d.format);
        kt::raw_channel ch;
        if (d.cpu < 0) {
            ASSERT_EQ(open_own(ch, d.source, d.sample_type, d.config0), 0);
        } else {
            ASSERT_EQ(ch.open_dev(), 0);
            ASSERT_EQ(ch.configure(kt::make_attr(d.source, d.cpu, d.sample_type)), 0);
        }
        const auto f = formats_of(ch);
        ASSERT_EQ(f.size(), 1u);
        EXPECT_EQ(f[0].name, d.format);
        EXPECT_EQ(f[0].id, d.id);
        std::map<unsigned, std::string> by_offset;
        for (const auto& [name, fd] : f[0].fields)
            EXPECT_TRUE(by_offset.emplace(fd.offset, name).second)
                << name << ": a second field there";
        unsigned end = 0;
        for (const auto& [offset, name] : by_offset) {
            EXPECT_EQ(offset, end) << name << ": not where the field before it ends";
            end = offset + f[0].fields.at(name).size;
        }
        EXPECT_EQ(end, d.size) << "where the last field ends";
    }
    // The event source (a software event of this thread, no RAW): none.
    kt::raw_channel ev;
    ASSERT_EQ(ev.open_dev(), 0);
    kring_attr a =
        kt::make_attr(KRING_SOURCE_EVENT, -1, KRING_SAMPLE_TID, KRING_ATTR_F_EXCLUDE_KERNEL);
    a.pid = 0;
    a.config[0] = PERF_TYPE_SOFTWARE;
    a.config[1] = PERF_COUNT_SW_PAGE_FAULTS;
    a.config[2] = 1;
    int e = ev.configure(a);
    if (e == EACCES || e == EPERM)
        return;  // perf_event_paranoid refuses it to this user
    ASSERT_EQ(e, 0);
    EXPECT_EQ(formats_of(ev).size(), 0u);
}

// A producer channel has none until a producer describes its types.
TEST(Formats, ProducerChannelStartsWithNone) {
    kt::raw_channel ch;
    ASSERT_EQ(ch.open_dev(), 0);
    kring_formats q{};
    q.size = sizeof(q);
    q.count = q.len = 77;
    ASSERT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), 0) << "unconfigured";
    EXPECT_EQ(q.count, 0u);
    EXPECT_EQ(q.len, 0u);
    ASSERT_EQ(ch.configure(kt::make_attr(KRING_SOURCE_NONE, -1, KRING_SAMPLE_RAW)), 0);
    EXPECT_EQ(formats_of(ch).size(), 0u);
}

// The size negotiation and what is refused: a short buffer is ENOSPC with
// the sizes filled in and not one byte written; a short or unknown struct,
// a reserved field and a bad address are refused.
TEST(Formats, IoctlContract) {
    kt::raw_channel ch;
    ASSERT_EQ(open_own(ch, KRING_SOURCE_SCHED, kt::sched_type), 0);
    kring_formats q{};
    q.size = sizeof(q);
    ASSERT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), 0);
    const unsigned need = q.len;
    ASSERT_GT(need, 100u);
    std::string buf(need, '\x7f');
    q.buf = reinterpret_cast<std::uintptr_t>(buf.data());
    q.len = need - 1;
    q.count = 0;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), ENOSPC);
    EXPECT_EQ(q.len, need);
    EXPECT_EQ(q.count, 1u);
    EXPECT_EQ(buf, std::string(need, '\x7f')) << "written into a short buffer";

    q = {};
    q.size = KRING_FORMATS_SIZE_VER0 - 1;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), EINVAL) << "short struct";
    q = {};
    q.size = sizeof(q);
    q.reserved = 1;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), EINVAL) << "reserved field";
    q = {};
    q.size = sizeof(q);
    q.len = need;
    q.buf = 0x10;  // never mapped
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &q), EFAULT) << "bad buffer";
    // A larger struct: its unknown bytes must be zero.
    struct {
        kring_formats q;
        std::uint64_t more;
    } big{};
    big.q.size = sizeof(big);
    big.more = 1;
    EXPECT_ERRNO(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &big), E2BIG) << "unknown bytes";
    big.more = 0;
    EXPECT_EQ(ch.ioctl_arg(KRING_IOC_GET_FORMATS, &big), 0);
    EXPECT_EQ(big.q.count, 1u);
    EXPECT_EQ(big.q.size, sizeof(kring_formats)) << "the module's size reported back";
    // A later header's command encodes its larger struct: still this ioctl.
    big = {};
    big.q.size = sizeof(big);
    const unsigned long later =
        _IOC(_IOC_READ | _IOC_WRITE, KRING_IOC_MAGIC, _IOC_NR(KRING_IOC_GET_FORMATS), sizeof(big));
    EXPECT_EQ(ch.ioctl_arg(later, &big), 0);
    EXPECT_EQ(big.q.count, 1u);
}

// libkring's call reads the same blocks.
TEST(Formats, LibkringReadsThem) {
    kring::channel_options o;
    o.source = KRING_SOURCE_TIMER;
    o.sample_type = kt::timer_type;
    o.pid = 0;
    o.config[0] = 100;
    auto ch = kring::channel::open(o);
    ASSERT_TRUE(ch) << ch.error().message();
    auto f = ch->formats();
    ASSERT_TRUE(f) << f.error().message();
    ASSERT_EQ(f->size(), 1u);
    EXPECT_EQ(f->front().rfind("name: kring_timer\nID: 9\nformat:\n", 0), 0u) << f->front();
}

}  // namespace
