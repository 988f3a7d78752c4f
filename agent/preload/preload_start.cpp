// Start-up and shutdown of libpfs_preload.so.
//
// Built as its own static library and linked after the agent's, so that its
// constructor comes after the agent's C++ initializers in the library's
// .init_array (the agent's globals must be constructed before it starts). The
// interposer's real functions are resolved earlier (preload.cpp), and calls that
// arrive before the agent runs pass straight through.
#include <errno.h>
#include <pthread.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "agent/provider/pfs.h"
#include "agent/provider/slow_path.h"
#include "agent/preload/preload_internal.h"

namespace pfs::preload {
namespace {

bool g_started = false;

__attribute__((constructor)) void preload_start() {
  resolve_real_functions();
  busy_scope busy;
  const int saved = errno;
  const char* verbose = std::getenv("PFS_PRELOAD_VERBOSE");
  std::string warning;
  pfs::options o = pfs::options::from_environment(&warning);
  if (!o.region_path.empty()) {
    o.region_path = expand_pid(o.region_path);
    pthread_atfork(nullptr, nullptr, on_fork_child);
    if (!init_sites() || !init_maps(o.sizes.max_mutexes, o.sizes.max_rwlocks, o.sizes.max_conds)) {
      if (verbose != nullptr) std::fprintf(stderr, "pfs_preload: out of memory for the object maps\n");
    } else if (pfs::init(o)) {
      g_started = true;
      if (const pfs::region_map* r = pfs::current_region()) g_region_fd = r->fd();
      if (verbose != nullptr)
        std::fprintf(stderr, "pfs_preload: recording into %s%s%s\n", o.region_path.c_str(),
                     warning.empty() ? "" : "; ", warning.c_str());
    } else if (verbose != nullptr) {
      std::fprintf(stderr, "pfs_preload: agent not started: %s\n", pfs::last_error().c_str());
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
