// LongSet commands. (Family not yet implemented.)
#include "server/command_context.h"
#include "server/server.h"

namespace feedkv::server {

std::span<const CommandSpec> LongSetCommands() { return {}; }

}  // namespace feedkv::server
