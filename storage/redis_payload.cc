// Redis's RDB value encoding for DUMP/RESTORE payloads. See redis_payload.h.
#include "storage/redis_payload.h"

#include <array>
#include <cstring>

namespace feedkv::redis_payload {

namespace {

// The reflected form of the Jones polynomial 0xad93d23594c935a9.
constexpr uint64_t kCrcPoly = 0x95ac9329ac4bc9b5ULL;

std::array<uint64_t, 256> MakeCrcTable() {
  std::array<uint64_t, 256> t{};
  for (uint64_t i = 0; i < 256; ++i) {
    uint64_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) ? (c >> 1) ^ kCrcPoly : c >> 1;
    t[i] = c;
  }
  return t;
}

uint8_t U8(std::string_view s, size_t i) { return static_cast<uint8_t>(s[i]); }

uint64_t ReadLE(std::string_view s, size_t at, int bytes) {
  uint64_t v = 0;
  for (int i = bytes - 1; i >= 0; --i) v = (v << 8) | U8(s, at + static_cast<size_t>(i));
  return v;
}

// A `bits`-wide two's complement value.
int64_t Signed(uint64_t u, int bits) {
  if (bits < 64 && (u & (uint64_t{1} << (bits - 1))) != 0) u |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(u);
}

size_t BacklenSize(size_t entry) {
  if (entry < 128) return 1;
  if (entry < 16384) return 2;
  if (entry < 2097152) return 3;
  if (entry < 268435456) return 4;
  return 5;
}

}  // namespace

uint64_t Crc64(uint64_t crc, std::string_view bytes) {
  static const std::array<uint64_t, 256> table = MakeCrcTable();
  for (char c : bytes) crc = table[(crc ^ static_cast<uint8_t>(c)) & 0xff] ^ (crc >> 8);
  return crc;
}

void AppendFooter(std::string* payload) {
  payload->push_back(static_cast<char>(kRdbVersion & 0xff));
  payload->push_back(static_cast<char>(kRdbVersion >> 8));
  const uint64_t crc = Crc64(0, *payload);
  for (int i = 0; i < 8; ++i) payload->push_back(static_cast<char>((crc >> (8 * i)) & 0xff));
}

bool CheckFooter(std::string_view payload, std::string_view* body) {
  const size_t n = payload.size();
  if (n < 10) return false;
  const unsigned version = U8(payload, n - 10) | (unsigned{U8(payload, n - 9)} << 8);
  if (version > kRdbVersion) return false;
  if (Crc64(0, payload.substr(0, n - 8)) != ReadLE(payload, n - 8, 8)) return false;
  *body = payload.substr(0, n - 10);
  return true;
}

bool LzfDecompress(std::string_view in, size_t out_len, std::string* out) {
  out->clear();
  // A claimed length LZF cannot reach from this input is refused before anything
  // is allocated (a back reference of 2 bytes expands to at most 264), and the
  // output grows only with what is really decoded: a tiny payload claiming 4 GB
  // costs nothing.
  if (out_len > in.size() * 132 + 32) return false;
  size_t ip = 0;
  while (ip < in.size()) {
    const uint8_t ctrl = U8(in, ip++);
    if (ctrl < 32) {  // a literal run of ctrl + 1 bytes
      const size_t len = size_t{ctrl} + 1;
      if (ip + len > in.size() || out->size() + len > out_len) return false;
      out->append(in.substr(ip, len));
      ip += len;
      continue;
    }
    size_t len = ctrl >> 5;  // a back reference
    if (len == 7) {
      if (ip >= in.size()) return false;
      len += U8(in, ip++);
    }
    if (ip >= in.size()) return false;
    const size_t back = ((size_t{ctrl} & 0x1f) << 8) + U8(in, ip++) + 1;
    len += 2;
    if (back > out->size() || out->size() + len > out_len) return false;
    const size_t from = out->size() - back;
    for (size_t k = 0; k < len; ++k) out->push_back((*out)[from + k]);  // may overlap
  }
  return out->size() == out_len;
}

void Writer::Length(uint64_t n) {
  if (n < 64) {
    out_.push_back(static_cast<char>(n));
  } else if (n < 16384) {
    out_.push_back(static_cast<char>(0x40 | (n >> 8)));
    out_.push_back(static_cast<char>(n & 0xff));
  } else if (n <= UINT32_MAX) {
    out_.push_back(static_cast<char>(0x80));
    for (int i = 3; i >= 0; --i) out_.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  } else {
    out_.push_back(static_cast<char>(0x81));
    for (int i = 7; i >= 0; --i) out_.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
}

void Writer::String(std::string_view s) {
  Length(s.size());
  out_.append(s);
}

void Writer::BinaryDouble(double d) {
  char b[8];
  std::memcpy(b, &d, 8);  // little-endian hosts only, as the rest of the formats
  out_.append(b, 8);
}

std::string Writer::Finish() {
  AppendFooter(&out_);
  return std::move(out_);
}

bool Reader::Raw(size_t n, std::string_view* bytes) {
  if (in_.size() < n) return false;
  *bytes = in_.substr(0, n);
  in_.remove_prefix(n);
  return true;
}

void ListpackWriter::Entry(std::string_view encoded) {
  body_.append(encoded);
  // The back-length: the entry's size, 7 bits per byte, read right to left.
  uint64_t l = encoded.size();
  char buf[5];
  int n = 0;
  if (l <= 127) {
    buf[n++] = static_cast<char>(l);
  } else {
    int bytes = l < 16383 ? 2 : l < 2097151 ? 3 : l < 268435455 ? 4 : 5;
    for (int i = bytes - 1; i >= 0; --i) {
      const auto part = static_cast<uint8_t>((l >> (7 * i)) & 127);
      buf[n++] = static_cast<char>(i == bytes - 1 ? part : (part | 128));
    }
  }
  body_.append(buf, static_cast<size_t>(n));
  ++count_;
}

void ListpackWriter::Integer(int64_t v) {
  std::string e;
  auto le = [&](uint8_t tag, int bytes) {
    e.push_back(static_cast<char>(tag));
    const auto u = static_cast<uint64_t>(v);
    for (int i = 0; i < bytes; ++i) e.push_back(static_cast<char>((u >> (8 * i)) & 0xff));
  };
  if (v >= 0 && v <= 127) {
    e.push_back(static_cast<char>(v));
  } else if (v >= -4096 && v <= 4095) {
    const auto u = static_cast<uint16_t>(v < 0 ? (1 << 13) + v : v);
    e.push_back(static_cast<char>(0xc0 | (u >> 8)));
    e.push_back(static_cast<char>(u & 0xff));
  } else if (v >= INT16_MIN && v <= INT16_MAX) {
    le(0xf1, 2);
  } else if (v >= -(1 << 23) && v < (1 << 23)) {
    le(0xf2, 3);
  } else if (v >= INT32_MIN && v <= INT32_MAX) {
    le(0xf3, 4);
  } else {
    le(0xf4, 8);
  }
  Entry(e);
}

void ListpackWriter::String(std::string_view s) {
  std::string e;
  const size_t n = s.size();
  if (n < 64) {
    e.push_back(static_cast<char>(0x80 | n));
  } else if (n < 4096) {
    e.push_back(static_cast<char>(0xe0 | (n >> 8)));
    e.push_back(static_cast<char>(n & 0xff));
  } else {
    e.push_back(static_cast<char>(0xf0));
    for (int i = 0; i < 4; ++i) e.push_back(static_cast<char>((n >> (8 * i)) & 0xff));
  }
  e.append(s);
  Entry(e);
}

std::string ListpackWriter::Finish() const {
  std::string out;
  const uint64_t total = 6 + body_.size() + 1;
  for (int i = 0; i < 4; ++i) out.push_back(static_cast<char>((total >> (8 * i)) & 0xff));
  const uint64_t count = count_ < 65535 ? count_ : 65535;
  out.push_back(static_cast<char>(count & 0xff));
  out.push_back(static_cast<char>(count >> 8));
  out.append(body_);
  out.push_back(static_cast<char>(0xff));
  return out;
}

bool Reader::Byte(uint8_t* b) {
  if (in_.empty()) return false;
  *b = U8(in_, 0);
  in_.remove_prefix(1);
  return true;
}

bool Reader::LengthOrEncoding(uint64_t* n, bool* encoded) {
  uint8_t b;
  if (!Byte(&b)) return false;
  *encoded = false;
  switch (b >> 6) {
    case 0:
      *n = b & 0x3f;
      return true;
    case 1: {
      uint8_t lo;
      if (!Byte(&lo)) return false;
      *n = ((uint64_t{b} & 0x3f) << 8) | lo;
      return true;
    }
    case 2: {
      const int bytes = b == 0x80 ? 4 : b == 0x81 ? 8 : 0;
      if (bytes == 0 || in_.size() < static_cast<size_t>(bytes)) return false;
      uint64_t v = 0;
      for (int i = 0; i < bytes; ++i) v = (v << 8) | U8(in_, static_cast<size_t>(i));
      in_.remove_prefix(static_cast<size_t>(bytes));
      *n = v;
      return true;
    }
    default:
      *encoded = true;
      *n = b & 0x3f;
      return true;
  }
}

bool Reader::Length(uint64_t* n) {
  bool encoded;
  return LengthOrEncoding(n, &encoded) && !encoded;
}

bool Reader::String(std::string* s) {
  uint64_t n;
  bool encoded;
  if (!LengthOrEncoding(&n, &encoded)) return false;
  if (!encoded) {
    if (n > in_.size()) return false;
    s->assign(in_.substr(0, n));
    in_.remove_prefix(n);
    return true;
  }
  if (n <= 2) {  // int8 / int16 / int32, little-endian
    const int bytes = 1 << n;
    if (in_.size() < static_cast<size_t>(bytes)) return false;
    const int64_t v = Signed(ReadLE(in_, 0, bytes), 8 * bytes);
    in_.remove_prefix(static_cast<size_t>(bytes));
    *s = std::to_string(v);
    return true;
  }
  if (n != 3) return false;
  uint64_t clen, len;
  if (!Length(&clen) || !Length(&len) || clen > in_.size() || len > (uint64_t{1} << 32)) return false;
  const bool ok = LzfDecompress(in_.substr(0, clen), len, s);
  in_.remove_prefix(clen);
  return ok;
}

bool Reader::BinaryDouble(double* d) {
  if (in_.size() < 8) return false;
  std::memcpy(d, in_.data(), 8);
  in_.remove_prefix(8);
  return true;
}

namespace internal {

bool ListpackHeader(std::string_view lp, size_t* count) {
  if (lp.size() < 7 || ReadLE(lp, 0, 4) != lp.size() || U8(lp, lp.size() - 1) != 0xff) return false;
  *count = ReadLE(lp, 4, 2);
  return true;
}

bool ListpackEntry(std::string_view lp, size_t* pos, std::string_view* s, bool* is_int, int64_t* v) {
  const size_t p = *pos;
  const size_t end = lp.size() - 1;  // the end byte
  auto have = [&](size_t n) { return p + n <= end; };
  const uint8_t b = U8(lp, p);
  size_t entry;
  *is_int = true;
  if ((b & 0x80) == 0) {  // 7-bit unsigned
    *v = b & 0x7f;
    entry = 1;
  } else if ((b & 0xc0) == 0x80) {  // string of up to 63 bytes
    entry = 1 + (b & 0x3f);
    if (!have(entry)) return false;
    *is_int = false;
    *s = lp.substr(p + 1, entry - 1);
  } else if ((b & 0xe0) == 0xc0) {  // 13-bit signed
    if (!have(2)) return false;
    *v = Signed(((uint64_t{b} & 0x1f) << 8) | U8(lp, p + 1), 13);
    entry = 2;
  } else if ((b & 0xf0) == 0xe0) {  // string of up to 4095 bytes
    if (!have(2)) return false;
    const size_t len = ((size_t{b} & 0x0f) << 8) | U8(lp, p + 1);
    entry = 2 + len;
    if (!have(entry)) return false;
    *is_int = false;
    *s = lp.substr(p + 2, len);
  } else if (b == 0xf0) {  // string with a 32-bit length
    if (!have(5)) return false;
    const size_t len = ReadLE(lp, p + 1, 4);
    if (len > end) return false;
    entry = 5 + len;
    if (!have(entry)) return false;
    *is_int = false;
    *s = lp.substr(p + 5, len);
  } else if (b >= 0xf1 && b <= 0xf4) {  // 16/24/32/64-bit signed
    const int bytes = b == 0xf1 ? 2 : b == 0xf2 ? 3 : b == 0xf3 ? 4 : 8;
    entry = 1 + static_cast<size_t>(bytes);
    if (!have(entry)) return false;
    *v = Signed(ReadLE(lp, p + 1, bytes), 8 * bytes);
  } else {
    return false;  // 0xf5..0xfe are not encodings; 0xff is the end
  }
  const size_t next = p + entry + BacklenSize(entry);
  if (next > end) return false;
  *pos = next;
  return true;
}

}  // namespace internal

}  // namespace feedkv::redis_payload
