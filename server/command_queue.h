// CommandQueue: the commands a client queued inside MULTI, kept packed.
//
// Each command is one record in a block: its table row, its argument count,
// then each argument as a length and its bytes. Blocks start at 4 KiB and
// double up to 8 MiB, so a small transaction costs one small allocation and a
// large one (300,000 SETs of 1 KB) costs about its bytes, in blocks that are
// big enough for malloc to map them on their own: freeing the queue after
// EXEC returns the memory to the system at once, instead of leaving a million
// small holes in the heap (a vector of strings per command did: RSS stayed at
// the peak, and freeing took tens of milliseconds).
//
// Not thread-safe; owned by one Client on the command thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

namespace feedkv::server {

struct CommandSpec;

class CommandQueue {
 public:
  CommandQueue() = default;
  CommandQueue(CommandQueue&&) noexcept = default;
  CommandQueue& operator=(CommandQueue&&) noexcept = default;

  // Appends a copy of `args` (the bytes are copied; the views need not live on).
  void Push(const CommandSpec* spec, std::span<const std::string_view> args);
  size_t size() const { return count_; }
  bool empty() const { return count_ == 0; }
  // Bytes of memory held (blocks, reserved room included).
  size_t bytes() const { return bytes_; }
  // Frees every block.
  void Clear();
  // Whether some queued command has one of `flags` / lacks one of `flags`
  // (Redis's mstate.cmd_flags and cmd_inv_flags: what EXEC's gates look at).
  bool AnyHas(uint32_t flags) const { return (any_flags_ & flags) != 0; }
  bool AnyLacks(uint32_t flags) const { return (missing_flags_ & flags) != 0; }

  // Calls f(const CommandSpec&, std::span<const std::string_view> args) for each
  // command in queue order. The views point into the queue: valid until Clear.
  template <class F>
  void ForEach(F&& f) const;
  // Like ForEach, but frees each block as soon as its commands have run, and
  // leaves the queue empty: EXEC of a big transaction then holds at most one
  // block of the queue beside the data its commands create.
  template <class F>
  void Drain(F&& f);

 private:
  struct Block {
    std::unique_ptr<char[]> data;
    size_t used = 0;
    size_t capacity = 0;
  };
  static constexpr size_t kFirstBlock = 4 * 1024;
  static constexpr size_t kMaxBlock = 8 * 1024 * 1024;

  char* Reserve(size_t n);
  // Calls f for each record of one block.
  template <class F>
  static void ForEachIn(const Block& b, std::vector<std::string_view>* argv, F&& f);

  std::vector<Block> blocks_;
  size_t count_ = 0;
  size_t bytes_ = 0;
  uint32_t any_flags_ = 0;      // OR of the queued rows' flags
  uint32_t missing_flags_ = 0;  // OR of their complements
};

namespace command_queue_internal {
// The head of each record; its arguments follow as (uint64 length, bytes).
struct RecordHeader {
  const CommandSpec* spec;
  uint64_t argc;
};
}  // namespace command_queue_internal

template <class F>
void CommandQueue::ForEachIn(const Block& b, std::vector<std::string_view>* argv_buf, F&& f) {
  std::vector<std::string_view>& argv = *argv_buf;
  const char* p = b.data.get();
  const char* end = p + b.used;
  while (p < end) {
    command_queue_internal::RecordHeader h;
    std::memcpy(&h, p, sizeof(h));
    p += sizeof(h);
    argv.clear();
    for (uint64_t i = 0; i < h.argc; ++i) {
      uint64_t len;
      std::memcpy(&len, p, sizeof(len));
      p += sizeof(len);
      argv.emplace_back(p, static_cast<size_t>(len));
      p += len;
    }
    f(*h.spec, std::span<const std::string_view>(argv));
  }
}

template <class F>
void CommandQueue::ForEach(F&& f) const {
  std::vector<std::string_view> argv;
  for (const Block& b : blocks_) ForEachIn(b, &argv, f);
}

template <class F>
void CommandQueue::Drain(F&& f) {
  std::vector<Block> blocks = std::move(blocks_);
  Clear();
  std::vector<std::string_view> argv;
  for (Block& b : blocks) {
    ForEachIn(b, &argv, f);
    b.data.reset();
  }
}

}  // namespace feedkv::server
