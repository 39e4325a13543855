#include "storage/geohash.h"

#include <cmath>

namespace feedkv::geo {

namespace {

constexpr double kEarthRadiusMeters = 6372797.560856;  // Redis's quadratic mean radius
constexpr double kMercatorMax = 20037726.37;
constexpr double kDegToRad = M_PI / 180.0;

double DegToRad(double d) { return d * kDegToRad; }
double RadToDeg(double r) { return r / kDegToRad; }

constexpr Range kLonRange{kLonMin, kLonMax};
constexpr Range kLatRange{kLatMin, kLatMax};

// Spreads the 32 bits of v to the even bits of a 64-bit word.
uint64_t Spread(uint32_t v) {
  uint64_t x = v;
  x = (x | (x << 16)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x << 8)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x << 4)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x << 2)) & 0x3333333333333333ULL;
  x = (x | (x << 1)) & 0x5555555555555555ULL;
  return x;
}

// Gathers the even bits of x into 32 bits (Spread's inverse).
uint32_t Gather(uint64_t x) {
  x &= 0x5555555555555555ULL;
  x = (x | (x >> 1)) & 0x3333333333333333ULL;
  x = (x | (x >> 2)) & 0x0F0F0F0F0F0F0F0FULL;
  x = (x | (x >> 4)) & 0x00FF00FF00FF00FFULL;
  x = (x | (x >> 8)) & 0x0000FFFF0000FFFFULL;
  x = (x | (x >> 16)) & 0x00000000FFFFFFFFULL;
  return static_cast<uint32_t>(x);
}

// Redis casts a score to uint64_t; C leaves a negative or huge double undefined,
// so these are pinned to what x86-64 gives (a negative one wraps, one out of
// range is 2^63).
uint64_t ScoreBits(double score) {
  if (score >= 0 && score < 18446744073709551616.0) return static_cast<uint64_t>(score);
  if (score < 0 && score > -9223372036854775808.0) {
    return static_cast<uint64_t>(static_cast<int64_t>(score));
  }
  return 1ULL << 63;
}

constexpr uint64_t kLonBits = 0xAAAAAAAAAAAAAAAAULL;  // odd positions
constexpr uint64_t kLatBits = 0x5555555555555555ULL;  // even positions

// One cell along the axis whose bits are `axis` (kLonBits: east/west, kLatBits:
// north/south), +1 or -1, wrapping within the step. The other axis's bits are
// filled with ones so that the carry or borrow runs through them.
void MoveAlong(HashBits* h, uint64_t axis, int d) {
  const uint64_t shift = 64 - h->step * 2;
  const uint64_t other = h->bits & ~axis;
  const uint64_t fill = ~axis >> shift;
  uint64_t own = h->bits & axis;
  own = d > 0 ? own + (fill + 1) : (own | fill) - (fill + 1);
  h->bits = (own & (axis >> shift)) | other;
}

HashBits Moved(HashBits h, int east, int north) {
  if (east != 0) MoveAlong(&h, kLonBits, east);
  if (north != 0) MoveAlong(&h, kLatBits, north);
  return h;
}

// The step whose cells are about `meters` wide at latitude `lat`.
int StepsForRadius(double meters, double lat) {
  if (meters == 0) return 26;
  int step = 1;
  while (meters < kMercatorMax) {
    meters *= 2;
    step++;
  }
  step -= 2;  // so that the range fits in most cases
  // Meridians converge towards the poles: cells narrow, so take coarser ones.
  if (lat > 66 || lat < -66) {
    step--;
    if (lat > 80 || lat < -80) step--;
  }
  if (step < 1) step = 1;
  if (step > 26) step = 26;
  return step;
}

struct Bounds {
  double min_lon, min_lat, max_lon, max_lat;
};

// The lon/lat box around the shape. A degree of longitude shrinks away from the
// equator, so the box is widest on its edge nearer a pole.
Bounds BoundingBox(const Shape& s) {
  const double height = s.unit_to_meters * (s.kind == Shape::kCircle ? s.radius : s.height / 2);
  const double width = s.unit_to_meters * (s.kind == Shape::kCircle ? s.radius : s.width / 2);
  const double lat_delta = RadToDeg(height / kEarthRadiusMeters);
  const double lon_delta_top = RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(s.lat + lat_delta)));
  const double lon_delta_bottom = RadToDeg(width / kEarthRadiusMeters / std::cos(DegToRad(s.lat - lat_delta)));
  const bool southern = s.lat < 0;
  const double lon_delta = southern ? lon_delta_bottom : lon_delta_top;
  return Bounds{s.lon - lon_delta, s.lat - lat_delta, s.lon + lon_delta, s.lat + lat_delta};
}

}  // namespace

bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, HashBits* out) {
  if (step > 32 || step == 0) return false;
  if ((lat_range.min == 0 && lat_range.max == 0) || (lon_range.min == 0 && lon_range.max == 0)) return false;
  if (lon > kLonMax || lon < kLonMin || lat > kLatMax || lat < kLatMin) return false;
  out->bits = 0;
  out->step = static_cast<uint8_t>(step);
  if (lat < lat_range.min || lat > lat_range.max || lon < lon_range.min || lon > lon_range.max) return false;
  double lat_offset = (lat - lat_range.min) / (lat_range.max - lat_range.min);
  double lon_offset = (lon - lon_range.min) / (lon_range.max - lon_range.min);
  lat_offset *= static_cast<double>(1ULL << step);
  lon_offset *= static_cast<double>(1ULL << step);
  // At the top of a range the offset is 2^step, one past the last cell: kept, as
  // Redis keeps it (the score then has a bit above the 52).
  out->bits = Spread(static_cast<uint32_t>(lat_offset)) | (Spread(static_cast<uint32_t>(lon_offset)) << 1);
  return true;
}

bool EncodeWGS84(double lon, double lat, int step, HashBits* out) {
  return Encode(kLonRange, kLatRange, lon, lat, step, out);
}

bool Decode(Range lon_range, Range lat_range, HashBits hash, Area* out) {
  if (hash.zero()) return false;
  const uint32_t lat_cell = Gather(hash.bits);
  const uint32_t lon_cell = Gather(hash.bits >> 1);
  // Multiplying by 2^-step is exact, as is Redis's division by 2^step.
  const double per_cell = 1.0 / static_cast<double>(1ULL << hash.step);
  const double lat_scale = lat_range.max - lat_range.min;
  const double lon_scale = lon_range.max - lon_range.min;
  out->lat.min = lat_range.min + (lat_cell * per_cell) * lat_scale;
  out->lat.max = lat_range.min + ((lat_cell + 1.0) * per_cell) * lat_scale;
  out->lon.min = lon_range.min + (lon_cell * per_cell) * lon_scale;
  out->lon.max = lon_range.min + ((lon_cell + 1.0) * per_cell) * lon_scale;
  return true;
}

uint64_t Align52(HashBits hash) { return hash.bits << (52 - hash.step * 2); }

void ScoreToLonLat(double score, double* lon, double* lat) {
  Area a;
  Decode(kLonRange, kLatRange, HashBits{ScoreBits(score), kStepMax}, &a);
  *lon = std::fmin(std::fmax((a.lon.min + a.lon.max) / 2, kLonMin), kLonMax);
  *lat = std::fmin(std::fmax((a.lat.min + a.lat.max) / 2, kLatMin), kLatMax);
}

double LonLatToScore(double lon, double lat) {
  HashBits h;
  EncodeWGS84(lon, lat, kStepMax, &h);
  return static_cast<double>(Align52(h));
}

std::string StandardGeohash(double score) {
  static constexpr char kAlphabet[] = "0123456789bcdefghjkmnpqrstuvwxyz";
  double lon, lat;
  ScoreToLonLat(score, &lon, &lat);
  HashBits h;
  Encode(Range{-180, 180}, Range{-90, 90}, lon, lat, 26, &h);
  std::string out(11, '0');
  for (int i = 0; i < 10; ++i) out[i] = kAlphabet[(h.bits >> (52 - (i + 1) * 5)) & 0x1F];
  return out;  // 52 bits fill ten characters; the eleventh is "0", as Redis's
}

double LatDistance(double lat1, double lat2) {
  return kEarthRadiusMeters * std::fabs(DegToRad(lat2) - DegToRad(lat1));
}

double Distance(double lon1, double lat1, double lon2, double lat2) {
  const double lon1r = DegToRad(lon1), lon2r = DegToRad(lon2);
  const double v = std::sin((lon2r - lon1r) / 2);
  // Along a meridian the haversine reduces to the latitude difference. Redis 7.0
  // takes that path exactly when v == 0, and the two differ in the last bits.
  if (v == 0.0) return LatDistance(lat1, lat2);
  const double lat1r = DegToRad(lat1), lat2r = DegToRad(lat2);
  const double u = std::sin((lat2r - lat1r) / 2);
  const double a = u * u + std::cos(lat1r) * std::cos(lat2r) * v * v;
  return 2.0 * kEarthRadiusMeters * std::asin(std::sqrt(a));
}

bool WithinShape(const Shape& shape, double score, double* lon, double* lat, double* distance) {
  ScoreToLonLat(score, lon, lat);
  if (shape.kind == Shape::kCircle) {
    *distance = Distance(shape.lon, shape.lat, *lon, *lat);
    return *distance <= shape.radius * shape.unit_to_meters;
  }
  // A box: the point's north-south distance along its meridian and its east-west
  // distance along its own parallel, each within half the box.
  if (LatDistance(*lat, shape.lat) > shape.height * shape.unit_to_meters / 2) return false;
  if (Distance(*lon, *lat, shape.lon, *lat) > shape.width * shape.unit_to_meters / 2) return false;
  *distance = Distance(shape.lon, shape.lat, *lon, *lat);
  return true;
}

SearchCells CellsFor(const Shape& shape) {
  const Bounds b = BoundingBox(shape);
  const double radius_meters =
      shape.unit_to_meters * (shape.kind == Shape::kCircle
                                  ? shape.radius
                                  : std::sqrt((shape.width / 2) * (shape.width / 2) +
                                              (shape.height / 2) * (shape.height / 2)));
  int steps = StepsForRadius(radius_meters, shape.lat);
  HashBits center;
  EncodeWGS84(shape.lon, shape.lat, steps, &center);
  // When the shape reaches past a neighbour, one step coarser (cells twice the size).
  Area north, south, east, west;
  Decode(kLonRange, kLatRange, Moved(center, 0, 1), &north);
  Decode(kLonRange, kLatRange, Moved(center, 0, -1), &south);
  Decode(kLonRange, kLatRange, Moved(center, 1, 0), &east);
  Decode(kLonRange, kLatRange, Moved(center, -1, 0), &west);
  const bool too_small = north.lat.max < b.max_lat || south.lat.min > b.min_lat || east.lon.max < b.max_lon ||
                         west.lon.min > b.min_lon;
  if (steps > 1 && too_small) {
    steps--;
    EncodeWGS84(shape.lon, shape.lat, steps, &center);
  }
  Area area;
  Decode(kLonRange, kLatRange, center, &area);
  SearchCells out;
  HashBits* c = out.cells;
  c[0] = center;
  c[1] = Moved(center, 0, 1);    // north
  c[2] = Moved(center, 0, -1);   // south
  c[3] = Moved(center, 1, 0);    // east
  c[4] = Moved(center, -1, 0);   // west
  c[5] = Moved(center, 1, 1);    // north-east
  c[6] = Moved(center, -1, 1);   // north-west
  c[7] = Moved(center, 1, -1);   // south-east
  c[8] = Moved(center, -1, -1);  // south-west
  // Neighbours on a side the shape does not reach are not read.
  if (steps >= 2) {
    if (area.lat.min < b.min_lat) c[2] = c[8] = c[7] = HashBits{};
    if (area.lat.max > b.max_lat) c[1] = c[5] = c[6] = HashBits{};
    if (area.lon.min < b.min_lon) c[4] = c[8] = c[6] = HashBits{};
    if (area.lon.max > b.max_lon) c[3] = c[7] = c[5] = HashBits{};
  }
  return out;
}

void CellScores(HashBits cell, double* min, double* max) {
  *min = static_cast<double>(Align52(cell));
  cell.bits++;
  *max = static_cast<double>(Align52(cell));
}

}  // namespace feedkv::geo
