// SORT and SORT_RO, as Redis 7.0's sort.c: the elements of a list, set or sorted
// set, sorted numerically (by their own value or a BY pattern's key or hash field)
// or with ALPHA by bytes, DESC, LIMIT offset count, GET patterns ('#' is the element,
// "key*->field" reads a hash field), and (SORT only) STORE into a list.
//
// Numeric ties are broken by the elements' bytes, so the order is total and equal
// to Redis's; ALPHA with a BY pattern whose values tie keeps the key's own order
// (lists: theirs; sets: feedkv's iteration order, which is not Redis's). BY with no
// '*' skips sorting: lists and sorted sets come in their order, sets (only with
// STORE, as Redis) sorted by ALPHA so the stored list is deterministic.
//
// A STORE is logged as the list it made (DEL dst, then RPUSH dst elements), not as
// the SORT: a replica does not redo the lookups.
#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/list_ops.h"
#include "server/ops/partial_quicksort.h"
#include "server/script_engine.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/hash_value.h"
#include "storage/list_value.h"
#include "storage/set_value.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

namespace {

struct SortItem {
  explicit SortItem(std::string e) : element(std::move(e)) {}
  std::string element;
  double score = 0;
  std::optional<std::string> by;  // ALPHA BY: the pattern's value (none: missing key)
};

// Redis's lookupKeyByPattern: '#' is the element itself; the first '*' is replaced
// by it; "->field" after the '*' reads that field of a hash. Missing key, wrong
// type or a pattern without '*': nullopt.
std::optional<std::string> LookupByPattern(CommandContext& ctx, std::string_view pattern,
                                           std::string_view element) {
  if (pattern == "#") return std::string(element);
  const size_t star = pattern.find('*');
  if (star == std::string_view::npos) return std::nullopt;
  std::string_view field;
  std::string_view after = pattern.substr(star + 1);
  const size_t arrow = after.find("->");
  if (arrow != std::string_view::npos && arrow + 2 < after.size()) {
    field = after.substr(arrow + 2);
    after = after.substr(0, arrow);
  }
  std::string key;
  key.reserve(pattern.size() + element.size());
  key.append(pattern.substr(0, star)).append(element).append(after);
  Entry* e = ctx.LookupRead(ctx.db(), key, ctx.now_ms());
  if (e == nullptr) return std::nullopt;
  if (!field.empty()) {
    if (e->type != ValueType::kHash) return std::nullopt;
    std::string_view v;
    if (!static_cast<const HashValue*>(Database::GetObject(e))->Get(field, &v)) return std::nullopt;
    return std::string(v);
  }
  if (e->type != ValueType::kString) return std::nullopt;
  std::string scratch;
  return std::string(Database::StringValue(e, &scratch));
}

// strtod over the value as a C string, as Redis: the whole string must be read
// (up to a NUL), without overflow, and not NaN. An empty string is 0.
bool ScoreOf(const std::string& v, double* out) {
  char* end = nullptr;
  errno = 0;
  *out = std::strtod(v.c_str(), &end);
  return *end == '\0' && errno != ERANGE && !std::isnan(*out);
}

// Redis's compareStringObjects (bytes, then length) and, outside STORE,
// strcoll of the C strings; feedkv runs in the C locale, where that is strcmp.
int CompareBytes(std::string_view a, std::string_view b) {
  const int c = a.compare(b);
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}
int Collate(const std::string& a, const std::string& b) {
  const int c = std::strcmp(a.c_str(), b.c_str());
  return c < 0 ? -1 : c > 0 ? 1 : 0;
}

void SortGeneric(CommandContext& ctx, bool readonly) {
  bool desc = false, alpha = false, dontsort = false;
  int64_t limit_start = 0, limit_count = -1;
  std::optional<std::string_view> sortby, store;
  std::vector<std::string_view> gets;
  // As Redis: BY with a pattern and GET read keys no key position names, so
  // they need a user that may read every key.
  auto may_read_all = [&ctx] {
    return ctx.client.user == nullptr || ctx.server.acl().HasUnrestrictedReadAccess(*ctx.client.user, ctx.spec, ctx.args);
  };
  for (size_t j = 2; j < ctx.argc(); j++) {
    const size_t left = ctx.argc() - j - 1;
    const std::string_view a = ctx.arg(j);
    if (EqualsIgnoreCase(a, "asc")) {
      desc = false;
    } else if (EqualsIgnoreCase(a, "desc")) {
      desc = true;
    } else if (EqualsIgnoreCase(a, "alpha")) {
      alpha = true;
    } else if (EqualsIgnoreCase(a, "limit") && left >= 2) {
      if (!ctx.IntArg(j + 1, &limit_start) || !ctx.IntArg(j + 2, &limit_count)) return;
      j += 2;
    } else if (!readonly && EqualsIgnoreCase(a, "store") && left >= 1) {
      store = ctx.arg(++j);
    } else if (EqualsIgnoreCase(a, "by") && left >= 1) {
      sortby = ctx.arg(++j);
      // A pattern without '*' names one key for every element: nothing to sort by.
      if (sortby->find('*') == std::string_view::npos) {
        dontsort = true;
      } else if (!may_read_all()) {
        return ctx.Error(protocol::err::kSortByDenied);
      }
    } else if (EqualsIgnoreCase(a, "get") && left >= 1) {
      if (!may_read_all()) return ctx.Error(protocol::err::kSortGetDenied);
      gets.push_back(ctx.arg(++j));
    } else {
      return ctx.SyntaxError();
    }
  }

  Entry* e = ctx.LookupRead(ctx.db(), ctx.arg(1), ctx.now_ms());
  if (e != nullptr && e->type != ValueType::kList && e->type != ValueType::kSet && e->type != ValueType::kZset) {
    return ctx.WrongType();
  }
  const ValueType type = e == nullptr ? ValueType::kList : e->type;
  // Called from a script, as Redis (CLIENT_SCRIPT): its output is sorted too.
  const bool from_script = ctx.server.scripts().running() != nullptr && &ctx.client == &ctx.server.scripts().client();
  if (dontsort && type == ValueType::kSet && (store || from_script)) {
    // A set has no order of its own: a stored result (or one a script reads)
    // is sorted so it is deterministic.
    dontsort = false;
    alpha = true;
    sortby.reset();
  }

  // Redis 7.0 converts a listpack sorted set to skiplist before it sorts it, SORT_RO
  // too; OBJECT ENCODING shows it afterwards.
  if (type == ValueType::kZset) {
    auto* z = static_cast<SortedSetValue*>(Database::GetObject(e));
    if (z->is_listpack()) {
      z->ConvertToSkiplist();
      ctx.db().UpdateObjectMemory(e);
    }
  }

  // The elements, in the key's own order (a sorted set's by score).
  std::vector<SortItem> items;
  if (e != nullptr) {
    const Object* obj = Database::GetObject(e);
    if (type == ValueType::kList) {
      const auto* l = static_cast<const ListValue*>(obj);
      items.reserve(l->size());
      if (l->size() > 0) {
        l->ForRange(0, l->size() - 1, false, [&](std::string_view v) {
          items.emplace_back(std::string(v));
          return true;
        });
      }
    } else if (type == ValueType::kSet) {
      const auto* s = static_cast<const SetValue*>(obj);
      items.reserve(s->size());
      char buf[24];
      s->ForEach([&](const SetMember& m) { items.emplace_back(std::string(m.Text(buf))); });
    } else {
      const auto* z = static_cast<const SortedSetValue*>(obj);
      items.reserve(z->size());
      z->ForEach([&](const ZEntry& x) { items.emplace_back(std::string(x.member)); });
    }
  }
  const auto n = static_cast<int64_t>(items.size());

  // LIMIT, clamped as Redis does.
  int64_t start = std::min(std::max<int64_t>(limit_start, 0), n);
  limit_count = std::min(std::max<int64_t>(limit_count, -1), n);
  int64_t end = limit_count < 0 ? n - 1 : start + limit_count - 1;
  if (start >= n) {
    start = n - 1;
    end = n - 2;
  }
  if (end >= n) end = n - 1;

  bool conversion_error = false;
  if (dontsort) {
    if (desc && type != ValueType::kSet) std::reverse(items.begin(), items.end());
  } else {
    for (SortItem& it : items) {
      std::optional<std::string> byval;
      if (sortby) {
        byval = LookupByPattern(ctx, *sortby, it.element);
        if (!byval) continue;  // score 0, or no ALPHA value
      }
      if (alpha) {
        if (sortby) it.by = std::move(byval);
      } else if (!ScoreOf(sortby ? *byval : it.element, &it.score)) {
        conversion_error = true;
      }
    }
    const bool bytes_order = store.has_value();
    auto compare = [&](const SortItem& a, const SortItem& b) {
      int c;
      if (!alpha) {
        c = a.score > b.score ? 1 : a.score < b.score ? -1 : CompareBytes(a.element, b.element);
      } else if (sortby) {
        if (!a.by || !b.by) {
          c = a.by.has_value() == b.by.has_value() ? 0 : !a.by ? -1 : 1;
        } else {
          c = bytes_order ? CompareBytes(*a.by, *b.by) : Collate(*a.by, *b.by);
        }
      } else {
        c = bytes_order ? CompareBytes(a.element, b.element) : Collate(a.element, b.element);
      }
      return desc ? -c : c;
    };
    // As Redis: a BY sort with a LIMIT window sorts only the window, with its partial
    // quicksort, which decides the order of ties (ALPHA BY values that compare
    // equal); any other sort is its qsort, glibc's stable merge sort.
    if (sortby && (start != 0 || end != n - 1)) {
      if (start <= end) {
        PartialQuickSort(items, static_cast<size_t>(start), static_cast<size_t>(end), compare);
      }
    } else {
      std::stable_sort(items.begin(), items.end(),
                       [&](const SortItem& a, const SortItem& b) { return compare(a, b) < 0; });
    }
  }
  if (conversion_error) return ctx.Error(protocol::err::kSortNotDouble);

  const int64_t outputlen = (gets.empty() ? 1 : static_cast<int64_t>(gets.size())) * (end - start + 1);
  if (!store) {
    ctx.reply.ArrayHeader(static_cast<size_t>(outputlen));
    for (int64_t j = start; j <= end; j++) {
      const std::string& el = items[static_cast<size_t>(j)].element;
      if (gets.empty()) ctx.reply.Bulk(el);
      for (std::string_view g : gets) {
        std::optional<std::string> v = LookupByPattern(ctx, g, el);
        v ? ctx.reply.Bulk(*v) : ctx.reply.Null();
      }
    }
    return;
  }

  std::vector<std::string> log = {"RPUSH", std::string(*store)};
  for (int64_t j = start; j <= end; j++) {
    const std::string& el = items[static_cast<size_t>(j)].element;
    if (gets.empty()) log.push_back(el);
    for (std::string_view g : gets) log.push_back(LookupByPattern(ctx, g, el).value_or(std::string()));
  }
  Database& db = ctx.db();
  const bool existed = db.Lookup(*store, ctx.now_ms()) != nullptr;
  if (outputlen > 0) {
    auto list = std::make_unique<ListValue>();
    const int64_t fill = list_ops::Fill(ctx);
    for (size_t i = 2; i < log.size(); i++) list->Push(false, log[i], fill);
    db.SetObject(*store, std::move(list), kNoExpire, false);
    ctx.PropagateAs({"DEL", std::string(*store)});
    ctx.PropagateAs(std::move(log));
    ctx.Dirty(outputlen);
    ctx.Touched(ctx.client.db, *store);
    ctx.Notify(kNotifyList, "sortstore", *store);
  } else if (existed) {
    db.Delete(*store);
    ctx.PropagateAs({"DEL", std::string(*store)});
    ctx.Dirty();
    ctx.Touched(ctx.client.db, *store);
    ctx.Notify(kNotifyGeneric, "del", *store);
  }
  ctx.reply.Integer(outputlen);
}

void Sort(CommandContext& ctx) { SortGeneric(ctx, false); }
void SortRo(CommandContext& ctx) { SortGeneric(ctx, true); }

// SORT's keys beyond the first: the STORE destination, found as Redis's
// sortGetKeys does (skipping LIMIT's two arguments and GET/BY's one).
std::vector<int> SortStoreKey(std::span<const std::string_view> argv) {
  std::vector<int> keys;
  for (size_t j = 2; j < argv.size(); j++) {
    const std::string_view a = argv[j];
    const size_t skip = EqualsIgnoreCase(a, "limit") ? 2 : EqualsIgnoreCase(a, "get") || EqualsIgnoreCase(a, "by") ? 1 : 0;
    if (EqualsIgnoreCase(a, "store") && j + 1 < argv.size()) {
      // Redis keeps the last STORE it sees.
      keys.assign(1, static_cast<int>(j + 1));
      j++;
      continue;
    }
    j += skip;
  }
  return keys;
}

// SORT_RO's: none that a scan can name (BY/GET keys derive from the values), but
// like Redis the row is "movablekeys", with an unknown key spec for them.
std::vector<int> SortRoPatternKeys(std::span<const std::string_view>) { return {}; }

const CommandSpec kCommands[] = {
    {"sort", -2, kWrite | kDenyOom | kAclContainers | kAclDangerous, 1, 1, 1, Sort,
     "Sort the elements in a list, set or sorted set", "generic", {},
     {kKeyRO | kKeyAccess, kKeyOW | kKeyUpdate}, {}, 0, SortStoreKey},
    {"sort_ro", -2, kReadOnly | kAclContainers | kAclDangerous, 1, 1, 1, SortRo, "Sort the elements in a list, set or sorted set. Read-only variant of SORT.",
     "generic", {}, {kKeyRO | kKeyAccess}, {}, 0, SortRoPatternKeys},
};

}  // namespace

std::span<const CommandSpec> SortCommands() { return kCommands; }

}  // namespace feedkv::server
