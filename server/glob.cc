#include "server/glob.h"

#include <utility>

namespace feedkv::server {

namespace {

// glibc's tolower() in the C locale on a (signed) char widened to int, as
// Redis calls it: ASCII letters fold, bytes 0x80..0xfe (negative) come back
// as 128..254, and 0xff (-1, EOF) stays -1. Only range bounds see the
// difference; equality tests are the same either way.
int RedisToLower(int c) {
  if (c >= 'A' && c <= 'Z') return c + ('a' - 'A');
  if (c < -1) return c + 256;
  return c;
}

bool SameByte(char a, char b, bool nocase) {
  return nocase ? RedisToLower(static_cast<signed char>(a)) == RedisToLower(static_cast<signed char>(b))
                : a == b;
}

// Matches the element that starts at p[*pi] (not a `*`) against the byte c
// and moves *pi past the element. How far the element reaches depends on the
// pattern alone, never on c.
bool MatchOne(std::string_view p, size_t* pi, char c, bool nocase) {
  size_t q = *pi;
  const size_t n = p.size();
  switch (p[q]) {
    case '?':
      *pi = q + 1;
      return true;
    case '[': {
      q++;
      const bool negate = q < n && p[q] == '^';
      if (negate) q++;
      bool match = false;
      while (true) {
        const size_t left = n - q;
        if (left == 0) break;  // unterminated: the set ends with the pattern
        if (p[q] == '\\' && left >= 2) {
          q++;
          if (p[q] == c) match = true;  // Redis compares an escaped byte exactly
        } else if (p[q] == ']') {
          break;
        } else if (left >= 3 && p[q + 1] == '-') {
          int lo = static_cast<signed char>(p[q]);
          int hi = static_cast<signed char>(p[q + 2]);
          int ch = static_cast<signed char>(c);
          if (lo > hi) std::swap(lo, hi);
          if (nocase) {
            lo = RedisToLower(lo);
            hi = RedisToLower(hi);
            ch = RedisToLower(ch);
          }
          if (ch >= lo && ch <= hi) match = true;
          q += 2;
        } else if (SameByte(p[q], c, nocase)) {
          match = true;
        }
        q++;
      }
      *pi = q < n ? q + 1 : n;
      return match != negate;
    }
    case '\\':
      if (q + 1 < n) q++;  // a trailing backslash is itself
      [[fallthrough]];
    default:
      *pi = q + 1;
      return SameByte(p[q], c, nocase);
  }
}

}  // namespace

bool GlobMatch(std::string_view p, std::string_view s, bool nocase) {
  // Redis's loop runs only while both are non-empty, so "" matches only "".
  if (s.empty()) return p.empty();
  constexpr size_t kNoStar = std::string_view::npos;
  size_t pi = 0, si = 0;
  size_t star_pi = kNoStar, star_si = 0;  // just after the last `*`, and where its run ends
  while (si < s.size()) {
    if (pi < p.size() && p[pi] == '*') {
      while (pi < p.size() && p[pi] == '*') pi++;
      if (pi == p.size()) return true;
      star_pi = pi;
      star_si = si;
      continue;
    }
    size_t next = pi;
    if (pi < p.size() && MatchOne(p, &next, s[si], nocase)) {
      pi = next;
      si++;
      continue;
    }
    if (star_pi == kNoStar) return false;
    // Let the last `*` swallow one more byte. Earlier stars need no retry:
    // any match they could allow is also reachable through this one.
    pi = star_pi;
    si = ++star_si;
  }
  while (pi < p.size() && p[pi] == '*') pi++;
  return pi == p.size();
}

}  // namespace feedkv::server
