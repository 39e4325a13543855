// The decimal text of long doubles as Redis's INCRBYFLOAT and HINCRBYFLOAT read and
// write it (util.c string2ld / ld2string in "human" mode). Thread-safe: pure functions.
#pragma once

#include <string>
#include <string_view>

namespace feedkv {

// Redis's string2ld: strtold must consume every byte (a NUL inside the value ends
// strtold early and so fails), no leading space, no NaN, no overflow or underflow
// to zero, under 5 KiB.
bool ParseLongDouble(std::string_view s, long double* out);

// Redis's "human" long double text: %.17Lf with trailing zeros (and a bare '.')
// removed, "-0" as "0". Never an exponent.
std::string FormatLongDouble(long double v);

}  // namespace feedkv
