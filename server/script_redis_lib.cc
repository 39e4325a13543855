// The `redis` Lua library scripts call: redis.call / pcall run a command,
// error_reply / status_reply build replies, sha1hex, log, setresp, set_repl,
// replicate_commands, acl_check_cmd, breakpoint / debug (no debugger: they do
// nothing), and the LOG_* / REPL_* / REDIS_VERSION constants. Redis 7.0's
// names, arguments and error texts.
//
// Lua reports errors with longjmp, which skips C++ destructors: every function
// here does its C++ work inside a block, leaves the result on the Lua stack,
// and raises only after the block has ended.
#include <charconv>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

extern "C" {
#include <lua5.1/lauxlib.h>
#include <lua5.1/lua.h>
}

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/replication/replication.h"
#include "server/script_engine.h"
#include "server/script_values.h"
#include "server/server.h"
#include "server/sha1.h"
#include "server/startup.h"

namespace feedkv::server {

namespace {

ScriptEngine* EngineOf(lua_State* L) {
  return static_cast<ScriptEngine*>(lua_touserdata(L, lua_upvalueindex(1)));
}

// Raises {err="ERR <text>"} (text without a dash gets "ERR ").
int RaiseError(lua_State* L, const char* text) {
  PushErrorTable(L, text);
  return lua_error(L);
}

enum class CallOutcome { kReply, kError, kCommandError };

// A number argument as Redis formats it ("%.17g", not Lua's tostring) into
// `out` (32 bytes); returns its length. Integral values below 1e17, which
// "%.17g" prints as plain digits, skip printf: formatting them was a fifth of
// a 10-call script's server time.
size_t FormatCallNumber(double d, char* out) {
  if (d == std::floor(d) && std::fabs(d) < 1e17 && !(d == 0 && std::signbit(d))) {
    return static_cast<size_t>(std::to_chars(out, out + 32, static_cast<int64_t>(d)).ptr - out);
  }
  return static_cast<size_t>(std::snprintf(out, 32, "%.17g", d));
}

// Runs argv as the script's command. Leaves the reply (or an error table) on
// the Lua stack.
CallOutcome RunCommand(lua_State* L, ScriptEngine& engine, std::span<const std::string_view> argv) {
  Server& server = engine.server();
  ScriptEngine::RunState& run = *engine.running();
  const CommandSpec* spec = server.table().Lookup(argv);
  // The arguments leave Lua's stack before the result is pushed (the views in
  // argv are not read after that), so a call with as many arguments as the
  // stack holds (unpack of 7999 values) still has room for its reply, as Redis.
  auto refuse = [&](std::string_view text) {
    lua_settop(L, 0);
    PushErrorTable(L, text);
    return CallOutcome::kError;
  };
  if (spec == nullptr) return refuse(protocol::err::kScriptUnknownCommand);
  const int argc = static_cast<int>(argv.size());
  if ((spec->arity > 0 && argc != spec->arity) || (spec->arity < 0 && argc < -spec->arity)) {
    return refuse(protocol::err::kScriptWrongArity);
  }
  if ((spec->flags & (kNoScript | kProtected)) && !server.script_deny_disabled()) {
    return refuse(protocol::err::kScriptNotAllowed);
  }
  // The caller's ACL user, as Redis's scriptVerifyACL (logged with context "lua").
  if (const AclUser* user = engine.client().user; user != nullptr && !user->unrestricted) {
    int idx = 0;
    AclResult r = server.acl().Check(*user, *spec, argv, &idx);
    if (r != AclResult::kOk) {
      std::string object = r == AclResult::kDeniedCommand ? std::string(spec->name) : std::string(argv[idx]);
      server.LogAclDenial(engine.client(), r, std::move(object), {}, "lua");
      std::string_view why = r == AclResult::kDeniedKey       ? protocol::err::kAclCantAccessKeys
                             : r == AclResult::kDeniedChannel ? protocol::err::kAclCantPublish
                                                              : protocol::err::kAclCantRun;
      return refuse(std::string(protocol::err::kScriptAclPrefix) + std::string(why));
    }
  }
  // A read-only script may not even publish (Redis counts may-replicate
  // commands as writes here, so such scripts also run during CLIENT PAUSE WRITE).
  if ((spec->flags & (kWrite | kMayReplicate)) && run.read_only) return refuse(protocol::err::kScriptReadOnly);
  if (spec->flags & kWrite) {
    if (server.replica_mode() && !run.caller->from_log) {
      return refuse(std::string("-") + protocol::err::kReadOnlyReplica);
    }
  }
  // Only a script that may run on a stale replica (allow-stale) gets here
  // then; of its calls, only commands flagged stale run (Redis's
  // scriptVerifyAllowStale).
  if (!(spec->flags & kStale) && server.replica_mode() && !run.caller->from_log &&
      server.replication() != nullptr && !server.replication()->ServesStaleData()) {
    return refuse(protocol::err::kScriptStaleReplica);
  }
  // As Redis's scriptVerifyOOM: a deny-oom command is refused when memory was
  // over the limit as the script began, unless the script already wrote.
  if ((spec->flags & kDenyOom) && server.oom_at_command_start() && !run.wrote && !run.allow_oom) {
    return refuse(std::string("-") + protocol::err::kOom);
  }
  Client& client = engine.client();
  client.out.clear();
  server.Call(client, *spec, argv);
  lua_settop(L, 0);
  if (spec->flags & kWrite) run.wrote = true;
  const std::string& reply = client.out;
  if (!reply.empty() && reply[0] == '-') {
    PushReplyAsLua(L, reply);
    // The command counted its error: the script's reply of it does not again.
    lua_pushboolean(L, 1);
    lua_setfield(L, -2, "ignore_error_stats_update");
    client.out.clear();
    return CallOutcome::kCommandError;
  }
  PushReplyAsLua(L, reply);
  client.out.clear();
  return CallOutcome::kReply;
}

// redis.call (raise = true) and redis.pcall.
int GenericCall(lua_State* L, bool raise) {
  ScriptEngine* engine = EngineOf(L);
  const int argc = lua_gettop(L);
  if (argc == 0) return RaiseError(L, protocol::err::kScriptNoArgs);
  for (int i = 1; i <= argc; i++) {
    const int t = lua_type(L, i);
    if (t != LUA_TSTRING && t != LUA_TNUMBER) {
      PushErrorTable(L, protocol::err::kScriptArgType);
      return raise ? lua_error(L) : 1;
    }
  }
  CallOutcome outcome;
  {
    // The arguments as views: a string's bytes stay where Lua keeps them (the
    // values are on this call's stack, so no collection can move or free
    // them); a number is formatted into `numbers`, sized first so the views
    // stay put. Both buffers live on, so a call allocates nothing once warm;
    // redis.call never re-enters itself (EVAL and FCALL are noscript).
    thread_local std::vector<std::string_view> argv;
    thread_local std::vector<char> numbers;
    constexpr size_t kNumberBytes = 32;
    argv.clear();
    if (numbers.size() < static_cast<size_t>(argc) * kNumberBytes) numbers.resize(static_cast<size_t>(argc) * kNumberBytes);
    for (int i = 1; i <= argc; i++) {
      if (lua_type(L, i) == LUA_TNUMBER) {
        char* out = numbers.data() + static_cast<size_t>(i - 1) * kNumberBytes;
        argv.emplace_back(out, FormatCallNumber(static_cast<double>(lua_tonumber(L, i)), out));
      } else {
        size_t n = 0;
        const char* s = lua_tolstring(L, i, &n);
        argv.emplace_back(s, n);
      }
    }
    outcome = RunCommand(L, *engine, argv);
  }
  if (outcome != CallOutcome::kReply && raise) return lua_error(L);
  return 1;
}

int Call(lua_State* L) { return GenericCall(L, true); }
int PCall(lua_State* L) { return GenericCall(L, false); }

int ErrorReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);
  {
    std::string text(s, n);
    if (text.empty() || text[0] != '-') text.insert(0, "-");
    PushErrorTable(L, text);
  }
  return 1;
}

int StatusReply(lua_State* L) {
  if (lua_gettop(L) != 1 || lua_type(L, 1) != LUA_TSTRING) {
    PushErrorTable(L, "wrong number or type of arguments");
    return 1;
  }
  lua_newtable(L);
  lua_pushvalue(L, 1);
  lua_setfield(L, -2, "ok");
  return 1;
}

int Sha1(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "wrong number of arguments");
  size_t n = 0;
  const char* s = lua_tolstring(L, 1, &n);
  char hex[41];
  {
    std::string digest = Sha1Hex(std::string_view(s != nullptr ? s : "", s != nullptr ? n : 0));
    digest.copy(hex, 40);
    hex[40] = '\0';
  }
  lua_pushstring(L, hex);
  return 1;
}

int Log(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc < 2) return RaiseError(L, "redis.log() requires two arguments or more.");
  if (!lua_isnumber(L, 1)) return RaiseError(L, "First argument must be a number (log level).");
  const lua_Number level = lua_tonumber(L, 1);
  if (level < 0 || level > 3) return RaiseError(L, "Invalid debug level.");
  {
    std::string line;
    for (int i = 2; i <= argc; i++) {
      size_t n = 0;
      const char* s = lua_tolstring(L, i, &n);
      if (s == nullptr) continue;
      if (i != 2) line.push_back(' ');
      line.append(s, n);
    }
    EngineOf(L)->server().Log(static_cast<int>(level), line);
  }
  return 0;
}

int SetResp(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "redis.setresp() requires one argument.");
  const lua_Number resp = lua_tonumber(L, 1);
  if (resp != 2 && resp != 3) return RaiseError(L, "RESP version must be 2 or 3.");
  ScriptEngine* engine = EngineOf(L);
  engine->running()->resp = static_cast<int>(resp);
  engine->client().resp = static_cast<int>(resp);
  return 0;
}

// Accepted as Redis's; every write of a script is logged (docs/scripting.md).
int SetRepl(lua_State* L) {
  if (lua_gettop(L) != 1) return RaiseError(L, "redis.set_repl() requires one argument.");
  const lua_Number flags = lua_tonumber(L, 1);
  if (flags < 0 || flags > 3 || flags != static_cast<int>(flags)) {
    return RaiseError(L, "Invalid replication flags. Use REPL_AOF, REPL_REPLICA, REPL_ALL or REPL_NONE.");
  }
  return 0;
}

int ReplicateCommands(lua_State* L) {
  lua_pushboolean(L, 1);
  return 1;
}

// Whether the caller's ACL user may run the command with these arguments.
int AclCheckCmd(lua_State* L) {
  const int argc = lua_gettop(L);
  const CommandSpec* spec = nullptr;
  std::vector<std::string> args;
  if (argc >= 1 && lua_type(L, 1) == LUA_TSTRING) {
    for (int i = 1; i <= argc; i++) {
      size_t len = 0;
      const char* s = lua_tolstring(L, i, &len);
      args.emplace_back(s != nullptr ? std::string(s, len) : std::string());
    }
    std::vector<std::string_view> argv(args.begin(), args.end());
    spec = EngineOf(L)->server().table().Lookup(argv);
  }
  if (spec == nullptr) return RaiseError(L, "Invalid command passed to redis.acl_check_cmd()");
  ScriptEngine& engine = *EngineOf(L);
  const AclUser* user = engine.client().user;
  bool allowed = true;
  if (user != nullptr && !user->unrestricted) {
    std::vector<std::string_view> argv(args.begin(), args.end());
    int idx = 0;
    allowed = engine.server().acl().Check(*user, *spec, argv, &idx) == AclResult::kOk;
  }
  lua_pushboolean(L, allowed ? 1 : 0);
  return 1;
}

int Breakpoint(lua_State* L) {
  lua_pushboolean(L, 0);
  return 1;
}

int Debug(lua_State*) { return 0; }

}  // namespace

void OpenRedisLibrary(lua_State* L, ScriptEngine* engine) {
  lua_newtable(L);
  const std::pair<const char*, lua_CFunction> functions[] = {
      {"call", Call},
      {"pcall", PCall},
      {"error_reply", ErrorReply},
      {"status_reply", StatusReply},
      {"sha1hex", Sha1},
      {"log", Log},
      {"setresp", SetResp},
      {"set_repl", SetRepl},
      {"replicate_commands", ReplicateCommands},
      {"acl_check_cmd", AclCheckCmd},
      {"breakpoint", Breakpoint},
      {"debug", Debug},
  };
  for (const auto& [name, fn] : functions) {
    lua_pushlightuserdata(L, engine);
    lua_pushcclosure(L, fn, 1);
    lua_setfield(L, -2, name);
  }
  const std::pair<const char*, int> constants[] = {
      {"LOG_DEBUG", 0},   {"LOG_VERBOSE", 1}, {"LOG_NOTICE", 2},   {"LOG_WARNING", 3},
      {"REPL_NONE", 0},   {"REPL_AOF", 1},    {"REPL_SLAVE", 2},   {"REPL_REPLICA", 2},
      {"REPL_ALL", 3},
  };
  for (const auto& [name, value] : constants) {
    lua_pushinteger(L, value);
    lua_setfield(L, -2, name);
  }
  lua_pushstring(L, kRedisCompatVersion);
  lua_setfield(L, -2, "REDIS_VERSION");
  int major = 0, minor = 0, patch = 0;
  std::sscanf(kRedisCompatVersion, "%d.%d.%d", &major, &minor, &patch);
  lua_pushinteger(L, (major << 16) | (minor << 8) | patch);
  lua_setfield(L, -2, "REDIS_VERSION_NUM");
  lua_setglobal(L, "redis");
}

}  // namespace feedkv::server
