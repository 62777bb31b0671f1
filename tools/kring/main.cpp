// kring: command-line front end of libkring. `kring --help` lists the
// commands; each is implemented in cmd_<name>.cpp.
#include <string>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "kring/device.hpp"

int main(int argc, char** argv) {
    CLI::App app{"kring: stream records out of the kernel through kring ring buffers"};
    app.require_subcommand(1);
    // Usage errors: one line, like every other failure of the tool.
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return "kring: " + std::string(e.what()) + " (see --help)\n";
    });
    kring_tool::context ctx;
    ctx.device = kring::default_device_path;
    app.fallthrough();
    app.add_option("--device", ctx.device, "kring device node")->capture_default_str();

    kring_tool::add_info(app, ctx);
    kring_tool::add_synth(app, ctx);
    kring_tool::add_sched(app, ctx);
    kring_tool::add_aux(app, ctx);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    return ctx.exit_code;
}
