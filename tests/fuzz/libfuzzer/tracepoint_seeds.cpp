// The seeds of the tracepoint harness (fuzz_tracepoint.cpp), written by
// tools/dev/fuzz.sh into its build folder before each run: for each shape
// of tests/common/tp_hostile.hpp (tracing data whose formats put fields
// outside a RAW, RAWs whose __data_loc points outside them, next to a
// sound sched_switch), its perf.data file, and each of its RAWs with the
// tracing data in the harness's other form (u16 length, RAW, tracing data).
//
//   seeds_tracepoint DIR
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "kring/perf_data.hpp"
#include "tp_hostile.hpp"

namespace pd = kring::perf_data;

int main(int argc, char** argv) {
    if (argc != 2) {
        std::fprintf(stderr, "usage: seeds_tracepoint DIR\n");
        return 2;
    }
    const std::string dir = argv[1];
    for (const auto& s : tp_hostile::shapes()) {
        const std::string file = dir + "/file-" + s.name;
        if (auto why = tp_hostile::write_file(file, s); !why.empty()) {
            std::fprintf(stderr, "seeds_tracepoint: %s: %s\n", file.c_str(), why.c_str());
            return 1;
        }
        auto f = pd::file::open(file);
        if (!f) {
            std::fprintf(stderr, "seeds_tracepoint: %s: %s\n", file.c_str(),
                         f.error().message().c_str());
            return 1;
        }
        const auto& td = f->feats().tracing_data;
        for (std::size_t i = 0; i < s.raws.size(); i++) {
            const auto& raw = s.raws[i];
            const std::uint16_t n = std::uint16_t(raw.size());
            std::ofstream out(dir + "/split-" + s.name + "-" + std::to_string(i),
                              std::ios::binary | std::ios::trunc);
            out.write(reinterpret_cast<const char*>(&n), sizeof(n));
            out.write(reinterpret_cast<const char*>(raw.data()), std::streamsize(raw.size()));
            out.write(reinterpret_cast<const char*>(td.data()), std::streamsize(td.size()));
            if (!out) {
                std::fprintf(stderr, "seeds_tracepoint: cannot write into %s\n", dir.c_str());
                return 1;
            }
        }
    }
    return 0;
}
