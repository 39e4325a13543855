// String commands. (Family not yet implemented.)
#include "server/command_context.h"
#include "server/server.h"

namespace feedkv::server {

std::span<const CommandSpec> StringCommands() { return {}; }

}  // namespace feedkv::server
