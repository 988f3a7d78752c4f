// The reader library: regions built in a temp dir and filled directly through the
// layout structs, then every table scanned and every column checked.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/reader/reader.h"
#include "agent/region/region.h"
#include "agent/region/region_builder.h"
#include "agent/region/region_layout.h"
#include "agent/region/setup.h"
#include "agent/region/work_layout.h"
#include "timers/timer.h"

namespace {

using namespace pfs;
using namespace pfs::layout;
using pfs::reader::cell;
using pfs::reader::column_type;
using pfs::reader::region_reader;
using pfs::reader::row;
using pfs::reader::table_def;
using pfs::reader::table_id;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();

// ---------------------------------------------------------------------------
// Cell checks

testing::AssertionResult IsNull(const cell& c) {
  if (c.null) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "expected NULL, got i=" << c.i << " s='" << c.s << "'";
}
testing::AssertionResult IsInt(const cell& c, std::int64_t v) {
  if (c.null) return testing::AssertionFailure() << "expected " << v << ", got NULL";
  if (c.i != v || c.hi != 0)
    return testing::AssertionFailure()
           << "expected " << v << ", got " << c.i << " (high word " << c.hi << ")";
  return testing::AssertionSuccess();
}
testing::AssertionResult IsText(const cell& c, const std::string& v) {
  if (c.null) return testing::AssertionFailure() << "expected '" << v << "', got NULL";
  if (c.s != v) return testing::AssertionFailure() << "expected '" << v << "', got '" << c.s << "'";
  return testing::AssertionSuccess();
}

const table_def& T(table_id id) { return reader::table(id); }

// The shape every row of every table must have, whatever the region holds.
void check_shape(const table_def& t, const std::vector<row>& rows) {
  for (const row& r : rows) {
    ASSERT_EQ(r.size(), t.columns.size()) << t.name;
    for (std::size_t i = 0; i < r.size(); ++i) {
      const auto& col = t.columns[i];
      if (r[i].null) {
        EXPECT_TRUE(col.nullable) << t.name << "." << col.name << " is NULL";
      } else if (col.type == column_type::text) {
        EXPECT_EQ(r[i].i, 0) << t.name << "." << col.name;
      } else {
        EXPECT_TRUE(r[i].s.empty()) << t.name << "." << col.name;
        if (col.type != column_type::numeric) {               // numeric: i holds the low 64 bits
          EXPECT_GE(r[i].i, 0) << t.name << "." << col.name;  // every int column is unsigned in MySQL
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------
// Fixture: a small region in a temp dir

class ReaderTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "pfs_reader_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/region";
  }
  void TearDown() override {
    map_ = region_map();
    unlink(path_.c_str());
    rmdir(dir_.c_str());
  }

  static region_sizes small_sizes() {
    region_sizes s;
    s.max_classes = 8;
    s.max_threads = 3;
    s.wait_stack_depth = 3;
    s.history_per_thread = 4;
    s.history_long_size = 5;
    s.max_mutexes = 3;
    s.max_rwlocks = 2;
    s.max_conds = 2;
    s.setup_actors_size = 3;
    s.max_sources = 4;
    s.max_files = 6;
    s.max_sockets = 4;
    s.max_tables = 3;
    s.max_indexes_per_table = 2;
    s.setup_objects_size = 3;
    return s;
  }

  void create(const region_sizes& s) {
    region_error err;
    map_ = region_map::create(path_, s, 0600, err);
    ASSERT_FALSE(err) << err.message;
    ASSERT_TRUE(map_.valid());
    auto& h = map_.header();
    // Known converters: NANOSECOND ps = (raw - 1000) * 1000, CYCLE ps = raw * 3,
    // THREAD_CPU ps = raw * 1000.
    h.timers[2] = {1000, 1000, 0, 1, 1e9};
    h.timers[1] = {0, 48, 4, 1, 3e8};
    h.timers[6] = {0, 1000, 0, 1, 1e9};
  }

  std::unique_ptr<region_reader> open_reader(bool writable = false) {
    region_error err;
    auto r = region_reader::open(path_, writable, err);
    EXPECT_FALSE(err) << err.message;
    EXPECT_NE(r, nullptr);
    return r;
  }

  std::vector<row> scan(region_reader& r, table_id id) {
    std::vector<row> rows;
    region_error err = r.scan(T(id), rows);
    EXPECT_FALSE(err) << T(id).name << ": " << err.message;
    check_shape(T(id), rows);
    return rows;
  }

  // --- writers of records (single-threaded: plain stores are fine here)
  void set_class(std::uint32_t index, std::uint8_t kind, const char* name, std::uint8_t flags,
                 wait_stat stat = {0, 0, kMax, 0, 0}, std::uint32_t state = kStateAllocated) {
    region_builder(map_).set_class(index, kind, name, flags, stat, state, 3);
  }

  thread_record& set_thread(std::uint32_t slot, std::uint32_t class_index, std::uint64_t tid,
                            std::uint32_t state = kStateAllocated) {
    return region_builder(map_).set_thread(slot, class_index, tid, state, 7);
  }

  wait_record& wait_at(array_id arr, std::uint64_t slot) {
    return region_builder(map_).wait_slot(arr, slot, 6);
  }

  // A completed, untimed wait of class `cls` by thread `tid`.
  wait_record& completed(array_id arr, std::uint64_t slot, std::uint64_t tid, std::uint64_t event_id,
                         std::uint32_t cls) {
    wait_record& w = wait_at(arr, slot);
    w.state = kWaitCompleted;
    w.thread_id = tid;
    w.event_id = event_id;
    w.end_event_id = event_id;
    w.class_index = cls;
    w.operation = kOpLock;
    w.number_of_bytes = -1;
    return w;
  }

  sync_instance& set_sync(array_id arr, std::uint32_t slot, std::uint32_t cls, std::uint64_t identity,
                          wait_stat stat = {0, 0, kMax, 0, 0}) {
    return region_builder(map_).set_sync(arr, slot, cls, identity, stat);
  }

  void set_source(std::uint32_t index, const char* text, std::uint32_t state = kSourceReady) {
    region_builder(map_).set_source(index, text, state);
  }

  // --- file io and table io records
  static io_stat io(std::uint64_t count, std::uint64_t sum, std::uint64_t min, std::uint64_t max,
                    std::uint64_t bytes = 0) {
    return io_stat{count, sum, min, max, bytes, 0};
  }
  static constexpr io_stat kNoIo{0, 0, kMax, 0, 0, 0};
  static constexpr wait_stat kNoWait{0, 0, kMax, 0, 0};
  static constexpr table_io_stat kNoTableIo{kNoWait, kNoWait, kNoWait, kNoWait};

  // version: the record's version in kVersionInc units (the event's object_version is
  // version * kVersionInc).
  file_instance& set_file(std::uint32_t slot, std::uint32_t cls, const char* name, std::uint64_t identity,
                          std::uint32_t open_count, io_stats stats = {kNoIo, kNoIo, kNoIo},
                          std::uint32_t version = 1, std::uint32_t state = kStateAllocated) {
    return region_builder(map_).set_file(slot, cls, name, identity, open_count, stats, version, state);
  }

  io_stats& bucket(std::uint32_t cls) { return region_builder(map_).class_io(cls); }

  table_share& set_table(std::uint32_t slot, std::uint8_t type, const char* schema, const char* name,
                         std::uint32_t version = 1, std::uint32_t state = kStateAllocated) {
    return region_builder(map_).set_table(slot, 5, type, schema, name, 0x7000 + slot, version, state);
  }

  // Declares index i (0-based) of the table in `slot` (index_count grows to i + 1).
  index_stat& set_index(std::uint32_t slot, std::uint32_t i, const char* name,
                        table_io_stat stat = kNoTableIo) {
    return region_builder(map_).set_index(slot, i, name, stat);
  }

  object_record& set_object(std::uint32_t slot, const char* schema, const char* name, bool enabled,
                            bool timed, std::uint8_t type = kSetupObjectTable,
                            std::uint32_t state = kStateAllocated) {
    return region_builder(map_).set_object(slot, schema, name, enabled, timed, type, state);
  }

  // The standard population used by several tests.
  void populate() {
    set_class(1, kKindMutex, "wait/synch/mutex/test/m1", kFlagEnabled | kFlagTimed, {2, 30, 10, 20, 0});
    set_class(2, kKindRwlock, "wait/synch/rwlock/test/rw1", kFlagEnabled);
    set_class(3, kKindThread, "thread/test/worker", kFlagEnabled | kFlagTimed);
    set_class(4, kKindCond, "wait/synch/cond/test/c1", 0);
    set_class(6, kKindMutex, "wait/synch/mutex/test/dirty", kFlagEnabled, {100, 100, 1, 1, 0}, kStateDirty);
    set_class(7, kKindFile, "wait/io/file/test/f1", kFlagEnabled | kFlagTimed);

    thread_record& t0 = set_thread(0, 3, 1);
    t0.os_thread_id = 1001;
    thread_record& t1 = set_thread(1, 0, 2);
    t1.parent_thread_id = 1;
    t1.instrumented = 0;
    t1.history = 0;
    t1.foreground = 1;
    std::strcpy(t1.user, "alice");
    std::strcpy(t1.host, "localhost");

    set_sync(kArrayMutexes, 0, 1, 0x1000, {1, 40, 40, 40, 0}).owner_thread_id = 2;
    set_sync(kArrayMutexes, 1, 1, 0x2000, {1, 5, 5, 5, 0});
    set_sync(kArrayRwlocks, 0, 2, 0x3000).readers = 2;
    set_sync(kArrayConds, 0, 4, 0x4000, {4, 0, kMax, 0, 0});

    set_source(1, "foo.cpp:12");
    set_source(2, "bar.cpp:7", kSourceWriting);
    count_in_global();
  }

  // Thread slot 0's global statistics count every instance written so far (as a
  // provider with every summary consumer on would have).
  void count_in_global() { region_builder(map_).count_instances_in_global(0); }

  std::string dir_, path_;
  region_map map_;
};

// ---------------------------------------------------------------------------

TEST(ReaderCatalog, TablesAndColumns) {
  const auto& all = reader::tables();
  ASSERT_EQ(all.size(), static_cast<std::size_t>(table_id::count));
  std::set<std::string> names;
  for (std::size_t i = 0; i < all.size(); ++i) {
    EXPECT_EQ(all[i].id, i);
    EXPECT_TRUE(names.insert(all[i].name).second);
    EXPECT_EQ(reader::find_table(all[i].name), &all[i]);
    std::set<std::string> cols;
    for (const auto& c : all[i].columns)
      EXPECT_TRUE(cols.insert(c.name).second) << all[i].name << "." << c.name;
  }
  EXPECT_EQ(reader::find_table("no_such_table"), nullptr);
  EXPECT_EQ(reader::find_table("SETUP_INSTRUMENTS"), nullptr);

  const std::vector<std::string> waits = {"thread_id",
                                          "event_id",
                                          "end_event_id",
                                          "event_name",
                                          "source",
                                          "timer_start",
                                          "timer_end",
                                          "timer_wait",
                                          "spins",
                                          "object_schema",
                                          "object_name",
                                          "index_name",
                                          "object_type",
                                          "object_instance_begin",
                                          "nesting_event_id",
                                          "nesting_event_type",
                                          "operation",
                                          "number_of_bytes",
                                          "flags",
                                          "blocking_thread_id",
                                          "blocking_event_id",
                                          "signalling_thread_id"};
  for (table_id id : {table_id::events_waits_current, table_id::events_waits_history,
                      table_id::events_waits_history_long}) {
    ASSERT_EQ(T(id).columns.size(), waits.size());
    for (std::size_t i = 0; i < waits.size(); ++i) EXPECT_EQ(T(id).columns[i].name, waits[i]);
  }
  EXPECT_EQ(reader::column_index(T(table_id::threads), "thread_os_id"), 16);  // MySQL 8.0's order
  // MySQL 8.0's 23 columns of threads, then ours: the name the thread gave itself
  EXPECT_EQ(reader::column_index(T(table_id::threads), "max_total_memory"), 22);
  EXPECT_EQ(reader::column_index(T(table_id::threads), "thread_name"), 23);
  EXPECT_EQ(T(table_id::threads).columns.size(), 24u);
  EXPECT_EQ(reader::column_index(T(table_id::threads), "nope"), -1);
  EXPECT_EQ(T(table_id::events_waits_summary_by_thread_by_event_name).columns.size(), 7u);
  EXPECT_STREQ(T(table_id::status).name, "status");
}

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
  const char* ops[] = {"lock",   "try_lock",   "read_lock", "write_lock", "try_read_lock", "try_write_lock",
                       "wait",   "timed_wait", "create",    "open",       "close",         "read",
                       "write",  "seek",       "tell",      "flush",      "stat",          "chsize",
                       "delete", "rename",     "sync",      "fetch",      "insert",        "update",
                       "delete", "idle",       "create",    "connect",    "bind",          "close",
                       "send",   "recv",       "sendto",    "recvfrom",   "sendmsg",       "recvmsg",
                       "seek",   "opt",        "stat",      "shutdown",   "select"};
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

TEST_F(ReaderTest, Status) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  auto& h = map_.header();
  for (std::uint32_t i = 0; i < kLostCount; ++i) h.lost[i] = 100 + i;
  h.setup_generation = 42;
  h.lost[kLostSources] = kMax;                       // clamped
  completed(kArrayHistoryLong, 0, 1, 1, 1).seq = 1;  // one torn row

  auto r = open_reader();
  scan(*r, table_id::events_waits_history_long);
  auto rows = scan(*r, table_id::status);
  EXPECT_EQ(rows.size(), r->estimated_rows(T(table_id::status)));
  std::map<std::string, std::int64_t> v;
  for (const row& x : rows) EXPECT_TRUE(v.emplace(x[0].s, x[1].i).second) << x[0].s;
  EXPECT_EQ(v["layout_version"], kLayoutVersion);
  EXPECT_EQ(v["pid"], getpid());
  EXPECT_EQ(v["provider_alive"], 1);
  EXPECT_EQ(v["creation_time_ns"], static_cast<std::int64_t>(h.creation_time_ns));
  EXPECT_EQ(v["ready"], 1);
  EXPECT_EQ(v["exited"], 0);
  EXPECT_EQ(v["setup_generation"], 42);
  EXPECT_EQ(v["wait_stack_depth"], 3);
  EXPECT_EQ(v["history_per_thread"], 4);
  EXPECT_EQ(v["instrument_classes_size"], 8);
  EXPECT_EQ(v["instrument_classes_memory"], 8 * static_cast<std::int64_t>(sizeof(class_record)));
  EXPECT_EQ(v["threads_size"], 3);
  EXPECT_EQ(v["events_waits_current_size"], 9);
  EXPECT_EQ(v["events_waits_history_size"], 12);
  EXPECT_EQ(v["events_waits_history_long_size"], 5);
  EXPECT_EQ(v["events_waits_history_long_memory"], 5 * static_cast<std::int64_t>(sizeof(wait_record)));
  EXPECT_EQ(v["events_waits_summary_by_thread_by_event_name_size"], 24);
  EXPECT_EQ(v["mutex_instances_size"], 3);
  EXPECT_EQ(v["rwlock_instances_size"], 2);
  EXPECT_EQ(v["cond_instances_size"], 2);
  EXPECT_EQ(v["setup_actors_size"], 3);
  EXPECT_EQ(v["sources_size"], 4);
  EXPECT_EQ(v["file_instances_size"], 6);
  EXPECT_EQ(v["file_instances_memory"], 6 * static_cast<std::int64_t>(sizeof(file_instance)));
  EXPECT_EQ(v["file_summary_by_event_name_size"], 8);  // one bucket per class
  EXPECT_EQ(v["file_summary_by_event_name_memory"], 8 * static_cast<std::int64_t>(sizeof(io_stats)));
  EXPECT_EQ(v["table_shares_size"], 3);
  EXPECT_EQ(v["table_shares_memory"], 3 * static_cast<std::int64_t>(sizeof(table_share)));
  EXPECT_EQ(v["table_index_stats_size"], 6);
  EXPECT_EQ(v["table_index_stats_memory"], 6 * static_cast<std::int64_t>(sizeof(index_stat)));
  EXPECT_EQ(v["setup_objects_size"], 3);
  EXPECT_EQ(v["setup_objects_memory"], 3 * static_cast<std::int64_t>(sizeof(object_record)));
  EXPECT_EQ(v["max_indexes_per_table"], 2);
  EXPECT_EQ(v["total_memory"], static_cast<std::int64_t>(map_.size()));
  const char* lost[] = {
      "mutex_classes_lost",   "rwlock_classes_lost",   "cond_classes_lost",    "thread_classes_lost",
      "file_classes_lost",    "table_classes_lost",    "mutex_instances_lost", "rwlock_instances_lost",
      "cond_instances_lost",  "thread_instances_lost", "file_instances_lost",  "file_handles_lost",
      "table_instances_lost", "table_handles_lost",    "index_stats_lost",     "locker_lost"};
  for (std::uint32_t i = 0; i < std::size(lost); ++i) EXPECT_EQ(v[lost[i]], 100 + i) << lost[i];
  EXPECT_EQ(v["sources_lost"], kI64Max);
  EXPECT_EQ(v["torn_rows_skipped"], 1);
  EXPECT_EQ(v["invalid_rows_skipped"], 0);
  EXPECT_EQ(v.size(), rows.size());

  map_.release_alive_lock();
  rows = scan(*r, table_id::status);
  EXPECT_EQ(rows[2][0].s, "provider_alive");
  EXPECT_TRUE(IsInt(rows[2][1], 0));
}

TEST_F(ReaderTest, EmptyArrays) {
  region_sizes s{};
  s.max_classes = s.max_threads = s.wait_stack_depth = s.history_per_thread = s.history_long_size = 0;
  s.max_mutexes = s.max_rwlocks = s.max_conds = s.setup_actors_size = s.max_sources = 0;
  s.max_files = s.max_tables = s.max_indexes_per_table = s.setup_objects_size = 0;
  ASSERT_NO_FATAL_FAILURE(create(s));
  auto r = open_reader();
  for (const table_def& t : reader::tables()) {
    auto rows = scan(*r, static_cast<table_id>(t.id));
    const auto id = static_cast<table_id>(t.id);
    if (id == table_id::setup_consumers)
      EXPECT_EQ(rows.size(), kConsumerCount);
    else if (id == table_id::setup_timers)
      EXPECT_EQ(rows.size(), 5u);
    else if (id == table_id::events_statements_histogram_global)
      EXPECT_EQ(rows.size(), kHistogramBuckets);
    else if (id == table_id::performance_timers)
      EXPECT_EQ(rows.size(), 6u);
    else if (id == table_id::status)
      EXPECT_FALSE(rows.empty());
    else
      EXPECT_TRUE(rows.empty()) << t.name;
    EXPECT_LE(rows.size(), r->estimated_rows(t)) << t.name;
  }
  // Threads but no classes and no stack: still fine.
  s.max_threads = 2;
  s.history_per_thread = 3;
  region_error err;
  map_ = region_map();
  map_ = region_map::create(path_, s, 0600, err);
  ASSERT_FALSE(err) << err.message;
  set_thread(0, 0, 1);
  completed(kArrayWaitHistory, 0, 1, 1, 1);  // class 1 does not exist: skipped
  r = open_reader();
  EXPECT_EQ(scan(*r, table_id::threads).size(), 1u);
  EXPECT_TRUE(scan(*r, table_id::events_waits_history).empty());
  EXPECT_TRUE(scan(*r, table_id::events_waits_current).empty());
  EXPECT_TRUE(scan(*r, table_id::events_waits_summary_by_thread_by_event_name).empty());
  EXPECT_EQ(r->invalid_rows_skipped(), 1u);
}

TEST_F(ReaderTest, EstimatedRowsBoundEveryScan) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  auto r = open_reader();
  for (const table_def& t : reader::tables())
    EXPECT_LE(scan(*r, static_cast<table_id>(t.id)).size(), r->estimated_rows(t)) << t.name;
  EXPECT_EQ(r->estimated_rows(T(table_id::events_waits_summary_by_thread_by_event_name)), 24u);
  EXPECT_EQ(r->estimated_rows(T(table_id::events_waits_summary_by_instance)),
            7u + 6u + 4u);  // + files, sockets
  EXPECT_EQ(r->estimated_rows(T(table_id::socket_instances)), 4u);
  EXPECT_EQ(r->estimated_rows(T(table_id::socket_summary_by_instance)), 4u);
  EXPECT_EQ(r->estimated_rows(T(table_id::socket_summary_by_event_name)), 8u);
  EXPECT_EQ(r->estimated_rows(T(table_id::setup_objects)), 3u);
  EXPECT_EQ(r->estimated_rows(T(table_id::file_instances)), 6u);
  EXPECT_EQ(r->estimated_rows(T(table_id::file_summary_by_instance)), 6u);
  EXPECT_EQ(r->estimated_rows(T(table_id::file_summary_by_event_name)), 8u);
  EXPECT_EQ(r->estimated_rows(T(table_id::table_io_waits_summary_by_table)), 3u);
  EXPECT_EQ(r->estimated_rows(T(table_id::table_io_waits_summary_by_index_usage)), 3u + 6u);
}

TEST_F(ReaderTest, GarbageStringsAndIndexes) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  // A class name without NUL: cut at the field (127 bytes shown).
  class_record& c = map_.array<class_record>(kArrayClasses)[3];
  std::memset(c.name, 'x', sizeof(c.name));
  // Invalid UTF-8 in a user name: replaced with '?'; valid multi-byte kept.
  thread_record& t = map_.array<thread_record>(kArrayThreads)[1];
  std::memset(t.user, 0, sizeof(t.user));
  std::strcpy(t.user, "a\xff\xc3\xa9\xe0\x80\x80z\xed\xa0\x80");
  // A source without NUL, a source index out of range, a class index out of range.
  source_record& s = map_.array<source_record>(kArraySources)[2];
  s.state = kSourceReady;
  std::memset(s.text, 'y', sizeof(s.text));
  completed(kArrayWaitStacks, 0, 1, 1, 4).source_index = 3;
  completed(kArrayWaitStacks, 1, 1, 2, 1).source_index = 5;
  completed(kArrayWaitStacks, 2, 1, 3, 0xFFFFFFFF);
  wait_record& g = completed(kArrayWaitStacks, 3, 2, 4, 1);
  g.source_index = 0xFFFFFFFF;
  g.nesting_type = 200;
  g.state = kWaitRunning;
  g.timer = 250;
  completed(kArrayWaitStacks, 4, 2, 5, 1).state = 17;  // not a state: not a row

  auto r = open_reader();
  auto rows = scan(*r, table_id::setup_instruments);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_EQ(rows[2][0].s, std::string(127, 'x'));
  rows = scan(*r, table_id::threads);
  EXPECT_TRUE(IsText(rows[1][4], "a?\xc3\xa9???z???"));
  rows = scan(*r, table_id::events_waits_current);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(IsText(rows[0][3], std::string(127, 'x')));
  EXPECT_TRUE(IsText(rows[0][4], std::string(63, 'y')));
  EXPECT_TRUE(IsNull(rows[1][4]));
  EXPECT_TRUE(IsInt(rows[2][1], 4));
  EXPECT_TRUE(IsNull(rows[2][4]));
  EXPECT_TRUE(IsNull(rows[2][5]));
  EXPECT_TRUE(IsNull(rows[2][15]));
  EXPECT_EQ(r->invalid_rows_skipped(), 1u);
  EXPECT_EQ(r->find_class(std::string(127, 'x')), 4u);
  EXPECT_EQ(r->find_class("wait/synch/mutex/test/m1"), 1u);
  EXPECT_EQ(r->find_class("wait/synch/mutex/test/dirty"), 0u);
  EXPECT_EQ(r->find_class(""), 0u);
  EXPECT_EQ(r->find_class(std::string(300, 'x')), 0u);
}

TEST_F(ReaderTest, ClampsLargeValues) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  set_sync(kArrayMutexes, 0, 1, kMax, {kMax, kMax, kMax - 1, kMax, 0});
  count_in_global();
  wait_record& w = completed(kArrayHistoryLong, 0, kMax, kMax, 1);
  w.number_of_bytes = std::numeric_limits<std::int64_t>::min();
  w.flags = 0xFFFFFFFF;
  auto r = open_reader();
  auto rows = scan(*r, table_id::events_waits_summary_by_instance);
  EXPECT_TRUE(IsInt(rows[0][1], kI64Max));
  // SUM_TIMER_WAIT is numeric: UINT64_MAX exactly; avg = max/max.
  EXPECT_EQ(static_cast<std::uint64_t>(rows[0][3].i), kMax);
  EXPECT_EQ(rows[0][3].hi, 0u);
  for (int k : {2, 4, 5, 6}) EXPECT_TRUE(IsInt(rows[0][k], k == 5 ? 1 : kI64Max)) << k;
  rows = scan(*r, table_id::events_waits_summary_global_by_event_name);
  EXPECT_TRUE(IsInt(rows[0][1], kI64Max));  // saturated sum of counts
  rows = scan(*r, table_id::events_waits_history_long);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_TRUE(IsInt(rows[0][0], kI64Max));
  EXPECT_TRUE(IsNull(rows[0][17]));  // negative byte counts other than -1 are garbage: NULL too
  EXPECT_TRUE(IsInt(rows[0][18], 0xFFFFFFFF));
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

TEST_F(ReaderTest, ScanRejectsUnknownTableAndTruncatedFile) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  auto r = open_reader();
  table_def bogus{"bogus", {}, 1000, nullptr, {}};
  std::vector<row> rows(3);
  region_error err = r->scan(bogus, rows);
  EXPECT_TRUE(err);
  EXPECT_TRUE(rows.empty());
  EXPECT_EQ(r->estimated_rows(bogus), 0u);

  // Shrinking the file under a live mapping: the scan refuses instead of faulting.
  ASSERT_EQ(truncate(path_.c_str(), 4096), 0);
  err = r->scan(T(table_id::threads), rows);
  EXPECT_EQ(err.code, region_errc::changed) << err.message;
  EXPECT_TRUE(rows.empty());
}

TEST_F(ReaderTest, OpenErrorsComeBackAsRegionErrors) {
  region_error err;
  auto r = region_reader::open(dir_ + "/missing", false, err);
  EXPECT_EQ(r, nullptr);
  EXPECT_EQ(err.code, region_errc::not_found);
  EXPECT_FALSE(err.message.empty());
}

// A writer thread keeps rewriting a wait record, a thread record and a mutex under the
// layout's protocols while the reader scans: every accepted row must be internally
// consistent. (Run under TSan in CI: every shared access is atomic.)
TEST_F(ReaderTest, ConcurrentWriterNeverYieldsMixedRows) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate();
  auto r = open_reader();
  std::atomic<bool> stop{false};
  wait_record& w = map_.array<wait_record>(kArrayWaitStacks)[0];
  thread_record& t = map_.array<thread_record>(kArrayThreads)[2];
  store_relaxed(w.seq, 0u);
  std::thread writer([&] {
    std::uint64_t k = 1;
    std::uint32_t seq = 0;
    std::uint32_t tl = 0;
    while (!stop.load(std::memory_order_relaxed)) {
      // seqlock write of the stack slot of thread slot 0 (THREAD_ID 1)
      store_relaxed(w.seq, ++seq);
      std::atomic_thread_fence(std::memory_order_release);
      store_relaxed(w.state, kWaitCompleted);
      store_relaxed(w.class_index, 1u);
      store_relaxed(w.thread_id, std::uint64_t{1});
      store_relaxed(w.event_id, k);
      store_relaxed(w.end_event_id, k + 1);
      store_relaxed(w.timer, static_cast<std::uint8_t>(timers::timer_kind::cycle));
      store_relaxed(w.timer_start, k * 10);
      store_relaxed(w.timer_end, k * 10 + 5);
      store_relaxed(w.number_of_bytes, static_cast<std::int64_t>(k));
      store_release(w.seq, ++seq);
      // version+state cycle of thread slot 2: dirty, fill, allocated (THREAD_ID 1000+k)
      store_relaxed(t.lock, (tl & ~kStateMask) | kStateDirty);
      std::atomic_thread_fence(std::memory_order_release);
      store_relaxed(t.thread_id, 1000 + k);
      store_relaxed(t.os_thread_id, 1000 + k);
      store_relaxed(t.parent_thread_id, 1000 + k);
      tl = (tl & ~kStateMask) + kVersionInc;
      store_release(t.lock, tl | kStateAllocated);
      ++k;
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::uint64_t seen = 0;
  while (std::chrono::steady_clock::now() < deadline) {
    auto rows = scan(*r, table_id::events_waits_current);
    for (const row& x : rows) {
      ASSERT_FALSE(x[1].null);
      const std::int64_t k = x[1].i;
      EXPECT_TRUE(IsInt(x[2], k + 1));
      EXPECT_TRUE(IsInt(x[5], k * 30));
      EXPECT_TRUE(IsInt(x[6], k * 30 + 15));
      EXPECT_TRUE(IsInt(x[7], 15));
      EXPECT_TRUE(IsInt(x[17], k));
      ++seen;
    }
    rows = scan(*r, table_id::threads);
    for (const row& x : rows) {
      if (x[0].i < 1000) continue;
      EXPECT_TRUE(IsInt(x[11], x[0].i));  // parent_thread_id
      EXPECT_TRUE(IsInt(x[16], x[0].i));  // thread_os_id
    }
  }
  stop = true;
  writer.join();
  EXPECT_GT(seen, 0u);
}

// ---------------------------------------------------------------------------
// File io and table io

// Every cell of x from column `from` on holds the ints v, in order.
testing::AssertionResult IntsAt(const row& x, std::size_t from, std::initializer_list<std::int64_t> v) {
  if (from + v.size() > x.size()) return testing::AssertionFailure() << "row has " << x.size() << " cells";
  std::size_t k = from;
  for (std::int64_t e : v) {
    testing::AssertionResult r = IsInt(x[k], e);
    if (!r) return r << " (column " << k << ")";
    ++k;
  }
  return testing::AssertionSuccess();
}

std::vector<std::string> names_of(const table_def& t) {
  std::vector<std::string> n;
  for (const auto& c : t.columns) n.push_back(c.name);
  return n;
}

TEST(ReaderCatalog, IoTablesColumns) {
  // New tables come after status: the older ids do not move.
  EXPECT_EQ(static_cast<int>(table_id::status), 15);
  EXPECT_EQ(static_cast<int>(table_id::setup_objects), 16);
  EXPECT_EQ(static_cast<int>(table_id::table_io_waits_summary_by_index_usage), 21);
  EXPECT_EQ(static_cast<int>(table_id::events_stages_current), 22);
  EXPECT_EQ(static_cast<int>(table_id::lock_contention_by_instance), 41);
  EXPECT_EQ(static_cast<int>(table_id::socket_instances), 42);
  EXPECT_EQ(static_cast<int>(table_id::socket_summary_by_event_name), 44);
  EXPECT_EQ(static_cast<int>(table_id::memory_summary_global_by_event_name), 45);
  EXPECT_EQ(static_cast<int>(table_id::count), 47);

  EXPECT_EQ(names_of(T(table_id::setup_objects)),
            (std::vector<std::string>{"object_type", "object_schema", "object_name", "enabled", "timed"}));
  EXPECT_EQ(names_of(T(table_id::file_instances)),
            (std::vector<std::string>{"file_name", "event_name", "open_count"}));
  const std::vector<std::string> file_groups = {"count_star",
                                                "sum_timer_wait",
                                                "min_timer_wait",
                                                "avg_timer_wait",
                                                "max_timer_wait",
                                                "count_read",
                                                "sum_timer_read",
                                                "min_timer_read",
                                                "avg_timer_read",
                                                "max_timer_read",
                                                "sum_number_of_bytes_read",
                                                "count_write",
                                                "sum_timer_write",
                                                "min_timer_write",
                                                "avg_timer_write",
                                                "max_timer_write",
                                                "sum_number_of_bytes_write",
                                                "count_misc",
                                                "sum_timer_misc",
                                                "min_timer_misc",
                                                "avg_timer_misc",
                                                "max_timer_misc"};
  std::vector<std::string> expected = {"event_name"};
  expected.insert(expected.end(), file_groups.begin(), file_groups.end());
  EXPECT_EQ(names_of(T(table_id::file_summary_by_event_name)), expected);
  expected = {"file_name", "event_name", "object_instance_begin"};
  expected.insert(expected.end(), file_groups.begin(), file_groups.end());
  EXPECT_EQ(names_of(T(table_id::file_summary_by_instance)), expected);

  std::vector<std::string> table_groups = {"count_star", "sum_timer_wait", "min_timer_wait", "avg_timer_wait",
                                           "max_timer_wait"};
  for (const char* g : {"read", "write", "fetch", "insert", "update", "delete"})
    for (const char* p : {"count_", "sum_timer_", "min_timer_", "avg_timer_", "max_timer_"})
      table_groups.push_back(std::string(p) + g);
  expected = {"object_type", "object_schema", "object_name"};
  expected.insert(expected.end(), table_groups.begin(), table_groups.end());
  EXPECT_EQ(names_of(T(table_id::table_io_waits_summary_by_table)), expected);
  expected = {"object_type", "object_schema", "object_name", "index_name"};
  expected.insert(expected.end(), table_groups.begin(), table_groups.end());
  EXPECT_EQ(names_of(T(table_id::table_io_waits_summary_by_index_usage)), expected);

  // Types: text for names, numeric for the sums of times, bigint for the rest; only
  // index_name may be NULL.
  for (table_id id : {table_id::setup_objects, table_id::file_instances, table_id::file_summary_by_event_name,
                      table_id::file_summary_by_instance, table_id::table_io_waits_summary_by_table,
                      table_id::table_io_waits_summary_by_index_usage}) {
    for (const auto& c : T(id).columns) {
      const std::string n = c.name;
      const bool text = n == "object_type" || n == "object_schema" || n == "object_name" || n == "enabled" ||
                        n == "timed" || n == "file_name" || n == "event_name" || n == "index_name";
      const column_type type = text                          ? column_type::text
                               : n.starts_with("sum_timer_") ? column_type::numeric
                                                             : column_type::int64;
      EXPECT_EQ(c.type, type) << T(id).name << "." << n;
      EXPECT_EQ(c.nullable, n == "index_name") << T(id).name << "." << n;
    }
  }
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

class ReaderIoTest : public ReaderTest {
 protected:
  // populate() plus: class 5 a table class, class 8 a second file class; files
  // A (f1), B (f1), C (f2), D (a mutex class: invalid), E (freed), a dirty slot; the
  // f1 bucket of deleted files; tables orders (2 indexes), #sql_tmp (temporary), wide
  // (index_count above max_indexes_per_table).
  void populate_io() {
    populate();
    set_class(5, kKindTable, "wait/io/table/sql/handler", kFlagEnabled | kFlagTimed, {7, 700, 3, 200, 0});
    set_class(8, kKindFile, "wait/io/file/test/f2", kFlagEnabled);
    set_file(0, 7, "/data/a.ibd", 0xA000, 2,
             {io(3, 300, 50, 150, 4096), io(2, 100, 40, 60, 1000), io(1, 10, 10, 10)});
    set_file(1, 7, "/data/b.log", 0xB000, 0, {kNoIo, io(4, 0, kMax, 0, 64), io(2, 30, 5, 25)});
    set_file(2, 8, "/tmp/c", 0xC000, 1);
    set_file(3, 1, "/bad", 0xD000, 1, {io(1, 1, 1, 1, 1), kNoIo, kNoIo});
    set_file(4, 7, "/gone", 0xE000, 0, {io(100, 100, 1, 1, 100), kNoIo, kNoIo}, 1, kStateFree);
    set_file(5, 7, "/dirty", 0xF000, 0, {io(100, 100, 1, 1, 100), kNoIo, kNoIo}, 1, kStateDirty);
    for (std::uint32_t c = 1; c <= 8; ++c) bucket(c) = {kNoIo, kNoIo, kNoIo};
    bucket(7) = {io(1, 1000, 1000, 1000, 10), kNoIo, io(5, 50, 2, 20)};
    bucket(1) = {io(9, 9, 9, 9, 9), io(9, 9, 9, 9, 9), io(9, 9, 9, 9, 9)};  // not a file class: ignored

    set_table(0, kObjectTypeTable, "db1", "orders");
    map_.array<table_share>(kArrayTables)[0].no_index = {
        kNoWait, {5, 500, 50, 200, 0}, {2, 60, 20, 40, 0}, {1, 30, 30, 30, 0}};
    set_index(0, 0, "PRIMARY", {{10, 1000, 20, 300, 0}, kNoWait, kNoWait, kNoWait});
    set_index(0, 1, "by_date", {{4, 80, 10, 40, 0}, kNoWait, {1, 15, 15, 15, 0}, kNoWait});
    set_table(1, kObjectTypeTemporaryTable, "db1", "#sql_tmp");
    set_table(2, kObjectTypeTable, "db2", "wide");
    set_index(2, 0, "i1");
    set_index(2, 1, "i2", {kNoWait, {3, 0, kMax, 0, 0}, kNoWait, kNoWait});
    map_.array<table_share>(kArrayTables)[2].index_count = 77;  // bounded by max_indexes_per_table
    count_in_global();
  }
};

TEST_F(ReaderIoTest, FileInstances) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate_io();
  auto r = open_reader();
  auto rows = scan(*r, table_id::file_instances);
  ASSERT_EQ(rows.size(), 3u);
  const char* files[] = {"/data/a.ibd", "/data/b.log", "/tmp/c"};
  const char* classes[] = {"wait/io/file/test/f1", "wait/io/file/test/f1", "wait/io/file/test/f2"};
  const std::int64_t open[] = {2, 0, 1};
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(IsText(rows[i][0], files[i]));
    EXPECT_TRUE(IsText(rows[i][1], classes[i]));
    EXPECT_TRUE(IsInt(rows[i][2], open[i]));
  }
  EXPECT_EQ(r->invalid_rows_skipped(), 1u);  // D: its class is a mutex class
  EXPECT_EQ(r->torn_rows_skipped(), 0u);     // the dirty slot is not torn

  // A class index out of range, of a free class: invalid too. A name without NUL is
  // cut at the field.
  map_.array<file_instance>(kArrayFiles)[3].class_index = 99;
  file_instance& b = map_.array<file_instance>(kArrayFiles)[1];
  std::memset(b.name, 'n', sizeof(b.name));
  rows = scan(*r, table_id::file_instances);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(IsText(rows[1][0], std::string(kObjectNameLen - 1, 'n')));
  map_.array<file_instance>(kArrayFiles)[3].class_index = 6;  // dirty class
  scan(*r, table_id::file_instances);
  EXPECT_EQ(r->invalid_rows_skipped(), 3u);
}

TEST_F(ReaderIoTest, FileSummaries) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate_io();
  auto r = open_reader();

  auto rows = scan(*r, table_id::file_summary_by_instance);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(IsText(rows[0][0], "/data/a.ibd"));
  EXPECT_TRUE(IsText(rows[0][1], "wait/io/file/test/f1"));
  EXPECT_TRUE(IsInt(rows[0][2], 0xA000));
  EXPECT_TRUE(IntsAt(rows[0], 3, {6, 410, 10, 68,  150,        // STAR
                                  3, 300, 50, 100, 150, 4096,  // READ + bytes
                                  2, 100, 40, 50,  60,  1000,  // WRITE + bytes
                                  1, 10,  10, 10,  10}));      // MISC
  EXPECT_TRUE(IsText(rows[1][0], "/data/b.log"));
  EXPECT_TRUE(IsInt(rows[1][2], 0xB000));
  EXPECT_TRUE(IntsAt(rows[1], 3, {6, 30, 5, 5,  25,      // STAR: the untimed writes count, add no time
                                  0, 0,  0, 0,  0,  0,   // READ: nothing
                                  4, 0,  0, 0,  0,  64,  // WRITE: counted, not timed
                                  2, 30, 5, 15, 25}));
  EXPECT_TRUE(IsText(rows[2][0], "/tmp/c"));
  EXPECT_TRUE(IsText(rows[2][1], "wait/io/file/test/f2"));
  EXPECT_TRUE(IsInt(rows[2][2], 0xC000));
  for (std::size_t k = 3; k < rows[2].size(); ++k) EXPECT_TRUE(IsInt(rows[2][k], 0)) << k;

  rows = scan(*r, table_id::file_summary_by_event_name);
  ASSERT_EQ(rows.size(), 2u);  // the two file classes, in class order
  EXPECT_TRUE(IsText(rows[0][0], "wait/io/file/test/f1"));
  // f1 = bucket (deleted files) + A + B; the freed and the dirty records are not in it.
  EXPECT_TRUE(IntsAt(rows[0], 1, {18, 1490, 2,  82,  1000,        // STAR
                                  4,  1300, 50, 325, 1000, 4106,  // READ: bucket + A
                                  6,  100,  40, 16,  60,   1064,  // WRITE: A + B
                                  8,  90,   2,  11,  25}));       // MISC: bucket + A + B
  EXPECT_TRUE(IsText(rows[1][0], "wait/io/file/test/f2"));
  for (std::size_t k = 1; k < rows[1].size(); ++k) EXPECT_TRUE(IsInt(rows[1][k], 0)) << k;

  // The global summary: file classes show the STAR of file_summary_by_event_name,
  // table classes their count only (their time is left out: WL#4895 double timing).
  const auto by_event = rows;
  rows = scan(*r, table_id::events_waits_summary_global_by_event_name);
  ASSERT_EQ(rows.size(), 6u);
  const char* names[] = {"wait/synch/mutex/test/m1",  "wait/synch/rwlock/test/rw1", "wait/synch/cond/test/c1",
                         "wait/io/table/sql/handler", "wait/io/file/test/f1",       "wait/io/file/test/f2"};
  for (int i = 0; i < 6; ++i) EXPECT_TRUE(IsText(rows[i][0], names[i])) << i;
  EXPECT_TRUE(IntsAt(rows[0], 1, {4, 75, 5, 18, 40}));
  EXPECT_TRUE(IntsAt(rows[3], 1, {7, 0, 0, 0, 0}));
  EXPECT_TRUE(IntsAt(rows[4], 1, {18, 1490, 2, 82, 1000}));
  for (int k = 1; k <= 5; ++k) EXPECT_TRUE(IsInt(rows[4][k], by_event[0][k].i)) << k;
  EXPECT_TRUE(IntsAt(rows[5], 1, {0, 0, 0, 0, 0}));

  // events_waits_summary_by_instance: the synch instances, then the files (STAR).
  rows = scan(*r, table_id::events_waits_summary_by_instance);
  ASSERT_EQ(rows.size(), 7u);
  EXPECT_TRUE(IsInt(rows[3][1], 0x4000));
  EXPECT_TRUE(IsText(rows[4][0], "wait/io/file/test/f1"));
  EXPECT_TRUE(IsInt(rows[4][1], 0xA000));
  EXPECT_TRUE(IntsAt(rows[4], 2, {6, 410, 10, 68, 150}));
  EXPECT_TRUE(IsText(rows[5][0], "wait/io/file/test/f1"));
  EXPECT_TRUE(IsInt(rows[5][1], 0xB000));
  EXPECT_TRUE(IntsAt(rows[5], 2, {6, 30, 5, 5, 25}));
  EXPECT_TRUE(IsText(rows[6][0], "wait/io/file/test/f2"));
  EXPECT_TRUE(IsInt(rows[6][1], 0xC000));
  EXPECT_TRUE(IntsAt(rows[6], 2, {0, 0, 0, 0, 0}));

  // D (mutex class) was skipped and counted by each of the three scans that read
  // files (the global summary reads the threads' statistics, not the files).
  EXPECT_EQ(r->invalid_rows_skipped(), 3u);
  EXPECT_EQ(r->torn_rows_skipped(), 0u);

  // Deleting A: its statistics move to the bucket (as the provider does); the
  // per-class totals stay the same.
  io_stats& b = bucket(7);
  const file_instance& a = map_.array<file_instance>(kArrayFiles)[0];
  b.read = io(4, 1300, 50, 1000, 4106);
  b.write = a.stats.write;
  b.misc = io(6, 60, 2, 20);
  map_.array<file_instance>(kArrayFiles)[0].lock = 4 + kStateFree;
  rows = scan(*r, table_id::file_summary_by_event_name);
  EXPECT_TRUE(IntsAt(rows[0], 1, {18, 1490, 2,  82, 1000, 4,    1300, 50, 325, 1000, 4106,
                                  6,  100,  40, 16, 60,   1064, 8,    90, 2,   11,   25}));
  EXPECT_EQ(scan(*r, table_id::file_instances).size(), 2u);
}

TEST_F(ReaderIoTest, TableIoSummaries) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate_io();
  auto r = open_reader();
  auto rows = scan(*r, table_id::table_io_waits_summary_by_table);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_TRUE(IsText(rows[0][0], "TABLE"));
  EXPECT_TRUE(IsText(rows[0][1], "db1"));
  EXPECT_TRUE(IsText(rows[0][2], "orders"));
  // no_index + PRIMARY + by_date.
  EXPECT_TRUE(IntsAt(rows[0], 3, {23, 1685, 10, 73,  300,    // STAR
                                  14, 1080, 10, 77,  300,    // READ = FETCH
                                  9,  605,  15, 67,  200,    // WRITE = INSERT + UPDATE + DELETE
                                  14, 1080, 10, 77,  300,    // FETCH
                                  5,  500,  50, 100, 200,    // INSERT
                                  3,  75,   15, 25,  40,     // UPDATE
                                  1,  30,   30, 30,  30}));  // DELETE
  EXPECT_TRUE(IsText(rows[1][0], "TEMPORARY TABLE"));
  EXPECT_TRUE(IsText(rows[1][1], "db1"));
  EXPECT_TRUE(IsText(rows[1][2], "#sql_tmp"));
  for (std::size_t k = 3; k < rows[1].size(); ++k) EXPECT_TRUE(IsInt(rows[1][k], 0)) << k;
  EXPECT_TRUE(IsText(rows[2][2], "wide"));
  EXPECT_TRUE(IntsAt(rows[2], 3, {3, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0}));

  rows = scan(*r, table_id::table_io_waits_summary_by_index_usage);
  ASSERT_EQ(rows.size(), 3u + 1u + 3u);
  // orders: PRIMARY, by_date, then the NULL row (io without an index).
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(IsText(rows[i][0], "TABLE"));
    EXPECT_TRUE(IsText(rows[i][1], "db1"));
    EXPECT_TRUE(IsText(rows[i][2], "orders"));
  }
  EXPECT_TRUE(IsText(rows[0][3], "PRIMARY"));
  EXPECT_TRUE(
      IntsAt(rows[0], 4, {10,  1000, 20, 100, 300, 10, 1000, 20, 100, 300, 0, 0, 0, 0, 0, 10, 1000, 20,
                          100, 300,  0,  0,   0,   0,  0,    0,  0,   0,   0, 0, 0, 0, 0, 0,  0}));
  EXPECT_TRUE(IsText(rows[1][3], "by_date"));
  EXPECT_TRUE(IntsAt(rows[1], 4, {5, 95, 10, 19, 40,    // STAR
                                  4, 80, 10, 20, 40,    // READ
                                  1, 15, 15, 15, 15,    // WRITE
                                  4, 80, 10, 20, 40,    // FETCH
                                  0, 0,  0,  0,  0,     // INSERT
                                  1, 15, 15, 15, 15,    // UPDATE
                                  0, 0,  0,  0,  0}));  // DELETE
  EXPECT_TRUE(IsNull(rows[2][3]));
  EXPECT_TRUE(IntsAt(rows[2], 4, {8, 590, 20, 73,  200,    // STAR = WRITE
                                  0, 0,   0,  0,   0,      // READ
                                  8, 590, 20, 73,  200,    // WRITE
                                  0, 0,   0,  0,   0,      // FETCH
                                  5, 500, 50, 100, 200,    // INSERT
                                  2, 60,  20, 30,  40,     // UPDATE
                                  1, 30,  30, 30,  30}));  // DELETE
  // #sql_tmp: no index declared, one NULL row.
  EXPECT_TRUE(IsText(rows[3][0], "TEMPORARY TABLE"));
  EXPECT_TRUE(IsText(rows[3][2], "#sql_tmp"));
  EXPECT_TRUE(IsNull(rows[3][3]));
  // wide: index_count 77 is bounded by max_indexes_per_table (2).
  EXPECT_TRUE(IsText(rows[4][3], "i1"));
  EXPECT_TRUE(IsText(rows[5][3], "i2"));
  EXPECT_TRUE(IntsAt(rows[5], 4, {3, 0, 0, 0, 0}));
  EXPECT_TRUE(IsNull(rows[6][3]));
  EXPECT_EQ(r->invalid_rows_skipped(), 0u);

  // A dropped table is gone; a share with an unknown object_type is skipped and
  // counted; a dirty one (being declared) is skipped, not counted.
  map_.array<table_share>(kArrayTables)[0].lock = 4 + kStateFree;
  map_.array<table_share>(kArrayTables)[1].object_type = 0;
  map_.array<table_share>(kArrayTables)[2].lock = 4 + kStateDirty;
  EXPECT_TRUE(scan(*r, table_id::table_io_waits_summary_by_table).empty());
  EXPECT_TRUE(scan(*r, table_id::table_io_waits_summary_by_index_usage).empty());
  EXPECT_EQ(r->invalid_rows_skipped(), 2u);
  EXPECT_EQ(r->torn_rows_skipped(), 0u);
}

TEST_F(ReaderIoTest, WaitObjectColumns) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate_io();
  const std::uint32_t v1 = 1 * kVersionInc;  // the version set_file / set_table give
  // history_long (5 slots): file read on A, table fetch on orders through by_date,
  // table insert on orders without index, a temporary table, a file event whose
  // record index is out of range.
  wait_record& fa = completed(kArrayHistoryLong, 0, 1, 1, 7);
  fa.operation = kOpFileRead;
  fa.object_kind = kObjectFile;
  fa.object_index = 1;
  fa.object_version = v1;
  fa.object_instance_begin = 0xA000;
  fa.number_of_bytes = 4096;
  wait_record& t1 = completed(kArrayHistoryLong, 1, 1, 2, 5);
  t1.operation = kOpTableFetch;
  t1.object_kind = kObjectTable;
  t1.object_index = 1;
  t1.object_version = v1;
  t1.index_number = 2;
  t1.number_of_bytes = 5;  // rows
  t1.flags = 3;
  t1.object_instance_begin = 0x7000;
  wait_record& t2 = completed(kArrayHistoryLong, 2, 1, 3, 5);
  t2.operation = kOpTableInsert;
  t2.object_kind = kObjectTable;
  t2.object_index = 1;
  t2.object_version = v1;
  t2.number_of_bytes = 1;
  wait_record& t3 = completed(kArrayHistoryLong, 3, 1, 4, 5);
  t3.operation = kOpTableFetch;
  t3.object_kind = kObjectTable;
  t3.object_index = 2;
  t3.object_version = v1;
  t3.index_number = 1;  // #sql_tmp declares no index: NULL
  wait_record& fx = completed(kArrayHistoryLong, 4, 1, 5, 7);
  fx.operation = kOpFileOpen;
  fx.object_kind = kObjectFile;
  fx.object_index = 7;  // max_files is 6
  fx.object_version = v1;

  auto r = open_reader();
  auto check = [&](const row& x, const char* schema, const char* name, const char* index, const char* type) {
    const char* expected[] = {schema, name, index, type};  // object_schema .. object_type
    for (int k = 0; k < 4; ++k) {
      if (expected[k] != nullptr) {
        EXPECT_TRUE(IsText(x[9 + k], expected[k])) << "column " << 9 + k;
      } else {
        EXPECT_TRUE(IsNull(x[9 + k])) << "column " << 9 + k;
      }
    }
  };
  auto rows = scan(*r, table_id::events_waits_history_long);
  ASSERT_EQ(rows.size(), 5u);
  check(rows[0], nullptr, "/data/a.ibd", nullptr, "FILE");
  EXPECT_TRUE(IsText(rows[0][3], "wait/io/file/test/f1"));
  EXPECT_TRUE(IsInt(rows[0][13], 0xA000));
  EXPECT_TRUE(IsText(rows[0][16], "read"));
  EXPECT_TRUE(IsInt(rows[0][17], 4096));
  check(rows[1], "db1", "orders", "by_date", "TABLE");
  EXPECT_TRUE(IsText(rows[1][3], "wait/io/table/sql/handler"));
  EXPECT_TRUE(IsInt(rows[1][13], 0x7000));
  EXPECT_TRUE(IsText(rows[1][16], "fetch"));
  EXPECT_TRUE(IsInt(rows[1][17], 5));  // rows, as MySQL 8
  EXPECT_TRUE(IsInt(rows[1][18], 3));  // flags as stored
  check(rows[2], "db1", "orders", nullptr, "TABLE");
  EXPECT_TRUE(IsText(rows[2][16], "insert"));
  check(rows[3], "db1", "#sql_tmp", nullptr, "TEMPORARY TABLE");
  check(rows[4], nullptr, nullptr, nullptr, "FILE");  // index out of range: no name
  EXPECT_EQ(r->invalid_rows_skipped(), 0u);           // the row itself is fine

  // The same objects through events_waits_current and _history.
  wait_record& cur = completed(kArrayWaitStacks, 0, 1, 6, 5);
  cur = t1;
  cur.event_id = 6;
  wait_record& hist = completed(kArrayWaitHistory, 0, 1, 7, 7);
  hist = fa;
  hist.event_id = 7;
  map_.array<thread_record>(kArrayThreads)[0].history_index = 1;
  rows = scan(*r, table_id::events_waits_current);
  ASSERT_EQ(rows.size(), 1u);
  check(rows[0], "db1", "orders", "by_date", "TABLE");
  rows = scan(*r, table_id::events_waits_history);
  ASSERT_EQ(rows.size(), 1u);
  check(rows[0], nullptr, "/data/a.ibd", nullptr, "FILE");

  // The file is deleted: its record is free but keeps name and version, so its
  // events still name it. The table is dropped: same.
  map_.array<file_instance>(kArrayFiles)[0].lock = v1 + kStateFree;
  map_.array<table_share>(kArrayTables)[0].lock = v1 + kStateFree;
  rows = scan(*r, table_id::events_waits_history_long);
  check(rows[0], nullptr, "/data/a.ibd", nullptr, "FILE");
  check(rows[1], "db1", "orders", "by_date", "TABLE");
  EXPECT_TRUE(scan(*r, table_id::file_instances).size() == 2u);

  // Being reused (dirty, the old version still in the word): the name may be half
  // written, so it is not shown.
  map_.array<file_instance>(kArrayFiles)[0].lock = v1 + kStateDirty;
  map_.array<table_share>(kArrayTables)[0].lock = v1 + kStateDirty;
  rows = scan(*r, table_id::events_waits_history_long);
  check(rows[0], nullptr, nullptr, nullptr, "FILE");
  check(rows[1], nullptr, nullptr, nullptr, nullptr);

  // Reused: a new version and another name. The old events name nothing now.
  set_file(0, 7, "/data/other", 0xA000, 1, {kNoIo, kNoIo, kNoIo}, 2);
  set_table(0, kObjectTypeTable, "db9", "other", 2);
  rows = scan(*r, table_id::events_waits_history_long);
  check(rows[0], nullptr, nullptr, nullptr, "FILE");
  check(rows[1], nullptr, nullptr, nullptr, nullptr);
  check(rows[2], nullptr, nullptr, nullptr, nullptr);
  check(rows[3], "db1", "#sql_tmp", nullptr, "TEMPORARY TABLE");
  // ... and events of the new version name the new object.
  map_.array<wait_record>(kArrayHistoryLong)[0].object_version = 2 * kVersionInc;
  map_.array<wait_record>(kArrayHistoryLong)[1].object_version = 2 * kVersionInc;
  map_.array<wait_record>(kArrayHistoryLong)[1].index_number = 1;  // the new share has no index yet
  rows = scan(*r, table_id::events_waits_history_long);
  check(rows[0], nullptr, "/data/other", nullptr, "FILE");
  check(rows[1], "db9", "other", nullptr, "TABLE");
  set_index(0, 0, "pk");
  rows = scan(*r, table_id::events_waits_history_long);
  check(rows[1], "db9", "other", "pk", "TABLE");

  // Garbage: version 0 (never allocated), a version with state bits, an unknown
  // object_kind, index 0, a share whose object_type is unknown.
  wait_record* w = map_.array<wait_record>(kArrayHistoryLong);
  set_file(5, 7, "/never", 0xF000, 0, {kNoIo, kNoIo, kNoIo}, 0, kStateFree);
  w[0].object_index = 6;
  w[0].object_version = 0;
  w[1].object_version = 2 * kVersionInc + kStateAllocated;
  w[2].object_kind = 9;
  w[3].object_index = 0;
  w[4].object_kind = kObjectTable;
  w[4].object_index = 3;
  w[4].object_version = v1;
  map_.array<table_share>(kArrayTables)[2].object_type = 200;
  rows = scan(*r, table_id::events_waits_history_long);
  ASSERT_EQ(rows.size(), 5u);
  check(rows[0], nullptr, nullptr, nullptr, "FILE");
  for (int i = 1; i < 5; ++i) check(rows[i], nullptr, nullptr, nullptr, nullptr);
  EXPECT_EQ(r->invalid_rows_skipped(), 1u);  // file D in the file_instances scan only
  EXPECT_EQ(r->torn_rows_skipped(), 0u);
}

// Writers reuse a file record and a table share (dirty, new name, new version), and
// rewrite an event naming the current version, under the layout's protocols, while
// the reader scans: a name shown is always the one of the event's version, and every
// row is internally consistent. (Run under TSan: every shared access is atomic.)
TEST_F(ReaderIoTest, ConcurrentReuseNeverMixesObjects) {
  ASSERT_NO_FATAL_FAILURE(create(small_sizes()));
  populate_io();
  auto r = open_reader();
  std::atomic<bool> stop{false};
  file_instance& f = map_.array<file_instance>(kArrayFiles)[2];
  table_share& t = map_.array<table_share>(kArrayTables)[1];
  wait_record& wf = map_.array<wait_record>(kArrayHistoryLong)[0];
  wait_record& wt = map_.array<wait_record>(kArrayHistoryLong)[1];
  for (wait_record* w : {&wf, &wt}) {
    *w = wait_record{};
    w->thread_id = 1;
    w->number_of_bytes = -1;
  }
  auto write_text = [](char* field, std::size_t cap, const std::string& v) {
    for (std::size_t i = 0; i < cap; ++i) store_relaxed(field[i], i < v.size() ? v[i] : '\0');
  };
  std::thread writer([&] {
    std::uint32_t fseq = 0, tseq = 0;
    for (std::uint32_t k = 2; !stop.load(std::memory_order_relaxed); ++k) {
      const std::string tag = std::to_string(k);
      // The file record is reused (free, then dirty with the old version, then
      // allocated with the next one); a rename in between keeps the version.
      std::uint32_t word = load_relaxed(f.lock);
      store_relaxed(f.lock, (word & ~kStateMask) | kStateFree);
      store_relaxed(f.lock, (word & ~kStateMask) | kStateDirty);
      std::atomic_thread_fence(std::memory_order_release);
      store_relaxed(f.open_count, k);
      write_text(f.name, kObjectNameLen, "/f/" + tag + "/" + std::string(k % 300, 'x'));
      store_relaxed(f.identity, std::uint64_t{k});
      __atomic_fetch_add(&f.stats.read.count, std::uint64_t{1}, __ATOMIC_RELAXED);
      const std::uint32_t fver = (word & ~kStateMask) + kVersionInc;
      store_release(f.lock, fver | kStateAllocated);
      // The table share too, with its first index.
      word = load_relaxed(t.lock);
      store_relaxed(t.lock, (word & ~kStateMask) | kStateDirty);
      std::atomic_thread_fence(std::memory_order_release);
      store_relaxed(t.index_count, 0u);
      write_text(t.schema, kObjectSchemaLen, "s" + tag);
      write_text(t.name, kTableNameLen, "t" + tag);
      const std::uint32_t tver = (word & ~kStateMask) + kVersionInc;
      store_release(t.lock, tver | kStateAllocated);
      index_stat& ix = map_.array<index_stat>(kArrayTableIndexes)[1 * 2 + 0];
      write_text(ix.name, kIndexNameLen, "i" + tag);
      store_release(t.index_count, 1u);
      // The events name the current versions; event_id carries k.
      for (wait_record* w : {&wf, &wt}) {
        std::uint32_t& seq = w == &wf ? fseq : tseq;
        store_relaxed(w->seq, ++seq);
        std::atomic_thread_fence(std::memory_order_release);
        store_relaxed(w->state, kWaitCompleted);
        store_relaxed(w->class_index, w == &wf ? 8u : 5u);
        store_relaxed(w->operation, static_cast<std::uint8_t>(w == &wf ? kOpFileRead : kOpTableFetch));
        store_relaxed(w->event_id, std::uint64_t{k});
        store_relaxed(w->end_event_id, std::uint64_t{k});
        store_relaxed(w->object_kind, w == &wf ? kObjectFile : kObjectTable);
        store_relaxed(w->object_index, w == &wf ? 3u : 2u);
        store_relaxed(w->object_version, w == &wf ? fver : tver);
        store_relaxed(w->index_number, w == &wf ? 0u : 1u);
        store_release(w->seq, ++seq);
      }
    }
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(300);
  std::uint64_t named = 0, files = 0;
  auto file_name = [](std::int64_t k) { return "/f/" + std::to_string(k) + "/" + std::string(k % 300, 'x'); };
  while (std::chrono::steady_clock::now() < deadline) {
    for (const row& x : scan(*r, table_id::events_waits_history_long)) {
      const std::int64_t k = x[1].i;
      if (x[1].null || k < 2) continue;
      if (x[3].s == "wait/io/file/test/f2") {
        EXPECT_TRUE(IsText(x[12], "FILE"));
        if (!x[10].null) {
          EXPECT_EQ(x[10].s, file_name(k));
          ++named;
        }
      } else {
        if (x[12].null) {
          EXPECT_TRUE(IsNull(x[9]));
          EXPECT_TRUE(IsNull(x[10]));
          EXPECT_TRUE(IsNull(x[11]));
          continue;
        }
        EXPECT_TRUE(IsText(x[12], "TEMPORARY TABLE"));
        EXPECT_TRUE(IsText(x[9], "s" + std::to_string(k)));
        EXPECT_TRUE(IsText(x[10], "t" + std::to_string(k)));
        // The index may not be declared yet in this version.
        if (!x[11].null) {
          EXPECT_TRUE(IsText(x[11], "i" + std::to_string(k)));
        }
        ++named;
      }
    }
    for (const row& x : scan(*r, table_id::file_instances)) {
      if (x[1].s != "wait/io/file/test/f2" || x[0].s == "/tmp/c") continue;  // before the first reuse
      EXPECT_EQ(x[0].s, file_name(x[2].i));
      ++files;
    }
    for (const row& x : scan(*r, table_id::file_summary_by_instance)) {
      if (x[1].s != "wait/io/file/test/f2" || x[0].s == "/tmp/c") continue;
      EXPECT_EQ(x[0].s, file_name(x[2].i));  // identity = k = open_count
    }
    for (const row& x : scan(*r, table_id::table_io_waits_summary_by_index_usage)) {
      if (x[0].s != "TEMPORARY TABLE" || x[2].s == "#sql_tmp") continue;  // before the first reuse
      const std::string k = x[1].s.substr(1);
      EXPECT_EQ(x[2].s, "t" + k);
      if (!x[3].null) {
        EXPECT_EQ(x[3].s, "i" + k);
      }
    }
    scan(*r, table_id::file_summary_by_event_name);
    scan(*r, table_id::events_waits_summary_global_by_event_name);
    scan(*r, table_id::table_io_waits_summary_by_table);
  }
  stop = true;
  writer.join();
  std::printf("concurrent reuse: %llu named objects, %llu file rows checked\n",
              static_cast<unsigned long long>(named), static_cast<unsigned long long>(files));
  EXPECT_GT(named, 0u);
  EXPECT_GT(files, 0u);
}

}  // namespace
