// Set commands. (Family not yet implemented.)
#include "server/command_context.h"
#include "server/server.h"

namespace feedkv::server {

std::span<const CommandSpec> SetCommands() { return {}; }

}  // namespace feedkv::server
