// Long double text. See float_text.h.
#include "storage/float_text.h"

#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace feedkv {

bool ParseLongDouble(std::string_view s, long double* out) {
  constexpr size_t kMaxChars = 5 * 1024;
  if (s.empty() || s.size() >= kMaxChars) return false;
  char buf[kMaxChars];
  std::memcpy(buf, s.data(), s.size());
  buf[s.size()] = '\0';
  errno = 0;
  char* end = nullptr;
  long double v = std::strtold(buf, &end);
  if (std::isspace(static_cast<unsigned char>(buf[0])) || end != buf + s.size() || std::isnan(v) ||
      errno == EINVAL ||
      (errno == ERANGE && (std::isinf(v) || std::fpclassify(v) == FP_ZERO))) {
    return false;
  }
  *out = v;
  return true;
}

std::string FormatLongDouble(long double v) {
  char buf[5 * 1024 + 64];
  int n = std::snprintf(buf, sizeof(buf), "%.17Lf", v);
  std::string_view s(buf, static_cast<size_t>(n));
  if (s.find('.') != std::string_view::npos) {
    while (s.back() == '0') s.remove_suffix(1);
    if (s.back() == '.') s.remove_suffix(1);
  }
  if (s == "-0") s = "0";
  return std::string(s);
}

}  // namespace feedkv
