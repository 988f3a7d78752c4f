// exit(): noted on the calling thread before the C library runs the program's
// exit handlers.
//
// A process's exit handlers (atexit, C++ destructors of static objects, a
// library's cleanup such as OpenSSL's) destroy the objects and free the memory
// it made over its life, often thousands of them, on the thread that called
// exit(), after that thread has left its row (glibc runs the thread-local
// destructors first). Booking each of them would write the instance and memory
// pages of the region, and the pages of the interposer's object maps that a
// forked process still shares with its parent, only for the region to be marked
// exited a moment later: a large part of what a short-lived process (a
// PostgreSQL backend) costs under the interposer. So what that thread destroys
// and frees (the heap; anonymous maps are still booked) from its call to exit()
// is not booked: the region keeps the instances and the heap of the moment the
// program chose to exit. Other threads book as before; a block the exiting
// thread allocates in an exit handler and another thread frees lowers the heap's
// count by what was not added. The waits of the exit handlers are still recorded.
// A return from main reaches exit() inside the C library, which an interposer
// does not see, and quick_exit is not interposed: their handlers are booked as
// before.
#include <dlfcn.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>

#include "agent/preload/preload_internal.h"
#include "agent/preload/preload_real.h"

namespace pfs::preload {

constinit std::atomic<pid_t> g_process_pid{0};

}  // namespace pfs::preload

PFS_EXPORT __attribute__((noreturn)) void exit(int status) noexcept {
  using exit_fn = void (*)(int);
  // Not in a child of vfork, which runs on the parent's memory and thread (and
  // should call _exit): the parent's thread would stop booking. Fork handlers do
  // not run for vfork, so there g_process_pid is still the parent's.
  if (getpid() == pfs::preload::g_process_pid.load(std::memory_order_relaxed))
    pfs::preload::tls.exiting = true;
  exit_fn fn = pfs::preload::real.exit;
  if (fn == nullptr) fn = reinterpret_cast<exit_fn>(dlsym(RTLD_NEXT, "exit"));  // before the constructor
  if (fn != nullptr) fn(status);
  syscall(SYS_exit_group, status);  // cannot happen: the C library defines exit
  __builtin_unreachable();
}
