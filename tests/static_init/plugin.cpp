// A plugin whose instrumented objects stand at namespace scope: dlopen runs their
// constructors, which register the plugin's classes (and start the agent, if the
// program did not). Built linking the static agent into the plugin and linking
// libperfschema.so (tests/end_to_end/test_static_init.cpp).
#include "agent/provider/pfs.h"

namespace {
pfs::mutex g_plugin_lock{"static_init", "plugin_lock"};
}  // namespace

extern "C" __attribute__((visibility("default"))) int static_init_plugin_run(int n) {
  for (int i = 0; i < n; ++i) pfs::lock_guard g(g_plugin_lock);
  return pfs::active() ? 1 : 0;
}
