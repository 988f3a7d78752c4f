// libpfs_preload.so: the agent for unmodified programs.
//
//   LD_PRELOAD=build/agent/libpfs_preload.so PFS_REGION=/tmp/app.pfs PFS_INSTRUMENT='%=ON' program args
//
// Interposes the pthread mutex, rwlock, condition, spin lock and barrier functions,
// the file io system call wrappers and the stdio streams of the C library, and records their waits through
// the agent's inline event path (event_path.h, io_path.h) into the region.
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
#include "agent/preload/preload_real.h"
#include "agent/provider/internal/preload_api.h"

// The versions the fallbacks bind to (preload_real.h declares them).
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

__attribute__((tls_model("initial-exec"))) constinit thread_local thread_state tls = {
    false, nullptr, nullptr, nullptr, nullptr, false};
int g_region_fd = -1;

// ---------------------------------------------------------------------------
// Raw system calls, before the real functions are resolved.

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
int boot_renameat(int da, const char* a, int db, const char* b) {
  return static_cast<int>(syscall(SYS_renameat, da, a, db, b));
}
int boot_unlinkat(int d, const char* p, int flags) {
  return static_cast<int>(syscall(SYS_unlinkat, d, p, flags));
}
int boot_dup(int fd) { return static_cast<int>(syscall(SYS_dup, fd)); }
int boot_dup2(int a, int b) {
  return a == b ? (fcntl(a, F_GETFD) < 0 ? -1 : b) : static_cast<int>(syscall(SYS_dup3, a, b, 0));
}
int boot_dup3(int a, int b, int f) { return static_cast<int>(syscall(SYS_dup3, a, b, f)); }
int boot_fcntl(int fd, int cmd, unsigned long arg) {
  return static_cast<int>(syscall(SYS_fcntl, fd, cmd, arg));
}

real_functions real;

namespace {

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
  resolve_one(r.exit, "exit");
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
  resolve_one(r.spin_init, "pthread_spin_init");
  resolve_one(r.spin_destroy, "pthread_spin_destroy");
  resolve_one(r.spin_lock, "pthread_spin_lock");
  resolve_one(r.spin_trylock, "pthread_spin_trylock");
  resolve_one(r.spin_unlock, "pthread_spin_unlock");
  resolve_one(r.barrier_init, "pthread_barrier_init");
  resolve_one(r.barrier_destroy, "pthread_barrier_destroy");
  resolve_one(r.barrier_wait, "pthread_barrier_wait");
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
  resolve_one(r.renameat, "renameat");
  resolve_one(r.renameat2, "renameat2");
  resolve_one(r.unlinkat, "unlinkat");
  resolve_one(r.dup, "dup");
  resolve_one(r.dup2, "dup2");
  resolve_one(r.dup3, "dup3");
  resolve_one(r.fcntl, "fcntl");
  resolve_one(r.fcntl64, "fcntl64");
  resolve_socket_functions();
  resolve_sem_functions();
  resolve_stdio_functions();
  resolve_vector_functions();
  real = r;  // each pointer is one aligned word: a racing reader sees old or new, both work
  g_resolved.store(true, std::memory_order_release);
  errno = saved;
  tls.busy = was_busy;
  tls_resolving = false;
  return true;
}

}  // namespace

[[gnu::noinline, gnu::cold]] void register_thread() {
  const int saved = errno;
  char name[17] = {};
  prctl(PR_GET_NAME, name, 0, 0, 0);
  register_thread_slot(0, name);
  errno = saved;
}

namespace {

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
