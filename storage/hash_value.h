// HashValue: the value of a Redis hash key: fields mapped to values, both byte
// strings. Two encodings, named as Redis names them for OBJECT ENCODING:
//   - "listpack": a small hash is one malloc block of items back to back
//     ([len][field][len][value], storage/hash_item.h) in insertion order, searched
//     linearly, as Redis's listpack (so HGETALL lists fields in the order Redis
//     does). Up to hash-max-listpack-entries fields, each field and value at most
//     hash-max-listpack-value bytes.
//   - "hashtable": a bigger hash keeps one block per item, found by field through
//     an open-addressing index of tagged pointers (BlockIndex): ~8-10 bytes of index
//     plus the item's malloc block per field, against Redis's 24-byte dictEntry, the
//     bucket pointer and two sds allocations.
// A hash converts from listpack to hashtable when it outgrows the limits, and never
// back (as Redis). Views returned by Get/ForEach are valid until the hash changes.
// Not thread-safe: owned by the command thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "storage/block_index.h"
#include "storage/hash_item.h"
#include "storage/object.h"
#include "storage/status.h"

namespace feedkv {

// When a hash outgrows the listpack encoding (hash-max-listpack-*).
struct HashLimits {
  size_t max_listpack_entries = 512;
  size_t max_listpack_value = 64;
};

using HashField = std::pair<std::string_view, std::string_view>;  // field, value

class HashValue final : public Object {
 public:
  HashValue() = default;
  ~HashValue() override;
  HashValue(const HashValue&) = delete;
  HashValue& operator=(const HashValue&) = delete;

  // An empty hash whose encoding suits `size_hint` fields of up to `max_len` bytes.
  static std::unique_ptr<HashValue> Create(size_t size_hint, size_t max_len, const HashLimits& limits);

  // Object.
  ValueType type() const override { return ValueType::kHash; }
  std::string_view encoding() const override { return is_table() ? "hashtable" : "listpack"; }
  size_t MemoryUsage() const override;
  std::unique_ptr<Object> Clone() const override;
  // u8 encoding (0 listpack, 1 hashtable), varint count, then per field (listpack:
  // in order): varint length, field bytes, varint length, value bytes.
  void SerializeTo(std::string* out) const override;
  // Sum of a hash of each (field, value): independent of order and encoding.
  uint64_t Digest() const override;
  // Decodes SerializeTo's form, validating every byte: an empty hash and duplicate
  // fields are Corruption.
  static Status Decode(std::string_view bytes, std::unique_ptr<HashValue>* out);

  size_t size() const { return is_table() ? table_->size() : count_; }
  bool empty() const { return size() == 0; }
  bool is_listpack() const { return !is_table(); }

  bool Get(std::string_view field, std::string_view* value) const;
  // Sets field to value; true when the field is new.
  bool Set(std::string_view field, std::string_view value, const HashLimits& limits);
  // Returns whether the field was there.
  bool Remove(std::string_view field);

  // f(std::string_view field, std::string_view value) for every field (listpack: in
  // order). f must not change the hash.
  template <class F>
  void ForEach(F&& f) const;
  // A uniformly chosen field. REQUIRES: !empty().
  HashField Random(uint64_t random) const;
  // HSCAN: a listpack hash answers everything at once (cursor 0), as Redis; a
  // hashtable is walked in the order of a fixed hash of each field (HashOrderScan),
  // so a scan survives any change between calls. Replaces *out; returns the next cursor.
  uint64_t Scan(uint64_t cursor, size_t count, std::vector<HashField>* out) const;

  // listpack -> hashtable. No-op for a hashtable.
  void ConvertToHashtable();

 private:
  struct ItemKey {
    static std::string_view Key(const char* item) { return hash_item::Field(item); }
  };
  using Index = BlockIndex<ItemKey>;

  // listpack: offset of the field's item, or bytes_ when absent.
  size_t ListFind(std::string_view field) const;

  static constexpr uint32_t kTable = UINT32_MAX;  // count_ of a hashtable
  bool is_table() const { return count_ == kTable; }

  // 24 bytes with the vtable pointer: one small malloc chunk per hash key.
  union {
    char* buf_ = nullptr;  // listpack: bytes_ bytes of items, count_ of them
    Index* table_;         // hashtable (count_ == kTable), owned
  };
  uint32_t bytes_ = 0;
  uint32_t count_ = 0;
};

template <class F>
void HashValue::ForEach(F&& f) const {
  if (is_table()) {
    table_->ForEach([&](const char* item) { f(hash_item::Field(item), hash_item::Value(item)); });
    return;
  }
  for (const char* p = buf_; p < buf_ + bytes_;) {
    const std::string_view field = hash_item::ReadString(p, &p);
    const std::string_view value = hash_item::ReadString(p, &p);
    f(field, value);
  }
}

}  // namespace feedkv
