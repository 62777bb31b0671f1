// kring: command-line front end of libkring. `kring --help` lists the
// commands of commands.def; each is implemented in cmd_<name>.cpp.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "command.hpp"
#include "commands.hpp"
#include "kring/device.hpp"

int main(int argc, char** argv) {
    using namespace kring_tool;
    CLI::App app{"kring: stream records out of the kernel through kring ring buffers"};
    app.require_subcommand(1);
    const std::string exit_help =
        "Exit status: 0 success; 1 runtime error (a failed call, or a check that "
        "found a mismatch);\n2 usage error (bad option or argument). Errors are one "
        "line on stderr:\n\"kring: <what failed>: <reason>\". The last line on stdout "
        "is a summary:\n\"summary <command> key=value ...\".";
    app.footer(exit_help);
    // Usage errors: one line, like every other failure of the tool.
    app.failure_message([](const CLI::App*, const CLI::Error& e) {
        return "kring: " + std::string(e.what()) + " (see --help)\n";
    });
    app.set_version_flag("--version", "kring " KRING_VERSION);
    context ctx;
    ctx.device = kring::default_device_path;
    app.fallthrough();
    // The device's path also goes to report(), for the one hint line of a
    // failure to open it.
    set_device_path(ctx.device);
    app.add_option("--device", ctx.device, "kring device node")
        ->capture_default_str()
        ->each([](const std::string& path) { set_device_path(path); });

    for (const command_entry& c : commands())
        c.add(app.add_subcommand(std::string(c.name), std::string(c.summary)), ctx);

    // A command's own footer (what it does, its examples) comes first,
    // then the exit statuses every command shares.
    for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; }))
        if (!sub->get_footer().empty())
            sub->footer(sub->get_footer() + "\n\n" + exit_help);

    // The first word that is not an option (or --device's value) names the
    // command: an unknown one is named in the error, not reported as a
    // missing subcommand.
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--device") {
            i++;
            continue;
        }
        if (a.empty() || a[0] == '-')
            continue;
        bool known = false;
        for (const command_entry& c : commands())
            known |= a == c.name;
        if (!known) {
            std::fprintf(stderr, "kring: unknown command '%s' (see --help)\n", a.c_str());
            return exit_usage;
        }
        break;
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        // --help is a success; every other parse error (CLI11's own codes,
        // e.g. 106 for a failed validator) is a usage error.
        return app.exit(e) == 0 ? exit_ok : exit_usage;
    }
    return ctx.exit_code;
}
