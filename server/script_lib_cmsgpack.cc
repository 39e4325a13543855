// The `cmsgpack` Lua library Redis gives scripts (lua-cmsgpack 0.4.0's
// interface and encodings): pack(...) -> one string of MessagePack values;
// unpack(s) -> every value; unpack_one(s [, offset]) and unpack_limit(s,
// limit [, offset]) -> the next offset (-1 at the end) and the values read.
//
// Encoding follows lua-cmsgpack's choices so the bytes match Redis's: numbers
// equal to an int64 use the smallest integer form, others float32 when exact
// else float64; strings fixstr/str8/16/32; a table whose keys are exactly
// 1..n is an array, any other a map; tables nested deeper than 16 levels
// become nil. Written for feedkv against the Lua C API; no code is shared
// with lua-cmsgpack.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

extern "C" {
#include <lua5.1/lauxlib.h>
#include <lua5.1/lua.h>
}

#include "server/script_engine.h"

namespace feedkv::server {

namespace {

constexpr int kMaxNesting = 16;

void PutBig(std::string* out, uint64_t v, int bytes) {
  for (int i = bytes - 1; i >= 0; i--) out->push_back(static_cast<char>((v >> (8 * i)) & 0xff));
}

void EncodeInteger(std::string* out, int64_t n) {
  if (n >= 0) {
    const auto u = static_cast<uint64_t>(n);
    if (u <= 127) {
      out->push_back(static_cast<char>(u));
    } else if (u <= 0xff) {
      out->push_back(static_cast<char>(0xcc));
      PutBig(out, u, 1);
    } else if (u <= 0xffff) {
      out->push_back(static_cast<char>(0xcd));
      PutBig(out, u, 2);
    } else if (u <= 0xffffffffULL) {
      out->push_back(static_cast<char>(0xce));
      PutBig(out, u, 4);
    } else {
      out->push_back(static_cast<char>(0xcf));
      PutBig(out, u, 8);
    }
    return;
  }
  const auto u = static_cast<uint64_t>(n);
  if (n >= -32) {
    out->push_back(static_cast<char>(u & 0xff));
  } else if (n >= -128) {
    out->push_back(static_cast<char>(0xd0));
    PutBig(out, u, 1);
  } else if (n >= -32768) {
    out->push_back(static_cast<char>(0xd1));
    PutBig(out, u, 2);
  } else if (n >= INT32_MIN) {
    out->push_back(static_cast<char>(0xd2));
    PutBig(out, u, 4);
  } else {
    out->push_back(static_cast<char>(0xd3));
    PutBig(out, u, 8);
  }
}

void EncodeNumber(std::string* out, lua_Number d) {
  if (std::isfinite(d) && d >= -9223372036854775808.0 && d < 9223372036854775808.0 &&
      static_cast<lua_Number>(static_cast<int64_t>(d)) == d) {
    return EncodeInteger(out, static_cast<int64_t>(d));
  }
  const auto f = static_cast<float>(d);
  if (static_cast<double>(f) == d) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    out->push_back(static_cast<char>(0xca));
    PutBig(out, bits, 4);
  } else {
    uint64_t bits;
    std::memcpy(&bits, &d, 8);
    out->push_back(static_cast<char>(0xcb));
    PutBig(out, bits, 8);
  }
}

void EncodeHeader(std::string* out, size_t n, int fix_base, int fix_max, int op16, int op32) {
  if (n <= static_cast<size_t>(fix_max)) {
    out->push_back(static_cast<char>(fix_base | static_cast<int>(n)));
  } else if (n <= 0xffff) {
    out->push_back(static_cast<char>(op16));
    PutBig(out, n, 2);
  } else {
    out->push_back(static_cast<char>(op32));
    PutBig(out, n, 4);
  }
}

// Whether the table on top has exactly the keys 1..n.
bool IsArray(lua_State* L) {
  int64_t count = 0, max = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pop(L, 1);
    if (lua_type(L, -1) != LUA_TNUMBER) {
      lua_pop(L, 1);
      return false;
    }
    const lua_Number k = lua_tonumber(L, -1);
    if (!(k >= 1 && k < 9e15) || std::floor(k) != k) {
      lua_pop(L, 1);
      return false;
    }
    count++;
    max = std::max(max, static_cast<int64_t>(k));
  }
  return max == count;
}

// Encodes the value on top of the stack (leaves it there).
void Encode(lua_State* L, std::string* out, int level) {
  int t = lua_type(L, -1);
  if (t == LUA_TTABLE && (level >= kMaxNesting || !lua_checkstack(L, 3))) t = LUA_TNIL;
  switch (t) {
    case LUA_TSTRING: {
      size_t n = 0;
      const char* s = lua_tolstring(L, -1, &n);
      if (n < 32) {
        out->push_back(static_cast<char>(0xa0 | n));
      } else if (n <= 0xff) {
        out->push_back(static_cast<char>(0xd9));
        PutBig(out, n, 1);
      } else if (n <= 0xffff) {
        out->push_back(static_cast<char>(0xda));
        PutBig(out, n, 2);
      } else {
        out->push_back(static_cast<char>(0xdb));
        PutBig(out, n, 4);
      }
      out->append(s, n);
      return;
    }
    case LUA_TBOOLEAN:
      out->push_back(static_cast<char>(lua_toboolean(L, -1) ? 0xc3 : 0xc2));
      return;
    case LUA_TNUMBER:
      EncodeNumber(out, lua_tonumber(L, -1));
      return;
    case LUA_TTABLE:
      break;
    default:
      out->push_back(static_cast<char>(0xc0));
      return;
  }
  if (IsArray(L)) {
    const size_t n = lua_objlen(L, -1);
    EncodeHeader(out, n, 0x90, 15, 0xdc, 0xdd);
    for (size_t i = 1; i <= n; i++) {
      lua_rawgeti(L, -1, static_cast<int>(i));
      Encode(L, out, level + 1);
      lua_pop(L, 1);
    }
    return;
  }
  size_t n = 0;
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    n++;
    lua_pop(L, 1);
  }
  EncodeHeader(out, n, 0x80, 15, 0xde, 0xdf);
  lua_pushnil(L);
  while (lua_next(L, -2) != 0) {
    lua_pushvalue(L, -2);  // a copy of the key: encoding must not disturb lua_next's
    Encode(L, out, level + 1);
    lua_pop(L, 1);
    Encode(L, out, level + 1);
    lua_pop(L, 1);
  }
}

int Pack(lua_State* L) {
  const int argc = lua_gettop(L);
  if (argc == 0) return luaL_argerror(L, 0, "MessagePack pack needs input.");
  {
    std::string out;
    for (int i = 1; i <= argc; i++) {
      lua_pushvalue(L, i);
      Encode(L, &out, 0);
      lua_pop(L, 1);
    }
    lua_pushlstring(L, out.data(), out.size());
  }
  return 1;
}

enum class DecodeError { kNone, kEof, kBadFormat };

// Reads MessagePack values from bytes, pushing Lua values.
class Decoder {
 public:
  Decoder(const unsigned char* p, size_t n) : p_(p), left_(n) {}
  size_t left() const { return left_; }
  DecodeError error() const { return error_; }

  // Pushes one value (nil after an error, which error() reports).
  void Decode(lua_State* L, int depth) {
    if (!lua_checkstack(L, 3) || depth > 1000) return Fail(L, DecodeError::kBadFormat);
    uint8_t op = 0;
    if (!Take(1, &op)) return Fail(L, DecodeError::kEof);
    if (op <= 0x7f) return lua_pushnumber(L, op);
    if (op >= 0xe0) return lua_pushnumber(L, static_cast<int8_t>(op));
    if ((op & 0xe0) == 0xa0) return String(L, op & 0x1f);
    if ((op & 0xf0) == 0x90) return Array(L, op & 0x0f, depth);
    if ((op & 0xf0) == 0x80) return Map(L, op & 0x0f, depth);
    uint64_t v = 0;
    switch (op) {
      case 0xc0: return lua_pushnil(L);
      case 0xc2: return lua_pushboolean(L, 0);
      case 0xc3: return lua_pushboolean(L, 1);
      case 0xcc: case 0xcd: case 0xce: case 0xcf: {
        if (!Number(1 << (op - 0xcc), &v)) return Fail(L, DecodeError::kEof);
        return lua_pushnumber(L, static_cast<lua_Number>(v));
      }
      case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        const int bytes = 1 << (op - 0xd0);
        if (!Number(bytes, &v)) return Fail(L, DecodeError::kEof);
        // Sign-extend from the value's width.
        const int shift = 64 - 8 * bytes;
        const int64_t s = static_cast<int64_t>(v << shift) >> shift;
        return lua_pushnumber(L, static_cast<lua_Number>(s));
      }
      case 0xca: {
        if (!Number(4, &v)) return Fail(L, DecodeError::kEof);
        float f;
        const auto bits = static_cast<uint32_t>(v);
        std::memcpy(&f, &bits, 4);
        return lua_pushnumber(L, f);
      }
      case 0xcb: {
        if (!Number(8, &v)) return Fail(L, DecodeError::kEof);
        double d;
        std::memcpy(&d, &v, 8);
        return lua_pushnumber(L, d);
      }
      case 0xd9:
        if (!Number(1, &v)) return Fail(L, DecodeError::kEof);
        return String(L, v);
      case 0xda:
        if (!Number(2, &v)) return Fail(L, DecodeError::kEof);
        return String(L, v);
      case 0xdb:
        if (!Number(4, &v)) return Fail(L, DecodeError::kEof);
        return String(L, v);
      case 0xdc:
        if (!Number(2, &v)) return Fail(L, DecodeError::kEof);
        return Array(L, v, depth);
      case 0xdd:
        if (!Number(4, &v)) return Fail(L, DecodeError::kEof);
        return Array(L, v, depth);
      case 0xde:
        if (!Number(2, &v)) return Fail(L, DecodeError::kEof);
        return Map(L, v, depth);
      case 0xdf:
        if (!Number(4, &v)) return Fail(L, DecodeError::kEof);
        return Map(L, v, depth);
      default:
        return Fail(L, DecodeError::kBadFormat);
    }
  }

 private:
  void Fail(lua_State* L, DecodeError e) {
    if (error_ == DecodeError::kNone) error_ = e;
    lua_pushnil(L);
  }
  bool Take(size_t n, uint8_t* first) {
    if (left_ < n) return false;
    *first = p_[0];
    p_ += n;
    left_ -= n;
    return true;
  }
  bool Number(int bytes, uint64_t* v) {
    if (left_ < static_cast<size_t>(bytes)) return false;
    *v = 0;
    for (int i = 0; i < bytes; i++) *v = (*v << 8) | p_[i];
    p_ += bytes;
    left_ -= static_cast<size_t>(bytes);
    return true;
  }
  void String(lua_State* L, uint64_t n) {
    if (left_ < n) return Fail(L, DecodeError::kEof);
    lua_pushlstring(L, reinterpret_cast<const char*>(p_), n);
    p_ += n;
    left_ -= n;
  }
  void Array(lua_State* L, uint64_t n, int depth) {
    // Every element takes at least a byte: a count beyond the input is short input.
    if (n > left_) return Fail(L, DecodeError::kEof);
    lua_createtable(L, static_cast<int>(n), 0);
    for (uint64_t i = 1; i <= n && error_ == DecodeError::kNone; i++) {
      Decode(L, depth + 1);
      lua_rawseti(L, -2, static_cast<int>(i));
    }
  }
  void Map(lua_State* L, uint64_t n, int depth) {
    if (n > left_ / 2) return Fail(L, DecodeError::kEof);
    lua_createtable(L, 0, static_cast<int>(n));
    for (uint64_t i = 0; i < n && error_ == DecodeError::kNone; i++) {
      Decode(L, depth + 1);
      Decode(L, depth + 1);
      if (lua_isnil(L, -2) || (lua_type(L, -2) == LUA_TNUMBER && std::isnan(lua_tonumber(L, -2)))) {
        lua_pop(L, 2);  // not a key Lua can hold
      } else {
        lua_rawset(L, -3);
      }
    }
  }

  const unsigned char* p_;
  size_t left_;
  DecodeError error_ = DecodeError::kNone;
};

// Decodes up to `limit` values (all when limit and offset are 0) from arg 1
// starting at byte `offset`; with a limit or offset, the next offset (-1 at
// the end) comes first.
int Unpack(lua_State* L, lua_Integer limit, lua_Integer offset) {
  size_t len = 0;
  const char* s = luaL_checklstring(L, 1, &len);
  lua_settop(L, 1);
  if (offset < 0 || limit < 0) {
    return luaL_error(L, "Invalid request to unpack with offset of %d and limit of %d.",
                      static_cast<int>(offset), static_cast<int>(len));
  }
  if (static_cast<size_t>(offset) > len) {
    return luaL_error(L, "Start offset %d greater than input length %d.", static_cast<int>(offset),
                      static_cast<int>(len));
  }
  const bool all = limit == 0 && offset == 0;
  if (all) limit = INT32_MAX;
  Decoder d(reinterpret_cast<const unsigned char*>(s) + offset, len - static_cast<size_t>(offset));
  int count = 0;
  while (d.left() > 0 && count < limit) {
    if (!lua_checkstack(L, 4)) return luaL_error(L, "too many results to unpack");
    d.Decode(L, 0);
    if (d.error() == DecodeError::kEof) return luaL_error(L, "Missing bytes in input.");
    if (d.error() == DecodeError::kBadFormat) return luaL_error(L, "Bad data format in input.");
    count++;
  }
  if (!all) {
    lua_pushinteger(L, d.left() == 0 ? -1 : static_cast<lua_Integer>(len - d.left()));
    lua_insert(L, 2);
    count++;
  }
  return count;
}

int UnpackAll(lua_State* L) { return Unpack(L, 0, 0); }
int UnpackOne(lua_State* L) { return Unpack(L, 1, luaL_optinteger(L, 2, 0)); }
int UnpackLimit(lua_State* L) { return Unpack(L, luaL_checkinteger(L, 2), luaL_optinteger(L, 3, 0)); }

}  // namespace

void OpenCmsgpackLibrary(lua_State* L) {
  lua_newtable(L);
  const std::pair<const char*, lua_CFunction> functions[] = {
      {"pack", Pack}, {"unpack", UnpackAll}, {"unpack_one", UnpackOne}, {"unpack_limit", UnpackLimit}};
  for (const auto& [name, fn] : functions) {
    lua_pushcfunction(L, fn);
    lua_setfield(L, -2, name);
  }
  lua_pushstring(L, "cmsgpack");
  lua_setfield(L, -2, "_NAME");
  lua_pushstring(L, "lua-cmsgpack 0.4.0");
  lua_setfield(L, -2, "_VERSION");
  lua_pushstring(L, "Copyright (C) 2012, Salvatore Sanfilippo");
  lua_setfield(L, -2, "_COPYRIGHT");
  lua_pushstring(L, "MessagePack C implementation for Lua");
  lua_setfield(L, -2, "_DESCRIPTION");
  lua_setglobal(L, "cmsgpack");
}

}  // namespace feedkv::server
