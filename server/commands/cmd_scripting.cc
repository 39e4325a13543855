// Scripting: EVAL, EVALSHA, EVAL_RO, EVALSHA_RO and SCRIPT LOAD / EXISTS /
// FLUSH / KILL / DEBUG / HELP, as Redis 7.0. The interpreter, its sandbox and
// the redis library live in server/script_engine.h; these handlers parse the
// arguments and hand over.
#include <string>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/script_engine.h"
#include "server/server.h"

namespace feedkv::server {

namespace {

// EVAL* script|sha numkeys key... arg...: runs `sha` (loading `body` first for
// EVAL). Redis's evalGenericCommand.
void RunScript(CommandContext& ctx, bool by_sha, bool read_only) {
  ctx.server.FeedMonitorsBeforeScript(ctx.client, ctx.args);
  int64_t numkeys = 0;
  if (!ctx.IntArg(2, &numkeys)) return;
  const auto available = static_cast<int64_t>(ctx.argc()) - 3;
  if (numkeys > available) return ctx.Error(protocol::err::kNumKeysTooMany);
  if (numkeys < 0) return ctx.Error(protocol::err::kNumKeysNegative);
  ScriptEngine& engine = ctx.server.scripts();
  auto keys = ctx.args.subspan(3, static_cast<size_t>(numkeys));
  auto argv = ctx.args.subspan(3 + static_cast<size_t>(numkeys));
  if (by_sha) {
    if (!engine.Run(ctx, ctx.arg(1), keys, argv, read_only)) ctx.Error(protocol::err::kNoScript);
    return;
  }
  std::string sha, error;
  if (!engine.Load(ctx.arg(1), &sha, &error)) return ctx.Error(error);
  engine.Run(ctx, sha, keys, argv, read_only);
}

void Eval(CommandContext& ctx) { RunScript(ctx, false, false); }
void EvalSha(CommandContext& ctx) { RunScript(ctx, true, false); }
void EvalRo(CommandContext& ctx) { RunScript(ctx, false, true); }
void EvalShaRo(CommandContext& ctx) { RunScript(ctx, true, true); }

void ScriptLoad(CommandContext& ctx) {
  std::string sha, error;
  if (!ctx.server.scripts().Load(ctx.arg(2), &sha, &error)) return ctx.Error(error);
  ctx.reply.Bulk(sha);
}

void ScriptExists(CommandContext& ctx) {
  ctx.reply.ArrayHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); i++) ctx.reply.Integer(ctx.server.scripts().Exists(ctx.arg(i)) ? 1 : 0);
}

void ScriptFlush(CommandContext& ctx) {
  if (ctx.argc() > 3 ||
      (ctx.argc() == 3 && !EqualsIgnoreCase(ctx.arg(2), "sync") && !EqualsIgnoreCase(ctx.arg(2), "async"))) {
    return ctx.Error(protocol::err::kScriptFlushOption);
  }
  // ASYNC frees the old interpreter at once too: a script cache is small.
  ctx.server.scripts().Flush();
  ctx.reply.Ok();
}

// Runs while a script is busy (Connection::ServeWhileBusy): the script stops at
// its next check, with "Script killed by user", unless it already wrote.
void ScriptKill(CommandContext& ctx) {
  // A function is FUNCTION KILL's to stop.
  if (ctx.server.scripts().busy() && ctx.server.scripts().running_function()) {
    return ctx.Error(protocol::err::kBusyFunction);
  }
  std::string_view error = ctx.server.scripts().Kill();
  if (!error.empty()) return ctx.Error(error);
  ctx.reply.Ok();
}

void ScriptDebug(CommandContext& ctx) {
  if (EqualsIgnoreCase(ctx.arg(2), "no")) return ctx.reply.Ok();
  if (EqualsIgnoreCase(ctx.arg(2), "yes") || EqualsIgnoreCase(ctx.arg(2), "sync")) {
    return ctx.Error(protocol::err::kScriptDebuggerUnsupported);
  }
  ctx.Error(protocol::err::kScriptDebugUsage);
}

void ScriptHelp(CommandContext& ctx) {
  ctx.ReplyHelp({"DEBUG (YES|SYNC|NO)",
                 "    Set the debug mode for subsequent scripts executed.",
                 "EXISTS <sha1> [<sha1> ...]",
                 "    Return information about the existence of the scripts in the script cache.",
                 "FLUSH [ASYNC|SYNC]",
                 "    Flush the Lua scripts cache. Very dangerous on replicas.",
                 "    When called without the optional mode argument, the behavior is determined by the",
                 "    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
                 "    * ASYNC: Asynchronously flush the scripts cache.",
                 "    * SYNC: Synchronously flush the scripts cache.",
                 "KILL",
                 "    Kill the currently executing Lua script.",
                 "LOAD <script>",
                 "    Load a script into the scripts cache without executing it."});
}

void Script(CommandContext& ctx) {
  const std::string sub = LowerAscii(ctx.arg(1));
  if (sub == "load") return ScriptLoad(ctx);
  if (sub == "exists") return ScriptExists(ctx);
  if (sub == "flush") return ScriptFlush(ctx);
  if (sub == "kill") return ScriptKill(ctx);
  if (sub == "debug") return ScriptDebug(ctx);
  if (sub == "help") return ScriptHelp(ctx);
  ctx.SubcommandError();
}

constexpr uint32_t kEval = kRunsScript | kNoScript | kStale | kSkipMonitor | kNoMandatoryKeys | kKeyNum;

const SubcommandSpec kScriptSubs[] = {
    {"debug", 3, kNoScript, "Set the debug mode for executed scripts."},
    {"exists", -3, kNoScript, "Check existence of scripts in the script cache."},
    {"flush", -2, kNoScript, "Remove all the scripts from the script cache."},
    {"kill", 2, kNoScript | kAllowBusy, "Kill the script currently in execution."},
    {"load", 3, kNoScript | kStale, "Load the specified Lua script into the script cache."},
    {"help", 2, kLoading | kStale, "Show helpful text about the different subcommands"},
};

const CommandSpec kCommands[] = {
    {"eval", -3, kEval | kMayReplicate, 2, 2, 1, Eval, "Execute a Lua script server side", "scripting", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"evalsha", -3, kEval | kMayReplicate, 2, 2, 1, EvalSha, "Execute a Lua script server side", "scripting", {}, {kKeyRW | kKeyAccess | kKeyUpdate}},
    {"eval_ro", -3, kReadOnly | kEval, 2, 2, 1, EvalRo, "Execute a read-only Lua script server side", "scripting", {}, {kKeyRO | kKeyAccess}},
    {"evalsha_ro", -3, kReadOnly | kEval, 2, 2, 1, EvalShaRo, "Execute a read-only Lua script server side", "scripting", {}, {kKeyRO | kKeyAccess}},
    {"script", -2, 0, 0, 0, 0, Script, "A container for Lua scripts management commands", "scripting", kScriptSubs},
};

}  // namespace

std::span<const CommandSpec> ScriptingCommands() { return kCommands; }

}  // namespace feedkv::server
