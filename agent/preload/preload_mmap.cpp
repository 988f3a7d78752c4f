// Anonymous memory maps under the interposer: mmap with MAP_ANONYMOUS, munmap and
// mremap, counted per thread in one memory class, memory/<program>/mmap, in pages
// (the length rounded up to the page size). File maps are not memory the program
// allocates and are left alone; so are the C library's own maps (malloc's large
// blocks, thread stacks): it makes them through internal entry points, which an
// interposer does not see, and malloc's blocks are counted as malloc.
//
// munmap has no size of its own to trust for the count: the counted maps are kept
// in a fixed table (start address -> length), so a map unmapped whole, or from its
// start, or together with the maps that follow it, is counted exactly. A munmap
// of a map's middle or end is not subtracted (docs/instrumenting.md). A map that
// finds no room in the table (16384 maps) is not counted at all.
//
// Nothing here locks: the table is open addressing with atomic slots. A map's
// entry is taken out before the real munmap (and put back if it fails), so that a
// new map at the same address, made by another thread after the unmap, cannot be
// confused with it.
#include <dlfcn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/preload/preload_internal.h"
#include "agent/provider/internal/preload_api.h"
#include "agent/provider/pfs_c.h"

namespace pfs::preload {
namespace {

using mmap_fn = void* (*)(void*, size_t, int, int, int, off_t);
using munmap_fn = int (*)(void*, size_t);
using mremap_fn = void* (*)(void*, size_t, size_t, int, ...);

constinit std::atomic<mmap_fn> g_mmap{nullptr};
constinit std::atomic<munmap_fn> g_munmap{nullptr};
constinit std::atomic<mremap_fn> g_mremap{nullptr};
constinit std::atomic<bool> g_maps_resolved{false};
__attribute__((tls_model("initial-exec"))) constinit thread_local bool tls_maps_resolving = false;

// The real functions (RTLD_NEXT: another interposer after this one keeps its
// wrappers); while this thread resolves them, the system calls themselves.
bool maps_resolved() {
  if (g_maps_resolved.load(std::memory_order_acquire)) [[likely]]
    return true;
  if (tls_maps_resolving) return false;
  tls_maps_resolving = true;
  g_mmap.store(reinterpret_cast<mmap_fn>(dlsym(RTLD_NEXT, "mmap")), std::memory_order_relaxed);
  g_munmap.store(reinterpret_cast<munmap_fn>(dlsym(RTLD_NEXT, "munmap")), std::memory_order_relaxed);
  g_mremap.store(reinterpret_cast<mremap_fn>(dlsym(RTLD_NEXT, "mremap")), std::memory_order_relaxed);
  tls_maps_resolving = false;
  const bool ok = g_mmap.load(std::memory_order_relaxed) != nullptr &&
                  g_munmap.load(std::memory_order_relaxed) != nullptr &&
                  g_mremap.load(std::memory_order_relaxed) != nullptr;
  g_maps_resolved.store(ok, std::memory_order_release);
  return ok;
}

void* real_mmap(void* addr, size_t n, int prot, int flags, int fd, off_t off) {
  if (maps_resolved()) return g_mmap.load(std::memory_order_relaxed)(addr, n, prot, flags, fd, off);
  return reinterpret_cast<void*>(syscall(SYS_mmap, addr, n, prot, flags, fd, off));
}
int real_munmap(void* addr, size_t n) {
  if (maps_resolved()) return g_munmap.load(std::memory_order_relaxed)(addr, n);
  return static_cast<int>(syscall(SYS_munmap, addr, n));
}
void* real_mremap(void* old, size_t old_n, size_t n, int flags, void* to) {
  if (maps_resolved()) return g_mremap.load(std::memory_order_relaxed)(old, old_n, n, flags, to);
  return reinterpret_cast<void*>(syscall(SYS_mremap, old, old_n, n, flags, to));
}

// ---------------------------------------------------------------------------
// The counted maps: start -> length (bytes, whole pages). 0 = never used,
// kTombstone = used and taken out (lookups go on past it).

constexpr std::size_t kMapSlots = 16384;  // 256 KiB of .bss, touched as used
constexpr std::size_t kMaxProbe = 64;
constexpr std::uintptr_t kTombstone = 1;

struct map_slot {
  std::atomic<std::uintptr_t> start;
  std::atomic<std::size_t> length;
};
constinit map_slot g_maps[kMapSlots] = {};

std::size_t slot_of(std::uintptr_t start) {
  return static_cast<std::size_t>((start >> 12) * 0x9E3779B97F4A7C15ull >> 50) % kMapSlots;
}

bool remember(std::uintptr_t start, std::size_t length) {
  const std::size_t first = slot_of(start);
  for (std::size_t i = 0; i < kMaxProbe; ++i) {
    map_slot& s = g_maps[(first + i) % kMapSlots];
    std::uintptr_t seen = s.start.load(std::memory_order_relaxed);
    if (seen != 0 && seen != kTombstone) continue;
    s.length.store(length, std::memory_order_relaxed);
    if (s.start.compare_exchange_strong(seen, start, std::memory_order_release, std::memory_order_relaxed))
      return true;
  }
  return false;
}

// Takes the map starting at start out of the table: its length, or 0.
std::size_t forget(std::uintptr_t start) {
  const std::size_t first = slot_of(start);
  for (std::size_t i = 0; i < kMaxProbe; ++i) {
    map_slot& s = g_maps[(first + i) % kMapSlots];
    std::uintptr_t seen = s.start.load(std::memory_order_acquire);
    if (seen == 0) return 0;
    if (seen != start) continue;
    const std::size_t length = s.length.load(std::memory_order_relaxed);
    if (s.start.compare_exchange_strong(seen, kTombstone, std::memory_order_acq_rel)) return length;
    return 0;  // another thread took it out first
  }
  return 0;
}

std::size_t page_size() {
  static const std::size_t size = [] {
    const long n = sysconf(_SC_PAGESIZE);
    return n > 0 ? static_cast<std::size_t>(n) : std::size_t{4096};
  }();
  return size;
}
std::size_t whole_pages(std::size_t n) { return (n + page_size() - 1) & ~(page_size() - 1); }

// ---------------------------------------------------------------------------
// The class, memory/<program>/mmap, registered when the first map is counted.

constinit std::atomic<pfs_key> g_map_key{0};
constinit std::atomic<bool> g_map_failed{false};

// The key to count a new map with (0: the agent is off or the class disabled).
// Call it marked busy: it may register the class.
pfs_key new_map_key() {
  if (!pfs::detail::load_relaxed(pfs::detail::g_hot.recording)) return 0;
  pfs_key k = g_map_key.load(std::memory_order_acquire);
  if (k == 0) {
    if (g_map_failed.load(std::memory_order_relaxed)) return 0;
    k = register_program_memory("mmap");
    if (k == 0) {
      g_map_failed.store(true, std::memory_order_relaxed);
      return 0;
    }
    g_map_key.store(k, std::memory_order_release);
  }
  const volatile unsigned char* flags = pfs_class_flags(k);
  return flags != nullptr && (*flags & PFS_ENABLED) ? k : 0;
}

void count_unmap(pfs_key k, std::uintptr_t start, std::size_t length) {
  // The maps that start where the range starts, one after the other.
  std::uintptr_t at = start;
  const std::uintptr_t end = start + whole_pages(length);
  for (int i = 0; i < 64 && at < end; ++i) {
    const std::size_t mapped = forget(at);
    if (mapped == 0) return;
    const std::size_t gone = mapped <= end - at ? mapped : end - at;
    pfs_memory_free(k, gone, 0);
    if (gone < mapped) remember(at + gone, mapped - gone);  // the rest stays mapped, counted
    at += gone;
  }
}

}  // namespace
}  // namespace pfs::preload

using namespace pfs::preload;

extern "C" {

__attribute__((visibility("default"))) void* mmap(void* addr, size_t n, int prot, int flags, int fd,
                                                  off_t off) {
  void* p = real_mmap(addr, n, prot, flags, fd, off);
  if (p == MAP_FAILED || !(flags & MAP_ANONYMOUS) || tls.busy) return p;
  busy_scope busy;
  const pfs_key k = new_map_key();
  if (k == 0) return p;
  const auto start = reinterpret_cast<std::uintptr_t>(p);
  // MAP_FIXED over a counted map: the old one is gone.
  if (flags & MAP_FIXED) count_unmap(k, start, n);
  if (remember(start, whole_pages(n))) {
    pfs_memory_owner owner;
    pfs_memory_alloc(k, whole_pages(n), &owner);
  }
  return p;
}

__attribute__((visibility("default"), alias("mmap"))) void* mmap64(void* addr, size_t n, int prot, int flags,
                                                                   int fd, off_t off);

__attribute__((visibility("default"))) int munmap(void* addr, size_t n) {
  if (tls.busy) return real_munmap(addr, n);
  // Only maps in the table were counted, and only with this key: counted when
  // unmapped whatever the class's setting is now. Nothing is registered here.
  const pfs_key k = g_map_key.load(std::memory_order_acquire);
  if (k == 0) return real_munmap(addr, n);
  busy_scope busy;
  const auto start = reinterpret_cast<std::uintptr_t>(addr);
  // Out of the table before the unmap: once it is done, another thread may get
  // the same address from mmap.
  const std::size_t mapped = forget(start);
  const int rc = real_munmap(addr, n);
  if (mapped == 0) return rc;  // not a counted map's start
  if (rc != 0) {
    remember(start, mapped);
    return rc;
  }
  const std::size_t gone = mapped <= whole_pages(n) ? mapped : whole_pages(n);
  pfs_memory_free(k, gone, 0);
  if (gone < mapped) remember(start + gone, mapped - gone);
  if (whole_pages(n) > gone) count_unmap(k, start + gone, whole_pages(n) - gone);
  return rc;
}

__attribute__((visibility("default"))) void* mremap(void* old, size_t old_n, size_t n, int flags, ...) {
  void* to = nullptr;
  if (flags & MREMAP_FIXED) {
    va_list ap;
    va_start(ap, flags);
    to = va_arg(ap, void*);
    va_end(ap);
  }
  if (tls.busy) return real_mremap(old, old_n, n, flags, to);
  const pfs_key k = g_map_key.load(std::memory_order_acquire);
  if (k == 0) return real_mremap(old, old_n, n, flags, to);
  busy_scope busy;
  const auto start = reinterpret_cast<std::uintptr_t>(old);
  const std::size_t mapped = forget(start);
  void* p = real_mremap(old, old_n, n, flags, to);
  if (mapped == 0) return p;
  if (p == MAP_FAILED) {
    remember(start, mapped);
    return p;
  }
  // The map as it is now: what was mapped past old_n stays where it was (mremap
  // moves or resizes old_n bytes only).
  const std::size_t moved = whole_pages(old_n) < mapped ? whole_pages(old_n) : mapped;
  if (moved < mapped) remember(start + moved, mapped - moved);
  if (remember(reinterpret_cast<std::uintptr_t>(p), whole_pages(n))) {
    pfs_memory_owner owner;
    pfs_memory_realloc(k, moved, whole_pages(n), &owner);
  } else {
    pfs_memory_free(k, moved, 0);
  }
  return p;
}

}  // extern "C"
