#include "storage/aof_format.h"

#include <xxhash.h>

#include <charconv>

#include <fmt/format.h>

namespace feedkv::aof {

std::string SegmentName(std::string_view base, uint64_t seq) {
  return fmt::format("{}.{:06d}", base, seq);
}

bool ParseSegmentName(std::string_view base, std::string_view name, uint64_t* seq) {
  if (name.size() < base.size() + 7 || name.substr(0, base.size()) != base ||
      name[base.size()] != '.') {
    return false;
  }
  std::string_view digits = name.substr(base.size() + 1);
  for (char c : digits) {
    if (c < '0' || c > '9') return false;
  }
  auto [p, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), *seq);
  return ec == std::errc() && p == digits.data() + digits.size() && *seq > 0 &&
         SegmentName(base, *seq) == name;
}

std::string ManifestName(std::string_view base) { return std::string(base) + ".manifest"; }

namespace {

void AppendHeader(std::string* out, char type, uint64_t n) {
  char buf[24];
  buf[0] = type;
  auto r = std::to_chars(buf + 1, buf + sizeof(buf) - 2, n);
  r.ptr[0] = '\r';
  r.ptr[1] = '\n';
  out->append(buf, static_cast<size_t>(r.ptr + 2 - buf));
}

template <class T>
void AppendCommandImpl(std::string* out, std::span<const T> argv) {
  AppendHeader(out, '*', argv.size());
  for (const auto& a : argv) {
    AppendHeader(out, '$', a.size());
    out->append(a.data(), a.size());
    out->append("\r\n", 2);
  }
}

}  // namespace

void AppendCommand(std::string* out, std::span<const std::string> argv) {
  AppendCommandImpl(out, argv);
}

void AppendCommand(std::string* out, std::span<const std::string_view> argv) {
  AppendCommandImpl(out, argv);
}

uint64_t GroupHash(std::string_view group) { return XXH64(group.data(), group.size(), 0); }

void AppendTrailer(std::string* out, std::string_view group) {
  out->append(fmt::format("{}{:016x}\r\n", kTrailerPrefix, GroupHash(group)));
}

}  // namespace feedkv::aof
