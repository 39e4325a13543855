#include "server/startup.h"

#include "server/cold_tier.h"
#include "server/persistence.h"
#include "server/replication/replication.h"
#include "server/server.h"
#include "storage/file_io.h"

namespace feedkv::server {

bool AttachSubsystems(Server& server) {
  // The server owns it and destroys it first, so its threads stop before
  // anything they use goes away.
  // The cold tier first: loading a snapshot attaches its spaces to it.
  server.set_cold_tier(std::make_unique<ColdTier>(server));
  server.set_persistence(std::make_unique<Persistence>(server, Env::Default()));
  if (!server.persistence()->Attach()) return false;
  server.set_replication(std::make_unique<Replication>(server, *server.persistence()));
  return server.replication()->Attach();
}

}  // namespace feedkv::server
