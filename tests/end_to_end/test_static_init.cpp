// Instrumented objects at namespace scope (tests/static_init/): their constructors
// call into the agent before main, possibly before any of the agent's own
// translation units ran their initializers. Every global of the agent is constant-
// initialized (checked on every build: cmake/check_static_init.cmake), so the
// program starts the agent from the first constructor and records every wait,
// whichever library it links and however it is loaded.
#include <gtest/gtest.h>

#include <string>

#include "tests/process_util.h"

namespace {

const std::string kDir = std::string(PFS_BUILD_DIR) + "/tests/static_init/";
constexpr const char* kPrefix = "wait/synch/";

struct program_run {
  pfs_test::run_result result;
  std::string region;
};

program_run run_program(const std::vector<std::string>& argv, const std::string& name) {
  program_run r;
  r.region = pfs_test::temp_dir() + "/" + name + ".pfs";
  r.result = pfs_test::run(argv, {"PFS_REGION=" + r.region, "PFS_INSTRUMENT=%=ON", "LOCKS=25"});
  return r;
}

void expect_waits(const program_run& r, const std::vector<std::string>& classes, long count) {
  ASSERT_EQ(r.result.status, 0) << "the program died before or after main";
  EXPECT_EQ(pfs_test::value(r.result, "agent_active"), 1);
  pfs_test::tables t(r.region);
  ASSERT_TRUE(t.ok());
  for (const auto& c : classes) EXPECT_EQ(t.count_star(kPrefix + c), count) << c;
}

TEST(StaticInit, CxxGlobalsWithTheStaticAgent) {
  const auto r = run_program({kDir + "si_static"}, "static");
  expect_waits(
      r, {"mutex/static_init/main_lock", "mutex/static_init/queue_lock", "rwlock/static_init/map_lock"}, 25);
}

TEST(StaticInit, ACProgramInstrumentingFromAConstructor) {
  expect_waits(run_program({kDir + "si_c"}, "c"), {"mutex/static_init/c_lock"}, 25);
}

TEST(StaticInit, APluginWithTheStaticAgentLoadedWithDlopen) {
  expect_waits(run_program({kDir + "si_loader", kDir + "si_plugin_static.so", "25"}, "plugin_static"),
               {"mutex/static_init/plugin_lock"}, 25);
}

#ifdef PFS_SHARED_BUILT
TEST(StaticInit, CxxGlobalsWithLibperfschema) {
  const auto r = run_program({kDir + "si_shared"}, "shared");
  expect_waits(
      r, {"mutex/static_init/main_lock", "mutex/static_init/queue_lock", "rwlock/static_init/map_lock"}, 25);
}

TEST(StaticInit, APluginLinkingLibperfschemaLoadedWithDlopen) {
  expect_waits(run_program({kDir + "si_loader", kDir + "si_plugin_shared.so", "25"}, "plugin_shared"),
               {"mutex/static_init/plugin_lock"}, 25);
}
#endif

}  // namespace
