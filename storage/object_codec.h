// DecodeObject: the one place that turns a snapshot's (type, bytes) back into
// an Object. Each type's decoder validates every byte and returns Corruption
// on bad input; it never trusts lengths read from disk.
#pragma once

#include <memory>
#include <string_view>

#include "storage/object.h"
#include "storage/status.h"

namespace feedkv {

Status DecodeObject(ValueType type, std::string_view bytes, std::unique_ptr<Object>* out);

}  // namespace feedkv
