// HyperLogLog in Redis's own string format (hyperloglog.c), so an HLL made by
// Redis loads into feedkv with GET/SET (or DUMP/RESTORE) and the reverse:
//
//   header (16 bytes): "HYLL", encoding (0 dense, 1 sparse), 3 unused bytes, the
//   cached cardinality as 8 little-endian bytes (top bit of the last: stale).
//   dense: 16384 registers of 6 bits, packed from the low bits of each byte.
//   sparse: runs of registers as opcodes — ZERO (00xxxxxx: 1..64 zero registers),
//   XZERO (01xxxxxx yyyyyyyy: 1..16384 zeros), VAL (1vvvvvxx: 1..4 registers of
//   value 1..32) — covering exactly 16384 registers.
//
// An element goes to register hash & 16383 (MurmurHash64A, seed 0xadc83b19, as
// Redis) with value 1 + the trailing zeros of the remaining 50 bits. The count is
// Ertl's improved estimator over the register histogram, as Redis 7.
//
// A sparse HLL is updated by decoding its registers, setting them and writing the
// shortest opcode sequence back: always valid sparse form, within a few bytes of
// what Redis's in-place edit gives. It turns dense when a register passes 32 or
// its encoding would grow past hll-sparse-max-bytes, as Redis.
//
// Pure functions over the string's bytes; thread-compatible.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace feedkv::hll {

inline constexpr int kRegisters = 16384;
inline constexpr size_t kHeaderSize = 16;
inline constexpr size_t kDenseSize = kHeaderSize + kRegisters * 6 / 8;
inline constexpr uint8_t kDense = 0;
inline constexpr uint8_t kSparse = 1;

using Registers = uint8_t[kRegisters];

// What PFADD makes for a new key: an empty sparse HLL with a valid count of 0.
std::string NewSparse();

// Redis's isHLLObjectOrReply test: the header is an HLL's (a dense one has its exact
// size). A sparse body is checked when it is read.
bool LooksValid(std::string_view s);

bool IsSparse(std::string_view s);

// All registers into regs: false if the sparse body is corrupt (does not cover
// exactly 16384 registers).
bool Decode(std::string_view s, Registers regs);
// regs[i] = max(regs[i], this HLL's registers): false if corrupt.
bool MergeInto(std::string_view s, Registers regs);

// Register and value of an element.
void Hash(std::string_view element, int* reg, uint8_t* value);

// Adds elements[0..n) to the HLL *s (LooksValid). Returns 1 if a register changed,
// 0 if none did, -1 if the HLL is corrupt (then *s may have turned dense but holds
// the same registers). The cached count is left as is: the caller invalidates it.
int Add(std::string* s, const std::string_view* elements, size_t n, size_t sparse_max_bytes);

// Sets *s's registers to regs (PFMERGE; every register only grows): a sparse HLL
// turns dense under the same rules as Add. False if *s is corrupt.
bool SetRegisters(std::string* s, const Registers regs, size_t sparse_max_bytes);

// Converts *s to dense: false if corrupt. No-op for a dense HLL.
bool ToDense(std::string* s);

// Cardinality estimate from registers.
uint64_t Count(const Registers regs);
// The estimate of one HLL straight from its bytes (the register histogram is read off
// the opcodes of a sparse one, without unpacking it): false if corrupt.
bool CountOf(std::string_view s, uint64_t* count);

// The cached count: false when stale.
bool CachedCount(std::string_view s, uint64_t* count);
void SetCachedCount(std::string* s, uint64_t count);
void InvalidateCache(std::string* s);

// PFSELFTEST: every register round-trips through the dense packing, and an HLL
// kept sparse and one kept dense agree register for register and within 5% of the
// true count as 20,000 elements go in. Empty on success, else what failed.
std::string SelfTest();

// Redis's PFDEBUG DECODE text of a sparse HLL ("Z:16384", "v:2,1 z:3"...): false if
// corrupt.
bool DescribeSparse(std::string_view s, std::string* out);

}  // namespace feedkv::hll
