#include "server/ops/store_result.h"

#include "storage/database.h"

namespace feedkv::server {

size_t StoreResult(CommandContext& ctx, std::string_view dest, std::unique_ptr<Object> result, size_t size,
                   int event_class, std::string_view event) {
  if (result == nullptr) {
    if (ctx.db().Delete(dest)) {
      ctx.Dirty();
      ctx.Touched(ctx.client.db, dest);
      ctx.Notify(kNotifyGeneric, "del", dest);
    }
    return 0;
  }
  ctx.db().SetObject(dest, std::move(result), kNoExpire, false);
  ctx.Dirty();
  ctx.Touched(ctx.client.db, dest);
  ctx.Notify(event_class, event.empty() ? ctx.spec.name : event, dest);
  return size;
}

}  // namespace feedkv::server
