#include "storage/object_codec.h"

namespace feedkv {

Status DecodeObject(ValueType type, std::string_view bytes, std::unique_ptr<Object>* out) {
  (void)bytes;
  out->reset();
  switch (type) {
    case ValueType::kString:
      return Status::Corruption("strings are not objects");
    case ValueType::kSet:
      // Wired by the set family (storage/set_value.h).
      return Status::Corruption("set decoding not available");
  }
  return Status::Corruption("unknown value type");
}

}  // namespace feedkv
