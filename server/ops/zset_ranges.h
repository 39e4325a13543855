// Redis's interval syntax for sorted sets: score intervals (ZRANGEBYSCORE, ZCOUNT,
// ZREMRANGEBYSCORE) and lex intervals (ZRANGEBYLEX, ZLEXCOUNT, ZREMRANGEBYLEX), parsed
// by the commands and resolved to ranks by the operations (server/ops/zset_ops.h).
// Pure values; no lookups, no replies.
#pragma once

#include <cmath>
#include <cstdlib>
#include <string>
#include <string_view>

#include "storage/sorted_set.h"

namespace feedkv::server {

// A score interval as ZRANGEBYSCORE takes it: "1.5", "(1.5", "-inf", "+inf".
struct ScoreRange {
  double min = 0, max = 0;
  bool minex = false, maxex = false;

  // Redis's zslParseRange: strtod of the whole text after an optional '('.
  static bool ParseItem(std::string_view s, double* v, bool* ex) {
    *ex = !s.empty() && s[0] == '(';
    if (*ex) s.remove_prefix(1);
    const std::string text(s);
    char* end = nullptr;
    *v = std::strtod(text.c_str(), &end);
    return *end == '\0' && !std::isnan(*v);
  }
  bool Parse(std::string_view lo, std::string_view hi) {
    return ParseItem(lo, &min, &minex) && ParseItem(hi, &max, &maxex);
  }
  bool Empty() const { return min > max || (min == max && (minex || maxex)); }
  bool BelowMin(double s) const { return minex ? s <= min : s < min; }
  bool WithinMax(double s) const { return maxex ? s < max : s <= max; }
  bool Contains(double s) const { return !BelowMin(s) && WithinMax(s); }
  // Ascending ranks [*lo, *hi) of the members in range.
  void Ranks(const SortedSetValue& z, size_t* lo, size_t* hi) const {
    *lo = z.CountWhile([&](double s, std::string_view) { return BelowMin(s); });
    *hi = z.CountWhile([&](double s, std::string_view) { return WithinMax(s); });
    if (*hi < *lo) *hi = *lo;
  }
};

// A lex interval as ZRANGEBYLEX takes it: "[a", "(a", "-", "+".
struct LexRange {
  std::string_view min, max;
  bool minex = false, maxex = false;
  int min_kind = 0, max_kind = 0;  // -1 "-", +1 "+", 0 a string

  static bool ParseItem(std::string_view s, std::string_view* v, bool* ex, int* kind) {
    if (s.empty()) return false;
    *kind = 0;
    switch (s[0]) {
      case '+':
      case '-':
        if (s.size() != 1) return false;
        *ex = true;
        *kind = s[0] == '+' ? 1 : -1;
        return true;
      case '(':
      case '[':
        *ex = s[0] == '(';
        *v = s.substr(1);
        return true;
      default:
        return false;
    }
  }
  bool Parse(std::string_view lo, std::string_view hi) {
    return ParseItem(lo, &min, &minex, &min_kind) && ParseItem(hi, &max, &maxex, &max_kind);
  }
  // Redis's sdscmplex: "-" sorts before every string, "+" after.
  static int Cmp(std::string_view a, int akind, std::string_view b, int bkind) {
    if (akind != 0 || bkind != 0) return akind == bkind ? 0 : (akind < bkind ? -1 : 1);
    const int c = a.compare(b);
    return c < 0 ? -1 : (c > 0 ? 1 : 0);
  }
  bool Empty() const {
    const int c = Cmp(min, min_kind, max, max_kind);
    return c > 0 || (c == 0 && (minex || maxex));
  }
  bool BelowMin(std::string_view m) const {
    const int c = Cmp(m, 0, min, min_kind);
    return minex ? c <= 0 : c < 0;
  }
  bool WithinMax(std::string_view m) const {
    const int c = Cmp(m, 0, max, max_kind);
    return maxex ? c < 0 : c <= 0;
  }
  void Ranks(const SortedSetValue& z, size_t* lo, size_t* hi) const {
    *lo = z.CountWhile([&](double, std::string_view m) { return BelowMin(m); });
    *hi = z.CountWhile([&](double, std::string_view m) { return WithinMax(m); });
    if (*hi < *lo) *hi = *lo;
  }
};

}  // namespace feedkv::server
