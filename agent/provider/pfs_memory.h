// Memory instrumentation for C++ (MySQL's PSI memory service): which part of the
// program holds how many bytes, per thread and in all, with high-water marks
// (memory_summary_by_thread_by_event_name, memory_summary_global_by_event_name).
//
//   constinit pfs::memory_class cache_memory{"app", "cache"};   // memory/app/cache
//   std::vector<int, pfs::allocator<int>> v{pfs::allocator<int>(cache_memory)};
//   void* p = pfs::memory::allocate(cache_memory, 4096);       // malloc, counted
//   pfs::memory::deallocate(p);
//
// A class registers on its first use (which starts the agent from PFS_REGION, as
// any registration does); when the agent is off, blocks are allocated and freed
// as usual and not counted. Sits
// on the C ABI (pfs_c.h), so it compiles to plain allocation under
// PFS_NO_INSTRUMENTATION.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

#include "agent/provider/pfs_c.h"

namespace pfs {

class memory_class {
 public:
  // flags: PFS_MEMORY_GLOBAL_ONLY, PFS_MEMORY_CONTROLLED (pfs_c.h).
  constexpr memory_class(const char* category, const char* name, unsigned flags = 0)
      : category_(category), name_(name), flags_(flags) {}
  memory_class(const memory_class&) = delete;
  memory_class& operator=(const memory_class&) = delete;

  // The class's key: registered on the first call while the agent runs; 0 when it
  // does not (then asked again next time).
  pfs_key key() const {
    pfs_key k = key_.load(std::memory_order_acquire);
    if (k != 0) return k;
    k = pfs_register_memory(category_, name_, flags_);  // starts the agent from PFS_REGION
    key_.store(k, std::memory_order_release);
    return k;
  }

 private:
  const char* category_;
  const char* name_;
  unsigned flags_;
  mutable std::atomic<pfs_key> key_{0};
};

namespace memory {

namespace detail {
// In front of every block of allocate(): what free and claim need. 32 bytes keep
// the block aligned for any fundamental type.
struct alignas(std::max_align_t) block_header {
  pfs_key key;
  std::uint32_t magic;
  std::uint64_t size;
  pfs_memory_owner owner;
};
inline constexpr std::uint32_t kBlockMagic = 0x70667362;  // "pfsb"
inline block_header* header_of(void* p) { return static_cast<block_header*>(p) - 1; }
}  // namespace detail

// malloc(size), counted in c; nullptr when malloc fails (nothing counted).
inline void* allocate(const memory_class& c, std::size_t size) {
  auto* h = static_cast<detail::block_header*>(std::malloc(sizeof(detail::block_header) + size));
  if (h == nullptr) return nullptr;
  h->magic = detail::kBlockMagic;
  h->size = size;
  h->key = pfs_memory_alloc(c.key(), size, &h->owner);
  return h + 1;
}

// Frees a block of allocate() or reallocate(); nullptr does nothing.
inline void deallocate(void* p) {
  if (p == nullptr) return;
  detail::block_header* h = detail::header_of(p);
  pfs_memory_free(h->key, h->size, h->owner);
  h->magic = 0;
  std::free(h);
}

// realloc of a block of allocate() (nullptr p: not counted, use allocate). On
// failure the old block stays, counted as it was.
inline void* reallocate(void* p, std::size_t size) {
  if (p == nullptr) return nullptr;
  detail::block_header* h = detail::header_of(p);
  const detail::block_header old = *h;
  auto* n = static_cast<detail::block_header*>(std::realloc(h, sizeof(detail::block_header) + size));
  if (n == nullptr) return nullptr;
  n->size = size;
  n->key = pfs_memory_realloc(old.key, old.size, size, &n->owner);
  if (n->key == 0 && old.key != 0) n->owner = 0;
  return n + 1;
}

// The calling thread takes over a block another thread allocated (MySQL's
// memory_claim): it leaves its old owner's row and joins this thread's.
inline void claim(void* p) {
  if (p == nullptr) return;
  detail::block_header* h = detail::header_of(p);
  if (h->key != 0) h->key = pfs_memory_claim(h->key, h->size, &h->owner);
}

}  // namespace memory

// A standard allocator that counts its blocks in a memory class:
//   std::vector<int, pfs::allocator<int>> v{pfs::allocator<int>(cache_memory)};
// Each block carries the same 32-byte header as allocate()'s, so its free is
// counted exactly when its allocation was.
template <class T>
class allocator {
 public:
  using value_type = T;
  explicit allocator(const memory_class& c) noexcept : class_(&c) {}
  template <class U>
  allocator(const allocator<U>& other) noexcept : class_(other.memory()) {}

  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= alignof(memory::detail::block_header),
                  "over-aligned types are not supported");
    if (n > (static_cast<std::size_t>(-1) - sizeof(memory::detail::block_header)) / sizeof(T))
      throw std::bad_array_new_length();
    auto* h = static_cast<memory::detail::block_header*>(
        ::operator new(sizeof(memory::detail::block_header) + n * sizeof(T)));
    h->magic = memory::detail::kBlockMagic;
    h->size = n * sizeof(T);
    h->key = pfs_memory_alloc(class_->key(), h->size, &h->owner);
    return reinterpret_cast<T*>(h + 1);
  }
  void deallocate(T* p, std::size_t) noexcept {
    memory::detail::block_header* h = memory::detail::header_of(p);
    pfs_memory_free(h->key, h->size, h->owner);
    ::operator delete(h);
  }
  const memory_class* memory() const noexcept { return class_; }

  template <class U>
  bool operator==(const allocator<U>& other) const noexcept {
    return class_ == other.memory();
  }

 private:
  const memory_class* class_;
};

}  // namespace pfs
