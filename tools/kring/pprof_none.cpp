// kring export --pprof in a kring built without libprotobuf, protoc, zlib
// or libelf (tools/kring/CMakeLists.txt): it says so.
#include "command.hpp"
#include "pprof.hpp"

namespace kring_tool {

bool have_pprof() noexcept { return false; }

int write_pprof(const pprof_options&, const trace_model&) {
    return report(
        "export --pprof: this kring was built without pprof support (libprotobuf, protoc)");
}

}  // namespace kring_tool
