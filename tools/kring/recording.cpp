// The skeleton of report, script and export (recording.hpp).
#include "recording.hpp"

#include "errors.hpp"

namespace kring_tool {

void add_recording_file(CLI::App* sub, std::string& path) {
    sub->add_option("file", path, "the recording")->capture_default_str();
}

void add_recording_input(CLI::App* sub, std::string& path) {
    sub->add_option("-i,--input", path,
                    "the recording (as perf's -i; - reads perf's pipe format from standard input)");
}

int show_recording(const std::string& path, const std::function<int(const trace_model&)>& show) {
    auto loaded = trace_model::load(path);
    if (!loaded)
        return report(loaded.error());
    const trace_model& m = *loaded;
    warn_truncated(m);
    warn_refused_formats(m);
    if (int status = show(m); status != exit_ok)
        return status;
    return m.truncation || !m.tp_refused.empty() ? exit_runtime : exit_ok;
}

}  // namespace kring_tool
