// feedkv-lspack: packs a list of int64 ids into a LongSet image for LSSET.
//
//   feedkv-lspack [--binary] [--max-fill F] [--seed1 N] [--seed2 N] [-o out.img] [input]
//
// Input is text (one id per line; blank lines and # comments ignored) or, with
// --binary, raw int64 little-endian; stdin when no input file is named, stdout when
// no -o. The image is LongSet::Build's canonical layout, byte-identical to
// tools/longset_image.py's (checked by `longset_image.py --selftest`).
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/long_set.h"

namespace {

constexpr char kUsage[] =
    "usage: feedkv-lspack [--binary] [--max-fill F] [--seed1 N] [--seed2 N] [-o out.img] "
    "[input]\n";

int Fail(const std::string& msg) {
  std::fprintf(stderr, "feedkv-lspack: %s\n", msg.c_str());
  return 1;
}

bool ReadAll(std::FILE* f, std::string* out) {
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) out->append(buf, n);
  return !std::ferror(f);
}

bool ParseU64(std::string_view s, uint64_t* v) {
  int base = 10;
  if (s.size() > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
    s.remove_prefix(2);
    base = 16;
  }
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v, base);
  return ec == std::errc() && end == s.data() + s.size() && !s.empty();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::strchr(" \t\r", s.front())) s.remove_prefix(1);
  while (!s.empty() && std::strchr(" \t\r", s.back())) s.remove_suffix(1);
  return s;
}

// Text ids, one per line; the error names the first bad line.
bool ParseText(const std::string& data, std::vector<int64_t>* ids, std::string* err) {
  size_t pos = 0;
  for (size_t line = 1; pos < data.size(); ++line) {
    size_t eol = data.find('\n', pos);
    if (eol == std::string::npos) eol = data.size();
    std::string_view text = Trim(std::string_view(data).substr(pos, eol - pos));
    pos = eol + 1;
    if (text.empty() || text.front() == '#') continue;
    int64_t v = 0;
    auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || end != text.data() + text.size()) {
      *err = "line " + std::to_string(line) + ": not a signed 64-bit integer: '" +
             std::string(text.substr(0, 40)) + "'";
      return false;
    }
    ids->push_back(v);
  }
  return true;
}

bool ParseBinary(const std::string& data, std::vector<int64_t>* ids, std::string* err) {
  if (data.size() % 8 != 0) {
    *err = "binary input is " + std::to_string(data.size()) + " bytes, not a multiple of 8";
    return false;
  }
  ids->reserve(data.size() / 8);
  for (size_t i = 0; i < data.size(); i += 8) {
    uint64_t u = 0;
    for (int b = 0; b < 8; ++b) u |= uint64_t{static_cast<unsigned char>(data[i + b])} << (8 * b);
    ids->push_back(static_cast<int64_t>(u));
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool binary = false;
  feedkv::LongSetOptions options;
  uint64_t seed1 = feedkv::LongSet::kDefaultSeed1;
  uint64_t seed2 = feedkv::LongSet::kDefaultSeed2;
  const char* input = nullptr;
  const char* output = nullptr;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--binary") {
      binary = true;
    } else if (a == "--max-fill" && has_value) {
      char* end = nullptr;
      options.max_fill = std::strtod(argv[++i], &end);
      if (*end != '\0') return Fail("--max-fill: not a number");
    } else if ((a == "--seed1" || a == "--seed2") && has_value) {
      if (!ParseU64(argv[++i], a == "--seed1" ? &seed1 : &seed2)) {
        return Fail(std::string(a) + ": not an unsigned 64-bit integer");
      }
    } else if ((a == "-o" || a == "--output") && has_value) {
      output = argv[++i];
    } else if (a == "-h" || a == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    } else if (!a.empty() && a[0] == '-' && a != "-") {
      std::fputs(kUsage, stderr);
      return 2;
    } else if (input == nullptr) {
      input = argv[i];
    } else {
      std::fputs(kUsage, stderr);
      return 2;
    }
  }
  if (feedkv::Status st = options.Validate(); !st.ok()) return Fail(st.message());

  std::string data;
  std::FILE* in = stdin;
  if (input != nullptr && std::string_view(input) != "-") {
    in = std::fopen(input, "rb");
    if (in == nullptr) return Fail(std::string(input) + ": " + std::strerror(errno));
  }
  const bool read_ok = ReadAll(in, &data);
  if (in != stdin) std::fclose(in);
  if (!read_ok) return Fail("read error");

  std::vector<int64_t> ids;
  std::string err;
  if (!(binary ? ParseBinary(data, &ids, &err) : ParseText(data, &ids, &err))) return Fail(err);

  std::unique_ptr<feedkv::LongSet> set;
  if (feedkv::Status st = feedkv::LongSet::Build(ids, options, seed1, seed2, &set); !st.ok()) {
    return Fail(st.ToString());
  }
  std::string image;
  set->SerializeImage(&image);

  std::FILE* out = stdout;
  if (output != nullptr) {
    out = std::fopen(output, "wb");
    if (out == nullptr) return Fail(std::string(output) + ": " + std::strerror(errno));
  }
  const bool write_ok = std::fwrite(image.data(), 1, image.size(), out) == image.size();
  const bool close_ok = out == stdout ? std::fflush(out) == 0 : std::fclose(out) == 0;
  if (!write_ok || !close_ok) return Fail("write error");
  std::fprintf(stderr, "feedkv-lspack: %zu members, capacity %llu, %zu bytes\n", set->size(),
               static_cast<unsigned long long>(set->capacity()), image.size());
  return 0;
}
