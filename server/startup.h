// Start-up wiring of the subsystems that hang off a Server (persistence,
// later replication and the cold tier). main() calls AttachSubsystems once,
// before the listeners open, so data is loaded before the first client.
#pragma once

namespace feedkv::server {

class Server;

// The Redis version clients see in HELLO and INFO: new enough that clients
// enable their modern paths (CLIENT SETINFO, RESP3).
inline constexpr char kRedisCompatVersion[] = "7.2.4";
inline constexpr char kFeedkvVersion[] = "0.1.0";

// Returns false (after logging) if the server must not start.
bool AttachSubsystems(Server& server);

}  // namespace feedkv::server
