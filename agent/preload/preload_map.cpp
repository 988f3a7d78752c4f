// Object address -> sync_instance, one fixed-size open-addressing table per kind
// (mutex, rwlock, cond, sem), mapped at start-up.
//
// Lookups (every lock call) are lock-free: a slot holds a pointer to the
// instance, and the key is the instance's own identity field (the object's
// address), so a slot is one word and there is no key/value pair to tear.
// Inserts and removals (init, destroy, first use: rare) take a per-table spin
// lock that is held only for the probe and the agent's lock-free instance
// allocation: no system call, no allocation, no call into the program.
#include <sched.h>
#include <sys/mman.h>

#include "agent/preload/preload_internal.h"
#include "agent/provider/internal/preload_api.h"

namespace pfs::preload {
namespace {

using namespace pfs::detail;

constexpr instrument_kind kInstrumentKind[kSyncKinds] = {kKindMutex, kKindRwlock, kKindCond, kKindSem};

class map_lock {
 public:
  explicit map_lock(object_map& m) : m_(m) {
    for (unsigned spins = 0; m_.lock.exchange(true, std::memory_order_acquire); ++spins) {
      if (spins < 64)
        __builtin_ia32_pause();
      else
        sched_yield();
    }
  }
  ~map_lock() { m_.lock.store(false, std::memory_order_release); }
  map_lock(const map_lock&) = delete;
  map_lock& operator=(const map_lock&) = delete;

 private:
  object_map& m_;
};

// Under the map lock: removes the object's slot; returns its instance.
sync_instance* remove_locked(object_map& m, std::uintptr_t addr) {
  std::uint32_t i = map_home(m, addr);
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & m.mask) {
    sync_instance* p = m.slots[i].load(std::memory_order_relaxed);
    if (p == nullptr) return nullptr;
    if (map_holds(p, addr)) {
      m.slots[i].store(kTombstone, std::memory_order_release);
      m.used.fetch_sub(1, std::memory_order_relaxed);
      return p;
    }
  }
  return nullptr;
}

// Under the map lock, after remove_locked of the same address: first free slot.
bool insert_locked(object_map& m, std::uintptr_t addr, sync_instance* s) {
  std::uint32_t i = map_home(m, addr);
  for (std::uint32_t probe = 0; probe < kMaxProbe; ++probe, i = (i + 1) & m.mask) {
    sync_instance* p = m.slots[i].load(std::memory_order_relaxed);
    if (p == nullptr || p == kTombstone) {
      m.slots[i].store(s, std::memory_order_release);
      m.used.fetch_add(1, std::memory_order_relaxed);
      return true;
    }
  }
  return false;
}

// Under the map lock: creates and maps an instance; nullptr if lost.
sync_instance* create_locked(object_map& m, sync_kind kind, pfs_key key, const void* object) {
  sync_instance* s = create_instance(kInstrumentKind[kind], key, object);  // counts instances lost
  if (s == nullptr) {
    m.full.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  if (!insert_locked(m, reinterpret_cast<std::uintptr_t>(object), s)) {
    destroy_instance(s);
    bump_lost(kind == kMutex    ? kLostMutexInstances
              : kind == kRwlock ? kLostRwlockInstances
              : kind == kSem    ? kLostSemInstances
                                : kLostCondInstances);
    m.full_count.fetch_add(1, std::memory_order_relaxed);
    m.full.store(true, std::memory_order_relaxed);
    return nullptr;
  }
  return s;
}

}  // namespace

constinit object_map g_maps[kSyncKinds];

void lock_maps_for_fork(bool lock) {
  for (object_map& m : g_maps) {
    if (!lock) {
      m.lock.store(false, std::memory_order_release);
      continue;
    }
    for (unsigned spins = 0; m.lock.exchange(true, std::memory_order_acquire); ++spins)
      if (spins >= 64) sched_yield();
  }
}

sync_instance* instance_on_first_use(sync_kind kind, const void* object, const void* caller) {
  object_map& m = g_maps[kind];
  if (m.slots == nullptr || m.full.load(std::memory_order_relaxed)) return nullptr;
  const pfs_key key = static_class(caller, kind);  // outside the lock: may resolve symbols
  if (key == 0) return nullptr;
  map_lock guard(m);
  if (sync_instance* s = find_instance(kind, object)) return s;  // another thread won
  return create_locked(m, kind, key, object);
}

void instance_on_init(sync_kind kind, const void* object, const void* caller) {
  object_map& m = g_maps[kind];
  if (m.slots == nullptr) return;
  const pfs_key key = init_class(caller, kind);
  sync_instance* old = nullptr;
  {
    map_lock guard(m);
    // Re-initialized without a destroy (or memory reused after a free): the old
    // instance goes, the object starts afresh under its init site's class.
    old = remove_locked(m, reinterpret_cast<std::uintptr_t>(object));
    if (old != nullptr) {
      destroy_instance(old);
      m.full.store(false, std::memory_order_relaxed);
    }
    if (key != 0 && !m.full.load(std::memory_order_relaxed)) create_locked(m, kind, key, object);
  }
}

void instance_with_class(sync_kind kind, const void* object, pfs_key key) {
  object_map& m = g_maps[kind];
  if (m.slots == nullptr || key == 0) return;
  map_lock guard(m);
  sync_instance* old = find_instance(kind, object);
  if (old != nullptr && load_relaxed(old->class_index) == key) return;
  if (old != nullptr) {
    remove_locked(m, reinterpret_cast<std::uintptr_t>(object));
    destroy_instance(old);
    m.full.store(false, std::memory_order_relaxed);
  }
  if (!m.full.load(std::memory_order_relaxed)) create_locked(m, kind, key, object);
}

void instance_on_destroy(sync_kind kind, const void* object) {
  object_map& m = g_maps[kind];
  if (m.slots == nullptr || exiting()) return;
  sync_instance* s = nullptr;
  {
    map_lock guard(m);
    s = remove_locked(m, reinterpret_cast<std::uintptr_t>(object));
    if (s != nullptr) destroy_instance(s);
  }
  if (s != nullptr) m.full.store(false, std::memory_order_relaxed);
}

bool init_maps(std::uint32_t mutexes, std::uint32_t rwlocks, std::uint32_t conds, std::uint32_t sems) {
  const std::uint32_t counts[kSyncKinds] = {mutexes, rwlocks, conds, sems};
  for (int k = 0; k < kSyncKinds; ++k) {
    object_map& m = g_maps[k];
    if (m.slots != nullptr || counts[k] == 0) continue;
    // Twice the instance array, a power of two: short probe sequences.
    std::uint32_t bits = 6;
    while ((std::uint64_t{1} << bits) < std::uint64_t{counts[k]} * 2 && bits < 26) ++bits;
    const std::size_t n = std::size_t{1} << bits;
    void* p = mmap(nullptr, n * sizeof(std::atomic<sync_instance*>), PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return false;
    m.slots = static_cast<std::atomic<sync_instance*>*>(p);  // zero-filled: every slot empty
    m.mask = static_cast<std::uint32_t>(n - 1);
    m.shift = 64 - bits;
  }
  return true;
}

map_stats stats_of(sync_kind kind) {
  return {g_maps[kind].used.load(std::memory_order_relaxed),
          g_maps[kind].full_count.load(std::memory_order_relaxed)};
}

}  // namespace pfs::preload
