// libpfs_preload.so: the agent for unmodified programs.
//
//   LD_PRELOAD=build/agent/libpfs_preload.so PFS_REGION=/tmp/app.pfs PFS_INSTRUMENT='%=ON' program args
//
// Interposes the pthread mutex, rwlock and condition functions and the file io
// system call wrappers of the C library, and records their waits through the
// agent's inline event path (event_path.h, io_path.h) into the region.
//
// - Real functions: resolved with dlsym(RTLD_NEXT) (dlvsym for the condition
//   variables, GLIBC_2.3.2, the current ABI) in a constructor. Until then, and
//   while the resolution itself runs, the wrappers call the C library directly:
//   the mutex and rwlock functions through their __pthread_* aliases (bound at
//   link time), the file calls as raw system calls.
// - Reentrancy: tls.busy is set while the interposer or the agent runs on a
//   thread; calls made meanwhile (the agent's own std::mutex, its region and trace
//   files, a signal handler's write) go straight to the C library, unrecorded.
// - Locks: a lock is tried first, timed from before the try; taken at the first
//   try it is a completed wait (as pfs::mutex); otherwise the wait is timed
//   until the real blocking call returns. Return values are the real call's; the
//   trylock-first path returns the trylock's result unless it is EBUSY.
// - errno: every wrapper leaves errno as the real call set it.
// - fork: the child stops recording (it shares the parent's region mapping);
//   exec: the new image starts its own agent, which refuses a region path that a
//   live process owns (use %p in PFS_REGION for one region per process).
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/preload/preload_internal.h"
#include "agent/provider/internal/preload_api.h"

#define PFS_EXPORT extern "C" __attribute__((visibility("default")))

// The C library's own entry points, bound at link time to the exact versions
// (no dlsym needed): the fallbacks used before the constructor has run.
extern "C" {
int pfs_libc_mutex_init(pthread_mutex_t*, const pthread_mutexattr_t*);
int pfs_libc_mutex_destroy(pthread_mutex_t*);
int pfs_libc_mutex_lock(pthread_mutex_t*);
int pfs_libc_mutex_trylock(pthread_mutex_t*);
int pfs_libc_mutex_unlock(pthread_mutex_t*);
int pfs_libc_rwlock_init(pthread_rwlock_t*, const pthread_rwlockattr_t*);
int pfs_libc_rwlock_destroy(pthread_rwlock_t*);
int pfs_libc_rwlock_rdlock(pthread_rwlock_t*);
int pfs_libc_rwlock_wrlock(pthread_rwlock_t*);
int pfs_libc_rwlock_tryrdlock(pthread_rwlock_t*);
int pfs_libc_rwlock_trywrlock(pthread_rwlock_t*);
int pfs_libc_rwlock_unlock(pthread_rwlock_t*);
}
__asm__(".symver pfs_libc_mutex_init,__pthread_mutex_init@GLIBC_2.2.5");
__asm__(".symver pfs_libc_mutex_destroy,__pthread_mutex_destroy@GLIBC_2.2.5");
__asm__(".symver pfs_libc_mutex_lock,__pthread_mutex_lock@GLIBC_2.2.5");
__asm__(".symver pfs_libc_mutex_trylock,__pthread_mutex_trylock@GLIBC_2.2.5");
__asm__(".symver pfs_libc_mutex_unlock,__pthread_mutex_unlock@GLIBC_2.2.5");
__asm__(".symver pfs_libc_rwlock_init,__pthread_rwlock_init@GLIBC_2.2.5");
__asm__(".symver pfs_libc_rwlock_destroy,__pthread_rwlock_destroy@GLIBC_2.2.5");
__asm__(".symver pfs_libc_rwlock_rdlock,__pthread_rwlock_rdlock@GLIBC_2.2.5");
__asm__(".symver pfs_libc_rwlock_wrlock,__pthread_rwlock_wrlock@GLIBC_2.2.5");
__asm__(".symver pfs_libc_rwlock_tryrdlock,__pthread_rwlock_tryrdlock@GLIBC_2.2.5");
__asm__(".symver pfs_libc_rwlock_trywrlock,__pthread_rwlock_trywrlock@GLIBC_2.2.5");
__asm__(".symver pfs_libc_rwlock_unlock,__pthread_rwlock_unlock@GLIBC_2.2.5");

namespace pfs::preload {

__attribute__((tls_model("initial-exec"))) constinit thread_local thread_state tls = {false, nullptr, nullptr,
                                                                                      nullptr, nullptr};
int g_region_fd = -1;

namespace {

using namespace pfs::detail;
using pfs::layout::file_instance;

// ---------------------------------------------------------------------------
// Fallbacks: raw system calls (before start-up only).

long sys_ret(long r) { return r; }
int boot_open(const char* path, int flags, mode_t mode) {
  return static_cast<int>(sys_ret(syscall(SYS_openat, AT_FDCWD, path, flags, mode)));
}
int boot_openat(int dirfd, const char* path, int flags, mode_t mode) {
  return static_cast<int>(syscall(SYS_openat, dirfd, path, flags, mode));
}
int boot_close(int fd) { return static_cast<int>(syscall(SYS_close, fd)); }
ssize_t boot_read(int fd, void* buf, size_t n) { return syscall(SYS_read, fd, buf, n); }
ssize_t boot_write(int fd, const void* buf, size_t n) { return syscall(SYS_write, fd, buf, n); }
ssize_t boot_pread(int fd, void* buf, size_t n, off_t off) { return syscall(SYS_pread64, fd, buf, n, off); }
ssize_t boot_pwrite(int fd, const void* buf, size_t n, off_t off) {
  return syscall(SYS_pwrite64, fd, buf, n, off);
}
ssize_t boot_readv(int fd, const iovec* v, int n) { return syscall(SYS_readv, fd, v, n); }
ssize_t boot_writev(int fd, const iovec* v, int n) { return syscall(SYS_writev, fd, v, n); }
off_t boot_lseek(int fd, off_t off, int whence) { return syscall(SYS_lseek, fd, off, whence); }
int boot_fsync(int fd) { return static_cast<int>(syscall(SYS_fsync, fd)); }
int boot_fdatasync(int fd) { return static_cast<int>(syscall(SYS_fdatasync, fd)); }
int boot_rename(const char* a, const char* b) {
  return static_cast<int>(syscall(SYS_renameat, AT_FDCWD, a, AT_FDCWD, b));
}
int boot_unlink(const char* p) { return static_cast<int>(syscall(SYS_unlinkat, AT_FDCWD, p, 0)); }
int boot_dup(int fd) { return static_cast<int>(syscall(SYS_dup, fd)); }
int boot_dup2(int a, int b) {
  return a == b ? (fcntl(a, F_GETFD) < 0 ? -1 : b) : static_cast<int>(syscall(SYS_dup3, a, b, 0));
}
int boot_dup3(int a, int b, int f) { return static_cast<int>(syscall(SYS_dup3, a, b, f)); }

// ---------------------------------------------------------------------------
// The real functions.

struct real_functions {
  int (*mutex_init)(pthread_mutex_t*, const pthread_mutexattr_t*) = pfs_libc_mutex_init;
  int (*mutex_destroy)(pthread_mutex_t*) = pfs_libc_mutex_destroy;
  int (*mutex_lock)(pthread_mutex_t*) = pfs_libc_mutex_lock;
  int (*mutex_trylock)(pthread_mutex_t*) = pfs_libc_mutex_trylock;
  int (*mutex_unlock)(pthread_mutex_t*) = pfs_libc_mutex_unlock;
  int (*mutex_timedlock)(pthread_mutex_t*, const timespec*) = nullptr;
  int (*mutex_clocklock)(pthread_mutex_t*, clockid_t, const timespec*) = nullptr;
  int (*rwlock_init)(pthread_rwlock_t*, const pthread_rwlockattr_t*) = pfs_libc_rwlock_init;
  int (*rwlock_destroy)(pthread_rwlock_t*) = pfs_libc_rwlock_destroy;
  int (*rwlock_rdlock)(pthread_rwlock_t*) = pfs_libc_rwlock_rdlock;
  int (*rwlock_wrlock)(pthread_rwlock_t*) = pfs_libc_rwlock_wrlock;
  int (*rwlock_tryrdlock)(pthread_rwlock_t*) = pfs_libc_rwlock_tryrdlock;
  int (*rwlock_trywrlock)(pthread_rwlock_t*) = pfs_libc_rwlock_trywrlock;
  int (*rwlock_unlock)(pthread_rwlock_t*) = pfs_libc_rwlock_unlock;
  int (*rwlock_timedrdlock)(pthread_rwlock_t*, const timespec*) = nullptr;
  int (*rwlock_timedwrlock)(pthread_rwlock_t*, const timespec*) = nullptr;
  int (*rwlock_clockrdlock)(pthread_rwlock_t*, clockid_t, const timespec*) = nullptr;
  int (*rwlock_clockwrlock)(pthread_rwlock_t*, clockid_t, const timespec*) = nullptr;
  int (*cond_init)(pthread_cond_t*, const pthread_condattr_t*) = nullptr;
  int (*cond_destroy)(pthread_cond_t*) = nullptr;
  int (*cond_wait)(pthread_cond_t*, pthread_mutex_t*) = nullptr;
  int (*cond_timedwait)(pthread_cond_t*, pthread_mutex_t*, const timespec*) = nullptr;
  int (*cond_clockwait)(pthread_cond_t*, pthread_mutex_t*, clockid_t, const timespec*) = nullptr;
  int (*cond_signal)(pthread_cond_t*) = nullptr;
  int (*cond_broadcast)(pthread_cond_t*) = nullptr;
  int (*thread_create)(pthread_t*, const pthread_attr_t*, void* (*)(void*), void*) = nullptr;
  int (*open)(const char*, int, mode_t) = boot_open;  // called with the mode always
  int (*open64)(const char*, int, mode_t) = boot_open;
  int (*openat)(int, const char*, int, mode_t) = boot_openat;
  int (*openat64)(int, const char*, int, mode_t) = boot_openat;
  int (*open_2)(const char*, int) = nullptr;
  int (*open64_2)(const char*, int) = nullptr;
  int (*openat_2)(int, const char*, int) = nullptr;
  int (*openat64_2)(int, const char*, int) = nullptr;
  int (*creat)(const char*, mode_t) = nullptr;
  int (*creat64)(const char*, mode_t) = nullptr;
  int (*close)(int) = boot_close;
  ssize_t (*read)(int, void*, size_t) = boot_read;
  ssize_t (*write)(int, const void*, size_t) = boot_write;
  ssize_t (*pread)(int, void*, size_t, off_t) = boot_pread;
  ssize_t (*pread64)(int, void*, size_t, off_t) = boot_pread;
  ssize_t (*pwrite)(int, const void*, size_t, off_t) = boot_pwrite;
  ssize_t (*pwrite64)(int, const void*, size_t, off_t) = boot_pwrite;
  ssize_t (*read_chk)(int, void*, size_t, size_t) = nullptr;
  ssize_t (*pread_chk)(int, void*, size_t, off_t, size_t) = nullptr;
  ssize_t (*pread64_chk)(int, void*, size_t, off_t, size_t) = nullptr;
  ssize_t (*readv)(int, const iovec*, int) = boot_readv;
  ssize_t (*writev)(int, const iovec*, int) = boot_writev;
  off_t (*lseek)(int, off_t, int) = boot_lseek;
  off_t (*lseek64)(int, off_t, int) = boot_lseek;
  int (*fsync)(int) = boot_fsync;
  int (*fdatasync)(int) = boot_fdatasync;
  int (*rename)(const char*, const char*) = boot_rename;
  int (*unlink)(const char*) = boot_unlink;
  int (*dup)(int) = boot_dup;
  int (*dup2)(int, int) = boot_dup2;
  int (*dup3)(int, int, int) = boot_dup3;
};
real_functions real;

// True while this thread resolves symbols (dlsym may allocate and lock).
__attribute__((tls_model("initial-exec"))) constinit thread_local bool tls_resolving = false;
std::atomic<bool> g_resolved{false};

template <class Fn>
void resolve_one(Fn& slot, const char* name, const char* version = nullptr) {
  void* p = version != nullptr ? dlvsym(RTLD_NEXT, name, version) : nullptr;
  if (p == nullptr) p = dlsym(RTLD_NEXT, name);
  if (p != nullptr) slot = reinterpret_cast<Fn>(p);
}

// Resolves every real function (idempotent). False when called recursively from
// inside the resolution (the caller then uses its fallback).
bool resolve_all() {
  if (g_resolved.load(std::memory_order_acquire)) return true;
  if (tls_resolving) return false;
  tls_resolving = true;
  const bool was_busy = tls.busy;
  tls.busy = true;
  const int saved = errno;
  real_functions r = real;
  resolve_one(r.mutex_init, "pthread_mutex_init");
  resolve_one(r.mutex_destroy, "pthread_mutex_destroy");
  resolve_one(r.mutex_lock, "pthread_mutex_lock");
  resolve_one(r.mutex_trylock, "pthread_mutex_trylock");
  resolve_one(r.mutex_unlock, "pthread_mutex_unlock");
  resolve_one(r.mutex_timedlock, "pthread_mutex_timedlock");
  resolve_one(r.mutex_clocklock, "pthread_mutex_clocklock");
  resolve_one(r.rwlock_init, "pthread_rwlock_init");
  resolve_one(r.rwlock_destroy, "pthread_rwlock_destroy");
  resolve_one(r.rwlock_rdlock, "pthread_rwlock_rdlock");
  resolve_one(r.rwlock_wrlock, "pthread_rwlock_wrlock");
  resolve_one(r.rwlock_tryrdlock, "pthread_rwlock_tryrdlock");
  resolve_one(r.rwlock_trywrlock, "pthread_rwlock_trywrlock");
  resolve_one(r.rwlock_unlock, "pthread_rwlock_unlock");
  resolve_one(r.rwlock_timedrdlock, "pthread_rwlock_timedrdlock");
  resolve_one(r.rwlock_timedwrlock, "pthread_rwlock_timedwrlock");
  resolve_one(r.rwlock_clockrdlock, "pthread_rwlock_clockrdlock");
  resolve_one(r.rwlock_clockwrlock, "pthread_rwlock_clockwrlock");
  // The condition variables of the current ABI (an unversioned dlsym could give
  // the 2.2.5 compatibility ones on some systems; mutrace froze on those).
  resolve_one(r.cond_init, "pthread_cond_init", "GLIBC_2.3.2");
  resolve_one(r.cond_destroy, "pthread_cond_destroy", "GLIBC_2.3.2");
  resolve_one(r.cond_wait, "pthread_cond_wait", "GLIBC_2.3.2");
  resolve_one(r.cond_timedwait, "pthread_cond_timedwait", "GLIBC_2.3.2");
  resolve_one(r.cond_clockwait, "pthread_cond_clockwait");
  resolve_one(r.cond_signal, "pthread_cond_signal", "GLIBC_2.3.2");
  resolve_one(r.cond_broadcast, "pthread_cond_broadcast", "GLIBC_2.3.2");
  resolve_one(r.thread_create, "pthread_create");
  resolve_one(r.open, "open");
  resolve_one(r.open64, "open64");
  resolve_one(r.openat, "openat");
  resolve_one(r.openat64, "openat64");
  resolve_one(r.open_2, "__open_2");
  resolve_one(r.open64_2, "__open64_2");
  resolve_one(r.openat_2, "__openat_2");
  resolve_one(r.openat64_2, "__openat64_2");
  resolve_one(r.creat, "creat");
  resolve_one(r.creat64, "creat64");
  resolve_one(r.close, "close");
  resolve_one(r.read, "read");
  resolve_one(r.write, "write");
  resolve_one(r.pread, "pread");
  resolve_one(r.pread64, "pread64");
  resolve_one(r.pwrite, "pwrite");
  resolve_one(r.pwrite64, "pwrite64");
  resolve_one(r.read_chk, "__read_chk");
  resolve_one(r.pread_chk, "__pread_chk");
  resolve_one(r.pread64_chk, "__pread64_chk");
  resolve_one(r.readv, "readv");
  resolve_one(r.writev, "writev");
  resolve_one(r.lseek, "lseek");
  resolve_one(r.lseek64, "lseek64");
  resolve_one(r.fsync, "fsync");
  resolve_one(r.fdatasync, "fdatasync");
  resolve_one(r.rename, "rename");
  resolve_one(r.unlink, "unlink");
  resolve_one(r.dup, "dup");
  resolve_one(r.dup2, "dup2");
  resolve_one(r.dup3, "dup3");
  resolve_socket_functions();
  real = r;  // each pointer is one aligned word: a racing reader sees old or new, both work
  g_resolved.store(true, std::memory_order_release);
  errno = saved;
  tls.busy = was_busy;
  tls_resolving = false;
  return true;
}

// A function that has no link-time fallback: resolve now if needed.
template <class Fn>
Fn get(Fn& slot) {
  if (slot == nullptr) [[unlikely]]
    resolve_all();
  return slot;
}

// ---------------------------------------------------------------------------
// The event path around the real calls.

// Recording, and not inside the interposer on this thread.
inline bool should_record() { return load_relaxed(g_hot.recording) && !tls.busy; }

[[gnu::noinline, gnu::cold]] void register_thread() {
  const int saved = errno;
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  register_thread_slot(0, name);
  errno = saved;
}

inline void ensure_thread() {
  if (tls_context == nullptr) [[unlikely]]
    register_thread();
}

// errno is kept across the parts of a wrapper that may touch it (first-use
// slow paths, trace files). Cheap: only when needed.
struct errno_keeper {
  int saved;
  errno_keeper() : saved(errno) {}
  ~errno_keeper() { errno = saved; }
};

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
      mutex_instant(l, acquired(rc), source, 0);
    else
      rwlock_instant(l, acquired(rc), source, 0);
    return;
  }
  if constexpr (Kind == kMutex)
    mutex_instant(l, acquired(rc), source, 0);
  else
    rwlock_instant(l, acquired(rc), source, 0);
}

// The records the coming event will write (its events_waits_current slot, the
// thread's history slot, its history_long slot): fetched for writing now, so that
// their cache misses (history_long walks a ring far larger than the caches, and a
// system call between two events evicts the rest) overlap with the lock instead
// of stalling the event one after the other.
[[gnu::always_inline]] inline void prefetch_event_slots() {
  const thread_context* t = tls_context;
  if (t == nullptr || t->stack == nullptr) [[unlikely]]
    return;
  const auto fetch = [](const void* p) {
    __builtin_prefetch(p, 1, 3);
    __builtin_prefetch(static_cast<const char*>(p) + 64, 1, 3);
  };
  if (t->depth < t->stack_room) fetch(&t->stack[t->depth]);
  if (t->history != nullptr) fetch(&t->history[t->history_pos]);
  if (t->has_batch && t->batch_next != t->batch_end) fetch(&g_hot.history_long[t->batch_next]);
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
  // Timed from before the first try (WL#2360), taken then or not.
  const std::uint8_t timer = wait_timer_of(s);
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
  int rc = try_fn(object);
  tls.busy = true;
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

// File io on a descriptor opened through the interposer.
template <class Call>
[[gnu::always_inline]] inline auto fd_io(int fd, int op, bool counts_bytes, const void* caller, Call call)
    -> decltype(call()) {
  if (!should_record()) return call();
  file_instance* f = file_of_fd(fd);
  if (f == nullptr) {
    // Not a file the interposer opened: a socket's read and write are its recv and send.
    if (socket_slot_of_fd(fd) == kUntrackedFd || (op != PFS_FILE_READ && op != PFS_FILE_WRITE)) return call();
    return socket_io(fd, op == PFS_FILE_READ ? PFS_SOCKET_RECV : PFS_SOCKET_SEND, counts_bytes, caller, call);
  }
  tls.busy = true;
  ensure_thread();
  prefetch_event_slots();
  wait_locker l;
  if (!begin_file_wait(l, f, op)) {
    tls.busy = false;
    return call();
  }
  {
    errno_keeper keep;
    start_running(l, source_of(caller), 0);
  }
  tls.busy = false;
  const auto r = call();
  const int saved = errno;
  tls.busy = true;
  end_file_wait(l, counts_bytes && r >= 0 ? static_cast<std::int64_t>(r) : -1);
  tls.busy = false;
  errno = saved;
  return r;
}

// create / open: the file's instance is found or created by name, fd bound to it.
template <class Call>
int open_common(const char* path, int flags, const void* caller, Call call) {
  if (!should_record() || path == nullptr) return call();
  tls.busy = true;
  pfs_wait_locker locker;
  int rec = 0;
  {
    errno_keeper keep;
    ensure_thread();
    const pfs_key key = file_class(caller);
    if (key != 0)
      rec = pfs_start_file_name_wait(&locker, key, (flags & O_CREAT) ? PFS_FILE_CREATE : PFS_FILE_OPEN, path,
                                     source_of(caller), 0);
  }
  tls.busy = false;
  const int fd = call();
  const int saved = errno;
  tls.busy = true;
  if (fd >= 0) socket_fd_reset(fd);  // a number that was a socket's before
  if (rec != 0)
    pfs_end_file_open_wait(&locker, fd);
  else if (fd >= 0)
    pfs_forget_fd(fd);  // not recorded: no stale binding of this number either
  tls.busy = false;
  errno = saved;
  return fd;
}

// delete / rename of a file named by path.
template <class Call>
int name_op(const char* path, const char* new_path, int op, const void* caller, Call call) {
  if (!should_record() || path == nullptr) return call();
  tls.busy = true;
  pfs_wait_locker locker;
  int rec = 0;
  {
    errno_keeper keep;
    ensure_thread();
    const pfs_key key = file_class(caller);
    if (key != 0) rec = pfs_start_file_name_wait(&locker, key, op, path, source_of(caller), 0);
  }
  tls.busy = false;
  const int rc = call();
  const int saved = errno;
  if (rec != 0) {
    tls.busy = true;
    pfs_end_file_name_wait(&locker, rc, new_path);
    tls.busy = false;
  }
  errno = saved;
  return rc;
}

// close of a descriptor that is not a recorded file: a socket's close is a wait,
// and its row goes; any other number is forgotten (it may be a socket next).
int close_socket(int fd, const void* caller) {
  if (socket_of_fd(fd) == nullptr) {
    socket_fd_reset(fd);
    return real.close(fd);
  }
  socket_wait w;
  if (!socket_wait_start(w, fd, PFS_SOCKET_CLOSE, caller)) {
    socket_fd_reset(fd);  // before the number can be reused
    return real.close(fd);
  }
  const int rc = real.close(fd);
  const int saved = errno;
  tls.busy = true;
  pfs_end_socket_close_wait(&w.locker, fd);
  tls.busy = false;
  errno = saved;
  return rc;
}

int close_common(int fd, const void* caller) {
  // The region's descriptor stays open while the agent records (a forked child,
  // which records nothing, may close its copy: the parent's keeps the lock).
  if (fd == g_region_fd && fd >= 0 && load_relaxed(g_hot.recording)) [[unlikely]]
    return 0;
  if (!should_record()) return real.close(fd);
  if (file_of_fd(fd) == nullptr) return close_socket(fd, caller);
  tls.busy = true;
  pfs_wait_locker locker;
  int rec = 0;
  {
    errno_keeper keep;
    ensure_thread();
    rec = pfs_start_file_wait(&locker, fd, PFS_FILE_CLOSE, source_of(caller), 0);
  }
  tls.busy = false;
  const int rc = real.close(fd);
  const int saved = errno;
  tls.busy = true;
  if (rec != 0)
    pfs_end_file_close_wait(&locker, fd);
  else
    pfs_forget_fd(fd);
  tls.busy = false;
  errno = saved;
  return rc;
}

// A descriptor made by dup*: it is not a file the interposer opened (nor a socket
// with a row: a duplicated socket is looked at on its first io).
int forget_new_fd(int fd) {
  if (fd >= 0 && load_relaxed(g_hot.recording)) {
    const int saved = errno;
    pfs_forget_fd(fd);
    socket_fd_reset(fd);
    errno = saved;
  }
  return fd;
}

mode_t mode_arg(int flags, va_list ap) {
  return __OPEN_NEEDS_MODE(flags) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

// Resolved as early as possible (before the agent's own initializers; the
// agent itself starts in preload_start.cpp, after them).
extern "C" const int pfs_preload_start_anchor;  // preload_start.cpp
__attribute__((constructor(101))) void resolve_early() {
  resolve_all();
  (void)*static_cast<const volatile int*>(&pfs_preload_start_anchor);
}

}  // namespace

bool resolve_real_functions() { return resolve_all(); }

real_thread_create_fn real_thread_create() {
#if !defined(__SANITIZE_THREAD__) && !defined(__SANITIZE_ADDRESS__)
  return get(real.thread_create);
#else
  return nullptr;  // no interposed pthread_create: the sanitizer's is the right one
#endif
}

}  // namespace pfs::preload

// ---------------------------------------------------------------------------
// The interposed functions.

using namespace pfs::preload;
using pfs::detail::file_of_fd;

#define CALLER __builtin_return_address(0)

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
  return real.mutex_unlock(m);
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
  return real.rwlock_unlock(rw);
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

// Files: open and create
PFS_EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(path, flags, CALLER, [=] { return real.open(path, flags, mode); });
}
PFS_EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(path, flags, CALLER, [=] { return real.open64(path, flags, mode); });
}
PFS_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(path, flags, CALLER, [=] { return real.openat(dirfd, path, flags, mode); });
}
PFS_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(path, flags, CALLER, [=] { return real.openat64(dirfd, path, flags, mode); });
}
// _FORTIFY_SOURCE forms (open without a mode argument).
PFS_EXPORT int __open_2(const char* path, int flags) {
  auto fn = get(real.open_2);
  if (fn == nullptr) return boot_open(path, flags, 0);
  return open_common(path, flags, CALLER, [=] { return fn(path, flags); });
}
PFS_EXPORT int __open64_2(const char* path, int flags) {
  auto fn = get(real.open64_2);
  if (fn == nullptr) return boot_open(path, flags, 0);
  return open_common(path, flags, CALLER, [=] { return fn(path, flags); });
}
PFS_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  auto fn = get(real.openat_2);
  if (fn == nullptr) return boot_openat(dirfd, path, flags, 0);
  return open_common(path, flags, CALLER, [=] { return fn(dirfd, path, flags); });
}
PFS_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  auto fn = get(real.openat64_2);
  if (fn == nullptr) return boot_openat(dirfd, path, flags, 0);
  return open_common(path, flags, CALLER, [=] { return fn(dirfd, path, flags); });
}
PFS_EXPORT int creat(const char* path, mode_t mode) {
  auto fn = get(real.creat);
  if (fn == nullptr) return boot_open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
  return open_common(path, O_CREAT, CALLER, [=] { return fn(path, mode); });
}
PFS_EXPORT int creat64(const char* path, mode_t mode) {
  auto fn = get(real.creat64);
  if (fn == nullptr) return boot_open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
  return open_common(path, O_CREAT, CALLER, [=] { return fn(path, mode); });
}

PFS_EXPORT int close(int fd) { return close_common(fd, CALLER); }

// Files: descriptor io
PFS_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.read(fd, buf, n); });
}
PFS_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.write(fd, buf, n); });
}
PFS_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.pread(fd, buf, n, off); });
}
PFS_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.pread64(fd, buf, n, off); });
}
PFS_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.pwrite(fd, buf, n, off); });
}
PFS_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.pwrite64(fd, buf, n, off); });
}
PFS_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  auto fn = get(real.read_chk);
  if (fn == nullptr) return boot_read(fd, buf, n);
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return fn(fd, buf, n, buflen); });
}
PFS_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  auto fn = get(real.pread_chk);
  if (fn == nullptr) return boot_pread(fd, buf, n, off);
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return fn(fd, buf, n, off, buflen); });
}
PFS_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  auto fn = get(real.pread64_chk);
  if (fn == nullptr) return boot_pread(fd, buf, n, off);
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return fn(fd, buf, n, off, buflen); });
}
PFS_EXPORT ssize_t readv(int fd, const iovec* v, int n) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.readv(fd, v, n); });
}
PFS_EXPORT ssize_t writev(int fd, const iovec* v, int n) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.writev(fd, v, n); });
}
PFS_EXPORT off_t lseek(int fd, off_t off, int whence) noexcept {
  return fd_io(fd, PFS_FILE_SEEK, false, CALLER, [=] { return real.lseek(fd, off, whence); });
}
PFS_EXPORT off_t lseek64(int fd, off_t off, int whence) noexcept {
  return fd_io(fd, PFS_FILE_SEEK, false, CALLER, [=] { return real.lseek64(fd, off, whence); });
}
PFS_EXPORT int fsync(int fd) {
  return fd_io(fd, PFS_FILE_SYNC, false, CALLER, [=] { return real.fsync(fd); });
}
PFS_EXPORT int fdatasync(int fd) {
  return fd_io(fd, PFS_FILE_SYNC, false, CALLER, [=] { return real.fdatasync(fd); });
}

// Files: by name
PFS_EXPORT int rename(const char* from, const char* to) noexcept {
  return name_op(from, to, PFS_FILE_RENAME, CALLER, [=] { return real.rename(from, to); });
}
PFS_EXPORT int unlink(const char* path) noexcept {
  return name_op(path, nullptr, PFS_FILE_DELETE, CALLER, [=] { return real.unlink(path); });
}

// Descriptors made by duplication are not files the interposer opened.
PFS_EXPORT int dup(int fd) noexcept { return forget_new_fd(real.dup(fd)); }
PFS_EXPORT int dup2(int fd, int fd2) noexcept { return forget_new_fd(real.dup2(fd, fd2)); }
PFS_EXPORT int dup3(int fd, int fd2, int flags) noexcept { return forget_new_fd(real.dup3(fd, fd2, flags)); }
