// Retention of exited processes' regions in a %p directory (region_retention.h):
// a process that makes its region there removes the regions of exited processes
// older than PFS_REGION_KEEP and the oldest beyond PFS_REGION_KEEP_COUNT; a live
// process's region, a young one, and other files stay; a forked child sweeps for
// its parent; a reader that has a removed region open keeps reading it.
#include <dirent.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <set>
#include <string>
#include <vector>

#include "agent/provider/internal/region_retention.h"
#include "agent/reader/reader.h"
#include "tests/agent/agent_test_util.h"

namespace {

using namespace pfs;
using namespace pfs::test;

std::set<std::string> files_in(const std::string& dir) {
  std::set<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (const dirent* e = readdir(d))
      if (e->d_name[0] != '.') out.insert(e->d_name);
    closedir(d);
  }
  return out;
}

void age(const std::string& path, int seconds) {
  timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= seconds;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
}

options pattern_options(const std::string& pattern, std::uint64_t keep_s, std::uint32_t keep_count) {
  options o = small_options("retention");
  o.region_path = pattern;
  o.remove_at_exit = false;
  o.region_keep_ns = keep_s * 1000000000ull;
  o.region_keep_count = keep_count;
  return o;
}

// A process that made its region with the pattern and exited: its file's name.
std::string exited_region(const std::string& dir, const std::string& pattern) {
  const auto before = files_in(dir);
  in_child([&] { ASSERT_TRUE(init(pattern_options(pattern, 0, 0))) << last_error(); });
  for (const auto& f : files_in(dir))
    if (before.count(f) == 0) return f;
  ADD_FAILURE() << "no region made in " << dir;
  return "";
}

class Retention : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_region_path(::testing::UnitTest::GetInstance()->current_test_info()->name()) + ".d";
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    pattern_ = dir_ + "/app.%p.pfs";
  }
  void TearDown() override {
    for (const auto& f : files_in(dir_)) unlink((dir_ + "/" + f).c_str());
    rmdir(dir_.c_str());
  }
  std::string dir_, pattern_;
};

TEST_F(Retention, ANewProcessRemovesTheExpiredRegionsOnly) {
  // Five exited processes, changed 100, 200, ... 500 s ago; a live one changed
  // 1000 s ago; a young exited one; a file of another name.
  std::string dead[5];
  for (int i = 0; i < 5; ++i) {
    dead[i] = exited_region(dir_, pattern_);
    age(dir_ + "/" + dead[i], 100 * (i + 1));
  }
  const std::string young = exited_region(dir_, pattern_);
  int go[2], ready[2];
  ASSERT_EQ(pipe(go), 0);
  ASSERT_EQ(pipe(ready), 0);
  const pid_t live = fork();
  ASSERT_GE(live, 0);
  if (live == 0) {
    const bool ok = init(pattern_options(pattern_, 0, 0));
    char c = ok ? 'y' : 'n';
    (void)!write(ready[1], &c, 1);
    (void)!read(go[0], &c, 1);
    _exit(0);
  }
  char c = 0;
  ASSERT_EQ(read(ready[0], &c, 1), 1);
  ASSERT_EQ(c, 'y');
  const std::string live_name = "app." + std::to_string(live) + ".pfs";
  age(dir_ + "/" + live_name, 1000);
  const std::string other = dir_ + "/other.pfs";
  close(open(other.c_str(), O_CREAT | O_WRONLY, 0600));
  age(other, 1000);

  // A reader has the third one open while it goes.
  region_error err;
  const auto held = reader::region_reader::open(dir_ + "/" + dead[2], false, err);
  ASSERT_TRUE(held != nullptr) << err.message;

  // Keep 2: the two most recent exited ones stay (the young one is too young to
  // count), the three older go.
  std::string made;
  in_child([&] { ASSERT_TRUE(init(pattern_options(pattern_, 0, 2))) << last_error(); });
  auto now = files_in(dir_);
  for (const auto& f : now)
    if (f != live_name && f != young && f != "other.pfs" && f.rfind("app.", 0) == 0 && f != dead[0] &&
        f != dead[1] && f != dead[2] && f != dead[3] && f != dead[4])
      made = f;
  EXPECT_FALSE(made.empty());
  EXPECT_EQ(now.count(dead[0]), 1u);
  EXPECT_EQ(now.count(dead[1]), 1u);
  EXPECT_EQ(now.count(dead[2]), 0u);
  EXPECT_EQ(now.count(dead[3]), 0u);
  EXPECT_EQ(now.count(dead[4]), 0u);
  EXPECT_EQ(now.count(young), 1u);
  EXPECT_EQ(now.count(live_name), 1u);
  EXPECT_EQ(now.count("other.pfs"), 1u);
  std::vector<reader::row> rows;
  EXPECT_FALSE(held->scan(*reader::find_table("status"), rows));  // still readable: removed, not gone
  EXPECT_FALSE(rows.empty());

  // Keep 150 s: the one changed 100 s ago stays, the one of 200 s goes.
  in_child([&] { ASSERT_TRUE(init(pattern_options(pattern_, 150, 0))) << last_error(); });
  now = files_in(dir_);
  EXPECT_EQ(now.count(dead[0]), 1u);
  EXPECT_EQ(now.count(dead[1]), 0u);
  EXPECT_EQ(now.count(live_name), 1u);

  // A forked child sweeps for its parent: keep 50 s removes the last old one.
  in_child([&] {
    ASSERT_TRUE(init(pattern_options(pattern_, 50, 0))) << last_error();
    const pid_t child = fork();
    if (child == 0) _exit(0);
    int status = 0;
    waitpid(child, &status, 0);
    EXPECT_TRUE(WIFEXITED(status));
  });
  now = files_in(dir_);
  EXPECT_EQ(now.count(dead[0]), 0u);
  EXPECT_EQ(now.count(live_name), 1u);
  EXPECT_EQ(now.count(young), 1u);
  for (const auto& f : now) EXPECT_EQ(f.find(".sweep.tmp"), std::string::npos) << f;

  ASSERT_EQ(write(go[1], "x", 1), 1);
  int status = 0;
  waitpid(live, &status, 0);
}

// More exited regions than one sweep could list before (1,024): a server that forked
// faster than its sweeps ran. One sweep brings the directory back to the count, the
// newest kept, however many there are; expired ones go too.
TEST_F(Retention, ASweepKeepsTheNewestOfManyExitedRegions) {
  const int n = 2500;
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  const std::uint64_t now_ns =
      static_cast<std::uint64_t>(now.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(now.tv_nsec);
  for (int i = 0; i < n; ++i) {  // app.<i>.pfs changed 20 + i seconds before now: the higher i, the older
    const std::string path = dir_ + "/app." + std::to_string(100000 + i) + ".pfs";
    const int fd = open(path.c_str(), O_CREAT | O_WRONLY, 0600);
    ASSERT_GE(fd, 0) << path;
    close(fd);
    timespec times[2] = {now, now};
    times[0].tv_sec -= 20 + i;
    times[1] = times[0];
    ASSERT_EQ(utimensat(AT_FDCWD, path.c_str(), times, 0), 0) << path;
  }
  const int dir_fd = open(dir_.c_str(), O_RDONLY | O_DIRECTORY);
  ASSERT_GE(dir_fd, 0);
  pfs::detail::retention_policy keep_count;
  keep_count.keep_count = 1000;
  EXPECT_EQ(pfs::detail::sweep_exited_regions(dir_fd, "app.%p.pfs", keep_count, now_ns),
            std::size_t(n - 1000));
  auto left = files_in(dir_);
  EXPECT_EQ(left.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(left.count("app." + std::to_string(100000 + i) + ".pfs"), 1u) << i;
  // By age too: changed 520 s ago or before goes (i >= 500), whatever the count allows.
  pfs::detail::retention_policy by_age;
  by_age.keep_ns = 520ull * 1000000000ull;
  by_age.keep_count = 5000;
  EXPECT_EQ(pfs::detail::sweep_exited_regions(dir_fd, "app.%p.pfs", by_age, now_ns), 500u);
  left = files_in(dir_);
  EXPECT_EQ(left.size(), 500u);
  EXPECT_EQ(left.count("app.100499.pfs"), 1u);
  EXPECT_EQ(left.count("app.100500.pfs"), 0u);
  close(dir_fd);
}

TEST(RetentionOptions, DurationsParse) {
  std::uint64_t ns = 0;
  ASSERT_TRUE(detail::parse_keep_duration("600", &ns));
  EXPECT_EQ(ns, 600000000000ull);
  ASSERT_TRUE(detail::parse_keep_duration("10min", &ns));
  EXPECT_EQ(ns, 600000000000ull);
  ASSERT_TRUE(detail::parse_keep_duration("2h", &ns));
  EXPECT_EQ(ns, 7200000000000ull);
  ASSERT_TRUE(detail::parse_keep_duration("1d", &ns));
  EXPECT_EQ(ns, 86400000000000ull);
  EXPECT_FALSE(detail::parse_keep_duration("", &ns));
  EXPECT_FALSE(detail::parse_keep_duration("ten", &ns));
  EXPECT_FALSE(detail::parse_keep_duration("5 weeks", &ns));
}

}  // namespace
