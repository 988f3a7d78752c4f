// The C ABI of the event path (the inline functions of event_path.h) and the
// event path's rare, out-of-line step: claiming a history_long batch.
#include "agent/provider/internal/agent_internal.h"

namespace pfs::detail {
namespace {

static_assert(sizeof(wait_locker) <= sizeof(pfs_wait_locker), "pfs_wait_locker is too small");
static_assert(alignof(wait_locker) <= alignof(pfs_wait_locker));

wait_locker& as_locker(pfs_wait_locker* l) { return *reinterpret_cast<wait_locker*>(l); }

}  // namespace

// history_long is filled in batches of slots that one thread owns at a time, so
// threads do not share a cache line per event (a global index per event triples
// the cost with two threads); "the latest N events" stays true to within one
// batch per thread.
bool claim_batch(thread_context& t) {
  agent_state& a = *g_agent;
  if (t.has_batch) store_release(a.batches[t.batch].owner, std::uint64_t{0});
  t.has_batch = false;
  // A few tries: a batch still being filled by a slow thread is skipped.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::uint64_t b =
        __atomic_fetch_add(&a.header->history_long_next_batch, 1, __ATOMIC_RELAXED) % a.batch_count;
    std::uint64_t expected = 0;
    if (__atomic_compare_exchange_n(&a.batches[b].owner, &expected, t.thread_id, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      t.batch = b;
      t.batch_next = static_cast<std::uint32_t>(b * a.history_long_batch);
      const std::uint64_t end = (b + 1) * a.history_long_batch;
      t.batch_end = static_cast<std::uint32_t>(end < a.history_long_size ? end : a.history_long_size);
      t.has_batch = true;
      return true;
    }
  }
  return false;
}

}  // namespace pfs::detail

using namespace pfs::detail;

extern "C" {

// The C ABI times every call: a lock that another thread holds at the start will
// wait for it (a try-lock does not wait: nobody blocks it). Such a wait is also
// the one lock_contention_by_instance counts (the C ABI makes no try first, so a
// wait for a lock held only by readers is not seen as contended).
int pfs_start_mutex_wait(pfs_wait_locker* locker, pfs_sync* m, int op, const char* file, unsigned line) {
  wait_locker& l = as_locker(locker);
  if (!begin_wait(l, as_instance(m), op)) return 0;
  if (op == PFS_OP_LOCK) l.contended = note_blocker(l);
  start_running(l, file, line);
  return 1;
}
void pfs_end_mutex_wait(pfs_wait_locker* locker, int rc) { end_mutex_wait(as_locker(locker), rc); }
void pfs_unlock_mutex(pfs_sync* m) {
  if (m != nullptr) unlock_mutex(as_instance(m));
}

int pfs_start_rwlock_wait(pfs_wait_locker* locker, pfs_sync* rw, int op, const char* file, unsigned line) {
  wait_locker& l = as_locker(locker);
  if (!begin_wait(l, as_instance(rw), op)) return 0;
  if (op == PFS_OP_READ_LOCK || op == PFS_OP_WRITE_LOCK) l.contended = note_blocker(l);
  start_running(l, file, line);
  return 1;
}
void pfs_end_rwlock_wait(pfs_wait_locker* locker, int rc) { end_rwlock_wait(as_locker(locker), rc); }
void pfs_unlock_rwlock(pfs_sync* rw) {
  if (rw != nullptr) unlock_rwlock(as_instance(rw));
}

int pfs_start_cond_wait(pfs_wait_locker* locker, pfs_sync* cond, pfs_sync* m, int op, const char* file,
                        unsigned line) {
  wait_locker& l = as_locker(locker);
  if (!start_wait(l, as_instance(cond), op, file, line)) return 0;
  l.cond_mutex = as_instance(m);
  // The mutex is released while the thread waits.
  if (l.cond_mutex != nullptr) unlock_mutex(l.cond_mutex);
  return 1;
}

void pfs_end_cond_wait(pfs_wait_locker* locker, int rc) {
  wait_locker& l = as_locker(locker);
  // Signalled (not timed out): by the last thread that signalled the condition.
  if (rc == 0) l.event.blocking_thread_id = load_relaxed(l.instance->owner_thread_id);
  // A timed-out wait is a wait too; the mutex is held again either way.
  if (l.cond_mutex != nullptr) set_owner(l, *l.cond_mutex);
  end_wait(l, true);
}

void pfs_signal_cond(pfs_sync* cond) { note_signal(as_instance(cond)); }
void pfs_broadcast_cond(pfs_sync* cond) { note_signal(as_instance(cond)); }

}  // extern "C"
