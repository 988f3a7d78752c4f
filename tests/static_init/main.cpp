// A program whose instrumented objects stand at namespace scope, as README shows
// them (tests/end_to_end/test_static_init.cpp runs it linked with the static agent and with
// libperfschema.so). Locks each object LOCKS times (default 10) and prints
// agent_active=0|1.
#include <cstdio>
#include <cstdlib>

#include "tests/static_init/globals.h"

pfs::mutex g_main_lock{"static_init", "main_lock"};

int main() {
  const char* n_text = std::getenv("LOCKS");
  const int n = n_text != nullptr ? std::atoi(n_text) : 10;
  for (int i = 0; i < n; ++i) pfs::lock_guard g(g_main_lock);
  lock_globals_a(n);
  std::printf("agent_active=%d\n", pfs::active() ? 1 : 0);
  return 0;
}
