// POSIX semaphores under the interposer (beyond MySQL, which has no semaphore
// instrument): sem_wait, sem_timedwait, sem_clockwait and sem_trywait are waits of
// class wait/synch/sem/<module>/<function that called sem_init> (an unnamed
// semaphore, named by its init site as a mutex is by pthread_mutex_init's), or
// wait/synch/sem/<program>/<name> (a named one, by its sem_open name); first seen
// without either: wait/synch/sem/<module>/static. OPERATION 'wait', 'timed_wait'
// (sem_timedwait, sem_clockwait) and 'try_wait'; OBJECT_TYPE 'SEMAPHORE'.
// sem_post records its thread as the semaphore's last poster: the
// SIGNALLING_THREAD_ID of a wait that it ends (as a condition's signal).
//
// A semaphore in memory shared between processes (pshared 1, or a named one) is an
// instance per process: its address in that process is its identity.
//
// Behaviour as the real calls: sem_wait, sem_timedwait and sem_clockwait are
// cancellation points whether or not they block (glibc tests for cancellation
// first, and so does sem_wait here before its first try); errno (EINTR, EAGAIN,
// ETIMEDOUT, EINVAL) and the return value are the real call's.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <time.h>

#include <cstring>

#include "agent/preload/preload_real.h"

namespace pfs::preload {
namespace {

struct real_sem_functions {
  int (*init)(sem_t*, int, unsigned) = nullptr;
  int (*destroy)(sem_t*) = nullptr;
  sem_t* (*open)(const char*, int, ...) = nullptr;
  int (*close)(sem_t*) = nullptr;
  int (*wait)(sem_t*) = nullptr;
  int (*trywait)(sem_t*) = nullptr;
  int (*timedwait)(sem_t*, const timespec*) = nullptr;
  int (*clockwait)(sem_t*, clockid_t, const timespec*) = nullptr;
  int (*post)(sem_t*) = nullptr;
};
real_sem_functions real_sem;

template <class Fn>
void resolve(Fn& slot, const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) slot = reinterpret_cast<Fn>(p);
}

[[gnu::noinline, gnu::cold]] sync_instance* first_use(const sem_t* sem, const void* caller) {
  busy_scope busy;
  errno_keeper keep;
  return instance_on_first_use(kSem, sem, caller);
}

// The semaphore's instance when its class is enabled; nullptr: the real call only.
inline sync_instance* enabled_instance(const sem_t* sem, const void* caller) {
  sync_instance* s = find_instance(kSem, sem);
  if (s == nullptr) [[unlikely]] {
    s = first_use(sem, caller);
    if (s == nullptr) return nullptr;
  }
  const std::uint32_t key = load_relaxed(s->class_index);
  if (key == 0 || (load_relaxed(g_hot.classes[key - 1].derived) & kFlagEnabled) == 0) return nullptr;
  if (tls_context == nullptr) [[unlikely]] {
    busy_scope busy;
    ensure_thread();
  }
  return s;
}

// The end of a wait that blocked (or may have): a wait ended by a post is
// signalled by the semaphore's last poster (SIGNALLING_THREAD_ID).
inline void end_sem_wait(wait_locker& l, sync_instance* s, int rc) {
  errno_keeper keep;
  if (rc == 0) l.event.blocking_thread_id = load_relaxed(s->owner_thread_id);
  end_wait(l, true);  // several threads wait on one semaphore at once: shared statistics
}

// sem_timedwait, sem_clockwait (and sem_wait once its try failed): the real call
// timed from start to return. The thread is not marked busy during the call: a
// signal handler that interrupts it is recorded as any other code.
template <class Call>
int timed_call(sync_instance* s, const void* caller, int op, Call call) {
  tls.busy = true;
  wait_locker l;
  if (!begin_wait(l, s, op)) {
    tls.busy = false;
    return call();
  }
  {
    errno_keeper keep;
    start_running(l, source_of(caller), 0);
  }
  tls.busy = false;
  const int rc = call();
  tls.busy = true;
  end_sem_wait(l, s, rc);
  tls.busy = false;
  return rc;
}

// sem_wait: tried first (what glibc's sem_wait does too), timed from before the
// try; a semaphore taken at once is one instant wait, written once.
int sem_wait_recorded(sem_t* sem, sync_instance* s, const void* caller) {
  pthread_testcancel();  // a cancellation point even when it would not block (glibc's rule)
  prefetch_event_slots();
  const std::uint8_t timer = wait_timer_of(s);
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
  const int saved = errno;
  if (real_sem.trywait(sem) != 0) {
    errno = saved;  // the failed try's EAGAIN is not the caller's
    return timed_call(s, caller, PFS_OP_WAIT, [sem] { return real_sem.wait(sem); });
  }
  tls.busy = true;
  wait_locker l;
  if (begin_wait(l, s, PFS_OP_WAIT)) [[likely]] {
    start_timer(l, timer, start);
    record_instant(l, source_of(caller), 0, true);
  }
  tls.busy = false;
  return 0;
}

// sem_open's class: wait/synch/sem/<program>/<name without its leading '/'>.
pfs_key named_class(const char* name) {
  char category[48];
  program_category(category, sizeof(category));
  while (*name == '/') ++name;
  char sanitized[64];
  sanitize_symbol(*name != '\0' ? name : "unnamed", sanitized, sizeof(sanitized));
  return register_class(kKindSem, category, sanitized);
}

}  // namespace

void resolve_sem_functions() {
  resolve(real_sem.init, "sem_init");
  resolve(real_sem.destroy, "sem_destroy");
  resolve(real_sem.open, "sem_open");
  resolve(real_sem.close, "sem_close");
  resolve(real_sem.wait, "sem_wait");
  resolve(real_sem.trywait, "sem_trywait");
  resolve(real_sem.timedwait, "sem_timedwait");
  resolve(real_sem.clockwait, "sem_clockwait");
  resolve(real_sem.post, "sem_post");
}

}  // namespace pfs::preload

// ---------------------------------------------------------------------------
// The interposed functions. Before the real functions are known (only while dlsym
// itself runs, in the C library's own code that uses no semaphore): a wait is
// interrupted (EINTR, which callers retry), a try finds none (EAGAIN), and the
// rest fail with EINVAL (ENOSYS for sem_open).

using namespace pfs::preload;

namespace {
int unresolved(int error) {
  errno = error;
  return -1;
}
}  // namespace

PFS_EXPORT int sem_init(sem_t* sem, int pshared, unsigned value) noexcept {
  auto fn = get(real_sem.init);
  if (fn == nullptr) return unresolved(EINVAL);
  const int rc = fn(sem, pshared, value);
  if (rc == 0 && should_record()) {
    busy_scope busy;
    errno_keeper keep;
    instance_on_init(kSem, sem, CALLER);
  }
  return rc;
}

PFS_EXPORT int sem_destroy(sem_t* sem) noexcept {
  auto fn = get(real_sem.destroy);
  if (fn == nullptr) return unresolved(EINVAL);
  const int rc = fn(sem);
  if (rc == 0 && should_record()) {
    busy_scope busy;
    errno_keeper keep;
    instance_on_destroy(kSem, sem);
  }
  return rc;
}

// The same name opened twice in a process is the same sem_t (glibc maps it once):
// one instance. sem_close ends it (a name still open elsewhere in the process is
// then seen again on its next use, as wait/synch/sem/<module>/static).
PFS_EXPORT sem_t* sem_open(const char* name, int oflag, ...) noexcept {
  auto fn = get(real_sem.open);
  if (fn == nullptr) {
    errno = ENOSYS;
    return SEM_FAILED;
  }
  mode_t mode = 0;
  unsigned value = 0;
  if ((oflag & O_CREAT) != 0) {
    va_list ap;
    va_start(ap, oflag);
    mode = static_cast<mode_t>(va_arg(ap, unsigned));
    value = va_arg(ap, unsigned);
    va_end(ap);
  }
  sem_t* sem = (oflag & O_CREAT) != 0 ? fn(name, oflag, mode, value) : fn(name, oflag);
  if (sem != SEM_FAILED && should_record()) {
    busy_scope busy;
    errno_keeper keep;
    instance_with_class(kSem, sem, named_class(name));
  }
  return sem;
}

PFS_EXPORT int sem_close(sem_t* sem) noexcept {
  auto fn = get(real_sem.close);
  if (fn == nullptr) return unresolved(EINVAL);
  if (should_record()) {  // before: after a successful close the address may be mapped again
    busy_scope busy;
    errno_keeper keep;
    instance_on_destroy(kSem, sem);
  }
  return fn(sem);
}

PFS_EXPORT int sem_wait(sem_t* sem) {
  auto fn = get(real_sem.wait);
  if (fn == nullptr || real_sem.trywait == nullptr) return unresolved(EINTR);
  if (!should_record()) return fn(sem);
  sync_instance* s = enabled_instance(sem, CALLER);
  if (s == nullptr) return fn(sem);
  return sem_wait_recorded(sem, s, CALLER);
}

PFS_EXPORT int sem_trywait(sem_t* sem) noexcept {
  auto fn = get(real_sem.trywait);
  if (fn == nullptr) return unresolved(EAGAIN);
  if (!should_record()) return fn(sem);
  sync_instance* s = enabled_instance(sem, CALLER);
  if (s == nullptr) return fn(sem);
  prefetch_event_slots();
  const std::uint8_t timer = wait_timer_of(s);
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
  const int rc = fn(sem);
  tls.busy = true;
  wait_locker l;
  if (begin_wait(l, s, PFS_OP_TRY_WAIT)) [[likely]] {
    errno_keeper keep;
    start_timer(l, timer, start);
    record_instant(l, source_of(CALLER), 0, true);
  }
  tls.busy = false;
  return rc;
}

PFS_EXPORT int sem_timedwait(sem_t* sem, const timespec* at) {
  auto fn = get(real_sem.timedwait);
  if (fn == nullptr) return unresolved(EINTR);
  if (!should_record()) return fn(sem, at);
  sync_instance* s = enabled_instance(sem, CALLER);
  if (s == nullptr) return fn(sem, at);
  return timed_call(s, CALLER, PFS_OP_TIMED_WAIT, [=] { return fn(sem, at); });
}

PFS_EXPORT int sem_clockwait(sem_t* sem, clockid_t clock, const timespec* at) {
  auto fn = get(real_sem.clockwait);
  if (fn == nullptr) return unresolved(EINTR);
  if (!should_record()) return fn(sem, clock, at);
  sync_instance* s = enabled_instance(sem, CALLER);
  if (s == nullptr) return fn(sem, clock, at);
  return timed_call(s, CALLER, PFS_OP_TIMED_WAIT, [=] { return fn(sem, clock, at); });
}

// The poster, for SIGNALLING_THREAD_ID of the waits it ends; nothing else.
PFS_EXPORT int sem_post(sem_t* sem) noexcept {
  auto fn = get(real_sem.post);
  if (fn == nullptr) return unresolved(EINVAL);
  if (should_record()) {
    if (sync_instance* s = find_instance(kSem, sem)) {
      if (tls_context != nullptr) [[likely]]
        pfs::layout::store_relaxed(s->owner_thread_id, tls_context->thread_id);
    }
  }
  return fn(sem);
}
