// The C ABI of the event path (the inline functions of event_path.h); its
// out-of-line steps are in cold_path.cpp.
#include "agent/provider/internal/agent_internal.h"

namespace pfs::detail {
namespace {

static_assert(sizeof(wait_locker) <= sizeof(pfs_wait_locker), "pfs_wait_locker is too small");
static_assert(alignof(wait_locker) <= alignof(pfs_wait_locker));

wait_locker& as_locker(pfs_wait_locker* l) { return *reinterpret_cast<wait_locker*>(l); }

}  // namespace
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
