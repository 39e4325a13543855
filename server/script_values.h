// How values cross between Lua and RESP in EVAL, as Redis 7.0 converts them.
//
// A command's reply becomes a Lua value for redis.call: integers are numbers,
// bulk strings strings, a nil bulk or nil array `false`, arrays tables, a
// status {ok=...}, an error {err=...}; under redis.setresp(3) also maps
// {map=...}, sets {set=...}, null nil, booleans, doubles {double=...}, big
// numbers {big_number=...} and verbatim strings {verbatim_string=...}.
// A script's result goes the other way: numbers are truncated to integers,
// true is 1 (a boolean under RESP3), false nil, a table with `err` an error,
// with `ok` a status, with `double`/`map`/`set`/`big_number` those types,
// and any other table an array up to its first nil.
// Pure functions on one lua_State; the command thread's.
#pragma once

#include <string_view>

extern "C" {
#include <lua5.1/lua.h>
}

#include "protocol/reply_writer.h"

namespace feedkv::server {

// Pushes the Lua value of the one RESP reply in `bytes`. Replies nested deeper
// than Lua's stack allows become an error table.
void PushReplyAsLua(lua_State* L, std::string_view bytes);

// Writes the Lua value at stack index `idx` as a reply. `script_resp` is what
// redis.setresp chose (it decides how booleans convert).
void WriteLuaAsReply(lua_State* L, int idx, int script_resp, protocol::ReplyWriter& w);

// Pushes an error table {err="CODE message"} as Redis's luaPushError builds it
// from `text`: "-CODE msg" keeps CODE, a text without the dash gets "ERR ",
// a dash without a space means "ERR"; trailing CR/LF are trimmed.
void PushErrorTable(lua_State* L, std::string_view text);

}  // namespace feedkv::server
