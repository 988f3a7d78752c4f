// The reader's events_waits_current, _history and _history_long (rows_waits.cpp):
// every column, times, the rings' order.
#include "tests/reader/reader_fixture.h"

namespace pfs::reader_test {
namespace {

TEST_F(ReaderTest, EventsWaitsCurrent) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  // Thread slot 0 (THREAD_ID 1): a completed timed wait and a running untimed one.
  wait_record& w0 = completed(kArrayWaitStacks, 0, 1, 10, 1);
  w0.end_event_id = 11;
  w0.source_index = 1;
  w0.timer = static_cast<std::uint8_t>(timers::timer_kind::nanosecond);
  w0.timer_start = 2000;
  w0.timer_end = 2500;
  w0.object_instance_begin = 0x1000;
  wait_record& w1 = wait_at(kArrayWaitStacks, 1);
  w1.state = kWaitRunning;
  w1.thread_id = 1;
  w1.event_id = 12;
  w1.class_index = 2;
  w1.source_index = 2;  // not ready: NULL
  w1.operation = kOpWriteLock;
  w1.nesting_type = kNestingWait;
  w1.nesting_event_id = 10;
  w1.number_of_bytes = 64;
  w1.flags = 7;
  w1.object_instance_begin = 0x3000;
  // Thread slot 1 (THREAD_ID 2): a stale row of another thread, a torn row, a row
  // with a garbage class.
  completed(kArrayWaitStacks, 3, 99, 1, 1);
  completed(kArrayWaitStacks, 4, 2, 2, 1).seq = 7;
  completed(kArrayWaitStacks, 5, 2, 3, 999);
  // Thread slot 2 is free: its slots are not shown.
  completed(kArrayWaitStacks, 6, 3, 1, 1);

  auto r = open_reader();
  auto rows = scan(*r, table_id::events_waits_current);
  ASSERT_EQ(rows.size(), 2u);
  const row& a = rows[0];
  EXPECT_TRUE(IsInt(a[0], 1));
  EXPECT_TRUE(IsInt(a[1], 10));
  EXPECT_TRUE(IsInt(a[2], 11));
  EXPECT_TRUE(IsText(a[3], "wait/synch/mutex/test/m1"));
  EXPECT_TRUE(IsText(a[4], "foo.cpp:12"));
  EXPECT_TRUE(IsInt(a[5], 1000000));
  EXPECT_TRUE(IsInt(a[6], 1500000));
  EXPECT_TRUE(IsInt(a[7], 500000));
  for (int c = 8; c <= 12; ++c) EXPECT_TRUE(IsNull(a[c])) << c;  // spins, object_*
  EXPECT_TRUE(IsInt(a[13], 0x1000));
  EXPECT_TRUE(IsNull(a[14]));
  EXPECT_TRUE(IsNull(a[15]));
  EXPECT_TRUE(IsText(a[16], "lock"));
  EXPECT_TRUE(IsNull(a[17]));
  EXPECT_TRUE(IsInt(a[18], 0));

  const row& b = rows[1];
  EXPECT_TRUE(IsInt(b[0], 1));
  EXPECT_TRUE(IsInt(b[1], 12));
  EXPECT_TRUE(IsNull(b[2]));
  EXPECT_TRUE(IsText(b[3], "wait/synch/rwlock/test/rw1"));
  EXPECT_TRUE(IsNull(b[4]));
  EXPECT_TRUE(IsNull(b[5]));
  EXPECT_TRUE(IsNull(b[6]));
  EXPECT_TRUE(IsNull(b[7]));
  EXPECT_TRUE(IsInt(b[13], 0x3000));
  EXPECT_TRUE(IsInt(b[14], 10));
  EXPECT_TRUE(IsText(b[15], "WAIT"));
  EXPECT_TRUE(IsText(b[16], "write_lock"));
  EXPECT_TRUE(IsInt(b[17], 64));
  EXPECT_TRUE(IsInt(b[18], 7));

  EXPECT_EQ(r->torn_rows_skipped(), 1u);
  EXPECT_EQ(r->invalid_rows_skipped(), 1u);
  scan(*r, table_id::events_waits_current);
  EXPECT_EQ(r->torn_rows_skipped(), 2u);  // counted again on every scan
  EXPECT_EQ(r->invalid_rows_skipped(), 2u);

  // A thread whose record is dirty (being created or destroyed) shows no rows.
  map_.array<thread_record>(kArrayThreads)[0].lock = 4 * 8 + kStateDirty;
  rows = scan(*r, table_id::events_waits_current);
  EXPECT_TRUE(rows.empty());
  EXPECT_EQ(r->torn_rows_skipped(), 3u);  // thread 2's torn slot only
}

TEST_F(ReaderTest, RunningEventTimerEndIsNow) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  const std::uint64_t start_raw = timers::read(timers::timer_kind::nanosecond) - 5000000;  // 5 ms ago
  wait_record& w = wait_at(kArrayWaitStacks, 0);
  w.state = kWaitRunning;
  w.thread_id = 1;
  w.event_id = 1;
  w.class_index = 1;
  w.timer = static_cast<std::uint8_t>(timers::timer_kind::nanosecond);
  w.timer_start = start_raw;
  // THREAD_CPU is per thread: "now" in the reader means nothing.
  wait_record& c = wait_at(kArrayWaitStacks, 1);
  c.state = kWaitRunning;
  c.thread_id = 1;
  c.event_id = 2;
  c.class_index = 1;
  c.timer = static_cast<std::uint8_t>(timers::timer_kind::thread_cpu);
  c.timer_start = 77;

  auto r = open_reader();
  const std::int64_t before =
      static_cast<std::int64_t>(timers::read(timers::timer_kind::nanosecond) - 1000) * 1000;
  auto rows = scan(*r, table_id::events_waits_current);
  const std::int64_t after =
      static_cast<std::int64_t>(timers::read(timers::timer_kind::nanosecond) - 1000) * 1000;
  ASSERT_EQ(rows.size(), 2u);
  const std::int64_t start_ps = static_cast<std::int64_t>(start_raw - 1000) * 1000;
  EXPECT_TRUE(IsInt(rows[0][5], start_ps));
  ASSERT_FALSE(rows[0][6].null);
  EXPECT_GE(rows[0][6].i, before);
  EXPECT_LE(rows[0][6].i, after);
  EXPECT_TRUE(IsInt(rows[0][7], rows[0][6].i - start_ps));
  EXPECT_GE(rows[0][7].i, 5000000000);
  EXPECT_TRUE(IsNull(rows[0][2]));

  EXPECT_TRUE(IsInt(rows[1][5], 77000));
  EXPECT_TRUE(IsNull(rows[1][6]));
  EXPECT_TRUE(IsNull(rows[1][7]));
}

TEST_F(ReaderTest, TimerConversionEdges) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  auto& h = map_.header();
  h.timers[3] = {0, std::uint64_t{1} << 62, 0, 1, 1e6};  // overflows int64 quickly
  h.timers[4] = {0, 0, 0, 0, 0};                         // unavailable: NULL times
  h.timers[5] = {0, 1, 200, 1, 100};                     // garbage shift: NULL times
  struct {
    std::uint8_t timer;
    std::uint64_t start, end;
  } cases[] = {
      {1, 100, 150},    // CYCLE x3
      {2, 500, 3000},   // raw < base: 0
      {2, 5000, 4000},  // end before start: wait 0
      {3, 4, 1000},     // saturated
      {4, 1, 2},        // mult 0
      {5, 1, 2},        // shift 200
      {7, 1, 2},        // not a timer kind
      {200, 1, 2},      // garbage
      {0, 1, 2},        // untimed
  };
  std::uint64_t slot = 0;
  for (const auto& c : cases) {
    wait_record& w = completed(kArrayHistoryLong, slot % 5, 1, slot + 1, 1);
    w.timer = c.timer;
    w.timer_start = c.start;
    w.timer_end = c.end;
    ++slot;
    if (slot % 5 != 0 && slot != std::size(cases)) continue;
    auto r = open_reader();
    auto rows = scan(*r, table_id::events_waits_history_long);
    for (const row& x : rows) {
      const auto& cc = cases[x[1].i - 1];
      SCOPED_TRACE(testing::Message() << "timer " << int(cc.timer) << " start " << cc.start);
      switch (x[1].i) {
        case 1:
          EXPECT_TRUE(IsInt(x[5], 300));
          EXPECT_TRUE(IsInt(x[6], 450));
          EXPECT_TRUE(IsInt(x[7], 150));
          break;
        case 2:
          EXPECT_TRUE(IsInt(x[5], 0));
          EXPECT_TRUE(IsInt(x[6], 2000000));
          EXPECT_TRUE(IsInt(x[7], 2000000));
          break;
        case 3:
          EXPECT_TRUE(IsInt(x[5], 4000000));
          EXPECT_TRUE(IsInt(x[6], 3000000));
          EXPECT_TRUE(IsInt(x[7], 0));
          break;
        case 4:
          EXPECT_TRUE(IsInt(x[5], kI64Max));
          EXPECT_TRUE(IsInt(x[6], kI64Max));
          EXPECT_TRUE(IsInt(x[7], 0));
          break;
        default:
          EXPECT_TRUE(IsNull(x[5]));
          EXPECT_TRUE(IsNull(x[6]));
          EXPECT_TRUE(IsNull(x[7]));
      }
    }
    for (std::uint64_t s = 0; s < 5; ++s) wait_at(kArrayHistoryLong, s);
  }
}

TEST_F(ReaderTest, HistoryWrapsOldestFirst) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  // Thread slot 1 (THREAD_ID 2), ring of 4 at [4, 8): 6 events written, next slot 2.
  map_.array<thread_record>(kArrayThreads)[1].history_index = 6;
  completed(kArrayWaitHistory, 4 + 2, 2, 3, 1);
  completed(kArrayWaitHistory, 4 + 3, 2, 4, 1);
  completed(kArrayWaitHistory, 4 + 0, 2, 5, 2);
  completed(kArrayWaitHistory, 4 + 1, 2, 6, 4).operation = kOpTimedWait;
  // Thread slot 0 (THREAD_ID 1): ring not full, next slot 2; a running record is not
  // history, a stale record of another thread is not shown.
  map_.array<thread_record>(kArrayThreads)[0].history_index = 2;
  completed(kArrayWaitHistory, 0, 1, 1, 1);
  completed(kArrayWaitHistory, 1, 1, 2, 1).state = kWaitRunning;
  completed(kArrayWaitHistory, 3, 42, 2, 1);

  auto r = open_reader();
  auto rows = scan(*r, table_id::events_waits_history);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_TRUE(IsInt(rows[0][0], 1));
  EXPECT_TRUE(IsInt(rows[0][1], 1));
  const std::int64_t expected[] = {3, 4, 5, 6};
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(IsInt(rows[1 + i][0], 2));
    EXPECT_TRUE(IsInt(rows[1 + i][1], expected[i]));
    EXPECT_TRUE(IsInt(rows[1 + i][2], expected[i]));
  }
  EXPECT_TRUE(IsText(rows[3][3], "wait/synch/rwlock/test/rw1"));
  EXPECT_TRUE(IsText(rows[4][3], "wait/synch/cond/test/c1"));
  EXPECT_TRUE(IsText(rows[4][16], "timed_wait"));

  // A garbage history_index only changes the starting point.
  map_.array<thread_record>(kArrayThreads)[1].history_index = kMax;
  EXPECT_EQ(scan(*r, table_id::events_waits_history).size(), 5u);
}

TEST_F(ReaderTest, HistoryLong) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  wait_record& a = completed(kArrayHistoryLong, 0, 2, 7, 4);
  a.operation = kOpTimedWait;
  a.timer = static_cast<std::uint8_t>(timers::timer_kind::cycle);
  a.timer_start = 100;
  a.timer_end = 150;
  a.object_instance_begin = 0x4000;
  completed(kArrayHistoryLong, 1, 2, 8, 4).state = kWaitRunning;  // not history
  wait_record& f = completed(kArrayHistoryLong, 3, 1, 9, 7);
  f.operation = kOpFileRead;
  f.number_of_bytes = 4096;
  f.object_kind = kObjectFile;
  f.object_index = 1;
  completed(kArrayHistoryLong, 4, 1, 10, 1).seq = 9;  // torn

  auto r = open_reader();
  auto rows = scan(*r, table_id::events_waits_history_long);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(IsInt(rows[0][0], 2));
  EXPECT_TRUE(IsInt(rows[0][1], 7));
  EXPECT_TRUE(IsText(rows[0][3], "wait/synch/cond/test/c1"));
  EXPECT_TRUE(IsInt(rows[0][5], 300));
  EXPECT_TRUE(IsInt(rows[0][6], 450));
  EXPECT_TRUE(IsInt(rows[0][7], 150));
  EXPECT_TRUE(IsInt(rows[0][13], 0x4000));
  EXPECT_TRUE(IsText(rows[0][16], "timed_wait"));
  EXPECT_TRUE(IsInt(rows[1][1], 9));
  EXPECT_TRUE(IsText(rows[1][3], "wait/io/file/test/f1"));
  EXPECT_TRUE(IsNull(rows[1][10]));  // object_name: file record 1 was never allocated
  EXPECT_TRUE(IsText(rows[1][12], "FILE"));
  EXPECT_TRUE(IsText(rows[1][16], "read"));
  EXPECT_TRUE(IsInt(rows[1][17], 4096));
  EXPECT_EQ(r->torn_rows_skipped(), 1u);
}

TEST_F(ReaderTest, OperationNames) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  const char* ops[] = {"lock", "try_lock", "read_lock", "write_lock", "try_read_lock", "try_write_lock",
                       "wait", "timed_wait", "create", "open", "close", "read", "write", "seek", "tell",
                       "flush", "stat", "chsize", "delete", "rename", "sync", "fetch", "insert", "update",
                       "delete", "idle", "create", "connect", "bind", "close", "send", "recv", "sendto",
                       "recvfrom", "sendmsg", "recvmsg", "seek", "opt", "stat", "shutdown", "select",
                       // layout 6: metadata and table lock waits
                       "metadata lock", "read normal", "read with shared locks", "read high priority",
                       "read no insert", "write allow write", "write concurrent insert", "write low priority",
                       "write normal", "read external", "write external",
                       // layout 6: semaphores (beyond MySQL)
                       "try_wait"};
  static_assert(std::size(ops) == kOpCount - 1);
  auto r = open_reader();
  for (int op = 0; op < 256; ++op) {
    completed(kArrayHistoryLong, 0, 1, 1, 1).operation = static_cast<std::uint8_t>(op);
    auto rows = scan(*r, table_id::events_waits_history_long);
    ASSERT_EQ(rows.size(), 1u);
    if (op >= 1 && op < kOpCount)
      EXPECT_TRUE(IsText(rows[0][16], ops[op - 1])) << op;
    else
      EXPECT_TRUE(IsNull(rows[0][16])) << op;
  }
}

}  // namespace
}  // namespace pfs::reader_test
