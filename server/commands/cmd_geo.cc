// GEO commands: GEOADD, GEOPOS, GEODIST, GEOHASH, GEORADIUS[_RO],
// GEORADIUSBYMEMBER[_RO], GEOSEARCH and GEOSEARCHSTORE, as Redis 7.0's geo.c. A
// geo key is an ordinary sorted set whose scores are 52-bit geohashes
// (storage/geohash.h), so TYPE says "zset" and every Z* command works on it.
// GEOADD stores through the sorted-set operations (server/ops/zset_ops.h); a
// search reads at most nine score ranges and checks each member found against
// the exact shape. Replies, error texts and argument rules follow geo.c.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "protocol/error_text.h"
#include "server/command_context.h"
#include "server/ops/partial_quicksort.h"
#include "server/ops/zset_ops.h"
#include "server/server.h"
#include "storage/database.h"
#include "storage/float_text.h"
#include "storage/geohash.h"
#include "storage/sorted_set.h"

namespace feedkv::server {

namespace {

// Redis's GEO error texts.
constexpr char kUnknownUnit[] = "ERR unsupported unit provided. please use M, KM, FT, MI";
constexpr char kBadMember[] = "ERR could not decode requested zset member";
constexpr char kNegativeRadius[] = "ERR radius cannot be negative";
constexpr char kNegativeBox[] = "ERR height or width cannot be negative";
constexpr char kCountPositive[] = "ERR COUNT must be > 0";
constexpr char kAnyNeedsCount[] = "ERR the ANY argument requires COUNT argument";

// Reads (lon, lat) at args i and i+1; false after replying the error.
bool LonLatArgs(CommandContext& ctx, size_t i, double* lon, double* lat) {
  if (!ctx.DoubleArg(i, lon) || !ctx.DoubleArg(i + 1, lat)) return false;
  if (*lon < geo::kLonMin || *lon > geo::kLonMax || *lat < geo::kLatMin || *lat > geo::kLatMax) {
    char buf[160];
    std::snprintf(buf, sizeof(buf), "ERR invalid longitude,latitude pair %f,%f", *lon, *lat);
    ctx.Error(buf);
    return false;
  }
  return true;
}

// Metres per `unit` (m, km, ft, mi, any case); false after replying the error.
bool UnitArg(CommandContext& ctx, size_t i, double* to_meters) {
  const std::string_view u = ctx.arg(i);
  if (EqualsIgnoreCase(u, "m")) {
    *to_meters = 1;
  } else if (EqualsIgnoreCase(u, "km")) {
    *to_meters = 1000;
  } else if (EqualsIgnoreCase(u, "ft")) {
    *to_meters = 0.3048;
  } else if (EqualsIgnoreCase(u, "mi")) {
    *to_meters = 1609.34;
  } else {
    ctx.Error(kUnknownUnit);
    return false;
  }
  return true;
}

// A number argument whose parse error is the command's own text ("need numeric radius").
bool NumberArg(CommandContext& ctx, size_t i, std::string_view error, double* out) {
  if (ParseDouble(ctx.arg(i), out)) return true;
  ctx.Error(error);
  return false;
}

// radius unit at args i, i+1.
bool RadiusArgs(CommandContext& ctx, size_t i, geo::Shape* shape) {
  if (!NumberArg(ctx, i, "ERR need numeric radius", &shape->radius)) return false;
  if (shape->radius < 0) {
    ctx.Error(kNegativeRadius);
    return false;
  }
  shape->kind = geo::Shape::kCircle;
  return UnitArg(ctx, i + 1, &shape->unit_to_meters);
}

// width height unit at args i..i+2.
bool BoxArgs(CommandContext& ctx, size_t i, geo::Shape* shape) {
  if (!NumberArg(ctx, i, "ERR need numeric width", &shape->width) ||
      !NumberArg(ctx, i + 1, "ERR need numeric height", &shape->height)) {
    return false;
  }
  if (shape->width < 0 || shape->height < 0) {
    ctx.Error(kNegativeBox);
    return false;
  }
  shape->kind = geo::Shape::kBox;
  return UnitArg(ctx, i + 2, &shape->unit_to_meters);
}

// A distance as Redis replies it: four decimals, as a bulk string.
void ReplyDistance(CommandContext& ctx, double d) {
  char buf[128];
  const int n = std::snprintf(buf, sizeof(buf), "%.4f", d);
  ctx.reply.Bulk(std::string_view(buf, static_cast<size_t>(n)));
}

// A coordinate as Redis replies it (addReplyHumanLongDouble: 17 decimals, trailing
// zeros trimmed; a double in RESP3).
void ReplyCoordinate(CommandContext& ctx, double d) {
  ctx.reply.FormattedDouble(FormatLongDouble(static_cast<long double>(d)));
}

// The position of `member` in `z`; false when it is not there.
bool MemberPosition(const SortedSetValue* z, std::string_view member, double* lon, double* lat) {
  double score;
  if (z == nullptr || !z->Score(member, &score)) return false;
  geo::ScoreToLonLat(score, lon, lat);
  return true;
}

// GEOADD key [NX|XX] [CH] longitude latitude member [longitude latitude member ...]
void GeoAdd(CommandContext& ctx) {
  int flags = 0;
  bool ch = false;
  size_t first = 2;
  for (; first < ctx.argc(); ++first) {
    const std::string_view a = ctx.arg(first);
    if (EqualsIgnoreCase(a, "nx")) {
      flags |= SortedSetValue::kNX;
    } else if (EqualsIgnoreCase(a, "xx")) {
      flags |= SortedSetValue::kXX;
    } else if (EqualsIgnoreCase(a, "ch")) {
      ch = true;
    } else {
      break;
    }
  }
  const size_t rest = ctx.argc() - first;
  if (rest % 3 != 0 || ((flags & SortedSetValue::kNX) && (flags & SortedSetValue::kXX))) {
    return ctx.SyntaxError();
  }
  const size_t n = rest / 3;
  std::vector<double> scores(n);
  std::vector<std::string_view> pairs(2 * n);  // zset_ops::Add reads members at odd places
  for (size_t j = 0; j < n; ++j) {
    double lon, lat;
    if (!LonLatArgs(ctx, first + 3 * j, &lon, &lat)) return;  // nothing changed yet
    scores[j] = geo::LonLatToScore(lon, lat);
    pairs[2 * j + 1] = ctx.arg(first + 3 * j + 2);
  }
  StatusOr<zset_ops::AddOutcome> out = zset_ops::Add(ctx, ctx.arg(1), flags, scores, pairs);
  if (!out.ok()) return ctx.Error(out.status());
  ctx.reply.Integer(ch ? out->added + out->updated : out->added);
}

// GEOPOS key [member ...]
void GeoPos(CommandContext& ctx) {
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  ctx.reply.ArrayHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    double lon, lat;
    if (!MemberPosition(z, ctx.arg(i), &lon, &lat)) {
      ctx.reply.NullArray();
      continue;
    }
    ctx.reply.ArrayHeader(2);
    ReplyCoordinate(ctx, lon);
    ReplyCoordinate(ctx, lat);
  }
}

// GEODIST key member1 member2 [M|KM|FT|MI]
void GeoDist(CommandContext& ctx) {
  double to_meters = 1;
  if (ctx.argc() == 5) {
    if (!UnitArg(ctx, 4, &to_meters)) return;
  } else if (ctx.argc() > 5) {
    return ctx.SyntaxError();
  }
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  double lon1, lat1, lon2, lat2;
  if (!MemberPosition(z, ctx.arg(2), &lon1, &lat1) || !MemberPosition(z, ctx.arg(3), &lon2, &lat2)) {
    return ctx.reply.Null();
  }
  ReplyDistance(ctx, geo::Distance(lon1, lat1, lon2, lat2) / to_meters);
}

// GEOHASH key [member ...]
void GeoHash(CommandContext& ctx) {
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, ctx.arg(1)), &z)) return;
  ctx.reply.ArrayHeader(ctx.argc() - 2);
  for (size_t i = 2; i < ctx.argc(); ++i) {
    double score;
    if (z == nullptr || !z->Score(ctx.arg(i), &score)) {
      ctx.reply.Null();
    } else {
      ctx.reply.Bulk(geo::StandardGeohash(score));
    }
  }
}

// One member a search found.
struct GeoPoint {
  std::string member;
  double lon, lat, distance, score;
};

// Appends the members of `z` inside `shape` from the nine cells, in Redis's order
// (cell by cell, ascending score within a cell); with `limit` (ANY), stops once
// that many are found.
void SearchShape(const SortedSetValue& z, const geo::Shape& shape, size_t limit, std::vector<GeoPoint>* out) {
  const geo::SearchCells cells = geo::CellsFor(shape);
  size_t last = 0;  // the cell read before; 0 also for none, so the centre is never compared (as Redis)
  for (size_t c = 0; c < 9; ++c) {
    const geo::HashBits& cell = cells.cells[c];
    if (cell.zero()) continue;
    if (last != 0 && cell.bits == cells.cells[last].bits && cell.step == cells.cells[last].step) continue;
    if (limit != 0 && out->size() >= limit) break;
    last = c;
    double min, max;
    geo::CellScores(cell, &min, &max);
    z.ForScoresFrom(min, [&](const ZEntry& e) {
      if (e.score >= max) return false;  // [min, max): the cell's members
      GeoPoint p;
      if (geo::WithinShape(shape, e.score, &p.lon, &p.lat, &p.distance)) {
        p.member.assign(e.member);
        p.score = e.score;
        out->push_back(std::move(p));
      }
      return limit == 0 || out->size() < limit;
    });
  }
}

// How a search command reads its arguments (georadiusGeneric's flags).
enum SearchFlags : int {
  kByCoords = 1,     // GEORADIUS: key lon lat radius unit
  kByMember = 2,     // GEORADIUSBYMEMBER: key member radius unit
  kNoStore = 4,      // the _RO variants: no STORE/STOREDIST
  kSearch = 8,       // GEOSEARCH: FROMMEMBER/FROMLONLAT, BYRADIUS/BYBOX
  kSearchStore = 16  // GEOSEARCHSTORE: dest src ..., STOREDIST without a key
};

void GeoSearchGeneric(CommandContext& ctx, size_t src_index, int flags) {
  const std::string_view src = ctx.arg(src_index);
  const SortedSetValue* z;
  if (!ctx.Found(zset_ops::Find(ctx, src), &z)) return;

  geo::Shape shape;
  std::string_view store_key;
  bool has_store = false;
  bool storedist = false;
  size_t base = 0;
  if (flags & kByCoords) {
    base = 6;
    if (!LonLatArgs(ctx, 2, &shape.lon, &shape.lat) || !RadiusArgs(ctx, 4, &shape)) return;
  } else if (flags & kByMember) {
    base = 5;
    // With no source key the arguments are still read, to pick the reply.
    if (z != nullptr) {
      if (!MemberPosition(z, ctx.arg(2), &shape.lon, &shape.lat)) return ctx.Error(kBadMember);
      if (!RadiusArgs(ctx, 3, &shape)) return;
    }
  } else {
    base = 2;
    if (flags & kSearchStore) {
      base = 3;
      store_key = ctx.arg(1);
      has_store = true;
    }
  }

  bool withdist = false, withhash = false, withcoord = false, any = false;
  bool frommember = false, fromlonlat = false, byradius = false, bybox = false;
  enum { kNone, kAsc, kDesc } sort = kNone;
  int64_t count = 0;
  const size_t argc = ctx.argc();
  for (size_t i = base; i < argc; ++i) {
    const std::string_view a = ctx.arg(i);
    const size_t left = argc - i - 1;  // arguments after this one
    if (EqualsIgnoreCase(a, "withdist")) {
      withdist = true;
    } else if (EqualsIgnoreCase(a, "withhash")) {
      withhash = true;
    } else if (EqualsIgnoreCase(a, "withcoord")) {
      withcoord = true;
    } else if (EqualsIgnoreCase(a, "any")) {
      any = true;
    } else if (EqualsIgnoreCase(a, "asc")) {
      sort = kAsc;
    } else if (EqualsIgnoreCase(a, "desc")) {
      sort = kDesc;
    } else if (EqualsIgnoreCase(a, "count") && left >= 1) {
      if (!ctx.IntArg(i + 1, &count)) return;
      if (count <= 0) return ctx.Error(kCountPositive);
      ++i;
    } else if ((EqualsIgnoreCase(a, "store") || EqualsIgnoreCase(a, "storedist")) && left >= 1 &&
               !(flags & (kNoStore | kSearch))) {
      store_key = ctx.arg(i + 1);
      has_store = true;
      storedist = EqualsIgnoreCase(a, "storedist");
      ++i;
    } else if (EqualsIgnoreCase(a, "storedist") && (flags & kSearchStore)) {
      storedist = true;
    } else if (EqualsIgnoreCase(a, "frommember") && left >= 1 && (flags & kSearch) && !fromlonlat) {
      if (z != nullptr && !MemberPosition(z, ctx.arg(i + 1), &shape.lon, &shape.lat)) {
        return ctx.Error(kBadMember);
      }
      frommember = true;
      ++i;
    } else if (EqualsIgnoreCase(a, "fromlonlat") && left >= 2 && (flags & kSearch) && !frommember) {
      if (!LonLatArgs(ctx, i + 1, &shape.lon, &shape.lat)) return;
      fromlonlat = true;
      i += 2;
    } else if (EqualsIgnoreCase(a, "byradius") && left >= 2 && (flags & kSearch) && !bybox) {
      if (!RadiusArgs(ctx, i + 1, &shape)) return;
      byradius = true;
      i += 2;
    } else if (EqualsIgnoreCase(a, "bybox") && left >= 3 && (flags & kSearch) && !byradius) {
      if (!BoxArgs(ctx, i + 1, &shape)) return;
      bybox = true;
      i += 3;
    } else {
      return ctx.SyntaxError();
    }
  }

  if (has_store && (withdist || withhash || withcoord)) {
    return ctx.Error(std::string("ERR ") +
                     ((flags & kSearchStore) ? "GEOSEARCHSTORE" : "STORE option in GEORADIUS") +
                     " is not compatible with WITHDIST, WITHHASH and WITHCOORD options");
  }
  if ((flags & kSearch) && !(frommember || fromlonlat)) {
    // Redis echoes argv[0] as typed.
    return ctx.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + std::string(ctx.arg(0)));
  }
  if ((flags & kSearch) && !(byradius || bybox)) {
    return ctx.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + std::string(ctx.arg(0)));
  }
  if (any && count == 0) return ctx.Error(kAnyNeedsCount);

  const std::string_view event = (flags & kSearch) ? "geosearchstore" : "georadiusstore";
  if (z == nullptr) {
    if (has_store) return ctx.reply.Integer(static_cast<int64_t>(zset_ops::Store(ctx, store_key, nullptr, event)));
    return ctx.reply.ArrayHeader(0);
  }
  // COUNT wants the nearest ones: sort ascending unless told otherwise (not for ANY).
  if (count != 0 && sort == kNone && !any) sort = kAsc;

  std::vector<GeoPoint> found;
  SearchShape(*z, shape, any ? static_cast<size_t>(count) : 0, &found);
  const size_t returned =
      count == 0 ? found.size() : std::min(found.size(), static_cast<size_t>(count));
  if (sort != kNone && returned != 0) {
    // Ties in distance come out as Redis's: its full sort is glibc's (stable) qsort,
    // its partial one pqsort.
    const int sign = sort == kAsc ? 1 : -1;
    auto compare = [sign](const GeoPoint& a, const GeoPoint& b) {
      return sign * (a.distance > b.distance ? 1 : a.distance == b.distance ? 0 : -1);
    };
    if (returned == found.size()) {
      std::stable_sort(found.begin(), found.end(),
                       [&](const GeoPoint& a, const GeoPoint& b) { return compare(a, b) < 0; });
    } else {
      PartialQuickSort(found, 0, returned - 1, compare);
    }
  }

  if (!has_store) {
    const size_t options = (withdist ? 1 : 0) + (withhash ? 1 : 0) + (withcoord ? 1 : 0);
    ctx.reply.ArrayHeader(returned);
    for (size_t i = 0; i < returned; ++i) {
      const GeoPoint& p = found[i];
      if (options != 0) ctx.reply.ArrayHeader(options + 1);
      ctx.reply.Bulk(p.member);
      if (withdist) ReplyDistance(ctx, p.distance / shape.unit_to_meters);
      if (withhash) ctx.reply.Integer(static_cast<int64_t>(p.score));
      if (withcoord) {
        ctx.reply.ArrayHeader(2);
        ReplyCoordinate(ctx, p.lon);
        ReplyCoordinate(ctx, p.lat);
      }
    }
    return;
  }
  std::unique_ptr<SortedSetValue> result;
  if (returned != 0) {
    size_t max_len = 0;
    for (size_t i = 0; i < returned; ++i) max_len = std::max(max_len, found[i].member.size());
    const ZsetLimits limits = zset_ops::Limits(ctx);
    result = SortedSetValue::Create(returned, max_len, limits);
    for (size_t i = 0; i < returned; ++i) {
      const GeoPoint& p = found[i];
      double ignored;
      result->Add(p.member, storedist ? p.distance / shape.unit_to_meters : p.score, 0, limits, &ignored);
    }
  }
  ctx.reply.Integer(static_cast<int64_t>(zset_ops::Store(ctx, store_key, std::move(result), event)));
}

void GeoRadius(CommandContext& ctx) { GeoSearchGeneric(ctx, 1, kByCoords); }
void GeoRadiusRo(CommandContext& ctx) { GeoSearchGeneric(ctx, 1, kByCoords | kNoStore); }
void GeoRadiusByMember(CommandContext& ctx) { GeoSearchGeneric(ctx, 1, kByMember); }
void GeoRadiusByMemberRo(CommandContext& ctx) { GeoSearchGeneric(ctx, 1, kByMember | kNoStore); }
void GeoSearch(CommandContext& ctx) { GeoSearchGeneric(ctx, 1, kSearch); }
void GeoSearchStore(CommandContext& ctx) { GeoSearchGeneric(ctx, 2, kSearch | kSearchStore); }

// GEORADIUS[BYMEMBER]'s destination keys, as Redis 7.0's key specs find them: the
// argument after the first STORE, then after the first STOREDIST, searched from
// argument `kFrom` on (6 for GEORADIUS, 5 for GEORADIUSBYMEMBER).
template <size_t kFrom>
std::vector<int> GeoRadiusStoreKeys(std::span<const std::string_view> argv) {
  std::vector<int> keys;
  for (const std::string_view keyword : {std::string_view("store"), std::string_view("storedist")}) {
    for (size_t i = kFrom; i < argv.size(); ++i) {
      if (!EqualsIgnoreCase(argv[i], keyword)) continue;
      if (i + 1 < argv.size()) keys.push_back(static_cast<int>(i + 1));
      break;
    }
  }
  return keys;
}

constexpr uint32_t kW = kWrite | kDenyOom;

const CommandSpec kCommands[] = {
    {"geoadd", -5, kW, 1, 1, 1, GeoAdd, "Add one or more geospatial items in the geospatial index represented using a sorted set", "geo", {}, {kKeyRW | kKeyUpdate}},
    {"geopos", -2, kReadOnly, 1, 1, 1, GeoPos, "Returns longitude and latitude of members of a geospatial index", "geo", {}, {kKeyRO | kKeyAccess}},
    {"geodist", -4, kReadOnly, 1, 1, 1, GeoDist, "Returns the distance between two members of a geospatial index", "geo", {}, {kKeyRO | kKeyAccess}},
    {"geohash", -2, kReadOnly, 1, 1, 1, GeoHash, "Returns members of a geospatial index as standard geohash strings", "geo", {}, {kKeyRO | kKeyAccess}},
    {"georadius", -6, kW, 1, 1, 1, GeoRadius, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a point", "geo", {}, {kKeyRO | kKeyAccess, kKeyOW | kKeyUpdate}, {}, 0, GeoRadiusStoreKeys<6>},
    {"georadius_ro", -6, kReadOnly, 1, 1, 1, GeoRadiusRo, "A read-only variant for GEORADIUS", "geo", {}, {kKeyRO | kKeyAccess}},
    {"georadiusbymember", -5, kW, 1, 1, 1, GeoRadiusByMember, "Query a sorted set representing a geospatial index to fetch members matching a given maximum distance from a member", "geo", {}, {kKeyRO | kKeyAccess, kKeyOW | kKeyUpdate}, {}, 0, GeoRadiusStoreKeys<5>},
    {"georadiusbymember_ro", -5, kReadOnly, 1, 1, 1, GeoRadiusByMemberRo, "A read-only variant for GEORADIUSBYMEMBER", "geo", {}, {kKeyRO | kKeyAccess}},
    {"geosearch", -7, kReadOnly, 1, 1, 1, GeoSearch, "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle.", "geo", {}, {kKeyRO | kKeyAccess}},
    {"geosearchstore", -8, kW, 1, 2, 1, GeoSearchStore, "Query a sorted set representing a geospatial index to fetch members inside an area of a box or a circle, and store the result in another key.", "geo", {}, {kKeyOW | kKeyUpdate, kKeyRO | kKeyAccess}},
};

}  // namespace

std::span<const CommandSpec> GeoCommands() { return kCommands; }

}  // namespace feedkv::server
