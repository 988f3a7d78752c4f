// Forked children of a program that links the agent (issue 14): with %p in
// PFS_REGION each worker of tests/fork/pfs_prefork.cpp records into a region of its
// own, which holds what the worker did and nothing of the parent's (a second
// thread of the parent locks all along, so fork meets the agent busy); without %p
// the children record nothing. The interposer's twin is in test_preload.cpp.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <filesystem>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "tests/process_util.h"
#include "timers/timer.h"

namespace {

using namespace pfs_test;

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif

std::string prefork() { return std::string(PFS_BUILD_DIR) + "/tests/pfs_prefork"; }

std::set<long> workers_of(const run_result& r) {
  std::set<long> out;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);)
    if (line.rfind("worker=", 0) == 0) out.insert(std::atol(line.c_str() + 7));
  return out;
}

std::int64_t bytes_written(tables& t, const std::string& name_part) {
  std::int64_t n = 0;
  for (auto& f_row : t.rows("file_summary_by_instance"))
    if (f_row["file_name"].s.find(name_part) != std::string::npos) n += f_row["sum_number_of_bytes_write"].i;
  return n;
}

class Fork : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = temp_dir() + "/" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
    mkdir(dir_.c_str(), 0700);
  }
  std::vector<std::string> env(const std::string& region) const {
    // The CYCLE watch on, as on a kvm-clock guest: its thread is the agent's, not one
    // of the program's threads (checked below), and each child starts its own.
    return {"PFS_REGION=" + region,
            "PFS_INSTRUMENT=%=ON",
            "WORKERS=3",
            "LOCKS=1000",
            "BYTES=4096",
            "PFS_CONSUMERS=events_waits_history_long=ON",
            "PFS_TIMER_WATCH=on",
            "PFS_TIMER_WATCH_INTERVAL_MS=10"};
  }
  std::string dir_;
};

TEST_F(Fork, WorkersRecordIntoRegionsOfTheirOwn) {
  run_result r = run({prefork(), dir_}, env(dir_ + "/app.%p.pfs"));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::set<long> workers = workers_of(r);
  ASSERT_EQ(workers.size(), 3u) << r.out;
  const std::string cls = "wait/synch/mutex/prefork/queue_lock";
  int regions = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_)) {
    if (f.path().extension() != ".pfs") continue;
    ++regions;
    const std::string path = f.path().string();
    tables t(path);
    ASSERT_TRUE(t.ok()) << path;
    const long pid = static_cast<long>(t.status("pid"));
    EXPECT_EQ(path, dir_ + "/app." + std::to_string(pid) + ".pfs");
    EXPECT_TRUE(t.lost().empty()) << path;
    // The watch runs in the parent and in each worker (where CYCLE is available;
    // not in a child of a sanitizer build: agent_timer_watch.cpp).
    const bool cycle = pfs::timers::info(pfs::timers::timer_kind::cycle).available;
    EXPECT_EQ(t.status("cycle_rate_watch"), cycle && (workers.count(pid) == 0 || !kSanitized) ? 1 : 0)
        << path;
    if (workers.count(pid) == 0) {  // the parent: its own locks only, and its file
      EXPECT_EQ(t.count_star(cls), value(r, "parent_locks"));
      EXPECT_EQ(bytes_written(t, "parent.data"), value(r, "worker_bytes"));
      EXPECT_EQ(bytes_written(t, "worker."), 0);
      continue;
    }
    // A worker: exactly its own locks and bytes; the parent's are not there.
    EXPECT_EQ(t.count_star(cls), value(r, "worker_locks")) << path;
    EXPECT_EQ(bytes_written(t, "worker." + std::to_string(pid) + ".data"), value(r, "worker_bytes"));
    EXPECT_EQ(bytes_written(t, "parent.data"), 0) << path;
    EXPECT_EQ(t.count_star("wait/synch/mutex/prefork/busy_lock"), 0) << path;
    // Nor its latency distribution: the busy thread's histograms, folded into their
    // class's as the thread left the child, are zeroed with the other summaries.
    std::int64_t busy_buckets = 0;
    for (auto& h_row : t.rows("events_waits_histogram_global_by_event_name"))
      if (h_row["event_name"].s == "wait/synch/mutex/prefork/busy_lock")
        busy_buckets += h_row["count_bucket"].i;
    EXPECT_EQ(busy_buckets, 0) << path;
    // Only the forking thread came along; its waits are the child's, in history_long too.
    auto threads = t.rows("threads");
    ASSERT_EQ(threads.size(), 1u) << path;
    std::int64_t queue_waits = 0;
    for (auto& w_row : t.rows("events_waits_history_long")) {
      EXPECT_EQ(w_row["thread_id"].i, threads[0]["thread_id"].i);
      queue_waits += w_row["event_name"].s == cls;
    }
    EXPECT_EQ(queue_waits, value(r, "worker_locks")) << path;
  }
  EXPECT_EQ(regions, 4);
}

// Issue 41: a region per process is sparse, and a child's copy holds only what the
// parent wrote of what the child keeps (the header, classes, setup, instances, the
// forking thread's slot), not the histories or other threads' slots: far less than
// the file's size, which is the parent's. The default region is 26.0 MiB; a worker
// that locks a mutex and writes a file holds some 200 KiB (bench/fork_cost.sh).
TEST_F(Fork, RegionsPerProcessAreSparse) {
  run_result r = run({prefork(), dir_}, env(dir_ + "/app.%p.pfs"));
  ASSERT_EQ(r.status, 0) << r.out;
  const std::set<long> workers = workers_of(r);
  ASSERT_EQ(workers.size(), 3u) << r.out;
  std::int64_t parent_size = 0;
  std::vector<struct stat> children;
  for (const auto& f : std::filesystem::directory_iterator(dir_)) {
    if (f.path().extension() != ".pfs") continue;
    struct stat st {};
    ASSERT_EQ(stat(f.path().c_str(), &st), 0);
    const long pid = std::atol(f.path().stem().extension().string().c_str() + 1);
    // The parent too: it wrote its threads' events (here a long history), not every array.
    EXPECT_LT(st.st_blocks * 512, st.st_size / 4) << f.path() << " holds " << st.st_blocks * 512 << " bytes";
    if (workers.count(pid) == 0)
      parent_size = st.st_size;
    else
      children.push_back(st);
  }
  ASSERT_EQ(children.size(), 3u);
  ASSERT_GT(parent_size, 8 << 20);  // the default sizes: a file of many MiB
  for (const struct stat& st : children) {
    EXPECT_EQ(st.st_size, parent_size);  // the same layout, at the same addresses
    EXPECT_LE(st.st_blocks * 512, 1 << 20) << "a worker's region holds " << st.st_blocks * 512 << " bytes";
    std::printf("a worker's region: %lld bytes on disk\n", static_cast<long long>(st.st_blocks) * 512);
  }
}

TEST_F(Fork, WithoutAPatternChildrenRecordNothing) {
  const std::string region = dir_ + "/app.pfs";
  run_result r = run({prefork(), dir_}, env(region));
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region);
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(t.count_star("wait/synch/mutex/prefork/queue_lock"), value(r, "parent_locks"));
  EXPECT_EQ(bytes_written(t, "worker."), 0);
  int regions = 0;
  for (const auto& f : std::filesystem::directory_iterator(dir_)) regions += f.path().extension() == ".pfs";
  EXPECT_EQ(regions, 1);
}

}  // namespace
