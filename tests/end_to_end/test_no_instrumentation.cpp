// PFS_NO_INSTRUMENTATION (CMake: pfs_api_off, or PFS_INSTRUMENTATION=OFF for
// pfs_api): a program written against the API builds with no agent, runs, and
// leaves no region even when PFS_REGION asks for one.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

TEST(NoInstrumentation, AProgramBuiltWithoutTheAgentRunsAndWritesNoRegion) {
  const std::string dir = "/tmp/pfs_off_" + std::to_string(getpid());
  ASSERT_EQ(std::system(("mkdir -p " + dir).c_str()), 0);
  const std::string region = dir + "/off.pfs";
  const std::string cmd = "PFS_REGION=" + region + " PFS_INSTRUMENT='%=ON' " + std::string(PFS_BUILD_DIR) +
                          "/tests/pfs_off_program " + dir + " > " + dir + "/out.txt";
  const int status = std::system(cmd.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  struct stat st {};
  EXPECT_NE(stat(region.c_str(), &st), 0) << "a region was written";
  FILE* f = std::fopen((dir + "/out.txt").c_str(), "r");
  ASSERT_NE(f, nullptr);
  char buf[256] = {};
  const std::size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  EXPECT_EQ(std::string(buf, n), "locks=1000\nthread_id=0\nactive=0\n");
  std::system(("rm -rf " + dir).c_str());
}

}  // namespace
