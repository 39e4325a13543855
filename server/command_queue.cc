#include "server/command_queue.h"

#include <algorithm>
#include <cstring>

#include "server/command_table.h"

namespace feedkv::server {

using command_queue_internal::RecordHeader;

char* CommandQueue::Reserve(size_t n) {
  if (blocks_.empty() || blocks_.back().capacity - blocks_.back().used < n) {
    // Each block doubles the last, up to kMaxBlock; a record bigger than that
    // (one huge argument) gets a block of its own size.
    size_t cap = blocks_.empty() ? kFirstBlock : std::min(kMaxBlock, blocks_.back().capacity * 2);
    cap = std::max(cap, n);
    Block b;
    b.data.reset(new char[cap]);
    b.capacity = cap;
    bytes_ += cap;
    blocks_.push_back(std::move(b));
  }
  Block& b = blocks_.back();
  char* p = b.data.get() + b.used;
  b.used += n;
  return p;
}

void CommandQueue::Push(const CommandSpec* spec, std::span<const std::string_view> args) {
  size_t n = sizeof(RecordHeader);
  for (std::string_view a : args) n += sizeof(uint64_t) + a.size();
  char* p = Reserve(n);
  any_flags_ |= spec->flags;
  missing_flags_ |= ~spec->flags;
  const RecordHeader h{spec, args.size()};
  std::memcpy(p, &h, sizeof(h));
  p += sizeof(h);
  for (std::string_view a : args) {
    const uint64_t len = a.size();
    std::memcpy(p, &len, sizeof(len));
    p += sizeof(len);
    if (len > 0) std::memcpy(p, a.data(), len);
    p += len;
  }
  count_++;
}

void CommandQueue::Clear() {
  std::vector<Block>().swap(blocks_);
  count_ = 0;
  bytes_ = 0;
  any_flags_ = 0;
  missing_flags_ = 0;
}

}  // namespace feedkv::server
