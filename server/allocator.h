// The allocator: what the process has taken from malloc, counted as it
// happens, as Redis's zmalloc counts used_memory.
//
// allocator.cc replaces malloc, free, calloc, realloc and the aligned forms
// for the whole process (glibc supports this: its own internal allocations
// and libstdc++'s operator new then come through them too) and forwards
// each call to glibc's implementation, adding or subtracting the block's
// usable size. So AllocatedBytes() is exact and costs one atomic load: the
// maxmemory check can run before every command, as Redis's does, where
// mallinfo2() walks the allocator's free lists. Under AddressSanitizer, whose
// runtime owns malloc, the figure is the sanitizer's.
//
// Thread-safe: any thread may allocate and read the figure. The thread that
// calls MarkCommandThread counts into its own atomic without a locked
// instruction; all others share one.
#pragma once

#include <cstddef>

namespace feedkv::server {

// Makes the calling thread the command thread (the one allocating most).
// Call it once, from that thread, before it starts serving.
void MarkCommandThread();
// Bytes currently allocated through malloc and its relatives (usable sizes).
size_t AllocatedBytes();
// Resident set size of the process.
size_t ResidentBytes();
// Returns free memory at the top of the heap and of idle arenas to the OS.
void ReleaseFreeMemory();

}  // namespace feedkv::server
