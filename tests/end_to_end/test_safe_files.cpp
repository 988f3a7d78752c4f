// Files the agent creates cannot be turned against the user who runs it (issue
// 42): a symbolic link, hard link or FIFO planted at a name the agent uses, or a
// directory other users control, is refused or left alone; nothing is written
// through it. Run as root in CI, where the other user's files are real (chown).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/provider/pfs.h"
#include "agent/reader/reader.h"
#include "agent/region/region.h"
#include "agent/region/safe_files.h"
#include "tests/agent/agent_test_util.h"

namespace {

using namespace pfs;
using pfs::test::in_child;

constexpr uid_t kNobody = 65534;

region_sizes tiny() {
  region_sizes s;
  s.max_classes = 8;
  s.max_threads = 2;
  s.history_long_size = 16;
  s.max_mutexes = s.max_rwlocks = s.max_conds = 4;
  s.max_files = 4;
  s.max_file_handles = 64;
  s.max_tables = 2;
  s.max_sockets = 4;
  return s;
}

// A fresh directory (mode 0700 of mkdtemp unless changed), removed at the end.
struct temp_dir {
  std::string path;
  temp_dir() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp != nullptr ? tmp : "/tmp") + "/pfs_safe_XXXXXX";
    path = mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~temp_dir() {
    const std::string cmd = "rm -rf '" + path + "'";
    if (!path.empty()) [[maybe_unused]]
      int rc = std::system(cmd.c_str());
  }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

// A file that must survive: its content and mode are checked afterwards.
struct victim {
  std::string path;
  explicit victim(std::string p) : path(std::move(p)) {
    std::ofstream(path) << "precious\n";
    chmod(path.c_str(), 0600);
  }
  std::string content() const {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }
  mode_t mode() const {
    struct stat st {};
    lstat(path.c_str(), &st);
    return st.st_mode & 07777;
  }
  void expect_untouched() const {
    EXPECT_EQ(content(), "precious\n");
    EXPECT_EQ(mode(), 0600u);
  }
};

bool is_symlink(const std::string& path) {
  struct stat st {};
  return lstat(path.c_str(), &st) == 0 && S_ISLNK(st.st_mode);
}

region_map create(const std::string& path, region_error& err, bool allow_unsafe_dir = false) {
  return region_map::create(path, tiny(), 0640, err, allow_unsafe_dir);
}

}  // namespace

TEST(SafeFiles, RegionCreateRefusesASymbolicLinkAtThePath) {
  temp_dir d;
  victim v(d / "victim");
  const std::string path = d / "app.pfs";
  ASSERT_EQ(symlink(v.path.c_str(), path.c_str()), 0);
  region_error err;
  region_map m = create(path, err);
  EXPECT_FALSE(m.valid());
  EXPECT_EQ(err.code, region_errc::unsafe);
  EXPECT_EQ(err.message, "could not create region \"" + path + "\": it is a symbolic link");
  v.expect_untouched();
  EXPECT_TRUE(is_symlink(path));  // neither followed nor replaced
}

TEST(SafeFiles, RegionCreateRefusesAHardLinkOfAnotherUsersFile) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the file to another user";
  temp_dir d;
  victim v(d / "victim");
  ASSERT_EQ(chown(v.path.c_str(), kNobody, kNobody), 0);
  const std::string path = d / "app.pfs";
  ASSERT_EQ(link(v.path.c_str(), path.c_str()), 0);
  region_error err;
  region_map m = create(path, err);
  EXPECT_FALSE(m.valid());
  EXPECT_EQ(err.code, region_errc::unsafe);
  EXPECT_NE(err.message.find("could not create region \"" + path + "\": it is a hard link"),
            std::string::npos)
      << err.message;
  v.expect_untouched();
}

// A hard link of one's own file is replaced by the new region; the other name
// keeps the old content (rename never writes into the old inode).
TEST(SafeFiles, RegionCreateReplacesAHardLinkOfItsOwnFileWithoutWritingIt) {
  temp_dir d;
  victim v(d / "victim");
  const std::string path = d / "app.pfs";
  ASSERT_EQ(link(v.path.c_str(), path.c_str()), 0);
  region_error err;
  region_map m = create(path, err);
  ASSERT_TRUE(m.valid()) << err.message;
  v.expect_untouched();
}

TEST(SafeFiles, RegionCreateRefusesAFifoAtThePathWithoutBlocking) {
  temp_dir d;
  const std::string path = d / "app.pfs";
  ASSERT_EQ(mkfifo(path.c_str(), 0666), 0);
  region_error err;
  region_map m = create(path, err);
  EXPECT_FALSE(m.valid());
  EXPECT_EQ(err.code, region_errc::unsafe);
  EXPECT_EQ(err.message, "could not create region \"" + path + "\": it is not a regular file");
}

TEST(SafeFiles, RegionCreateRefusesADirectoryWritableByOthersWithoutStickyBit) {
  temp_dir d;
  ASSERT_EQ(chmod(d.path.c_str(), 0777), 0);
  const std::string path = d / "app.pfs";
  region_error err;
  region_map m = create(path, err);
  EXPECT_FALSE(m.valid());
  EXPECT_EQ(err.code, region_errc::unsafe);
  EXPECT_EQ(err.message, "could not create region \"" + path + "\": its directory \"" + d.path +
                             "\" is writable by other users and has no sticky bit");
  EXPECT_EQ(err.detail, "Set PFS_ALLOW_UNSAFE_DIR=1 to create it there anyway.");
  EXPECT_NE(access(path.c_str(), F_OK), 0);

  region_map allowed = create(path, err, true);  // PFS_ALLOW_UNSAFE_DIR=1
  EXPECT_TRUE(allowed.valid()) << err.message;
}

TEST(SafeFiles, RegionCreateAcceptsAStickyWorldWritableDirectory) {
  temp_dir d;
  ASSERT_EQ(chmod(d.path.c_str(), 01777), 0);
  region_error err;
  region_map m = create(d / "app.pfs", err);
  EXPECT_TRUE(m.valid()) << err.message;
}

TEST(SafeFiles, RegionCreateRefusesADirectoryOfAnotherUser) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to give the directory to another user";
  temp_dir d;
  ASSERT_EQ(chown(d.path.c_str(), kNobody, kNobody), 0);
  region_error err;
  region_map m = create(d / "app.pfs", err);
  EXPECT_FALSE(m.valid());
  EXPECT_EQ(err.code, region_errc::unsafe);
  EXPECT_EQ(err.message, "could not create region \"" + (d / "app.pfs") + "\": its directory \"" + d.path +
                             "\" belongs to another user");
}

TEST(SafeFiles, RegionCreateRefusesADirectoryThatIsASymbolicLink) {
  temp_dir d;
  ASSERT_EQ(mkdir((d / "real").c_str(), 0700), 0);
  ASSERT_EQ(symlink((d / "real").c_str(), (d / "link").c_str()), 0);
  const std::string path = d / "link/app.pfs";
  region_error err;
  region_map m = create(path, err);
  EXPECT_FALSE(m.valid());
  EXPECT_EQ(err.code, region_errc::unsafe);
  EXPECT_NE(err.message.find("could not create region \"" + path + "\""), std::string::npos);
  EXPECT_NE(access((d / "real/app.pfs").c_str(), F_OK), 0);
}

// The old temporary name was <path>.tmp.<pid>: links planted there for every pid
// around ours are not written through; the region is created beside them.
TEST(SafeFiles, PlantedTemporaryNamesAreNotWrittenThrough) {
  temp_dir d;
  victim v(d / "victim");
  const std::string path = d / "app.pfs";
  const long pid = getpid();
  for (long p = pid - 50; p <= pid + 50; ++p)
    ASSERT_EQ(symlink(v.path.c_str(), (path + ".tmp." + std::to_string(p)).c_str()), 0);
  ASSERT_EQ(symlink(v.path.c_str(), (path + ".tmp").c_str()), 0);
  region_error err;
  region_map m = create(path, err);
  ASSERT_TRUE(m.valid()) << err.message;
  v.expect_untouched();
  struct stat st {};
  ASSERT_EQ(lstat(path.c_str(), &st), 0);
  EXPECT_TRUE(S_ISREG(st.st_mode));
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(SafeFiles, TemporaryNamesAreRandomAndRecognized) {
  temp_dir d;
  const int dir_fd = safe_files::open_directory(d.path.c_str());
  ASSERT_GE(dir_fd, 0);
  char a[64], b[64];
  const int fa = safe_files::create_unique(dir_fd, "app.pfs", O_RDWR, a, sizeof(a));
  const int fb = safe_files::create_unique(dir_fd, "app.pfs", O_RDWR, b, sizeof(b));
  ASSERT_GE(fa, 0);
  ASSERT_GE(fb, 0);
  EXPECT_STRNE(a, b);
  EXPECT_TRUE(safe_files::is_temporary_name(a)) << a;
  EXPECT_TRUE(safe_files::is_temporary_name("app.pfs.tmp"));
  EXPECT_FALSE(safe_files::is_temporary_name("app.pfs"));
  EXPECT_FALSE(safe_files::is_temporary_name("app.tmp.pfs"));
  close(fa);
  close(fb);
  close(dir_fd);
}

TEST(SafeFiles, ReadersRefuseASymbolicLinkUnlessAllowed) {
  temp_dir d;
  const std::string path = d / "app.pfs", link_path = d / "link.pfs";
  region_error err;
  region_map owner = create(path, err);
  ASSERT_TRUE(owner.valid()) << err.message;
  ASSERT_EQ(symlink(path.c_str(), link_path.c_str()), 0);
  region_map refused = region_map::open(link_path, false, err);
  EXPECT_FALSE(refused.valid());
  EXPECT_EQ(err.code, region_errc::unsafe);
  EXPECT_EQ(err.message, "region file \"" + link_path + "\" is a symbolic link");
  region_map followed = region_map::open(link_path, false, err, true);
  EXPECT_TRUE(followed.valid()) << err.message;
  EXPECT_EQ(reader::region_reader::open(link_path, false, err), nullptr);
  EXPECT_EQ(err.code, region_errc::unsafe);
}

// A trace file name planted as a link to another file: not written through, the
// program runs on, the refusal counts in trace_errors.
TEST(SafeFiles, APlantedTraceFileIsNotWrittenThrough) {
  temp_dir d;
  victim v(d / "victim");
  in_child([&] {
    options o = pfs::test::small_options("safe_trace");
    o.trace_dir = d.path;
    o.trace_all = true;
    ASSERT_TRUE(init(o)) << last_error();
    const std::string name = d / ("thread.background." + std::to_string(thread_id()));
    ASSERT_EQ(symlink(v.path.c_str(), name.c_str()), 0);
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 3; ++i) pfs::lock_guard g(m);
    EXPECT_EQ(pfs::test::lost(*current_region(), layout::kTraceErrors), 1u);
    pfs::shutdown();
    EXPECT_TRUE(is_symlink(name));
  });
  v.expect_untouched();
}

// A trace file of ours left by an earlier run is truncated and written again;
// one of another user's (or with two links) is not.
TEST(SafeFiles, AnExistingTraceFileIsReusedOnlyIfItIsOurs) {
  temp_dir d;
  victim v(d / "victim");
  in_child([&] {
    options o = pfs::test::small_options("safe_trace2");
    o.trace_dir = d.path;
    o.trace_all = true;
    ASSERT_TRUE(init(o)) << last_error();
    const std::string name = d / ("thread.background." + std::to_string(thread_id()));
    ASSERT_EQ(link(v.path.c_str(), name.c_str()), 0);  // two links
    pfs::mutex m{"app", "m"};
    { pfs::lock_guard g(m); }
    EXPECT_EQ(pfs::test::lost(*current_region(), layout::kTraceErrors), 1u);
    pfs::shutdown();
  });
  v.expect_untouched();
  in_child([&] {
    options o = pfs::test::small_options("safe_trace3");
    o.trace_dir = d.path;
    o.trace_all = true;
    ASSERT_TRUE(init(o)) << last_error();
    const std::string name = d / ("thread.background." + std::to_string(thread_id()));
    unlink(name.c_str());
    std::ofstream(name) << "an old trace\n";
    pfs::mutex m{"app", "m"};
    { pfs::lock_guard g(m); }
    pfs::shutdown();
    EXPECT_EQ(pfs::test::lost(*current_region(), layout::kTraceErrors), 0u);
    std::ifstream in(name);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first.rfind("/* perfschema trace file", 0), 0u) << first;
  });
}
