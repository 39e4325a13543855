#include "server/startup.h"

#include "server/server.h"

namespace feedkv::server {

bool AttachSubsystems(Server& server) {
  (void)server;
  return true;
}

}  // namespace feedkv::server
