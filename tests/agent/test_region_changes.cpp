// Every entry point of the agent keeps the program running when its region file
// changed under it: truncated, emptied, replaced by another file, or overwritten
// with garbage while mapped. The C ABI's entry points are those of the service
// table (pfs_service.h): the test walks the table and calls each through its
// scenario, so an entry point added to the table without a scenario fails here.
// The C++ API is called on top, from the main thread and from threads started
// after the change (a thread's registration resolved the thread array from the
// damaged header and read address 0).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_io.h"
#include "agent/provider/pfs_service.h"
#include "agent/provider/pfs_socket.h"
#include "agent/provider/pfs_work.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/entry_points.h"

namespace {

using namespace pfs::entry_points;

enum class change { truncate, empty, replace, garbage };

void change_file(change c, const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st {};
  fstat(fd, &st);
  switch (c) {
    case change::truncate:
      (void)!ftruncate(fd, 4096);
      break;
    case change::empty:
      (void)!ftruncate(fd, 0);
      break;
    case change::replace: {
      const std::string other = path + ".other";
      const int o = ::open(other.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      (void)!::write(o, "not a region", 12);
      ::close(o);
      (void)!::rename(other.c_str(), path.c_str());
      break;
    }
    case change::garbage: {
      // Every byte of the file, the header included, as the page cache shares it
      // with the mapping.
      std::mt19937_64 rng(42);
      std::vector<std::uint64_t> junk(static_cast<std::size_t>(st.st_size) / 8);
      for (auto& w : junk) w = rng();
      (void)!::pwrite(fd, junk.data(), junk.size() * 8, 0);
      break;
    }
  }
  ::close(fd);
}

// In a child: the agent, the fixture, every entry point once on the sound region,
// the change, then every entry point again from this thread and from four threads
// started after it, twice each. The child's exit status says how it went.
void run_changed(change c, bool trace) {
#if defined(__SANITIZE_THREAD__)
  // The fault handler swaps the pages of a region that shrank with mmap(MAP_FIXED)
  // under running threads, by design (they only load and store atomically); TSan
  // models that mmap as a plain write of the whole range (as test_region_faults).
  if (c == change::truncate || c == change::empty) GTEST_SKIP() << "mmap(MAP_FIXED) is outside TSan's model";
#endif
  pfs::options o = pfs::test::small_options("changes");
  o.remove_at_exit = false;
  o.trace_all = trace;
  fflush(nullptr);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  const std::string err_path = o.region_path + ".stderr";
  if (child == 0) {
    if (std::freopen(err_path.c_str(), "w", stderr) == nullptr) _exit(2);
    if (!pfs::init(o)) _exit(3);
    if (!make_fixture(o.region_path)) _exit(4);
    const auto all = scenarios();
    every_entry_point(all);
    change_file(c, o.region_path);
    std::vector<std::thread> threads;
    for (int i = 0; i < 4; ++i)
      threads.emplace_back([&] {
        for (int round = 0; round < 2; ++round) every_entry_point(all);
      });
    for (int round = 0; round < 2; ++round) every_entry_point(all);
    for (auto& t : threads) t.join();
    if (pfs_init_from_env() != -1 && pfs_init_from_env() != 0) _exit(5);
    pfs_shutdown();
    every_entry_point(all);  // after shutdown, too
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  EXPECT_FALSE(WIFSIGNALED(status)) << "the program died of signal " << WTERMSIG(status);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit status " << WEXITSTATUS(status);
  // A region that shrank is said once, however many threads found it so.
  std::ifstream in(err_path);
  std::stringstream err;
  err << in.rdbuf();
  const std::string said = err.str();
  std::size_t lines = 0;
  for (std::size_t at = said.find("was truncated or shrunk"); at != std::string::npos;
       at = said.find("was truncated or shrunk", at + 1))
    ++lines;
  EXPECT_EQ(lines, c == change::truncate || c == change::empty ? 1u : 0u) << said;
  unlink(err_path.c_str());
  unlink(o.region_path.c_str());
  unlink((o.region_path + ".data").c_str());
}

TEST(RegionChanges, EveryEntryPointOfTheServiceTableHasAScenario) {
  const auto all = scenarios();
  const auto table = service_entry_points();
  EXPECT_GE(table.size(), 75u);  // version 2 as of this writing
  for (std::size_t i = 0; i < table.size(); ++i)
    EXPECT_TRUE(all.count(table[i]) == 1) << "entry point " << i << " of the service table has no scenario";
  EXPECT_EQ(all.size(), table.size());
}

// setup_timers' wait timer is a byte of the header that SQL may change: damaged, it
// indexed the timer converters past their end when a traced wait was written
// (found by pfs_fuzz_provider; tests/fuzz/corpus-provider/wait-timer-out-of-range).
TEST(RegionChanges, AWaitTimerOutOfRangeIsNoTimer) {
  pfs::options o = pfs::test::small_options("wait_timer");
  o.trace_all = true;
  pfs::test::in_child([&] {
    ASSERT_TRUE(pfs::init(o)) << pfs::last_error();
    pfs::mutex m{"changed", "timer"};
    for (const int bad : {7, 8, 210, 255}) {
      pfs::current_region()->header().wait_timer = static_cast<std::uint8_t>(bad);  // the file's byte
      pfs::lock_guard g(m);
    }
  });
}

TEST(RegionChanges, TruncatedWhileMapped) { run_changed(change::truncate, false); }
TEST(RegionChanges, EmptiedWhileMapped) { run_changed(change::empty, false); }
TEST(RegionChanges, ReplacedWhileMapped) { run_changed(change::replace, false); }
TEST(RegionChanges, OverwrittenWithGarbageWhileMapped) { run_changed(change::garbage, false); }
TEST(RegionChanges, TruncatedWhileTracing) { run_changed(change::truncate, true); }
TEST(RegionChanges, OverwrittenWithGarbageWhileTracing) { run_changed(change::garbage, true); }

}  // namespace
