// The reader library: the catalogue, the status table, and what holds for every
// table (empty and damaged regions, large values, estimates, open and scan errors,
// a concurrent writer).
#include "tests/reader/reader_fixture.h"

namespace pfs::reader_test {
namespace {

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
    else if (id == table_id::events_errors_summary_global_by_error)
      EXPECT_EQ(rows.size(), 1u) << "the NULL row, as MySQL";
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
            7u + 2u + 6u + 4u);  // + sems, files, sockets
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
      // Pauses between bursts so a loaded machine still gives the reader stable moments.
      if (k % 64 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
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

}  // namespace
}  // namespace pfs::reader_test
