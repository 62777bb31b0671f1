// kring info: the module's ABI version, features and limits.
#include <cstdio>
#include <string>

#include <fmt/core.h>

#include "command.hpp"
#include "kring/channel.hpp"
#include "kring/device.hpp"

namespace kring_tool {
namespace {

struct feature_name {
    std::uint64_t bit;
    const char* name;
};

constexpr feature_name feature_names[] = {
    {KRING_FEAT_ABI_QUERY, "abi-query"}, {KRING_FEAT_DATA_RING, "data-ring"},
    {KRING_FEAT_OVERWRITE, "overwrite"}, {KRING_FEAT_MIRROR, "mirror"},
    {KRING_FEAT_SYNTHETIC, "synthetic"}, {KRING_FEAT_SCHED, "sched"},
    {KRING_FEAT_TIMER, "timer"},         {KRING_FEAT_CAPTURE, "capture"},
    {KRING_FEAT_CLOCKS, "clocks"},       {KRING_FEAT_AUX, "aux"},
    {KRING_FEAT_AUX_TRACER, "aux-tracer"},
};

int run(const context& ctx) {
    auto dev = kring::device::open(ctx.device.c_str());
    if (!dev) {
        fmt::print(stderr, "kring: {}\n", dev.error().message());
        return 1;
    }
    const auto& abi = dev->abi();
    fmt::print("device      {}\n", ctx.device);
    fmt::print("abi         {}.{} (libkring built for {}.{})\n", abi.major, abi.minor,
               KRING_ABI_MAJOR, KRING_ABI_MINOR);
    fmt::print("page size   {} bytes\n", abi.page_size);
    fmt::print("data area   up to 2^{} pages\n", abi.max_data_pages_order);
    std::string feats;
    std::uint64_t known = 0;
    for (const auto& f : feature_names) {
        known |= f.bit;
        if (abi.features & f.bit)
            feats += (feats.empty() ? "" : " ") + std::string(f.name);
    }
    if (abi.features & ~known)
        feats += fmt::format("{}+{:#x}", feats.empty() ? "" : " ", abi.features & ~known);
    fmt::print("features    {:#x} ({})\n", abi.features, feats);

    // A channel of the smallest ring, opened, configured and mapped by
    // libkring: shows the control page a consumer sees.
    kring::channel_options o;
    o.device = ctx.device.c_str();
    o.data_pages_order = 0;
    auto ch = kring::channel::open(o);
    if (!ch) {
        fmt::print(stderr, "kring: a test channel: {}\n", ch.error().message());
        return 1;
    }
    const kring_ctl_page* ctl = ch->ctl();
    fmt::print("ctl page    version {}, live figures up to offset {}\n", ctl->version, ctl->size);
    fmt::print("data ring   data_offset {}, data_size {} (smallest)\n", ctl->data_offset,
               ctl->data_size);
    return 0;
}

}  // namespace

void add_info(CLI::App& app, context& ctx) {
    auto* sub = app.add_subcommand("info", "show the kring module's ABI and features");
    sub->callback([&ctx] { ctx.exit_code = run(ctx); });
}

}  // namespace kring_tool
