// RedisBloom's scalable Bloom filter. See bloom_chain.h.
#include "storage/bloom_chain.h"

#include <xxhash.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include <fmt/format.h>

#include "storage/murmur_hash.h"

namespace feedkv {

namespace {

constexpr double kLn2 = 0.693147180559945;          // bloom.c's constants, to the digit
constexpr double kLn2Squared = 0.480453013918201;
constexpr double kTightening = 0.5;                 // sb.c ERROR_TIGHTENING_RATIO
constexpr uint64_t kHashSeed = 0xc6a4a7935bd1e995ULL;
// The most hash functions an error rate can ask for (bloom.h BLOOM_MAX_HASHES):
// the smallest positive double gives 1075. A header claiming more is refused, so
// an add is bounded.
constexpr uint32_t kMaxHashes = 1075;
constexpr size_t kHeaderFixed = 8 + 4 + 4 + 4;
constexpr size_t kLinkRecord = 8 + 8 + 8 + 8 + 8 + 4 + 8 + 1;
// RedisBloom's struct sizes on 64-bit builds (SBChain, SBLink), for BF.INFO Size.
constexpr uint64_t kRedisBloomChainStruct = 32;
constexpr uint64_t kRedisBloomLinkStruct = 64;

BloomStats g_stats;

double BitsPerEntry(double error) { return std::fabs(std::log(error) / kLn2Squared); }

uint64_t BitsToBytes(uint64_t bits) { return bits % 64 ? (bits / 64 + 1) * 8 : bits / 8; }

Status BadData() { return Status::InvalidArgument("received bad data"); }

Status TooBig(uint64_t needed) {
  return Status::InvalidArgument(
      fmt::format("filter would exceed bf-max-filter-bytes (bytes needed {})", needed));
}

template <class T>
void Put(std::string* out, T v) {
  char b[sizeof(T)];
  std::memcpy(b, &v, sizeof(T));  // little-endian hosts only, as RedisBloom's dump
  out->append(b, sizeof(T));
}

template <class T>
T Get(const char*& p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  p += sizeof(T);
  return v;
}

}  // namespace

uint64_t BloomStats::links_max() const {
  for (int i = 63; i > 0; i--) {
    if (by_links[i].load(std::memory_order_relaxed) != 0) return static_cast<uint64_t>(i);
  }
  return 0;
}

const BloomStats& GlobalBloomStats() { return g_stats; }

double BloomChain::LinkBytes(double entries, double error) {
  if (!(entries >= 1) || !(error > 0) || !(error < 1)) return 0;
  double bits = std::floor(entries * BitsPerEntry(error));
  if (bits < 1) bits = 1;
  return std::ceil(bits / 64) * 8;
}

bool BloomChain::AllocateBits(Link* l) {
  // calloc: a big link's pages stay untouched (and unbacked) until bits land there.
  void* p = std::calloc(l->bytes, 1);
  if (p == nullptr) return false;
  l->bits.reset(static_cast<uint8_t*>(p));
  return true;
}

bool BloomChain::AddLink(uint64_t entries, double error) {
  const double bytes = LinkBytes(static_cast<double>(entries), error);
  if (bytes == 0) return false;
  Link l;
  l.entries = entries;
  l.error = error;
  l.bpe = BitsPerEntry(error);
  auto bits = static_cast<uint64_t>(static_cast<double>(entries) * l.bpe);
  if (bits == 0) bits = 1;
  l.bytes = BitsToBytes(bits);
  l.hashes = static_cast<uint32_t>(std::ceil(kLn2 * l.bpe));
  if (l.hashes == 0 || l.hashes > kMaxHashes || !AllocateBits(&l)) return false;
  links_.push_back(std::move(l));
  return true;
}

void BloomChain::Track(int sign) {
  tracked_ = sign > 0;
  const auto d = static_cast<uint64_t>(static_cast<int64_t>(sign));  // wraps for -1
  constexpr auto kRelaxed = std::memory_order_relaxed;
  g_stats.filters.fetch_add(d, kRelaxed);
  g_stats.bytes.fetch_add(d * bit_bytes(), kRelaxed);
  g_stats.items.fetch_add(d * size_, kRelaxed);
  g_stats.by_links[links_.size() < 63 ? links_.size() : 63].fetch_add(d, kRelaxed);
}

BloomChain::~BloomChain() {
  if (tracked_) Track(-1);
}

Status BloomChain::Create(const Params& p, uint64_t max_bytes, std::unique_ptr<BloomChain>* out) {
  out->reset();
  const uint32_t options = kOptForce64 | kOptNoRound | (p.nonscaling ? kOptNoScaling : 0);
  const double error = p.nonscaling ? p.error : p.error * kTightening;
  const double bytes = LinkBytes(static_cast<double>(p.capacity), error);
  if (bytes == 0) return Status::InvalidArgument("could not create filter");
  if (bytes > static_cast<double>(max_bytes)) return TooBig(static_cast<uint64_t>(std::min(bytes, 1e19)));
  std::unique_ptr<BloomChain> c(new BloomChain(options, p.growth));
  if (!c->AddLink(p.capacity, error)) return Status::InvalidArgument("could not create filter");
  c->Track(+1);
  *out = std::move(c);
  return Status::OK();
}

BloomChain::Hash BloomChain::HashOf(std::string_view item) const {
  Hash h;
  h.a = MurmurHash64A(item, kHashSeed);
  h.b = MurmurHash64A(item, h.a);
  return h;
}

bool BloomChain::LinkHas(const Link& l, Hash h) {
  const uint64_t mod = l.modulus();
  const uint8_t* bits = l.bits.get();
  for (uint64_t i = 0; i < l.hashes; i++) {
    const uint64_t x = (h.a + i * h.b) % mod;
    if ((bits[x >> 3] & (1u << (x & 7))) == 0) return false;
  }
  return true;
}

bool BloomChain::LinkSet(Link* l, Hash h) {
  const uint64_t mod = l->modulus();
  uint8_t* bits = l->bits.get();
  bool any_clear = false;
  for (uint64_t i = 0; i < l->hashes; i++) {
    const uint64_t x = (h.a + i * h.b) % mod;
    const uint8_t mask = static_cast<uint8_t>(1u << (x & 7));
    if ((bits[x >> 3] & mask) == 0) {
      bits[x >> 3] |= mask;
      any_clear = true;
    }
  }
  return any_clear;
}

bool BloomChain::Contains(std::string_view item) const {
  const Hash h = HashOf(item);
  for (size_t i = links_.size(); i-- > 0;) {
    if (LinkHas(links_[i], h)) return true;
  }
  return false;
}

BloomChain::AddResult BloomChain::Add(std::string_view item, uint64_t max_bytes, uint64_t* bytes_needed) {
  const Hash h = HashOf(item);
  for (size_t i = links_.size(); i-- > 0;) {
    if (LinkHas(links_[i], h)) return AddResult::kPresent;
  }
  if (links_.back().size >= links_.back().entries) {
    if (nonscaling()) return AddResult::kFull;
    const Link& cur = links_.back();
    uint64_t entries;
    if (__builtin_mul_overflow(cur.entries, uint64_t{growth_}, &entries)) entries = UINT64_MAX;
    const double error = cur.error * kTightening;
    const double more = LinkBytes(static_cast<double>(entries), error);
    const double total = static_cast<double>(bit_bytes()) + more;
    if (more == 0 || total > static_cast<double>(max_bytes)) {
      if (bytes_needed != nullptr) *bytes_needed = static_cast<uint64_t>(std::min(total, 1e19));
      return more == 0 ? AddResult::kFailed : AddResult::kTooBig;
    }
    Track(-1);
    const bool added = AddLink(entries, error);
    if (added) g_stats.scale_events.fetch_add(1, std::memory_order_relaxed);
    Track(+1);
    if (!added) return AddResult::kFailed;
  }
  // A fresh or unfull link: the item is new to the chain (no link holds all its
  // bits), and setting them in the newest link changes it.
  if (!LinkSet(&links_.back(), h)) return AddResult::kPresent;
  links_.back().size++;
  size_++;
  g_stats.items.fetch_add(1, std::memory_order_relaxed);
  return AddResult::kAdded;
}

uint64_t BloomChain::bit_bytes() const {
  uint64_t b = 0;
  for (const Link& l : links_) b += l.bytes;
  return b;
}

uint64_t BloomChain::capacity() const {
  uint64_t c = 0;
  for (const Link& l : links_) c += l.entries;
  return c;
}

double BloomChain::first_error() const { return links_.front().error; }
uint64_t BloomChain::first_capacity() const { return links_.front().entries; }

uint64_t BloomChain::RedisBloomSize() const {
  return kRedisBloomChainStruct + kRedisBloomLinkStruct * links_.size() + bit_bytes();
}

size_t BloomChain::MemoryUsage() const {
  return sizeof(*this) + links_.capacity() * sizeof(Link) + bit_bytes();
}

std::string BloomChain::EncodeHeader() const {
  std::string out;
  out.reserve(kHeaderFixed + kLinkRecord * links_.size());
  Put<uint64_t>(&out, size_);
  Put<uint32_t>(&out, static_cast<uint32_t>(links_.size()));
  Put<uint32_t>(&out, options_);
  Put<uint32_t>(&out, growth_);
  for (const Link& l : links_) {
    Put<uint64_t>(&out, l.bytes);
    Put<uint64_t>(&out, l.bytes * 8);
    Put<uint64_t>(&out, l.size);
    Put<double>(&out, l.error);
    Put<double>(&out, l.bpe);
    Put<uint32_t>(&out, l.hashes);
    Put<uint64_t>(&out, l.entries);
    Put<uint8_t>(&out, l.n2);
  }
  return out;
}

Status BloomChain::FromHeader(std::string_view header, uint64_t max_bytes, std::unique_ptr<BloomChain>* out) {
  out->reset();
  if (header.size() < kHeaderFixed) return BadData();
  const char* p = header.data();
  const auto size = Get<uint64_t>(p);
  const auto nfilters = Get<uint32_t>(p);
  const auto options = Get<uint32_t>(p);
  const auto growth = Get<uint32_t>(p);
  if (nfilters == 0 || header.size() != kHeaderFixed + kLinkRecord * uint64_t{nfilters}) return BadData();
  // Only the 64-bit hash is implemented: every chain RedisBloom has made since
  // 2.0 carries FORCE64 (older 32-bit-hash chains are refused, see docs/bloom.md).
  if ((options & ~(kOptNoRound | kOptEntsIsBits | kOptForce64 | kOptNoScaling)) != 0 ||
      (options & kOptForce64) == 0) {
    return BadData();
  }
  std::unique_ptr<BloomChain> c(new BloomChain(options, growth));
  c->links_.reserve(nfilters);
  uint64_t total_size = 0, total_bytes = 0;
  for (uint32_t i = 0; i < nfilters; i++) {
    Link l;
    l.bytes = Get<uint64_t>(p);
    const auto bits = Get<uint64_t>(p);
    l.size = Get<uint64_t>(p);
    l.error = Get<double>(p);
    l.bpe = Get<double>(p);
    l.hashes = Get<uint32_t>(p);
    l.entries = Get<uint64_t>(p);
    l.n2 = Get<uint8_t>(p);
    // bloom_validate_integrity, plus bounds of our own on what a link may cost.
    if (!(l.error > 0 && l.error < 1) || l.n2 > 63 || bits == 0 || l.bytes > (UINT64_MAX >> 3) ||
        bits != l.bytes * 8 || (l.n2 != 0 && bits < (uint64_t{1} << l.n2)) ||
        !(std::isfinite(l.bpe) && l.bpe > 0 && l.bpe < 2 * kMaxHashes) ||
        l.hashes != static_cast<uint32_t>(std::ceil(kLn2 * l.bpe)) || l.hashes > kMaxHashes) {
      return BadData();
    }
    if (l.size > UINT64_MAX - total_size) return BadData();
    total_size += l.size;
    if (l.bytes > max_bytes - std::min(max_bytes, total_bytes)) return TooBig(total_bytes + l.bytes);
    total_bytes += l.bytes;
    c->links_.push_back(std::move(l));
  }
  if (size != total_size) return BadData();
  for (Link& l : c->links_) {
    if (!c->AllocateBits(&l)) return Status::InvalidArgument("Insufficient memory to create filter");
  }
  c->size_ = size;
  c->Track(+1);
  *out = std::move(c);
  return Status::OK();
}

std::string_view BloomChain::Chunk(int64_t* iter, size_t max_len) const {
  if (*iter < 1) {
    *iter = 0;
    return {};
  }
  uint64_t offset = static_cast<uint64_t>(*iter) - 1;
  for (const Link& l : links_) {
    if (offset < l.bytes) {
      const size_t len = static_cast<size_t>(std::min<uint64_t>(max_len, l.bytes - offset));
      *iter += static_cast<int64_t>(len);
      return {reinterpret_cast<const char*>(l.bits.get()) + offset, len};
    }
    offset -= l.bytes;
  }
  *iter = 0;
  return {};
}

Status BloomChain::LoadChunk(int64_t iter, std::string_view data) {
  if (iter <= 0 || static_cast<uint64_t>(iter) < data.size()) return BadData();
  // The chunk began at iterator iter - len, i.e. byte offset iter - len - 1.
  const uint64_t start = static_cast<uint64_t>(iter) - data.size();
  if (start < 1) return Status::InvalidArgument("invalid offset - no link found");
  uint64_t offset = start - 1;
  for (Link& l : links_) {
    if (offset < l.bytes) {
      if (data.size() > l.bytes - offset) {
        return Status::InvalidArgument("invalid chunk - Too big for current filter");
      }
      std::memcpy(l.bits.get() + offset, data.data(), data.size());
      return Status::OK();
    }
    offset -= l.bytes;
  }
  return Status::InvalidArgument("invalid offset - no link found");
}

std::unique_ptr<Object> BloomChain::Clone() const {
  std::unique_ptr<BloomChain> c(new BloomChain(options_, growth_));
  c->links_.reserve(links_.size());
  for (const Link& l : links_) {
    Link n;
    n.entries = l.entries;
    n.size = l.size;
    n.bytes = l.bytes;
    n.error = l.error;
    n.bpe = l.bpe;
    n.hashes = l.hashes;
    n.n2 = l.n2;
    if (!c->AllocateBits(&n)) throw std::bad_alloc();
    std::memcpy(n.bits.get(), l.bits.get(), l.bytes);
    c->links_.push_back(std::move(n));
  }
  c->size_ = size_;
  c->Track(+1);
  return c;
}

void BloomChain::SerializeTo(std::string* out) const {
  out->reserve(out->size() + kHeaderFixed + kLinkRecord * links_.size() + bit_bytes());
  out->append(EncodeHeader());
  for (const Link& l : links_) out->append(reinterpret_cast<const char*>(l.bits.get()), l.bytes);
}

uint64_t BloomChain::Digest() const {
  const std::string header = EncodeHeader();
  uint64_t h = XXH64(header.data(), header.size(), 0x626c6f6f6d);  // "bloom"
  for (const Link& l : links_) h = XXH64(l.bits.get(), l.bytes, h);
  return h;
}

Status BloomChain::Decode(std::string_view bytes, std::unique_ptr<BloomChain>* out) {
  out->reset();
  if (bytes.size() < kHeaderFixed) return Status::Corruption("bloom filter: short header");
  uint32_t nfilters;
  std::memcpy(&nfilters, bytes.data() + 8, 4);
  const uint64_t header_len = kHeaderFixed + kLinkRecord * uint64_t{nfilters};
  if (bytes.size() < header_len) return Status::Corruption("bloom filter: short header");
  // The bit arrays' length before anything is allocated for them.
  uint64_t bit_bytes = 0;
  for (uint32_t i = 0; i < nfilters; i++) {
    uint64_t b;
    std::memcpy(&b, bytes.data() + kHeaderFixed + kLinkRecord * i, 8);
    if (b > bytes.size() - header_len - bit_bytes) return Status::Corruption("bloom filter: bit arrays' length");
    bit_bytes += b;
  }
  std::unique_ptr<BloomChain> c;
  // A snapshot loads whatever size bf-max-filter-bytes says today.
  Status s = FromHeader(bytes.substr(0, header_len), UINT64_MAX, &c);
  if (!s.ok()) return Status::Corruption("bloom filter: " + s.message());
  if (bytes.size() - header_len != c->bit_bytes()) return Status::Corruption("bloom filter: bit arrays' length");
  const char* p = bytes.data() + header_len;
  for (Link& l : c->links_) {
    std::memcpy(l.bits.get(), p, l.bytes);
    p += l.bytes;
  }
  *out = std::move(c);
  return Status::OK();
}

}  // namespace feedkv
