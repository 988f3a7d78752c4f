// Instrumented objects at namespace scope in a translation unit of their own: their
// constructors register classes (and may start the agent) before main, in whatever
// order the linker put the program's and the agent's initializers.
#include "tests/static_init/globals.h"

pfs::mutex g_queue_lock{"static_init", "queue_lock"};
pfs::shared_mutex g_map_lock{"static_init", "map_lock"};

void lock_globals_a(int n) {
  for (int i = 0; i < n; ++i) {
    { pfs::lock_guard g(g_queue_lock); }
    g_map_lock.lock_shared();
    g_map_lock.unlock_shared();
  }
}
