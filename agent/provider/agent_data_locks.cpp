// Data locks (MySQL 8.0's psi_data_lock.h): the rows of data_locks and
// data_lock_waits. MySQL's engines answer those tables through an inspector at
// query time; here the reader is another process, so the program's lock manager
// writes each lock into the region while it exists (kArrayDataLocks) and each
// wait between two locks (kArrayDataLockWaits).
//
// Records are taken from a process-local stack of free indexes under a small
// mutex (held for a pop or a push, never while a record is written), so a
// create+destroy pair costs two uncontended lock/unlock pairs plus the record's
// texts (bench/bench_data_locks.cpp). A record is written while dirty and
// published allocated with a new version (region_layout.h's pfs_lock rules);
// LOCK_STATUS alone changes while it is allocated, under the record's seq. A wait
// names its two locks by index and version, so a wait whose lock was freed or
// reused is not shown.
#include <cstring>
#include <mutex>
#include <new>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/pfs_c.h"
#include "agent/region/lock_layout.h"

namespace pfs::detail {
namespace {

// Free indexes of one array (0-based), a stack.
struct free_stack {
  std::uint32_t* items = nullptr;
  std::uint32_t size = 0;
  std::uint32_t capacity = 0;
};

struct data_lock_state {
  std::mutex& mutex = fork_locked().data_locks;  // guards the two stacks; a leaf, held for a pop or a push
  data_lock_record* locks = nullptr;
  data_lock_wait_record* waits = nullptr;
  free_stack free_locks;
  free_stack free_waits;
};
data_lock_state* g_data_locks = nullptr;  // made once, kept (a restarted agent refills it)

void refill(free_stack& f, std::uint32_t count) {
  delete[] f.items;
  f = free_stack{};
  if (count == 0) return;
  f.items = new (std::nothrow) std::uint32_t[count];
  if (f.items == nullptr) return;
  f.capacity = count;
  for (std::uint32_t i = 0; i < count; ++i) f.items[i] = count - 1 - i;  // index 0 on top
  f.size = count;
}

// A free index, or UINT32_MAX when the array is full.
std::uint32_t take(free_stack& f) {
  std::lock_guard<std::mutex> guard(g_data_locks->mutex);
  return f.size == 0 ? UINT32_MAX : f.items[--f.size];
}

void give_back(free_stack& f, std::uint32_t index) {
  std::lock_guard<std::mutex> guard(g_data_locks->mutex);
  if (f.size < f.capacity) f.items[f.size++] = index;
}

bool fits(const char* s, std::size_t cap) { return s == nullptr || strnlen(s, cap) < cap; }
bool required(const char* s, std::size_t cap) { return s != nullptr && *s != '\0' && fits(s, cap); }

// Byte by byte with relaxed stores: a reader may copy the record meanwhile (it
// then drops the copy, the lock word or seq having moved). The text and its NUL
// only: readers stop at the NUL, so what an earlier lock left after it is never
// read (a record's 800 bytes of texts are mostly empty).
template <std::size_t N>
void write_text(char (&dst)[N], const char* src) {
  const std::size_t n = src == nullptr ? 0 : strnlen(src, N - 1);  // cut: LOCK_DATA only
  for (std::size_t i = 0; i < n; ++i) store_relaxed(dst[i], src[i]);
  store_relaxed(dst[n], '\0');
}

bool usable() { return g_agent != nullptr && g_data_locks != nullptr && agent_running(); }

data_lock_record* record_of(pfs_data_lock* lock) { return reinterpret_cast<data_lock_record*>(lock); }

std::uint32_t index_of(const data_lock_record* r) {
  return static_cast<std::uint32_t>(r - g_data_locks->locks);
}

}  // namespace

void lock_data_lock_registry(bool lock) {
  if (g_data_locks == nullptr) return;
  if (lock)
    g_data_locks->mutex.lock();
  else
    g_data_locks->mutex.unlock();
}

void init_data_locks(agent_state& a) {
  if (g_data_locks == nullptr) g_data_locks = new (std::nothrow) data_lock_state;
  if (g_data_locks == nullptr) return;
  std::lock_guard<std::mutex> guard(g_data_locks->mutex);
  g_data_locks->locks = a.region.array<data_lock_record>(kArrayDataLocks);
  g_data_locks->waits = a.region.array<data_lock_wait_record>(kArrayDataLockWaits);
  refill(g_data_locks->free_locks,
         g_data_locks->locks == nullptr ? 0 : static_cast<std::uint32_t>(a.region.count(kArrayDataLocks)));
  refill(g_data_locks->free_waits, g_data_locks->waits == nullptr
                                       ? 0
                                       : static_cast<std::uint32_t>(a.region.count(kArrayDataLockWaits)));
}

}  // namespace pfs::detail

using namespace pfs::detail;

extern "C" {

pfs_data_lock* pfs_data_lock_create(const pfs_data_lock_desc* d) {
  if (g_agent == nullptr) pfs_init_from_env();  // as the registrations: PFS_REGION starts it
  if (!usable() || d == nullptr || !region_attached()) return nullptr;
  if (!required(d->engine, kDataLockEngineLen) || !required(d->engine_lock_id, kDataLockIdLen) ||
      !fits(d->object_schema, kDataLockNameLen) || !fits(d->object_name, kDataLockNameLen) ||
      !fits(d->partition_name, kDataLockNameLen) || !fits(d->subpartition_name, kDataLockNameLen) ||
      !fits(d->index_name, kDataLockNameLen) || !required(d->lock_type, kDataLockWordLen) ||
      !required(d->lock_mode, kDataLockWordLen) || !required(d->lock_status, kDataLockWordLen))
    return nullptr;
  const std::uint32_t index = take(g_data_locks->free_locks);
  if (index == UINT32_MAX) {
    bump_lost(kLostDataLocks);
    return nullptr;
  }
  data_lock_record& r = g_data_locks->locks[index];
  std::uint64_t thread_id = d->thread_id;
  std::uint64_t event_id = d->event_id;
  if (thread_id == 0) {
    const thread_context* t = current_thread();
    if (t != nullptr && t->thread_id != 0) {
      thread_id = t->thread_id;
      if (event_id == 0) event_id = t->next_event_id;  // PFS_thread::m_event_id, as InnoDB reads it
    }
  }
  const std::uint32_t word = load_relaxed(r.lock);
  store_relaxed(r.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  store_relaxed(r.seq, std::uint32_t{0});
  store_relaxed(r.transaction_id, d->engine_transaction_id);
  store_relaxed(r.thread_id, thread_id);
  store_relaxed(r.event_id, thread_id == 0 ? std::uint64_t{0} : event_id);
  const void* identity = d->object_instance != nullptr ? d->object_instance : &r;
  store_relaxed(r.identity, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(identity)));
  write_text(r.engine, d->engine);
  write_text(r.engine_lock_id, d->engine_lock_id);
  write_text(r.object_schema, d->object_schema);
  write_text(r.object_name, d->object_name);
  write_text(r.partition_name, d->partition_name);
  write_text(r.subpartition_name, d->subpartition_name);
  write_text(r.index_name, d->index_name);
  write_text(r.lock_type, d->lock_type);
  write_text(r.lock_mode, d->lock_mode);
  write_text(r.lock_status, d->lock_status);
  write_text(r.lock_data, d->lock_data);
  store_release(r.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
  return reinterpret_cast<pfs_data_lock*>(&r);
}

void pfs_data_lock_set_status(pfs_data_lock* lock, const char* status) {
  if (lock == nullptr || g_data_locks == nullptr || !required(status, kDataLockWordLen)) return;
  data_lock_record& r = *record_of(lock);
  const std::uint32_t seq = load_relaxed(r.seq) | 1u;
  store_relaxed(r.seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  write_text(r.lock_status, status);
  store_release(r.seq, seq + 1);
}

void pfs_data_lock_destroy(pfs_data_lock* lock) {
  if (lock == nullptr || g_data_locks == nullptr) return;
  data_lock_record& r = *record_of(lock);
  const std::uint32_t word = load_relaxed(r.lock);
  if ((word & kStateMask) != kStateAllocated) return;  // destroyed twice
  store_release(r.lock, (word & ~kStateMask) | kStateFree);
  give_back(g_data_locks->free_locks, index_of(&r));
}

pfs_data_lock_wait* pfs_data_lock_wait_create(pfs_data_lock* requesting, pfs_data_lock* blocking) {
  if (requesting == nullptr || blocking == nullptr || requesting == blocking || !usable()) return nullptr;
  const std::uint32_t req_word = load_relaxed(record_of(requesting)->lock);
  const std::uint32_t blk_word = load_relaxed(record_of(blocking)->lock);
  if ((req_word & kStateMask) != kStateAllocated || (blk_word & kStateMask) != kStateAllocated)
    return nullptr;
  const std::uint32_t index = take(g_data_locks->free_waits);
  if (index == UINT32_MAX) {
    bump_lost(kLostDataLockWaits);
    return nullptr;
  }
  data_lock_wait_record& w = g_data_locks->waits[index];
  const std::uint32_t word = load_relaxed(w.lock);
  store_relaxed(w.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  store_relaxed(w.requesting_index, index_of(record_of(requesting)) + 1);
  store_relaxed(w.requesting_version, req_word & ~kStateMask);
  store_relaxed(w.blocking_index, index_of(record_of(blocking)) + 1);
  store_relaxed(w.blocking_version, blk_word & ~kStateMask);
  store_release(w.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
  return reinterpret_cast<pfs_data_lock_wait*>(&w);
}

void pfs_data_lock_wait_destroy(pfs_data_lock_wait* wait) {
  if (wait == nullptr || g_data_locks == nullptr) return;
  auto& w = *reinterpret_cast<data_lock_wait_record*>(wait);
  const std::uint32_t word = load_relaxed(w.lock);
  if ((word & kStateMask) != kStateAllocated) return;
  store_release(w.lock, (word & ~kStateMask) | kStateFree);
  give_back(g_data_locks->free_waits, static_cast<std::uint32_t>(&w - g_data_locks->waits));
}

}  // extern "C"
