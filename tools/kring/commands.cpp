// The kring tool's table of commands, from commands.def.
#include "commands.hpp"

namespace kring_tool {
namespace {

constexpr command_entry table[] = {
#define KRING_COMMAND(name, summary) {#name, summary, &add_##name},
#include "commands.def"
#undef KRING_COMMAND
};

}  // namespace

std::span<const command_entry> commands() { return table; }

}  // namespace kring_tool
