// Start-up and shutdown of libpfs_preload.so.
//
// Built as its own static library and linked after the agent's, so that its
// constructor comes after the agent's C++ initializers in the library's
// .init_array (the agent's globals must be constructed before it starts). The
// interposer's real functions are resolved earlier (preload.cpp), and calls that
// arrive before the agent runs pass straight through.
#include <errno.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <string>

#include "agent/preload/preload_internal.h"
#include "agent/provider/internal/preload_api.h"
#include "agent/provider/pfs.h"

namespace pfs::preload {
namespace {

bool g_started = false;
bool g_verbose = false;

// Fork: the agent's handlers (installed by pfs::init, before these) take and
// release its registries; these take the object maps first and release them
// last, with the thread marked busy so that the agent's own mutexes are not
// interposed meanwhile. The child says what became of it when verbose.
void fork_prepare() {
  tls.busy = true;
  lock_maps_for_fork(true);
}
void fork_parent() {
  lock_maps_for_fork(false);
  tls.busy = false;
}
// One write for the whole line: the children of a pre-forking program say
// their lines at once into the same stderr, and a line written in pieces
// interleaves with theirs.
void say(std::initializer_list<const char*> parts) {
  char line[1024];
  std::size_t n = 0;
  for (const char* s : parts) {
    const std::size_t len = std::min(std::strlen(s), sizeof line - n);
    std::memcpy(line + n, s, len);
    n += len;
  }
  const char* s = line;
  while (n > 0) {
    const ssize_t w = write(2, s, n);
    if (w <= 0) return;
    s += w;
    n -= static_cast<std::size_t>(w);
  }
}
void fork_child() {
  g_process_pid.store(getpid(), std::memory_order_relaxed);
  lock_maps_for_fork(false);
  const pfs::detail::fork_report& r = pfs::detail::last_fork_report();
  if (const pfs::region_map* region = pfs::current_region(); region != nullptr) g_region_fd = region->fd();
  tls.busy = false;
  if (!g_verbose) return;
  using pfs::detail::fork_outcome;
  if (r.outcome == fork_outcome::own_region)
    say({"pfs_preload: forked child records into ", r.path, "\n"});
  else if (r.outcome == fork_outcome::no_pattern)
    say(
        {"pfs_preload: forked child records nothing: PFS_REGION has no %p, and the region is the "
         "parent's\n"});
  else if (r.outcome == fork_outcome::failed) {
    // strerrordesc_np: a static text, no locale, safe in a fork child.
    const char* why = r.reason != nullptr ? r.reason : strerrordesc_np(r.error);
    say({"pfs_preload: forked child records nothing: could not create region \"",
         r.path[0] != '\0' ? r.path : "(its region)", "\": ", why != nullptr ? why : "unknown error", "\n"});
  }
}

__attribute__((constructor)) void preload_start() {
  resolve_real_functions();
  g_process_pid.store(getpid(), std::memory_order_relaxed);
  busy_scope busy;
  const int saved = errno;
  const char* verbose = std::getenv("PFS_PRELOAD_VERBOSE");
  std::string warning;
  pfs::options o = pfs::options::from_environment(&warning);
  g_verbose = verbose != nullptr;
  pfs::detail::set_thread_create_hook(real_thread_create());  // for the agent's CYCLE watch
  pfs::detail::set_agent_busy_hook([](bool on) { tls.busy = on; });
  if (!o.region_path.empty()) {
    // As a program that links the agent: an ignored setting and a failed start are
    // said once (pfs::init says why it failed), unless PFS_QUIET=1.
    if (!warning.empty()) pfs::detail::report("warning: " + warning);
    if (!init_sites() ||
        !init_maps(o.sizes.max_mutexes, o.sizes.max_rwlocks, o.sizes.max_conds, o.sizes.max_sems)) {
      pfs::detail::report("agent not started: out of memory for the interposer's object maps");
    } else if (pfs::init(o)) {
      g_started = true;
      pthread_atfork(fork_prepare, fork_parent, fork_child);
      const pfs::region_map* r = pfs::current_region();
      if (r != nullptr) g_region_fd = r->fd();
      bind_inherited_files();
      if (verbose != nullptr)
        std::fprintf(stderr, "pfs_preload: recording into %s\n", r != nullptr ? r->path().c_str() : "");
    }
  }
  errno = saved;
}

__attribute__((destructor)) void preload_stop() {
  if (!g_started) return;
  busy_scope busy;
  const int saved = errno;
  pfs::shutdown();  // threads still running go on, unrecorded
  errno = saved;
}

}  // namespace

// Referenced from preload.cpp so that the linker takes this member of its archive.
extern "C" __attribute__((visibility("hidden"))) const int pfs_preload_start_anchor = 1;

}  // namespace pfs::preload
