#include "server/allocator.h"

#include <errno.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <new>

#if defined(__SANITIZE_ADDRESS__)
#define FEEDKV_REPLACE_MALLOC 0
#undef FEEDKV_JEMALLOC
// From the sanitizer runtime (sanitizer/allocator_interface.h, which gcc's
// packages do not always ship).
extern "C" size_t __sanitizer_get_current_allocated_bytes();
extern "C" size_t __sanitizer_get_heap_size();
#else
#define FEEDKV_REPLACE_MALLOC 1
#endif

#if defined(FEEDKV_JEMALLOC)
#include <jemalloc/jemalloc.h>
#endif

#if FEEDKV_REPLACE_MALLOC

namespace {

// The backend: five primitives every replaced function is built from.
#if defined(FEEDKV_JEMALLOC)
// jemalloc's non-standard API, so that its own malloc symbols (which ours
// replace) are never needed. A zero size is 1, as jemalloc's malloc does.
inline void* BackendAlloc(size_t n, size_t align, bool zero) {
  int flags = zero ? MALLOCX_ZERO : 0;
  if (align > alignof(max_align_t)) flags |= MALLOCX_ALIGN(align);
  return mallocx(n == 0 ? 1 : n, flags);
}
inline void BackendFree(void* p) { dallocx(p, 0); }
inline void* BackendRealloc(void* p, size_t n) { return rallocx(p, n, 0); }
inline size_t BackendSize(const void* p) { return sallocx(p, 0); }
#else
}  // namespace
// glibc's implementations, exported for exactly this use.
extern "C" {
void* __libc_malloc(size_t n);
void __libc_free(void* p);
void* __libc_calloc(size_t n, size_t size);
void* __libc_realloc(void* p, size_t n);
void* __libc_memalign(size_t align, size_t n);
}
namespace {
inline void* BackendAlloc(size_t n, size_t align, bool zero) {
  if (align > alignof(max_align_t)) return __libc_memalign(align, n);
  return zero ? __libc_calloc(1, n) : __libc_malloc(n);
}
inline void BackendFree(void* p) { __libc_free(p); }
inline void* BackendRealloc(void* p, size_t n) { return __libc_realloc(p, n); }
size_t BackendSize(const void* p);  // glibc's malloc_usable_size, below
#endif

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
  if (p != nullptr) Add(static_cast<int64_t>(BackendSize(p)));
  return p;
}

inline bool PowerOfTwo(size_t a) { return a != 0 && (a & (a - 1)) == 0; }

inline void* Aligned(size_t align, size_t n) {
  // memalign's contract: a non-power-of-two alignment is rounded up.
  while (!PowerOfTwo(align)) align = (align | (align - 1)) + 1;
  return Counted(BackendAlloc(n, align, false));
}

}  // namespace

extern "C" {

void* malloc(size_t n) { return Counted(BackendAlloc(n, 0, false)); }

void free(void* p) {
  if (p == nullptr) return;
  Add(-static_cast<int64_t>(BackendSize(p)));
  BackendFree(p);
}

void* calloc(size_t n, size_t size) {
  size_t total = 0;
  if (__builtin_mul_overflow(n, size, &total)) {
    errno = ENOMEM;
    return nullptr;
  }
  return Counted(BackendAlloc(total, 0, true));
}

void* realloc(void* p, size_t n) {
  if (p == nullptr) return malloc(n);
  if (n == 0) {  // glibc's behaviour: frees and returns null
    free(p);
    return nullptr;
  }
  const auto old = static_cast<int64_t>(BackendSize(p));
  void* q = BackendRealloc(p, n);
  if (q != nullptr) Add(static_cast<int64_t>(BackendSize(q)) - old);
  return q;
}

void* memalign(size_t align, size_t n) { return Aligned(align, n); }

void* aligned_alloc(size_t align, size_t n) { return Aligned(align, n); }

int posix_memalign(void** out, size_t align, size_t n) {
  if (align % sizeof(void*) != 0 || !PowerOfTwo(align)) return EINVAL;
  void* p = Aligned(align, n);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(size_t n) { return Aligned(static_cast<size_t>(sysconf(_SC_PAGESIZE)), n); }

void* pvalloc(size_t n) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return Aligned(page, (n + page - 1) / page * page);
}

#if defined(FEEDKV_JEMALLOC)
// Blocks are jemalloc's now: glibc's malloc_usable_size must not see them.
size_t malloc_usable_size(void* p) { return p == nullptr ? 0 : BackendSize(p); }
#endif

}  // extern "C"

// C++'s allocation functions come here too: jemalloc's library defines its
// own, which would otherwise bypass the count.
namespace {
void* NewOrThrow(size_t n, size_t align) {
  for (;;) {
    void* p = align > alignof(max_align_t) ? Aligned(align, n) : malloc(n);
    if (p != nullptr) return p;
    std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}
void* NewOrNull(size_t n, size_t align) noexcept {
  try {
    return NewOrThrow(n, align);
  } catch (...) {
    return nullptr;
  }
}
}  // namespace

void* operator new(size_t n) { return NewOrThrow(n, 0); }
void* operator new[](size_t n) { return NewOrThrow(n, 0); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return NewOrNull(n, 0); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return NewOrNull(n, 0); }
void* operator new(size_t n, std::align_val_t a) { return NewOrThrow(n, static_cast<size_t>(a)); }
void* operator new[](size_t n, std::align_val_t a) { return NewOrThrow(n, static_cast<size_t>(a)); }
void* operator new(size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewOrNull(n, static_cast<size_t>(a));
}
void* operator new[](size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return NewOrNull(n, static_cast<size_t>(a));
}
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t) noexcept { free(p); }
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept { free(p); }
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept { free(p); }
void operator delete(void* p, size_t, std::align_val_t) noexcept { free(p); }
void operator delete[](void* p, size_t, std::align_val_t) noexcept { free(p); }

#if !defined(FEEDKV_JEMALLOC)
namespace {
size_t BackendSize(const void* p) { return malloc_usable_size(const_cast<void*>(p)); }
}  // namespace
#endif

#endif  // FEEDKV_REPLACE_MALLOC

namespace feedkv::server {

void MarkCommandThread() {
#if FEEDKV_REPLACE_MALLOC
  t_command_thread = true;
#endif
}

size_t AllocatedBytes() {
#if FEEDKV_REPLACE_MALLOC
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

#if defined(FEEDKV_JEMALLOC)

namespace {
size_t ReadStat(const char* name) {
  size_t v = 0, len = sizeof(v);
  return mallctl(name, &v, &len, nullptr, 0) == 0 ? v : 0;
}
}  // namespace

AllocatorStats ReadAllocatorStats() {
  // Refresh jemalloc's cached totals first (Redis does the same, from its cron).
  uint64_t epoch = 1;
  size_t len = sizeof(epoch);
  mallctl("epoch", &epoch, &len, &epoch, len);
  return {ReadStat("stats.allocated"), ReadStat("stats.active"), ReadStat("stats.resident")};
}

std::string AllocatorName() {
  const char* version = nullptr;
  size_t len = sizeof(version);
  if (mallctl("version", &version, &len, nullptr, 0) != 0 || version == nullptr) return "jemalloc";
  std::string v(version);
  return "jemalloc-" + v.substr(0, v.find('-'));
}

std::string AllocatorReport() {
  std::string out;
  malloc_stats_print(
      [](void* opaque, const char* text) { static_cast<std::string*>(opaque)->append(text); }, &out,
      nullptr);
  return out;
}

void ReleaseFreeMemory() {
  // MALLCTL_ARENAS_ALL: every arena, as Redis's jemalloc_purge.
  char name[64];
  std::snprintf(name, sizeof(name), "arena.%d.purge", MALLCTL_ARENAS_ALL);
  mallctl(name, nullptr, nullptr, nullptr, 0);
}

#else

AllocatorStats ReadAllocatorStats() {
#if !FEEDKV_REPLACE_MALLOC
  const size_t heap = __sanitizer_get_heap_size();
  return {AllocatedBytes(), heap, heap};
#else
  // glibc's totals: blocks in use, and the heap it holds from the OS (free
  // chunks included; it does not say how much of that is resident).
  struct mallinfo2 mi = mallinfo2();
  const size_t in_use = mi.uordblks + mi.hblkhd;
  const size_t heap = mi.arena + mi.hblkhd;
  return {in_use, heap, heap};
#endif
}

std::string AllocatorName() { return "libc"; }

std::string AllocatorReport() { return "Stats not supported for the current allocator"; }

void ReleaseFreeMemory() { malloc_trim(0); }

#endif

}  // namespace feedkv::server
