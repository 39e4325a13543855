// RESP <-> Lua conversion for EVAL; see script_values.h for the mapping.
#include "protocol/error_text.h"
#include "server/script_values.h"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace feedkv::server {

namespace {

// Replies come from our own ReplyWriter, so they are well formed; the reader
// still stops at the end of the bytes rather than trust them.
class ReplyReader {
 public:
  explicit ReplyReader(std::string_view b) : b_(b) {}

  // Pushes one value; returns false (with nothing pushed) on malformed input.
  bool Push(lua_State* L, int depth) {
    if (pos_ >= b_.size()) return false;
    // Each nesting level holds a table and a key or value: 3 more slots.
    if (depth > 1000 || !lua_checkstack(L, 4)) return false;
    char type = b_[pos_++];
    std::string_view line;
    if (!Line(&line)) return false;
    switch (type) {
      case '+':
        lua_newtable(L);
        lua_pushlstring(L, line.data(), line.size());
        lua_setfield(L, -2, "ok");
        return true;
      case '-':
        PushErrorTable(L, std::string("-").append(line));
        return true;
      case ':': {
        int64_t v = 0;
        std::from_chars(line.data(), line.data() + line.size(), v);
        lua_pushnumber(L, static_cast<lua_Number>(v));
        return true;
      }
      case '$':
      case '=': {
        int64_t n = 0;
        std::from_chars(line.data(), line.data() + line.size(), n);
        if (n < 0) {
          lua_pushboolean(L, 0);
          return true;
        }
        if (b_.size() - pos_ < static_cast<size_t>(n) + 2) return false;
        std::string_view s = b_.substr(pos_, static_cast<size_t>(n));
        pos_ += static_cast<size_t>(n) + 2;
        if (type == '$') {
          lua_pushlstring(L, s.data(), s.size());
        } else {  // verbatim: "txt:..."
          lua_newtable(L);
          lua_newtable(L);
          std::string_view fmt = s.substr(0, 3), text = s.size() > 4 ? s.substr(4) : "";
          lua_pushlstring(L, fmt.data(), fmt.size());
          lua_setfield(L, -2, "format");
          lua_pushlstring(L, text.data(), text.size());
          lua_setfield(L, -2, "string");
          lua_setfield(L, -2, "verbatim_string");
        }
        return true;
      }
      case '*':
      case '>':
      case '~':
      case '%': {
        int64_t n = 0;
        std::from_chars(line.data(), line.data() + line.size(), n);
        if (n < 0) {
          lua_pushboolean(L, 0);
          return true;
        }
        lua_newtable(L);
        if (type == '%' || type == '~') lua_newtable(L);  // the inner {map=} / {set=} table
        for (int64_t i = 0; i < n; i++) {
          if (type == '%') {
            if (!Push(L, depth + 1)) return Fail(L, 2);
            if (!Push(L, depth + 1)) return Fail(L, 3);
            if (lua_isnil(L, -2)) {
              lua_pop(L, 2);  // a nil key cannot be stored (Lua would raise)
            } else {
              lua_rawset(L, -3);
            }
          } else if (type == '~') {
            if (!Push(L, depth + 1)) return Fail(L, 2);
            if (lua_isnil(L, -1)) {
              lua_pop(L, 1);
            } else {
              lua_pushboolean(L, 1);
              lua_rawset(L, -3);
            }
          } else {
            if (!Push(L, depth + 1)) return Fail(L, 1);
            lua_rawseti(L, -2, static_cast<int>(i + 1));
          }
        }
        if (type == '%') lua_setfield(L, -2, "map");
        if (type == '~') lua_setfield(L, -2, "set");
        return true;
      }
      case '_':
        lua_pushnil(L);
        return true;
      case '#':
        lua_pushboolean(L, line == "t");
        return true;
      case ',': {
        lua_newtable(L);
        std::string text(line);
        lua_pushnumber(L, std::strtod(text.c_str(), nullptr));
        lua_setfield(L, -2, "double");
        return true;
      }
      case '(':
        lua_newtable(L);
        lua_pushlstring(L, line.data(), line.size());
        lua_setfield(L, -2, "big_number");
        return true;
      case '|': {
        // An attribute: scripts never see it (Redis's Lua parser skips it);
        // the value it annotates follows.
        int64_t n = 0;
        std::from_chars(line.data(), line.data() + line.size(), n);
        if (n < 0 || static_cast<uint64_t>(n) > b_.size()) return false;
        for (int64_t i = 0; i < 2 * n; ++i) {
          if (!Push(L, depth + 1)) return false;
          lua_pop(L, 1);
        }
        return Push(L, depth);
      }
      default:
        return false;
    }
  }

 private:
  bool Line(std::string_view* line) {
    size_t end = b_.find("\r\n", pos_);
    if (end == std::string_view::npos) return false;
    *line = b_.substr(pos_, end - pos_);
    pos_ = end + 2;
    return true;
  }
  static bool Fail(lua_State* L, int pushed) {
    lua_pop(L, pushed);
    return false;
  }

  std::string_view b_;
  size_t pos_ = 0;
};

// Lua numbers become integers as C's (long long) cast does on x86-64, where
// anything out of range (and NaN) is INT64_MIN; done without the undefined cast.
int64_t NumberToInteger(lua_Number d) {
  if (std::isnan(d) || d >= 9223372036854775808.0 || d < -9223372036854775808.0) {
    return std::numeric_limits<int64_t>::min();
  }
  return static_cast<int64_t>(d);
}

// The string field `name` of the table at `idx`, if it is a string.
bool StringField(lua_State* L, int idx, const char* name, std::string_view* out) {
  lua_pushstring(L, name);
  lua_rawget(L, idx);
  bool ok = lua_type(L, -1) == LUA_TSTRING;
  if (ok) {
    size_t n = 0;
    const char* s = lua_tolstring(L, -1, &n);
    *out = std::string_view(s, n);  // valid while the table holds it
  }
  lua_pop(L, 1);
  return ok;
}

void WriteValue(lua_State* L, int idx, int script_resp, protocol::ReplyWriter& w, int depth) {
  if (idx < 0) idx = lua_gettop(L) + idx + 1;
  switch (lua_type(L, idx)) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, idx, &n);
      w.Bulk(std::string_view(s, n));
      return;
    }
    case LUA_TBOOLEAN:
      if (script_resp == 2) {
        if (lua_toboolean(L, idx)) {
          w.Integer(1);
        } else {
          w.Null();
        }
      } else {
        w.Bool(lua_toboolean(L, idx) != 0);
      }
      return;
    case LUA_TNUMBER:
      w.Integer(NumberToInteger(lua_tonumber(L, idx)));
      return;
    case LUA_TTABLE:
      break;
    default:
      w.Null();
      return;
  }
  if (depth > 1000 || !lua_checkstack(L, 4)) {
    w.Error(protocol::err::kScriptStackLimit);
    return;
  }
  std::string_view s;
  if (StringField(L, idx, "err", &s)) {
    w.ErrorVerbatim(s);
    return;
  }
  if (StringField(L, idx, "ok", &s)) {
    std::string line(s);
    for (char& c : line) {
      if (c == '\r' || c == '\n') c = ' ';
    }
    w.Simple(line);
    return;
  }
  lua_pushstring(L, "double");
  lua_rawget(L, idx);
  if (lua_type(L, -1) == LUA_TNUMBER) {
    w.Double(lua_tonumber(L, -1));
    lua_pop(L, 1);
    return;
  }
  lua_pop(L, 1);
  if (StringField(L, idx, "big_number", &s)) {
    // CR and LF become spaces in both protocols, as Redis's sdsmapchars.
    std::string digits;
    for (char c : s) digits.push_back(c == '\r' || c == '\n' ? ' ' : c);
    if (w.resp() == 3) {
      w.Raw("(" + digits + "\r\n");
    } else {
      w.Bulk(digits);
    }
    return;
  }
  // {verbatim_string = {format = "txt", string = "..."}}: a verbatim string
  // (a bulk string in RESP2), as Redis's luaReplyToRedisReply.
  lua_pushstring(L, "verbatim_string");
  lua_rawget(L, idx);
  if (lua_type(L, -1) == LUA_TTABLE) {
    const int v = lua_gettop(L);
    std::string_view format, text;
    if (StringField(L, v, "format", &format) && StringField(L, v, "string", &text) && format.size() == 3) {
      w.Verbatim(text, format);
      lua_pop(L, 1);
      return;
    }
  }
  lua_pop(L, 1);
  for (const char* kind : {"map", "set"}) {
    lua_pushstring(L, kind);
    lua_rawget(L, idx);
    if (lua_type(L, -1) != LUA_TTABLE) {
      lua_pop(L, 1);
      continue;
    }
    const int inner = lua_gettop(L);
    const bool is_map = kind[0] == 'm';
    size_t n = 0;
    lua_pushnil(L);
    while (lua_next(L, inner) != 0) {
      n++;
      lua_pop(L, 1);
    }
    if (is_map) {
      w.MapHeader(n);
    } else {
      w.SetHeader(n);
    }
    lua_pushnil(L);
    while (lua_next(L, inner) != 0) {
      // Keys are written from a copy: lua_tolstring on a numeric key would
      // change it in place and confuse lua_next.
      lua_pushvalue(L, -2);
      WriteValue(L, -1, script_resp, w, depth + 1);
      lua_pop(L, 1);
      if (is_map) WriteValue(L, -1, script_resp, w, depth + 1);
      lua_pop(L, 1);
    }
    lua_pop(L, 1);
    return;
  }
  // An array: its elements up to the first nil.
  size_t n = 0;
  const size_t bound = lua_objlen(L, idx);
  while (n < bound) {
    lua_rawgeti(L, idx, static_cast<int>(n + 1));
    bool nil = lua_isnil(L, -1);
    lua_pop(L, 1);
    if (nil) break;
    n++;
  }
  w.ArrayHeader(n);
  for (size_t i = 0; i < n; i++) {
    lua_rawgeti(L, idx, static_cast<int>(i + 1));
    WriteValue(L, -1, script_resp, w, depth + 1);
    lua_pop(L, 1);
  }
}

}  // namespace

void PushReplyAsLua(lua_State* L, std::string_view bytes) {
  ReplyReader r(bytes);
  if (!r.Push(L, 0)) PushErrorTable(L, "reached lua stack limit");
}

void WriteLuaAsReply(lua_State* L, int idx, int script_resp, protocol::ReplyWriter& w) {
  WriteValue(L, idx, script_resp, w, 0);
}

void PushErrorTable(lua_State* L, std::string_view text) {
  std::string_view code = "ERR", msg = text;
  if (!text.empty() && text[0] == '-') {
    size_t sp = text.find(' ');
    if (sp == std::string_view::npos) {
      msg = text.substr(1);
    } else {
      code = text.substr(1, sp - 1);
      msg = text.substr(sp + 1);
    }
  }
  while (!msg.empty() && (msg.back() == '\r' || msg.back() == '\n')) msg.remove_suffix(1);
  std::string err(code);
  err.push_back(' ');
  err.append(msg);
  lua_newtable(L);
  lua_pushlstring(L, err.data(), err.size());
  lua_setfield(L, -2, "err");
}

}  // namespace feedkv::server
