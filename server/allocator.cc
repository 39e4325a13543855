#include "server/allocator.h"

#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>

#if defined(__SANITIZE_ADDRESS__)
// From the sanitizer runtime (sanitizer/allocator_interface.h, which gcc's
// packages do not always ship).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
#define FEEDKV_COUNT_MALLOC 0
#else
#define FEEDKV_COUNT_MALLOC 1
#endif

#if FEEDKV_COUNT_MALLOC

// glibc's implementations, exported for exactly this use (replacement
// allocators that wrap it).
extern "C" {
void* __libc_malloc(size_t n);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t align, size_t n);
void* __libc_valloc(size_t n);
void* __libc_pvalloc(size_t n);
}

namespace {

// The command thread does most of the allocating, so its share is a counter
// only it writes (a plain load and store, no locked instruction); every other
// thread adds to a shared one. Memory freed by another thread than the one
// that allocated it moves between the two, and the sum stays exact.
std::atomic<int64_t> g_command_thread{0};
std::atomic<int64_t> g_other_threads{0};
thread_local bool t_command_thread = false;

inline void Add(int64_t n) {
  if (t_command_thread) {
    g_command_thread.store(g_command_thread.load(std::memory_order_relaxed) + n,
                           std::memory_order_relaxed);
  } else {
    g_other_threads.fetch_add(n, std::memory_order_relaxed);
  }
}

inline void* Counted(void* p) {
  if (p != nullptr) Add(static_cast<int64_t>(malloc_usable_size(p)));
  return p;
}

}  // namespace

extern "C" {

void* malloc(size_t n) { return Counted(__libc_malloc(n)); }

void free(void* p) {
  if (p == nullptr) return;
  Add(-static_cast<int64_t>(malloc_usable_size(p)));
  __libc_free(p);
}

void* calloc(size_t n, size_t size) { return Counted(__libc_calloc(n, size)); }

void* realloc(void* p, size_t n) {
  const int64_t old = p != nullptr ? static_cast<int64_t>(malloc_usable_size(p)) : 0;
  void* q = __libc_realloc(p, n);
  if (q != nullptr) {
    Add(static_cast<int64_t>(malloc_usable_size(q)) - old);
  } else if (p != nullptr && n == 0) {
    Add(-old);  // glibc freed it
  }
  return q;
}

void* memalign(size_t align, size_t n) { return Counted(__libc_memalign(align, n)); }

void* aligned_alloc(size_t align, size_t n) { return Counted(__libc_memalign(align, n)); }

int posix_memalign(void** out, size_t align, size_t n) {
  if (align % sizeof(void*) != 0 || (align & (align - 1)) != 0 || align == 0) return EINVAL;
  void* p = Counted(__libc_memalign(align, n));
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t n) { return Counted(__libc_valloc(n)); }

void* pvalloc(size_t n) { return Counted(__libc_pvalloc(n)); }

}  // extern "C"

#endif  // FEEDKV_COUNT_MALLOC

namespace feedkv::server {

void MarkCommandThread() {
#if FEEDKV_COUNT_MALLOC
  t_command_thread = true;
#endif
}

size_t AllocatedBytes() {
#if FEEDKV_COUNT_MALLOC
  int64_t n = g_command_thread.load(std::memory_order_relaxed) +
              g_other_threads.load(std::memory_order_relaxed);
  return n > 0 ? static_cast<size_t>(n) : 0;
#else
  return __sanitizer_get_current_allocated_bytes();
#endif
}

size_t ResidentBytes() {
  long pages = 0, resident = 0;
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  if (std::fscanf(f, "%ld %ld", &pages, &resident) != 2) resident = 0;
  std::fclose(f);
  return static_cast<size_t>(resident) * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

void ReleaseFreeMemory() { malloc_trim(0); }

}  // namespace feedkv::server
