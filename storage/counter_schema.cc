#include "storage/counter_schema.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>

namespace feedkv {

namespace {

bool IsNameChar(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

}  // namespace

Status CounterSchema::Parse(const std::vector<std::string_view>& field_specs, CounterSchema* out) {
  if (field_specs.empty())
    return Status::InvalidArgument("counter schema needs at least one field");
  if (field_specs.size() > kMaxFields) {
    return Status::InvalidArgument(
        fmt::format("counter schema has more than {} fields", kMaxFields));
  }
  CounterSchema schema;
  schema.fields_.reserve(field_specs.size());
  for (std::string_view spec : field_specs) {
    const size_t colon = spec.find(':');
    if (colon == std::string_view::npos || spec.find(':', colon + 1) != std::string_view::npos) {
      return Status::InvalidArgument(
          fmt::format("bad counter field '{}': expected name:bits", spec));
    }
    std::string_view name = spec.substr(0, colon);
    std::string_view bits_text = spec.substr(colon + 1);
    if (name.empty() || name.size() > kMaxNameLength ||
        !std::all_of(name.begin(), name.end(), IsNameChar)) {
      return Status::InvalidArgument(
          fmt::format("bad counter field name '{}': expected [A-Za-z0-9_-]{{1,64}}", name));
    }
    // from_chars alone would accept "12abc" as 12, so require it to consume everything.
    unsigned bits = 0;
    auto [end, ec] = std::from_chars(bits_text.data(), bits_text.data() + bits_text.size(), bits);
    if (bits_text.empty() || ec != std::errc() || end != bits_text.data() + bits_text.size() ||
        bits < 1 || bits > 64) {
      return Status::InvalidArgument(
          fmt::format("bad width '{}' for counter field '{}': expected 1..64", bits_text, name));
    }
    for (const Field& f : schema.fields_) {
      if (f.name == name) {
        return Status::InvalidArgument(fmt::format("duplicate counter field '{}'", name));
      }
    }
    Field f;
    f.name = std::string(name);
    f.bits = bits;
    f.mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
    schema.fields_.push_back(std::move(f));
    schema.packed_bits_ += bits;
  }
  // Place each field. A word load is clamped to end at the slot's last byte; the id in
  // front guarantees a slot is at least 9 bytes, so the clamp never goes below zero.
  const size_t slot = schema.slot_bytes();
  size_t pos = kIdBytes * 8;
  for (Field& f : schema.fields_) {
    const size_t byte = pos / 8;
    if ((pos % 8) + f.bits > 64) {
      f.straddle = true;
      f.word = static_cast<uint32_t>(byte);
    } else {
      f.word = static_cast<uint32_t>(std::min(byte, slot - 8));
    }
    f.shift = static_cast<uint32_t>(pos - f.word * 8);
    pos += f.bits;
  }
  *out = std::move(schema);
  return Status::OK();
}

Status CounterSchema::ParseString(std::string_view specs, CounterSchema* out) {
  std::vector<std::string_view> parts;
  size_t i = 0;
  while (i < specs.size()) {
    while (i < specs.size() && IsSpace(specs[i])) ++i;
    size_t j = i;
    while (j < specs.size() && !IsSpace(specs[j])) ++j;
    if (j > i) parts.push_back(specs.substr(i, j - i));
    i = j;
  }
  return Parse(parts, out);
}

int CounterSchema::FieldIndex(std::string_view name) const {
  // At most 64 short names: a linear scan beats hashing here.
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

bool CounterSchema::operator==(const CounterSchema& o) const {
  if (fields_.size() != o.fields_.size()) return false;
  for (size_t i = 0; i < fields_.size(); ++i) {
    if (fields_[i].name != o.fields_[i].name || fields_[i].bits != o.fields_[i].bits) return false;
  }
  return true;
}

std::string CounterSchema::ToString() const {
  std::string s;
  for (const Field& f : fields_) {
    if (!s.empty()) s += ' ';
    s += fmt::format("{}:{}", f.name, f.bits);
  }
  return s;
}

bool CounterSchema::PaddingIsZero(const char* slot) const {
  const unsigned used_in_last = packed_bits_ % 8;
  if (used_in_last == 0) return true;
  const auto last = static_cast<unsigned char>(slot[slot_bytes() - 1]);
  return (last >> used_in_last) == 0;
}

}  // namespace feedkv
