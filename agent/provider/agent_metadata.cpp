// Metadata locks (MySQL 8.0's psi_mdl.h: create_metadata_lock,
// set_metadata_lock_status, destroy_metadata_lock, start_metadata_wait,
// end_metadata_wait). A lock request takes a metadata_lock_record (a row of
// metadata_locks) from its creation, PENDING, until its release; its status
// changes in place. The time it spends PENDING is a wait of class
// wait/lock/metadata/sql/mdl on the ordinary event path (event_path.h), whose
// object (kObjectMetadata) is the record at its current version.
//
// Records are taken with a compare-and-swap from free to dirty, scanning from a
// rotating hint; the caller holds the handle, so only it writes the record until
// it destroys it. A full array is counted in metadata_locks_lost (MySQL's
// metadata_locks_lost) and the handle is NULL: every later call on it does nothing.
#include <cstring>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/pfs_c.h"
#include "agent/region/lock_layout.h"

namespace pfs::detail {
namespace {

struct metadata_state {
  metadata_lock_record* records = nullptr;
  std::uint32_t count = 0;
  std::uint32_t next = 0;  // where the next search starts (relaxed: a hint)
  pfs_key key = 0;         // wait/lock/metadata/sql/mdl, set once the agent is published
};
constinit metadata_state g_mdl;

metadata_lock_record* as_record(pfs_metadata_lock* lock) {
  return reinterpret_cast<metadata_lock_record*>(lock);
}

// The class's derived flags (0 before it is registered: not enabled).
std::uint8_t metadata_flags() {
  const pfs_key key = __atomic_load_n(&g_mdl.key, __ATOMIC_ACQUIRE);
  return key == 0 ? std::uint8_t{0} : class_flags_of(key);
}

bool fits(const char* text, std::size_t cap) { return text == nullptr || strnlen(text, cap) < cap; }

metadata_lock_record* claim_record() {
  const std::uint32_t n = g_mdl.count;
  const std::uint32_t start = __atomic_fetch_add(&g_mdl.next, 1u, __ATOMIC_RELAXED);
  for (std::uint32_t k = 0; k < n; ++k) {
    metadata_lock_record& r = g_mdl.records[(start + k) % n];
    std::uint32_t word = load_relaxed(r.lock);
    if ((word & kStateMask) != kStateFree) continue;
    if (__atomic_compare_exchange_n(&r.lock, &word, (word & ~kStateMask) | kStateDirty, false,
                                    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      return &r;
  }
  return nullptr;
}

}  // namespace

void init_metadata(agent_state& a) {
  g_mdl = metadata_state{};
  g_mdl.records = a.region.array<metadata_lock_record>(kArrayMetadataLocks);
  g_mdl.count = g_mdl.records == nullptr ? 0 : a.region.header().max_metadata_locks;
}

void register_metadata_class(agent_state&) {
  const pfs_key key = register_named_class(kKindMetadata, "wait/lock/metadata/sql/mdl");
  __atomic_store_n(&g_mdl.key, key, __ATOMIC_RELEASE);
}

}  // namespace pfs::detail

using namespace pfs::detail;

extern "C" {

pfs_metadata_lock* pfs_create_metadata_lock(const void* identity, const char* object_type, const char* schema,
                                            const char* name, const char* column, int lock_type, int duration,
                                            int status, const char* file, unsigned line) {
  if (g_agent == nullptr) [[unlikely]]
    pfs_init_from_env();  // as a registration: PFS_REGION starts the agent
  if (g_agent == nullptr || !load_relaxed(g_hot.recording)) return nullptr;
  if (object_type == nullptr || *object_type == '\0' || !fits(object_type, kMdlObjectTypeLen) ||
      !fits(schema, kMdlNameLen) || !fits(name, kMdlNameLen) || !fits(column, kMdlNameLen) || lock_type < 0 ||
      lock_type >= kMdlTypeCount || duration < 0 || duration >= kMdlDurationCount || status < kMdlPending ||
      status >= kMdlStatusCount)
    return nullptr;
  // MySQL: the class's ENABLED decides whether the lock is recorded at all.
  if ((metadata_flags() & kFlagEnabled) == 0) return nullptr;
  metadata_lock_record* r = claim_record();
  if (r == nullptr) {
    bump_lost(kLostMetadataLocks);
    return nullptr;
  }
  thread_context& t = *current_thread();
  store_relaxed(r->lock_type, static_cast<std::uint8_t>(lock_type));
  store_relaxed(r->duration, static_cast<std::uint8_t>(duration));
  store_relaxed(r->status, static_cast<std::uint8_t>(status));
  store_relaxed(r->identity, static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(identity)));
  // As MySQL: the owner's current EVENT_ID (its next event's number).
  store_relaxed(r->owner_thread_id, t.thread_id);
  store_relaxed(r->owner_event_id, t.thread_id == 0 ? std::uint64_t{0} : t.next_event_id);
  store_relaxed(r->source_index, file == nullptr ? 0u : intern_source(t, file, line));
  copy_field(r->object_type, kMdlObjectTypeLen, object_type);  // lengths checked above
  copy_field(r->object_schema, kMdlNameLen, schema);
  copy_field(r->object_name, kMdlNameLen, name);
  copy_field(r->column_name, kMdlNameLen, column);
  const std::uint32_t word = load_relaxed(r->lock);
  store_release(r->lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
  return reinterpret_cast<pfs_metadata_lock*>(r);
}

void pfs_set_metadata_lock_status(pfs_metadata_lock* lock, int status) {
  if (lock == nullptr || status < kMdlPending || status >= kMdlStatusCount) return;
  store_release(as_record(lock)->status, static_cast<std::uint8_t>(status));
}

void pfs_destroy_metadata_lock(pfs_metadata_lock* lock) {
  if (lock == nullptr) return;
  metadata_lock_record* r = as_record(lock);
  // Free with the same version: a wait's object columns still name the record
  // until it is taken again (MySQL's version check in table_events_waits).
  const std::uint32_t word = load_relaxed(r->lock);
  store_release(r->lock, (word & ~kStateMask) | kStateFree);
}

int pfs_start_metadata_wait(pfs_wait_locker* locker, pfs_metadata_lock* lock, const char* file,
                            unsigned line) {
  if (locker == nullptr || lock == nullptr || !load_relaxed(g_hot.recording)) return 0;
  wait_locker& l = *reinterpret_cast<wait_locker*>(locker);
  metadata_lock_record* r = as_record(lock);
  const pfs_key key = __atomic_load_n(&g_mdl.key, __ATOMIC_ACQUIRE);
  if (key == 0) return 0;
  // No instance statistics: a metadata lock has no *_instances row.
  const auto flags = static_cast<std::uint8_t>(class_flags_of(key) & ~kFlagInstanceStats);
  if (!begin_wait_flags(l, key, flags, load_relaxed(r->identity), kOpMetadataLock)) return 0;
  wait_record& e = l.event;
  e.object_kind = kObjectMetadata;
  e.object_index = static_cast<std::uint32_t>(r - g_mdl.records) + 1;
  e.object_version = load_relaxed(r->lock) & ~kStateMask;
  start_running(l, file, line);
  return 1;
}

void pfs_end_metadata_wait(pfs_wait_locker* locker, int /*rc*/) {
  if (locker == nullptr) return;
  end_wait(*reinterpret_cast<wait_locker*>(locker), false);
}

}  // extern "C"
