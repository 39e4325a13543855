#include "server/eviction.h"

#include <boost/asio/post.hpp>
#include <cmath>
#include <fmt/format.h>
#include <limits>

#include "server/monotonic_clock.h"
#include "server/server.h"
#include "storage/database.h"

namespace feedkv::server {

namespace {

enum class Policy { kNoEviction, kLru, kLfu, kTtl, kRandom };

struct PolicyOf {
  Policy kind;
  bool volatile_only;  // only keys with an expire may go
};

PolicyOf ParsePolicy(std::string_view name) {
  const bool vol = name.starts_with("volatile-");
  if (name.ends_with("-lru")) return {Policy::kLru, vol};
  if (name.ends_with("-lfu")) return {Policy::kLfu, vol};
  if (name.ends_with("-random")) return {Policy::kRandom, vol};
  if (name == "volatile-ttl") return {Policy::kTtl, true};
  return {Policy::kNoEviction, false};
}

// A candidate's score under `policy` (higher: a better victim). The policy
// is parsed once per round, not per sampled key.
uint64_t Score(Policy policy, const Database& d, const Entry* e) {
  switch (policy) {
    case Policy::kLru: return d.IdleMs(e);
    case Policy::kLfu: return 255 - std::min<uint32_t>(255, d.Frequency(e));
    case Policy::kTtl: return std::numeric_limits<uint64_t>::max() - static_cast<uint64_t>(e->expire_ms());
    default: return 0;
  }
}

}  // namespace

bool Evictor::OverLimit(size_t* to_free) const {
  const auto limit = static_cast<size_t>(server_.cfg().maxmemory);
  const size_t used = server_.UsedMemory();
  if (limit == 0 || used <= limit) return false;
  *to_free = used - limit;
  return true;
}

bool Evictor::SafeToEvict() const {
  // As Redis's isSafeToPerformEvictions: not while loading, and not while
  // clients are paused, so that a paused dataset holds still.
  return !server_.loading() && !server_.clients_paused();
}

uint64_t Evictor::TimeLimitUs() const {
  const int64_t t = server_.cfg().maxmemory_eviction_tenacity;
  // Redis's evictionTimeLimitUs: linear to 500 us at 10, then +15% a step
  // (about two minutes at 99), and no limit at 100.
  if (t <= 10) return 50 * static_cast<uint64_t>(t);
  if (t < 100) return static_cast<uint64_t>(500.0 * std::pow(1.15, static_cast<double>(t) - 10.0));
  return std::numeric_limits<uint64_t>::max();
}


void Evictor::Gather(int i, size_t count, bool volatile_only) {
  Database& d = server_.db(i);
  sample_.clear();
  d.Sample(server_.Random(), count, volatile_only, &sample_);
  if (!sample_.empty()) return;
  // A sparse table (or rare keys with an expire) defeats the bounded sample:
  // go on scanning from where the last scan of this database stopped, until
  // something turns up or the whole table has been seen once.
  if (scan_cursors_.size() < static_cast<size_t>(server_.num_dbs())) {
    scan_cursors_.resize(static_cast<size_t>(server_.num_dbs()), 0);
  }
  uint64_t& cursor = scan_cursors_[static_cast<size_t>(i)];
  constexpr size_t kScanBuckets = 1024;
  const size_t passes = d.bucket_count() / kScanBuckets + 2;
  for (size_t n = 0; n < passes && sample_.empty(); n++) {
    cursor = d.Scan(cursor, kScanBuckets, [&](const Entry* e) {
      if (sample_.size() < count && (!volatile_only || e->has_expire)) sample_.push_back(e);
    });
  }
}

bool Evictor::PickRandom(bool volatile_only, int* db, std::string* key) {
  const int n = server_.num_dbs();
  for (int tried = 0; tried < n; tried++) {
    const int i = next_random_db_;
    next_random_db_ = (next_random_db_ + 1) % n;
    Database& d = server_.db(i);
    if ((volatile_only ? d.expires_count() : d.size()) == 0) continue;
    const Entry* e = nullptr;
    if (!volatile_only) {
      e = d.RandomEntry(server_.Random());
    } else {
      Gather(i, 1, true);
      if (!sample_.empty()) e = sample_[0];
    }
    if (e == nullptr) continue;
    *db = i;
    key->assign(e->key());
    return true;
  }
  return false;
}

bool Evictor::PickVictim(int* db, std::string* key) {
  const PolicyOf policy = ParsePolicy(server_.cfg().maxmemory_policy);
  if (policy.kind == Policy::kRandom) return PickRandom(policy.volatile_only, db, key);
  const auto samples = static_cast<size_t>(server_.cfg().maxmemory_samples);
  // Each round samples every database that holds candidates into the pool,
  // then takes the pool's best that still exists. A round finds a victim
  // whenever one exists (Gather returns live keys); the bound is a safety net.
  for (int round = 0; round < 64; round++) {
    size_t candidates = 0;
    for (int i = 0; i < server_.num_dbs(); i++) {
      Database& d = server_.db(i);
      const size_t pool = policy.volatile_only ? d.expires_count() : d.size();
      if (pool == 0) continue;
      candidates += pool;
      Gather(i, samples, policy.volatile_only);
      for (const Entry* e : sample_) pool_.Offer(Score(policy.kind, d, e), i, e->key());
    }
    if (candidates == 0) return false;
    while (pool_.PopBest(db, key)) {
      const Entry* e = server_.db(*db).Find(*key);
      // Gone or changed since it was pooled (a ghost): try the next best.
      if (e != nullptr && (!policy.volatile_only || e->has_expire)) return true;
    }
  }
  return false;
}

Evictor::Result Evictor::Perform() {
  Result result = Result::kOk;
  size_t to_free = 0;
  if (!SafeToEvict() || !OverLimit(&to_free)) {
    UpdateExceeded(Result::kOk);
    return Result::kOk;
  }
  if (ParsePolicy(server_.cfg().maxmemory_policy).kind == Policy::kNoEviction) {
    UpdateExceeded(Result::kFail);
    return Result::kFail;
  }
  const int64_t start = MonotonicClock::NowUs();
  const uint64_t limit_us = TimeLimitUs();
  size_t freed = 0;
  uint64_t keys = 0;
  Server::ChangeBatch batch(server_);  // the DELs of one run log as one batch
  int db = 0;
  std::string key;
  while (freed < to_free) {
    if (!PickVictim(&db, &key)) {
      result = Result::kFail;
      break;
    }
    const size_t before = server_.UsedMemory();
    server_.EvictKey(db, key);
    const size_t after = server_.UsedMemory();
    freed += before > after ? before - after : 0;
    evicted_keys_++;
    // Every 16 keys: past the time box, continue from the event loop.
    if (++keys % 16 == 0 &&
        static_cast<uint64_t>(MonotonicClock::NowUs() - start) > limit_us) {
      StartBackground();
      break;
    }
  }
  if (result != Result::kFail && background_) result = Result::kRunning;
  UpdateExceeded(result);
  return result;
}

void Evictor::StartBackground() {
  if (background_) return;
  background_ = true;
  // As Redis's evictionTimeProc: keep evicting between the event loop's other
  // work until under the limit (or nothing can go).
  struct Step {
    Evictor* self;
    void operator()() const {
      self->background_ = false;
      self->Perform();  // posts the next step while it stays kRunning
    }
  };
  boost::asio::post(server_.io(), Step{this});
}

void Evictor::OnLimitChanged() {
  size_t to_free = 0;
  if (OverLimit(&to_free)) {
    server_.Log(3, fmt::format("WARNING: the new maxmemory value set via CONFIG SET ({}) is smaller "
                               "than the current memory usage ({}). This will result in key "
                               "eviction and/or the inability to accept new write commands "
                               "depending on the maxmemory-policy.",
                               server_.cfg().maxmemory, server_.UsedMemory()));
    StartBackground();
  }
  pool_.Clear();  // scores under another policy do not compare
}

void Evictor::UpdateExceeded(Result r) {
  if (r == Result::kOk) {
    if (exceeded_since_us_ != 0) {
      total_exceeded_us_ += static_cast<uint64_t>(MonotonicClock::NowUs() - exceeded_since_us_);
      exceeded_since_us_ = 0;
    }
  } else if (exceeded_since_us_ == 0) {
    exceeded_since_us_ = MonotonicClock::NowUs();
  }
}

uint64_t Evictor::current_exceeded_ms() const {
  return exceeded_since_us_ == 0
             ? 0
             : static_cast<uint64_t>(MonotonicClock::NowUs() - exceeded_since_us_) / 1000;
}

uint64_t Evictor::total_exceeded_ms() const {
  const uint64_t current =
      exceeded_since_us_ == 0 ? 0 : static_cast<uint64_t>(MonotonicClock::NowUs() - exceeded_since_us_);
  return (total_exceeded_us_ + current) / 1000;
}

void Evictor::ResetStats() {
  evicted_keys_ = 0;
  total_exceeded_us_ = 0;
  exceeded_since_us_ = 0;
}

}  // namespace feedkv::server
