// Helpers shared by the sorted-set command files (cmd_zsets.cc, cmd_zset_ranges.cc):
// one lookup of a sorted-set key, Redis's score and lex range syntax, and storing a
// result under a destination key.
#pragma once

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>

#include "server/command_context.h"
#include "server/commands/lookup.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

inline ZsetLimits ZLimits(const CommandContext& ctx) {
  const ServerConfig& c = ctx.server.cfg();
  return ZsetLimits{static_cast<size_t>(c.zset_max_listpack_entries),
                    static_cast<size_t>(c.zset_max_listpack_value)};
}

// The sorted set at `key`: false (WRONGTYPE replied) when the key holds another
// type; *zset is null when the key is missing. `read` counts a keyspace hit or miss.
inline bool LookupZset(CommandContext& ctx, std::string_view key, bool read, Entry** entry,
                       SortedSetValue** zset) {
  return LookupTyped(ctx, key, ValueType::kZset, read, entry, zset);
}

// After removals: drop an emptied key, else re-measure it.
inline void ZAfterRemoval(CommandContext& ctx, std::string_view key, Entry* e, SortedSetValue* z) {
  if (z->empty()) {
    ctx.db().Delete(key);
    ctx.Notify(kNotifyGeneric, "del", key);
  } else {
    ctx.db().UpdateObjectMemory(e);
  }
}

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

// Redis's rank arithmetic (ZRANGE, ZREMRANGEBYRANK): negative indexes count from
// the end; false when the range is empty, else *lo..*hi inclusive within size.
inline bool ClampRanks(int64_t start, int64_t end, size_t size, size_t* lo, size_t* hi) {
  const auto len = static_cast<int64_t>(size);
  if (start < 0) start += len;
  if (end < 0) end += len;
  if (start < 0) start = 0;
  if (start > end || start >= len) return false;
  if (end >= len) end = len - 1;
  *lo = static_cast<size_t>(start);
  *hi = static_cast<size_t>(end);
  return true;
}

// Replaces the destination (argument 1) with `result`, or deletes it when result is
// empty, as Redis's *STORE commands; replies the result's size. Only the
// destination is touched for WATCH.
inline void StoreZset(CommandContext& ctx, std::unique_ptr<SortedSetValue> result) {
  const std::string_view dst = ctx.arg(1);
  if (result == nullptr || result->empty()) {
    if (ctx.db().Delete(dst)) {
      ctx.Dirty();
      ctx.Touched(ctx.client.db, dst);
      ctx.Notify(kNotifyGeneric, "del", dst);
    }
    return ctx.reply.Integer(0);
  }
  const auto n = static_cast<int64_t>(result->size());
  ctx.db().SetObject(dst, std::move(result), kNoExpire, false);
  ctx.Dirty();
  ctx.Touched(ctx.client.db, dst);
  ctx.Notify(kNotifyZset, ctx.spec.name, dst);  // zunionstore, zinterstore, zdiffstore, zrangestore
  ctx.reply.Integer(n);
}

}  // namespace feedkv::server
