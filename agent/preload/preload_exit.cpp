// exit(): noted before the C library runs the program's exit handlers.
//
// A process's exit handlers (atexit, C++ destructors of static objects, a
// library's cleanup such as OpenSSL's) destroy the objects and free the memory
// it made over its life, often thousands of them, after its main thread has
// left its row (glibc runs the thread-local destructors first). Booking each of
// them would write the instance and memory pages of the region, and the pages of
// the interposer's object maps that a forked process still shares with its
// parent, only for the region to be marked exited a moment later: a large part of
// what a short-lived process (a PostgreSQL backend) costs under the interposer.
// So from the call to exit() the region keeps the instances and the memory of
// the moment the program chose to exit. The waits of the exit handlers are still
// recorded. A return from main reaches exit() inside the C library, which an
// interposer does not see: its exit handlers are booked as before.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "agent/preload/preload_internal.h"
#include "agent/preload/preload_real.h"

namespace pfs::preload {

constinit std::atomic<bool> g_exiting{false};
constinit std::atomic<pid_t> g_process_pid{0};

}  // namespace pfs::preload

PFS_EXPORT [[noreturn]] void exit(int status) noexcept {
  using exit_fn = void (*)(int);
  // Not in a child of vfork, which shares the parent's memory (and should call
  // _exit): the parent would stop booking. Fork handlers do not run for vfork, so
  // there g_process_pid is still the parent's.
  if (getpid() == pfs::preload::g_process_pid.load(std::memory_order_relaxed))
    pfs::preload::g_exiting.store(true, std::memory_order_relaxed);
  exit_fn fn = pfs::preload::real.exit;
  if (fn == nullptr) fn = reinterpret_cast<exit_fn>(dlsym(RTLD_NEXT, "exit"));  // before the constructor
  if (fn != nullptr) fn(status);
  syscall(SYS_exit_group, status);  // cannot happen: the C library defines exit
  __builtin_unreachable();
}
