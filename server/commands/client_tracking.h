// CLIENT TRACKING / CACHING / GETREDIR / TRACKINGINFO: the client-side caching
// subcommands of CLIENT (cmd_connection.cc routes them; server/tracking.h does
// the work).
#pragma once

#include "server/command_context.h"

namespace feedkv::server {

void ClientTrackingCmd(CommandContext& ctx);
void ClientCachingCmd(CommandContext& ctx);
void ClientGetRedirCmd(CommandContext& ctx);
void ClientTrackingInfoCmd(CommandContext& ctx);

}  // namespace feedkv::server
