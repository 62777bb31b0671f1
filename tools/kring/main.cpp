// kring: command-line front end of libkring. `kring --help` lists the
// commands; each is implemented in cmd_<name>.cpp.
#include <CLI/CLI.hpp>

#include "command.hpp"
#include "kring/device.hpp"

int main(int argc, char** argv) {
    CLI::App app{"kring: stream records out of the kernel through kring ring buffers"};
    app.require_subcommand(1);
    kring_tool::context ctx;
    ctx.device = kring::default_device_path;
    app.fallthrough();
    app.add_option("--device", ctx.device, "kring device node")->capture_default_str();

    kring_tool::add_info(app, ctx);
    kring_tool::add_synth(app, ctx);
    kring_tool::add_sched(app, ctx);

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    return ctx.exit_code;
}
