// ScriptEngine: the Lua state, its sandbox, the script cache and EVAL's run.
// See script_engine.h; the `redis` library is in script_redis_lib.cc and the
// value conversions in script_values.cc.
#include "server/script_engine.h"

#include <cstdlib>
#include <cstring>
#include <fmt/format.h>

extern "C" {
#include <lua5.1/lauxlib.h>
#include <lua5.1/lua.h>
#include <lua5.1/lualib.h>
#include <lua5.1/lua-bitop.h>
#include <lua5.1/lua-cjson.h>
}

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/monotonic_clock.h"
#include "server/script_values.h"
#include "server/server.h"
#include "server/sha1.h"

namespace feedkv::server {

namespace {

// Registry key of the set of read-only proxies (rawset refuses them).
constexpr char kReadonlySet[] = "feedkv_readonly_tables";

int ReadonlyError(lua_State* L) { return luaL_error(L, "Attempt to modify a readonly table"); }

// A global nobody defined: an error for scripts, nil for C code (libraries
// probing for optional globals), as Redis's strict globals.
int MissingGlobal(lua_State* L) {
  lua_Debug ar;
  if (lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "S", &ar) != 0 && std::strcmp(ar.what, "C") != 0) {
    return luaL_error(L, "Script attempted to access nonexistent global variable '%s'",
                      lua_tostring(L, 2) != nullptr ? lua_tostring(L, 2) : "?");
  }
  return 0;
}

bool IsReadonly(lua_State* L, int idx) {
  if (idx < 0) idx = lua_gettop(L) + idx + 1;
  lua_getfield(L, LUA_REGISTRYINDEX, kReadonlySet);
  lua_pushvalue(L, idx);
  lua_rawget(L, -2);
  const bool readonly = lua_toboolean(L, -1) != 0;
  lua_pop(L, 2);
  return readonly;
}

// rawset, refusing the read-only proxies (as Redis's read-only tables do).
int ProtectedRawset(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  luaL_checkany(L, 2);
  luaL_checkany(L, 3);
  if (IsReadonly(L, 1)) {
    lua_pushstring(L, "Attempt to modify a readonly table");
    return lua_error(L);
  }
  lua_settop(L, 3);
  lua_rawset(L, 1);
  return 1;
}

// setmetatable, refusing the read-only proxies with Redis's text (its
// read-only tables refuse a new metatable the same way).
int ProtectedSetmetatable(lua_State* L) {
  luaL_checktype(L, 1, LUA_TTABLE);
  if (IsReadonly(L, 1)) {
    lua_pushstring(L, "Attempt to modify a readonly table");  // no position, as Redis's
    return lua_error(L);
  }
  lua_pushvalue(L, lua_upvalueindex(1));  // the original setmetatable
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, 1);
  return 1;
}

// getmetatable, answering nil for a hidden metatable (Lua answers the
// __metatable field, false here) as for Redis's read-only tables.
int HidingGetmetatable(lua_State* L) {
  luaL_checkany(L, 1);
  lua_pushvalue(L, lua_upvalueindex(1));  // the original getmetatable
  lua_pushvalue(L, 1);
  lua_call(L, 1, 1);
  if (lua_isboolean(L, -1) && lua_toboolean(L, -1) == 0) {
    lua_pop(L, 1);
    lua_pushnil(L);
  }
  return 1;
}

// Pushes a proxy of the table at `idx`: reads go to it, writes fail. Its
// metatable is hidden (getmetatable answers nil, as for Redis's read-only
// library tables), or with show_metatable (the globals, whose metatable
// Redis shows) a read-only view of it, so `getmetatable(_G).__index = ...`
// fails the same way.
void PushReadonlyProxy(lua_State* L, int idx, bool show_metatable = false) {
  if (idx < 0) idx = lua_gettop(L) + idx + 1;
  lua_newtable(L);                      // the proxy
  lua_newtable(L);                      // its metatable
  lua_pushvalue(L, idx);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  if (show_metatable) {
    PushReadonlyProxy(L, -1, false);
  } else {
    lua_pushboolean(L, 0);
  }
  lua_setfield(L, -2, "__metatable");
  lua_setmetatable(L, -2);
  lua_getfield(L, LUA_REGISTRYINDEX, kReadonlySet);
  lua_pushvalue(L, -2);
  lua_pushboolean(L, 1);
  lua_rawset(L, -3);
  lua_pop(L, 1);
}

// loadstring that refuses binary chunks (they start with LUA_SIGNATURE's
// escape byte); text goes to the original, upvalue 1.
int TextOnlyLoadstring(lua_State* L) {
  size_t n = 0;
  const char* code = luaL_checklstring(L, 1, &n);
  if (n > 0 && code[0] == LUA_SIGNATURE[0]) {
    lua_pushnil(L);
    lua_pushstring(L, "attempt to load a binary chunk");
    return 2;
  }
  lua_pushvalue(L, lua_upvalueindex(1));
  lua_insert(L, 1);
  lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
  return lua_gettop(L);
}

// pcall as Redis 7.0 gives scripts: an error table with a string `err` is
// returned as that string, so scripts see redis.call's errors as text.
int ScriptPcall(lua_State* L) {
  luaL_checkany(L, 1);
  const int argc = lua_gettop(L);
  lua_pushboolean(L, 1);
  lua_insert(L, 1);
  if (lua_pcall(L, argc - 1, LUA_MULTRET, 0) != 0) {
    lua_remove(L, 1);
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) {
        lua_replace(L, -2);
      } else {
        lua_pop(L, 1);
      }
    }
    lua_pushboolean(L, 0);
    lua_insert(L, 1);
  }
  return lua_gettop(L);
}

// The handler of a script's pcall: turns any error into a table {err=...}
// (a plain message gets "ERR "), noting the script line it came from.
int ErrorHandler(lua_State* L) {
  lua_Debug ar;
  bool where = lua_getstack(L, 1, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0;
  if (where && std::strcmp(ar.what, "C") == 0) {
    where = lua_getstack(L, 2, &ar) != 0 && lua_getinfo(L, "nSl", &ar) != 0;
  }
  if (!lua_istable(L, 1)) {
    lua_getglobal(L, "tostring");
    lua_pushvalue(L, 1);
    lua_call(L, 1, 1);
    lua_pushfstring(L, "ERR %s", lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "?");
    lua_newtable(L);
    lua_insert(L, -2);
    lua_setfield(L, -2, "err");
    lua_replace(L, 1);
    lua_settop(L, 1);
  }
  if (where && ar.currentline > 0) {
    lua_pushstring(L, ar.source);
    lua_setfield(L, 1, "source");
    lua_pushinteger(L, ar.currentline);
    lua_setfield(L, 1, "line");
  }
  return 1;
}

}  // namespace

namespace {

// The registry key (its address) under which an interpreter keeps its engine,
// so the count hook finds it without a global.
const char kEngineKey = 0;

// Every 100,000 instructions: a script past busy-reply-threshold lets other
// clients in (they get -BUSY) and stops if SCRIPT KILL or SHUTDOWN asked.
void CountHook(lua_State* L, lua_Debug*) {
  lua_pushlightuserdata(L, const_cast<char*>(&kEngineKey));
  lua_rawget(L, LUA_REGISTRYINDEX);
  auto* engine = static_cast<ScriptEngine*>(lua_touserdata(L, -1));
  lua_pop(L, 1);
  if (engine == nullptr || !engine->running_lua() || !engine->CheckBusy()) return;
  // From now on the hook fires on every line, so a script that catches the
  // error with pcall meets it again at its next line outside (Redis's
  // luaMaskCountHook does the same); the run's end sets the hook back.
  lua_sethook(L, CountHook, LUA_MASKLINE | LUA_MASKCOUNT, 1);
  PushErrorTable(L, engine->loading() ? std::string("FUNCTION LOAD timeout")
                                      : std::string("-") + protocol::err::kScriptKilled);
  lua_error(L);
}

void OpenLibrary(lua_State* L, lua_CFunction open, const char* name) {
  lua_pushcfunction(L, open);
  lua_pushstring(L, name);
  lua_call(L, 1, 0);
}

}  // namespace

bool ApplyScriptFlag(std::string_view flag, ScriptFlags* flags) {
  if (flag == "no-writes") {
    flags->no_writes = true;
  } else if (flag == "allow-oom") {
    flags->allow_oom = true;
  } else if (flag == "allow-stale") {
    flags->allow_stale = true;
  } else if (flag == "no-cluster") {
    flags->no_cluster = true;
  } else if (flag == "allow-cross-slot-keys") {
    flags->allow_cross_slot_keys = true;
  } else {
    return false;
  }
  return true;
}

bool ParseShebang(std::string_view body, ScriptFlags* flags, std::string* error) {
  *flags = ScriptFlags{};
  if (!body.starts_with("#!")) return true;
  flags->shebang = true;
  std::string_view line = body.substr(0, body.find('\n'));
  std::string_view rest = line;
  std::string_view engine = rest.substr(0, rest.find(' '));
  if (engine != "#!lua") {
    *error = fmt::format(protocol::err::kScriptShebangEngine, engine);
    return false;
  }
  rest.remove_prefix(engine.size());
  while (!rest.empty()) {
    while (!rest.empty() && rest.front() == ' ') rest.remove_prefix(1);
    if (rest.empty()) break;
    std::string_view part = rest.substr(0, rest.find(' '));
    rest.remove_prefix(part.size());
    if (!part.starts_with("flags=")) {
      *error = fmt::format(protocol::err::kScriptShebangOption, part);
      return false;
    }
    std::string_view list = part.substr(6);
    while (!list.empty()) {
      std::string_view f = list.substr(0, list.find(','));
      list.remove_prefix(std::min(list.size(), f.size() + 1));
      if (!ApplyScriptFlag(f, flags)) {
        *error = fmt::format(protocol::err::kScriptShebangFlag, f);
        return false;
      }
    }
  }
  return true;
}

ScriptEngine::ScriptEngine(Server& server) : server_(server) {
  client_.authenticated = true;
  client_.addr = "lua";
  Open();
  server_.AddConfigHook([this](const std::string& name) {
    if (name == "busy-reply-threshold" || name == "lua-time-limit") busy_threshold_ms_ = -1;
  });
}

ScriptEngine::~ScriptEngine() { Close(); }

void ScriptEngine::Open() {
  lua_State* L = luaL_newstate();
  L_ = L;
  lua_pushlightuserdata(L, const_cast<char*>(&kEngineKey));
  lua_pushlightuserdata(L, this);
  lua_rawset(L, LUA_REGISTRYINDEX);
  OpenLibrary(L, luaopen_base, "");
  OpenLibrary(L, luaopen_table, LUA_TABLIBNAME);
  OpenLibrary(L, luaopen_string, LUA_STRLIBNAME);
  OpenLibrary(L, luaopen_math, LUA_MATHLIBNAME);
  OpenLibrary(L, luaopen_bit, "bit");
  lua_pushcfunction(L, luaopen_cjson);
  lua_call(L, 0, 1);
  lua_setglobal(L, "cjson");
  // What Redis leaves out of the base library.
  for (const char* name : {"print", "dofile", "loadfile", "newproxy"}) {
    lua_pushnil(L);
    lua_setglobal(L, name);
  }
  lua_pushcfunction(L, ScriptPcall);
  lua_setglobal(L, "pcall");
  // loadstring of precompiled bytecode is refused (bytecode can break the
  // sandbox), as Redis 7.0's: it returns nil and a message.
  lua_getglobal(L, "loadstring");
  lua_pushcclosure(L, TextOnlyLoadstring, 1);
  lua_setglobal(L, "loadstring");
  lua_pushcfunction(L, ProtectedRawset);
  lua_setglobal(L, "rawset");
  lua_getglobal(L, "setmetatable");
  lua_pushcclosure(L, ProtectedSetmetatable, 1);
  lua_setglobal(L, "setmetatable");
  lua_getglobal(L, "getmetatable");
  lua_pushcclosure(L, HidingGetmetatable, 1);
  lua_setglobal(L, "getmetatable");
  OpenRedisLibrary(L, this);
  OpenCmsgpackLibrary(L);
  OpenStructLibrary(L);

  lua_newtable(L);
  lua_newtable(L);
  lua_pushstring(L, "k");
  lua_setfield(L, -2, "__mode");
  lua_setmetatable(L, -2);
  lua_setfield(L, LUA_REGISTRYINDEX, kReadonlySet);

  // Libraries become read-only proxies, then the globals table itself: the
  // real table R keeps every value (and KEYS/ARGV, set from C); scripts see a
  // proxy whose reads fall through to R and whose writes fail. A global R
  // lacks is an error (MissingGlobal).
  for (const char* lib : {"string", "table", "math", "bit", "cjson", "cmsgpack", "struct", "redis", "coroutine"}) {
    lua_getglobal(L, lib);
    if (lua_istable(L, -1)) {
      PushReadonlyProxy(L, -1);
      lua_setglobal(L, lib);
    }
    lua_pop(L, 1);
  }
  lua_pushvalue(L, LUA_GLOBALSINDEX);  // R
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  PushReadonlyProxy(L, -1, /*show_metatable=*/true);  // R, proxy
  lua_pushvalue(L, -1);
  lua_setfield(L, -3, "_G");           // R._G = proxy
  lua_pushvalue(L, -2);
  globals_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_replace(L, LUA_GLOBALSINDEX);    // chunks and C functions now see the proxy
  lua_pop(L, 1);

  lua_newtable(L);
  scripts_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  // Functions: callbacks by name, and what a library's code sees while it
  // loads (server/script_functions.cc): a `redis` with register_function, log
  // and the constants only (anything else is an error, as Redis), in front of
  // the globals.
  lua_newtable(L);
  functions_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_newtable(L);                                   // B
  lua_newtable(L);                                   // B, T
  lua_pushlightuserdata(L, this);
  lua_pushcclosure(L, RegisterFunctionLua, 1);
  lua_setfield(L, -2, "register_function");
  lua_getglobal(L, "redis");
  for (const char* name : {"log", "LOG_DEBUG", "LOG_VERBOSE", "LOG_NOTICE", "LOG_WARNING", "REDIS_VERSION",
                           "REDIS_VERSION_NUM"}) {
    lua_getfield(L, -1, name);
    lua_setfield(L, -3, name);
  }
  lua_pop(L, 1);
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_pushcfunction(L, ReadonlyError);
  lua_setfield(L, -2, "__newindex");
  lua_setmetatable(L, -2);
  lua_setfield(L, -2, "redis");                      // B.redis = T
  // Library code sees nothing else while it loads (math, string... are the
  // callbacks' when they run), as Redis's LIBRARY_API globals.
  lua_newtable(L);
  lua_pushcfunction(L, MissingGlobal);
  lua_setfield(L, -2, "__index");
  lua_setmetatable(L, -2);
  load_api_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_pushcfunction(L, ErrorHandler);
  handler_ref_ = luaL_ref(L, LUA_REGISTRYINDEX);
  RestoreCountHook();
}

void ScriptEngine::RestoreCountHook() { lua_sethook(L_, CountHook, LUA_MASKCOUNT, 100000); }

void ScriptEngine::Close() {
  if (L_ != nullptr) lua_close(L_);
  L_ = nullptr;
  scripts_.clear();
  body_bytes_ = 0;
}

void ScriptEngine::Flush() {
  Close();
  Open();
  ReloadLibraries();
}

size_t ScriptEngine::lua_memory() const {
  return static_cast<size_t>(lua_gc(L_, LUA_GCCOUNT, 0)) * 1024 + static_cast<size_t>(lua_gc(L_, LUA_GCCOUNTB, 0));
}

int64_t ScriptEngine::running_ms() const { return (MonotonicClock::NowNs() - start_ns_) / 1000000; }

bool ScriptEngine::CheckBusy() {
  const int64_t now = MonotonicClock::NowNs();
  // A library's code gets half a second to register its functions, as Redis.
  if (loading_) return now > load_deadline_ns_;
  if (busy_after_ms_ <= 0 || (now - start_ns_) / 1000000 < busy_after_ms_) return false;
  if (!busy_) {
    busy_ = true;
    last_served_ns_ = 0;
    server_.Log(3, fmt::format("Slow script detected: still in execution after {} milliseconds. "
                               "You can try killing the script using the SCRIPT KILL command. "
                               "Script name is: {}.",
                               (now - start_ns_) / 1000000, run_.sha));
  }
  // Serve other clients at most once a millisecond: each pass reads every socket.
  if (now - last_served_ns_ >= 1000000) {
    last_served_ns_ = now;
    server_.ServeClientsWhileBusy();
  }
  return kill_requested_ || server_.shutting_down();
}

std::string_view ScriptEngine::Kill() {
  if (!busy_) return protocol::err::kNotBusy;
  if (run_.wrote) return protocol::err::kUnkillable;
  kill_requested_ = true;
  return {};
}

namespace {

// `sha` lower-cased into `out` (40 bytes); false when it cannot be a SHA-1.
bool LowerSha(std::string_view sha, char* out) {
  if (sha.size() != 40) return false;
  for (size_t i = 0; i < 40; i++) out[i] = LowerAscii(sha[i]);
  return true;
}

}  // namespace

bool ScriptEngine::Exists(std::string_view sha) const {
  char lower[40];
  return LowerSha(sha, lower) && scripts_.contains(std::string_view(lower, 40));
}

bool ScriptEngine::Load(std::string_view body, std::string* sha, std::string* error) {
  *sha = Sha1Hex(body);
  if (scripts_.contains(*sha)) return true;
  ScriptFlags flags;
  if (!ParseShebang(body, &flags, error)) return false;
  // The shebang line stays a line (an empty one) so error lines match the body's.
  std::string source(body);
  if (flags.shebang) source.replace(0, std::min(source.size(), source.find('\n')), "");
  if (luaL_loadbuffer(L_, source.data(), source.size(), "@user_script") != 0) {
    *error = fmt::format(protocol::err::kScriptCompile, lua_tostring(L_, -1));
    lua_pop(L_, 1);
    return false;
  }
  lua_rawgeti(L_, LUA_REGISTRYINDEX, scripts_ref_);
  lua_insert(L_, -2);
  lua_setfield(L_, -2, sha->c_str());
  lua_pop(L_, 1);
  scripts_.emplace(*sha, flags);
  body_bytes_ += body.size();
  return true;
}

namespace {

// Sets the real global `name` to an array of `items` (KEYS, ARGV).
void SetArrayGlobal(lua_State* L, const char* name, std::span<const std::string_view> items) {
  lua_createtable(L, static_cast<int>(items.size()), 0);
  for (size_t i = 0; i < items.size(); i++) {
    lua_pushlstring(L, items[i].data(), items[i].size());
    lua_rawseti(L, -2, static_cast<int>(i + 1));
  }
  lua_setfield(L, -2, name);
}

}  // namespace

bool ScriptEngine::Run(CommandContext& ctx, std::string_view sha_any_case, std::span<const std::string_view> keys,
                       std::span<const std::string_view> argv, bool read_only) {
  char lower[41];
  if (!LowerSha(sha_any_case, lower)) return false;
  lower[40] = '\0';
  auto it = scripts_.find(std::string_view(lower, 40));
  if (it == scripts_.end()) return false;
  const ScriptFlags& flags = it->second;
  const char* sha = lower;
  Execute(ctx, std::string_view(lower, 40), read_only || flags.no_writes, flags.allow_oom, false, [&](lua_State* L) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
    SetArrayGlobal(L, "KEYS", keys);
    SetArrayGlobal(L, "ARGV", argv);
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, scripts_ref_);
    lua_getfield(L, -1, sha);
    lua_remove(L, -2);
    return 0;
  });
  return true;
}

void ScriptEngine::RunFunction(CommandContext& ctx, const FunctionInfo& f, std::span<const std::string_view> keys,
                               std::span<const std::string_view> argv, bool read_only) {
  // The function gets KEYS and ARGV as its two arguments, not as globals.
  Execute(ctx, f.name, read_only || f.flags.no_writes, f.flags.allow_oom, true, [&](lua_State* L) {
    lua_rawgeti(L, LUA_REGISTRYINDEX, functions_ref_);
    lua_getfield(L, -1, f.name.c_str());
    lua_remove(L, -2);
    for (auto items : {keys, argv}) {
      lua_createtable(L, static_cast<int>(items.size()), 0);
      for (size_t i = 0; i < items.size(); i++) {
        lua_pushlstring(L, items[i].data(), items[i].size());
        lua_rawseti(L, -2, static_cast<int>(i + 1));
      }
    }
    return 2;
  });
}

template <typename PushFn>
void ScriptEngine::Execute(CommandContext& ctx, std::string_view sha, bool read_only, bool allow_oom,
                           bool function, const PushFn& push) {
  lua_State* L = L_;
  // Field by field: the name's buffer is kept from the last run, so a run
  // allocates nothing for it.
  run_.caller = &ctx;
  run_.sha.assign(sha);
  run_.read_only = read_only;
  run_.allow_oom = allow_oom;
  run_.wrote = false;
  run_.resp = 2;
  run_.function = function;
  client_.db = ctx.client.db;
  client_.resp = 2;
  client_.script_caller = &ctx.client;
  client_.user = ctx.client.user;
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  const int nargs = push(L);
  caller_ = &ctx.client;
  start_ns_ = MonotonicClock::NowNs();
  start_unix_ms_ = ctx.now_ms();
  if (busy_threshold_ms_ < 0) {
    busy_threshold_ms_ = std::strtoll(server_.config().ValueOf("busy-reply-threshold").c_str(), nullptr, 10);
  }
  busy_after_ms_ = busy_threshold_ms_;
  running_lua_ = true;
  const int rc = lua_pcall(L, nargs, 1, -2 - nargs);
  running_lua_ = false;
  if (busy_) {
    busy_ = false;
    server_.Log(3, "Script returned after being busy; serving clients again.");
  }
  kill_requested_ = false;
  RestoreCountHook();
  if (rc == 0) {
    WriteLuaAsReply(L, -1, run_.resp, ctx.reply);
  } else if (lua_istable(L, -1)) {
    lua_getfield(L, -1, "err");
    std::string msg = lua_isstring(L, -1) ? lua_tostring(L, -1) : protocol::err::kScriptUnknownError;
    lua_getfield(L, -2, "source");
    lua_getfield(L, -3, "line");
    if (lua_isstring(L, -2) && lua_isnumber(L, -1)) {
      msg += fmt::format(" script: {}, on {}:{}.", sha, lua_tostring(L, -2), lua_tointeger(L, -1));
    }
    lua_getfield(L, -4, "ignore_error_stats_update");
    const bool counted = lua_toboolean(L, -1) != 0;
    if (counted) {
      ctx.reply.ErrorVerbatim(msg);  // the command that failed counted it
    } else {
      ctx.ErrorVerbatim(msg);
    }
  } else {
    ctx.ErrorVerbatim(fmt::format(protocol::err::kScriptRunError, sha, lua_isstring(L, -1) ? lua_tostring(L, -1) : "?"));
  }
  lua_settop(L, 0);
  // KEYS and ARGV go, so a script's arguments are not kept alive until the next.
  lua_rawgeti(L, LUA_REGISTRYINDEX, globals_ref_);
  lua_pushnil(L);
  lua_setfield(L, -2, "KEYS");
  lua_pushnil(L);
  lua_setfield(L, -2, "ARGV");
  lua_pop(L, 1);
  run_.caller = nullptr;  // not running; run_.sha keeps its buffer for the next run
  caller_ = nullptr;
  client_.script_caller = nullptr;
  client_.user = nullptr;
  client_.out.clear();
}

}  // namespace feedkv::server
