// The heap and anonymous maps under the interposer: a program of known allocations
// on three threads (tests/preload_programs/pl_memory.c) read back from
// memory_summary_by_thread_by_event_name exactly, in the allocator's usable sizes
// and in whole pages.
// Normal builds only: a sanitizer's runtime replaces malloc, and the interposer
// then leaves the heap alone (agent/CMakeLists.txt).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <string>

#include "agent/reader/reader.h"
#include "tests/preload_util.h"
#include "tests/process_util.h"

namespace {

using namespace pfs_test;
using pfs::reader::region_reader;

std::string preload_path() { return std::string(PFS_BUILD_DIR) + "/agent/libpfs_preload.so"; }

// pl_memory under the interposer, with allocator (a shared library, or "" for the
// C library's) after it in LD_PRELOAD, as a program linked against it has it.
void check_known_allocations(const std::string& allocator) {
  const std::string region = temp_dir() + "/pl_memory.pfs";
  unlink(region.c_str());
  const run_result r =
      run({std::string(PFS_BUILD_DIR) + "/tests/preload_programs/pl_memory"},
          {"LD_PRELOAD=" + preload_path() + " " + allocator, "PFS_REGION=" + region, "PFS_INSTRUMENT=%=ON"});
  ASSERT_EQ(r.status, 0) << r.out;
  tables t(region);
  ASSERT_TRUE(t.ok());
  std::map<std::int64_t, std::int64_t> thread_of_os;  // THREAD_OS_ID -> THREAD_ID
  for (auto& row : t.rows("threads"))
    if (!row["thread_os_id"].null) thread_of_os[row["thread_os_id"].i] = row["thread_id"].i;
  const std::pair<const char*, const char*> threads[] = {
      {"a", "memory/pl_memory/malloc"}, {"b", "memory/pl_memory/malloc"}, {"c", "memory/pl_memory/mmap"}};
  for (const auto& [who, event_name] : threads) {
    const std::string p = who;
    ASSERT_TRUE(thread_of_os.count(value(r, p + "_tid"))) << "no threads row for " << who << ": " << r.out;
    const std::int64_t thread_id = thread_of_os[value(r, p + "_tid")];
    bool seen = false;
    for (auto& row : t.rows("memory_summary_by_thread_by_event_name")) {
      if (row["thread_id"].i != thread_id || row["event_name"].s != event_name) continue;
      seen = true;
      EXPECT_EQ(row["count_alloc"].i, value(r, p + "_allocs")) << who;
      EXPECT_EQ(row["count_free"].i, value(r, p + "_frees")) << who;
      EXPECT_EQ(row["sum_number_of_bytes_alloc"].i, value(r, p + "_alloc_bytes")) << who;
      EXPECT_EQ(row["sum_number_of_bytes_free"].i, value(r, p + "_free_bytes")) << who;
      EXPECT_EQ(row["current_number_of_bytes_used"].i,
                value(r, p + "_alloc_bytes") - value(r, p + "_free_bytes"))
          << who;
      EXPECT_GE(row["high_number_of_bytes_used"].i, row["current_number_of_bytes_used"].i) << who;
    }
    EXPECT_TRUE(seen) << "no " << event_name << " row for thread " << who;
  }
  // The whole heap: at least what the two threads hold.
  auto global = t.row_where("memory_summary_global_by_event_name", "event_name", "memory/pl_memory/malloc");
  ASSERT_FALSE(global.empty());
  EXPECT_GE(global["count_alloc"].i, value(r, "a_allocs") + value(r, "b_allocs"));
  unlink(region.c_str());
}

bool usable() {
  struct stat st {};
  return stat(preload_path().c_str(), &st) == 0 && !kSanitized;
}

TEST(PreloadMemory, KnownAllocationsOnThreeThreadsAreCountedExactly) {
  if (!usable())
    GTEST_SKIP() << "no " << preload_path() << ", or a sanitizer build (its runtime owns malloc)";
  check_known_allocations("");
}

// Debian's jemalloc and tcmalloc (setup.sh installs them): their blocks counted
// the same way, in their usable sizes, and their own locks and maps left alone.
// PFS_PRELOAD_REQUIRE_ALLOCATORS=1 turns a missing one into a failure (CI).
TEST(PreloadMemory, OtherAllocatorsAreCountedTheSameWay) {
  if (!usable())
    GTEST_SKIP() << "no " << preload_path() << ", or a sanitizer build (its runtime owns malloc)";
  for (const char* allocator :
       {"/usr/lib/x86_64-linux-gnu/libjemalloc.so.2", "/usr/lib/x86_64-linux-gnu/libtcmalloc_minimal.so.4"}) {
    SCOPED_TRACE(allocator);
    struct stat st {};
    if (stat(allocator, &st) != 0) {
      if (std::getenv("PFS_PRELOAD_REQUIRE_ALLOCATORS") != nullptr) ADD_FAILURE() << "not installed";
      continue;
    }
    check_known_allocations(allocator);
  }
}

}  // namespace
