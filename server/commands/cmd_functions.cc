// Functions: FCALL, FCALL_RO and FUNCTION LOAD / DELETE / FLUSH / LIST /
// STATS / DUMP / RESTORE / KILL / HELP, as Redis 7.0. Libraries live in the
// script engine (server/script_functions.cc); FUNCTION LOAD, DELETE, FLUSH
// and RESTORE are writes, logged as sent, so the AOF and replicas rebuild the
// same libraries; snapshots carry them too (a functions section).
#include <string>

#include <fmt/format.h>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/glob.h"
#include "server/script_engine.h"
#include "server/server.h"
#include "storage/redis_payload.h"

namespace feedkv::server {

namespace {

// RDB_OPCODE_FUNCTION2: one library's code in a FUNCTION DUMP payload.
constexpr uint8_t kFunctionOpcode = 245;

void Fcall(CommandContext& ctx, bool read_only) {
  ctx.server.FeedMonitorsBeforeScript(ctx.client, ctx.args);
  ScriptEngine& engine = ctx.server.scripts();
  const FunctionInfo* f = engine.FindFunction(ctx.arg(1));
  if (f == nullptr) return ctx.Error(protocol::err::kFunctionNotFound);
  int64_t numkeys = 0;
  if (!ParseCanonicalInt64(ctx.arg(2), &numkeys)) return ctx.Error(protocol::err::kFunctionBadNumKeys);
  const auto available = static_cast<int64_t>(ctx.argc()) - 3;
  if (numkeys > available) return ctx.Error(protocol::err::kNumKeysTooMany);
  if (numkeys < 0) return ctx.Error(protocol::err::kNumKeysNegative);
  if (read_only && !f->flags.no_writes) {
    return ctx.Error(protocol::err::kFunctionWriteInRo);
  }
  auto keys = ctx.args.subspan(3, static_cast<size_t>(numkeys));
  auto argv = ctx.args.subspan(3 + static_cast<size_t>(numkeys));
  engine.RunFunction(ctx, *f, keys, argv, read_only);
}

void FcallCmd(CommandContext& ctx) { Fcall(ctx, false); }
void FcallRoCmd(CommandContext& ctx) { Fcall(ctx, true); }

void Load(CommandContext& ctx) {
  bool replace = false;
  size_t i = 2;
  for (; i + 1 < ctx.argc(); i++) {
    if (!EqualsIgnoreCase(ctx.arg(i), "REPLACE")) {
      return ctx.Error(fmt::format(protocol::err::kFunctionUnknownOption, ctx.arg(i)));
    }
    replace = true;
  }
  if (i >= ctx.argc()) return ctx.Error(protocol::err::kFunctionNoCode);
  std::string name, error;
  if (!ctx.server.scripts().LoadLibrary(ctx.arg(i), replace, &name, &error)) return ctx.Error(error);
  ctx.Dirty();
  ctx.reply.Bulk(name);
}

void Delete(CommandContext& ctx) {
  if (!ctx.server.scripts().DeleteLibrary(ctx.arg(2))) return ctx.Error(protocol::err::kFunctionLibraryNotFound);
  ctx.Dirty();
  ctx.reply.Ok();
}

void Flush(CommandContext& ctx) {
  if (ctx.argc() == 3 && !EqualsIgnoreCase(ctx.arg(2), "SYNC") && !EqualsIgnoreCase(ctx.arg(2), "ASYNC")) {
    return ctx.Error(protocol::err::kFunctionFlushOption);
  }
  if (ctx.argc() > 3) return ctx.SubcommandError();
  ctx.server.scripts().FlushLibraries();
  ctx.Dirty();
  ctx.reply.Ok();
}

void List(CommandContext& ctx) {
  bool with_code = false;
  bool filtered = false;
  std::string_view pattern;
  for (size_t i = 2; i < ctx.argc(); i++) {
    if (!with_code && EqualsIgnoreCase(ctx.arg(i), "WITHCODE")) {
      with_code = true;
      continue;
    }
    if (!filtered && EqualsIgnoreCase(ctx.arg(i), "LIBRARYNAME")) {
      if (i + 1 >= ctx.argc()) return ctx.Error(protocol::err::kFunctionNoLibraryNameArg);
      pattern = ctx.arg(++i);
      filtered = true;
      continue;
    }
    return ctx.Error(fmt::format(protocol::err::kFunctionUnknownArgument, ctx.arg(i)));
  }
  ScriptEngine& engine = ctx.server.scripts();
  std::vector<const FunctionLibrary*> libs;
  for (const auto& [name, lib] : engine.libraries()) {
    if (!filtered || GlobMatch(pattern, name, false)) libs.push_back(&lib);
  }
  auto& r = ctx.reply;
  r.ArrayHeader(libs.size());
  for (const FunctionLibrary* lib : libs) {
    r.MapHeader(with_code ? 4 : 3);
    r.Bulk("library_name");
    r.Bulk(lib->name);
    r.Bulk("engine");
    r.Bulk("LUA");
    r.Bulk("functions");
    r.ArrayHeader(lib->functions.size());
    for (const std::string& fname : lib->functions) {
      const FunctionInfo* f = engine.FindFunction(fname);
      r.MapHeader(3);
      r.Bulk("name");
      r.Bulk(f->name);
      r.Bulk("description");
      if (f->description.empty()) {
        r.Null();
      } else {
        r.Bulk(f->description);
      }
      r.Bulk("flags");
      std::vector<std::string_view> flags;
      if (f->flags.no_writes) flags.push_back("no-writes");
      if (f->flags.allow_oom) flags.push_back("allow-oom");
      if (f->flags.allow_stale) flags.push_back("allow-stale");
      if (f->flags.no_cluster) flags.push_back("no-cluster");
      if (f->flags.allow_cross_slot_keys) flags.push_back("allow-cross-slot-keys");
      r.SetHeader(flags.size());
      for (std::string_view fl : flags) r.Simple(fl);
    }
    if (with_code) {
      r.Bulk("library_code");
      r.Bulk(lib->code);
    }
  }
}

void Stats(CommandContext& ctx) {
  ScriptEngine& engine = ctx.server.scripts();
  auto& r = ctx.reply;
  r.MapHeader(2);
  r.Bulk("running_script");
  const ScriptEngine::RunState* run = engine.running();
  if (run == nullptr || !run->function) {
    r.Null();
  } else {
    r.MapHeader(3);
    r.Bulk("name");
    r.Bulk(run->sha);
    r.Bulk("command");
    r.ArrayHeader(run->caller->argc());
    for (std::string_view a : run->caller->args) r.Bulk(a);
    r.Bulk("duration_ms");
    r.Integer(engine.running_ms());
  }
  r.Bulk("engines");
  r.MapHeader(1);
  r.Bulk("LUA");
  r.MapHeader(2);
  r.Bulk("libraries_count");
  r.Integer(static_cast<int64_t>(engine.libraries().size()));
  r.Bulk("functions_count");
  r.Integer(static_cast<int64_t>(engine.num_functions()));
}

void Kill(CommandContext& ctx) {
  ScriptEngine& engine = ctx.server.scripts();
  if (engine.busy() && !engine.running_function()) return ctx.Error(protocol::err::kBusyScript);
  std::string_view error = engine.Kill();
  if (!error.empty()) return ctx.Error(error);
  ctx.reply.Ok();
}

void Dump(CommandContext& ctx) {
  redis_payload::Writer w;
  for (const std::string& code : ctx.server.scripts().LibraryCodes()) {
    w.Type(static_cast<redis_payload::RdbType>(kFunctionOpcode));
    w.String(code);
  }
  ctx.reply.Bulk(w.Finish());
}

void Restore(CommandContext& ctx) {
  enum class Policy { kAppend, kReplace, kFlush } policy = Policy::kAppend;
  if (ctx.argc() > 4) return ctx.SubcommandError();
  if (ctx.argc() > 3) {
    if (EqualsIgnoreCase(ctx.arg(3), "APPEND")) {
      policy = Policy::kAppend;
    } else if (EqualsIgnoreCase(ctx.arg(3), "REPLACE")) {
      policy = Policy::kReplace;
    } else if (EqualsIgnoreCase(ctx.arg(3), "FLUSH")) {
      policy = Policy::kFlush;
    } else {
      return ctx.Error(protocol::err::kFunctionRestorePolicy);
    }
  }
  std::string_view body;
  if (!redis_payload::CheckFooter(ctx.arg(2), &body)) {
    return ctx.Error(protocol::err::kFunctionDumpChecksum);
  }
  std::vector<std::string> codes;
  redis_payload::Reader reader(body);
  while (!reader.done()) {
    uint8_t type = 0;
    std::string code;
    if (!reader.Byte(&type)) return ctx.Error(protocol::err::kFunctionPayloadMalformed);
    if (type != kFunctionOpcode) return ctx.Error(protocol::err::kFunctionPayloadType);
    if (!reader.String(&code)) return ctx.Error(protocol::err::kFunctionPayloadMalformed);
    codes.push_back(std::move(code));
  }
  ScriptEngine& engine = ctx.server.scripts();
  // All or nothing: on any failure the libraries go back to what they were.
  const std::vector<std::string> before = engine.LibraryCodes();
  if (policy == Policy::kFlush) engine.FlushLibraries();
  std::string failure;
  for (const std::string& code : codes) {
    std::string name, error;
    if (!engine.LoadLibrary(code, policy == Policy::kReplace, &name, &error)) {
      // RESTORE names a colliding library unquoted (Redis's libraryJoin).
      failure = error == fmt::format(protocol::err::kFunctionLibraryExists, name)
                    ? fmt::format(protocol::err::kFunctionRestoreLibraryExists, name)
                    : error;
      break;
    }
  }
  if (!failure.empty()) {
    engine.FlushLibraries();
    for (const std::string& code : before) {
      std::string name, error;
      engine.LoadLibrary(code, false, &name, &error);
    }
    return ctx.Error(failure);
  }
  ctx.Dirty();
  ctx.reply.Ok();
}

void Help(CommandContext& ctx) {
  ctx.ReplyHelp({
      "LOAD [REPLACE] <FUNCTION CODE>",
      "    Create a new library with the given library name and code.",
      "DELETE <LIBRARY NAME>",
      "    Delete the given library.",
      "LIST [LIBRARYNAME PATTERN] [WITHCODE]",
      "    Return general information on all the libraries:",
      "    * Library name",
      "    * The engine used to run the Library",
      "    * Library description",
      "    * Functions list",
      "    * Library code (if WITHCODE is given)",
      "    It also possible to get only function that matches a pattern using LIBRARYNAME argument.",
      "STATS",
      "    Return information about the current function running:",
      "    * Function name",
      "    * Command used to run the function",
      "    * Duration in MS that the function is running",
      "    If no function is running, return nil",
      "    In addition, returns a list of available engines.",
      "KILL",
      "    Kill the current running function.",
      "FLUSH [ASYNC|SYNC]",
      "    Delete all the libraries.",
      "    When called without the optional mode argument, the behavior is determined by the",
      "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
      "    * ASYNC: Asynchronously flush the libraries.",
      "    * SYNC: Synchronously flush the libraries.",
      "DUMP",
      "    Return a serialized payload representing the current libraries, can be restored using FUNCTION RESTORE command",
      "RESTORE <PAYLOAD> [FLUSH|APPEND|REPLACE]",
      "    Restore the libraries represented by the given payload, it is possible to give a restore policy to",
      "    control how to handle existing libraries (default APPEND):",
      "    * FLUSH: delete all existing libraries.",
      "    * APPEND: appends the restored libraries to the existing libraries. On collision, abort.",
      "    * REPLACE: appends the restored libraries to the existing libraries, On collision, replace the old",
      "      libraries with the new libraries (notice that even on this option there is a chance of failure",
      "      in case of functions name collision with another library).",
  });
}

void Function(CommandContext& ctx) {
  const std::string sub = LowerAscii(ctx.arg(1));
  if (sub == "load") return Load(ctx);
  if (sub == "delete") return Delete(ctx);
  if (sub == "flush") return Flush(ctx);
  if (sub == "list") return List(ctx);
  if (sub == "stats") return Stats(ctx);
  if (sub == "kill") return Kill(ctx);
  if (sub == "dump") return Dump(ctx);
  if (sub == "restore") return Restore(ctx);
  if (sub == "help") return Help(ctx);
  ctx.SubcommandError();
}

const SubcommandSpec kFunctionSubs[] = {
    {"delete", 3, kWrite | kNoScript, "Delete a function by name"},
    {"dump", 2, kNoScript, "Dump all functions into a serialized binary payload"},
    {"flush", -2, kWrite | kNoScript, "Deleting all functions"},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
    {"kill", 2, kNoScript | kAllowBusy, "Kill the function currently in execution."},
    {"list", -2, kNoScript, "List information about all the functions"},
    {"load", -3, kWrite | kDenyOom | kNoScript, "Create a function with the given arguments (name, code, description)"},
    {"restore", -3, kWrite | kDenyOom | kNoScript, "Restore all the functions on the given payload"},
    {"stats", 2, kNoScript | kAllowBusy, "Return information about the function currently running (name, description, duration)"},
};

constexpr uint32_t kFcall = kRunsScript | kNoScript | kStale | kSkipMonitor | kNoMandatoryKeys | kKeyNum;

const CommandSpec kCommands[] = {
    {"fcall", -3, kFcall | kMayReplicate, 2, 2, 1, FcallCmd, "Invoke a function", "scripting", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"fcall_ro", -3, kReadOnly | kFcall, 2, 2, 1, FcallRoCmd, "Invoke a read-only function", "scripting", {}, {kKeyRO | kKeyAccess}},
    {"function", -2, 0, 0, 0, 0, Function, "A container for function commands", "scripting", kFunctionSubs},
};

}  // namespace

std::span<const CommandSpec> FunctionCommands() { return kCommands; }

}  // namespace feedkv::server
