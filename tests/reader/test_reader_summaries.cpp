// The reader's wait summaries and sync instance tables (rows_summaries.cpp).
#include "tests/reader/reader_fixture.h"

namespace pfs::reader_test {
namespace {

TEST_F(ReaderTest, Summaries) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  wait_stat* ts = map_.array<wait_stat>(kArrayThreadClassStats);
  for (std::uint64_t i = 0; i < map_.count(kArrayThreadClassStats); ++i) ts[i] = {0, 0, kMax, 0, 0};
  ts[0 * 8 + 0] = {3, 300, 50, 150, 0};  // thread slot 0, class 1
  ts[1 * 8 + 6] = {2, 0, kMax, 0, 0};    // thread slot 1, class 7 (file): counted, not timed
  ts[1 * 8 + 2] = {9, 9, 9, 9, 0};       // class 3 is a thread class: not a row
  set_sync(kArrayMutexes, 2, 77, 0x9000, {1000, 1, 1, 1, 0});  // garbage class: skipped

  auto r = open_reader();
  auto rows = scan(*r, table_id::events_waits_summary_global_by_event_name);
  ASSERT_EQ(rows.size(), 4u);  // classes 1, 2, 4 and the file class 7 (no files yet: zeros)
  EXPECT_TRUE(IsText(rows[0][0], "wait/synch/mutex/test/m1"));
  const std::int64_t m1[] = {4, 75, 5, 18, 40};  // class stat + both mutex instances
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[0][1 + k], m1[k])) << k;
  EXPECT_TRUE(IsText(rows[1][0], "wait/synch/rwlock/test/rw1"));
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[1][1 + k], 0)) << k;
  EXPECT_TRUE(IsText(rows[2][0], "wait/synch/cond/test/c1"));
  const std::int64_t c1[] = {4, 0, 0, 0, 0};
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[2][1 + k], c1[k])) << k;
  EXPECT_TRUE(IsText(rows[3][0], "wait/io/file/test/f1"));
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[3][1 + k], 0)) << k;
  EXPECT_EQ(r->invalid_rows_skipped(), 0u);  // the global rows read no instance: the garbage one is not met

  rows = scan(*r, table_id::events_waits_summary_by_thread_by_event_name);
  ASSERT_EQ(rows.size(), 8u);  // 2 threads x classes 1, 2, 4, 7
  const char* cls[] = {"wait/synch/mutex/test/m1", "wait/synch/rwlock/test/rw1", "wait/synch/cond/test/c1",
                       "wait/io/file/test/f1"};
  for (int t = 0; t < 2; ++t)
    for (int c = 0; c < 4; ++c) {
      const row& x = rows[t * 4 + c];
      EXPECT_TRUE(IsInt(x[0], t + 1));
      EXPECT_TRUE(IsText(x[1], cls[c]));
    }
  const std::int64_t t0m1[] = {3, 300, 50, 100, 150};
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[0][2 + k], t0m1[k]));
  const std::int64_t t1f1[] = {2, 0, 0, 0, 0};
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[7][2 + k], t1f1[k]));
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[5][2 + k], 0));

  rows = scan(*r, table_id::events_waits_summary_by_instance);
  ASSERT_EQ(rows.size(), 4u);
  const std::int64_t ids[] = {0x1000, 0x2000, 0x3000, 0x4000};
  const char* names[] = {"wait/synch/mutex/test/m1", "wait/synch/mutex/test/m1", "wait/synch/rwlock/test/rw1",
                         "wait/synch/cond/test/c1"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(IsText(rows[i][0], names[i]));
    EXPECT_TRUE(IsInt(rows[i][1], ids[i]));
  }
  const std::int64_t i0[] = {1, 40, 40, 40, 40};
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[0][2 + k], i0[k]));
  const std::int64_t i3[] = {4, 0, 0, 0, 0};
  for (int k = 0; k < 5; ++k) EXPECT_TRUE(IsInt(rows[3][2 + k], i3[k]));
}

TEST_F(ReaderTest, InstanceTables) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  map_.array<sync_instance>(kArrayConds)[1].lock = kStateDirty;
  auto r = open_reader();
  auto rows = scan(*r, table_id::mutex_instances);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(IsText(rows[0][0], "wait/synch/mutex/test/m1"));
  EXPECT_TRUE(IsInt(rows[0][1], 0x1000));
  EXPECT_TRUE(IsInt(rows[0][2], 2));
  EXPECT_TRUE(IsInt(rows[1][1], 0x2000));
  EXPECT_TRUE(IsNull(rows[1][2]));

  rows = scan(*r, table_id::rwlock_instances);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(IsText(rows[0][0], "wait/synch/rwlock/test/rw1"));
  EXPECT_TRUE(IsInt(rows[0][1], 0x3000));
  EXPECT_TRUE(IsNull(rows[0][2]));
  EXPECT_TRUE(IsInt(rows[0][3], 2));

  rows = scan(*r, table_id::cond_instances);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(IsText(rows[0][0], "wait/synch/cond/test/c1"));
  EXPECT_TRUE(IsInt(rows[0][1], 0x4000));

  // A freed mutex disappears; a reallocated one (new version) comes back.
  map_.array<sync_instance>(kArrayMutexes)[0].lock = 8 + kStateFree;
  EXPECT_EQ(scan(*r, table_id::mutex_instances).size(), 1u);
  map_.array<sync_instance>(kArrayMutexes)[0].lock = 12 + kStateAllocated;
  EXPECT_EQ(scan(*r, table_id::mutex_instances).size(), 2u);
  EXPECT_EQ(r->torn_rows_skipped(), 0u);
}

}  // namespace
}  // namespace pfs::reader_test
