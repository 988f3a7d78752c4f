// A failed start is said once, clearly: when the agent cannot start or a setting
// is malformed, one line on stderr names the setting or the path as the user gave
// it and the reason (nothing with PFS_QUIET=1), the program runs on uninstrumented
// and pfs_init_from_env() says -1. The same for C++ and C programs linking the
// agent (tests/static_init/) and for the interposer.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "tests/preload_util.h"
#include "tests/process_util.h"

namespace {

const std::string kPrograms = std::string(PFS_BUILD_DIR) + "/tests/static_init/";
const std::string kPreload = std::string(PFS_BUILD_DIR) + "/agent/libpfs_preload.so";

struct said {
  pfs_test::run_result run;
  std::vector<std::string> lines;  // stderr
};

said run_with(const std::vector<std::string>& argv, std::vector<std::string> env) {
  static int n = 0;
  const std::string err_path = pfs_test::temp_dir() + "/stderr_" + std::to_string(n++);
  said s;
  s.run = pfs_test::run(argv, env, 60, {}, err_path);
  std::ifstream in(err_path);
  for (std::string line; std::getline(in, line);) s.lines.push_back(line);
  unlink(err_path.c_str());
  return s;
}

struct bad_setting {
  const char* what;
  std::vector<std::string> env;  // besides PFS_REGION
  std::string region;            // PFS_REGION; default: a path in the test's directory
  std::string expected;          // what the one line holds
  bool starts;                   // the agent starts anyway (the setting is ignored)
};

std::vector<bad_setting> bad_settings() {
  return {
      {"a region in a directory that does not exist",
       {},
       "/nonexistent/app.pfs",
       "could not create region \"/nonexistent/app.pfs\"",
       false},
      {"an instrument rule of unknown value",
       {"PFS_INSTRUMENT=%=MAYBE"},
       "",
       "PFS_INSTRUMENT: instrument rule \"%=MAYBE\" has value \"MAYBE\"",
       false},
      {"an unknown group",
       {"PFS_REGION_GROUP=no_such_group_here"},
       "",
       "PFS_REGION_GROUP: could not give region file",
       false},
      {"an unknown wait timer",
       {"PFS_WAIT_TIMER=SUNDIAL"},
       "",
       "PFS_WAIT_TIMER: unknown wait timer \"SUNDIAL\"",
       false},
      {"a malformed size", {"PFS_MAX_THREADS=abc"}, "", "ignored malformed sizes: PFS_MAX_THREADS=abc", true},
  };
}

void check_said_once(const said& s, const bad_setting& b) {
  ASSERT_EQ(s.lines.size(), 1u) << b.what << ": stderr should be one line";
  EXPECT_EQ(s.lines[0].rfind("perfschema: ", 0), 0u) << s.lines[0];
  EXPECT_NE(s.lines[0].find(b.expected), std::string::npos) << b.what << ": " << s.lines[0];
  EXPECT_NE(s.lines[0].find(b.starts ? "warning: " : "agent not started: "), std::string::npos) << s.lines[0];
}

std::vector<std::string> env_of(const bad_setting& b, const std::string& name) {
  std::vector<std::string> env = b.env;
  env.push_back("PFS_REGION=" + (b.region.empty() ? pfs_test::temp_dir() + "/" + name + ".pfs" : b.region));
  env.push_back("PFS_REMOVE_REGION_AT_EXIT=1");
  return env;
}

TEST(StartupErrors, ACxxProgramSaysOnceAndRunsOn) {
  int i = 0;
  for (const auto& b : bad_settings()) {
    const said s = run_with({kPrograms + "si_static"}, env_of(b, "cxx" + std::to_string(i++)));
    EXPECT_EQ(s.run.status, 0) << b.what;
    EXPECT_EQ(pfs_test::value(s.run, "agent_active"), b.starts ? 1 : 0) << b.what;
    check_said_once(s, b);
  }
}

TEST(StartupErrors, ACProgramSaysOnceAndInitFromEnvFails) {
  int i = 0;
  for (const auto& b : bad_settings()) {
    const said s = run_with({kPrograms + "si_c"}, env_of(b, "c" + std::to_string(i++)));
    EXPECT_EQ(s.run.status, 0) << b.what;
    EXPECT_EQ(pfs_test::value(s.run, "init_from_env"), b.starts ? 0 : -1) << b.what;
    check_said_once(s, b);
  }
}

TEST(StartupErrors, TheInterposerSaysOnce) {
  int i = 0;
  for (const auto& b : bad_settings()) {
    auto env = env_of(b, "preload" + std::to_string(i++));
    env.push_back("LD_PRELOAD=" + pfs_test::with_sanitizer_runtime(kPreload));
    if (pfs_test::kSanitized) env.push_back("ASAN_OPTIONS=detect_leaks=0");  // /bin/true is not ours
    const said s = run_with({"/bin/true"}, env);
    EXPECT_EQ(s.run.status, 0) << b.what;
    check_said_once(s, b);
  }
}

TEST(StartupErrors, QuietSaysNothing) {
  int i = 0;
  for (const auto& b : bad_settings()) {
    auto env = env_of(b, "quiet" + std::to_string(i++));
    env.push_back("PFS_QUIET=1");
    const said s = run_with({kPrograms + "si_static"}, env);
    EXPECT_EQ(s.run.status, 0) << b.what;
    EXPECT_TRUE(s.lines.empty()) << b.what << ": " << s.lines[0];
  }
}

TEST(StartupErrors, NoRegionSetSaysNothing) {
  const said s = run_with({kPrograms + "si_static"}, {"PFS_REGION="});
  EXPECT_EQ(s.run.status, 0);
  EXPECT_EQ(pfs_test::value(s.run, "agent_active"), 0);
  EXPECT_TRUE(s.lines.empty());
}

}  // namespace
