// The reader's setup tables, performance_timers and threads (rows_setup.cpp).
#include "tests/reader/reader_fixture.h"

namespace pfs::reader_test {
namespace {

TEST_F(ReaderTest, SetupTables) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  auto& h = map_.header();
  h.consumers[kConsumerWaitsHistory] = 0;
  h.wait_timer = static_cast<std::uint8_t>(timers::timer_kind::nanosecond);
  actor_record& a = map_.array<actor_record>(kArraySetupActors)[1];
  a.lock = 8 + kStateAllocated;
  a.enabled = 1;
  a.history = 0;
  std::strcpy(a.host, "%");
  std::strcpy(a.user, "bob");
  std::strcpy(a.role, "");
  map_.array<actor_record>(kArraySetupActors)[2].lock = kStateDirty;

  auto r = open_reader();
  auto rows = scan(*r, table_id::setup_instruments);
  ASSERT_EQ(rows.size(), 4u);  // classes 1, 2, 4, 7: not the thread class, not free, not dirty
  const char* names[] = {"wait/synch/mutex/test/m1", "wait/synch/rwlock/test/rw1", "wait/synch/cond/test/c1",
                         "wait/io/file/test/f1"};
  const char* enabled[] = {"YES", "YES", "NO", "YES"};
  const char* timed[] = {"YES", "NO", "NO", "YES"};
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(IsText(rows[i][0], names[i]));
    EXPECT_TRUE(IsText(rows[i][1], enabled[i]));
    EXPECT_TRUE(IsText(rows[i][2], timed[i]));
  }

  rows = scan(*r, table_id::setup_consumers);
  ASSERT_EQ(rows.size(), kConsumerCount);
  const char* consumers[] = {"global_instrumentation",
                             "thread_instrumentation",
                             "events_waits_current",
                             "events_waits_history",
                             "events_waits_history_long",
                             "events_waits_summary_by_thread_by_event_name",
                             "events_waits_summary_global_by_event_name",
                             "events_waits_summary_by_instance",
                             "events_stages_current",
                             "events_stages_history",
                             "events_stages_history_long",
                             "events_statements_cpu",
                             "events_statements_current",
                             "events_statements_history",
                             "events_statements_history_long",
                             "events_transactions_current",
                             "events_transactions_history",
                             "events_transactions_history_long",
                             "statements_digest"};
  static_assert(std::size(consumers) == kConsumerCount);
  for (std::uint32_t i = 0; i < kConsumerCount; ++i) {
    EXPECT_TRUE(IsText(rows[i][0], consumers[i]));
    const bool off = i == kConsumerWaitsHistory || i == kConsumerStatementsCpu ||
                     i == kConsumerStagesCurrent || i == kConsumerStagesHistory ||
                     i == kConsumerStagesHistoryLong || i == kConsumerStatementsHistoryLong ||
                     i == kConsumerTransactionsHistoryLong;
    EXPECT_TRUE(IsText(rows[i][1], off ? "NO" : "YES"));
  }

  // setup_timers: MySQL 5.7's five rows; row 1 is 'wait'.
  rows = scan(*r, table_id::setup_timers);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_TRUE(IsText(rows[0][0], "idle"));
  EXPECT_TRUE(IsText(rows[1][0], "wait"));
  EXPECT_TRUE(IsText(rows[1][1], "NANOSECOND"));
  EXPECT_TRUE(IsText(rows[2][0], "stage"));
  EXPECT_TRUE(IsText(rows[3][0], "statement"));
  EXPECT_TRUE(IsText(rows[4][0], "transaction"));
  h.wait_timer = 0;
  rows = scan(*r, table_id::setup_timers);
  EXPECT_TRUE(IsNull(rows[1][1]));
  h.wait_timer = 77;
  rows = scan(*r, table_id::setup_timers);
  EXPECT_TRUE(IsNull(rows[1][1]));

  rows = scan(*r, table_id::setup_actors);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(IsText(rows[0][0], "%"));
  EXPECT_TRUE(IsText(rows[0][1], "bob"));
  EXPECT_TRUE(IsText(rows[0][2], ""));
  EXPECT_TRUE(IsText(rows[0][3], "YES"));
  EXPECT_TRUE(IsText(rows[0][4], "NO"));
  EXPECT_EQ(r->torn_rows_skipped(), 0u);  // dirty rows are not torn
}

// TIMER_FREQUENCY is the provider's calibration from the region (a CYCLE
// calibrated at 3.14 GHz shows as such, a timer the provider could not use is
// NULL); resolution and overhead are this host's, NULL where it cannot read the
// timer.
TEST_F(ReaderTest, PerformanceTimers) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  auto& h = map_.header();
  const int cycle = static_cast<int>(timers::timer_kind::cycle);
  const int micro = static_cast<int>(timers::timer_kind::microsecond);
  h.timers[cycle].available = 1;
  h.timers[cycle].frequency = 3.14e9;
  h.timers[micro].available = 0;
  auto r = open_reader();
  auto rows = scan(*r, table_id::performance_timers);
  ASSERT_EQ(rows.size(), 6u);
  const char* names[] = {"CYCLE", "NANOSECOND", "MICROSECOND", "MILLISECOND", "TICK", "THREAD_CPU"};
  for (int k = 1; k <= 6; ++k) {
    const auto& ti = timers::info(static_cast<timers::timer_kind>(k));
    const row& x = rows[k - 1];
    EXPECT_TRUE(IsText(x[0], names[k - 1]));
    if (k == micro) {
      EXPECT_TRUE(IsNull(x[1]));
    } else if (k != cycle && h.timers[k].available) {
      EXPECT_TRUE(IsInt(x[1], std::llround(h.timers[k].frequency)));
    }
    if (ti.available) {
      EXPECT_TRUE(IsInt(x[2], static_cast<std::int64_t>(ti.resolution)));
      ASSERT_FALSE(x[3].null);
      EXPECT_GT(x[3].i, 0);  // measured again at this scan
    } else {
      EXPECT_TRUE(IsNull(x[2]));
      EXPECT_TRUE(IsNull(x[3]));
    }
  }
  EXPECT_TRUE(IsInt(rows[0][1], 3140000000));  // the provider's CYCLE calibration
  EXPECT_TRUE(IsInt(rows[1][1], 1000000000));  // NANOSECOND is always there on Linux
  EXPECT_TRUE(IsInt(rows[3][1], 1000));
}

TEST_F(ReaderTest, Threads) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  set_thread(2, 99, 3, kStateDirty);                                          // dirty: skipped, not counted
  std::strcpy(map_.array<thread_record>(kArrayThreads)[1].name, "worker-1");  // register_thread's thread_name
  auto r = open_reader();
  auto rows = scan(*r, table_id::threads);
  ASSERT_EQ(rows.size(), 2u);
  const row& a = rows[0];
  EXPECT_TRUE(IsInt(a[0], 1));
  EXPECT_TRUE(IsText(a[1], "thread/test/worker"));
  EXPECT_TRUE(IsText(a[2], "BACKGROUND"));
  EXPECT_TRUE(IsNull(a[3]));   // processlist_id
  EXPECT_TRUE(IsNull(a[4]));   // processlist_user
  EXPECT_TRUE(IsNull(a[5]));   // processlist_host
  EXPECT_TRUE(IsNull(a[7]));   // processlist_command: NULL for a background thread
  EXPECT_TRUE(IsNull(a[12]));  // role
  EXPECT_TRUE(IsText(a[13], "YES"));
  EXPECT_TRUE(IsText(a[14], "YES"));
  EXPECT_TRUE(IsNull(a[11]));  // parent_thread_id
  EXPECT_TRUE(IsInt(a[16], 1001));
  EXPECT_TRUE(IsNull(a[23]));  // thread_name: the thread gave itself none
  const row& b = rows[1];
  EXPECT_TRUE(IsInt(b[0], 2));
  EXPECT_TRUE(IsText(b[1], "thread/pfs/unknown"));  // class_index 0
  EXPECT_TRUE(IsText(b[2], "FOREGROUND"));
  EXPECT_TRUE(IsText(b[4], "alice"));
  EXPECT_TRUE(IsText(b[5], "localhost"));
  EXPECT_TRUE(IsText(b[7], "Sleep"));  // a foreground thread outside a statement
  EXPECT_TRUE(IsNull(b[12]));
  EXPECT_TRUE(IsText(b[13], "NO"));
  EXPECT_TRUE(IsText(b[14], "NO"));
  EXPECT_TRUE(IsInt(b[11], 1));
  EXPECT_TRUE(IsNull(b[16]));
  EXPECT_TRUE(IsText(b[23], "worker-1"));  // thread_name
  EXPECT_EQ(r->torn_rows_skipped(), 0u);

  // Class indexes out of range, of a free class, or of a non-thread class.
  for (std::uint32_t bad : {9u, 0xFFFFFFFFu, 5u, 1u}) {
    map_.array<thread_record>(kArrayThreads)[0].class_index = bad;
    rows = scan(*r, table_id::threads);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_TRUE(IsText(rows[0][1], "thread/pfs/unknown")) << bad;
  }
}

TEST_F(ReaderTest, WritableReaderAppliesSetupThroughSetupApi) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  auto r = open_reader(true);
  ASSERT_TRUE(r->region().writable());
  {
    setup_lock_guard lock(r->region());
    ASSERT_TRUE(lock.locked());
    setup::set_consumer(r->region(), kConsumerWaitsHistoryLong, false);
    setup::set_instrument(r->region(), r->find_class("wait/synch/rwlock/test/rw1"), 0, 1);
  }
  auto rows = scan(*r, table_id::setup_consumers);
  EXPECT_TRUE(IsText(rows[kConsumerWaitsHistoryLong][1], "NO"));
  rows = scan(*r, table_id::setup_instruments);
  EXPECT_TRUE(IsText(rows[1][0], "wait/synch/rwlock/test/rw1"));
  EXPECT_TRUE(IsText(rows[1][1], "NO"));
  EXPECT_TRUE(IsText(rows[1][2], "YES"));

  auto ro = open_reader(false);
  EXPECT_FALSE(ro->region().writable());
}

TEST_F(ReaderTest, SetupObjects) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  set_object(0, "mysql", "%", false, false);
  set_object(1, "%", "%", true, true, 7);                                 // unknown object_type: invalid
  set_object(2, "db", "t", true, false, kSetupObjectTable, kStateDirty);  // being changed: not a row
  auto r = open_reader();
  auto rows = scan(*r, table_id::setup_objects);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(IsText(rows[0][0], "TABLE"));
  EXPECT_TRUE(IsText(rows[0][1], "mysql"));
  EXPECT_TRUE(IsText(rows[0][2], "%"));
  EXPECT_TRUE(IsText(rows[0][3], "NO"));
  EXPECT_TRUE(IsText(rows[0][4], "NO"));
  EXPECT_EQ(r->invalid_rows_skipped(), 1u);
  EXPECT_EQ(r->torn_rows_skipped(), 0u);

  map_.array<object_record>(kArraySetupObjects)[1].object_type = kSetupObjectTable;
  map_.array<object_record>(kArraySetupObjects)[2].lock = 8 + kStateAllocated;
  map_.array<object_record>(kArraySetupObjects)[0].lock = 8 + kStateFree;
  rows = scan(*r, table_id::setup_objects);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(IsText(rows[0][1], "%"));
  EXPECT_TRUE(IsText(rows[0][3], "YES"));
  EXPECT_TRUE(IsText(rows[0][4], "YES"));
  EXPECT_TRUE(IsText(rows[1][1], "db"));
  EXPECT_TRUE(IsText(rows[1][2], "t"));
  EXPECT_TRUE(IsText(rows[1][3], "YES"));
  EXPECT_TRUE(IsText(rows[1][4], "NO"));

  // Through the setup API (what the FDW uses), the default rows read back in order.
  map_.array<object_record>(kArraySetupObjects)[1].lock = 12 + kStateFree;
  map_.array<object_record>(kArraySetupObjects)[2].lock = 12 + kStateFree;
  {
    setup_lock_guard lock(map_);
    ASSERT_TRUE(lock.locked());
    EXPECT_EQ(setup::insert_object(map_, "db1", "orders", true, false), setup::actor_result::ok);
    EXPECT_EQ(setup::insert_object(map_, "%", "%", true, true), setup::actor_result::ok);
  }
  rows = scan(*r, table_id::setup_objects);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_TRUE(IsText(rows[0][1], "db1"));
  EXPECT_TRUE(IsText(rows[0][2], "orders"));
  EXPECT_TRUE(IsText(rows[0][4], "NO"));
  EXPECT_TRUE(IsText(rows[1][1], "%"));
}

}  // namespace
}  // namespace pfs::reader_test
