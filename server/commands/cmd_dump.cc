// DUMP and RESTORE in Redis's DUMP payload format (storage/redis_payload.h), so a
// value moves between Redis 7 and feedkv: DUMP on one, RESTORE on the other.
//
// DUMP writes the simplest RDB form of each type Redis shares (string 0, list 1,
// set 2, sorted set 5, hash 4; streams have one form, listpacks 19,
// storage/stream_rdb.h) — every Redis version reads them. RESTORE reads those
// and what Redis 7.0 writes: quicklist-2 lists of listpacks, intset sets, listpack
// sorted sets and hashes, streams (15 and 19), integer and LZF-compressed strings. A feed timeline has no
// Redis form: its payload carries feedkv's own snapshot form under a private RDB
// type, which only feedkv reads. Replies and error texts are Redis 7.0's (cluster.c).
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/hash_ops.h"
#include "server/ops/set_ops.h"
#include "server/ops/zset_ops.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/hash_value.h"
#include "storage/list_value.h"
#include "storage/object_codec.h"
#include "storage/redis_payload.h"
#include "storage/set_value.h"
#include "storage/sorted_set.h"
#include "storage/stream_rdb.h"
#include "storage/stream_value.h"

namespace feedkv::server {

namespace {

namespace rp = redis_payload;

// feedkv's private RDB type: a value type byte and its snapshot form.
constexpr uint8_t kRdbFeedkvObject = 0xf0;

std::string EncodeValue(const Entry* e) {
  rp::Writer w;
  switch (e->type) {
    case ValueType::kString: {
      char buf[Database::kIntBufSize];
      w.Type(rp::kString);
      w.String(Database::StringValue(e, buf));
      break;
    }
    case ValueType::kList: {
      const auto* l = static_cast<const ListValue*>(Database::GetObject(e));
      w.Type(rp::kList);
      w.Length(l->size());
      l->ForRange(0, l->size() - 1, false, [&](std::string_view v) {
        w.String(v);
        return true;
      });
      break;
    }
    case ValueType::kSet: {
      const auto* s = static_cast<const SetValue*>(Database::GetObject(e));
      w.Type(rp::kSet);
      w.Length(s->size());
      char buf[24];
      s->ForEach([&](const SetMember& m) { w.String(m.Text(buf)); });
      break;
    }
    case ValueType::kZset: {
      const auto* z = static_cast<const SortedSetValue*>(Database::GetObject(e));
      w.Type(rp::kZset2);
      w.Length(z->size());
      z->ForEach([&](const ZEntry& x) {
        w.String(x.member);
        w.BinaryDouble(x.score);
      });
      break;
    }
    case ValueType::kHash: {
      const auto* h = static_cast<const HashValue*>(Database::GetObject(e));
      w.Type(rp::kHash);
      w.Length(h->size());
      h->ForEach([&](std::string_view f, std::string_view v) {
        w.String(f);
        w.String(v);
      });
      break;
    }
    case ValueType::kStream: {
      w.Type(rp::kStreamListpacks2);
      WriteRedisStream(*static_cast<const StreamValue*>(Database::GetObject(e)), &w);
      break;
    }
    default: {
      std::string bytes;
      Database::GetObject(e)->SerializeTo(&bytes);
      w.Type(static_cast<rp::RdbType>(kRdbFeedkvObject));
      w.Length(static_cast<uint64_t>(e->type));
      w.String(bytes);
      break;
    }
  }
  return w.Finish();
}

void Dump(CommandContext& ctx) {
  Entry* e = ctx.LookupRead(ctx.db(), ctx.arg(1), ctx.now_ms());
  if (e == nullptr) return ctx.reply.Null();
  ctx.reply.Bulk(EncodeValue(e));
}

// A decoded payload: a string value, or an object.
struct Decoded {
  bool is_string = false;
  std::string str;
  std::unique_ptr<Object> obj;
};

// Collects the elements of a value before it is built (sets and hashes need the
// count and longest element up front to pick their encoding).
struct Elements {
  std::vector<std::string> items;
  size_t max_len = 0;
  void Add(std::string_view s) {
    items.emplace_back(s);
    max_len = std::max(max_len, s.size());
  }
};

bool ReadStrings(rp::Reader& r, uint64_t n, Elements* out) {
  for (uint64_t i = 0; i < n; ++i) {
    std::string s;
    if (!r.String(&s)) return false;
    out->Add(s);
  }
  return true;
}

bool ReadListpack(rp::Reader& r, Elements* out) {
  std::string blob;
  return r.String(&blob) && rp::ForEachListpackEntry(blob, [&](std::string_view s) { out->Add(s); });
}

bool BuildSet(CommandContext& ctx, const Elements& el, Decoded* out) {
  if (el.items.empty()) return false;
  std::vector<std::string_view> views(el.items.begin(), el.items.end());
  std::unique_ptr<SetValue> set;
  if (!SetValue::FromMembers(views, set_ops::Options(ctx), &set).ok()) return false;
  if (set->size() != views.size()) return false;  // duplicates: a corrupt payload
  out->obj = std::move(set);
  return true;
}

bool BuildHash(CommandContext& ctx, const Elements& el, Decoded* out) {
  if (el.items.empty() || el.items.size() % 2 != 0) return false;
  const HashLimits limits = hash_ops::Limits(ctx);
  auto h = HashValue::Create(el.items.size() / 2, el.max_len, limits);
  for (size_t i = 0; i < el.items.size(); i += 2) {
    if (!h->Set(el.items[i], el.items[i + 1], limits)) return false;  // a repeated field
  }
  out->obj = std::move(h);
  return true;
}

bool ParseScore(const std::string& text, double* score) {
  char* end = nullptr;
  *score = std::strtod(text.c_str(), &end);
  return !text.empty() && *end == '\0' && !std::isnan(*score);
}

bool BuildZset(CommandContext& ctx, const std::vector<std::pair<std::string, double>>& members, size_t max_len,
               Decoded* out) {
  if (members.empty()) return false;
  const ZsetLimits limits = zset_ops::Limits(ctx);
  auto z = SortedSetValue::Create(members.size(), max_len, limits);
  for (const auto& [member, score] : members) {
    double ignored;
    if (std::isnan(score) || z->Add(member, score, 0, limits, &ignored) != SortedSetValue::AddResult::kAdded) {
      return false;  // NaN or a repeated member
    }
  }
  out->obj = std::move(z);
  return true;
}

bool DecodeValue(CommandContext& ctx, std::string_view body, Decoded* out) {
  rp::Reader r(body);
  uint8_t type;
  if (!r.Byte(&type)) return false;
  uint64_t n;
  Elements el;
  bool ok = false;
  switch (type) {
    case rp::kString:
      out->is_string = true;
      ok = r.String(&out->str);
      break;
    case rp::kList:
    case rp::kListQuicklist2: {
      if (!r.Length(&n)) return false;
      if (type == rp::kList) {
        if (!ReadStrings(r, n, &el)) return false;
      } else {
        for (uint64_t i = 0; i < n; ++i) {
          uint64_t container;
          std::string blob;
          if (!r.Length(&container)) return false;
          if (container == 1) {  // a plain node: one element
            if (!r.String(&blob)) return false;
            el.Add(blob);
          } else if (container != 2 || !ReadListpack(r, &el)) {
            return false;
          }
        }
      }
      if (el.items.empty()) return false;
      auto l = std::make_unique<ListValue>();
      for (const std::string& s : el.items) l->Push(false, s, ctx.server.cfg().list_max_listpack_size);
      out->obj = std::move(l);
      ok = true;
      break;
    }
    case rp::kSet:
      ok = r.Length(&n) && ReadStrings(r, n, &el) && BuildSet(ctx, el, out);
      break;
    case rp::kSetIntset: {
      std::string blob;
      ok = r.String(&blob) &&
           rp::ForEachIntsetMember(blob, [&](int64_t v) { el.Add(std::to_string(v)); }) && BuildSet(ctx, el, out);
      break;
    }
    case rp::kHash:
      ok = r.Length(&n) && ReadStrings(r, n * 2, &el) && BuildHash(ctx, el, out);
      break;
    case rp::kHashListpack:
      ok = ReadListpack(r, &el) && BuildHash(ctx, el, out);
      break;
    case rp::kZset2:
    case rp::kZsetListpack: {
      std::vector<std::pair<std::string, double>> members;
      size_t max_len = 0;
      if (type == rp::kZset2) {
        if (!r.Length(&n)) return false;
        for (uint64_t i = 0; i < n; ++i) {
          std::string m;
          double score;
          if (!r.String(&m) || !r.BinaryDouble(&score)) return false;
          max_len = std::max(max_len, m.size());
          members.emplace_back(std::move(m), score);
        }
      } else {
        if (!ReadListpack(r, &el) || el.items.size() % 2 != 0) return false;
        for (size_t i = 0; i < el.items.size(); i += 2) {
          double score;
          if (!ParseScore(el.items[i + 1], &score)) return false;
          max_len = std::max(max_len, el.items[i].size());
          members.emplace_back(el.items[i], score);
        }
      }
      ok = BuildZset(ctx, members, max_len, out);
      break;
    }
    case rp::kStreamListpacks:
    case rp::kStreamListpacks2: {
      std::unique_ptr<StreamValue> stream;
      ok = ReadRedisStream(&r, type, &stream);
      out->obj = std::move(stream);
      break;
    }
    case kRdbFeedkvObject: {
      std::string bytes;
      if (!r.Length(&n) || n > 255 || !r.String(&bytes)) return false;
      const auto vt = static_cast<ValueType>(n);
      ok = vt != ValueType::kString && DecodeObject(vt, bytes, &out->obj).ok();
      break;
    }
    default:
      return false;
  }
  return ok && r.done();
}

// RESTORE key ttl serialized-value [REPLACE] [ABSTTL] [IDLETIME seconds] [FREQ frequency]
void Restore(CommandContext& ctx) {
  bool replace = false, absttl = false;
  int64_t idle = -1, freq = -1;
  for (size_t j = 4; j < ctx.argc(); ++j) {
    const bool more = j + 1 < ctx.argc();
    if (EqualsIgnoreCase(ctx.arg(j), "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(ctx.arg(j), "absttl")) {
      absttl = true;
    } else if (EqualsIgnoreCase(ctx.arg(j), "idletime") && more && freq == -1) {
      if (!ctx.IntArg(++j, &idle)) return;
      if (idle < 0) return ctx.Error(protocol::err::kRestoreIdleTime);
    } else if (EqualsIgnoreCase(ctx.arg(j), "freq") && more && idle == -1) {
      if (!ctx.IntArg(++j, &freq)) return;
      if (freq < 0 || freq > 255) return ctx.Error(protocol::err::kRestoreFreq);
    } else {
      return ctx.SyntaxError();
    }
  }
  Database& db = ctx.db();
  const std::string_view key = ctx.arg(1);
  if (!replace && db.Lookup(key, ctx.now_ms()) != nullptr) return ctx.Error(protocol::err::kBusyKey);
  int64_t ttl;
  if (!ctx.IntArg(2, &ttl)) return;
  if (ttl < 0) return ctx.Error(protocol::err::kRestoreTtl);
  std::string_view body;
  if (!rp::CheckFooter(ctx.arg(3), &body)) return ctx.Error(protocol::err::kDumpPayload);
  Decoded value;
  if (!DecodeValue(ctx, body, &value)) return ctx.Error(protocol::err::kBadDataFormat);
  const bool deleted = replace && db.Delete(key);
  if (ttl != 0 && !absttl) ttl += ctx.now_ms();
  if (ttl != 0 && ttl <= ctx.now_ms() && !ctx.from_log) {
    // Already expired: nothing is created; a replaced key is gone, logged as a DEL.
    if (deleted) {
      ctx.PropagateAs({"DEL", std::string(key)});
      ctx.Dirty();
      ctx.Notify(kNotifyGeneric, "del", key);
    }
    return ctx.reply.Ok();
  }
  const int64_t expire = ttl != 0 ? ttl : kNoExpire;
  Entry* e = value.is_string ? db.SetString(key, value.str, expire, false)
                             : db.SetObject(key, std::move(value.obj), expire, false);
  db.RestoreAccess(e, idle, freq);
  if (ttl != 0 && !absttl) {
    // The log and replicas get the absolute expiry, as Redis rewrites it.
    std::vector<std::string> logged(ctx.args.begin(), ctx.args.end());
    logged[2] = std::to_string(ttl);
    logged.emplace_back("ABSTTL");
    ctx.PropagateAs(std::move(logged));
  }
  ctx.Dirty();
  ctx.Notify(kNotifyGeneric, "restore", key);
  ctx.reply.Ok();
}

const CommandSpec kCommands[] = {
    {"dump", 2, kReadOnly, 1, 1, 1, Dump, "Return a serialized version of the value stored at the specified key.", "generic", {}, {kKeyRO | kKeyAccess}},
    {"restore", -4, kWrite | kDenyOom, 1, 1, 1, Restore, "Create a key using the provided serialized value, previously obtained using DUMP.", "generic", {}, {kKeyOW | kKeyUpdate}},
};

}  // namespace

std::span<const CommandSpec> DumpCommands() { return kCommands; }

}  // namespace feedkv::server
