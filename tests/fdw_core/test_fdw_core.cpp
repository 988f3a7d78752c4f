// The perfschema_fdw core (fdw/core_*.cpp) through its C ABI, without PostgreSQL:
// the catalogue, the region cache (re-mapping when the file changes), scans into
// compact row sets, and the errors the shim turns into ereports. Regions come from
// the fixture tool (build/tools/pfs_fixture).
//
// The core's sources are compiled into this test (the CMake build has no target
// for them: the extension is built with PGXS).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "agent/reader/reader.h"
#include "fdw/pfs_core.h"

namespace {

using pfs::reader::table_id;

int table_index(table_id id) { return static_cast<int>(id); }

class FdwCoreTest : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "pfs_fdw_core_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/region";
    ASSERT_TRUE(pfs_core_init());
  }
  void TearDown() override {
    pfs_core_region_forget_all();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  void fixture(const std::string& args = "") {
    const std::string cmd = std::string(PFS_BUILD_DIR) + "/tools/pfs_fixture " + args + " '" + path_ + "'";
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  }

  PfsCoreRegion* region(std::uint32_t key = 1) {
    PfsCoreRegion* r = pfs_core_region_get(key, path_.c_str(), &err_);
    EXPECT_NE(r, nullptr) << err_.message;
    return r;
  }

  // A scan of the given columns (empty: all; {-1}: none) in one piece, the scan owned
  // by the test.
  const PfsCoreRowset* scan(table_id t, const std::vector<int>& columns = {},
                            const std::vector<PfsCoreQual>& quals = {}) {
    bool wanted[128] = {};
    for (int c = 0; c < pfs_core_column_count(table_index(t)); ++c) wanted[c] = columns.empty();
    for (int c : columns)
      if (c >= 0) wanted[c] = true;  // {-1}: no column at all
    PfsCoreScan* s = pfs_core_scan_begin(region(), table_index(t), wanted, quals.data(),
                                         static_cast<int>(quals.size()), 4, SIZE_MAX, &err_);
    EXPECT_NE(s, nullptr) << err_.message;
    if (s == nullptr) return nullptr;
    owned_.emplace_back(s);
    const PfsCoreRowset* rs = pfs_core_scan_next(s, nullptr, &err_);
    EXPECT_NE(rs, nullptr) << err_.message;
    if (rs != nullptr) {
      EXPECT_TRUE(rs->last);
    }
    return rs;
  }

  std::string text(const PfsCoreRowset& rs, const PfsCoreCell& c) {
    EXPECT_FALSE(c.isnull);
    EXPECT_EQ(c.value % 8, 0);
    return std::string(rs.text + c.value + 4, c.len);
  }

  struct scan_deleter {
    void operator()(PfsCoreScan* s) const { pfs_core_scan_end(s); }
  };
  std::vector<std::unique_ptr<PfsCoreScan, scan_deleter>> owned_;
  std::string dir_, path_;
  PfsCoreError err_{};
};

TEST(FdwCoreCatalog, MirrorsTheReader) {
  ASSERT_TRUE(pfs_core_init());
  const auto& tables = pfs::reader::tables();
  ASSERT_EQ(pfs_core_table_count(), static_cast<int>(tables.size()));
  for (int t = 0; t < pfs_core_table_count(); ++t) {
    const auto& def = tables[static_cast<std::size_t>(t)];
    EXPECT_STREQ(pfs_core_table_name(t), def.name);
    EXPECT_EQ(pfs_core_table_find(def.name), t);
    // The reader's columns, then process_id and program (status: and region_file).
    const int extras = def.id == static_cast<std::uint32_t>(table_id::status) ? 3 : 2;
    ASSERT_EQ(pfs_core_extra_column_count(t), extras);
    ASSERT_EQ(pfs_core_column_count(t), static_cast<int>(def.columns.size()) + extras);
    const int first_extra = static_cast<int>(def.columns.size());
    EXPECT_STREQ(pfs_core_column_name(t, first_extra), "process_id");
    EXPECT_EQ(pfs_core_column_type(t, first_extra), PFS_CORE_INT64);
    EXPECT_STREQ(pfs_core_column_name(t, first_extra + 1), "program");
    EXPECT_EQ(pfs_core_column_type(t, first_extra + 1), PFS_CORE_TEXT);
    EXPECT_EQ(pfs_core_column_find(t, "program"), first_extra + 1);
    EXPECT_TRUE(pfs_core_qual_supported(t, first_extra, PFS_QUAL_IN));
    EXPECT_TRUE(pfs_core_qual_supported(t, first_extra + 1, PFS_QUAL_PREFIX));
    EXPECT_EQ(pfs_core_column_name(t, first_extra + extras), nullptr);
    const PfsCoreColumnType* types = pfs_core_column_types(t);
    ASSERT_NE(types, nullptr);
    for (int c = 0; c < pfs_core_column_count(t); ++c) EXPECT_EQ(types[c], pfs_core_column_type(t, c));
    for (int c = 0; c < first_extra; ++c) {
      const auto& col = def.columns[static_cast<std::size_t>(c)];
      EXPECT_STREQ(pfs_core_column_name(t, c), col.name);
      const PfsCoreColumnType expected = col.type == pfs::reader::column_type::text      ? PFS_CORE_TEXT
                                         : col.type == pfs::reader::column_type::float64 ? PFS_CORE_FLOAT8
                                         : col.type == pfs::reader::column_type::timestamp
                                             ? PFS_CORE_TIMESTAMPTZ
                                         : col.type == pfs::reader::column_type::numeric ? PFS_CORE_NUMERIC
                                                                                         : PFS_CORE_INT64;
      EXPECT_EQ(pfs_core_column_type(t, c), expected);
      EXPECT_EQ(pfs_core_column_nullable(t, c), col.nullable);
      EXPECT_EQ(pfs_core_column_find(t, col.name), c);
    }
  }
  EXPECT_EQ(pfs_core_column_types(-1), nullptr);
  EXPECT_EQ(pfs_core_column_types(pfs_core_table_count()), nullptr);
  EXPECT_EQ(pfs_core_table_find("THREADS"), -1);
  EXPECT_EQ(pfs_core_table_find(nullptr), -1);
  EXPECT_EQ(pfs_core_table_name(-1), nullptr);
  EXPECT_EQ(pfs_core_table_name(pfs_core_table_count()), nullptr);
  EXPECT_EQ(pfs_core_column_count(999), 0);
  EXPECT_EQ(pfs_core_column_name(0, 99), nullptr);
  EXPECT_EQ(pfs_core_column_find(table_index(table_id::threads), "nickname"), -1);
}

TEST_F(FdwCoreTest, RegionIsMappedOnceAndAgainWhenTheFileChanges) {
  ASSERT_NO_FATAL_FAILURE(fixture());
  PfsCoreRegion* a = region(7);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(region(7), a);  // cached
  EXPECT_EQ(pfs_core_region_cached(), 1);
  // The thread ids handed out (3), not the capacity (4).
  EXPECT_EQ(pfs_core_estimated_rows(a, table_index(table_id::threads)), 3);
  PfsCoreRegion* other = region(8);  // another server, same file: its own mapping
  EXPECT_NE(other, a);
  EXPECT_EQ(pfs_core_region_cached(), 2);

  ASSERT_NO_FATAL_FAILURE(fixture("--kind=bad-magic"));  // a new file at the path
  // Checked once per transaction: this one keeps the file it mapped...
  EXPECT_EQ(region(7), a);
  pfs_core_transaction_end();  // ...the next one sees the new file
  EXPECT_EQ(pfs_core_region_get(7, path_.c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);
  EXPECT_STREQ(err_.message, "file is not a perfschema region");
  EXPECT_NE(err_.detail[0], '\0');
  EXPECT_NE(err_.hint[0], '\0');

  ASSERT_NO_FATAL_FAILURE(fixture());
  ASSERT_NE(region(7), nullptr);
  ASSERT_EQ(truncate(path_.c_str(), 8192), 0);  // same file, shorter
  pfs_core_transaction_end();
  EXPECT_EQ(pfs_core_region_get(7, path_.c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);

  pfs_core_region_forget_all();
  EXPECT_EQ(pfs_core_region_cached(), 0);
}

// A one-file server's file is checked at a transaction's first use at most once a
// millisecond of the transactions' clock, the start time PostgreSQL gives
// (pfs_core_transaction_clock); a clock set back counts as the interval passed.
TEST_F(FdwCoreTest, FileIsCheckedAgainOnceTheTransactionClockMovesOn) {
  ASSERT_NO_FATAL_FAILURE(fixture());
  const std::int64_t t0 = 1'700'000'000'000'000;  // microseconds since the Unix epoch
  pfs_core_transaction_clock(t0);
  PfsCoreRegion* a = region(7);
  ASSERT_NE(a, nullptr);
  pfs_core_transaction_end();
  ASSERT_NO_FATAL_FAILURE(fixture("--kind=bad-magic"));  // a new file at the path
  pfs_core_transaction_clock(t0 + 500);                  // half a millisecond later: the check stands
  EXPECT_EQ(region(7), a);
  pfs_core_transaction_end();
  pfs_core_transaction_clock(t0 - 1'000'000);  // the clock set back a second: checked
  EXPECT_EQ(pfs_core_region_get(7, path_.c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);
  pfs_core_transaction_end();

  ASSERT_NO_FATAL_FAILURE(fixture());
  pfs_core_transaction_clock(t0);
  PfsCoreRegion* b = region(7);
  ASSERT_NE(b, nullptr);
  pfs_core_transaction_end();
  ASSERT_NO_FATAL_FAILURE(fixture("--kind=bad-magic"));
  pfs_core_transaction_clock(t0 + 999);
  EXPECT_EQ(region(7), b);
  pfs_core_transaction_end();
  pfs_core_transaction_clock(t0 + 1'000);  // a millisecond after the check: checked
  EXPECT_EQ(pfs_core_region_get(7, path_.c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);
  pfs_core_transaction_end();
  pfs_core_region_forget_all();
}

TEST_F(FdwCoreTest, OpenErrorsHaveKinds) {
  EXPECT_EQ(pfs_core_region_get(1, path_.c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_FILE_NOT_FOUND);
  EXPECT_NE(std::strstr(err_.message, "could not open region file"), nullptr);
  EXPECT_EQ(pfs_core_region_get(1, nullptr, &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_INTERNAL);

  const struct {
    const char* kind;
    PfsCoreErrorKind expected;
  } cases[] = {{"bad-magic", PFS_CORE_CORRUPTED},      {"bad-version", PFS_CORE_BAD_VERSION},
               {"too-small", PFS_CORE_CORRUPTED},      {"truncated", PFS_CORE_CORRUPTED},
               {"array-past-end", PFS_CORE_CORRUPTED}, {"inconsistent", PFS_CORE_CORRUPTED}};
  for (const auto& c : cases) {
    ASSERT_NO_FATAL_FAILURE(fixture(std::string("--kind=") + c.kind));
    EXPECT_EQ(pfs_core_region_get(1, path_.c_str(), &err_), nullptr) << c.kind;
    EXPECT_EQ(err_.kind, c.expected) << c.kind << ": " << err_.message;
  }
}

TEST_F(FdwCoreTest, LongMessagesAreCutAtACharacterBoundary) {
  std::string long_path = dir_ + "/";
  while (long_path.size() < 700) long_path += "\xc3\xa9";  // 'é'
  EXPECT_EQ(pfs_core_region_get(1, long_path.c_str(), &err_), nullptr);
  const std::size_t n = std::strlen(err_.message);
  EXPECT_LT(n, sizeof(err_.message));
  EXPECT_GT(n, 400u);
  // The message ends with a whole character: an ASCII byte or a complete 'é'.
  const auto last = static_cast<unsigned char>(err_.message[n - 1]);
  if (last >= 0x80) {
    EXPECT_EQ(last, 0xA9);
    EXPECT_EQ(static_cast<unsigned char>(err_.message[n - 2]), 0xC3);
  }
}

TEST_F(FdwCoreTest, ScanCopiesTheWantedColumnsOnly) {
  ASSERT_NO_FATAL_FAILURE(fixture());
  const int t = table_index(table_id::threads);
  const int name = pfs_core_column_find(t, "name");
  const int parent = pfs_core_column_find(t, "parent_thread_id");
  const PfsCoreRowset* rs = scan(table_id::threads, {parent, name});
  ASSERT_NE(rs, nullptr);
  ASSERT_EQ(rs->nrows, 3u);
  ASSERT_EQ(rs->ncells, 2);
  EXPECT_EQ(rs->columns[0], name);  // ascending column order
  EXPECT_EQ(rs->columns[1], parent);
  EXPECT_EQ(text(*rs, rs->cells[0]), "thread/app/main");
  EXPECT_TRUE(rs->cells[1].isnull);
  EXPECT_EQ(text(*rs, rs->cells[2]), "thread/app/worker");
  EXPECT_EQ(rs->cells[3].value, 1);

  // No column at all (count(*)): rows without cells.
  const PfsCoreRowset* all = scan(table_id::events_waits_history_long);
  ASSERT_NE(all, nullptr);
  EXPECT_GT(all->nrows, 0u);
  const PfsCoreRowset* counted = scan(table_id::events_waits_history_long, {-1});
  ASSERT_NE(counted, nullptr) << err_.message;
  EXPECT_EQ(counted->ncells, 0);
  EXPECT_EQ(counted->nrows, all->nrows);
}

TEST_F(FdwCoreTest, ScanMatchesTheReader) {
  ASSERT_NO_FATAL_FAILURE(fixture());
  pfs::region_error e;
  auto reader = pfs::reader::region_reader::open(path_, false, e);
  ASSERT_NE(reader, nullptr) << e.message;
  for (table_id id : {table_id::setup_instruments, table_id::threads, table_id::events_waits_history,
                      table_id::events_waits_history_long, table_id::events_waits_summary_by_instance,
                      table_id::mutex_instances, table_id::setup_actors}) {
    std::vector<pfs::reader::row> rows;
    ASSERT_FALSE(reader->scan(pfs::reader::table(id), rows));
    const PfsCoreRowset* rs = scan(id);
    ASSERT_NE(rs, nullptr);
    ASSERT_EQ(rs->nrows, rows.size()) << pfs::reader::table(id).name;
    ASSERT_EQ(rs->ncells, pfs_core_column_count(table_index(id)));
    const int nreader = static_cast<int>(pfs::reader::table(id).columns.size());
    for (std::size_t r = 0; r < rows.size(); ++r) {
      // The appended columns: the fixture process's pid and name.
      const PfsCoreCell* row = &rs->cells[r * static_cast<std::size_t>(rs->ncells)];
      ASSERT_FALSE(row[nreader].isnull);
      EXPECT_EQ(row[nreader].value, static_cast<std::int64_t>(reader->region().header().pid));
      ASSERT_FALSE(row[nreader + 1].isnull);
      EXPECT_EQ(text(*rs, row[nreader + 1]), "pfs_fixture");
      for (int c = 0; c < nreader; ++c) {
        const PfsCoreCell& cell =
            rs->cells[r * static_cast<std::size_t>(rs->ncells) + static_cast<std::size_t>(c)];
        const pfs::reader::cell& want = rows[r][static_cast<std::size_t>(c)];
        ASSERT_EQ(cell.isnull, want.null);
        if (want.null) continue;
        if (pfs_core_column_type(table_index(id), c) == PFS_CORE_TEXT)
          EXPECT_EQ(text(*rs, cell), want.s);
        else
          EXPECT_EQ(cell.value, want.i);
      }
    }
  }
}

// The wait tables' rows are packed straight from the records (no row of cell_views)
// when every pushed condition is on the head (thread_id, event_id, event_name), and
// go through the generic row otherwise: either way, any set of columns in any
// scan holds exactly the reader's rows that pass, cell for cell.
TEST_F(FdwCoreTest, WaitRowsMatchTheReaderForAnyColumnsAndConditions) {
  ASSERT_NO_FATAL_FAILURE(fixture("--history-long-rows=3000"));
  pfs::region_error e;
  auto reader = pfs::reader::region_reader::open(path_, false, e);
  ASSERT_NE(reader, nullptr) << e.message;
  const std::int64_t two = 2, hundred = 100, in_list[] = {1, 3};
  const char* prefix[] = {"wait/synch/"};
  const std::uint32_t prefix_len[] = {11};
  struct condition {
    const char* what;
    std::vector<PfsCoreQual> quals;
    bool (*keep)(const pfs::reader::row&);
  };
  const condition conditions[] = {
      {"none", {}, [](const pfs::reader::row&) { return true; }},
      {"thread_id = 2",
       {{0, PFS_QUAL_EQ, false, 1, &two, nullptr, nullptr}},
       [](const pfs::reader::row& r) { return r[0].i == 2; }},
      {"thread_id IN (1, 3) AND event_id >= 100",
       {{0, PFS_QUAL_IN, false, 2, in_list, nullptr, nullptr},
        {1, PFS_QUAL_GE, false, 1, &hundred, nullptr, nullptr}},
       [](const pfs::reader::row& r) { return (r[0].i == 1 || r[0].i == 3) && r[1].i >= 100; }},
      {"event_name LIKE 'wait/synch/%'",
       {{3, PFS_QUAL_PREFIX, true, 1, nullptr, prefix, prefix_len}},
       [](const pfs::reader::row& r) { return r[3].s.rfind("wait/synch/", 0) == 0; }},
      {"event_name IS NULL",
       {{3, PFS_QUAL_IS_NULL, false, 0, nullptr, nullptr, nullptr}},
       [](const pfs::reader::row&) { return false; }},
      // not on the head: the generic path
      {"object_name IS NULL AND thread_id = 2",
       {{10, PFS_QUAL_IS_NULL, false, 0, nullptr, nullptr, nullptr},
        {0, PFS_QUAL_EQ, false, 1, &two, nullptr, nullptr}},
       [](const pfs::reader::row& r) { return r[10].null && r[0].i == 2; }},
      {"timer_wait > 100",
       {{7, PFS_QUAL_GT, false, 1, &hundred, nullptr, nullptr}},
       [](const pfs::reader::row& r) { return !r[7].null && r[7].i > 100; }},
  };
  std::mt19937 rng(1126);
  for (table_id id : {table_id::events_waits_history, table_id::events_waits_history_long}) {
    std::vector<pfs::reader::row> rows;
    ASSERT_FALSE(reader->scan(pfs::reader::table(id), rows));
    const int t = table_index(id);
    const int ncolumns = pfs_core_column_count(t);
    const int nreader = static_cast<int>(pfs::reader::table(id).columns.size());
    for (int round = 0; round < 60; ++round) {
      std::vector<int> columns;
      for (int c = 0; c < ncolumns; ++c)
        if (rng() % 3 == 0) columns.push_back(c);
      if (columns.empty()) columns.push_back(-1);  // no column at all
      for (const condition& cond : conditions) {
        std::vector<const pfs::reader::row*> expected;
        for (const pfs::reader::row& r : rows)
          if (cond.keep(r)) expected.push_back(&r);
        const PfsCoreRowset* rs = scan(id, columns, cond.quals);
        ASSERT_NE(rs, nullptr);
        ASSERT_EQ(rs->nrows, expected.size()) << pfs::reader::table(id).name << " " << cond.what;
        for (std::size_t r = 0; r < rs->nrows; ++r) {
          for (int k = 0; k < rs->ncells; ++k) {
            const int c = rs->columns[k];
            const PfsCoreCell& cell =
                rs->cells[r * static_cast<std::size_t>(rs->ncells) + static_cast<std::size_t>(k)];
            if (c >= nreader) {  // the region's columns: pid, program, file
              EXPECT_FALSE(cell.isnull);
              continue;
            }
            const pfs::reader::cell& want = (*expected[r])[static_cast<std::size_t>(c)];
            ASSERT_EQ(cell.isnull, want.null) << cond.what << " row " << r << " column " << c;
            if (want.null) continue;
            if (pfs_core_column_type(t, c) == PFS_CORE_TEXT)
              ASSERT_EQ(text(*rs, cell), want.s) << cond.what << " row " << r << " column " << c;
            else
              ASSERT_EQ(cell.value, want.i) << cond.what << " row " << r << " column " << c;
          }
        }
      }
    }
  }
}

TEST_F(FdwCoreTest, InvalidRowsFailTheScan) {
  ASSERT_NO_FATAL_FAILURE(fixture("--kind=garbage"));
  PfsCoreRegion* r = region();
  ASSERT_NE(r, nullptr);
  PfsCoreScan* s = pfs_core_scan_begin(r, table_index(table_id::events_waits_history_long), nullptr, nullptr,
                                       0, 4, SIZE_MAX, &err_);
  ASSERT_NE(s, nullptr) << err_.message;
  EXPECT_EQ(pfs_core_scan_next(s, nullptr, &err_), nullptr);
  pfs_core_scan_end(s);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);
  EXPECT_NE(std::strstr(err_.message, "contains invalid records"), nullptr);
  EXPECT_NE(std::strstr(err_.detail, "events_waits_history_long"), nullptr);
  // tables without invalid rows still scan
  const PfsCoreRowset* ok = scan(table_id::threads);
  ASSERT_NE(ok, nullptr) << err_.message;
  EXPECT_EQ(ok->nrows, 3u);
}

TEST_F(FdwCoreTest, ScanStopsWhenInterruptedAndReadsThePieceAgain) {
  ASSERT_NO_FATAL_FAILURE(fixture("--history-long-rows=10000"));
  PfsCoreScan* s = pfs_core_scan_begin(region(), table_index(table_id::events_waits_history_long), nullptr,
                                       nullptr, 0, 4, SIZE_MAX, &err_);
  ASSERT_NE(s, nullptr) << err_.message;
  volatile sig_atomic_t flag = 1;
  EXPECT_EQ(pfs_core_scan_next(s, &flag, &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_INTERRUPTED);
  flag = 0;
  const PfsCoreRowset* rs = pfs_core_scan_next(s, &flag, &err_);
  ASSERT_NE(rs, nullptr) << err_.message;
  EXPECT_EQ(rs->nrows, 10000u);
  EXPECT_TRUE(rs->last);
  pfs_core_scan_end(s);
}

// The event ids of every row of a scan of history_long (event_id only), piece by piece.
std::vector<std::int64_t> event_ids(PfsCoreScan* s, PfsCoreError* err, int* pieces) {
  std::vector<std::int64_t> ids;
  *pieces = 0;
  for (;;) {
    const PfsCoreRowset* rs = pfs_core_scan_next(s, nullptr, err);
    if (rs == nullptr) {
      ADD_FAILURE() << err->message;
      break;
    }
    ++*pieces;
    for (std::size_t r = 0; r < rs->nrows; ++r) ids.push_back(rs->cells[r * rs->ncells].value);
    if (rs->last) break;
  }
  return ids;
}

TEST_F(FdwCoreTest, LargeTablesComeInPiecesThatResumeWhereTheyPaused) {
  ASSERT_NO_FATAL_FAILURE(fixture("--history-long-rows=10000"));
  const int t = table_index(table_id::events_waits_history_long);
  bool wanted[64] = {};
  wanted[pfs_core_column_find(t, "event_id")] = true;
  PfsCoreScan* whole = pfs_core_scan_begin(region(), t, wanted, nullptr, 0, 4, SIZE_MAX, &err_);
  PfsCoreScan* pieces = pfs_core_scan_begin(region(), t, wanted, nullptr, 0, 4, 16 * 1024, &err_);
  ASSERT_NE(whole, nullptr);
  ASSERT_NE(pieces, nullptr);
  int n_whole = 0, n_pieces = 0;
  const std::vector<std::int64_t> expected = event_ids(whole, &err_, &n_whole);
  const std::vector<std::int64_t> got = event_ids(pieces, &err_, &n_pieces);
  EXPECT_EQ(expected.size(), 10000u);
  EXPECT_EQ(n_whole, 1);
  EXPECT_GE(n_pieces, 10);  // 10000 cells of 16 bytes in pieces of 16 KiB
  EXPECT_EQ(got, expected);
  // Rewound: the one-piece scan gives its piece again, the other reads again.
  pfs_core_scan_rewind(whole);
  pfs_core_scan_rewind(pieces);
  EXPECT_EQ(event_ids(whole, &err_, &n_whole), expected);
  EXPECT_EQ(event_ids(pieces, &err_, &n_pieces), expected);
  pfs_core_scan_end(whole);
  pfs_core_scan_end(pieces);
}

// The resident size (Rss in /proc/self/smaps, KiB) of this process's mappings of a
// file.
std::uint64_t resident_kib(const std::string& path) {
  std::ifstream smaps("/proc/self/smaps");
  std::uint64_t total = 0;
  bool in_file = false;
  for (std::string line; std::getline(smaps, line);) {
    if (line.find('-') < line.find(' ') && line.find(':') != 5)  // a mapping's first line
      in_file = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
    else if (in_file && line.starts_with("Rss:"))
      total += std::strtoull(line.c_str() + 4, nullptr, 10);
  }
  return total;
}

// Scans a table of a region in pieces of 1 MiB; the rows, and the largest resident
// size of the region files seen after a piece.
std::size_t scan_watching_pages(PfsCoreRegion* region, int table, const std::vector<PfsCoreQual>& quals,
                                const std::vector<std::string>& files, std::uint64_t* peak_kib,
                                PfsCoreError* err) {
  PfsCoreScan* s = pfs_core_scan_begin(region, table, nullptr, quals.data(), static_cast<int>(quals.size()),
                                       4, 1 << 20, err);
  EXPECT_NE(s, nullptr) << err->message;
  std::size_t rows = 0;
  for (const PfsCoreRowset* rs = nullptr; s != nullptr && (rs == nullptr || !rs->last);) {
    rs = pfs_core_scan_next(s, nullptr, err);
    if (rs == nullptr) {
      ADD_FAILURE() << err->message;
      break;
    }
    rows += rs->nrows;
    std::uint64_t kib = 0;
    for (const std::string& f : files) kib += resident_kib(f);
    *peak_kib = std::max(*peak_kib, kib);
  }
  if (s != nullptr) pfs_core_scan_end(s);
  return rows;
}

// A scan of a large history keeps a bounded part of the region resident (at most
// 40 MiB of records past the last release, plus the 8 MiB window of the piece that
// crossed it), whether it returns the rows or a condition drops them all, and the
// pages of one region are released when another is scanned. The last pages scanned
// stay mapped for the next scan.
TEST_F(FdwCoreTest, LargeScansKeepABoundedPartOfTheRegionResident) {
  pfs_core_set_resident_budget(std::uint64_t{40} << 20);
  struct budget_reset {
    ~budget_reset() { pfs_core_set_resident_budget(std::uint64_t{256} << 20); }
  } reset;
  ASSERT_NO_FATAL_FAILURE(fixture("--history-long-rows=600000"));  // 77 MB of records
  const std::string second = dir_ + "/second";
  const std::string cmd =
      std::string(PFS_BUILD_DIR) + "/tools/pfs_fixture --history-long-rows=600000 '" + second + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const int t = table_index(table_id::events_waits_history_long);
  const std::int64_t no_thread = 987654321;
  const PfsCoreQual none_pass{
      pfs_core_column_find(t, "thread_id"), PFS_QUAL_EQ, false, 1, &no_thread, nullptr, nullptr};
  const std::uint64_t bound_kib = (48u << 10) + 64;  // and a few pages of rounding
  const std::vector<std::string> files{path_, second};
  for (const std::vector<PfsCoreQual>& quals :
       {std::vector<PfsCoreQual>{}, std::vector<PfsCoreQual>{none_pass}}) {
    std::uint64_t peak = 0;
    EXPECT_EQ(scan_watching_pages(region(), t, quals, files, &peak, &err_), quals.empty() ? 600000u : 0u);
    EXPECT_LE(peak, bound_kib) << quals.size() << " conditions";
    EXPECT_GT(resident_kib(path_), 0u);  // the last pages
  }
  PfsCoreRegion* other = pfs_core_region_get(2, second.c_str(), &err_);
  ASSERT_NE(other, nullptr) << err_.message;
  std::uint64_t peak = 0;
  EXPECT_EQ(scan_watching_pages(other, t, {none_pass}, files, &peak, &err_), 0u);
  EXPECT_LE(peak, bound_kib);
  EXPECT_EQ(resident_kib(path_), 0u);
  EXPECT_GT(resident_kib(second), 0u);
}

// Pushed conditions give exactly the rows that a test of the same condition on
// every row keeps.
TEST_F(FdwCoreTest, PushedConditionsKeepExactlyTheMatchingRows) {
  ASSERT_NO_FATAL_FAILURE(fixture("--history-long-rows=2000"));
  const table_id id = table_id::events_waits_history_long;
  const int t = table_index(id);
  const int thread = pfs_core_column_find(t, "thread_id");
  const int event = pfs_core_column_find(t, "event_id");
  const int name = pfs_core_column_find(t, "event_name");
  const int object = pfs_core_column_find(t, "object_name");
  const int bytes = pfs_core_column_find(t, "number_of_bytes");
  const std::vector<int> columns = {thread, event, name, object, bytes};
  const PfsCoreRowset* all = scan(id, columns);
  ASSERT_NE(all, nullptr);
  struct row {
    std::int64_t thread, event;
    std::string name;
    bool object_null, bytes_null;
  };
  std::vector<row> rows;
  for (std::size_t r = 0; r < all->nrows; ++r) {
    const PfsCoreCell* c = all->cells + r * all->ncells;
    rows.push_back({c[0].value, c[1].value, text(*all, c[2]), c[3].isnull, c[4].isnull});
  }
  const std::int64_t two = 2, hundred = 100, in_list[] = {3, 1, 3};
  const char* names[] = {"wait/synch/mutex/app/cache_lock", "wait/io/file/app/log", "no/such/class"};
  const std::uint32_t name_lens[] = {31, 20, 13};
  const char* prefix[] = {"wait/synch/"};
  const std::uint32_t prefix_len[] = {11};
  struct check {
    const char* what;
    PfsCoreQual qual;
    bool (*keep)(const row&);
  };
  const check checks[] = {
      {"thread_id = 2",
       {thread, PFS_QUAL_EQ, false, 1, &two, nullptr, nullptr},
       [](const row& r) { return r.thread == 2; }},
      {"event_id < 100",
       {event, PFS_QUAL_LT, false, 1, &hundred, nullptr, nullptr},
       [](const row& r) { return r.event < 100; }},
      {"event_id <= 100",
       {event, PFS_QUAL_LE, false, 1, &hundred, nullptr, nullptr},
       [](const row& r) { return r.event <= 100; }},
      {"event_id > 100",
       {event, PFS_QUAL_GT, false, 1, &hundred, nullptr, nullptr},
       [](const row& r) { return r.event > 100; }},
      {"event_id >= 100",
       {event, PFS_QUAL_GE, false, 1, &hundred, nullptr, nullptr},
       [](const row& r) { return r.event >= 100; }},
      {"thread_id IN (3, 1, 3)",
       {thread, PFS_QUAL_IN, false, 3, in_list, nullptr, nullptr},
       [](const row& r) { return r.thread == 1 || r.thread == 3; }},
      {"event_name IN (...)",
       {name, PFS_QUAL_IN, true, 3, nullptr, names, name_lens},
       [](const row& r) {
         return r.name == "wait/synch/mutex/app/cache_lock" || r.name == "wait/io/file/app/log";
       }},
      {"event_name = cache_lock",
       {name, PFS_QUAL_EQ, true, 1, nullptr, names, name_lens},
       [](const row& r) { return r.name == "wait/synch/mutex/app/cache_lock"; }},
      {"event_name LIKE 'wait/synch/%'",
       {name, PFS_QUAL_PREFIX, true, 1, nullptr, prefix, prefix_len},
       [](const row& r) { return r.name.rfind("wait/synch/", 0) == 0; }},
      {"object_name IS NULL",
       {object, PFS_QUAL_IS_NULL, false, 0, nullptr, nullptr, nullptr},
       [](const row& r) { return r.object_null; }},
      {"number_of_bytes IS NOT NULL",
       {bytes, PFS_QUAL_IS_NOT_NULL, false, 0, nullptr, nullptr, nullptr},
       [](const row& r) { return !r.bytes_null; }},
      {"IN of nothing",
       {thread, PFS_QUAL_IN, false, 0, nullptr, nullptr, nullptr},
       [](const row&) { return false; }},
  };
  for (const check& c : checks) {
    std::size_t expected = 0;
    for (const row& r : rows) expected += c.keep(r) ? 1 : 0;
    const PfsCoreRowset* got = scan(id, columns, {c.qual});
    ASSERT_NE(got, nullptr) << c.what;
    EXPECT_EQ(got->nrows, expected) << c.what;
    for (std::size_t r = 0; r < got->nrows; ++r) {
      const PfsCoreCell* cells = got->cells + r * got->ncells;
      const row x{cells[0].value, cells[1].value, text(*got, cells[2]), cells[3].isnull, cells[4].isnull};
      ASSERT_TRUE(c.keep(x)) << c.what << ": row with event_id " << x.event;
    }
  }
  // Two conditions: both hold. A condition on a column that is not returned still applies.
  const PfsCoreRowset* both = scan(id, {event}, {checks[0].qual, checks[8].qual});
  ASSERT_NE(both, nullptr);
  std::size_t expected = 0;
  for (const row& r : rows) expected += r.thread == 2 && r.name.rfind("wait/synch/", 0) == 0 ? 1 : 0;
  EXPECT_GT(expected, 0u);
  EXPECT_EQ(both->nrows, expected);
  EXPECT_EQ(both->ncells, 1);
}

TEST_F(FdwCoreTest, BadArguments) {
  ASSERT_NO_FATAL_FAILURE(fixture());
  EXPECT_EQ(pfs_core_scan_begin(nullptr, 0, nullptr, nullptr, 0, 4, 1, &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_INTERNAL);
  EXPECT_EQ(pfs_core_scan_begin(region(), 999, nullptr, nullptr, 0, 4, 1, &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_INTERNAL);
  // A condition the reader cannot test (LIKE on a bigint column, a column out of range).
  const PfsCoreQual like_int{0, PFS_QUAL_PREFIX, true, 0, nullptr, nullptr, nullptr};
  EXPECT_EQ(pfs_core_scan_begin(region(), table_index(table_id::threads), nullptr, &like_int, 1, 4, 1, &err_),
            nullptr);
  // Operands that do not fit the column or the op: text for a bigint, missing, two for =.
  const std::int64_t two[] = {1, 2};
  const char* texts[] = {"x"};
  const std::uint32_t lens[] = {1};
  for (const PfsCoreQual& bad : {PfsCoreQual{0, PFS_QUAL_EQ, true, 1, nullptr, texts, lens},
                                 PfsCoreQual{0, PFS_QUAL_EQ, false, 1, nullptr, nullptr, nullptr},
                                 PfsCoreQual{0, PFS_QUAL_EQ, false, 2, two, nullptr, nullptr}}) {
    EXPECT_EQ(pfs_core_scan_begin(region(), table_index(table_id::threads), nullptr, &bad, 1, 4, 1, &err_),
              nullptr);
    EXPECT_EQ(err_.kind, PFS_CORE_INTERNAL);
  }
  const PfsCoreQual out_of_range{999, PFS_QUAL_IS_NULL, false, 0, nullptr, nullptr, nullptr};
  EXPECT_EQ(
      pfs_core_scan_begin(region(), table_index(table_id::threads), nullptr, &out_of_range, 1, 4, 1, &err_),
      nullptr);
  EXPECT_EQ(pfs_core_scan_next(nullptr, nullptr, &err_), nullptr);
  EXPECT_EQ(pfs_core_estimated_rows(nullptr, 0), 0);
  pfs_core_scan_end(nullptr);
  pfs_core_scan_rewind(nullptr);
}

// A directory of regions read as one: every region's rows with its process, the
// damaged files skipped with a warning each (and a status row each), files that are
// not taken for regions ignored, conditions on process_id choosing whole regions.
TEST_F(FdwCoreTest, DirectoryReadsEveryRegion) {
  const std::string regions = dir_ + "/regions";
  ASSERT_EQ(mkdir(regions.c_str(), 0755), 0);
  int pid = 100;
  for (const char* name : {"a.pfs", "b.pfs", "c.pfs"}) {
    path_ = regions + "/" + name;
    ASSERT_NO_FATAL_FAILURE(fixture("--pid=" + std::to_string(++pid)));
  }
  path_ = regions + "/damaged.pfs";
  ASSERT_NO_FATAL_FAILURE(fixture("--kind=truncated"));
  path_ = regions + "/.hidden";
  ASSERT_NO_FATAL_FAILURE(fixture());
  path_ = regions + "/d.pfs.tmp";  // a forked child's copy before it is renamed
  ASSERT_NO_FATAL_FAILURE(fixture());
  ASSERT_EQ(mkdir((regions + "/subdir").c_str(), 0755), 0);

  PfsCoreRegion* r = pfs_core_region_directory_get(5, regions.c_str(), &err_);
  ASSERT_NE(r, nullptr) << err_.message;
  ASSERT_EQ(pfs_core_region_count(r), 4);
  EXPECT_EQ(pfs_core_region_cached(), 3);
  PfsCoreError damage{};
  EXPECT_FALSE(pfs_core_region_damage(r, 0, &damage));
  ASSERT_TRUE(pfs_core_region_damage(r, 3, &damage));  // damaged.pfs sorts last
  EXPECT_NE(std::strstr(damage.message, "damaged.pfs"), nullptr) << damage.message;
  EXPECT_EQ(pfs_core_estimated_rows(r, table_index(table_id::threads)) >= 9, true);

  const int threads = table_index(table_id::threads);
  const int pid_column = pfs_core_column_find(threads, "process_id");
  auto scan_all = [&](const std::vector<PfsCoreQual>& quals, int& warnings) -> std::vector<std::int64_t> {
    PfsCoreScan* s = pfs_core_scan_begin(r, threads, nullptr, quals.data(), static_cast<int>(quals.size()), 4,
                                         SIZE_MAX, &err_);
    EXPECT_NE(s, nullptr) << err_.message;
    std::vector<std::int64_t> pids;
    if (s == nullptr) return pids;
    const PfsCoreRowset* rs = pfs_core_scan_next(s, nullptr, &err_);
    EXPECT_NE(rs, nullptr) << err_.message;
    for (std::size_t k = 0; rs != nullptr && k < rs->nrows; ++k)
      pids.push_back(
          rs->cells[k * static_cast<std::size_t>(rs->ncells) + static_cast<std::size_t>(pid_column)].value);
    PfsCoreError w{};
    warnings = 0;
    while (pfs_core_scan_warning(s, &w)) ++warnings;
    pfs_core_scan_end(s);
    return pids;
  };
  int warnings = 0;
  std::vector<std::int64_t> pids = scan_all({}, warnings);
  EXPECT_EQ(warnings, 1);
  ASSERT_EQ(pids.size(), 9u);  // 3 threads in each of the 3 regions
  std::vector<std::int64_t> distinct = pids;
  std::sort(distinct.begin(), distinct.end());
  distinct.erase(std::unique(distinct.begin(), distinct.end()), distinct.end());
  ASSERT_EQ(distinct.size(), 3u);

  // process_id = one region's pid: that region's rows only.
  const std::int64_t one = distinct[1];
  const PfsCoreQual only{pid_column, PFS_QUAL_EQ, false, 1, &one, nullptr, nullptr};
  pids = scan_all({only}, warnings);
  EXPECT_EQ(pids, std::vector<std::int64_t>(3, one));

  // status: a region_damaged row for the damaged file, with its region_file.
  const int status = table_index(table_id::status);
  PfsCoreScan* s = pfs_core_scan_begin(r, status, nullptr, nullptr, 0, 4, SIZE_MAX, &err_);
  ASSERT_NE(s, nullptr) << err_.message;
  const PfsCoreRowset* rs = pfs_core_scan_next(s, nullptr, &err_);
  ASSERT_NE(rs, nullptr) << err_.message;
  const int file_column = pfs_core_column_find(status, "region_file");
  int damaged = 0, alive_rows = 0;
  for (std::size_t k = 0; k < rs->nrows; ++k) {
    const PfsCoreCell* row = &rs->cells[k * static_cast<std::size_t>(rs->ncells)];
    const std::string name = text(*rs, row[0]);
    if (name == "provider_alive") ++alive_rows;
    if (name != "region_damaged") continue;
    ++damaged;
    EXPECT_TRUE(row[pfs_core_column_find(status, "process_id")].isnull);
    EXPECT_EQ(text(*rs, row[file_column]), regions + "/damaged.pfs");
  }
  EXPECT_EQ(damaged, 1);
  EXPECT_EQ(alive_rows, 3);  // one per readable region
  pfs_core_scan_end(s);

  // A region removed: gone from the next look; a new one: there.
  ASSERT_EQ(unlink((regions + "/a.pfs").c_str()), 0);
  path_ = regions + "/e.pfs";
  ASSERT_NO_FATAL_FAILURE(fixture("--pid=200"));
  r = pfs_core_region_directory_get(5, regions.c_str(), &err_);
  ASSERT_NE(r, nullptr) << err_.message;
  EXPECT_EQ(pfs_core_region_count(r), 4);
  EXPECT_EQ(scan_all({}, warnings).size(), 9u);

  // A missing directory, a file given as a directory: errors.
  EXPECT_EQ(pfs_core_region_directory_get(6, (dir_ + "/none").c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_FILE_NOT_FOUND);
  EXPECT_EQ(pfs_core_region_directory_get(6, (regions + "/b.pfs").c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_WRONG_TYPE);
  EXPECT_FALSE(pfs_core_check_region_directory((regions + "/b.pfs").c_str(), &err_));
  EXPECT_TRUE(pfs_core_check_region_directory(regions.c_str(), &err_));
}

// A directory of more regions than the backend keeps mapped: every region's rows
// still, each file mapped when a scan reaches it and let go after, at most the
// limit kept between scans (plus the one a scan reads); a member let go and
// unchanged keeps its process for conditions; a file replaced after it was let go
// is read anew.
TEST_F(FdwCoreTest, DirectoryOfMoreRegionsThanTheMappingLimit) {
  const std::string regions = dir_ + "/many";
  ASSERT_EQ(mkdir(regions.c_str(), 0755), 0);
  constexpr int kRegions = 12, kLimit = 4;
  for (int i = 0; i < kRegions; ++i) {
    path_ = regions + "/r" + std::to_string(10 + i) + ".pfs";
    ASSERT_NO_FATAL_FAILURE(fixture("--pid=" + std::to_string(1000 + i)));
  }
  // The process's mappings of files of the directory, as the kernel has them.
  auto mapped_now = [&] {
    std::ifstream maps("/proc/self/maps");
    int n = 0;
    for (std::string line; std::getline(maps, line);) n += line.find(regions + "/") != std::string::npos;
    return n;
  };
  // The process's open files of the directory.
  auto open_now = [&] {
    int n = 0;
    for (const auto& fd : std::filesystem::directory_iterator("/proc/self/fd")) {
      std::error_code ec;
      n += std::filesystem::read_symlink(fd.path(), ec).string().starts_with(regions + "/");
    }
    return n;
  };
  pfs_core_set_max_mapped_regions(kLimit);
  struct limit_reset {
    ~limit_reset() { pfs_core_set_max_mapped_regions(1024); }
  } reset;

  const int threads = table_index(table_id::threads);
  const int pid_column = pfs_core_column_find(threads, "process_id");
  auto pids_of = [&](PfsCoreRegion* r, const std::vector<PfsCoreQual>& quals) {
    std::vector<std::int64_t> pids;
    // Small pieces: a scan pauses inside regions and between them.
    PfsCoreScan* s =
        pfs_core_scan_begin(r, threads, nullptr, quals.data(), static_cast<int>(quals.size()), 4, 256, &err_);
    EXPECT_NE(s, nullptr) << err_.message;
    if (s == nullptr) return pids;
    for (;;) {
      const PfsCoreRowset* rs = pfs_core_scan_next(s, nullptr, &err_);
      EXPECT_NE(rs, nullptr) << err_.message;
      if (rs == nullptr) break;
      for (std::size_t k = 0; k < rs->nrows; ++k)
        pids.push_back(
            rs->cells[k * static_cast<std::size_t>(rs->ncells) + static_cast<std::size_t>(pid_column)].value);
      EXPECT_LE(mapped_now(), kLimit + 1);  // and the one the scan reads
      if (rs->last) break;
    }
    PfsCoreError w{};
    int warnings = 0;
    while (pfs_core_scan_warning(s, &w)) ++warnings;
    EXPECT_EQ(warnings, 0) << w.message;
    pfs_core_scan_end(s);
    return pids;
  };
  std::vector<std::int64_t> expected;
  for (int i = 0; i < kRegions; ++i) expected.insert(expected.end(), 3, 1000 + i);  // 3 threads each

  for (int round = 0; round < 3; ++round) {  // the first maps every file to list it
    PfsCoreRegion* r = pfs_core_region_directory_get(7, regions.c_str(), &err_);
    ASSERT_NE(r, nullptr) << err_.message;
    ASSERT_EQ(pfs_core_region_count(r), kRegions);
    EXPECT_EQ(pfs_core_region_cached(), kLimit);
    EXPECT_EQ(mapped_now(), kLimit);
    EXPECT_EQ(open_now(), 0);  // exited processes' regions: mapped, their files closed
    EXPECT_NEAR(pfs_core_estimated_rows(r, threads), 3.0 * kRegions, 3.0 * kRegions / 2);
    std::vector<std::int64_t> pids = pids_of(r, {});
    std::sort(pids.begin(), pids.end());
    EXPECT_EQ(pids, expected) << "round " << round;
    EXPECT_EQ(mapped_now(), kLimit);
    // A condition on the process of a region whose mapping was let go.
    const std::int64_t first = 1000;
    const PfsCoreQual one{pid_column, PFS_QUAL_EQ, false, 1, &first, nullptr, nullptr};
    EXPECT_EQ(pids_of(r, {one}), std::vector<std::int64_t>(3, first));
    pfs_core_transaction_end();
  }

  // The first file, let go, replaced by another program's region: its rows now.
  path_ = regions + "/r10.pfs";
  ASSERT_EQ(unlink(path_.c_str()), 0);
  ASSERT_NO_FATAL_FAILURE(fixture("--pid=2000"));
  PfsCoreRegion* r = pfs_core_region_directory_get(7, regions.c_str(), &err_);
  ASSERT_NE(r, nullptr) << err_.message;
  std::vector<std::int64_t> pids = pids_of(r, {});
  std::sort(pids.begin(), pids.end());
  expected.erase(expected.begin(), expected.begin() + 3);
  expected.insert(expected.end(), 3, 2000);
  EXPECT_EQ(pids, expected);
  pfs_core_transaction_end();
}

// A directory listed once is not listed again while its modification time stays
// what it was (and was old enough when listed): a file added, replaced or removed
// changes it, and the next look sees the change.
TEST_F(FdwCoreTest, DirectoryListingIsKeptWhileTheDirectoryIsUnchanged) {
  const std::string regions = dir_ + "/kept";
  ASSERT_EQ(mkdir(regions.c_str(), 0755), 0);
  for (int i = 0; i < 3; ++i) {
    path_ = regions + "/r" + std::to_string(i) + ".pfs";
    ASSERT_NO_FATAL_FAILURE(fixture("--pid=" + std::to_string(300 + i)));
  }
  auto set_directory_time = [&](std::time_t seconds_ago) {
    timespec times[2];
    ASSERT_EQ(clock_gettime(CLOCK_REALTIME, &times[0]), 0);
    times[0].tv_sec -= seconds_ago;
    times[1] = times[0];
    ASSERT_EQ(utimensat(AT_FDCWD, regions.c_str(), times, 0), 0);
  };
  auto members = [&] {
    PfsCoreRegion* r = pfs_core_region_directory_get(9, regions.c_str(), &err_);
    EXPECT_NE(r, nullptr) << err_.message;
    const int n = pfs_core_region_count(r);
    pfs_core_transaction_end();
    return n;
  };
  ASSERT_NO_FATAL_FAILURE(set_directory_time(60));
  EXPECT_EQ(members(), 3);
  // Kept: a file that appears while the directory's time is put back as it was is
  // not seen (what a change inside the same clock tick would look like)...
  struct stat before {};
  ASSERT_EQ(stat(regions.c_str(), &before), 0);
  path_ = regions + "/r3.pfs";
  ASSERT_NO_FATAL_FAILURE(fixture("--pid=303"));
  const timespec back[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, regions.c_str(), back, 0), 0);
  EXPECT_EQ(members(), 3);
  // ... and is once the directory changes.
  ASSERT_NO_FATAL_FAILURE(set_directory_time(30));
  EXPECT_EQ(members(), 4);
  // A listing taken while the directory had just changed is not kept.
  ASSERT_EQ(unlink((regions + "/r0.pfs").c_str()), 0);
  EXPECT_EQ(members(), 3);
  ASSERT_EQ(stat(regions.c_str(), &before), 0);
  path_ = regions + "/r4.pfs";
  ASSERT_NO_FATAL_FAILURE(fixture("--pid=304"));
  const timespec same[2] = {before.st_atim, before.st_mtim};
  ASSERT_EQ(utimensat(AT_FDCWD, regions.c_str(), same, 0), 0);
  EXPECT_EQ(members(), 4);
}

}  // namespace
