// kring: command-line front end of libkring.
//
//   kring info [--device PATH]    the module's ABI version, features, page size
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>
#include <fmt/core.h>

#include "kring/device.hpp"

namespace {

struct feature_name {
    std::uint64_t bit;
    const char* name;
};

constexpr feature_name feature_names[] = {
    {KRING_FEAT_ABI_QUERY, "abi-query"},
};

int cmd_info(const std::string& path) {
    auto dev = kring::device::open(path.c_str());
    if (!dev) {
        fmt::print(stderr, "kring: {}\n", dev.error().message());
        return 1;
    }
    const auto& abi = dev->abi();
    fmt::print("device      {}\n", path);
    fmt::print("abi         {}.{} (libkring built for {}.{})\n", abi.major, abi.minor,
               KRING_ABI_MAJOR, KRING_ABI_MINOR);
    fmt::print("page size   {} bytes\n", abi.page_size);
    fmt::print("data area   up to 2^{} pages\n", abi.max_data_pages_order);
    std::string feats;
    for (const auto& f : feature_names)
        if (abi.features & f.bit)
            feats += (feats.empty() ? "" : " ") + std::string(f.name);
    fmt::print("features    {:#x} ({})\n", abi.features, feats);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"kring: read kernel ring buffers"};
    app.require_subcommand(1);
    std::string device = kring::default_device_path;

    auto* info = app.add_subcommand("info", "show the kring module's ABI and features");
    info->add_option("--device", device, "kring device node");

    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    if (*info)
        return cmd_info(device);
    return 1;
}
