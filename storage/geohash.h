// Geohash: how a GEO member's position becomes a sorted-set score, and how an
// area search becomes score ranges, exactly as Redis 7.0 computes them (so a
// position, a distance and a search result agree with Redis to the last digit).
//
// A position is (longitude, latitude) with longitude in [-180, 180] and latitude
// in [-85.05112878, 85.05112878] (the Web Mercator limits). Each is cut into 2^26
// steps; the two 26-bit cell numbers are interleaved (latitude in the even bits,
// longitude in the odd ones) into a 52-bit integer, stored as the member's score,
// which a double holds exactly. Nearby points share a prefix, so a square cell of
// any coarser step is one contiguous score range [min, max).
//
// A search (a circle or a box around a centre) picks the coarsest step whose cells
// are about the size of the search, and reads the centre's cell and its eight
// neighbours: at most nine score ranges. Each member found is then checked
// exactly against the shape; distances are great-circle (haversine) metres.
//
// Pure functions and values; thread-safe.
#pragma once

#include <cstdint>
#include <string>

namespace feedkv::geo {

inline constexpr double kLonMin = -180;
inline constexpr double kLonMax = 180;
inline constexpr double kLatMin = -85.05112878;
inline constexpr double kLatMax = 85.05112878;
inline constexpr int kStepMax = 26;  // bits per coordinate in a score

// A cell: `step` bits per coordinate, interleaved into 2 * step bits. A zero
// value (no bits, no step) marks a neighbour the search skips.
struct HashBits {
  uint64_t bits = 0;
  uint8_t step = 0;
  bool zero() const { return bits == 0 && step == 0; }
};

struct Range {
  double min = 0, max = 0;
};

// The coordinates a cell covers.
struct Area {
  Range lon, lat;
};

// The cell of (lon, lat) at `step` (1..32) within the given ranges; false when
// the point lies outside them or outside the Mercator limits.
bool Encode(Range lon_range, Range lat_range, double lon, double lat, int step, HashBits* out);
// The same within the Mercator limits (a GEOADD score, at kStepMax).
bool EncodeWGS84(double lon, double lat, int step, HashBits* out);
// The area `hash` covers within the given ranges; false for a zero hash.
bool Decode(Range lon_range, Range lat_range, HashBits hash, Area* out);
// A cell's bits shifted to the full 52-bit score scale.
uint64_t Align52(HashBits hash);

// The position a member's score stands for: the centre of its finest cell,
// clamped to the limits. Any double decodes (as Redis: a score that is not a
// GEOADD score still gives some position).
void ScoreToLonLat(double score, double* lon, double* lat);
// The score GEOADD stores for a valid (lon, lat).
double LonLatToScore(double lon, double lat);
// The standard 11-character base-32 geohash of a member's score (GEOHASH): the
// position re-encoded against latitude [-90, 90], its 11th character "0".
std::string StandardGeohash(double score);

// Great-circle distance in metres between two (lon, lat) points (haversine on a
// sphere of Redis's Earth radius; along a meridian, LatDistance).
double Distance(double lon1, double lat1, double lon2, double lat2);
// Distance in metres between two latitudes along a meridian.
double LatDistance(double lat1, double lat2);

// What a search covers: a circle (radius) or an axis-aligned box (width, height),
// in `unit`s (unit_to_meters converts), around (lon, lat).
struct Shape {
  enum Kind { kCircle, kBox } kind = kCircle;
  double lon = 0, lat = 0;
  double radius = 0;
  double width = 0, height = 0;
  double unit_to_meters = 1;
};

// Whether the point of `score` lies in `shape`; when it does, its position and
// its distance in metres from the shape's centre.
bool WithinShape(const Shape& shape, double score, double* lon, double* lat, double* distance);

// The cells a search reads, in Redis's order: the centre, then north, south,
// east, west, north-east, north-west, south-east, south-west. Zero cells are
// skipped, and so is a cell equal to the one read before it (at a huge radius
// neighbours coincide).
struct SearchCells {
  HashBits cells[9];
};
SearchCells CellsFor(const Shape& shape);

// The score range [*min, *max) of the members inside `cell`.
void CellScores(HashBits cell, double* min, double* max);

}  // namespace feedkv::geo
