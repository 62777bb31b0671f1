// kring info: the module's ABI version, features and limits.
#include <cstdio>
#include <string>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/channel.hpp"
#include "kring/device.hpp"

namespace kring_tool {
namespace {

int run(const context& ctx) {
    auto dev = kring::device::open(ctx.device);
    if (!dev)
        return report(dev.error());
    const auto& abi = dev->abi();
    fmt::print("device      {}\n", ctx.device);
    fmt::print("abi         {}.{} (libkring built for {}.{})\n", abi.major, abi.minor,
               KRING_ABI_MAJOR, KRING_ABI_MINOR);
    fmt::print("page size   {} bytes\n", abi.page_size);
    fmt::print("data area   up to 2^{} pages\n", abi.max_data_pages_order);
    fmt::print("features    {:#x} ({})\n", abi.features, kring::feature_names(abi.features));

    // A channel of the smallest ring, opened, configured and mapped by
    // libkring: shows the control page a consumer sees.
    kring::channel_options o;
    o.device = ctx.device;
    o.data_pages_order = 0;
    auto ch = kring::channel::open(o);
    if (!ch)
        return report(ch.error().with_context("a test channel"));
    const kring_ctl_page* ctl = ch->ctl();
    fmt::print("ctl page    version {}, live figures up to offset {}\n", ctl->version, ctl->size);
    fmt::print("data ring   data_offset {}, data_size {} (smallest)\n", ctl->data_offset,
               ch->ring().data_size);
    print_summary("info", {{"abi_major", abi.major},
                           {"abi_minor", abi.minor},
                           {"features", abi.features},
                           {"page_size", abi.page_size},
                           {"max_data_pages_order", abi.max_data_pages_order}});
    return exit_ok;
}

}  // namespace

void add_info(CLI::App* sub, context& ctx) {
    sub->footer(
        "Opens the device, queries its ABI and maps the smallest channel.\n"
        "\n"
        "Examples:\n"
        "  kring info\n"
        "      the module behind /dev/kring"
        "\n"
        "  kring --device /dev/kring info\n"
        "      another device node");
    sub->callback([&ctx] { ctx.exit_code = run(ctx); });
}

}  // namespace kring_tool
