// BloomChain: RedisBloom's scalable Bloom filter (sb.c over bloom.c), with its
// sizing, hashing and bit layout, so a filter dumped by either server with
// BF.SCANDUMP loads into the other with BF.LOADCHUNK.
//
// A chain is a list of links, each a plain Bloom filter of `bytes` bytes
// (bits = bytes * 8, a multiple of 64) sized for `entries` items at error rate
// `error`: bits per entry bpe = -ln(error) / ln(2)^2, bits = entries * bpe
// rounded up to 64, hashes = ceil(ln(2) * bpe). An item is hashed once —
// a = MurmurHash64A(item, 0xc6a4a7935bd1e995), b = MurmurHash64A(item, a) —
// and its i-th bit in a link is (a + i * b) mod bits, bit x living in byte x / 8
// at mask 1 << (x % 8).
//
// Adding checks every link, newest first; an item none holds goes into the
// newest link. When that link holds `entries` items, a scaling chain adds a
// link of entries * expansion at half the error rate (so the whole chain's false
// positive rate stays under the rate asked for: the first link of a scaling
// chain is built at half that rate too); a NONSCALING chain refuses the item.
//
// The dump form (SCANDUMP) is RedisBloom's packed little-endian header —
// size u64, nfilters u32, options u32, growth u32, then per link bytes u64,
// bits u64, size u64, error f64, bpe f64, hashes u32, entries u64, n2 u8 — and
// then every link's bit array in order, addressed by byte offset + 1.
//
// Not thread-safe; owned by the command thread like every keyspace value.
#pragma once

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "storage/object.h"
#include "storage/status.h"

namespace feedkv {

// Process-wide Bloom totals for INFO's "bf" section, kept as filters change
// (all on the command thread).
// Atomic (relaxed): a chain may be freed on the lazy-free thread
// (server/lazy_free.h) while the command thread adds to another.
struct BloomStats {
  std::atomic<uint64_t> filters{0};       // live chains
  std::atomic<uint64_t> bytes{0};         // bit-array bytes of all links
  std::atomic<uint64_t> items{0};         // items inserted, over all chains
  std::atomic<uint64_t> scale_events{0};  // links added by scaling, since start
  // Chains by number of links (index 63: 63 or more), for the longest chain.
  std::atomic<uint64_t> by_links[64] = {};
  uint64_t links_max() const;
};
const BloomStats& GlobalBloomStats();

class BloomChain final : public Object {
 public:
  // RedisBloom's option bits (bloom.h); BF.* chains carry kNoRound | kForce64.
  static constexpr uint32_t kOptNoRound = 1;
  static constexpr uint32_t kOptEntsIsBits = 2;
  static constexpr uint32_t kOptForce64 = 4;
  static constexpr uint32_t kOptNoScaling = 8;
  // RedisBloom's ranges for a reservation.
  static constexpr int64_t kMaxCapacity = int64_t{1} << 30;
  static constexpr int64_t kMaxExpansion = 32768;
  // Largest SCANDUMP chunk, as RedisBloom.
  static constexpr size_t kMaxChunk = 16u << 20;

  // What creating a chain asks for. nonscaling: no link is ever added (growth
  // is still recorded, as RedisBloom does, and shown in the dump header).
  struct Params {
    double error = 0.01;
    uint64_t capacity = 100;
    uint32_t growth = 2;
    bool nonscaling = false;
  };

  // Bytes of the bit array of a link for `entries` at `error` (0 when the rate
  // gives no valid link, as an error that is 0 or not below 1). Doubles, so a
  // size past any budget is still measured without overflow.
  static double LinkBytes(double entries, double error);

  // A new empty chain; InvalidArgument("could not create filter") when the
  // parameters give no link (an error rate that halves to 0), and
  // "filter would exceed bf-max-filter-bytes (bytes needed N)" past max_bytes.
  static Status Create(const Params& p, uint64_t max_bytes, std::unique_ptr<BloomChain>* out);

  // A chain from a SCANDUMP header (BF.LOADCHUNK at iterator 1), all bits clear:
  // InvalidArgument("received bad data") when the header is not RedisBloom's or
  // describes an impossible filter, or the bf-max-filter-bytes text.
  static Status FromHeader(std::string_view header, uint64_t max_bytes, std::unique_ptr<BloomChain>* out);

  ~BloomChain() override;
  BloomChain(const BloomChain&) = delete;
  BloomChain& operator=(const BloomChain&) = delete;

  enum class AddResult {
    kAdded,     // the item was new: bits set (maybe in a new link)
    kPresent,   // every bit of the item was set in some link: nothing changed
    kFull,      // a NONSCALING chain's last link is full: nothing changed
    kTooBig,    // the link scaling needs would pass max_bytes: nothing changed
    kFailed,    // scaling gives no valid link (entries or error out of range)
  };
  // Adds an item. *bytes_needed (may be null) gets the chain's size had the scale step been
  // taken, for kTooBig.
  AddResult Add(std::string_view item, uint64_t max_bytes, uint64_t* bytes_needed);
  bool Contains(std::string_view item) const;

  uint64_t items() const { return size_; }
  uint64_t capacity() const;  // sum of the links' entries (BF.INFO Capacity)
  size_t links() const { return links_.size(); }
  uint32_t growth() const { return growth_; }
  uint32_t options() const { return options_; }
  bool nonscaling() const { return (options_ & kOptNoScaling) != 0; }
  // The first link's parameters, from which the chain was created.
  double first_error() const;
  uint64_t first_capacity() const;
  // What RedisBloom's BF.INFO reports as Size: its struct sizes plus the bits.
  uint64_t RedisBloomSize() const;
  uint64_t bit_bytes() const;  // of all links' bit arrays

  // BF.SCANDUMP: the header (iterator 0).
  std::string EncodeHeader() const;
  // BF.SCANDUMP at iterator *iter >= 1: a view of up to max_len bytes of the bit
  // arrays from offset *iter - 1 within one link, and *iter advanced past it;
  // past the end (or *iter < 1), an empty view and *iter = 0.
  std::string_view Chunk(int64_t* iter, size_t max_len) const;
  // BF.LOADCHUNK: the chunk `data` that SCANDUMP returned with next iterator
  // `iter` (so it starts at byte iter - len(data) - 1). Errors are RedisBloom's
  // texts without "ERR ".
  Status LoadChunk(int64_t iter, std::string_view data);

  // Object
  ValueType type() const override { return ValueType::kBloom; }
  std::string_view encoding() const override { return "raw"; }
  size_t MemoryUsage() const override;
  std::unique_ptr<Object> Clone() const override;
  // The header, then every link's bits: what SCANDUMP streams, in one piece.
  void SerializeTo(std::string* out) const override;
  uint64_t Digest() const override;
  static Status Decode(std::string_view bytes, std::unique_ptr<BloomChain>* out);

 private:
  struct Link {
    uint64_t entries = 0;  // items it is sized for
    uint64_t size = 0;     // items added to it
    uint64_t bytes = 0;    // of the bit array; bits = bytes * 8
    double error = 0;
    double bpe = 0;
    uint32_t hashes = 0;
    uint8_t n2 = 0;        // log2 of the bit count of power-of-two links (old chains); 0 here
    struct Free {
      void operator()(uint8_t* p) const { std::free(p); }
    };
    std::unique_ptr<uint8_t, Free> bits;  // calloc'ed
    uint64_t modulus() const { return n2 > 0 ? uint64_t{1} << n2 : bytes * 8; }
  };

  BloomChain(uint32_t options, uint32_t growth) : options_(options), growth_(growth) {}
  // Appends a link sized for entries at error; false if the parameters give none.
  bool AddLink(uint64_t entries, double error);
  bool AllocateBits(Link* link);
  void Track(int sign);  // adds/removes this chain's share of GlobalBloomStats
  struct Hash {
    uint64_t a, b;
  };
  Hash HashOf(std::string_view item) const;
  static bool LinkHas(const Link& l, Hash h);
  // Sets the item's bits; true if any was clear.
  static bool LinkSet(Link* l, Hash h);

  std::vector<Link> links_;
  uint64_t size_ = 0;  // items added to the chain
  uint32_t options_;
  uint32_t growth_;
  bool tracked_ = false;  // counted in GlobalBloomStats
};

}  // namespace feedkv
