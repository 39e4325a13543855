#include "storage/database.h"

#include <malloc.h>
#include <xxhash.h>

#include <cassert>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace feedkv {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kString: return "string";
    case ValueType::kSet: return "set";
  }
  return "none";
}

namespace {

constexpr size_t kMinBuckets = 16;

uint64_t HashKey(std::string_view key) { return XXH3_64bits(key.data(), key.size()); }

char* Payload(Entry* e) { return reinterpret_cast<char*>(e) + sizeof(Entry); }
const char* Payload(const Entry* e) { return reinterpret_cast<const char*>(e) + sizeof(Entry); }

// True if `s` is the canonical decimal form of an int64 (no sign on zero,
// no leading zeros, no '+'), so that storing it as an integer loses nothing.
bool IsCanonicalInt(std::string_view s, int64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  if (s[0] == '0' && s.size() > 1) return false;
  if (s[0] == '-' && (s.size() == 1 || s[1] == '0')) return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

Entry* AllocEntry(std::string_view key, int64_t expire_ms, ValueType type, uint8_t enc,
                  std::string_view embedded) {
  bool has_expire = expire_ms != kNoExpire;
  size_t size = sizeof(Entry) + (has_expire ? 8 : 0) + key.size() + embedded.size();
  auto* e = static_cast<Entry*>(std::malloc(size));
  if (e == nullptr) std::abort();
  e->next = nullptr;
  e->key_len = static_cast<uint32_t>(key.size());
  e->type = type;
  e->encoding = enc;
  e->has_expire = has_expire ? 1 : 0;
  e->reserved = 0;
  e->v.len = 0;
  char* p = Payload(e);
  if (has_expire) {
    std::memcpy(p, &expire_ms, 8);
    p += 8;
  }
  std::memcpy(p, key.data(), key.size());
  p += key.size();
  if (!embedded.empty()) std::memcpy(p, embedded.data(), embedded.size());
  return e;
}

void FreeValue(Entry* e) {
  if (e->encoding == kEncRaw) delete e->v.raw;
  if (e->encoding == kEncObject) delete e->v.obj;
}

// Builds a string entry by the one encoding rule: int if canonical, embedded
// if short, raw otherwise.
Entry* MakeStringEntry(std::string_view key, std::string_view value, int64_t expire_ms) {
  int64_t iv;
  if (IsCanonicalInt(value, &iv)) {
    Entry* e = AllocEntry(key, expire_ms, ValueType::kString, kEncInt, {});
    e->v.i = iv;
    return e;
  }
  if (value.size() <= kEmbedMax) {
    Entry* e = AllocEntry(key, expire_ms, ValueType::kString, kEncEmbedded, value);
    e->v.len = value.size();
    return e;
  }
  Entry* e = AllocEntry(key, expire_ms, ValueType::kString, kEncRaw, {});
  e->v.raw = new std::string(value);
  return e;
}

}  // namespace

std::string_view Entry::key() const {
  return std::string_view(Payload(this) + (has_expire ? 8 : 0), key_len);
}

int64_t Entry::expire_ms() const {
  assert(has_expire);
  int64_t ms;
  std::memcpy(&ms, Payload(this), 8);
  return ms;
}

size_t Database::EntryMemory(const Entry* e) {
  // malloc_usable_size + the allocator's 8-byte chunk header is what the
  // block really costs under glibc.
  size_t bytes = malloc_usable_size(const_cast<Entry*>(e)) + 8;
  if (e->encoding == kEncRaw) bytes += sizeof(std::string) + e->v.raw->capacity() + 1 + 16;
  if (e->encoding == kEncObject) bytes += e->v.obj->MemoryUsage();
  return bytes;
}

Database::Database(int index) : index_(index), buckets_(kMinBuckets, nullptr) {}

Database::~Database() { Clear(); }

Entry** Database::FindLink(std::string_view key, uint64_t hash) const {
  auto** link = const_cast<Entry**>(&buckets_[hash & (buckets_.size() - 1)]);
  while (*link != nullptr) {
    Entry* e = *link;
    if (e->key_len == key.size() && e->key() == key) return link;
    link = &e->next;
  }
  return link;
}

Entry* Database::Find(std::string_view key) const { return *FindLink(key, HashKey(key)); }

Entry* Database::Lookup(std::string_view key, int64_t now_ms) {
  Entry** link = FindLink(key, HashKey(key));
  Entry* e = *link;
  if (e != nullptr && e->has_expire && e->expire_ms() <= now_ms) {
    ExpireEntry(link);
    return nullptr;
  }
  return e;
}

void Database::ExpireEntry(Entry** link) {
  Entry* e = *link;
  if (expire_hook_) {
    std::string key(e->key());
    expire_hook_(*this, key);
  }
  RemoveLink(link);
}

Entry* Database::Replace(Entry** link, Entry* fresh) {
  Entry* old = *link;
  if (old != nullptr) {
    fresh->next = old->next;
    memory_ -= EntryMemory(old);
    if (old->has_expire) expires_--;
    FreeValue(old);
    std::free(old);
  } else {
    fresh->next = nullptr;
    size_++;
  }
  *link = fresh;
  memory_ += EntryMemory(fresh);
  if (fresh->has_expire) expires_++;
  if (old == nullptr) MaybeGrow();
  return fresh;
}

void Database::RemoveLink(Entry** link) {
  Entry* e = *link;
  *link = e->next;
  memory_ -= EntryMemory(e);
  if (e->has_expire) expires_--;
  size_--;
  FreeValue(e);
  std::free(e);
}

Entry* Database::SetString(std::string_view key, std::string_view value, int64_t expire_ms,
                           bool keep_ttl) {
  uint64_t h = HashKey(key);
  Entry** link = FindLink(key, h);
  if (keep_ttl && *link != nullptr && (*link)->has_expire) expire_ms = (*link)->expire_ms();
  // `value` may point into the old entry (APPEND, SETRANGE); build first.
  Entry* fresh = MakeStringEntry(key, value, expire_ms);
  return Replace(link, fresh);
}

Entry* Database::SetInteger(std::string_view key, int64_t value, int64_t expire_ms,
                            bool keep_ttl) {
  uint64_t h = HashKey(key);
  Entry** link = FindLink(key, h);
  Entry* e = *link;
  if (e != nullptr && e->type == ValueType::kString && e->encoding == kEncInt &&
      (keep_ttl || (!e->has_expire && expire_ms == kNoExpire))) {
    e->v.i = value;  // the common INCR path: no allocation
    return e;
  }
  if (keep_ttl && e != nullptr && e->has_expire) expire_ms = e->expire_ms();
  Entry* fresh = AllocEntry(key, expire_ms, ValueType::kString, kEncInt, {});
  fresh->v.i = value;
  return Replace(link, fresh);
}

std::string_view Database::StringValue(const Entry* e, std::string* scratch) {
  switch (e->encoding) {
    case kEncInt: {
      char buf[24];
      auto [ptr, ec] = std::to_chars(buf, buf + sizeof(buf), e->v.i);
      (void)ec;
      scratch->assign(buf, ptr);
      return *scratch;
    }
    case kEncEmbedded:
      return std::string_view(Payload(e) + (e->has_expire ? 8 : 0) + e->key_len, e->v.len);
    case kEncRaw:
      return *e->v.raw;
  }
  return {};
}

bool Database::StringAsInteger(const Entry* e, int64_t* out) {
  if (e->encoding == kEncInt) {
    *out = e->v.i;
    return true;
  }
  std::string scratch;
  std::string_view s = StringValue(e, &scratch);
  // Redis accepts only the strict form (string2ll): no spaces, no '+'.
  if (s.empty() || s.size() > 20 || s[0] == '+') return false;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), *out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

Entry* Database::SetObject(std::string_view key, std::unique_ptr<Object> obj, int64_t expire_ms,
                           bool keep_ttl) {
  Entry** link = FindLink(key, HashKey(key));
  if (keep_ttl && *link != nullptr && (*link)->has_expire) expire_ms = (*link)->expire_ms();
  Entry* fresh = AllocEntry(key, expire_ms, obj->type(), kEncObject, {});
  fresh->v.obj = obj.release();
  return Replace(link, fresh);
}

bool Database::Delete(std::string_view key) {
  Entry** link = FindLink(key, HashKey(key));
  if (*link == nullptr) return false;
  RemoveLink(link);
  return true;
}

void Database::SetExpire(std::string_view key, int64_t expire_ms) {
  Entry** link = FindLink(key, HashKey(key));
  Entry* old = *link;
  if (old == nullptr) return;
  if (!old->has_expire && expire_ms == kNoExpire) return;
  if (old->has_expire && expire_ms != kNoExpire) {
    std::memcpy(Payload(old), &expire_ms, 8);
    return;
  }
  // Adding or removing the expire changes the block's layout: rebuild it and
  // move the value over without copying its heap part.
  std::string_view embedded;
  if (old->encoding == kEncEmbedded) {
    embedded = std::string_view(Payload(old) + (old->has_expire ? 8 : 0) + old->key_len,
                                old->v.len);
  }
  Entry* fresh = AllocEntry(key, expire_ms, old->type, old->encoding, embedded);
  fresh->v = old->v;
  fresh->next = old->next;
  memory_ -= EntryMemory(old);
  if (old->has_expire) expires_--;
  std::free(old);  // value now belongs to `fresh`
  *link = fresh;
  memory_ += EntryMemory(fresh);
  if (fresh->has_expire) expires_++;
}

void Database::CopyKey(const Entry* e, Database* to, std::string_view new_key) const {
  int64_t expire = e->has_expire ? e->expire_ms() : kNoExpire;
  if (e->type == ValueType::kString) {
    std::string scratch;
    to->SetString(new_key, StringValue(e, &scratch), expire, false);
  } else {
    to->SetObject(new_key, e->v.obj->Clone(), expire, false);
  }
}

void Database::MoveKey(std::string_view key, Database* to, std::string_view new_key) {
  Entry** link = FindLink(key, HashKey(key));
  Entry* e = *link;
  assert(e != nullptr);
  if (to == this && key == new_key) return;
  int64_t expire = e->has_expire ? e->expire_ms() : kNoExpire;
  if (e->encoding == kEncObject) {
    // Transfer the object without a deep copy.
    std::unique_ptr<Object> obj(e->v.obj);
    e->encoding = kEncInt;  // detach so RemoveLink does not free it
    memory_ -= obj->MemoryUsage();
    RemoveLink(link);
    to->SetObject(new_key, std::move(obj), expire, false);
    return;
  }
  std::string scratch;
  std::string value(StringValue(e, &scratch));
  RemoveLink(link);
  to->SetString(new_key, value, expire, false);
}

void Database::Clear() {
  for (Entry*& head : buckets_) {
    while (head != nullptr) {
      Entry* next = head->next;
      FreeValue(head);
      std::free(head);
      head = next;
    }
  }
  buckets_.assign(kMinBuckets, nullptr);
  size_ = expires_ = memory_ = 0;
  expire_cursor_ = 0;
}

void Database::Swap(Database& other) {
  std::swap(buckets_, other.buckets_);
  std::swap(size_, other.size_);
  std::swap(expires_, other.expires_);
  std::swap(memory_, other.memory_);
  std::swap(expire_cursor_, other.expire_cursor_);
  std::swap(avg_ttl_ms_, other.avg_ttl_ms_);
}

void Database::MaybeGrow() {
  if (size_ > buckets_.size()) Resize(buckets_.size() * 2);
}

void Database::Resize(size_t nbuckets) {
  std::vector<Entry*> fresh(nbuckets, nullptr);
  for (Entry* head : buckets_) {
    while (head != nullptr) {
      Entry* next = head->next;
      Entry*& slot = fresh[HashKey(head->key()) & (nbuckets - 1)];
      head->next = slot;
      slot = head;
      head = next;
    }
  }
  buckets_.swap(fresh);
  expire_cursor_ &= nbuckets - 1;
}

namespace {
uint64_t Rev(uint64_t v) {
  v = ((v >> 1) & 0x5555555555555555ull) | ((v & 0x5555555555555555ull) << 1);
  v = ((v >> 2) & 0x3333333333333333ull) | ((v & 0x3333333333333333ull) << 2);
  v = ((v >> 4) & 0x0F0F0F0F0F0F0F0Full) | ((v & 0x0F0F0F0F0F0F0F0Full) << 4);
  v = ((v >> 8) & 0x00FF00FF00FF00FFull) | ((v & 0x00FF00FF00FF00FFull) << 8);
  v = ((v >> 16) & 0x0000FFFF0000FFFFull) | ((v & 0x0000FFFF0000FFFFull) << 16);
  return (v >> 32) | (v << 32);
}
}  // namespace

uint64_t Database::Scan(uint64_t cursor, size_t count,
                        const std::function<void(const Entry*)>& fn) const {
  const uint64_t mask = buckets_.size() - 1;
  size_t visited = 0;
  do {
    for (const Entry* e = buckets_[cursor & mask]; e != nullptr; e = e->next) fn(e);
    // Increment the reversed cursor: the high bits advance first, so a
    // resize between calls neither skips nor loses buckets.
    cursor |= ~mask;
    cursor = Rev(cursor);
    cursor++;
    cursor = Rev(cursor);
  } while (cursor != 0 && ++visited < count);
  return cursor;
}

void Database::ForEach(const std::function<void(const Entry*)>& fn) const {
  for (const Entry* head : buckets_) {
    for (const Entry* e = head; e != nullptr; e = e->next) fn(e);
  }
}

const Entry* Database::RandomEntry(uint64_t random) const {
  if (size_ == 0) return nullptr;
  // Pick a random non-empty bucket, then a random element of its chain.
  size_t n = buckets_.size();
  for (size_t tries = 0;; tries++) {
    const Entry* head = buckets_[(random + tries * 0x9E3779B97F4A7C15ull) & (n - 1)];
    if (head == nullptr) {
      random = random * 6364136223846793005ull + 1442695040888963407ull;
      continue;
    }
    size_t len = 0;
    for (const Entry* e = head; e != nullptr; e = e->next) len++;
    size_t pick = (random >> 33) % len;
    while (pick-- > 0) head = head->next;
    return head;
  }
}

size_t Database::ActiveExpireCycle(int64_t now_ms, size_t max_buckets) {
  if (expires_ == 0) return 0;
  size_t removed = 0;
  int64_t ttl_sum = 0, ttl_n = 0;
  for (size_t i = 0; i < max_buckets && expires_ > 0; i++) {
    size_t b = expire_cursor_;
    expire_cursor_ = (expire_cursor_ + 1) & (buckets_.size() - 1);
    Entry** link = &buckets_[b];
    while (*link != nullptr) {
      Entry* e = *link;
      if (e->has_expire) {
        int64_t when = e->expire_ms();
        if (when <= now_ms) {
          ExpireEntry(link);
          removed++;
          continue;
        }
        ttl_sum += when - now_ms;
        ttl_n++;
      }
      link = &e->next;
    }
  }
  if (ttl_n > 0) {
    int64_t avg = ttl_sum / ttl_n;
    // Smooth like Redis's stat: half the old estimate, half the new one.
    avg_ttl_ms_ = avg_ttl_ms_ == 0 ? avg : (avg_ttl_ms_ + avg) / 2;
  }
  if (expires_ == 0) avg_ttl_ms_ = 0;
  return removed;
}

}  // namespace feedkv
