// Persistence commands: SAVE, BGSAVE, BGREWRITEAOF, LASTSAVE, and DEBUG
// (DIGEST, DIGEST-VALUE, RELOAD, SLEEP, OBJECT, POPULATE, COLD-DELAY, HELP). The work is done by
// server/persistence.{h,cc}; these handlers parse and reply.
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/cold_tier.h"
#include "server/command_context.h"
#include "server/config.h"
#include "server/persistence.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/int_text.h"
#include "storage/list_value.h"
#include "storage/rdb_digest.h"

namespace feedkv::server {

namespace {

Persistence* Get(CommandContext& ctx) {
  Persistence* p = ctx.server.persistence();
  if (p == nullptr) ctx.Error(protocol::err::kPersistenceUnavailable);
  return p;
}

void Save(CommandContext& ctx) {
  Persistence* p = Get(ctx);
  if (p == nullptr) return;
  Status s = p->Save();
  if (!s.ok()) return ctx.Error(s);
  ctx.reply.Ok();
}

void BgSave(CommandContext& ctx) {
  bool schedule = false;
  if (ctx.argc() == 2) {
    if (!EqualsIgnoreCase(ctx.arg(1), "SCHEDULE")) return ctx.SyntaxError();
    schedule = true;
  } else if (ctx.argc() > 2) {
    return ctx.SyntaxError();
  }
  Persistence* p = Get(ctx);
  if (p == nullptr) return;
  std::string reply;
  Status s = p->BgSave(false, schedule, &reply);
  if (!s.ok()) return ctx.Error(s);
  ctx.reply.Simple(reply);
}

void BgRewriteAof(CommandContext& ctx) {
  Persistence* p = Get(ctx);
  if (p == nullptr) return;
  std::string reply;
  Status s = ctx.depth > 1 ? p->ScheduleRewrite(&reply) : p->BgSave(true, false, &reply);
  if (!s.ok()) return ctx.Error(s);
  ctx.reply.Simple(reply);
}

void LastSave(CommandContext& ctx) {
  Persistence* p = Get(ctx);
  if (p == nullptr) return;
  ctx.reply.Integer(p->last_save_unix());
}

constexpr std::string_view kDebugHelp[] = {
    "DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
    "COLD-DELAY <ms>",
    "    Delay every cold tier read batch by <ms> milliseconds (0: none).",
    "DIGEST",
    "    Output a hex signature representing the current DB content.",
    "DIGEST-VALUE <key> [<key> ...]",
    "    Output a hex signature of the values of all the specified keys.",
    "HTSTATS <dbid>",
    "    Return hash table statistics of the specified Redis database.",
    "LOADAOF",
    "    Flush the AOF buffers on disk and reload the AOF in memory.",
    "OBJECT <key>",
    "    Show low level info about the key and associated value.",
    "POPULATE <count> [<prefix>] [<size>]",
    "    Create <count> string keys named key:<num>. If <prefix> is specified then",
    "    it is used instead of the 'key' prefix. These are not propagated to",
    "    replicas. Cluster slots are not respected so keys not belonging to the",
    "    current node can be created in cluster mode.",
    "PROTOCOL <type>",
    "    Reply with a test value of the specified type. <type> can be: string,",
    "    integer, double, bignum, null, array, set, map, attrib, push, verbatim,",
    "    true, false.",
    "QUICKLIST-PACKED-THRESHOLD <size>",
    "    Sets the threshold for elements to be inserted as plain vs packed nodes",
    "    Default value is 1GB, allows values up to 4GB. Setting to 0 restores to default.",
    "RELOAD [option ...]",
    "    Save the RDB on disk and reload it back to memory. Valid <option> values:",
    "    * MERGE: conflicting keys will be loaded from RDB.",
    "    * NOFLUSH: the existing database will not be removed before load, but",
    "      conflicting keys will generate an error.",
    "    * NOSAVE: the database will be loaded from an existing RDB file.",
    "SET-ACTIVE-EXPIRE <0|1>",
    "    Setting it to 0 disables expiring keys in background when they are not",
    "    accessed (otherwise the Redis behavior). Setting it to 1 reenables back the",
    "    default.",
    "CONFIG-REWRITE-FORCE-ALL",
    "    Like CONFIG REWRITE but writes every setting, defaults included.",
    "SET-DISABLE-DENY-SCRIPTS <0|1>",
    "    Enable/disable the ability to call commands flagged 'noscript' (and, in",
    "    feedkv, 'protected') from scripts, for tests.",
    "SLEEP <seconds>",
    "    Stop the server for <seconds>. Decimals allowed.",
    "HELP",
    "    Print this help.",
};

// DEBUG POPULATE count [prefix] [size], as Redis: string keys <prefix>:<n>
// holding "value:<n>" (or that text cut or zero-padded to `size` bytes);
// existing keys are left alone. Like Redis it is not propagated: the keys
// reach the log only through the next snapshot (BGSAVE, BGREWRITEAOF).
void Populate(CommandContext& ctx) {
  // Redis answers the same text for "x" and for "-1" here.
  auto positive = [&](size_t i, int64_t* out) {
    if (ParseCanonicalInt64(ctx.arg(i), out) && *out >= 0) return true;
    ctx.Error(protocol::err::kNotPositive);
    return false;
  };
  int64_t count = 0;
  int64_t size = 0;
  if (!positive(2, &count)) return;
  if (ctx.argc() == 5 && !positive(4, &size)) return;
  const std::string prefix = ctx.argc() >= 4 ? std::string(ctx.arg(3)) : "key";
  Database& db = ctx.db();
  std::string key;
  std::string value;
  for (int64_t j = 0; j < count; j++) {
    key = fmt::format("{}:{}", prefix, j);
    if (db.Lookup(key, ctx.now_ms()) != nullptr) continue;
    value = fmt::format("value:{}", j);
    if (size > 0) value.resize(static_cast<size_t>(size), '\0');
    db.SetString(key, value, kNoExpire, false);
    ctx.server.TouchKey(db.index(), key);
  }
  ctx.reply.Ok();
}

// DEBUG DIGEST: the dataset's digest, cold counter rows included. Those are
// read from the store by the cold tier's writer thread while the client waits
// (in MULTI/EXEC, where it cannot wait, synchronously).
void DebugDigest(CommandContext& ctx) {
  rdb::DigestBuilder digest;
  ctx.server.dataset().AddTo(&digest);
  ColdTier* cold = ctx.server.cold_tier();
  if (cold != nullptr && !ctx.can_block()) {
    Status s = cold->DigestColdRowsNow(&digest);
    if (!s.ok()) return ctx.Error(protocol::err::kColdReadFailedPrefix + s.message());
  } else if (cold != nullptr) {
    const uint64_t token = cold->NextToken();
    auto result = std::make_shared<std::pair<Status, std::string>>();
    Server& server = ctx.server;
    const bool waits = cold->DigestColdRows(digest, [&server, token, result](const Status& s, const std::string& hex) {
      *result = {s, hex};
      server.waiting().AsyncDone(token);
    });
    if (waits) {
      WaitCondition cond;
      cond.what = WaitFor::kAsyncDone;
      cond.token = token;
      ctx.server.waiting().Park(ctx.client, std::move(cond), 0, [result](Client& c, WaitEnd) {
        protocol::ReplyWriter w(&c.out, c.resp);
        if (result->first.ok()) {
          w.Simple(result->second);
        } else {
          w.Error(protocol::err::kColdReadFailedPrefix + result->first.message());
        }
      });
      return;
    }
  }
  ctx.reply.Simple(digest.Hex());
}

// DEBUG LOADAOF: once the log is written up to every change made so far (the
// client waits for the AOF writer), the dataset is emptied and loaded back
// from the snapshot and the log, as a restart would.
void DebugLoadAof(CommandContext& ctx) {
  Persistence* p = Get(ctx);
  if (p == nullptr) return;
  auto reload = [p](Client& c) {
    protocol::ReplyWriter w(&c.out, c.resp);
    Status s = p->ReloadFromLog();
    if (s.ok()) {
      w.Ok();
    } else {
      w.Error(protocol::err::kReloadFailedPrefix + s.ToString());
    }
  };
  const uint64_t end = p->log_on() ? ctx.server.journal().Seal() : 0;
  if (!p->log_on() || ctx.server.waiting().written() >= end) {
    reload(ctx.client);
    return;
  }
  // Inside MULTI the client cannot wait, and the log on disk lacks the tail.
  if (!ctx.can_block()) return ctx.Error(protocol::err::kLoadAofCannotWait);
  WaitCondition cond;
  cond.what = WaitFor::kLogWritten;
  cond.offset = end;
  ctx.server.waiting().Park(ctx.client, std::move(cond), 0, [reload](Client& c, WaitEnd) { reload(c); });
}

// DEBUG PROTOCOL <type>: one reply of each RESP type, as Redis's (client
// libraries test their parsers with it).
void DebugProtocol(CommandContext& ctx) {
  std::string_view name = ctx.arg(2);
  protocol::ReplyWriter& r = ctx.reply;
  const bool resp3 = ctx.client.resp >= 3;
  if (EqualsIgnoreCase(name, "string")) {
    r.Bulk("Hello World");
  } else if (EqualsIgnoreCase(name, "integer")) {
    r.Integer(12345);
  } else if (EqualsIgnoreCase(name, "double")) {
    r.Double(3.141);
  } else if (EqualsIgnoreCase(name, "bignum")) {
    constexpr std::string_view kBig = "1234567999999999999999999999999999999";
    if (resp3) {
      r.Raw(fmt::format("({}\r\n", kBig));
    } else {
      r.Bulk(kBig);
    }
  } else if (EqualsIgnoreCase(name, "null")) {
    r.Null();
  } else if (EqualsIgnoreCase(name, "array") || EqualsIgnoreCase(name, "set")) {
    if (EqualsIgnoreCase(name, "set")) {
      r.SetHeader(3);
    } else {
      r.ArrayHeader(3);
    }
    for (int j = 0; j < 3; j++) r.Integer(j);
  } else if (EqualsIgnoreCase(name, "map")) {
    r.MapHeader(3);
    for (int j = 0; j < 3; j++) {
      r.Integer(j);
      r.Bool(j == 1);
    }
  } else if (EqualsIgnoreCase(name, "attrib")) {
    if (resp3) {
      r.Raw("|1\r\n");
      r.Bulk("key-popularity");
      r.ArrayHeader(2);
      r.Bulk("key:123");
      r.Integer(90);
    }
    // An attribute is not a reply: a real one follows.
    r.Bulk("Some real reply following the attribute");
  } else if (EqualsIgnoreCase(name, "push")) {
    if (!resp3) return ctx.Error(protocol::err::kDebugPushResp2);
    r.PushHeader(2);
    r.Bulk("server-cpu-usage");
    r.Integer(42);
    // A push is not a reply: a real one follows for clients that skip pushes.
    r.Bulk("Some real reply following the push reply");
  } else if (EqualsIgnoreCase(name, "true") || EqualsIgnoreCase(name, "false")) {
    r.Bool(EqualsIgnoreCase(name, "true"));
  } else if (EqualsIgnoreCase(name, "verbatim")) {
    r.Verbatim("This is a verbatim\nstring");
  } else {
    ctx.Error(protocol::err::kDebugProtocolType);
  }
}

// One array of a keyspace table in Redis's dictGetStats words.
void AppendTableStats(const KeyTable::ArrayStats& st, int which, std::string* out) {
  const char* name = which == 0 ? "main hash table" : "rehashing target";
  if (st.elements == 0) {
    *out += fmt::format("Hash table {} stats ({}):\nNo stats available for empty dictionaries\n", which, name);
    return;
  }
  *out += fmt::format(
      "Hash table {} stats ({}):\n table size: {}\n number of elements: {}\n different slots: {}\n"
      " max chain length: {}\n avg chain length (counted): {:.2f}\n avg chain length (computed): {:.2f}\n"
      " Chain length distribution:\n",
      which, name, st.size, st.elements, st.used_slots, st.max_chain,
      static_cast<float>(st.elements) / static_cast<float>(st.used_slots),
      static_cast<float>(st.elements) / static_cast<float>(st.used_slots));
  for (size_t len = 0; len + 1 < std::size(st.chain_counts); len++) {
    if (st.chain_counts[len] == 0) continue;
    *out += fmt::format("   {}: {} ({:.2f}%)\n", len, st.chain_counts[len],
                        static_cast<float>(st.chain_counts[len]) / static_cast<float>(st.size) * 100);
  }
}

// DEBUG HTSTATS <dbid>: the keyspace table's shape, as Redis prints its dicts.
// Expire times live in the keys' entries here, not in a second table.
void DebugHtStats(CommandContext& ctx) {
  int64_t dbid;
  if (!ctx.IntArg(2, &dbid)) return;
  if (dbid < 0 || dbid >= ctx.server.dataset().num_dbs()) return ctx.Error("ERR Out of range database");
  const Database& db = ctx.server.dataset().db(static_cast<int>(dbid));
  std::string out = "[Dictionary HT]\n";
  AppendTableStats(db.TableStats(0), 0, &out);
  if (db.rehashing()) AppendTableStats(db.TableStats(1), 1, &out);
  out += "[Expires HT]\nNo separate table: expire times are kept in the keys' entries\n";
  ctx.reply.Verbatim(out);
}

void Debug(CommandContext& ctx) {
  std::string_view sub = ctx.arg(1);
  if (EqualsIgnoreCase(sub, "HELP")) {
    ctx.reply.ArrayHeader(std::size(kDebugHelp));
    for (auto line : kDebugHelp) ctx.reply.Simple(line);
    return;
  }
  if (EqualsIgnoreCase(sub, "DIGEST") && ctx.argc() == 2) {
    DebugDigest(ctx);
    return;
  }
  if (EqualsIgnoreCase(sub, "DIGEST-VALUE")) {
    ctx.reply.ArrayHeader(ctx.argc() - 2);
    for (size_t i = 2; i < ctx.argc(); i++) {
      ctx.reply.Simple(rdb::KeyDigestHex(ctx.db().Find(ctx.arg(i))));  // logically expired keys too, as Redis
    }
    return;
  }
  if (EqualsIgnoreCase(sub, "RELOAD")) {
    bool save = true, flush = true, merge = false;
    for (size_t i = 2; i < ctx.argc(); i++) {
      if (EqualsIgnoreCase(ctx.arg(i), "NOSAVE")) {
        save = false;
      } else if (EqualsIgnoreCase(ctx.arg(i), "NOFLUSH")) {
        flush = false;
      } else if (EqualsIgnoreCase(ctx.arg(i), "MERGE")) {
        merge = true;
      } else {
        return ctx.Error(protocol::err::kDebugReloadOption);
      }
    }
    Persistence* p = Get(ctx);
    if (p == nullptr) return;
    Status s = p->Reload(save, flush, merge);
    if (!s.ok()) return ctx.Error(protocol::err::kReloadFailedPrefix + s.ToString());
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "SLEEP") && ctx.argc() == 3) {
    // Blocks the command thread on purpose, as Redis. The argument is read as
    // Redis's strtod (text after the number ignored, none = 0). A duration that
    // is not a positive count of microseconds below 2^63 (negative, nan, inf,
    // 1e300) does not sleep: Redis's cast of those is undefined, and on x86-64
    // nanosleep refuses the result, so it replies +OK at once; so does feedkv.
    const double us = std::strtod(std::string(ctx.arg(2)).c_str(), nullptr) * 1e6;
    if (us >= 1 && us < 0x1p63) std::this_thread::sleep_for(std::chrono::microseconds(static_cast<int64_t>(us)));
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "SET-ACTIVE-EXPIRE") && ctx.argc() == 3) {
    // Redis reads it with atoi: anything but a leading non-zero number is 0.
    ctx.server.set_active_expire(std::atoi(std::string(ctx.arg(2)).c_str()) != 0);
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "CONFIG-REWRITE-FORCE-ALL") && ctx.argc() == 2) {
    Status s = ctx.server.RewriteConfig(/*force_all=*/true);
    if (!s.ok()) return ctx.Error(protocol::err::kErrPrefix + std::string("CONFIG-REWRITE-FORCE-ALL failed: ") + s.message());
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "SET-DISABLE-DENY-SCRIPTS") && ctx.argc() == 3) {
    ctx.server.set_script_deny_disabled(std::atoi(std::string(ctx.arg(2)).c_str()) != 0);
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "COLD-DELAY") && ctx.argc() == 3) {
    // feedkv's: every cold read batch sleeps this long first (tests of the
    // hot path's independence from disk speed).
    int64_t ms;
    if (!ctx.IntArg(2, &ms)) return;
    if (ms < 0 || ms > 60000) return ctx.Error(protocol::err::kOutOfRange);
    if (ColdTier* cold = ctx.server.cold_tier()) cold->set_read_delay_ms(ms);
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "QUICKLIST-PACKED-THRESHOLD") && ctx.argc() == 3) {
    int64_t bytes = 0;
    if (!ParseMemory(ctx.arg(2), &bytes) || bytes < 0 || !SetListPackedThreshold(static_cast<uint64_t>(bytes))) {
      return ctx.Error(protocol::err::kPackedThresholdRange);
    }
    ctx.reply.Ok();
    return;
  }
  if (EqualsIgnoreCase(sub, "PROTOCOL") && ctx.argc() == 3) return DebugProtocol(ctx);
  if (EqualsIgnoreCase(sub, "HTSTATS") && ctx.argc() == 3) return DebugHtStats(ctx);
  if (EqualsIgnoreCase(sub, "LOADAOF") && ctx.argc() == 2) return DebugLoadAof(ctx);
  if (EqualsIgnoreCase(sub, "POPULATE") && ctx.argc() >= 3 && ctx.argc() <= 5) return Populate(ctx);
  if (EqualsIgnoreCase(sub, "OBJECT") && ctx.argc() == 3) {
    // The key as stored, expired or not (Redis's dictFind): looking must not delete it.
    const Entry* e = ctx.db().Find(ctx.arg(2));
    if (e == nullptr) return ctx.Error(protocol::err::kNoSuchKey);
    std::string_view enc = "embstr";
    if (e->type != ValueType::kString) {
      enc = Database::GetObject(e)->encoding();
    } else if (e->encoding == kEncInt) {
      enc = "int";
    } else if (e->encoding == kEncRaw || e->v.len > kEmbstrMax) {
      enc = "raw";
    }
    ctx.reply.Simple(fmt::format("Value at:{} refcount:1 encoding:{} serializedlength:{} lru:0 "
                                 "lru_seconds_idle:0",
                                 static_cast<const void*>(e), enc, Database::EntryMemory(e)));
    return;
  }
  ctx.Error(fmt::format(protocol::err::kUnknownDebugSubcommand,
                        sub));
}

const CommandSpec kCommands[] = {
    {"save", 1, kAdmin | kNoScript | kNoMulti, 0, 0, 0, Save, "Synchronously save the dataset to disk",
     "server"},
    {"bgsave", -1, kAdmin | kNoScript, 0, 0, 0, BgSave,
     "Asynchronously save the dataset to disk", "server"},
    {"bgrewriteaof", 1, kAdmin | kNoScript, 0, 0, 0, BgRewriteAof,
     "Asynchronously rewrite the append-only file",
     "server"},
    {"lastsave", 1, kFast | kLoading | kStale | kAclAdmin | kAclDangerous, 0, 0, 0, LastSave,
     "Get the UNIX time stamp of the last successful save to disk", "server"},
    {"debug", -2, kAdmin | kNoScript | kLoading | kStale | kProtected, 0, 0, 0, Debug,
     "A container for debugging commands", "server"},
};

}  // namespace

std::span<const CommandSpec> PersistenceCommands() { return kCommands; }

}  // namespace feedkv::server
