// HashValue. See hash_value.h for the encodings.
#include "storage/hash_value.h"

#include <cstdlib>
#include <cstring>
#include <new>

#include "storage/hash_order_scan.h"
#include "storage/varint.h"

namespace feedkv {

namespace {

using block_index::ChunkBytes;

constexpr char kTagListpack = 0;
constexpr char kTagHashtable = 1;

char* NewItem(std::string_view field, std::string_view value) {
  char* p = block_index::AllocBlock(hash_item::Size(field, value));
  hash_item::Write(p, field, value);
  return p;
}

uint64_t ScanKey(const HashField& f) { return XXH3_64bits(f.first.data(), f.first.size()); }

}  // namespace

static_assert(sizeof(void*) != 8 || sizeof(HashValue) == 24, "a hash key's object must stay one 32-byte malloc chunk");

HashValue::~HashValue() {
  if (is_table()) {
    delete table_;
  } else {
    std::free(buf_);
  }
}

std::unique_ptr<HashValue> HashValue::Create(size_t size_hint, size_t max_len, const HashLimits& limits) {
  auto h = std::make_unique<HashValue>();
  if (size_hint > limits.max_listpack_entries || max_len > limits.max_listpack_value) h->ConvertToHashtable();
  return h;
}

size_t HashValue::MemoryUsage() const {
  size_t n = ChunkBytes(sizeof(HashValue));
  if (is_table()) {
    n += ChunkBytes(sizeof(Index)) + table_->MemoryUsage();
  } else if (buf_ != nullptr) {
    n += ChunkBytes(bytes_);
  }
  return n;
}

std::unique_ptr<Object> HashValue::Clone() const {
  auto h = std::make_unique<HashValue>();
  if (is_table()) {
    h->ConvertToHashtable();
    ForEach([&](std::string_view f, std::string_view v) { h->table_->Insert(NewItem(f, v)); });
  } else if (bytes_ > 0) {
    h->buf_ = static_cast<char*>(std::malloc(bytes_));
    if (h->buf_ == nullptr) throw std::bad_alloc();
    std::memcpy(h->buf_, buf_, bytes_);
    h->bytes_ = bytes_;
    h->count_ = count_;
  }
  return h;
}

void HashValue::SerializeTo(std::string* out) const {
  out->push_back(is_table() ? kTagHashtable : kTagListpack);
  PutVarint(out, size());
  ForEach([&](std::string_view f, std::string_view v) {
    PutVarint(out, f.size());
    out->append(f);
    PutVarint(out, v.size());
    out->append(v);
  });
}

uint64_t HashValue::Digest() const {
  uint64_t sum = 0;
  ForEach([&](std::string_view f, std::string_view v) {
    sum += XXH64(v.data(), v.size(), XXH64(f.data(), f.size(), 0x68617368));
  });
  return sum;
}

Status HashValue::Decode(std::string_view in, std::unique_ptr<HashValue>* out) {
  out->reset();
  if (in.empty() || (in[0] != kTagListpack && in[0] != kTagHashtable)) {
    return Status::Corruption("hash: bad encoding tag");
  }
  const bool table = in[0] == kTagHashtable;
  in.remove_prefix(1);
  uint64_t count;
  if (!GetVarint(&in, &count) || count == 0 || count > in.size() / 2) {
    return Status::Corruption("hash: bad field count");
  }
  auto h = std::make_unique<HashValue>();
  // A listpack never holds thousands of fields; a longer one (a corrupt or crafted
  // file) is built as a table so loading stays linear.
  if (table || count > 4096) h->ConvertToHashtable();
  // Limits that never convert: the encoding is the one recorded.
  const HashLimits keep{SIZE_MAX, SIZE_MAX};
  for (uint64_t i = 0; i < count; ++i) {
    std::string_view parts[2];
    for (std::string_view& part : parts) {
      uint64_t len;
      if (!GetVarint(&in, &len) || len > in.size() || len > UINT32_MAX) {
        return Status::Corruption("hash: bad string length");
      }
      part = in.substr(0, len);
      in.remove_prefix(len);
    }
    if (!h->Set(parts[0], parts[1], keep)) return Status::Corruption("hash: duplicate field");
  }
  if (!in.empty()) return Status::Corruption("hash: trailing bytes");
  *out = std::move(h);
  return Status::OK();
}

size_t HashValue::ListFind(std::string_view field) const {
  for (const char* p = buf_; p < buf_ + bytes_;) {
    const char* item = p;
    const std::string_view f = hash_item::ReadString(p, &p);
    hash_item::ReadString(p, &p);
    if (f == field) return static_cast<size_t>(item - buf_);
  }
  return bytes_;
}

bool HashValue::Get(std::string_view field, std::string_view* value) const {
  if (is_table()) {
    const char* item = table_->Find(field);
    if (item == nullptr) return false;
    *value = hash_item::Value(item);
    return true;
  }
  const size_t off = ListFind(field);
  if (off == bytes_) return false;
  *value = hash_item::Value(buf_ + off);
  return true;
}

bool HashValue::Set(std::string_view field, std::string_view value, const HashLimits& limits) {
  if (!is_table() && (count_ + 1 > limits.max_listpack_entries || field.size() > limits.max_listpack_value ||
                  value.size() > limits.max_listpack_value)) {
    // A new field past the entry limit, or a long string: convert first. (An
    // update of an existing field in a full listpack does not convert, as Redis.)
    if (field.size() > limits.max_listpack_value || value.size() > limits.max_listpack_value ||
        ListFind(field) == bytes_) {
      ConvertToHashtable();
    }
  }
  if (is_table()) {
    char* old = table_->Find(field);
    char* item = NewItem(field, value);
    if (old == nullptr) {
      table_->Insert(item);
      return true;
    }
    std::free(table_->Replace(item));
    return false;
  }
  const size_t need = hash_item::Size(field, value);
  const size_t off = ListFind(field);
  if (off == bytes_) {
    auto* grown = static_cast<char*>(std::realloc(buf_, bytes_ + need));
    if (grown == nullptr) throw std::bad_alloc();
    buf_ = grown;
    hash_item::Write(buf_ + bytes_, field, value);
    bytes_ += static_cast<uint32_t>(need);
    ++count_;
    return true;
  }
  // In place: the item keeps its position (insertion order), the tail moves.
  const size_t old_size = hash_item::ItemSize(buf_ + off);
  const size_t tail = bytes_ - off - old_size;
  if (need > old_size) {
    auto* grown = static_cast<char*>(std::realloc(buf_, bytes_ + need - old_size));
    if (grown == nullptr) throw std::bad_alloc();
    buf_ = grown;
  }
  std::memmove(buf_ + off + need, buf_ + off + old_size, tail);
  hash_item::Write(buf_ + off, field, value);
  bytes_ = static_cast<uint32_t>(bytes_ + need - old_size);
  return false;
}

bool HashValue::Remove(std::string_view field) {
  if (is_table()) {
    char* item = table_->Remove(field);
    std::free(item);
    return item != nullptr;
  }
  const size_t off = ListFind(field);
  if (off == bytes_) return false;
  const size_t n = hash_item::ItemSize(buf_ + off);
  std::memmove(buf_ + off, buf_ + off + n, bytes_ - off - n);
  bytes_ -= static_cast<uint32_t>(n);
  --count_;
  if (count_ == 0) {
    std::free(buf_);
    buf_ = nullptr;
  }
  return true;
}

HashField HashValue::Random(uint64_t random) const {
  if (is_table()) {
    const char* item = table_->Random(random);
    return {hash_item::Field(item), hash_item::Value(item)};
  }
  uint64_t skip = random % count_;
  HashField picked;
  ForEach([&](std::string_view f, std::string_view v) {
    if (skip-- == 0) picked = {f, v};
  });
  return picked;
}

uint64_t HashValue::Scan(uint64_t cursor, size_t count, std::vector<HashField>* out) const {
  out->clear();
  if (!is_table()) {
    ForEach([&](std::string_view f, std::string_view v) { out->emplace_back(f, v); });
    return 0;
  }
  return HashOrderScan(
      size(), cursor, count,
      [&](auto f) { ForEach([&](std::string_view k, std::string_view v) { f(HashField{k, v}); }); },
      ScanKey, out);
}

void HashValue::ConvertToHashtable() {
  if (is_table()) return;
  auto t = std::make_unique<Index>();
  ForEach([&](std::string_view f, std::string_view v) { t->Insert(NewItem(f, v)); });
  std::free(buf_);
  table_ = t.release();
  bytes_ = 0;
  count_ = kTable;
}

}  // namespace feedkv
