// HyperLogLog in Redis's format. See hyperloglog.h.
#include "storage/hyperloglog.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>

#include "storage/murmur_hash.h"

namespace feedkv::hll {

namespace {

constexpr int kBits = 6;
constexpr uint8_t kRegisterMax = 63;
constexpr int kQ = 50;  // hash bits left after the register index
constexpr int kSparseValMax = 32;
constexpr double kAlphaInf = 0.721347520444481703680;  // 1 / (2 ln 2)
constexpr size_t kDenseBytes = kDenseSize - kHeaderSize;

uint8_t Byte(std::string_view s, size_t i) { return static_cast<uint8_t>(s[i]); }

// Register i of a dense body (6 bits starting at bit 6i, low bits first).
uint8_t DenseGet(const uint8_t* p, int i) {
  const size_t byte = static_cast<size_t>(i) * kBits / 8;
  const unsigned fb = static_cast<unsigned>(i * kBits) & 7;
  const unsigned b0 = p[byte];
  const unsigned b1 = byte + 1 < kDenseBytes ? p[byte + 1] : 0;
  return static_cast<uint8_t>(((b0 >> fb) | (b1 << (8 - fb))) & kRegisterMax);
}

void DenseSet(uint8_t* p, int i, uint8_t v) {
  const size_t byte = static_cast<size_t>(i) * kBits / 8;
  const unsigned fb = static_cast<unsigned>(i * kBits) & 7;
  p[byte] = static_cast<uint8_t>((p[byte] & ~(kRegisterMax << fb)) | (v << fb));
  if (byte + 1 < kDenseBytes) {
    p[byte + 1] = static_cast<uint8_t>((p[byte + 1] & ~(kRegisterMax >> (8 - fb))) | (v >> (8 - fb)));
  }
}

// Walks a sparse body: f(first register, run length, value) per opcode. False if
// the opcodes do not cover exactly kRegisters registers.
template <class F>
bool WalkSparse(std::string_view s, F&& f) {
  int idx = 0;
  for (size_t i = kHeaderSize; i < s.size();) {
    const uint8_t op = Byte(s, i);
    int len;
    uint8_t value = 0;
    if ((op & 0xc0) == 0) {  // ZERO
      len = (op & 0x3f) + 1;
      i += 1;
    } else if ((op & 0xc0) == 0x40) {  // XZERO (a missing second byte reads 0, as Redis)
      const uint8_t lo = i + 1 < s.size() ? Byte(s, i + 1) : 0;
      len = (((op & 0x3f) << 8) | lo) + 1;
      i += 2;
    } else {  // VAL
      len = (op & 0x3) + 1;
      value = static_cast<uint8_t>(((op >> 2) & 0x1f) + 1);
      i += 1;
    }
    if (idx + len > kRegisters) return false;
    f(idx, len, value);
    idx += len;
  }
  return idx == kRegisters;
}

// The shortest opcode sequence for regs (every value <= 32).
void EncodeSparse(const Registers regs, std::string* out) {
  for (int i = 0; i < kRegisters;) {
    int j = i;
    if (regs[i] == 0) {
      while (j < kRegisters && regs[j] == 0) ++j;
      const int len = j - i;
      if (len <= 64) {
        out->push_back(static_cast<char>(len - 1));
      } else {
        out->push_back(static_cast<char>(0x40 | ((len - 1) >> 8)));
        out->push_back(static_cast<char>((len - 1) & 0xff));
      }
    } else {
      while (j < kRegisters && regs[j] == regs[i] && j - i < 4) ++j;
      out->push_back(static_cast<char>(0x80 | ((regs[i] - 1) << 2) | (j - i - 1)));
    }
    i = j;
  }
}

size_t SparseSize(const Registers regs) {
  size_t n = 0;
  for (int i = 0; i < kRegisters;) {
    int j = i;
    if (regs[i] == 0) {
      while (j < kRegisters && regs[j] == 0) ++j;
      n += j - i <= 64 ? 1 : 2;
    } else {
      while (j < kRegisters && regs[j] == regs[i] && j - i < 4) ++j;
      n += 1;
    }
    i = j;
  }
  return n;
}

// *s becomes the dense form of regs, keeping its header (and cached count).
void WriteDense(std::string* s, const Registers regs) {
  std::string dense(kDenseSize, '\0');
  std::memcpy(dense.data(), s->data(), kHeaderSize);
  dense[4] = static_cast<char>(kDense);
  auto* p = reinterpret_cast<uint8_t*>(dense.data() + kHeaderSize);
  for (int i = 0; i < kRegisters; ++i) {
    if (regs[i] != 0) DenseSet(p, i, regs[i]);
  }
  *s = std::move(dense);
}

double Sigma(double x) {
  if (x == 1.) return INFINITY;
  double z_prev, y = 1, z = x;
  do {
    x *= x;
    z_prev = z;
    z += x * y;
    y += y;
  } while (z_prev != z);
  return z;
}

double Tau(double x) {
  if (x == 0. || x == 1.) return 0.;
  double z_prev, y = 1.0, z = 1 - x;
  do {
    x = std::sqrt(x);
    z_prev = z;
    y *= 0.5;
    z -= std::pow(1 - x, 2) * y;
  } while (z_prev != z);
  return z / 3;
}

}  // namespace

std::string NewSparse() {
  std::string s(kHeaderSize, '\0');
  std::memcpy(s.data(), "HYLL", 4);
  s[4] = static_cast<char>(kSparse);
  // One XZERO opcode covering all 16384 registers.
  s.push_back(static_cast<char>(0x40 | ((kRegisters - 1) >> 8)));
  s.push_back(static_cast<char>((kRegisters - 1) & 0xff));
  return s;
}

bool LooksValid(std::string_view s) {
  if (s.size() < kHeaderSize || s.substr(0, 4) != "HYLL" || Byte(s, 4) > kSparse) return false;
  return Byte(s, 4) != kDense || s.size() == kDenseSize;
}

bool IsSparse(std::string_view s) { return Byte(s, 4) == kSparse; }

bool Decode(std::string_view s, Registers regs) {
  std::memset(regs, 0, kRegisters);
  return MergeInto(s, regs);
}

bool MergeInto(std::string_view s, Registers regs) {
  if (!IsSparse(s)) {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data() + kHeaderSize);
    for (int i = 0; i < kRegisters; ++i) regs[i] = std::max(regs[i], DenseGet(p, i));
    return true;
  }
  return WalkSparse(s, [&](int idx, int len, uint8_t value) {
    if (value == 0) return;
    for (int k = idx; k < idx + len; ++k) regs[k] = std::max(regs[k], value);
  });
}

void Hash(std::string_view element, int* reg, uint8_t* value) {
  uint64_t hash = MurmurHash64A(element, 0xadc83b19ULL);
  *reg = static_cast<int>(hash & (kRegisters - 1));
  hash >>= 14;
  hash |= uint64_t{1} << kQ;  // the run ends by bit Q: value <= Q + 1
  *value = static_cast<uint8_t>(std::countr_zero(hash) + 1);
}

namespace {

struct Op {
  int len;        // registers covered
  uint8_t value;  // 0 for ZERO / XZERO
  size_t bytes;   // 1 or 2
};

// The opcode at s[i]: false if it is cut short.
bool ReadOp(std::string_view s, size_t i, Op* op) {
  const uint8_t b = Byte(s, i);
  if ((b & 0xc0) == 0) {
    *op = {(b & 0x3f) + 1, 0, 1};
  } else if ((b & 0xc0) == 0x40) {
    if (i + 1 >= s.size()) return false;
    *op = {(((b & 0x3f) << 8) | Byte(s, i + 1)) + 1, 0, 2};
  } else {
    *op = {(b & 0x3) + 1, static_cast<uint8_t>(((b >> 2) & 0x1f) + 1), 1};
  }
  return true;
}

bool IsVal(char b) { return (static_cast<uint8_t>(b) & 0x80) != 0; }

// Appends the opcode(s) for n registers of value v (n <= 4 when v > 0).
void PutRun(std::string* out, int n, uint8_t v) {
  if (n == 0) return;
  if (v > 0) {
    out->push_back(static_cast<char>(0x80 | ((v - 1) << 2) | (n - 1)));
  } else if (n <= 64) {
    out->push_back(static_cast<char>(n - 1));
  } else {
    out->push_back(static_cast<char>(0x40 | ((n - 1) >> 8)));
    out->push_back(static_cast<char>((n - 1) & 0xff));
  }
}

// Sets register reg to value in a sparse HLL in place, as Redis's hllSparseSet:
// the opcode covering reg splits into [run before][VAL value x1][run after], which
// then merges with equal neighbouring VAL opcodes. Returns 0 (the register already
// holds as much), 1 (set), 2 (the HLL must turn dense first), -1 (corrupt: the
// opcodes end before reg).
int SparseSet(std::string* s, int reg, uint8_t value, size_t max_bytes) {
  if (value > kSparseValMax) return 2;
  const size_t end = s->size();
  size_t i = kHeaderSize, prev = end;
  int first = 0;
  Op op{};
  for (; i < end; i += op.bytes) {
    if (!ReadOp(*s, i, &op)) return -1;
    if (reg < first + op.len) break;
    first += op.len;
    prev = i;
  }
  if (i >= end) return -1;
  if (op.value >= value) return 0;
  std::string window;  // the previous VAL, the split opcode, the next VAL
  const size_t wstart = prev != end && IsVal((*s)[prev]) ? prev : i;
  const size_t after = i + op.bytes;
  const size_t wend = after < end && IsVal((*s)[after]) ? after + 1 : after;
  window.append(*s, wstart, i - wstart);
  PutRun(&window, reg - first, op.value);
  PutRun(&window, 1, value);
  PutRun(&window, first + op.len - 1 - reg, op.value);
  window.append(*s, after, wend - after);
  // Merge neighbouring VAL opcodes of one value, left to right, up to 4 registers.
  std::string merged;
  Op last{0, 0, 0};  // the last opcode in merged
  for (size_t k = 0; k < window.size();) {
    Op cur;
    ReadOp(window, k, &cur);
    if (cur.value > 0 && last.value == cur.value && last.len + cur.len <= 4) {
      merged.pop_back();  // a VAL is one byte
      PutRun(&merged, last.len + cur.len, cur.value);
      last.len += cur.len;
    } else {
      merged.append(window, k, cur.bytes);
      last = cur;
    }
    k += cur.bytes;
  }
  const size_t next_size = end - (wend - wstart) + merged.size();
  if (next_size > end && next_size > max_bytes) return 2;
  s->replace(wstart, wend - wstart, merged);
  return 1;
}

}  // namespace

int Add(std::string* s, const std::string_view* elements, size_t n, size_t sparse_max_bytes) {
  int changed = 0;
  size_t i = 0;
  for (; i < n && IsSparse(*s); ++i) {
    int reg;
    uint8_t value;
    Hash(elements[i], &reg, &value);
    const int r = SparseSet(s, reg, value, sparse_max_bytes);
    if (r < 0) return -1;
    if (r == 2) {
      // Dense from here on; this element is added below.
      if (!ToDense(s)) return -1;
      break;
    }
    changed |= r;
  }
  auto* p = reinterpret_cast<uint8_t*>(s->data() + kHeaderSize);
  for (; i < n; ++i) {
    int reg;
    uint8_t value;
    Hash(elements[i], &reg, &value);
    if (value > DenseGet(p, reg)) {
      DenseSet(p, reg, value);
      changed = 1;
    }
  }
  return changed;
}

bool SetRegisters(std::string* s, const Registers regs, size_t sparse_max_bytes) {
  if (IsSparse(*s)) {
    Registers old;
    if (!Decode(*s, old)) return false;
    const size_t next = kHeaderSize + SparseSize(regs);
    const bool too_big = std::any_of(regs, regs + kRegisters, [](uint8_t v) { return v > kSparseValMax; });
    if (too_big || (next > s->size() && next > sparse_max_bytes)) {
      WriteDense(s, regs);
    } else {
      s->resize(kHeaderSize);
      EncodeSparse(regs, s);
    }
    return true;
  }
  auto* p = reinterpret_cast<uint8_t*>(s->data() + kHeaderSize);
  for (int i = 0; i < kRegisters; ++i) DenseSet(p, i, regs[i]);
  return true;
}

bool ToDense(std::string* s) {
  if (!IsSparse(*s)) return true;
  Registers regs;
  if (!Decode(*s, regs)) return false;
  WriteDense(s, regs);
  return true;
}

namespace {

// Ertl's improved estimator over a register histogram, as Redis's hllCount.
uint64_t Estimate(const int (&histo)[64]) {
  const double m = kRegisters;
  double z = m * Tau((m - histo[kQ + 1]) / m);
  for (int j = kQ; j >= 1; --j) {
    z += histo[j];
    z *= 0.5;
  }
  z += m * Sigma(histo[0] / m);
  return static_cast<uint64_t>(std::llroundl(kAlphaInf * m * m / z));
}

}  // namespace

uint64_t Count(const Registers regs) {
  int histo[64] = {0};
  for (int i = 0; i < kRegisters; ++i) ++histo[regs[i] & 63];
  return Estimate(histo);
}

bool CountOf(std::string_view s, uint64_t* count) {
  int histo[64] = {0};
  if (IsSparse(s)) {
    if (!WalkSparse(s, [&](int, int len, uint8_t value) { histo[value & 63] += len; })) return false;
  } else {
    const auto* p = reinterpret_cast<const uint8_t*>(s.data() + kHeaderSize);
    for (int i = 0; i < kRegisters; ++i) ++histo[DenseGet(p, i)];
  }
  *count = Estimate(histo);
  return true;
}

bool CachedCount(std::string_view s, uint64_t* count) {
  if ((Byte(s, 15) & 0x80) != 0) return false;
  uint64_t c = 0;
  for (int i = 7; i >= 0; --i) c = (c << 8) | Byte(s, 8 + static_cast<size_t>(i));
  *count = c;
  return true;
}

void SetCachedCount(std::string* s, uint64_t count) {
  for (int i = 0; i < 8; ++i) (*s)[8 + static_cast<size_t>(i)] = static_cast<char>((count >> (8 * i)) & 0xff);
}

void InvalidateCache(std::string* s) { (*s)[15] = static_cast<char>(Byte(*s, 15) | 0x80); }

std::string SelfTest() {
  uint8_t dense[kDenseBytes] = {};
  Registers want;
  uint64_t x = 0x9e3779b97f4a7c15ULL;
  for (int round = 0; round < 100; ++round) {
    for (int i = 0; i < kRegisters; ++i) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      want[i] = static_cast<uint8_t>(x & kRegisterMax);
      DenseSet(dense, i, want[i]);
    }
    for (int i = 0; i < kRegisters; ++i) {
      if (DenseGet(dense, i) != want[i]) return "TESTFAILED Register error at " + std::to_string(i);
    }
  }
  std::string sparse = NewSparse(), full = NewSparse();
  if (!ToDense(&full)) return "TESTFAILED sparse to dense";
  for (int i = 1; i <= 20000; ++i) {
    const std::string e = "selftest:" + std::to_string(i);
    const std::string_view v = e;
    Add(&sparse, &v, 1, SIZE_MAX);
    Add(&full, &v, 1, SIZE_MAX);
    if (i % 1000 != 0) continue;
    Registers a, b;
    if (!Decode(sparse, a) || !Decode(full, b) || std::memcmp(a, b, kRegisters) != 0) {
      return "TESTFAILED sparse and dense differ at " + std::to_string(i);
    }
    const double err = std::abs(static_cast<double>(Count(a)) - i) / i;
    if (err > 0.05) return "TESTFAILED too big error. card:" + std::to_string(Count(a)) + " i:" + std::to_string(i);
  }
  return "";
}

bool DescribeSparse(std::string_view s, std::string* out) {
  out->clear();
  for (size_t i = kHeaderSize; i < s.size();) {
    const uint8_t op = Byte(s, i);
    if ((op & 0xc0) == 0) {
      *out += "z:" + std::to_string((op & 0x3f) + 1) + " ";
      i += 1;
    } else if ((op & 0xc0) == 0x40) {
      const uint8_t lo = i + 1 < s.size() ? Byte(s, i + 1) : 0;
      *out += "Z:" + std::to_string((((op & 0x3f) << 8) | lo) + 1) + " ";
      i += 2;
    } else {
      *out += "v:" + std::to_string(((op >> 2) & 0x1f) + 1) + "," + std::to_string((op & 0x3) + 1) + " ";
      i += 1;
    }
  }
  if (!out->empty()) out->pop_back();
  return true;
}

}  // namespace feedkv::hll
