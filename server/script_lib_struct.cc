// The `struct` Lua library Redis gives scripts (Roberto Ierusalimschy's
// struct 0.2 interface): pack(fmt, ...), unpack(fmt, s [, pos]) and size(fmt).
//
// A format is a sequence of options: '>' big and '<' little endian (default
// little), '!n' maximum alignment (default 1: none; '!' alone: 8), 'x' a zero
// byte, 'b'/'B' 1-byte, 'h'/'H' 2-byte, 'l'/'L' and 'T' 8-byte, 'in'/'In'
// n-byte (default 4, at most 32) integers (lower case signed), 'f' float,
// 'd' double, 'cn' n chars (c0: the whole string; unpacking, the length is the
// previous value), 's' a zero-terminated string; spaces are ignored. Error
// texts are the library's. Written for feedkv against the Lua C API.
#include <climits>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

extern "C" {
#include <lua5.1/lauxlib.h>
#include <lua5.1/lua.h>
}

#include "server/script_engine.h"

namespace feedkv::server {

namespace {

constexpr int kMaxIntSize = 32;
constexpr int kMaxAlign = 8;

struct FormatState {
  bool little = true;
  int align = 1;
};

bool IsDigit(char c) { return c >= '0' && c <= '9'; }

int ReadNumber(lua_State* L, const char** fmt, int def) {
  if (!IsDigit(**fmt)) return def;
  int a = 0;
  do {
    if (a > INT_MAX / 10 || a * 10 > INT_MAX - (**fmt - '0')) luaL_error(L, "integral size overflow");
    a = a * 10 + (*((*fmt)++) - '0');
  } while (IsDigit(**fmt));
  return a;
}

// The size of option `opt` (reading its digits); 0 for control options.
int OptionSize(lua_State* L, char opt, const char** fmt) {
  switch (opt) {
    case 'B': case 'b': return 1;
    case 'H': case 'h': return 2;
    case 'L': case 'l': return 8;
    case 'T': return 8;
    case 'f': return 4;
    case 'd': return 8;
    case 'x': return 1;
    case 'c': return ReadNumber(L, fmt, 1);
    case 'i': case 'I': {
      const int size = ReadNumber(L, fmt, 4);
      if (size > kMaxIntSize) {
        luaL_error(L, "integral size %d is larger than limit of %d", size, kMaxIntSize);
      }
      return size;
    }
    default: return 0;
  }
}

// Padding before an item of `size` at offset `len`.
int AlignmentPadding(size_t len, const FormatState& h, char opt, int size) {
  if (size == 0 || opt == 'c') return 0;
  if (size > h.align) size = h.align;
  return static_cast<int>((static_cast<size_t>(size) - (len & static_cast<size_t>(size - 1))) &
                          static_cast<size_t>(size - 1));
}

// Applies a control option; errors on an unknown one.
void ControlOption(lua_State* L, int opt, const char** fmt, FormatState* h) {
  switch (opt) {
    case ' ': return;
    case '>': h->little = false; return;
    case '<': h->little = true; return;
    case '!': {
      const int a = ReadNumber(L, fmt, kMaxAlign);
      if (a <= 0 || (a & (a - 1)) != 0) luaL_error(L, "alignment %d is not a power of 2", a);
      h->align = a;
      return;
    }
    default: {
      const char* msg = lua_pushfstring(L, "invalid format option '%c'", opt);
      luaL_argerror(L, 1, msg);
    }
  }
}

// x as Redis's struct converts a Lua number to the integer it packs.
uint64_t PackedBits(lua_Number x) {
  if (x < 0) {
    return x >= -9223372036854775808.0 ? static_cast<uint64_t>(static_cast<int64_t>(x))
                                       : static_cast<uint64_t>(INT64_MIN);
  }
  return x < 18446744073709551616.0 ? static_cast<uint64_t>(x) : 0;
}

void PutInteger(luaL_Buffer* b, uint64_t value, bool little, int size) {
  char buf[kMaxIntSize];
  for (int i = 0; i < size; i++) {
    buf[little ? i : size - 1 - i] = static_cast<char>(i < 8 ? (value >> (8 * i)) & 0xff : 0);
  }
  luaL_addlstring(b, buf, static_cast<size_t>(size));
}

void PutRaw(luaL_Buffer* b, const void* p, int size, bool little) {
  // Floats are stored in host (little-endian) order and reversed for '>'.
  char buf[8];
  std::memcpy(buf, p, static_cast<size_t>(size));
  if (!little) {
    for (int i = 0; i < size / 2; i++) std::swap(buf[i], buf[size - 1 - i]);
  }
  luaL_addlstring(b, buf, static_cast<size_t>(size));
}

int Pack(lua_State* L) {
  const char* fmt = luaL_checkstring(L, 1);
  FormatState h;
  luaL_Buffer b;
  int arg = 2;
  size_t total = 0;
  lua_pushnil(L);  // separates the arguments from the buffer (a missing one reads as nil)
  luaL_buffinit(L, &b);
  while (*fmt != '\0') {
    const char opt = *fmt++;
    const int size = OptionSize(L, opt, &fmt);
    int pad = AlignmentPadding(total, h, opt, size);
    total += static_cast<size_t>(pad);
    while (pad-- > 0) luaL_addchar(&b, '\0');
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
        PutInteger(&b, PackedBits(luaL_checknumber(L, arg++)), h.little, size);
        break;
      case 'x':
        luaL_addchar(&b, '\0');
        break;
      case 'f': {
        const auto f = static_cast<float>(luaL_checknumber(L, arg++));
        PutRaw(&b, &f, 4, h.little);
        break;
      }
      case 'd': {
        const double d = luaL_checknumber(L, arg++);
        PutRaw(&b, &d, 8, h.little);
        break;
      }
      case 'c': case 's': {
        size_t l = 0;
        const char* s = luaL_checklstring(L, arg, &l);
        size_t n = static_cast<size_t>(size);
        if (opt == 's') {
          n = l + 1;
        } else if (n == 0) {
          n = l;
        }
        // The library names the argument after this one (as Redis's struct.c).
        luaL_argcheck(L, opt == 's' || l >= n, arg + 1, "string too short");
        luaL_addlstring(&b, s, opt == 's' ? l : n);
        if (opt == 's') luaL_addchar(&b, '\0');
        arg++;
        total += n;
        continue;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    total += static_cast<size_t>(size);
  }
  luaL_pushresult(&b);
  return 1;
}

lua_Number GetInteger(const char* p, bool little, bool is_signed, int size) {
  uint64_t l = 0;
  for (int i = 0; i < size; i++) {
    const auto byte = static_cast<unsigned char>(p[little ? size - 1 - i : i]);
    l = (l << 8) | byte;
  }
  if (!is_signed) return static_cast<lua_Number>(l);
  if (size < 8) {
    const uint64_t mask = ~uint64_t{0} << (size * 8 - 1);
    if (l & mask) l |= mask;
  }
  return static_cast<lua_Number>(static_cast<int64_t>(l));
}

int Unpack(lua_State* L) {
  FormatState h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t ld = 0;
  const char* data = luaL_checklstring(L, 2, &ld);
  const lua_Integer start = luaL_optinteger(L, 3, 1);
  luaL_argcheck(L, start > 0, 3, "offset must be 1 or greater");
  size_t pos = static_cast<size_t>(start) - 1;
  int n = 0;  // values pushed
  while (*fmt != '\0') {
    const char opt = *fmt++;
    int size = OptionSize(L, opt, &fmt);
    pos += static_cast<size_t>(AlignmentPadding(pos, h, opt, size));
    luaL_argcheck(L, pos <= ld && static_cast<size_t>(size) <= ld - pos, 2, "data string too short");
    luaL_checkstack(L, 2, "too many results");
    switch (opt) {
      case 'b': case 'B': case 'h': case 'H': case 'l': case 'L': case 'T': case 'i': case 'I':
        lua_pushnumber(L, GetInteger(data + pos, h.little, opt >= 'a' && opt <= 'z', size));
        n++;
        break;
      case 'x':
        break;
      case 'f': {
        float f;
        char buf[4];
        std::memcpy(buf, data + pos, 4);
        if (!h.little) {
          std::swap(buf[0], buf[3]);
          std::swap(buf[1], buf[2]);
        }
        std::memcpy(&f, buf, 4);
        lua_pushnumber(L, f);
        n++;
        break;
      }
      case 'd': {
        double d;
        char buf[8];
        std::memcpy(buf, data + pos, 8);
        if (!h.little) {
          for (int i = 0; i < 4; i++) std::swap(buf[i], buf[7 - i]);
        }
        std::memcpy(&d, buf, 8);
        lua_pushnumber(L, d);
        n++;
        break;
      }
      case 'c':
        if (size == 0) {
          if (n == 0 || !lua_isnumber(L, -1)) luaL_error(L, "format 'c0' needs a previous size");
          const lua_Number want = lua_tonumber(L, -1);
          lua_pop(L, 1);
          n--;
          luaL_argcheck(L, want >= 0 && want <= static_cast<lua_Number>(ld - pos), 2, "data string too short");
          size = static_cast<int>(want);
        }
        lua_pushlstring(L, data + pos, static_cast<size_t>(size));
        n++;
        break;
      case 's': {
        const void* end = std::memchr(data + pos, '\0', ld - pos);
        if (end == nullptr) luaL_error(L, "unfinished string in data");
        size = static_cast<int>(static_cast<const char*>(end) - (data + pos)) + 1;
        lua_pushlstring(L, data + pos, static_cast<size_t>(size) - 1);
        n++;
        break;
      }
      default:
        ControlOption(L, opt, &fmt, &h);
    }
    pos += static_cast<size_t>(size);
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos) + 1);
  return n + 1;
}

int Size(lua_State* L) {
  FormatState h;
  const char* fmt = luaL_checkstring(L, 1);
  size_t pos = 0;
  while (*fmt != '\0') {
    const char opt = *fmt++;
    const int size = OptionSize(L, opt, &fmt);
    if (opt == 's') luaL_argerror(L, 1, "option 's' has no fixed size");
    if (opt == 'c' && size == 0) luaL_argerror(L, 1, "option 'c0' has no fixed size");
    if (size == 0) {
      ControlOption(L, opt, &fmt, &h);
      continue;
    }
    pos += static_cast<size_t>(AlignmentPadding(pos, h, opt, size)) + static_cast<size_t>(size);
  }
  lua_pushinteger(L, static_cast<lua_Integer>(pos));
  return 1;
}

}  // namespace

void OpenStructLibrary(lua_State* L) {
  lua_newtable(L);
  const std::pair<const char*, lua_CFunction> functions[] = {{"pack", Pack}, {"unpack", Unpack}, {"size", Size}};
  for (const auto& [name, fn] : functions) {
    lua_pushcfunction(L, fn);
    lua_setfield(L, -2, name);
  }
  lua_setglobal(L, "struct");
}

}  // namespace feedkv::server
