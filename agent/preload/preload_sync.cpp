// The interposed pthread mutex, rwlock and condition functions (and pthread_create):
// a lock is tried first, timed from before the try; see preload.cpp.
#include <errno.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <time.h>

#include <cstring>

#include "agent/preload/preload_real.h"

namespace pfs::preload {
namespace {

[[gnu::noinline, gnu::cold]] sync_instance* first_use(sync_kind kind, const void* object,
                                                      const void* caller) {
  const bool was_busy = tls.busy;
  tls.busy = true;
  errno_keeper keep;
  sync_instance* s = instance_on_first_use(kind, object, caller);
  tls.busy = was_busy;
  return s;
}

inline sync_instance* instance_of(sync_kind kind, const void* object, const void* caller) {
  sync_instance* s = find_instance(kind, object);
  if (s == nullptr) [[unlikely]]
    s = first_use(kind, object, caller);
  return s;
}

[[gnu::noinline, gnu::cold]] void on_init(sync_kind kind, const void* object, const void* caller) {
  busy_scope busy;
  errno_keeper keep;
  instance_on_init(kind, object, caller);
}

[[gnu::noinline, gnu::cold]] void on_destroy(sync_kind kind, const void* object) {
  busy_scope busy;
  errno_keeper keep;
  instance_on_destroy(kind, object);
}

inline bool acquired(int rc) { return rc == 0 || rc == EOWNERDEAD; }

// The rest of a lock that the trylock did not get: a timed wait until the real
// blocking call returns. Out of line (the uncontended path stays small).
template <sync_kind Kind, class Block>
[[gnu::noinline]] int contended(wait_locker& l, const char* source, Block block) {
  {
    errno_keeper keep;
    start_contended(l, source, 0);
  }
  tls.busy = false;
  const int rc = block();
  tls.busy = true;
  {
    errno_keeper keep;
    if constexpr (Kind == kMutex)
      end_mutex_wait(l, acquired(rc) ? 0 : rc);
    else
      end_rwlock_wait(l, acquired(rc) ? 0 : rc);
  }
  tls.busy = false;
  return rc;
}

// The instant wait of a lock taken (or a trylock tried) without blocking.
template <sync_kind Kind>
[[gnu::always_inline]] inline void instant(wait_locker& l, int rc, const char* source) {
  if (traced(l)) [[unlikely]] {
    errno_keeper keep;  // the trace file is written with write()
    if constexpr (Kind == kMutex)
      mutex_instant(l, acquired(rc), source, 0, true);
    else
      rwlock_instant(l, acquired(rc), source, 0, true);
    return;
  }
  // The thread's own statistics of the acquisition wait for its release
  // (release_done): the critical section does not pay for them.
  if constexpr (Kind == kMutex)
    mutex_instant(l, acquired(rc), source, 0, true);
  else
    rwlock_instant(l, acquired(rc), source, 0, true);
}

// After a real unlock: the deferred statistics of the thread's acquisition. Not
// while the agent itself runs (its own locks): it may be in the middle of
// writing the same statistics.
inline void release_done() {
  if (!tls.busy) complete_deferred(tls_context);
}

// The instance's class is enabled: the instrument-off path is a lookup and the
// real call, nothing more.
inline bool class_enabled(const sync_instance* s) {
  const std::uint32_t key = load_relaxed(s->class_index);
  return key != 0 && (load_relaxed(g_hot.classes[key - 1].derived) & kFlagEnabled) != 0;
}

[[gnu::noinline, gnu::cold]] void register_thread_busy() {
  busy_scope busy;
  register_thread();
}

// lock, timedlock, clocklock; rdlock, wrlock and their timed forms. try_fn is the
// matching trylock, block the real blocking call.
//
// The trylock comes first, before anything is written: a locked instruction
// waits for every store before it to drain, so the event's stores go after it
// (and overlap with the caller's critical section).
template <sync_kind Kind, class Obj, class Try, class Block>
[[gnu::always_inline]] inline int acquire(Obj* object, const void* caller, int op, Try try_fn, Block block) {
  sync_instance* s = find_instance(Kind, object);
  if (s == nullptr) [[unlikely]] {
    s = first_use(Kind, object, caller);
    if (s == nullptr) return block();
  }
  if (!class_enabled(s)) return block();
  if (tls_context == nullptr) [[unlikely]]
    register_thread_busy();
  prefetch_event_slots();
  prefetch_for_write(&s->owner_thread_id);  // written inside (begin_wait, after the try, is late)
  // Timed from before the first try (WL#2360), taken then or not.
  const std::uint8_t timer = wait_timer_of(s);
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
  int rc = try_fn(object);
  tls.busy = true;
  if constexpr (Kind == kMutex) {
    // Not timed, taken, and nothing but counts recorded: no locker (event_path.h).
    if (timer == 0 && rc == 0 && count_mutex_acquired(s)) {
      tls.last_locked = object;
      tls.last_locked_instance = s;
      tls.busy = false;
      return 0;
    }
  }
  wait_locker l;
  if (!begin_wait(l, s, op)) [[unlikely]] {
    tls.busy = false;
    return rc != EBUSY ? rc : block();
  }
  start_timer(l, timer, start);
  const char* source = source_of(caller);
  if constexpr (Kind == kMutex) {
    tls.last_locked = object;
    tls.last_locked_instance = s;
  }
  if (rc != EBUSY) [[likely]] {
    // Taken at the first try (or an error the blocking call would give too).
    instant<Kind>(l, rc, source);
    tls.busy = false;
    return rc;
  }
  return contended<Kind>(l, source, block);
}

// A trylock: an instant wait, acquired or not.
template <sync_kind Kind, class Obj, class Try>
[[gnu::always_inline]] inline int try_acquire(Obj* object, const void* caller, int op, Try try_fn) {
  sync_instance* s = find_instance(Kind, object);
  if (s == nullptr) [[unlikely]] {
    s = first_use(Kind, object, caller);
    if (s == nullptr) return try_fn(object);
  }
  if (!class_enabled(s)) return try_fn(object);
  if (tls_context == nullptr) [[unlikely]]
    register_thread_busy();
  prefetch_event_slots();
  const std::uint8_t timer = wait_timer_of(s);
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
  const int rc = try_fn(object);
  tls.busy = true;
  wait_locker l;
  if (begin_wait(l, s, op)) [[likely]] {
    start_timer(l, timer, start);
    const char* source = source_of(caller);
    if constexpr (Kind == kMutex) {
      tls.last_locked = object;
      tls.last_locked_instance = s;
    }
    instant<Kind>(l, rc, source);
  }
  tls.busy = false;
  return rc;
}

template <class Wait>
int cond_wait_common(pthread_cond_t* cond, pthread_mutex_t* mutex, const void* caller, int op, Wait wait) {
  if (!should_record()) return wait();
  tls.busy = true;
  sync_instance* c = instance_of(kCond, cond, caller);
  sync_instance* m = find_instance(kMutex, mutex);
  wait_locker l;
  if (c == nullptr || (ensure_thread(), !begin_wait(l, c, op))) {
    tls.busy = false;
    return wait();
  }
  {
    errno_keeper keep;
    start_running(l, source_of(caller), 0);
  }
  // The mutex is released while the thread waits, and taken again (inside the C
  // library, with no call the interposer sees) before the wait returns.
  l.cond_mutex = m;
  if (m != nullptr) unlock_mutex(m);
  complete_deferred(l.thread);  // the mutex is released inside the wait
  tls.busy = false;
  const int rc = wait();
  tls.busy = true;
  {
    errno_keeper keep;
    // Signalled (not timed out): by the last thread that signalled the condition.
    if (rc == 0) l.event.blocking_thread_id = load_relaxed(c->owner_thread_id);
    if (m != nullptr) set_owner(l, *m);
    end_wait(l, true);
  }
  tls.busy = false;
  return rc;
}

}  // namespace
}  // namespace pfs::preload

// ---------------------------------------------------------------------------
// The interposed functions.

using namespace pfs::preload;

// init and destroy of every kind: the real call, then the instance (on success).
template <class Object, class Attr>
int init_object(sync_kind kind, int (*init)(Object*, const Attr*), Object* object, const Attr* attr,
                const void* caller) {
  const int rc = init(object, attr);
  if (rc == 0 && should_record()) on_init(kind, object, caller);
  return rc;
}
template <class Object>
int destroy_object(sync_kind kind, int (*destroy)(Object*), Object* object) {
  const int rc = destroy(object);
  if (rc == 0 && should_record()) on_destroy(kind, object);
  return rc;
}

// Mutexes
PFS_EXPORT int pthread_mutex_init(pthread_mutex_t* m, const pthread_mutexattr_t* attr) noexcept {
  return init_object(kMutex, real.mutex_init, m, attr, CALLER);
}
PFS_EXPORT int pthread_mutex_destroy(pthread_mutex_t* m) noexcept {
  return destroy_object(kMutex, real.mutex_destroy, m);
}
PFS_EXPORT [[gnu::flatten]] int pthread_mutex_lock(pthread_mutex_t* m) noexcept {
  if (!should_record()) return real.mutex_lock(m);
  return acquire<kMutex>(m, CALLER, PFS_OP_LOCK, real.mutex_trylock, [m] { return real.mutex_lock(m); });
}
PFS_EXPORT [[gnu::flatten]] int pthread_mutex_trylock(pthread_mutex_t* m) noexcept {
  if (!should_record()) return real.mutex_trylock(m);
  return try_acquire<kMutex>(m, CALLER, PFS_OP_TRY_LOCK, real.mutex_trylock);
}
PFS_EXPORT int pthread_mutex_timedlock(pthread_mutex_t* m, const timespec* at) noexcept {
  auto fn = get(real.mutex_timedlock);
  if (fn == nullptr) return real.mutex_lock(m);  // only while dlsym itself runs
  if (!should_record()) return fn(m, at);
  return acquire<kMutex>(m, CALLER, PFS_OP_LOCK, real.mutex_trylock, [=] { return fn(m, at); });
}
PFS_EXPORT int pthread_mutex_clocklock(pthread_mutex_t* m, clockid_t clock, const timespec* at) noexcept {
  auto fn = get(real.mutex_clocklock);
  if (fn == nullptr) return real.mutex_lock(m);
  if (!should_record()) return fn(m, clock, at);
  return acquire<kMutex>(m, CALLER, PFS_OP_LOCK, real.mutex_trylock, [=] { return fn(m, clock, at); });
}
PFS_EXPORT int pthread_mutex_unlock(pthread_mutex_t* m) noexcept {
  if (should_record()) {
    sync_instance* s = tls.last_locked_instance;
    if (tls.last_locked != m || s == nullptr ||
        pfs::layout::load_relaxed(s->identity) != reinterpret_cast<std::uintptr_t>(m)) [[unlikely]]
      s = find_instance(kMutex, m);
    if (s != nullptr) pfs::detail::unlock_mutex(s);
  }
  const int rc = real.mutex_unlock(m);
  release_done();
  return rc;
}

// Rwlocks
PFS_EXPORT int pthread_rwlock_init(pthread_rwlock_t* rw, const pthread_rwlockattr_t* attr) noexcept {
  return init_object(kRwlock, real.rwlock_init, rw, attr, CALLER);
}
PFS_EXPORT int pthread_rwlock_destroy(pthread_rwlock_t* rw) noexcept {
  return destroy_object(kRwlock, real.rwlock_destroy, rw);
}
PFS_EXPORT [[gnu::flatten]] int pthread_rwlock_rdlock(pthread_rwlock_t* rw) noexcept {
  if (!should_record()) return real.rwlock_rdlock(rw);
  return acquire<kRwlock>(rw, CALLER, PFS_OP_READ_LOCK, real.rwlock_tryrdlock,
                          [rw] { return real.rwlock_rdlock(rw); });
}
PFS_EXPORT [[gnu::flatten]] int pthread_rwlock_wrlock(pthread_rwlock_t* rw) noexcept {
  if (!should_record()) return real.rwlock_wrlock(rw);
  return acquire<kRwlock>(rw, CALLER, PFS_OP_WRITE_LOCK, real.rwlock_trywrlock,
                          [rw] { return real.rwlock_wrlock(rw); });
}
PFS_EXPORT [[gnu::flatten]] int pthread_rwlock_tryrdlock(pthread_rwlock_t* rw) noexcept {
  if (!should_record()) return real.rwlock_tryrdlock(rw);
  return try_acquire<kRwlock>(rw, CALLER, PFS_OP_TRY_READ_LOCK, real.rwlock_tryrdlock);
}
PFS_EXPORT [[gnu::flatten]] int pthread_rwlock_trywrlock(pthread_rwlock_t* rw) noexcept {
  if (!should_record()) return real.rwlock_trywrlock(rw);
  return try_acquire<kRwlock>(rw, CALLER, PFS_OP_TRY_WRITE_LOCK, real.rwlock_trywrlock);
}
PFS_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t* rw, const timespec* at) noexcept {
  auto fn = get(real.rwlock_timedrdlock);
  if (fn == nullptr) return real.rwlock_rdlock(rw);
  if (!should_record()) return fn(rw, at);
  return acquire<kRwlock>(rw, CALLER, PFS_OP_READ_LOCK, real.rwlock_tryrdlock, [=] { return fn(rw, at); });
}
PFS_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t* rw, const timespec* at) noexcept {
  auto fn = get(real.rwlock_timedwrlock);
  if (fn == nullptr) return real.rwlock_wrlock(rw);
  if (!should_record()) return fn(rw, at);
  return acquire<kRwlock>(rw, CALLER, PFS_OP_WRITE_LOCK, real.rwlock_trywrlock, [=] { return fn(rw, at); });
}
PFS_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t* rw, clockid_t clock,
                                          const timespec* at) noexcept {
  auto fn = get(real.rwlock_clockrdlock);
  if (fn == nullptr) return real.rwlock_rdlock(rw);
  if (!should_record()) return fn(rw, clock, at);
  return acquire<kRwlock>(rw, CALLER, PFS_OP_READ_LOCK, real.rwlock_tryrdlock,
                          [=] { return fn(rw, clock, at); });
}
PFS_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t* rw, clockid_t clock,
                                          const timespec* at) noexcept {
  auto fn = get(real.rwlock_clockwrlock);
  if (fn == nullptr) return real.rwlock_wrlock(rw);
  if (!should_record()) return fn(rw, clock, at);
  return acquire<kRwlock>(rw, CALLER, PFS_OP_WRITE_LOCK, real.rwlock_trywrlock,
                          [=] { return fn(rw, clock, at); });
}
PFS_EXPORT int pthread_rwlock_unlock(pthread_rwlock_t* rw) noexcept {
  if (should_record()) {
    if (sync_instance* s = find_instance(kRwlock, rw)) pfs::detail::unlock_rwlock(s);
  }
  const int rc = real.rwlock_unlock(rw);
  release_done();
  return rc;
}

// Conditions. Before the real functions are known (only while dlsym itself
// runs): signal and broadcast do nothing and a wait returns at once, both
// allowed by POSIX (a spurious wake-up).
namespace {
int spurious_wakeup(pthread_mutex_t* m) {
  real.mutex_unlock(m);
  sched_yield();
  return real.mutex_lock(m);
}
}  // namespace

PFS_EXPORT int pthread_cond_init(pthread_cond_t* c, const pthread_condattr_t* attr) noexcept {
  auto fn = get(real.cond_init);
  if (fn == nullptr) {
    static const pthread_cond_t initializer = PTHREAD_COND_INITIALIZER;
    std::memcpy(static_cast<void*>(c), &initializer, sizeof(initializer));
    return 0;
  }
  return init_object(kCond, fn, c, attr, CALLER);
}
PFS_EXPORT int pthread_cond_destroy(pthread_cond_t* c) noexcept {
  auto fn = get(real.cond_destroy);
  if (fn == nullptr) return 0;
  return destroy_object(kCond, fn, c);
}
PFS_EXPORT int pthread_cond_wait(pthread_cond_t* c, pthread_mutex_t* m) {
  auto fn = get(real.cond_wait);
  if (fn == nullptr) return spurious_wakeup(m);
  return cond_wait_common(c, m, CALLER, PFS_OP_WAIT, [=] { return fn(c, m); });
}
PFS_EXPORT int pthread_cond_timedwait(pthread_cond_t* c, pthread_mutex_t* m, const timespec* at) {
  auto fn = get(real.cond_timedwait);
  if (fn == nullptr) return spurious_wakeup(m);
  return cond_wait_common(c, m, CALLER, PFS_OP_TIMED_WAIT, [=] { return fn(c, m, at); });
}
PFS_EXPORT int pthread_cond_clockwait(pthread_cond_t* c, pthread_mutex_t* m, clockid_t clock,
                                      const timespec* at) {
  auto fn = get(real.cond_clockwait);
  if (fn == nullptr) return spurious_wakeup(m);
  return cond_wait_common(c, m, CALLER, PFS_OP_TIMED_WAIT, [=] { return fn(c, m, clock, at); });
}
// The signaller of a condition already in use (SIGNALLING_THREAD_ID of the waits
// it ends).
inline void note_cond_signal(pthread_cond_t* c) {
  if (!should_record()) return;
  sync_instance* s = find_instance(kCond, c);
  if (s == nullptr) return;
  tls.busy = true;
  ensure_thread();
  note_signal(s);
  tls.busy = false;
}
PFS_EXPORT int pthread_cond_signal(pthread_cond_t* c) noexcept {
  auto fn = get(real.cond_signal);
  note_cond_signal(c);
  return fn != nullptr ? fn(c) : 0;
}
PFS_EXPORT int pthread_cond_broadcast(pthread_cond_t* c) noexcept {
  auto fn = get(real.cond_broadcast);
  note_cond_signal(c);
  return fn != nullptr ? fn(c) : 0;
}

// Spin locks: mutexes to performance_schema (no MySQL instrument of their own):
// class wait/synch/mutex/<module>/<function that called pthread_spin_init>, the
// same try-first timing and owner as a mutex. Before the real functions are known
// (only while dlsym itself runs): glibc's own algorithm on the same word.
namespace {
void* spin_object(pthread_spinlock_t* lock) { return const_cast<int*>(lock); }
int spin_trylock_of(void* object) {
  auto* lock = static_cast<pthread_spinlock_t*>(object);
  if (auto fn = real.spin_trylock) return fn(lock);
  return __atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE) == 0 ? 0 : EBUSY;
}
int spin_lock_of(pthread_spinlock_t* lock) {
  if (auto fn = get(real.spin_lock)) return fn(lock);
  while (__atomic_exchange_n(lock, 1, __ATOMIC_ACQUIRE) != 0) __builtin_ia32_pause();
  return 0;
}
}  // namespace

PFS_EXPORT int pthread_spin_init(pthread_spinlock_t* lock, int shared) noexcept {
  auto fn = get(real.spin_init);
  const int rc = fn != nullptr ? fn(lock, shared) : (*lock = 0, 0);
  if (rc == 0 && should_record()) on_init(kMutex, spin_object(lock), CALLER);
  return rc;
}
PFS_EXPORT int pthread_spin_destroy(pthread_spinlock_t* lock) noexcept {
  auto fn = get(real.spin_destroy);
  const int rc = fn != nullptr ? fn(lock) : 0;
  if (rc == 0 && should_record()) on_destroy(kMutex, spin_object(lock));
  return rc;
}
PFS_EXPORT int pthread_spin_lock(pthread_spinlock_t* lock) noexcept {
  if (!should_record()) return spin_lock_of(lock);
  get(real.spin_trylock);
  return acquire<kMutex>(spin_object(lock), CALLER, PFS_OP_LOCK, spin_trylock_of,
                         [lock] { return spin_lock_of(lock); });
}
PFS_EXPORT int pthread_spin_trylock(pthread_spinlock_t* lock) noexcept {
  get(real.spin_trylock);
  if (!should_record()) return spin_trylock_of(spin_object(lock));
  return try_acquire<kMutex>(spin_object(lock), CALLER, PFS_OP_TRY_LOCK, spin_trylock_of);
}
PFS_EXPORT int pthread_spin_unlock(pthread_spinlock_t* lock) noexcept {
  if (should_record()) {
    if (sync_instance* s = find_instance(kMutex, spin_object(lock))) pfs::detail::unlock_mutex(s);
  }
  if (auto fn = get(real.spin_unlock)) return fn(lock);
  __atomic_store_n(lock, 0, __ATOMIC_RELEASE);
  return 0;
}

// Barriers: conditions to performance_schema (a thread waits until the others
// arrive): class wait/synch/cond/<module>/<function that called
// pthread_barrier_init>, OPERATION "wait", from arrival to release; no mutex.
namespace {
template <class Wait>
int barrier_wait_common(pthread_barrier_t* barrier, const void* caller, Wait wait) {
  if (!should_record()) return wait();
  tls.busy = true;
  sync_instance* c = instance_of(kCond, barrier, caller);
  wait_locker l;
  if (c == nullptr || (ensure_thread(), !begin_wait(l, c, PFS_OP_WAIT))) {
    tls.busy = false;
    return wait();
  }
  {
    errno_keeper keep;
    start_running(l, source_of(caller), 0);
  }
  tls.busy = false;
  const int rc = wait();
  tls.busy = true;
  {
    errno_keeper keep;
    end_wait(l, true);
  }
  tls.busy = false;
  return rc;
}
}  // namespace

PFS_EXPORT int pthread_barrier_init(pthread_barrier_t* barrier, const pthread_barrierattr_t* attr,
                                    unsigned count) noexcept {
  auto fn = get(real.barrier_init);
  if (fn == nullptr) return EAGAIN;  // only while dlsym itself runs
  const int rc = fn(barrier, attr, count);
  if (rc == 0 && should_record()) on_init(kCond, barrier, CALLER);
  return rc;
}
PFS_EXPORT int pthread_barrier_destroy(pthread_barrier_t* barrier) noexcept {
  auto fn = get(real.barrier_destroy);
  if (fn == nullptr) return EBUSY;
  const int rc = fn(barrier);
  if (rc == 0 && should_record()) on_destroy(kCond, barrier);
  return rc;
}
PFS_EXPORT int pthread_barrier_wait(pthread_barrier_t* barrier) noexcept {
  auto fn = get(real.barrier_wait);
  if (fn == nullptr) return EINVAL;
  return barrier_wait_common(barrier, CALLER, [=] { return fn(barrier); });
}

// Threads: the creating thread becomes the new thread's PARENT_THREAD_ID. Not in
// sanitizer builds: their runtime comes first in LD_PRELOAD, its pthread_create
// calls this one with its own start routine, and the trampoline would run
// before that routine has set up the sanitizer's state for the new thread.
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
PFS_EXPORT int pthread_create(pthread_t* t, const pthread_attr_t* attr, void* (*start)(void*),
                              void* arg) noexcept {
  auto fn = get(real.thread_create);
  if (fn == nullptr) return EAGAIN;  // only while dlsym itself runs
  if (!should_record()) return fn(t, attr, start, arg);
  void* a = nullptr;
  {
    tls.busy = true;
    errno_keeper keep;
    ensure_thread();
    a = spawn_trampoline_arg(start, arg, tls_context != nullptr ? tls_context->thread_id : 0);
    tls.busy = false;
  }
  if (a == nullptr) return fn(t, attr, start, arg);  // no parent then
  const int rc = fn(t, attr, spawn_trampoline, a);
  if (rc != 0) free_trampoline_arg(a);
  return rc;
}
#endif
