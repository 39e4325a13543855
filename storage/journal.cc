#include "storage/journal.h"

#include <algorithm>

#include <fmt/format.h>

#include "storage/aof_format.h"
#include "storage/aof_reader.h"
#include "storage/set_value.h"  // ParseCanonicalInt64

namespace feedkv {

namespace {

bool IsWord(std::string_view s, std::string_view upper) {
  if (s.size() != upper.size()) return false;
  for (size_t i = 0; i < s.size(); i++) {
    char c = s[i];
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
    if (c != upper[i]) return false;
  }
  return true;
}

size_t Digits(uint64_t v) {
  size_t n = 1;
  while (v >= 10) {
    v /= 10;
    n++;
  }
  return n;
}

// The size aof::AppendCommand would append for `argv`.
template <typename T>
uint64_t RespSize(std::span<const T> argv) {
  uint64_t n = 1 + Digits(argv.size()) + 2;
  for (const auto& a : argv) n += 1 + Digits(a.size()) + 2 + a.size() + 2;
  return n;
}

// Appends one command, or only counts it when `out` is null.
template <typename T>
uint64_t Emit(std::string* out, std::span<const T> argv) {
  if (out == nullptr) return RespSize<T>(argv);
  const size_t before = out->size();
  aof::AppendCommand(out, argv);
  return out->size() - before;
}

}  // namespace

void Journal::AddConsumer(JournalConsumer* c) {
  Seal();
  consumers_.push_back(c);
}

void Journal::RemoveConsumer(JournalConsumer* c) {
  Seal();
  consumers_.erase(std::remove(consumers_.begin(), consumers_.end(), c), consumers_.end());
}

void Journal::OpenBatch(int db, size_t commands, std::string* out) {
  if (db != selected_db_) {
    const std::string dbs = std::to_string(db);
    const std::string_view sel[] = {"SELECT", dbs};
    open_size_ += Emit(out, std::span<const std::string_view>(sel));
    selected_db_ = db;
  }
  static const std::string_view kMulti[] = {"MULTI"};
  if (commands > 1) open_size_ += Emit(out, std::span<const std::string_view>(kMulti));
}

void Journal::CloseBatch(size_t commands, std::string* out) {
  static const std::string_view kExec[] = {"EXEC"};
  if (commands > 1) open_size_ += Emit(out, std::span<const std::string_view>(kExec));
  // Bounds memory and the latency of one write; a batch is never split.
  if (open_size_ >= aof::kMaxGroupBytes) Seal();
}

void Journal::AppendBatch(int db, std::span<const std::vector<std::string>> cmds) {
  if (cmds.empty()) return;
  std::string* out = consumers_.empty() ? nullptr : &group_;
  OpenBatch(db, cmds.size(), out);
  for (const auto& c : cmds) open_size_ += Emit(out, std::span<const std::string>(c));
  CloseBatch(cmds.size(), out);
}

uint64_t Journal::EncodedSize(std::span<const std::string_view> argv) {
  return RespSize<std::string_view>(argv);
}

uint64_t Journal::EncodedSize(std::span<const std::string> argv) {
  return RespSize<std::string>(argv);
}

void Journal::CountBatch(int db, size_t commands, uint64_t command_bytes) {
  if (commands == 0) return;
  OpenBatch(db, commands, nullptr);
  open_size_ += command_bytes;
  CloseBatch(commands, nullptr);
}

uint64_t Journal::end_offset() const {
  return open_size_ == 0 ? sealed_ : sealed_ + open_size_ + aof::kTrailerSize;
}

uint64_t Journal::Seal() {
  if (open_size_ == 0) return sealed_;
  const uint64_t size = open_size_ + aof::kTrailerSize;
  open_size_ = 0;
  groups_sealed_++;
  // Every group opens with SELECT: a reader may start at any group boundary
  // (a replica continuing from its own end) and know the database.
  selected_db_ = -1;
  if (group_.empty()) {  // counted only: nobody consumes the bytes
    sealed_ += size;
    return sealed_;
  }
  aof::AppendTrailer(&group_, group_);
  JournalGroup g{sealed_, std::make_shared<const std::string>(std::move(group_))};
  group_ = std::string();
  sealed_ = g.end();
  for (JournalConsumer* c : consumers_) c->OnGroup(g);
  return sealed_;
}

uint64_t Journal::AppendSealed(std::shared_ptr<const std::string> bytes) {
  Seal();
  if (bytes->empty()) return sealed_;
  JournalGroup g{sealed_, std::move(bytes)};
  sealed_ = g.end();
  groups_sealed_++;
  // Whatever database those bytes left selected, our next group says its own.
  selected_db_ = -1;
  for (JournalConsumer* c : consumers_) c->OnGroup(g);
  return sealed_;
}

void Journal::ResetOffset(uint64_t offset) {
  group_.clear();
  open_size_ = 0;
  sealed_ = offset;
  selected_db_ = -1;
}

Status JournalDecoder::Feed(const Argv& argv, std::string_view where) {
  if (argv.empty()) return Status::Corruption(fmt::format("empty record at {}", where));
  std::string_view name = argv[0];
  if (IsWord(name, "SELECT")) {
    int64_t db = -1;
    if (argv.size() != 2 || in_multi_ || !ParseCanonicalInt64(argv[1], &db) || db < 0 ||
        db >= num_dbs_) {
      return Status::Corruption(fmt::format("bad SELECT at {}", where));
    }
    db_ = static_cast<int>(db);
    return Status::OK();
  }
  if (IsWord(name, "MULTI")) {
    if (argv.size() != 1 || in_multi_) return Status::Corruption(fmt::format("nested MULTI at {}", where));
    in_multi_ = true;
    batch_.clear();
    return Status::OK();
  }
  if (IsWord(name, "EXEC")) {
    if (argv.size() != 1 || !in_multi_) {
      return Status::Corruption(fmt::format("EXEC without MULTI at {}", where));
    }
    in_multi_ = false;
    Status s = apply_(db_, batch_);
    batch_.clear();
    return s;
  }
  if (in_multi_) {
    batch_.push_back(argv);
    return Status::OK();
  }
  return apply_(db_, std::span<const Argv>(&argv, 1));
}

Status JournalDecoder::EndGroup(std::string_view where) {
  if (!in_multi_) return Status::OK();
  in_multi_ = false;
  batch_.clear();
  return Status::Corruption(fmt::format("MULTI without EXEC in the group at {}", where));
}

Status JournalDecoder::FeedGroups(std::string_view bytes, std::string_view where) {
  aof::ScanResult r;
  Status s = aof::ScanSegment(bytes, 0,
                              [&](const aof::Group& g) {
                                for (const auto& rec : g.records) {
                                  Status fs = Feed(rec.argv, where);
                                  if (!fs.ok()) return fs;
                                }
                                return EndGroup(where);
                              },
                              &r);
  if (!s.ok()) return s;
  if (r.end != aof::ScanEnd::kClean) {
    return Status::Corruption(fmt::format("damaged journal bytes at {}: {}", where, r.error));
  }
  return Status::OK();
}

}  // namespace feedkv
