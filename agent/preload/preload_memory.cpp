// The heap under the interposer: malloc, calloc, realloc, reallocarray, free,
// posix_memalign, aligned_alloc, memalign, valloc, pvalloc (C++'s new and delete
// reach these through libstdc++), counted per thread in one memory class,
// memory/<program>/malloc, with the allocator's usable size of each block
// (malloc_usable_size), so a free is counted without a header. One class for the
// whole heap: a free cannot tell which of the functions allocated its block.
//
// The real functions are the next definitions in the lookup order (RTLD_NEXT), so
// a program linked against jemalloc or tcmalloc keeps its allocator. dlsym itself
// allocates: while this thread resolves them, allocations come from a small static
// arena whose blocks are never given back. Nothing here locks; the agent's own
// allocations (tls.busy) are not counted.
//
// Blocks allocated before the agent started (the dynamic loader's, the C
// library's) and freed after are counted as frees alone: the class's current
// values start slightly below what the program holds; docs/instrumenting.md.
#include <dlfcn.h>
#include <errno.h>
#include <malloc.h>
#include <stdlib.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "agent/preload/preload_internal.h"
#include "agent/provider/internal/preload_api.h"
#include "agent/provider/pfs_c.h"

namespace pfs::preload {
namespace {

using malloc_fn = void* (*)(size_t);
using free_fn = void (*)(void*);
using calloc_fn = void* (*)(size_t, size_t);
using realloc_fn = void* (*)(void*, size_t);
using memalign_fn = void* (*)(size_t, size_t);
using posix_memalign_fn = int (*)(void**, size_t, size_t);
using usable_fn = size_t (*)(void*);

struct real_heap {
  std::atomic<malloc_fn> malloc{nullptr};
  std::atomic<free_fn> free{nullptr};
  std::atomic<calloc_fn> calloc{nullptr};
  std::atomic<realloc_fn> realloc{nullptr};
  std::atomic<memalign_fn> memalign{nullptr};
  std::atomic<memalign_fn> aligned_alloc{nullptr};
  std::atomic<posix_memalign_fn> posix_memalign{nullptr};
  std::atomic<malloc_fn> valloc{nullptr};
  std::atomic<malloc_fn> pvalloc{nullptr};
  std::atomic<usable_fn> usable_size{nullptr};
};
constinit real_heap g_real;

// The bootstrap arena: blocks of dlsym's allocations while the real functions are
// not known yet. Each block is preceded by its size (16 bytes keep the alignment).
constexpr std::size_t kArenaSize = 256 * 1024;
alignas(64) constinit char g_arena[kArenaSize] = {};
constinit std::atomic<std::size_t> g_arena_used{0};

bool in_arena(const void* p) {
  const char* c = static_cast<const char*>(p);
  return c >= g_arena && c < g_arena + kArenaSize;
}
void* arena_alloc(std::size_t n, std::size_t align = 16) {
  if (align < 16) align = 16;
  const auto base = reinterpret_cast<std::uintptr_t>(g_arena);
  std::size_t used = g_arena_used.load(std::memory_order_relaxed);
  for (;;) {
    const std::uintptr_t at = (base + used + sizeof(std::size_t) + align - 1) & ~(std::uintptr_t{align} - 1);
    const std::size_t start = at - base;
    if (start + n > kArenaSize || start < used || n > kArenaSize) return nullptr;
    if (g_arena_used.compare_exchange_weak(used, start + n, std::memory_order_relaxed)) {
      std::memcpy(g_arena + start - sizeof(std::size_t), &n, sizeof(std::size_t));
      return g_arena + start;
    }
  }
}
std::size_t arena_size(const void* p) {
  std::size_t n = 0;
  std::memcpy(&n, static_cast<const char*>(p) - sizeof(std::size_t), sizeof(std::size_t));
  return n;
}

__attribute__((tls_model("initial-exec"))) constinit thread_local bool tls_heap_resolving = false;

// True when the real malloc is not the C library's. Such an allocator's own calls
// then run marked busy, so that its locks, files and maps go straight to the C
// library: the agent must not register a thread or name a call site (and so
// allocate) from inside the allocator, which is not reentrant there.
constinit bool g_allocator_calls_out = false;

template <class Fn, class... Args>
inline auto call_real(Fn fn, Args... args) {
  if (!g_allocator_calls_out) [[likely]]
    return fn(args...);
  const bool was_busy = tls.busy;
  tls.busy = true;
  struct restore {
    bool was;
    ~restore() { tls.busy = was; }
  } restore_busy{was_busy};
  return fn(args...);
}

// The usable size of a block: glibc's chunk header read inline when its layout was
// verified at start-up (x86-64 glibc: the word before the block holds the chunk
// size and flags; an mmapped chunk has 16 bytes of overhead, another 8), so that
// counting a malloc+free makes no call; else malloc_usable_size.
constinit bool g_inline_usable = false;

__attribute__((noinline)) std::size_t usable_call(void* p) {
  const usable_fn f = g_real.usable_size.load(std::memory_order_relaxed);
  return f != nullptr ? call_real(f, p) : 0;
}

inline std::size_t glibc_usable(const void* p) {
  std::size_t head;
  std::memcpy(&head, static_cast<const char*>(p) - sizeof head, sizeof head);
  return (head & ~std::size_t{7}) - ((head & 2) ? 16 : 8);
}

inline std::size_t usable(void* p) {
  if (g_inline_usable) [[likely]]
    return glibc_usable(p);
  return usable_call(p);
}

// Compares the inline read with malloc_usable_size on blocks of several sizes (one
// mmapped), with the real functions; true when every one agrees.
bool inline_usable_agrees() {
  const auto m = g_real.malloc.load(std::memory_order_relaxed);
  const auto f = g_real.free.load(std::memory_order_relaxed);
  const auto u = g_real.usable_size.load(std::memory_order_relaxed);
  if (m == nullptr || f == nullptr || u == nullptr) return false;
  bool agrees = true;
  for (const std::size_t n : {std::size_t{1}, std::size_t{24}, std::size_t{100}, std::size_t{1000},
                              std::size_t{40000}, std::size_t{1} << 20}) {
    void* p = m(n);
    if (p == nullptr) return false;
    agrees = agrees && glibc_usable(p) == u(p) && u(p) >= n;
    f(p);
  }
  return agrees;
}

template <class Fn>
void resolve(std::atomic<Fn>& slot, const char* name) {
  slot.store(reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name)), std::memory_order_release);
}

// True once the real functions are known; false on this thread while it resolves
// them (its allocations then come from the arena).
bool heap_resolved() {
  if (g_real.free.load(std::memory_order_acquire) != nullptr) [[likely]]
    return true;
  if (tls_heap_resolving) return false;
  tls_heap_resolving = true;
  const int saved = errno;
  resolve(g_real.malloc, "malloc");
  resolve(g_real.calloc, "calloc");
  resolve(g_real.realloc, "realloc");
  resolve(g_real.memalign, "memalign");
  resolve(g_real.aligned_alloc, "aligned_alloc");
  resolve(g_real.posix_memalign, "posix_memalign");
  resolve(g_real.valloc, "valloc");
  resolve(g_real.pvalloc, "pvalloc");
  resolve(g_real.usable_size, "malloc_usable_size");
  // Another allocator (jemalloc, tcmalloc) takes pthread mutexes, opens files and
  // maps memory inside malloc; glibc's does it all through internal entry points.
  Dl_info info{};
  const auto real_malloc = g_real.malloc.load(std::memory_order_relaxed);
  if (real_malloc != nullptr && dladdr(reinterpret_cast<void*>(real_malloc), &info) != 0 &&
      info.dli_fname != nullptr) {
    const char* base = std::strrchr(info.dli_fname, '/');
    base = base != nullptr ? base + 1 : info.dli_fname;
    g_allocator_calls_out = std::strncmp(base, "libc.so", 7) != 0;
  }
  resolve(g_real.free, "free");  // last: it says the others are there
  if (!g_allocator_calls_out) g_inline_usable = inline_usable_agrees();
  errno = saved;
  tls_heap_resolving = false;
  return g_real.free.load(std::memory_order_acquire) != nullptr;
}

// memory/<program>/malloc, registered once the agent runs: its class record (nullptr
// before, and for good when it cannot be: the class array full).
constinit std::atomic<const pfs::layout::class_record*> g_heap_class{nullptr};
constinit std::atomic<pfs_key> g_heap_key{0};
constinit std::atomic<bool> g_heap_failed{false};
// The same record when its traits are the interposer's (0: counted per thread, not
// controlled), as always unless the program registered the name itself with
// others; the inline path counts with those traits as constants.
constinit std::atomic<const pfs::layout::class_record*> g_heap_plain{nullptr};

__attribute__((noinline)) const pfs::layout::class_record* register_heap_class() {
  if (g_heap_failed.load(std::memory_order_relaxed)) return nullptr;
  busy_scope busy;  // registering allocates: not counted, and not registered twice
  const pfs_key k = register_program_memory("malloc");
  const pfs::layout::class_record* c = pfs::detail::memory_class_of(k);
  if (c == nullptr) {
    g_heap_failed.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  g_heap_key.store(k, std::memory_order_relaxed);
  if (c->traits == 0) g_heap_plain.store(c, std::memory_order_release);
  g_heap_class.store(c, std::memory_order_release);
  return c;
}

// The heap's class to count with now: nullptr while the agent is off or busy on this
// thread (the agent's own allocations, or this file's).
inline const pfs::layout::class_record* heap_class() {
  if (tls.busy) return nullptr;
  const pfs::layout::class_record* c = g_heap_class.load(std::memory_order_acquire);
  if (c != nullptr) [[likely]]
    return c;
  if (!pfs::detail::load_relaxed(pfs::detail::g_hot.recording)) return nullptr;  // no agent (yet)
  return register_heap_class();
}

inline bool class_enabled(const pfs::layout::class_record& c) {
  return pfs::detail::load_relaxed(c.derived) & pfs::layout::kFlagEnabled;
}

// Counted through the C ABI out of line, marked busy: a thread not registered yet
// (the agent may register it, and allocate, first), one without rows, a class with
// traits of its own. Among them the thread that runs the program's exit handlers,
// whose heap is not booked once it called exit() (preload_exit.cpp).
__attribute__((noinline)) void count_alloc_slow(void* p) {
  if (exiting()) return;
  busy_scope busy;
  pfs_memory_owner owner;
  pfs_memory_alloc(g_heap_key.load(std::memory_order_relaxed), usable(p), &owner);
}
__attribute__((noinline)) void count_free_slow(void* p) {
  if (exiting()) return;
  busy_scope busy;
  pfs_memory_free(g_heap_key.load(std::memory_order_relaxed), usable(p), 0);
}

// An allocating call's block p (nullptr: none). Counted in the thread's own row
// inline (memory_path.h), with no call when the usable size is read inline, while
// the class is enabled; frees too are counted only while it is enabled, as the
// allocations: a free cannot tell whether its block was counted.
inline void count_alloc(void* p) {
  if (p == nullptr || tls.busy) return;
  const pfs::layout::class_record* c = g_heap_plain.load(std::memory_order_acquire);
  if (c != nullptr) [[likely]] {
    if (!class_enabled(*c)) return;
    if (pfs::detail::thread_context* t = pfs::detail::memory_thread()) [[likely]] {
      pfs::detail::count_thread_alloc(*t, *c, usable(p), 0);
      return;
    }
  } else {
    c = heap_class();
    if (c == nullptr || !class_enabled(*c)) return;
  }
  count_alloc_slow(p);
}

inline void count_free(void* p) {
  if (tls.busy) return;
  const pfs::layout::class_record* c = g_heap_plain.load(std::memory_order_acquire);
  if (c != nullptr) [[likely]] {
    if (!class_enabled(*c)) return;
    if (pfs::detail::thread_context* t = pfs::detail::memory_thread()) [[likely]] {
      pfs::detail::count_thread_free(*t, *c, usable(p), 0);
      return;
    }
  } else {
    c = heap_class();
    if (c == nullptr || !class_enabled(*c)) return;
  }
  count_free_slow(p);
}

// realloc: one free of the old size and one allocation of the new (MySQL's
// count_realloc); realloc(p, 0) that returned nullptr freed p.
void count_realloc(const pfs::layout::class_record* c, std::size_t old, void* q, std::size_t n) {
  if (q == nullptr && n != 0) return;  // failed: p is still the program's
  const std::size_t now = q != nullptr ? usable(q) : 0;
  if (pfs::detail::thread_context* t = pfs::detail::memory_thread_of(*c)) [[likely]] {
    if (q == nullptr) {
      pfs::detail::count_thread_free(*t, *c, old);
      return;
    }
    pfs::detail::count_in_thread_row(pfs::detail::memory_row_of(*t, *c), 1, now, 1, old);
    pfs::detail::account_thread_memory(*t, *c,
                                       static_cast<std::int64_t>(now) - static_cast<std::int64_t>(old));
    return;
  }
  if (exiting()) return;
  busy_scope busy;
  const pfs_key k = g_heap_key.load(std::memory_order_relaxed);
  pfs_memory_owner owner;
  if (q != nullptr)
    pfs_memory_realloc(k, old, now, &owner);
  else
    pfs_memory_free(k, old, 0);
}

}  // namespace

pfs_key register_program_memory(const char* name) {
  char category[48];
  program_category(category, sizeof(category));
  return pfs_register_memory(category, name, 0);
}

}  // namespace pfs::preload

using namespace pfs::preload;

extern "C" {

__attribute__((visibility("default"))) void* malloc(size_t n) {
  if (!heap_resolved()) return arena_alloc(n);
  void* p = call_real(g_real.malloc.load(std::memory_order_relaxed), n);
  count_alloc(p);
  return p;
}

__attribute__((visibility("default"))) void free(void* p) {
  if (p == nullptr || in_arena(p)) return;
  if (!heap_resolved()) return;  // cannot happen: p came from the real allocator
  count_free(p);
  call_real(g_real.free.load(std::memory_order_relaxed), p);
}

__attribute__((visibility("default"))) void* calloc(size_t n, size_t size) {
  if (!heap_resolved()) {
    if (size != 0 && n > SIZE_MAX / size) return nullptr;
    return arena_alloc(n * size);  // the arena is zeros and never reused
  }
  void* p = call_real(g_real.calloc.load(std::memory_order_relaxed), n, size);
  count_alloc(p);
  return p;
}

__attribute__((visibility("default"))) void* realloc(void* p, size_t n) {
  if (p != nullptr && in_arena(p)) {
    // A bootstrap block grows into a real one (or a larger arena block).
    void* q = malloc(n);
    if (q != nullptr) {
      const std::size_t old = arena_size(p);
      std::memcpy(q, p, old < n ? old : n);
    }
    return q;
  }
  if (!heap_resolved()) return arena_alloc(n);
  if (p == nullptr) return malloc(n);
  const pfs::layout::class_record* c = heap_class();
  if (c != nullptr && !class_enabled(*c)) c = nullptr;
  const std::size_t old = c != nullptr ? usable(p) : 0;
  void* q = call_real(g_real.realloc.load(std::memory_order_relaxed), p, n);
  if (c != nullptr) count_realloc(c, old, q, n);
  return q;
}

__attribute__((visibility("default"))) void* reallocarray(void* p, size_t n, size_t size) {
  if (size != 0 && n > SIZE_MAX / size) {
    errno = ENOMEM;
    return nullptr;
  }
  return realloc(p, n * size);
}

__attribute__((visibility("default"))) int posix_memalign(void** out, size_t align, size_t n) {
  if (!heap_resolved()) {
    void* p = arena_alloc(n, align);
    if (p == nullptr) return ENOMEM;
    *out = p;
    return 0;
  }
  const int rc = call_real(g_real.posix_memalign.load(std::memory_order_relaxed), out, align, n);
  if (rc == 0) count_alloc(*out);
  return rc;
}

__attribute__((visibility("default"))) void* aligned_alloc(size_t align, size_t n) {
  if (!heap_resolved()) return arena_alloc(n, align);
  void* p = call_real(g_real.aligned_alloc.load(std::memory_order_relaxed), align, n);
  count_alloc(p);
  return p;
}

__attribute__((visibility("default"))) void* memalign(size_t align, size_t n) {
  if (!heap_resolved()) return arena_alloc(n, align);
  void* p = call_real(g_real.memalign.load(std::memory_order_relaxed), align, n);
  count_alloc(p);
  return p;
}

__attribute__((visibility("default"))) void* valloc(size_t n) {
  if (!heap_resolved()) return arena_alloc(n, 4096);
  void* p = call_real(g_real.valloc.load(std::memory_order_relaxed), n);
  count_alloc(p);
  return p;
}

__attribute__((visibility("default"))) void* pvalloc(size_t n) {
  if (!heap_resolved()) return arena_alloc((n + 4095) & ~std::size_t{4095}, 4096);
  void* p = call_real(g_real.pvalloc.load(std::memory_order_relaxed), n);
  count_alloc(p);
  return p;
}

}  // extern "C"
