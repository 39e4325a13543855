#include "storage/rdb_digest.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "storage/counter_space.h"

namespace feedkv::rdb {

namespace {

void Put64(std::string* s, uint64_t v) {
  char b[8];
  std::memcpy(b, &v, 8);
  s->append(b, 8);
}

// The value's own digest: strings hash their bytes (an int-encoded string
// hashes its decimal form, so encodings agree), objects report theirs.
uint64_t ValueDigest(const Entry* e) {
  if (e->type == ValueType::kString) {
    std::string scratch;
    std::string_view v = Database::StringValue(e, &scratch);
    return XXH3_64bits(v.data(), v.size());
  }
  return Database::GetObject(e)->Digest();
}

std::string EntryItem(int db, const Entry* e) {
  std::string item;
  Put64(&item, static_cast<uint64_t>(db));
  Put64(&item, e->key().size());
  item.append(e->key());
  item.push_back(static_cast<char>(e->type));
  Put64(&item, e->has_expire ? static_cast<uint64_t>(e->expire_ms()) : 0);
  Put64(&item, ValueDigest(e));
  return item;
}

std::string Hex40(uint64_t a, uint64_t b, uint32_t c) {
  return fmt::format("{:016x}{:016x}{:08x}", a, b, c);
}

}  // namespace

void DigestBuilder::Mix(const std::string& item) {
  XXH128_hash_t h = XXH3_128bits(item.data(), item.size());
  hi_ ^= h.high64;
  lo_ ^= h.low64;
  sum_ += h.low64 * 0x9E3779B97F4A7C15ull + h.high64;
  count_++;
}

void DigestBuilder::AddDatabase(int index, const Database& db) {
  db.ForEach([&](const Entry* e) { Mix(EntryItem(index, e)); });
}

void DigestBuilder::AddCounterSpace(std::string_view name, const CounterSpace& space) {
  space.ForEachKey([&](int64_t id, std::span<const uint64_t> counters) { AddCounterKey(name, id, counters); });
}

void DigestBuilder::AddCounterKey(std::string_view space, int64_t id, std::span<const uint64_t> counters) {
  if (std::all_of(counters.begin(), counters.end(), [](uint64_t v) { return v == 0; })) return;
  std::string item;
  item.reserve(32 + space.size() + 8 * counters.size());
  item.append("counter\0", 8);
  Put64(&item, space.size());
  item.append(space);
  Put64(&item, static_cast<uint64_t>(id));
  for (uint64_t c : counters) Put64(&item, c);
  Mix(item);
}

std::string DigestBuilder::Hex() const {
  if (count_ == 0) return std::string(40, '0');
  uint64_t words[4] = {hi_, lo_, sum_, count_};
  XXH128_hash_t f = XXH3_128bits(words, sizeof(words));
  return Hex40(f.high64, f.low64, static_cast<uint32_t>(XXH32(words, sizeof(words), 0)));
}

std::string KeyDigestHex(const Entry* e) {
  if (e == nullptr) return std::string(40, '0');
  // The value alone, as Redis's DEBUG DIGEST-VALUE: two keys holding the same
  // value (COPY) agree, and an expire counts by its presence, not its time.
  std::string item;
  item.push_back(static_cast<char>(e->type));
  Put64(&item, ValueDigest(e));
  if (e->has_expire) item.append("!!expire!!");
  XXH128_hash_t h = XXH3_128bits(item.data(), item.size());
  return Hex40(h.high64, h.low64, static_cast<uint32_t>(XXH32(item.data(), item.size(), 0)));
}

}  // namespace feedkv::rdb
