// Memory instrumentation end to end: known allocations through the C ABI and the
// C++ API, read back exactly from memory_summary_by_thread_by_event_name,
// memory_summary_global_by_event_name and threads; MySQL's rules for a block freed
// or claimed by another thread, realloc, TRUNCATE, exited threads, lost classes.
#include <gtest/gtest.h>

#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs_memory.h"
#include "agent/reader/reader.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using pfs::test::I;
using pfs::test::in_child;
using pfs::test::named_row;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::small_options;

options memory_options(const char* tag) {
  options o = small_options(tag);
  o.sizes.max_classes = 64;
  return o;
}

// The row of a class (and thread, when thread_id is not 0).
named_row row_of(const char* event_name, std::uint64_t thread_id = 0) {
  const char* table =
      thread_id == 0 ? "memory_summary_global_by_event_name" : "memory_summary_by_thread_by_event_name";
  for (const auto& r : scan(table))
    if (S(r, "event_name") == event_name &&
        (thread_id == 0 || I(r, "thread_id") == static_cast<std::int64_t>(thread_id)))
      return r;
  std::string seen;
  for (const auto& r : scan(table))
    seen += S(r, "event_name") + "@" + std::to_string(I(r, "thread_id")) + " ";
  ADD_FAILURE() << "no row for " << event_name << " in " << table << ": " << seen;
  return {};
}

// count_alloc, count_free, bytes alloc, bytes free, low/current/high count, low/current/high bytes.
std::vector<std::int64_t> values(const named_row& r) {
  std::vector<std::int64_t> v;
  for (const char* c : {"count_alloc", "count_free", "sum_number_of_bytes_alloc", "sum_number_of_bytes_free",
                        "low_count_used", "current_count_used", "high_count_used", "low_number_of_bytes_used",
                        "current_number_of_bytes_used", "high_number_of_bytes_used"})
    v.push_back(I(r, c));
  return v;
}
using V = std::vector<std::int64_t>;

const named_row* thread_row(std::uint64_t thread_id, std::vector<named_row>& rows) {
  rows = scan("threads");
  for (const auto& r : rows)
    if (I(r, "thread_id") == static_cast<std::int64_t>(thread_id)) return &r;
  return nullptr;
}

TEST(Memory, AllocAndFreeAreCountedExactlyPerThreadAndClass) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_exact")));
    const pfs_key k = pfs_register_memory("test", "buffers", 0);
    ASSERT_NE(k, 0u);
    pfs_memory_owner o1, o2, o3;
    EXPECT_EQ(pfs_memory_alloc(k, 100, &o1), k);
    EXPECT_EQ(pfs_memory_alloc(k, 200, &o2), k);
    EXPECT_EQ(pfs_memory_alloc(k, 300, &o3), k);
    pfs_memory_free(k, 200, o2);
    const std::uint64_t me = thread_id();
    EXPECT_EQ(values(row_of("memory/test/buffers", me)), (V{3, 1, 600, 200, 0, 2, 3, 0, 400, 600}));
    EXPECT_EQ(values(row_of("memory/test/buffers")), (V{3, 1, 600, 200, 0, 2, 3, 0, 400, 600}));
    std::vector<named_row> rows;
    const named_row* t = thread_row(me, rows);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(I(*t, "total_memory"), 400);
    EXPECT_EQ(I(*t, "max_total_memory"), 600);
    EXPECT_EQ(I(*t, "controlled_memory"), 0);  // the class is not PFS_MEMORY_CONTROLLED
    pfs_memory_free(k, 100, o1);
    pfs_memory_free(k, 300, o3);
    EXPECT_EQ(values(row_of("memory/test/buffers", me)), (V{3, 3, 600, 600, 0, 0, 3, 0, 0, 600}));
  });
}

TEST(Memory, ReallocGrowingAndShrinkingIsAFreeAndAnAlloc) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_realloc")));
    const pfs_key k = pfs_register_memory("test", "grown", PFS_MEMORY_CONTROLLED);
    pfs_memory_owner o;
    ASSERT_EQ(pfs_memory_alloc(k, 100, &o), k);
    ASSERT_EQ(pfs_memory_realloc(k, 100, 300, &o), k);
    ASSERT_EQ(pfs_memory_realloc(k, 300, 50, &o), k);
    const std::uint64_t me = thread_id();
    // As MySQL's count_realloc: the count in use stays 1; bytes 100 -> 300 -> 50.
    EXPECT_EQ(values(row_of("memory/test/grown", me)), (V{3, 2, 450, 400, 0, 1, 1, 0, 50, 300}));
    std::vector<named_row> rows;
    const named_row* t = thread_row(me, rows);
    ASSERT_NE(t, nullptr);
    EXPECT_EQ(I(*t, "controlled_memory"), 50);
    EXPECT_EQ(I(*t, "max_controlled_memory"), 300);
    pfs_memory_free(k, 50, o);
  });
}

TEST(Memory, ABlockFreedByAnotherThreadCountsInTheFreeingThreadsRow) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_cross")));
    const pfs_key k = pfs_register_memory("test", "shared", 0);
    pfs_memory_owner o;
    ASSERT_EQ(pfs_memory_alloc(k, 1000, &o), k);
    std::uint64_t other = 0;
    std::thread t([&] {
      register_thread("test", "freer");
      other = thread_id();
      pfs_memory_free(k, 1000, o);
      // Read while the thread lives: its rows leave with it.
      EXPECT_EQ(values(row_of("memory/test/shared", other)), (V{0, 1, 0, 1000, -1, -1, 0, -1000, -1000, 0}));
      unregister_thread();
    });
    t.join();
    const std::uint64_t me = thread_id();
    EXPECT_EQ(values(row_of("memory/test/shared", me)), (V{1, 0, 1000, 0, 0, 1, 1, 0, 1000, 1000}));
    // Globally the block is gone; the exited thread's row was folded into the class.
    const V global = values(row_of("memory/test/shared"));
    EXPECT_EQ((V{global[0], global[1], global[2], global[3], global[5], global[8]}),
              (V{1, 1, 1000, 1000, 0, 0}));
  });
}

TEST(Memory, ClaimMovesABlockToTheCallingThread) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_claim")));
    const pfs_key k = pfs_register_memory("test", "handed", 0);
    pfs_memory_owner o;
    ASSERT_EQ(pfs_memory_alloc(k, 500, &o), k);
    const pfs_memory_owner allocated_by = o;
    const std::uint64_t me = thread_id();
    std::thread t([&] {
      register_thread("test", "taker");
      const std::uint64_t other = thread_id();
      EXPECT_EQ(pfs_memory_claim(k, 500, &o), k);
      EXPECT_NE(o, allocated_by);
      EXPECT_EQ(values(row_of("memory/test/handed", other)), (V{1, 0, 500, 0, 0, 1, 1, 0, 500, 500}));
      // The old owner's row counts the block freed.
      const V old = values(row_of("memory/test/handed", me));
      EXPECT_EQ((V{old[0], old[1], old[3], old[5], old[8]}), (V{1, 1, 500, 0, 0}));
      pfs_memory_free(k, 500, o);
      EXPECT_EQ(values(row_of("memory/test/handed", other)), (V{1, 1, 500, 500, 0, 0, 1, 0, 0, 500}));
      unregister_thread();
    });
    t.join();
  });
}

TEST(Memory, TruncateRebasesTheCountsAndSetsTheMarksToWhatIsInUse) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_truncate")));
    const pfs_key k = pfs_register_memory("test", "kept", 0);
    pfs_memory_owner o[3];
    for (auto& x : o) ASSERT_EQ(pfs_memory_alloc(k, 64, &x), k);
    pfs_memory_free(k, 64, o[0]);
    const std::uint64_t me = thread_id();
    // By thread: the pairs that cancel out move to the global rows, which stay as they were.
    setup::reset_memory_summaries(*current_region(), true);
    EXPECT_EQ(values(row_of("memory/test/kept", me)), (V{2, 0, 128, 0, 2, 2, 2, 128, 128, 128}));
    EXPECT_EQ(values(row_of("memory/test/kept")), (V{3, 1, 192, 64, 2, 2, 2, 128, 128, 128}));
    // Global: every row rebased.
    setup::reset_memory_summaries(*current_region(), false);
    EXPECT_EQ(values(row_of("memory/test/kept")), (V{2, 0, 128, 0, 2, 2, 2, 128, 128, 128}));
    pfs_memory_free(k, 64, o[1]);
    EXPECT_EQ(values(row_of("memory/test/kept", me)), (V{2, 1, 128, 64, 1, 1, 2, 64, 64, 128}));
    pfs_memory_free(k, 64, o[2]);
  });
}

TEST(Memory, TheCppApiCountsBlocksAndStandardContainers) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_cpp")));
    static constinit memory_class blocks{"test", "blocks"};
    static constinit memory_class vectors{"test", "vectors"};
    void* p = memory::allocate(blocks, 1000);
    ASSERT_NE(p, nullptr);
    p = memory::reallocate(p, 4000);
    ASSERT_NE(p, nullptr);
    const std::uint64_t me = thread_id();
    EXPECT_EQ(values(row_of("memory/test/blocks", me)), (V{2, 1, 5000, 1000, 0, 1, 1, 0, 4000, 4000}));
    memory::deallocate(p);
    EXPECT_EQ(I(row_of("memory/test/blocks", me), "current_number_of_bytes_used"), 0);
    {
      std::vector<int, allocator<int>> v{allocator<int>(vectors)};
      for (int i = 0; i < 1000; ++i) v.push_back(i);
      const named_row r = row_of("memory/test/vectors", me);
      EXPECT_EQ(I(r, "current_count_used"), 1);
      EXPECT_EQ(I(r, "current_number_of_bytes_used"), static_cast<std::int64_t>(v.capacity() * sizeof(int)));
      EXPECT_GE(I(r, "count_alloc"), 10);  // every growth
    }
    EXPECT_EQ(I(row_of("memory/test/vectors", me), "current_number_of_bytes_used"), 0);
  });
}

TEST(Memory, ClassesAreCountedNeverTimedAndTheAgentShowsItsOwnMemory) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_setup")));
    ASSERT_NE(pfs_register_memory("test", "global", PFS_MEMORY_GLOBAL_ONLY), 0u);
    ASSERT_TRUE(set_instrument("memory/%", true, true));  // TIMED cannot be set
    bool seen = false;
    for (const auto& r : scan("setup_instruments")) {
      if (S(r, "name").rfind("memory/", 0) != 0) continue;
      seen = true;
      EXPECT_EQ(S(r, "enabled"), "YES") << S(r, "name");
      EXPECT_EQ(S(r, "timed"), "<NULL>") << S(r, "name");
    }
    EXPECT_TRUE(seen);
    // The region's arrays, in use from start-up to exit.
    const named_row own = row_of("memory/performance_schema/events_waits");
    EXPECT_GT(I(own, "current_number_of_bytes_used"), 0);
    EXPECT_EQ(I(own, "current_number_of_bytes_used"), I(own, "high_number_of_bytes_used"));
    // A global-only class has no per-thread rows.
    for (const auto& r : scan("memory_summary_by_thread_by_event_name")) {
      EXPECT_NE(S(r, "event_name"), "memory/test/global");
      EXPECT_NE(S(r, "event_name").rfind("memory/performance_schema/", 0), 0u);
    }
    pfs_memory_owner o;
    const pfs_key g = pfs_register_memory("test", "global", 0);
    ASSERT_EQ(pfs_memory_alloc(g, 10, &o), g);
    EXPECT_EQ(o, 0u);  // no owner thread
    EXPECT_EQ(values(row_of("memory/test/global")), (V{1, 0, 10, 0, 0, 1, 1, 0, 10, 10}));
    pfs_memory_free(g, 10, o);
  });
}

TEST(Memory, ADisabledClassCountsNothingAndItsBlocksAreFreedUncounted) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_disabled")));
    const pfs_key k = pfs_register_memory("test", "off", 0);
    ASSERT_TRUE(set_instrument("memory/test/off", false, false));
    pfs_memory_owner o;
    EXPECT_EQ(pfs_memory_alloc(k, 10, &o), 0u);
    pfs_memory_free(0, 10, o);  // the key the alloc returned
    EXPECT_EQ(values(row_of("memory/test/off", thread_id())), (V{0, 0, 0, 0, 0, 0, 0, 0, 0, 0}));
  });
}

TEST(Memory, ClassesBeyondTheArrayAreCountedAsLost) {
  in_child([] {
    options o = memory_options("mem_lost");
    o.sizes.max_memory_classes = 12;  // the agent's own 11, and one more
    ASSERT_TRUE(init(o));
    EXPECT_NE(pfs_register_memory("test", "first", 0), 0u);
    EXPECT_EQ(pfs_register_memory("test", "second", 0), 0u);
    pfs_memory_owner owner;
    EXPECT_EQ(pfs_memory_alloc(0, 10, &owner), 0u);
    for (const auto& r : scan("status"))
      if (S(r, "variable_name") == "memory_classes_lost") {
        EXPECT_EQ(I(r, "variable_value"), 1);
      }
  });
}

TEST(Memory, AStatementsMaxTotalMemoryIsTheThreadsPeakWhileItRan) {
  in_child([] {
    ASSERT_TRUE(init(memory_options("mem_statement")));
    const pfs_key k = pfs_register_memory("test", "query", PFS_MEMORY_CONTROLLED);
    const pfs_key q = pfs_register_statement("test", "query");
    pfs_memory_owner held, a, b;
    ASSERT_EQ(pfs_memory_alloc(k, 100, &held), k);  // before: part of the peak, as the thread holds it
    const int level = pfs_statement_start(q, nullptr, __FILE__, __LINE__);
    ASSERT_EQ(level, 1);
    ASSERT_EQ(pfs_memory_alloc(k, 1000, &a), k);
    pfs_memory_free(k, 1000, a);
    ASSERT_EQ(pfs_memory_alloc(k, 300, &b), k);
    pfs_statement_end(level);
    pfs_memory_free(k, 300, b);
    bool seen = false;
    for (const auto& r : scan("events_statements_history")) {
      if (S(r, "event_name") != "statement/test/query") continue;
      seen = true;
      EXPECT_EQ(I(r, "max_total_memory"), 1100);
      EXPECT_EQ(I(r, "max_controlled_memory"), 1100);
    }
    EXPECT_TRUE(seen);
    for (const auto& r : scan("events_statements_summary_global_by_event_name"))
      if (S(r, "event_name") == "statement/test/query") {
        EXPECT_EQ(I(r, "max_total_memory"), 1100);
      }
    pfs_memory_free(k, 100, held);
  });
}

}  // namespace
