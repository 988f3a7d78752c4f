// The reader's file io and table io tables (rows_io.cpp), and the objects wait
// events name.
#include "tests/reader/reader_fixture.h"

namespace pfs::reader_test {
namespace {

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
  EXPECT_EQ(static_cast<int>(table_id::events_errors_summary_by_thread_by_error), 47);
  EXPECT_EQ(static_cast<int>(table_id::table_lock_waits_summary_by_table), 49);
  EXPECT_EQ(static_cast<int>(table_id::tls_channel_status), 50);
  EXPECT_EQ(static_cast<int>(table_id::data_locks), 51);
  EXPECT_EQ(static_cast<int>(table_id::data_lock_waits), 52);
  EXPECT_EQ(static_cast<int>(table_id::metadata_locks), 53);
  EXPECT_EQ(static_cast<int>(table_id::sem_instances), 54);
  EXPECT_EQ(static_cast<int>(table_id::accounts), 55);
  EXPECT_EQ(static_cast<int>(table_id::events_errors_summary_by_host_by_error), 75);
  EXPECT_EQ(names_of(T(table_id::accounts)),
            (std::vector<std::string>{"user", "host", "current_connections", "total_connections",
                                      "max_session_controlled_memory", "max_session_total_memory"}));
  EXPECT_EQ(names_of(T(table_id::memory_summary_by_user_by_event_name))[0], "user");
  EXPECT_EQ(names_of(T(table_id::events_errors_summary_by_host_by_error))[1], "error_number");
  EXPECT_EQ(static_cast<int>(table_id::setup_meters), 76);
  EXPECT_EQ(static_cast<int>(table_id::setup_metrics), 77);
  EXPECT_EQ(static_cast<int>(table_id::count), 78);
  EXPECT_EQ(names_of(T(table_id::tls_channel_status)),
            (std::vector<std::string>{"channel", "property", "value"}));

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
  // table_lock_waits_summary_by_table: MySQL 8.0's table_tlws_by_table.cc order.
  expected = {"object_type",    "object_schema",  "object_name",    "count_star",
              "sum_timer_wait", "min_timer_wait", "avg_timer_wait", "max_timer_wait"};
  for (const char* g : {"read", "write", "read_normal", "read_with_shared_locks", "read_high_priority",
                        "read_no_insert", "read_external", "write_allow_write", "write_concurrent_insert",
                        "write_low_priority", "write_normal", "write_external"})
    for (const char* p : {"count_", "sum_timer_", "min_timer_", "avg_timer_", "max_timer_"})
      expected.push_back(std::string(p) + g);
  EXPECT_EQ(names_of(T(table_id::table_lock_waits_summary_by_table)), expected);
  EXPECT_EQ(expected.size(), 3u + 5u * 13u);

  // Types: text for names, numeric for the sums of times, bigint for the rest; only
  // index_name may be NULL.
  for (table_id id :
       {table_id::setup_objects, table_id::file_instances, table_id::file_summary_by_event_name,
        table_id::file_summary_by_instance, table_id::table_io_waits_summary_by_table,
        table_id::table_io_waits_summary_by_index_usage, table_id::table_lock_waits_summary_by_table}) {
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
}  // namespace pfs::reader_test
