// Object: the interface every non-string value in the keyspace implements
// (sets, sorted sets, feed timelines, hashes, lists, Bloom filters). The keyspace owns objects
// through this interface and never looks inside them, so adding a type needs
// no change to the keyspace. Not thread-safe; owned by the command thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace feedkv {

// What TYPE answers, and what the RDB records as the value's kind.
enum class ValueType : uint8_t { kString = 0, kSet = 1, kZset = 2, kFeed = 3, kHash = 4, kList = 5,
                                   kBloom = 6, kStream = 7 };

std::string_view ValueTypeName(ValueType t);

class Object {
 public:
  virtual ~Object() = default;
  virtual ValueType type() const = 0;
  // What OBJECT ENCODING answers ("longset", "hashtable", ...).
  virtual std::string_view encoding() const = 0;
  // Bytes owned by the object, for MEMORY USAGE and used_memory.
  virtual size_t MemoryUsage() const = 0;
  virtual std::unique_ptr<Object> Clone() const = 0;
  // Appends the value's snapshot form (decoded by DecodeObject, object_codec.h).
  virtual void SerializeTo(std::string* out) const = 0;
  // A hash of the logical content, independent of encoding and layout (two
  // sets with the same members digest alike), for DEBUG DIGEST.
  virtual uint64_t Digest() const = 0;
};

}  // namespace feedkv
