#include "storage/rdb_stream.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <stdexcept>

namespace feedkv::rdb {

namespace {
constexpr size_t kBufSize = 1 << 20;
}

// --- RdbSink ---

RdbSink::RdbSink(WritableFile* file) : file_(file) {
  file_hash_ = XXH64_createState();
  section_hash_ = XXH64_createState();
  XXH64_reset(file_hash_, 0);
  XXH64_reset(section_hash_, 0);
  buf_.reserve(kBufSize);
}

RdbSink::RdbSink(std::string* out) : RdbSink(static_cast<WritableFile*>(nullptr)) { out_ = out; }

RdbSink::~RdbSink() {
  XXH64_freeState(file_hash_);
  XXH64_freeState(section_hash_);
}

void RdbSink::Write(const void* p, size_t n) {
  buf_.append(static_cast<const char*>(p), n);
  if (buf_.size() >= kBufSize) Flush();
}

void RdbSink::PutFixed32(uint32_t v) {
  char b[4];
  for (int i = 0; i < 4; i++) b[i] = static_cast<char>(v >> (8 * i));
  Write(b, 4);
}

void RdbSink::PutFixed64(uint64_t v) {
  char b[8];
  for (int i = 0; i < 8; i++) b[i] = static_cast<char>(v >> (8 * i));
  Write(b, 8);
}

void RdbSink::PutVarint(uint64_t v) {
  char b[10];
  int n = 0;
  while (v >= 0x80) {
    b[n++] = static_cast<char>((v & 0x7f) | 0x80);
    v >>= 7;
  }
  b[n++] = static_cast<char>(v);
  Write(b, static_cast<size_t>(n));
}

void RdbSink::PutBlob(std::string_view blob, bool compress) {
  constexpr size_t kMinCompress = 4096;
  constexpr size_t kMinZeroRun = 32;
  if (!compress || blob.size() < kMinCompress) {
    PutU8(0);
    PutString(blob);
    return;
  }
  PutU8(1);
  PutVarint(blob.size());
  size_t i = 0;
  const char* p = blob.data();
  while (i < blob.size()) {
    // Literal: up to the next run of >= kMinZeroRun zeros.
    size_t lit_start = i, run_start = blob.size();
    size_t j = i;
    while (j < blob.size()) {
      if (p[j] != 0) {
        j++;
        continue;
      }
      size_t k = j;
      while (k < blob.size() && p[k] == 0 && k - j < kMinZeroRun) k++;
      if (k - j >= kMinZeroRun || k == blob.size()) {
        run_start = j;
        break;
      }
      j = k;
    }
    size_t run_end = run_start;
    while (run_end + 8 <= blob.size()) {
      uint64_t w;
      std::memcpy(&w, p + run_end, 8);
      if (w != 0) break;
      run_end += 8;
    }
    while (run_end < blob.size() && p[run_end] == 0) run_end++;
    PutVarint(run_start - lit_start);
    Write(p + lit_start, run_start - lit_start);
    PutVarint(run_end - run_start);
    i = run_end;
  }
}

void RdbSink::HashPending() {
  if (hashed_ < buf_.size()) {
    XXH64_update(file_hash_, buf_.data() + hashed_, buf_.size() - hashed_);
    XXH64_update(section_hash_, buf_.data() + hashed_, buf_.size() - hashed_);
    hashed_ = buf_.size();
  }
}

void RdbSink::Flush() {
  HashPending();
  if (buf_.empty()) return;
  if (status_.ok()) {
    if (file_ != nullptr) {
      status_ = file_->Append(buf_);
    } else {
      out_->append(buf_);
    }
  }
  flushed_ += buf_.size();
  buf_.clear();
  hashed_ = 0;
}

void RdbSink::BeginSection(uint8_t kind) {
  HashPending();
  XXH64_reset(section_hash_, 0);
  PutU8(kind);
}

void RdbSink::EndSection() {
  HashPending();
  PutFixed64(XXH64_digest(section_hash_));
}

Status RdbSink::Finish() {
  HashPending();
  PutU8(0xFF);  // kSectionEnd
  HashPending();
  PutFixed64(XXH64_digest(file_hash_));
  Flush();
  return status_;
}

// --- RdbSource ---

RdbSource::RdbSource(SequentialFile* file) : file_(file) {
  file_hash_ = XXH64_createState();
  section_hash_ = XXH64_createState();
  XXH64_reset(file_hash_, 0);
  XXH64_reset(section_hash_, 0);
}

RdbSource::RdbSource(std::string_view data) : RdbSource(static_cast<SequentialFile*>(nullptr)) {
  view_ = data;
  eof_ = true;
}

RdbSource::~RdbSource() {
  XXH64_freeState(file_hash_);
  XXH64_freeState(section_hash_);
}

void RdbSource::HashConsumed() {
  if (hashed_ < pos_) {
    XXH64_update(file_hash_, view_.data() + hashed_, pos_ - hashed_);
    XXH64_update(section_hash_, view_.data() + hashed_, pos_ - hashed_);
    hashed_ = pos_;
  }
}

bool RdbSource::Fill(size_t need) {
  // REQUIRES: pos_ == view_.size() (all of the window consumed).
  (void)need;
  if (eof_ || file_ == nullptr || !status_.ok()) return false;
  HashConsumed();
  consumed_base_ += view_.size();
  buf_.resize(kBufSize);
  size_t got = 0;
  status_ = file_->Read(buf_.size(), buf_.data(), &got);
  buf_.resize(got);
  view_ = buf_;
  pos_ = 0;
  hashed_ = 0;
  if (!status_.ok() || got == 0) {
    eof_ = true;
    return false;
  }
  return true;
}

bool RdbSource::Read(void* p, size_t n) {
  char* dst = static_cast<char*>(p);
  while (n > 0) {
    if (pos_ == view_.size() && !Fill(n)) return false;
    size_t take = std::min(n, view_.size() - pos_);
    std::memcpy(dst, view_.data() + pos_, take);
    pos_ += take;
    dst += take;
    n -= take;
  }
  return true;
}

bool RdbSource::GetFixed32(uint32_t* v) {
  unsigned char b[4];
  if (!Read(b, 4)) return false;
  *v = 0;
  for (int i = 0; i < 4; i++) *v |= static_cast<uint32_t>(b[i]) << (8 * i);
  return true;
}

bool RdbSource::GetFixed64(uint64_t* v) {
  unsigned char b[8];
  if (!Read(b, 8)) return false;
  *v = 0;
  for (int i = 0; i < 8; i++) *v |= static_cast<uint64_t>(b[i]) << (8 * i);
  return true;
}

bool RdbSource::GetVarint(uint64_t* v) {
  *v = 0;
  for (int shift = 0; shift < 70; shift += 7) {
    uint8_t b;
    if (!GetU8(&b)) return false;
    if (shift == 63 && (b & 0xfe) != 0) return false;  // more than 64 bits
    *v |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

bool RdbSource::ReadGrowing(std::string* out, uint64_t len) {
  // len comes from the input: grow with the bytes that really arrive, so a corrupt
  // length fails at the end of the input instead of allocating all of it up front
  // (a flipped bit in a length made a 34 GB allocation throw std::bad_alloc).
  constexpr uint64_t kChunk = uint64_t{1} << 20;
  out->clear();
  while (out->size() < len) {
    const size_t at = out->size();
    const auto n = static_cast<size_t>(std::min<uint64_t>(kChunk, len - at));
    out->resize(at + n);
    if (!Read(out->data() + at, n)) return false;
  }
  return true;
}

bool RdbSource::GetString(std::string* s, uint64_t max_len) {
  uint64_t len;
  if (!GetVarint(&len) || len > max_len) return false;
  return ReadGrowing(s, len);
}

bool RdbSource::GetStringView(std::string_view* s, uint64_t max_len, std::string* scratch) {
  uint64_t len;
  if (!GetVarint(&len) || len > max_len) return false;
  if (view_.size() - pos_ >= len) {
    *s = view_.substr(pos_, len);
    pos_ += len;
    return true;
  }
  if (!ReadGrowing(scratch, len)) return false;
  *s = *scratch;
  return true;
}

bool RdbSource::GetBlob(std::string_view* blob, uint64_t max_len, std::string* scratch) {
  uint8_t enc;
  return GetU8(&enc) && GetBlobBody(enc, blob, max_len, scratch);
}

bool RdbSource::GetBlobBody(uint8_t enc, std::string_view* blob, uint64_t max_len,
                            std::string* scratch) {
  if (enc == 0) return GetStringView(blob, max_len, scratch);
  if (enc != 1) return false;
  uint64_t total;
  if (!GetVarint(&total) || total > max_len) return false;
  // Zero runs are implicit, so total cannot be checked against the input: a corrupt
  // total that the allocator refuses is a corrupt blob, not a crash.
  try {
    scratch->assign(total, '\0');
  } catch (const std::bad_alloc&) {
    return false;
  } catch (const std::length_error&) {
    return false;
  }
  uint64_t at = 0;
  while (at < total) {
    uint64_t lit, zeros;
    if (!GetVarint(&lit) || lit > total - at || !Read(scratch->data() + at, lit)) return false;
    at += lit;
    if (!GetVarint(&zeros) || zeros > total - at) return false;
    if (lit == 0 && zeros == 0) return false;  // no progress: malformed
    at += zeros;  // already zero
  }
  *blob = *scratch;
  return true;
}

void RdbSource::BeginSection() {
  HashConsumed();
  XXH64_reset(section_hash_, 0);
}

bool RdbSource::EndSection(uint64_t* stored, uint64_t* computed) {
  HashConsumed();
  *computed = XXH64_digest(section_hash_);
  return GetFixed64(stored) && *stored == *computed;
}

bool RdbSource::FinishFile(uint64_t* stored, uint64_t* computed) {
  HashConsumed();
  *computed = XXH64_digest(file_hash_);
  return GetFixed64(stored) && *stored == *computed;
}

}  // namespace feedkv::rdb
