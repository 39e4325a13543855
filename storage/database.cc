#include "storage/database.h"
#include "storage/int_text.h"

#include <malloc.h>

#include <algorithm>
#include <cassert>
#include <charconv>
#include <cstdlib>
#include <cstring>

namespace feedkv {

std::string_view ValueTypeName(ValueType t) {
  switch (t) {
    case ValueType::kString: return "string";
    case ValueType::kSet: return "set";
    case ValueType::kZset: return "zset";
    case ValueType::kFeed: return "feed";
    case ValueType::kHash: return "hash";
    case ValueType::kList: return "list";
    // RedisBloom's module type name, which TYPE and SCAN TYPE answer there.
    case ValueType::kBloom: return "MBbloom--";
    case ValueType::kStream: return "stream";
  }
  return "none";
}

namespace {

uint64_t HashKey(std::string_view key) { return KeyTable::Hash(key); }

char* Payload(Entry* e) { return reinterpret_cast<char*>(e) + sizeof(Entry); }
const char* Payload(const Entry* e) { return reinterpret_cast<const char*>(e) + sizeof(Entry); }

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
  e->access = 0;
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

// The bytes after the key: an embedded value, or an object's accounted size.
std::string_view TrailingBytes(const Entry* e) {
  const char* p = Payload(e) + (e->has_expire ? 8 : 0) + e->key_len;
  if (e->encoding == kEncEmbedded) return std::string_view(p, e->v.len);
  if (e->encoding == kEncObject) return std::string_view(p, sizeof(uint32_t));
  return {};
}

// An object's accounted size is kept in 4 bytes after the key, in 8-byte units
// (up to 32 GB, saturating): 4 bytes less per object key than a plain uint64.
// What is added to memory_ is always the stored figure, so adding and removing
// an object return exactly the same amount.
uint32_t AccountedUnits(uint64_t bytes) {
  const uint64_t units = (bytes + 7) / 8;
  return units > UINT32_MAX ? UINT32_MAX : static_cast<uint32_t>(units);
}

uint64_t ObjectAccounted(const Entry* e) {
  uint32_t units;
  std::memcpy(&units, TrailingBytes(e).data(), sizeof(units));
  return uint64_t{units} * 8;
}

void SetObjectAccounted(Entry* e, uint64_t bytes) {
  const uint32_t units = AccountedUnits(bytes);
  std::memcpy(const_cast<char*>(TrailingBytes(e).data()), &units, sizeof(units));
}

size_t BlockMemory(const Entry* e) {
  // malloc_usable_size + the allocator's 8-byte chunk header is what the
  // block really costs under glibc.
  size_t bytes = malloc_usable_size(const_cast<Entry*>(e)) + 8;
  if (e->encoding == kEncRaw) bytes += sizeof(std::string) + e->v.raw->capacity() + 1 + 16;
  return bytes;
}

void FreeValue(Entry* e) {
  if (e->encoding == kEncRaw) delete e->v.raw;
  if (e->encoding == kEncObject) delete e->v.obj;
}

void FreeEntry(Entry* e) {
  FreeValue(e);
  std::free(e);
}

// Builds a string entry by the one encoding rule: int if canonical, embedded
// if short, raw otherwise.
Entry* MakeStringEntry(std::string_view key, std::string_view value, int64_t expire_ms, bool int_encode) {
  int64_t iv;
  if (int_encode && ParseCanonicalInt64(value, &iv)) {
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
  size_t bytes = BlockMemory(e);
  if (e->encoding == kEncObject) bytes += e->v.obj->MemoryUsage();
  return bytes;
}

size_t Database::AccountedMemory(const Entry* e) {
  size_t bytes = BlockMemory(e);
  if (e->encoding == kEncObject) bytes += ObjectAccounted(e);
  return bytes;
}

void Database::UpdateObjectMemory(Entry* e) {
  if (e->encoding != kEncObject) return;
  memory_ -= ObjectAccounted(e);
  SetObjectAccounted(e, e->v.obj->MemoryUsage());
  memory_ += ObjectAccounted(e);
}

Database::Database(int index) : index_(index) {}

Database::~Database() { table_.Clear(FreeEntry); }

Entry** Database::LinkFor(std::string_view key) {
  table_.RehashStep();
  return table_.FindLink(key, HashKey(key));
}

Entry* Database::Find(std::string_view key) const { return table_.Find(key, HashKey(key)); }

void Database::Prefetch(std::span<const std::string_view> keys) const {
  uint64_t hashes[16];
  const size_t n = std::min<size_t>(keys.size(), 16);
  for (size_t i = 0; i < n; i++) {
    hashes[i] = HashKey(keys[i]);
    table_.PrefetchSlot(hashes[i]);
  }
  for (size_t i = 0; i < n; i++) table_.PrefetchChainHead(hashes[i]);
}

Entry* Database::Lookup(std::string_view key, int64_t now_ms) {
  Entry* e = Peek(key, now_ms);
  if (e != nullptr && clock_ != nullptr) e->access = clock_->Touch(e->access);
  return e;
}

Entry* Database::Peek(std::string_view key, int64_t now_ms) {
  Entry** link = LinkFor(key);
  Entry* e = *link;
  if (e != nullptr && e->has_expire && e->expire_ms() <= now_ms) {
    if (expired_keys_stay_) return nullptr;
    ExpireEntry(link);
    table_.MaybeResize(size_);
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
  // A new value is accessed now; under LFU it inherits the key's counter
  // (Redis's dbOverwrite keeps it).
  if (clock_ != nullptr) {
    fresh->access = old != nullptr && clock_->lfu() ? old->access : clock_->Fresh();
  }
  if (old != nullptr) {
    fresh->next = old->next;
    memory_ -= AccountedMemory(old);
    if (old->has_expire) expires_--;
    FreeValue(old);
    std::free(old);
  } else {
    fresh->next = nullptr;
    size_++;
  }
  *link = fresh;
  memory_ += AccountedMemory(fresh);
  if (fresh->has_expire) expires_++;
  if (old == nullptr) table_.MaybeResize(size_);  // after the last use of link
  if (old == nullptr && new_key_hook_) new_key_hook_(*this, fresh->key());
  return fresh;
}

void Database::RemoveLink(Entry** link) {
  Entry* e = *link;
  *link = e->next;
  memory_ -= AccountedMemory(e);
  if (e->has_expire) expires_--;
  size_--;
  FreeEntry(e);
}

Entry* Database::SetString(std::string_view key, std::string_view value, int64_t expire_ms,
                           bool keep_ttl, bool int_encode) {
  Entry** link = LinkFor(key);
  if (keep_ttl && *link != nullptr && (*link)->has_expire) expire_ms = (*link)->expire_ms();
  // `value` may point into the old entry (APPEND, SETRANGE); build first.
  Entry* fresh = MakeStringEntry(key, value, expire_ms, int_encode);
  return Replace(link, fresh);
}

Entry* Database::SetInteger(std::string_view key, int64_t value, int64_t expire_ms,
                            bool keep_ttl) {
  Entry** link = LinkFor(key);
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

std::string_view Database::StringValue(const Entry* e, char (&buf)[kIntBufSize]) {
  if (e->encoding == kEncInt) {
    auto [ptr, ec] = std::to_chars(buf, buf + kIntBufSize, e->v.i);
    (void)ec;
    return std::string_view(buf, static_cast<size_t>(ptr - buf));
  }
  if (e->encoding == kEncEmbedded) return TrailingBytes(e);
  if (e->encoding == kEncRaw) return *e->v.raw;
  return {};
}

bool Database::UpdateIntegerInPlace(Entry* e, int64_t value) {
  if (e->type != ValueType::kString || e->encoding != kEncInt) return false;
  e->v.i = value;
  return true;
}

Entry* Database::MakeRaw(Entry** link) {
  Entry* old = *link;
  if (old->encoding == kEncRaw) return old;
  char buf[kIntBufSize];
  auto* raw = new std::string(StringValue(old, buf));
  Entry* fresh = AllocEntry(old->key(), old->has_expire ? old->expire_ms() : kNoExpire,
                            ValueType::kString, kEncRaw, {});
  fresh->v.raw = raw;
  return Replace(link, fresh);
}

size_t Database::AppendString(std::string_view key, std::string_view tail) {
  Entry* e = MakeRaw(LinkFor(key));
  memory_ -= AccountedMemory(e);
  e->v.raw->append(tail);
  memory_ += AccountedMemory(e);
  return e->v.raw->size();
}

std::string* Database::StringBytesForWrite(std::string_view key, size_t min_len) {
  SetRange(key, min_len, {});
  return Find(key)->v.raw;
}

size_t Database::SetRange(std::string_view key, size_t offset, std::string_view data) {
  Entry* e = MakeRaw(LinkFor(key));
  std::string& s = *e->v.raw;
  memory_ -= AccountedMemory(e);
  if (s.size() < offset + data.size()) {
    // Redis 7 grows a string for SETRANGE / SETBIT to the exact size (sdsgrowzero is
    // non-greedy); a growth of less than an eighth takes an eighth more, so bits set
    // at increasing offsets stay amortised O(1) at no more than 12.5% slack.
    const size_t need = offset + data.size();
    if (s.capacity() < need) {
      // Into a fresh string: libstdc++'s reserve() on a non-empty string at least
      // doubles the capacity, which would cost a big bitmap up to 2x its bytes.
      std::string grown;
      grown.reserve(std::max(need, s.capacity() + s.capacity() / 8));
      grown.assign(s);
      s.swap(grown);
    }
    s.resize(offset + data.size(), '\0');
  }
  if (!data.empty()) std::memcpy(s.data() + offset, data.data(), data.size());
  memory_ += AccountedMemory(e);
  return s.size();
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
      return TrailingBytes(e);
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
  // Redis accepts only the canonical form (string2ll): no spaces, no '+',
  // no leading zeros, no "-0". Such a value is int-encoded unless APPEND or
  // SETRANGE made it raw.
  char buf[kIntBufSize];
  return ParseCanonicalInt64(StringValue(e, buf), out);
}

Entry* Database::SetObject(std::string_view key, std::unique_ptr<Object> obj, int64_t expire_ms,
                           bool keep_ttl) {
  Entry** link = LinkFor(key);
  if (keep_ttl && *link != nullptr && (*link)->has_expire) expire_ms = (*link)->expire_ms();
  const uint32_t accounted = AccountedUnits(obj->MemoryUsage());
  Entry* fresh = AllocEntry(key, expire_ms, obj->type(), kEncObject,
                            std::string_view(reinterpret_cast<const char*>(&accounted), sizeof(accounted)));
  fresh->v.obj = obj.release();
  return Replace(link, fresh);
}

bool Database::Delete(std::string_view key) {
  Entry** link = LinkFor(key);
  if (*link == nullptr) return false;
  RemoveLink(link);
  table_.MaybeResize(size_);
  return true;
}

bool Database::Delete(std::string_view key, std::unique_ptr<Object>* detached) {
  Entry** link = LinkFor(key);
  Entry* e = *link;
  if (e == nullptr) return false;
  *link = e->next;
  memory_ -= AccountedMemory(e);
  if (e->has_expire) expires_--;
  size_--;
  if (e->encoding == kEncObject) {
    detached->reset(e->v.obj);
    e->encoding = kEncInt;  // nothing left to free with the entry
  }
  FreeEntry(e);
  table_.MaybeResize(size_);
  return true;
}

void Database::SetExpire(std::string_view key, int64_t expire_ms) {
  Entry** link = LinkFor(key);
  Entry* old = *link;
  if (old == nullptr) return;
  if (!old->has_expire && expire_ms == kNoExpire) return;
  if (old->has_expire && expire_ms != kNoExpire) {
    std::memcpy(Payload(old), &expire_ms, 8);
    return;
  }
  // Adding or removing the expire changes the block's layout: rebuild it and
  // move the value over without copying its heap part.
  Entry* fresh = AllocEntry(key, expire_ms, old->type, old->encoding, TrailingBytes(old));
  fresh->v = old->v;
  fresh->access = old->access;
  fresh->next = old->next;
  memory_ -= AccountedMemory(old);
  if (old->has_expire) expires_--;
  std::free(old);  // value now belongs to `fresh`
  *link = fresh;
  memory_ += AccountedMemory(fresh);
  if (fresh->has_expire) expires_++;
}

void Database::CopyKey(const Entry* e, Database* to, std::string_view new_key) const {
  // Same encoding as the source (as Redis's dupStringObject keeps it).
  int64_t expire = e->has_expire ? e->expire_ms() : kNoExpire;
  Entry* fresh = AllocEntry(new_key, expire, e->type, e->encoding, TrailingBytes(e));
  fresh->v = e->v;
  if (e->encoding == kEncRaw) fresh->v.raw = new std::string(*e->v.raw);
  if (e->encoding == kEncObject) {
    fresh->v.obj = e->v.obj->Clone().release();
    SetObjectAccounted(fresh, fresh->v.obj->MemoryUsage());
  }
  Entry* placed = to->Replace(to->LinkFor(new_key), fresh);
  if (to->clock_ != nullptr) placed->access = to->clock_->Fresh();  // a new object, as Redis's COPY
}

void Database::MoveKey(std::string_view key, Database* to, std::string_view new_key) {
  Entry** link = LinkFor(key);
  Entry* e = *link;
  assert(e != nullptr);
  if (to == this && key == new_key) return;
  // Rebuild the block under the new name and hand the value over: no deep
  // copy, and the encoding is kept (a raw string stays raw, as in Redis).
  int64_t expire = e->has_expire ? e->expire_ms() : kNoExpire;
  Entry* fresh = AllocEntry(new_key, expire, e->type, e->encoding, TrailingBytes(e));
  fresh->v = e->v;
  const uint32_t stamp = e->access;  // the same object under a new name
  *link = e->next;
  memory_ -= AccountedMemory(e);
  if (e->has_expire) expires_--;
  size_--;
  std::free(e);  // the value now belongs to `fresh`
  to->Replace(to->LinkFor(new_key), fresh)->access = stamp;
  table_.MaybeResize(size_);
}

void Database::Clear() {
  table_.Clear(FreeEntry);
  size_ = expires_ = memory_ = 0;
  expire_cursor_ = 0;
}

std::unique_ptr<KeyTable> Database::DetachAll() {
  auto detached = std::make_unique<KeyTable>();
  table_.Swap(*detached);
  size_ = expires_ = memory_ = 0;
  expire_cursor_ = 0;
  return detached;
}

void Database::FreeEntries(KeyTable* table) { table->Clear(FreeEntry); }

void Database::Swap(Database& other) {
  table_.Swap(other.table_);
  std::swap(size_, other.size_);
  std::swap(expires_, other.expires_);
  std::swap(memory_, other.memory_);
  std::swap(expire_cursor_, other.expire_cursor_);
  std::swap(avg_ttl_ms_, other.avg_ttl_ms_);
}

uint64_t Database::Scan(uint64_t cursor, size_t count,
                        const std::function<void(const Entry*)>& fn) const {
  size_t visited = 0;
  do {
    cursor = table_.ScanStep(cursor, [&](Entry** head) {
      for (const Entry* e = *head; e != nullptr; e = e->next) fn(e);
    });
  } while (cursor != 0 && ++visited < count);
  return cursor;
}

void Database::ForEach(const std::function<void(const Entry*)>& fn) const {
  table_.ForEachHead([&](const Entry* head) {
    for (const Entry* e = head; e != nullptr; e = e->next) fn(e);
  });
}

const Entry* Database::RandomEntry(uint64_t random) const {
  return size_ == 0 ? nullptr : table_.Random(random);
}

void Database::Sample(uint64_t seed, size_t count, bool with_expire_only,
                      std::vector<const Entry*>* out) const {
  const size_t pool = with_expire_only ? expires_ : size_;
  if (pool == 0 || count == 0) return;
  // Ten buckets per wanted key, as Redis; more when keys with an expire are a
  // minority, up to a bound that keeps one sample cheap.
  size_t buckets = count * 10;
  if (with_expire_only) buckets *= std::min<size_t>(64, size_ / pool + 1);
  const size_t limit = out->size() + std::min(count, pool);
  table_.SampleBuckets(seed, buckets, [&](Entry* head) {
    for (const Entry* e = head; e != nullptr && out->size() < limit; e = e->next) {
      if (!with_expire_only || e->has_expire) out->push_back(e);
    }
    return out->size() < limit;
  });
}

bool Database::IncrementalRehash(int64_t budget_us) {
  table_.MaybeResize(size_);
  return table_.RehashFor(budget_us);
}

size_t Database::ActiveExpireCycle(int64_t now_ms, size_t max_buckets, int64_t rehash_us) {
  size_t removed = ExpireBuckets(now_ms, max_buckets);
  IncrementalRehash(rehash_us);
  return removed;
}

size_t Database::ExpireBuckets(int64_t now_ms, size_t max_buckets) {
  if (expires_ == 0) return 0;
  size_t removed = 0, visited = 0;
  int64_t ttl_sum = 0, ttl_n = 0;
  // A SCAN cursor rather than a bucket index, so that the walk covers every
  // bucket even when the table resizes or is mid-rehash between cron ticks.
  // No rehash step or resize may run inside the walk: it holds links.
  auto expire_bucket = [&](Entry** link) {
    visited++;
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
  };
  do {
    expire_cursor_ = table_.ScanStep(expire_cursor_, expire_bucket);
  } while (expire_cursor_ != 0 && visited < max_buckets && expires_ > 0);
  if (ttl_n > 0) {
    int64_t avg = ttl_sum / ttl_n;
    // Smooth like Redis's stat: half the old estimate, half the new one.
    avg_ttl_ms_ = avg_ttl_ms_ == 0 ? avg : (avg_ttl_ms_ + avg) / 2;
  }
  if (expires_ == 0) avg_ttl_ms_ = 0;
  return removed;
}

}  // namespace feedkv
