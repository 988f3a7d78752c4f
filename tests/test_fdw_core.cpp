// The perfschema_fdw core (fdw/core_*.cpp) through its C ABI, without PostgreSQL:
// the catalogue, the region cache (re-mapping when the file changes), scans into
// compact row sets, and the errors the shim turns into ereports. Regions come from
// the fixture tool (build/tools/pfs_fixture).
//
// The core's sources are compiled into this test (the CMake build has no target
// for them: the extension is built with PGXS).
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
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

  // A scan of the given columns (empty: all); the row set is owned by the test.
  PfsCoreRowset* scan(table_id t, const std::vector<int>& columns = {}) {
    bool wanted[64] = {};
    for (int c = 0; c < pfs_core_column_count(table_index(t)); ++c) wanted[c] = columns.empty();
    for (int c : columns) wanted[c] = true;
    PfsCoreRowset* rs = pfs_core_scan(region(), table_index(t), wanted, 4, nullptr, &err_);
    EXPECT_NE(rs, nullptr) << err_.message;
    if (rs != nullptr) owned_.emplace_back(rs);
    return rs;
  }

  std::string text(const PfsCoreRowset& rs, const PfsCoreCell& c) {
    EXPECT_FALSE(c.isnull);
    EXPECT_EQ(c.value % 8, 0);
    return std::string(rs.text + c.value + 4, c.len);
  }

  struct rowset_deleter {
    void operator()(PfsCoreRowset* rs) const { pfs_core_rowset_free(rs); }
  };
  std::vector<std::unique_ptr<PfsCoreRowset, rowset_deleter>> owned_;
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
    ASSERT_EQ(pfs_core_column_count(t), static_cast<int>(def.columns.size()));
    for (int c = 0; c < pfs_core_column_count(t); ++c) {
      const auto& col = def.columns[static_cast<std::size_t>(c)];
      EXPECT_STREQ(pfs_core_column_name(t, c), col.name);
      const PfsCoreColumnType expected = col.type == pfs::reader::column_type::text      ? PFS_CORE_TEXT
                                         : col.type == pfs::reader::column_type::float64 ? PFS_CORE_FLOAT8
                                         : col.type == pfs::reader::column_type::timestamp
                                             ? PFS_CORE_TIMESTAMPTZ
                                             : PFS_CORE_INT64;
      EXPECT_EQ(pfs_core_column_type(t, c), expected);
      EXPECT_EQ(pfs_core_column_nullable(t, c), col.nullable);
      EXPECT_EQ(pfs_core_column_find(t, col.name), c);
    }
  }
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
  EXPECT_EQ(pfs_core_estimated_rows(a, table_index(table_id::threads)), 4);
  PfsCoreRegion* other = region(8);  // another server, same file: its own mapping
  EXPECT_NE(other, a);
  EXPECT_EQ(pfs_core_region_cached(), 2);

  ASSERT_NO_FATAL_FAILURE(fixture("--kind=bad-magic"));  // a new file at the path
  EXPECT_EQ(pfs_core_region_get(7, path_.c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);
  EXPECT_STREQ(err_.message, "file is not a perfschema region");
  EXPECT_NE(err_.detail[0], '\0');
  EXPECT_NE(err_.hint[0], '\0');

  ASSERT_NO_FATAL_FAILURE(fixture());
  ASSERT_NE(region(7), nullptr);
  ASSERT_EQ(truncate(path_.c_str(), 8192), 0);  // same file, shorter
  EXPECT_EQ(pfs_core_region_get(7, path_.c_str(), &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);

  pfs_core_region_forget_all();
  EXPECT_EQ(pfs_core_region_cached(), 0);
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
  PfsCoreRowset* rs = scan(table_id::threads, {parent, name});
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
  PfsCoreRowset* all = scan(table_id::events_waits_history_long);
  ASSERT_NE(all, nullptr);
  EXPECT_GT(all->nrows, 0u);
  bool none[64] = {};
  PfsCoreRowset* counted =
      pfs_core_scan(region(), table_index(table_id::events_waits_history_long), none, 4, nullptr, &err_);
  ASSERT_NE(counted, nullptr) << err_.message;
  EXPECT_EQ(counted->ncells, 0);
  EXPECT_EQ(counted->nrows, all->nrows);
  pfs_core_rowset_free(counted);
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
    PfsCoreRowset* rs = scan(id);
    ASSERT_NE(rs, nullptr);
    ASSERT_EQ(rs->nrows, rows.size()) << pfs::reader::table(id).name;
    ASSERT_EQ(rs->ncells, pfs_core_column_count(table_index(id)));
    for (std::size_t r = 0; r < rows.size(); ++r) {
      for (int c = 0; c < rs->ncells; ++c) {
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

TEST_F(FdwCoreTest, InvalidRowsFailTheScan) {
  ASSERT_NO_FATAL_FAILURE(fixture("--kind=garbage"));
  PfsCoreRegion* r = region();
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(pfs_core_scan(r, table_index(table_id::events_waits_history_long), nullptr, 4, nullptr, &err_),
            nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_CORRUPTED);
  EXPECT_NE(std::strstr(err_.message, "contains invalid records"), nullptr);
  EXPECT_NE(std::strstr(err_.detail, "events_waits_history_long"), nullptr);
  // tables without invalid rows still scan
  PfsCoreRowset* ok = pfs_core_scan(r, table_index(table_id::threads), nullptr, 4, nullptr, &err_);
  ASSERT_NE(ok, nullptr) << err_.message;
  EXPECT_EQ(ok->nrows, 3u);
  pfs_core_rowset_free(ok);
}

TEST_F(FdwCoreTest, ScanStopsWhenInterrupted) {
  ASSERT_NO_FATAL_FAILURE(fixture("--history-long-rows=10000"));
  volatile sig_atomic_t flag = 1;
  EXPECT_EQ(
      pfs_core_scan(region(), table_index(table_id::events_waits_history_long), nullptr, 4, &flag, &err_),
      nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_INTERRUPTED);
  flag = 0;
  PfsCoreRowset* rs =
      pfs_core_scan(region(), table_index(table_id::events_waits_history_long), nullptr, 4, &flag, &err_);
  ASSERT_NE(rs, nullptr) << err_.message;
  EXPECT_EQ(rs->nrows, 10000u);
  pfs_core_rowset_free(rs);
}

TEST_F(FdwCoreTest, BadArguments) {
  ASSERT_NO_FATAL_FAILURE(fixture());
  EXPECT_EQ(pfs_core_scan(nullptr, 0, nullptr, 4, nullptr, &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_INTERNAL);
  EXPECT_EQ(pfs_core_scan(region(), 999, nullptr, 4, nullptr, &err_), nullptr);
  EXPECT_EQ(err_.kind, PFS_CORE_INTERNAL);
  EXPECT_EQ(pfs_core_estimated_rows(nullptr, 0), 0);
  pfs_core_rowset_free(nullptr);
}

}  // namespace
