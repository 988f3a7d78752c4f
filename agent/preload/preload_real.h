// What the interposer's wrappers share (preload_sync.cpp, preload_file.cpp, resolved in
// preload.cpp): the real functions and the steps every wrapper takes around them.
#pragma once

#include <errno.h>
#include <pthread.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <time.h>

#include "agent/preload/preload_internal.h"
#include "agent/provider/internal/preload_api.h"

#define PFS_EXPORT extern "C" __attribute__((visibility("default")))
#define CALLER __builtin_return_address(0)

// The C library's own entry points, bound at link time to the exact versions
// (no dlsym needed): the fallbacks used before the constructor has run (their
// versions: preload.cpp).
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

namespace pfs::preload {

using namespace pfs::detail;
using pfs::layout::file_instance;

// Before the real functions are resolved: the file calls as raw system calls (preload.cpp).
int boot_open(const char* path, int flags, mode_t mode);
int boot_openat(int dirfd, const char* path, int flags, mode_t mode);
int boot_close(int fd);
ssize_t boot_read(int fd, void* buf, size_t n);
ssize_t boot_write(int fd, const void* buf, size_t n);
ssize_t boot_pread(int fd, void* buf, size_t n, off_t off);
ssize_t boot_pwrite(int fd, const void* buf, size_t n, off_t off);
ssize_t boot_readv(int fd, const iovec* v, int n);
ssize_t boot_writev(int fd, const iovec* v, int n);
off_t boot_lseek(int fd, off_t off, int whence);
int boot_fsync(int fd);
int boot_fdatasync(int fd);
int boot_rename(const char* a, const char* b);
int boot_unlink(const char* p);
int boot_renameat(int da, const char* a, int db, const char* b);
int boot_unlinkat(int d, const char* p, int flags);
int boot_dup(int fd);
int boot_dup2(int a, int b);
int boot_dup3(int a, int b, int f);
int boot_fcntl(int fd, int cmd, unsigned long arg);

// ---------------------------------------------------------------------------
// The real functions.

struct real_functions {
  void (*exit)(int) = nullptr;
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
  int (*spin_init)(pthread_spinlock_t*, int) = nullptr;
  int (*spin_destroy)(pthread_spinlock_t*) = nullptr;
  int (*spin_lock)(pthread_spinlock_t*) = nullptr;
  int (*spin_trylock)(pthread_spinlock_t*) = nullptr;
  int (*spin_unlock)(pthread_spinlock_t*) = nullptr;
  int (*barrier_init)(pthread_barrier_t*, const pthread_barrierattr_t*, unsigned) = nullptr;
  int (*barrier_destroy)(pthread_barrier_t*) = nullptr;
  int (*barrier_wait)(pthread_barrier_t*) = nullptr;
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
  int (*renameat)(int, const char*, int, const char*) = boot_renameat;
  int (*renameat2)(int, const char*, int, const char*, unsigned) = nullptr;
  int (*unlinkat)(int, const char*, int) = boot_unlinkat;
  int (*dup)(int) = boot_dup;
  int (*dup2)(int, int) = boot_dup2;
  int (*dup3)(int, int, int) = boot_dup3;
  int (*fcntl)(int, int, unsigned long) = boot_fcntl;  // the third argument as the kernel takes it
  int (*fcntl64)(int, int, unsigned long) = boot_fcntl;
};
// Resolved by preload.cpp; hidden, so that a wrapper loads a slot as from its own file.
extern __attribute__((visibility("hidden"))) real_functions real;

// A function that has no link-time fallback: resolve now if needed.
template <class Fn>
Fn get(Fn& slot) {
  if (slot == nullptr) [[unlikely]]
    resolve_real_functions();
  return slot;
}

// ---------------------------------------------------------------------------
// The event path around the real calls.

// Recording, and not inside the interposer on this thread.
inline bool should_record() { return load_relaxed(g_hot.recording) && !tls.busy; }

// A thread's first interposed call: its record, named as the thread (preload.cpp).
void register_thread();

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

// The records the coming event will write (its events_waits_current slot, the
// thread's history slot, its history_long slot): fetched for writing now, so that
// their cache misses (history_long walks a ring far larger than the caches, and a
// system call between two events evicts the rest) overlap with the lock instead
// of stalling the event one after the other.
// (No lambda here: g++ 12 dropped the prefetches of a lambda called from an
// always_inline function, and the interposer had none.)
[[gnu::always_inline]] inline void prefetch_record(const wait_record* r) {
  prefetch_for_write(r);
  prefetch_for_write(reinterpret_cast<const char*>(r) + 64);
}
[[gnu::always_inline]] inline void prefetch_event_slots() {
  const thread_context* t = tls_context;
  if (t == nullptr || t->stack == nullptr) [[unlikely]]
    return;
  if (t->depth < t->stack_room) prefetch_record(&t->stack[t->depth]);
  if (t->history != nullptr) prefetch_record(&t->history[t->history_pos]);
  if (t->has_batch && t->batch_next != t->batch_end) prefetch_record(&g_hot.history_long[t->batch_next]);
}

}  // namespace pfs::preload
