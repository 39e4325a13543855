// Functions (Redis 7.0's FUNCTION LOAD / FCALL): a library is Lua code whose
// first line is "#!lua name=<library>"; running it registers functions with
// redis.register_function. The code runs once, at load, in an environment
// whose `redis` offers only register_function, log and the constants; the
// callbacks it registers keep that environment, which is then pointed at the
// ordinary globals (the full `redis`), as Redis swaps its library API for the
// runtime one. Globals stay read-only throughout.
//
// The callbacks live in the same interpreter as EVAL's scripts (registry table
// functions_ref_), so FCALL shares EVAL's run path: busy scripts, SCRIPT KILL,
// effects replication, ACL checks. SCRIPT FLUSH starts a fresh interpreter
// and loads the kept libraries' code into it again.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

extern "C" {
#include <lua5.1/lauxlib.h>
#include <lua5.1/lua.h>
}

#include "protocol/error_text.h"
#include "protocol/resp_parser.h"
#include "server/command_context.h"
#include "server/monotonic_clock.h"
#include "server/script_engine.h"
#include "server/script_values.h"
#include "server/server.h"

namespace feedkv::server {


namespace {

constexpr int64_t kLoadTimeoutNs = 500'000'000;  // Redis's LOAD_TIMEOUT_MS
constexpr char kPendingKey[] = "feedkv_pending_functions";

bool ValidName(std::string_view n) {
  if (n.empty()) return false;
  for (char c : n) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  }
  return true;
}

int Raise(lua_State* L, const std::string& text) {
  PushErrorTable(L, text);
  return lua_error(L);
}

// flags={'no-writes', ...} into *f; false on an unknown flag.
bool ParseFlags(lua_State* L, int idx, ScriptFlags* f) {
  f->shebang = true;
  if (!lua_istable(L, idx)) return false;
  for (int i = 1;; i++) {
    lua_rawgeti(L, idx, i);
    if (lua_isnil(L, -1)) {
      lua_pop(L, 1);
      return true;
    }
    std::string flag = lua_isstring(L, -1) ? lua_tostring(L, -1) : "";
    lua_pop(L, 1);
    if (!ApplyScriptFlag(flag, f)) return false;
  }
}

// Redis's functionExtractLibMetaData: "#!<engine> name=<library>".
bool ParseMetadata(std::string_view code, std::string* engine, std::string* name, std::string* error) {
  if (!code.starts_with("#!")) {
    *error = protocol::err::kFunctionMissingMetadata;
    return false;
  }
  size_t eol = code.find('\n');
  if (eol == std::string_view::npos) {
    *error = protocol::err::kFunctionInvalidMetadata;
    return false;
  }
  // Split as sdssplitargs: name="foo" names the library foo.
  std::vector<std::string> parts;
  if (!protocol::SplitInlineArgs(code.substr(0, eol), &parts) || parts.empty()) {
    *error = protocol::err::kFunctionInvalidMetadata;
    return false;
  }
  *engine = parts[0].substr(2);
  bool named = false;
  for (size_t k = 1; k < parts.size(); k++) {
    if (parts[k].size() >= 5 && LowerAscii(parts[k].substr(0, 5)) == "name=") {
      if (named) {
        *error = protocol::err::kFunctionNameTwice;
        return false;
      }
      *name = parts[k].substr(5);
      named = true;
      continue;
    }
    *error = fmt::format(protocol::err::kFunctionBadMetadataValue, parts[k]);
    return false;
  }
  if (!named) {
    *error = protocol::err::kFunctionNoLibraryName;
    return false;
  }
  return true;
}

}  // namespace

int RegisterFunctionLua(lua_State* L) {
  auto* engine = static_cast<ScriptEngine*>(lua_touserdata(L, lua_upvalueindex(1)));
  std::vector<FunctionInfo>* out = engine->registering();
  if (out == nullptr) return Raise(L, "redis.register_function can only be called on FUNCTION LOAD command");
  FunctionInfo f;
  f.flags.shebang = true;
  const int argc = lua_gettop(L);
  int callback = 0;
  // Names may hold any byte (ValidName refuses a NUL), so read them whole.
  auto read_string = [L](int index) {
    size_t len = 0;
    const char* p = lua_tolstring(L, index, &len);
    return std::string(p, len);
  };
  if (argc == 1 && !lua_istable(L, 1)) {
    return Raise(L, "calling redis.register_function with a single argument is only applicable to Lua "
                    "table (representing named arguments).");
  }
  if (argc == 1) {
    lua_settop(L, 2);  // index 2 keeps the callback; lua_next works above it
    lua_pushnil(L);
    while (lua_next(L, 1) != 0) {
      if (!lua_isstring(L, -2)) return Raise(L, "named argument key given to redis.register_function is not a string");
      std::string key = read_string(-2);
      for (char& ch : key) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
      if (key == "function_name") {
        if (!lua_isstring(L, -1)) return Raise(L, "function_name argument given to redis.register_function must be a string");
        f.name = read_string(-1);
      } else if (key == "description") {
        if (!lua_isstring(L, -1)) return Raise(L, "description argument given to redis.register_function must be a string");
        f.description = lua_tostring(L, -1);
      } else if (key == "callback") {
        if (!lua_isfunction(L, -1)) return Raise(L, "callback argument given to redis.register_function must be a function");
        lua_pushvalue(L, -1);
        lua_replace(L, 2);
        callback = 2;
      } else if (key == "flags") {
        if (!lua_istable(L, -1)) {
          return Raise(L, "flags argument to redis.register_function must be a table representing function flags");
        }
        if (!ParseFlags(L, lua_gettop(L), &f.flags)) return Raise(L, "unknown flag given");
      } else {
        return Raise(L, "unknown argument given to redis.register_function");
      }
      lua_pop(L, 1);
    }
    if (f.name.empty()) return Raise(L, "redis.register_function must get a function name argument");
    if (callback == 0) return Raise(L, "redis.register_function must get a callback argument");
  } else if (argc == 2) {
    if (!lua_isstring(L, 1)) return Raise(L, "first argument to redis.register_function must be a string");
    if (!lua_isfunction(L, 2)) return Raise(L, "second argument to redis.register_function must be a function");
    f.name = read_string(1);
    callback = 2;
  } else {
    return Raise(L, "wrong number of arguments to redis.register_function");
  }
  if (!ValidName(f.name)) return Raise(L, protocol::err::kFunctionBadName);
  for (const FunctionInfo& g : *out) {
    if (g.name == f.name) return Raise(L, "Function already exists in the library");
  }
  lua_getfield(L, LUA_REGISTRYINDEX, kPendingKey);
  lua_pushvalue(L, callback);
  lua_setfield(L, -2, f.name.c_str());
  lua_pop(L, 1);
  out->push_back(std::move(f));
  return 0;
}

bool ScriptEngine::RunLibraryCode(std::string_view code, FunctionLibrary* lib, std::vector<FunctionInfo>* found,
                                  std::string* error) {
  lua_State* L = L_;
  // The shebang line stays a line (an empty one) so error lines match the code's.
  std::string source(code);
  source.replace(0, source.find('\n'), "");
  if (luaL_loadbuffer(L, source.data(), source.size(), "@user_function") != 0) {
    *error = fmt::format(protocol::err::kFunctionCompile, lua_tostring(L, -1));
    lua_pop(L, 1);
    return false;
  }
  // Its environment E: reads go to the load API (then the globals), writes fail.
  lua_newtable(L);                                    // chunk, E
  lua_newtable(L);                                    // chunk, E, M
  lua_rawgeti(L, LUA_REGISTRYINDEX, load_api_ref_);
  lua_setfield(L, -2, "__index");
  lua_getmetatable(L, LUA_GLOBALSINDEX);
  lua_getfield(L, -1, "__newindex");
  lua_setfield(L, -3, "__newindex");
  lua_pop(L, 1);
  lua_pushboolean(L, 0);
  lua_setfield(L, -2, "__metatable");
  lua_pushvalue(L, -1);
  const int meta_ref = luaL_ref(L, LUA_REGISTRYINDEX);
  lua_setmetatable(L, -2);                            // chunk, E
  lua_setfenv(L, -2);                                 // chunk
  lua_newtable(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kPendingKey);
  lua_rawgeti(L, LUA_REGISTRYINDEX, handler_ref_);
  lua_insert(L, -2);                                  // handler, chunk
  registering_ = found;
  loading_ = true;
  load_deadline_ns_ = MonotonicClock::NowNs() + kLoadTimeoutNs;
  const bool outer = running_lua_;
  running_lua_ = true;
  const int rc = lua_pcall(L, 0, 0, -2);
  running_lua_ = outer;
  loading_ = false;
  RestoreCountHook();
  registering_ = nullptr;
  // From now on the callbacks see the ordinary globals, the full `redis` too.
  lua_rawgeti(L, LUA_REGISTRYINDEX, meta_ref);
  lua_pushvalue(L, LUA_GLOBALSINDEX);
  lua_setfield(L, -2, "__index");
  lua_pop(L, 1);
  luaL_unref(L, LUA_REGISTRYINDEX, meta_ref);
  if (rc != 0) {
    std::string msg = "unknown error";
    if (lua_istable(L, -1)) {
      lua_getfield(L, -1, "err");
      if (lua_isstring(L, -1)) msg = lua_tostring(L, -1);
      lua_pop(L, 1);
    } else if (lua_isstring(L, -1)) {
      msg = lua_tostring(L, -1);
    }
    lua_settop(L, 0);
    *error = protocol::err::kFunctionRegisterPrefix + msg;
    return false;
  }
  lua_settop(L, 0);
  if (found->empty()) {
    *error = protocol::err::kFunctionNoneRegistered;
    return false;
  }
  lib->code = std::string(code);
  for (const FunctionInfo& f : *found) lib->functions.push_back(f.name);
  return true;
}

bool ScriptEngine::LoadLibrary(std::string_view code, bool replace, std::string* name, std::string* error) {
  std::string engine;
  if (!ParseMetadata(code, &engine, name, error)) return false;
  if (!EqualsIgnoreCase(engine, "lua")) {  // Redis matches engine names in any case
    *error = fmt::format(protocol::err::kFunctionEngineNotFound, engine);
    return false;
  }
  if (!ValidName(*name)) {
    *error = std::string(protocol::err::kErrPrefix) + protocol::err::kFunctionBadName;
    return false;
  }
  auto existing = libraries_.find(*name);
  if (existing != libraries_.end() && !replace) {
    *error = fmt::format(protocol::err::kFunctionLibraryExists, *name);
    return false;
  }
  FunctionLibrary lib;
  lib.name = *name;
  std::vector<FunctionInfo> found;
  if (!RunLibraryCode(code, &lib, &found, error)) return false;
  for (const FunctionInfo& f : found) {
    auto it = functions_.find(f.name);
    if (it != functions_.end() && it->second.library != *name) {
      *error = fmt::format(protocol::err::kFunctionExists, f.name);
      return false;
    }
  }
  if (existing != libraries_.end()) DeleteLibrary(*name);
  lua_State* L = L_;
  lua_rawgeti(L, LUA_REGISTRYINDEX, functions_ref_);
  lua_getfield(L, LUA_REGISTRYINDEX, kPendingKey);
  for (FunctionInfo& f : found) {
    lua_getfield(L, -1, f.name.c_str());
    lua_setfield(L, -3, f.name.c_str());
    f.library = *name;
    functions_.emplace(f.name, std::move(f));
  }
  lua_pop(L, 2);
  lua_pushnil(L);
  lua_setfield(L, LUA_REGISTRYINDEX, kPendingKey);
  function_bytes_ += lib.code.size();
  library_order_.push_back(*name);
  libraries_.emplace(*name, std::move(lib));
  return true;
}

bool ScriptEngine::DeleteLibrary(std::string_view name) {
  auto it = libraries_.find(std::string(name));
  if (it == libraries_.end()) return false;
  lua_State* L = L_;
  lua_rawgeti(L, LUA_REGISTRYINDEX, functions_ref_);
  for (const std::string& f : it->second.functions) {
    lua_pushnil(L);
    lua_setfield(L, -2, f.c_str());
    functions_.erase(f);
  }
  lua_pop(L, 1);
  function_bytes_ -= it->second.code.size();
  library_order_.erase(std::find(library_order_.begin(), library_order_.end(), it->first));
  libraries_.erase(it);
  return true;
}

void ScriptEngine::FlushLibraries() {
  while (!library_order_.empty()) DeleteLibrary(std::string(library_order_.back()));
}

bool ScriptEngine::DeclaredFlags(std::string_view command, std::span<const std::string_view> args,
                                 ScriptFlags* out) const {
  if (args.size() < 2) return false;
  if (command == "fcall" || command == "fcall_ro") {
    const FunctionInfo* f = FindFunction(args[1]);
    if (f == nullptr) return false;
    *out = f->flags;
    return true;
  }
  ScriptFlags flags;
  if (command == "eval" || command == "eval_ro") {
    std::string error;
    if (!ParseShebang(args[1], &flags, &error)) return false;
  } else if ((command == "evalsha" || command == "evalsha_ro") && args[1].size() == 40) {
    std::string lower(args[1]);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    auto it = scripts_.find(std::string_view(lower));
    if (it == scripts_.end()) return false;
    flags = it->second;
  }
  if (!flags.shebang) return false;
  *out = flags;
  return true;
}

const FunctionInfo* ScriptEngine::FindFunction(std::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : &it->second;
}

std::vector<std::string> ScriptEngine::LibraryCodes() const {
  std::vector<std::string> out;
  for (const std::string& n : library_order_) out.push_back(libraries_.at(n).code);
  return out;
}

void ScriptEngine::ReloadLibraries() {
  std::vector<std::string> codes = LibraryCodes();
  function_bytes_ = 0;
  libraries_.clear();
  library_order_.clear();
  functions_.clear();
  for (const std::string& code : codes) {
    std::string name, error;
    if (!LoadLibrary(code, false, &name, &error)) {
      server_.Log(3, fmt::format("Library could not be loaded again after SCRIPT FLUSH: {}", error));
    }
  }
}

}  // namespace feedkv::server
