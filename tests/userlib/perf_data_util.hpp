// What the tests of the perf.data component share (perf_data_*_test.cpp,
// defined in perf_data_util.cpp): a temporary directory, whole files as
// bytes, the events and features of the test files, every builder's record
// once, and Debian's perf run on a file and its complaints found.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kring/perf_data.hpp"

namespace kt {

namespace pd = kring::perf_data;

inline constexpr std::uint64_t k_clock_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
                                              PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
                                              PERF_SAMPLE_PERIOD;
inline constexpr std::uint64_t k_sched_type =
    PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;

// A directory of its own under the test's temporary directory, removed
// with its files (kept when KRING_KEEP_TMP is set).
class tmpdir {
public:
    tmpdir();
    ~tmpdir();
    tmpdir(const tmpdir&) = delete;
    tmpdir& operator=(const tmpdir&) = delete;
    std::string file(const std::string& name) const { return path_ + "/" + name; }
    bool ok() const { return !path_.empty(); }

private:
    std::string path_;
};

std::vector<std::byte> read_all(const std::string& path);
void write_bytes(const std::string& path, std::span<const std::byte> b);

// The test files' events: cpu-clock samples (k_clock_type), kring's sched
// records (k_sched_type) and an AUX event, with the sample ids @ids.
pd::event_attr clock_attr(std::vector<std::uint64_t> ids);
pd::event_attr sched_attr(std::vector<std::uint64_t> ids);
pd::event_attr aux_attr(std::vector<std::uint64_t> ids);
pd::sample_id sid(std::uint32_t pid, std::uint32_t tid, std::uint32_t cpu, std::uint64_t time,
                  std::uint64_t id);

// Every feature set, the kring section with two rings; and the check that
// two feature sets are the same, field by field.
pd::features test_features();
void expect_features_eq(const pd::features& a, const pd::features& b);

// The records of @f in order (a failed walk fails the test).
std::vector<pd::record_view> records_of(const pd::file& f);

// Every builder once, in a file with a clock and a sched event; the
// records' expected values are checked by the PerfDataRoundTrip tests.
struct every_record {
    std::vector<std::vector<std::byte>> recs;
    std::vector<std::byte> aux_payload;
};

every_record build_every_record();

// ---- perf reads the files ---------------------------------------------

struct run_result {
    int status = -1;
    std::string out, err;
    std::string both() const { return "stdout:\n" + out + "stderr:\n" + err; }
};

// @cmd through the shell, its stdout and stderr apart.
run_result run(const std::string& cmd);

// Debian's perf, "" when it is not installed.
std::string find_perf();

// perf's lines that say something went wrong. A line of @allowed text is
// not, nor the "Warning:" line right before it.
std::vector<std::string> complaints(const std::string& out,
                                    const std::vector<std::string>& allowed = {});

// The lines of @out that hold @what.
std::size_t count_lines(const std::string& out, const std::string& what);

// @v's lines, indented, for a failure message.
std::string show(const std::vector<std::string>& v);

}  // namespace kt
