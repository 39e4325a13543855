// The allocator: the process's malloc, and what it has handed out, counted as
// it happens, as Redis's zmalloc counts used_memory.
//
// allocator.cc replaces malloc, free, calloc, realloc, the aligned forms and
// malloc_usable_size for the whole process (glibc supports this: its own
// internal allocations and libstdc++'s operator new then come through them
// too) and forwards each call to the backend chosen at build time — jemalloc
// (FEEDKV_ALLOCATOR=jemalloc, the default: see docs/benchmarks.md for why) or
// glibc's malloc — adding or subtracting the block's usable size. So
// AllocatedBytes() is exact and costs two atomic loads: the maxmemory check can
// run before every command, as Redis's does. Under AddressSanitizer, whose
// runtime owns malloc, nothing is replaced and the figure is the sanitizer's.
//
// Thread-safe: any thread may allocate and read the figures. The thread that
// calls MarkCommandThread counts into its own atomic without a locked
// instruction; all others share one.
#pragma once

#include <cstddef>
#include <string>

namespace feedkv::server {

// Makes the calling thread the command thread (the one allocating most).
// Call it once, from that thread, before it starts serving.
void MarkCommandThread();
// Bytes currently allocated through malloc and its relatives (usable sizes).
size_t AllocatedBytes();
// Resident set size of the process.
size_t ResidentBytes();

// The backend's own view, as INFO memory reports it (Redis's
// zmalloc_get_allocator_info): bytes in live blocks, in the pages holding
// them (active) and resident in the allocator's mappings. Zero where the
// backend does not tell (glibc: allocated and active are the count above).
struct AllocatorStats {
  size_t allocated = 0;
  size_t active = 0;
  size_t resident = 0;
};
AllocatorStats ReadAllocatorStats();
// "jemalloc-5.3.0" or "libc" (INFO mem_allocator).
std::string AllocatorName();
// MEMORY MALLOC-STATS: the backend's report, or Redis's reply for a backend
// without one.
std::string AllocatorReport();
// MEMORY PURGE: returns the free pages the backend holds to the OS.
void ReleaseFreeMemory();

}  // namespace feedkv::server
