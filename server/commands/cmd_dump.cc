// DUMP, RESTORE and MIGRATE in Redis's DUMP payload format (storage/redis_payload.h), so a
// value moves between Redis 7 and feedkv: DUMP on one, RESTORE on the other.
//
// DUMP writes the simplest RDB form of each type Redis shares (string 0, list 1,
// set 2, sorted set 5, hash 4; streams have one form, listpacks 19,
// storage/stream_rdb.h) — every Redis version reads them. RESTORE reads those
// and what Redis 7.0 writes: quicklist-2 lists of listpacks, intset sets, listpack
// sorted sets and hashes, streams (15 and 19), integer and LZF-compressed strings. A feed timeline has no
// Redis form: its payload carries feedkv's own snapshot form under a private RDB
// type, which only feedkv reads. Replies and error texts are Redis 7.0's (cluster.c).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/migrate_connections.h"
#include "server/waiting_clients.h"
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

// A MIGRATE under way (Client::migrate): what was sent, then the target's replies.
struct MigrateState {
  bool copy = false;
  std::vector<std::string> keys;
  std::vector<std::string> payloads;  // as sent: a key is deleted only if it still dumps so
  std::vector<int64_t> expires;
  bool done = false;
  MigrateResult result;
};

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

void FinishMigrate(CommandContext& ctx);

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

// MIGRATE host port key|"" db timeout [COPY] [REPLACE] [AUTH pw] [AUTH2 user pw]
// [KEYS key ...] (Redis's migrateCommand): the keys go to the target as
// RESTOREs of their DUMP payloads and, without COPY, the ones it accepted are
// deleted here, logged as one DEL. Redis blocks its whole server for the
// transfer; here the client parks while MigrateConnections talks to the
// target, and the command runs again to read the outcome. A key that changed
// meanwhile (another client's write) is kept: only a key still holding what
// was sent is deleted, so no acknowledged write is lost.
void Migrate(CommandContext& ctx) {
  if (ctx.client.migrate != nullptr && ctx.client.migrate->done) return FinishMigrate(ctx);
  ctx.client.migrate.reset();
  bool copy = false, replace = false, auth = false;
  std::string_view username, password;
  size_t first_key = 3, num_keys = 1;
  for (size_t j = 6; j < ctx.argc(); ++j) {
    const size_t more = ctx.argc() - 1 - j;
    if (EqualsIgnoreCase(ctx.arg(j), "copy")) {
      copy = true;
    } else if (EqualsIgnoreCase(ctx.arg(j), "replace")) {
      replace = true;
    } else if (EqualsIgnoreCase(ctx.arg(j), "auth")) {
      if (more < 1) return ctx.SyntaxError();
      auth = true;
      password = ctx.arg(++j);
    } else if (EqualsIgnoreCase(ctx.arg(j), "auth2")) {
      if (more < 2) return ctx.SyntaxError();
      auth = true;
      username = ctx.arg(++j);
      password = ctx.arg(++j);
    } else if (EqualsIgnoreCase(ctx.arg(j), "keys")) {
      if (!ctx.arg(3).empty()) return ctx.Error(protocol::err::kMigrateKeysNeedEmptyKey);
      first_key = j + 1;
      num_keys = ctx.argc() - j - 1;
      break;
    } else {
      return ctx.SyntaxError();
    }
  }
  int64_t timeout = 0, dbid = 0;
  if (!ctx.IntArg(5, &timeout) || !ctx.IntArg(4, &dbid)) return;
  if (timeout <= 0) timeout = 1000;
  auto state = std::make_shared<MigrateState>();
  state->copy = copy;
  MigrateRequest req;
  req.host = std::string(ctx.arg(1));
  req.port = std::string(ctx.arg(2));
  req.timeout_ms = timeout;
  req.db = dbid;
  req.auth = auth;
  req.username = std::string(username);
  req.password = std::string(password);
  const int64_t now = ctx.now_ms();
  for (size_t j = 0; j < num_keys; ++j) {
    const std::string_view key = ctx.arg(first_key + j);
    const Entry* e = ctx.LookupRead(ctx.db(), key, now);
    if (e == nullptr) continue;
    int64_t ttl = 0;
    if (e->has_expire) ttl = std::max<int64_t>(1, e->expire_ms() - now);
    state->keys.emplace_back(key);
    state->payloads.push_back(EncodeValue(e));
    state->expires.push_back(e->has_expire ? e->expire_ms() : kNoExpire);
    std::string cmd = fmt::format("*{}\r\n$7\r\nRESTORE\r\n${}\r\n", replace ? 5 : 4, key.size());
    cmd.append(key);
    const std::string ttl_text = std::to_string(ttl);
    fmt::format_to(std::back_inserter(cmd), "\r\n${}\r\n{}\r\n${}\r\n", ttl_text.size(), ttl_text,
                   state->payloads.back().size());
    cmd.append(state->payloads.back());
    cmd.append("\r\n");
    if (replace) cmd.append("$7\r\nREPLACE\r\n");
    req.restores.push_back(std::move(cmd));
  }
  if (state->keys.empty()) return ctx.reply.Simple("NOKEY");
  if (!ctx.can_block()) {
    // Inside MULTI or a script the client cannot wait for the target.
    return ctx.Error(protocol::err::kMigrateCannotWait);
  }
  Server& server = ctx.server;
  const uint64_t token = server.NextWaitToken();
  server.migrate_connections().Transfer(std::move(req), [&server, state, token](MigrateResult r) {
    state->result = std::move(r);
    state->done = true;
    server.waiting().AsyncDone(token);
  });
  ctx.client.migrate = state;
  WaitCondition cond;
  cond.what = WaitFor::kAsyncDone;
  cond.token = token;
  server.ParkThenExecute(ctx.client, std::move(cond), 0, ctx.args);
}

// MIGRATE's second run: the target's replies decide what is deleted and said.
void FinishMigrate(CommandContext& ctx) {
  std::shared_ptr<MigrateState> state = std::move(ctx.client.migrate);
  const MigrateResult& r = state->result;
  if (r.failure == MigrateResult::kConnect) return ctx.Error(protocol::err::kMigrateConnect);
  if (r.failure == MigrateResult::kWrite) return ctx.Error(protocol::err::kMigrateWrite);
  const size_t pre = (r.sent_auth ? 1 : 0) + (r.sent_select ? 1 : 0);
  if (r.lines.size() < pre) return ctx.Error(protocol::err::kMigrateRead);
  auto is_error = [](const std::string& l) { return !l.empty() && l[0] == '-'; };
  // The first error of AUTH, SELECT or a RESTORE is what the client hears; a
  // failed AUTH or SELECT fails every key.
  const std::string* setup_error = nullptr;
  for (size_t i = 0; i < pre && setup_error == nullptr; ++i) {
    if (is_error(r.lines[i])) setup_error = &r.lines[i];
  }
  const std::string* target_error = nullptr;
  std::vector<std::string> deleted = {"DEL"};
  Database& db = ctx.db();
  const int64_t now = ctx.now_ms();
  size_t acked = 0;
  for (size_t j = 0; j < state->keys.size() && pre + j < r.lines.size(); ++j, ++acked) {
    const std::string& line = r.lines[pre + j];
    if (setup_error != nullptr || is_error(line)) {
      if (target_error == nullptr) target_error = setup_error != nullptr ? setup_error : &line;
      continue;
    }
    if (state->copy) continue;
    const std::string& key = state->keys[j];
    const Entry* e = db.Lookup(key, now);
    if (e == nullptr || EncodeValue(e) != state->payloads[j] ||
        (e->has_expire ? e->expire_ms() : kNoExpire) != state->expires[j]) {
      continue;  // changed since it was sent: the newer write stays
    }
    db.Delete(key);
    ctx.Touched(db.index(), key);
    ctx.Notify(kNotifyGeneric, "del", key);
    deleted.push_back(key);
  }
  if (deleted.size() > 1) {
    ctx.Dirty(static_cast<int64_t>(deleted.size() - 1));
    ctx.PropagateAs(std::move(deleted));
  }
  if (target_error != nullptr) {
    return ctx.Error(protocol::err::kMigrateTargetErrorPrefix + target_error->substr(1));
  }
  if (acked < state->keys.size()) return ctx.Error(protocol::err::kMigrateRead);
  ctx.reply.Ok();
}

// MIGRATE's keys: the key argument, or those after KEYS (Redis's migrateGetKeys).
std::vector<int> MigrateKeys(std::span<const std::string_view> argv) {
  for (size_t i = 6; i < argv.size(); ++i) {
    if (EqualsIgnoreCase(argv[i], "keys")) {
      std::vector<int> keys;
      for (size_t k = i + 1; k < argv.size(); ++k) keys.push_back(static_cast<int>(k));
      return keys;
    }
    if (EqualsIgnoreCase(argv[i], "auth")) {
      i += 1;  // a password spelled KEYS is no keyword
    } else if (EqualsIgnoreCase(argv[i], "auth2")) {
      i += 2;
    }
  }
  return argv.size() > 3 ? std::vector<int>{3} : std::vector<int>{};
}

// AUTH's password and AUTH2's user and password are shown as "(redacted)".
bool MigrateSecret(std::span<const std::string_view> argv, size_t i) {
  for (size_t j = 6; j < argv.size() && j < i; ++j) {
    if (EqualsIgnoreCase(argv[j], "keys")) return false;
    if (EqualsIgnoreCase(argv[j], "auth")) {
      if (i == j + 1) return true;
      j += 1;
    } else if (EqualsIgnoreCase(argv[j], "auth2")) {
      if (i == j + 1 || i == j + 2) return true;
      j += 2;
    }
  }
  return false;
}

const CommandSpec kCommands[] = {
    {"dump", 2, kReadOnly, 1, 1, 1, Dump, "Return a serialized version of the value stored at the specified key.", "generic", {}, {kKeyRO | kKeyAccess}},
    {"restore", -4, kWrite | kDenyOom, 1, 1, 1, Restore, "Create a key using the provided serialized value, previously obtained using DUMP.", "generic", {}, {kKeyOW | kKeyUpdate}},
    {"migrate", -6, kWrite | kAclDangerous, 3, 3, 1, Migrate, "Atomically transfer a key from a Redis instance to another one.", "generic", {},
     {kKeyRW | kKeyAccess | kKeyDelete}, {}, 0, nullptr, MigrateSecret, MigrateKeys},
};

}  // namespace

std::span<const CommandSpec> DumpCommands() { return kCommands; }

}  // namespace feedkv::server
