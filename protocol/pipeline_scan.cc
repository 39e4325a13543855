#include "protocol/pipeline_scan.h"

#include <cstdint>

namespace feedkv::protocol {

namespace {

// Reads "<prefix><digits>\r\n" at *pos; false when incomplete or malformed.
// Lengths are bounded by what can follow in the buffer, so no overflow.
bool ReadHeader(std::string_view buf, size_t* pos, char prefix, uint64_t* out) {
  size_t p = *pos;
  if (p >= buf.size() || buf[p] != prefix) return false;
  ++p;
  uint64_t v = 0;
  size_t digits = 0;
  while (p < buf.size() && buf[p] >= '0' && buf[p] <= '9') {
    if (++digits > 18) return false;
    v = v * 10 + static_cast<uint64_t>(buf[p] - '0');
    ++p;
  }
  if (digits == 0 || p + 1 >= buf.size() || buf[p] != '\r' || buf[p + 1] != '\n') return false;
  *pos = p + 2;
  *out = v;
  return true;
}

}  // namespace

size_t ScanPipelinedKeys(std::string_view buf, std::span<std::string_view> keys) {
  size_t n = 0;
  size_t pos = 0;
  while (n < keys.size()) {
    uint64_t argc;
    if (!ReadHeader(buf, &pos, '*', &argc) || argc < 2 || argc > kMaxScanArgs) break;
    std::string_view key;
    bool complete = true;
    for (uint64_t i = 0; i < argc; i++) {
      uint64_t len;
      if (!ReadHeader(buf, &pos, '$', &len) || len > buf.size() || buf.size() - pos < len + 2) {
        complete = false;
        break;
      }
      if (i == 1) key = buf.substr(pos, len);
      pos += len + 2;
    }
    if (!complete) break;
    keys[n++] = key;
  }
  return n;
}

}  // namespace feedkv::protocol
