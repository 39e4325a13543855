#include "server/commands/stream_args.h"

#include <string>
#include <utility>
#include <vector>

#include "protocol/error_text.h"

namespace feedkv::server {

bool StreamIdArg(CommandContext& ctx, size_t i, uint64_t missing_seq, bool strict, StreamId* id) {
  const std::string_view s = ctx.arg(i);
  if (s == "-" || s == "+") {
    if (!strict) {
      *id = s == "-" ? StreamId{} : StreamId::Max();
      return true;
    }
  } else if (ParseStreamId(s, missing_seq, id)) {
    return true;
  }
  ctx.Error(protocol::err::kStreamBadId);
  return false;
}

bool StreamIntervalArg(CommandContext& ctx, size_t i, uint64_t missing_seq, StreamId* id, bool* exclusive) {
  const std::string_view s = ctx.arg(i);
  *exclusive = s.size() > 1 && s[0] == '(';
  if (!*exclusive) return StreamIdArg(ctx, i, missing_seq, false, id);
  if (ParseStreamId(s.substr(1), missing_seq, id)) return true;
  ctx.Error(protocol::err::kStreamBadId);
  return false;
}

void ReplyStreamId(protocol::ReplyWriter& r, StreamId id) {
  char buf[48];
  const int n = std::snprintf(buf, sizeof(buf), "%llu-%llu", static_cast<unsigned long long>(id.ms),
                              static_cast<unsigned long long>(id.seq));
  r.Bulk(std::string_view(buf, static_cast<size_t>(n)));
}

void ReplyStreamEntry(protocol::ReplyWriter& r, const StreamEntry& e) {
  r.ArrayHeader(2);
  ReplyStreamId(r, e.id);
  r.ArrayHeader(e.items.size());
  for (std::string_view s : e.items) r.Bulk(s);
}

void ReplyStreamRange(protocol::ReplyWriter& r, const StreamValue& s, StreamId start, StreamId end, size_t count,
                      bool reverse) {
  // The entries' bytes stay put while the stream does not change: keep views,
  // count them, then reply.
  std::vector<std::pair<StreamId, std::vector<std::string_view>>> found;
  s.ForRange(start, end, reverse, [&](const StreamEntry& e) {
    found.emplace_back(e.id, std::vector<std::string_view>(e.items.begin(), e.items.end()));
    return count == 0 || found.size() < count;
  });
  r.ArrayHeader(found.size());
  for (const auto& [id, items] : found) ReplyStreamEntry(r, StreamEntry{id, items});
}

}  // namespace feedkv::server
