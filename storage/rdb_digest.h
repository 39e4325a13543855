// Dataset digests for DEBUG DIGEST / DEBUG DIGEST-VALUE: a hash of the
// logical content (db, key, type, value, expire; counter spaces by key, cold
// rows included — ColdTier adds those),
// independent of encoding, memory layout and iteration order, so two
// servers (a primary and its replica, a server before and after a restart)
// holding the same data print the same digest. 40 hex digits, like Redis;
// all zeros for an empty dataset.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/database.h"

namespace feedkv {
class CounterSpace;
}

namespace feedkv::rdb {

// Order-independent accumulator.
class DigestBuilder {
 public:
  void AddDatabase(int index, const Database& db);
  // The keys of a counter space that are in memory (ForEachKey: not the rows only
  // the cold store holds, which the caller adds with AddCounterKey).
  void AddCounterSpace(std::string_view name, const CounterSpace& space);
  // One counter key. A key whose counters are all zero reads as absent and adds
  // nothing, so where a space keeps it (a hot slot, or no row in a cold range)
  // does not change the digest.
  void AddCounterKey(std::string_view space, int64_t id, std::span<const uint64_t> counters);
  // The 40-hex digest of everything added.
  std::string Hex() const;

 private:
  void Mix(const std::string& item);
  uint64_t hi_ = 0, lo_ = 0, sum_ = 0, count_ = 0;
};

// Digest of one key's value and whether it has an expire, not its name (40
// zeros if the key is missing): equal for equal values, as Redis's.
std::string KeyDigestHex(const Entry* e);

}  // namespace feedkv::rdb
