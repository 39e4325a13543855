// ScriptEngine: EVAL's Lua 5.1 interpreter, its script cache and the `redis`
// library scripts call, with Redis 7.0's semantics (docs/scripting.md).
//
// One lua_State per server. Its globals are read-only to scripts, as in Redis
// 7.0: a script reads the libraries (base without print/dofile/loadfile,
// table, string, math, cjson, cmsgpack, struct, bit, redis) and KEYS/ARGV, and every attempt to
// set a global fails with "Attempt to modify a readonly table". Scripts are
// cached by the SHA-1 of their body until SCRIPT FLUSH, which starts a new
// state.
//
// A script's redis.call runs the command through Server::Call on the engine's
// own client (the "lua" client MONITOR shows), with the caller's database
// selected; its writes are logged as the commands it ran, and Server::Call
// folds them into one MULTI/EXEC batch because they all happen inside the
// caller's EVAL (effects replication). The whole script runs on the command
// thread, so it is atomic.
//
// Not thread-safe: owned and used by the command thread.
#pragma once

#include <algorithm>
#include <cctype>
#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "server/client.h"

struct lua_State;

namespace feedkv::server {

class CommandContext;
class Server;

// What a script's shebang line (#!lua flags=...) allows; Redis 7.0's flags.
struct ScriptFlags {
  bool shebang = false;  // flags were declared (scripts without them may write)
  bool no_writes = false;
  bool allow_oom = false;
  bool allow_stale = false;
  bool no_cluster = false;
  bool allow_cross_slot_keys = false;
};

// A function of a library (FUNCTION LOAD): its name, description and flags
// (the same flags as a script's shebang; a function always declares them).
struct FunctionInfo {
  std::string name;
  std::string description;
  ScriptFlags flags;
  std::string library;
};

// A library: its name, its code as given to FUNCTION LOAD, its functions in
// registration order.
struct FunctionLibrary {
  std::string name;
  std::string code;
  std::vector<std::string> functions;
};

class ScriptEngine {
 public:
  explicit ScriptEngine(Server& server);
  ~ScriptEngine();
  ScriptEngine(const ScriptEngine&) = delete;
  ScriptEngine& operator=(const ScriptEngine&) = delete;

  // Compiles `body` and caches it under its SHA-1 (lower-case hex, in *sha).
  // On failure returns false with Redis's error text in *error
  // ("ERR Error compiling script (new function): user_script:1: ...").
  bool Load(std::string_view body, std::string* sha, std::string* error);
  // Whether a script of this SHA-1 is cached (any case).
  bool Exists(std::string_view sha) const;
  // SCRIPT FLUSH: forgets every script and starts a fresh interpreter.
  void Flush();

  // EVAL / EVALSHA: runs the cached script `sha` (any case) with KEYS and
  // ARGV, replying on ctx. `read_only`: EVAL_RO / EVALSHA_RO. Returns false,
  // having done nothing, when no such script is cached.
  bool Run(CommandContext& ctx, std::string_view sha, std::span<const std::string_view> keys,
           std::span<const std::string_view> argv, bool read_only);

  // Functions (server/script_functions.cc). FUNCTION LOAD: runs `code` (a
  // "#!lua name=<lib>" library) so it registers its functions, and keeps it.
  // REPLACE swaps a library of the same name. On failure *error holds Redis's
  // text and nothing changed.
  bool LoadLibrary(std::string_view code, bool replace, std::string* name, std::string* error);
  bool DeleteLibrary(std::string_view name);
  void FlushLibraries();
  const std::map<std::string, FunctionLibrary>& libraries() const { return libraries_; }
  const FunctionInfo* FindFunction(std::string_view name) const;
  // The flags the script or function that EVAL/EVALSHA/FCALL(_RO) `args`
  // would run declares (a shebang, or a function's flags), as Redis's
  // evalGetCommandFlags / fcallGetCommandFlags read them before running;
  // false when it declares none (a script without a shebang, an unknown sha
  // or function): the command's own flags apply then.
  bool DeclaredFlags(std::string_view command, std::span<const std::string_view> args, ScriptFlags* out) const;
  // Declares no-writes: Redis drops the command's may-replicate flag, so
  // CLIENT PAUSE WRITE lets it run.
  bool DeclaresNoWrites(std::string_view command, std::span<const std::string_view> args) const {
    ScriptFlags f;
    return DeclaredFlags(command, args, &f) && f.no_writes;
  }
  size_t num_functions() const { return functions_.size(); }
  // The libraries' code in load order (snapshots, FUNCTION DUMP).
  std::vector<std::string> LibraryCodes() const;
  // FCALL / FCALL_RO: calls function `f` with KEYS and ARGV as its arguments.
  void RunFunction(CommandContext& ctx, const FunctionInfo& f, std::span<const std::string_view> keys,
                   std::span<const std::string_view> argv, bool read_only);
  // Whether the running script is a function (FUNCTION KILL / SCRIPT KILL).
  bool running_function() const { return run_.caller != nullptr && run_.function; }
  // How long the running script has run, in milliseconds (FUNCTION STATS).
  int64_t running_ms() const;
  // The clock a running script's commands see: the time it started (unix ms),
  // so a key does not expire in the middle of a script, as Redis's.
  int64_t start_unix_ms() const { return start_unix_ms_; }

  // INFO: number_of_cached_scripts, used_memory_lua / used_memory_scripts.
  size_t num_scripts() const { return scripts_.size(); }
  size_t lua_memory() const;
  size_t scripts_memory() const { return body_bytes_; }
  size_t functions_memory() const { return function_bytes_; }

  // The state of the running script (the redis library reads it).
  struct RunState {
    CommandContext* caller = nullptr;
    std::string sha;
    bool read_only = false;
    bool allow_oom = false;  // #!lua flags=allow-oom
    bool wrote = false;      // a write command has run
    int resp = 2;            // redis.setresp
    bool function = false;   // FCALL (sha is the function's name)
  };
  RunState* running() { return run_.caller != nullptr ? &run_ : nullptr; }
  // Whether `c` sent the script that is running.
  bool IsCaller(const Client& c) const { return run_.caller != nullptr && caller_ == &c; }
  // A script has run past busy-reply-threshold: other clients get -BUSY.
  bool busy() const { return busy_; }
  // SCRIPT KILL: stops the busy script at its next check unless it wrote.
  // Returns the error text to reply, or empty for OK.
  std::string_view Kill();
  // Called by the interpreter's count hook: past the threshold, serves other
  // clients and stops the script when killed or when the server shuts down.
  // Returns true if the script must stop.
  bool CheckBusy();
  // The count hook every 100,000 instructions (a killed run switched it to
  // every line).
  void RestoreCountHook();
  // While FUNCTION LOAD runs a library's code: where redis.register_function
  // puts what it registers (null otherwise).
  bool loading() const { return loading_; }
  // Lua code this engine started is running (the count hook acts only then).
  bool running_lua() const { return running_lua_; }
  std::vector<FunctionInfo>* registering() { return registering_; }
  Server& server() { return server_; }
  Client& client() { return client_; }

 private:
  void Open();
  void Close();
  // Runs the function the caller pushes (push returns its argument count,
  // pushed after it) as script `name`, replying on ctx.
  // (A template, not std::function: EVALSHA's hot path allocates nothing.)
  template <typename PushFn>
  void Execute(CommandContext& ctx, std::string_view name, bool read_only, bool allow_oom, bool function,
               const PushFn& push);
  // Compiles and runs a library's code in the load environment; fills *lib
  // and *found (its functions) without touching the kept libraries.
  bool RunLibraryCode(std::string_view code, FunctionLibrary* lib, std::vector<FunctionInfo>* found,
                      std::string* error);
  // Re-creates every kept library in a fresh interpreter (after SCRIPT FLUSH).
  void ReloadLibraries();

  Server& server_;
  lua_State* L_ = nullptr;
  int globals_ref_ = 0;   // registry refs: the real globals table,
  int scripts_ref_ = 0;   // sha -> function,
  int handler_ref_ = 0;   // and the pcall error handler
  // A transparent hash: EVALSHA looks a lower-cased view up without a copy.
  struct ShaHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, ScriptFlags, ShaHash, std::equal_to<>> scripts_;  // sha -> shebang flags
  size_t body_bytes_ = 0;
  RunState run_;
  const Client* caller_ = nullptr;
  bool busy_ = false;
  bool kill_requested_ = false;
  int64_t start_ns_ = 0;
  int64_t start_unix_ms_ = 0;
  int64_t busy_after_ms_ = 0;   // busy-reply-threshold when the script began
  bool running_lua_ = false;
  int64_t busy_threshold_ms_ = -1;  // the setting, parsed once (-1: read it again)
  int64_t last_served_ns_ = 0;
  Client client_;  // the client redis.call runs commands on
  // Functions: libraries by name, functions by name; the callbacks live in the
  // registry table functions_ref_ (name -> Lua function).
  std::map<std::string, FunctionLibrary> libraries_;
  std::vector<std::string> library_order_;  // names in load order
  // Function names match in any case, as Redis's functionDictType.
  struct CaseLess {
    using is_transparent = void;
    bool operator()(std::string_view a, std::string_view b) const {
      return std::lexicographical_compare(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
        return std::tolower(static_cast<unsigned char>(x)) < std::tolower(static_cast<unsigned char>(y));
      });
    }
  };
  std::map<std::string, FunctionInfo, CaseLess> functions_;
  int functions_ref_ = 0;
  size_t function_bytes_ = 0;  // the libraries' code
  int load_api_ref_ = 0;  // the `redis` table library code sees while loading
  bool loading_ = false;
  int64_t load_deadline_ns_ = 0;
  std::vector<FunctionInfo>* registering_ = nullptr;
};

// Sets the flag named `flag` ("no-writes", ...); false for an unknown name.
bool ApplyScriptFlag(std::string_view flag, ScriptFlags* flags);
// Parses a body's "#!lua flags=a,b" line into *flags. False with Redis's error
// text in *error for another engine or an unknown flag.
bool ParseShebang(std::string_view body, ScriptFlags* flags, std::string* error);

// The Lua library `redis` (server/script_redis_lib.cc): installs it as the
// global `redis` of L, its functions bound to `engine`.
void OpenRedisLibrary(lua_State* L, ScriptEngine* engine);
// `cmsgpack` (script_lib_cmsgpack.cc) and `struct` (script_lib_struct.cc), as
// the globals of those names.
void OpenCmsgpackLibrary(lua_State* L);
// redis.register_function, as a library's code sees it while FUNCTION LOAD
// runs it (server/script_functions.cc); upvalue 1: the engine.
int RegisterFunctionLua(lua_State* L);
void OpenStructLibrary(lua_State* L);

}  // namespace feedkv::server
