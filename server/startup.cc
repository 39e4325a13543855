#include "server/startup.h"

#include "server/persistence.h"
#include "server/server.h"
#include "storage/file_io.h"

namespace feedkv::server {

bool AttachSubsystems(Server& server) {
  // Persistence lives as long as the process: it is never destroyed, so its
  // threads (stopped by its shutdown hook) cannot outlive what they use.
  auto* persistence = new Persistence(server, Env::Default());
  return persistence->Attach();
}

}  // namespace feedkv::server
