// File io and table io waits: exact counts and bytes, errno, molecular nesting,
// summary consistency, setup_objects, lost counters.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "agent/provider/pfs_io.h"
#include "agent/region/io_layout.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

using namespace pfs;
using namespace pfs::layout;
using pfs::test::in_child;
using pfs::test::small_options;

namespace {

std::string temp_file(const char* tag) { return pfs::test::temp_region_path(tag) + ".data"; }

const file_instance* find_file(const region_map& r, const std::string& name) {
  auto* f = r.array<file_instance>(kArrayFiles);
  for (std::uint64_t i = 0; i < r.count(kArrayFiles); ++i)
    if ((f[i].lock & kStateMask) == kStateAllocated && name == f[i].name) return &f[i];
  return nullptr;
}

const table_share* find_table(const region_map& r, const std::string& schema, const std::string& name) {
  auto* t = r.array<table_share>(kArrayTables);
  for (std::uint64_t i = 0; i < r.count(kArrayTables); ++i)
    if ((t[i].lock & kStateMask) == kStateAllocated && schema == t[i].schema && name == t[i].name)
      return &t[i];
  return nullptr;
}

std::uint64_t sum_counts(const table_io_stat& s) {
  return s.fetch.count + s.insert.count + s.update.count + s.del.count;
}

}  // namespace

TEST(FileIo, ScriptedWorkloadHasExactCountsAndBytes) {
  in_child([] {
    ASSERT_TRUE(init(small_options("fileio"))) << last_error();
    const region_map& r = *current_region();
    const pfs_key data = file::register_class("app", "data");
    ASSERT_NE(data, 0u);
    const std::string path = temp_file("workload");
    char buf[4096];
    std::memset(buf, 'x', sizeof(buf));

    int fd = file::open(data, path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);  // create
    ASSERT_GE(fd, 0);
    ASSERT_EQ(file::write(fd, buf, 1000), 1000);     // write 1000
    ASSERT_EQ(file::pwrite(fd, buf, 24, 1000), 24);  // write 24
    iovec iov[2] = {{buf, 100}, {buf + 100, 200}};
    ASSERT_EQ(file::writev(fd, iov, 2), 300);    // write 300
    ASSERT_EQ(file::fsync(fd), 0);               // sync
    ASSERT_EQ(file::lseek(fd, 0, SEEK_SET), 0);  // seek
    ASSERT_EQ(file::lseek(fd, 0, SEEK_CUR), 0);  // tell
    ASSERT_EQ(file::read(fd, buf, 4096), 1300);  // read 1300 (writev overwrote the pwrite's 24 bytes)
    ASSERT_EQ(file::pread(fd, buf, 10, 5), 10);  // read 10
    ASSERT_EQ(file::read(fd, buf, 10), 0);       // read 0 (EOF)
    struct stat st;
    ASSERT_EQ(file::fstat(fd, &st), 0);      // stat
    ASSERT_EQ(file::ftruncate(fd, 100), 0);  // chsize
    const file_instance* f = find_file(r, path);
    ASSERT_NE(f, nullptr);
    EXPECT_EQ(f->open_count, 1u);
    ASSERT_EQ(file::close(fd), 0);  // close
    EXPECT_EQ(f->open_count, 0u);   // stays in file_instances, as in MySQL

    EXPECT_EQ(f->stats.read.count, 3u);
    EXPECT_EQ(f->stats.read.bytes, 1310u);
    EXPECT_EQ(f->stats.write.count, 3u);
    EXPECT_EQ(f->stats.write.bytes, 1324u);
    EXPECT_EQ(f->stats.misc.count, 7u);  // create, sync, seek, tell, stat, chsize, close
    EXPECT_EQ(f->stats.misc.bytes, 0u);
    // Every operation appears in the history with MySQL's OPERATION.
    std::vector<int> ops;
    for (const auto& e : pfs::test::history_long(r))
      if (e.object_kind == kObjectFile) ops.push_back(e.operation);
    const std::vector<int> expected = {kOpFileCreate, kOpFileWrite,  kOpFileWrite, kOpFileWrite, kOpFileSync,
                                       kOpFileSeek,   kOpFileTell,   kOpFileRead,  kOpFileRead,  kOpFileRead,
                                       kOpFileStat,   kOpFileChsize, kOpFileClose};
    EXPECT_EQ(ops, expected);
    const auto hl = pfs::test::history_long(r);
    EXPECT_EQ(hl[1].number_of_bytes, 1000);
    EXPECT_EQ(hl[0].number_of_bytes, -1);  // create moves no bytes: NULL

    // A file renamed keeps its statistics; deleting it folds them into its class.
    const std::string renamed = path + ".renamed";
    ASSERT_EQ(file::rename(data, path.c_str(), renamed.c_str()), 0);
    EXPECT_EQ(find_file(r, path), nullptr);
    ASSERT_EQ(find_file(r, renamed), f);
    EXPECT_EQ(f->stats.misc.count, 8u);
    ASSERT_EQ(file::unlink(data, renamed.c_str()), 0);
    EXPECT_EQ(find_file(r, renamed), nullptr);
    const io_stats& bucket = r.array<io_stats>(kArrayClassIo)[data - 1];
    EXPECT_EQ(bucket.read.count, 3u);
    EXPECT_EQ(bucket.write.bytes, 1324u);
    EXPECT_EQ(bucket.misc.count, 9u);  // + delete
  });
}

TEST(FileIo, ErrorsAreReturnedUntouchedAndStillRecorded) {
  in_child([] {
    ASSERT_TRUE(init(small_options("fileerr"))) << last_error();
    const region_map& r = *current_region();
    const pfs_key data = file::register_class("app", "data");
    const std::string missing = temp_file("missing");
    errno = 0;
    EXPECT_EQ(file::open(data, missing.c_str(), O_RDONLY), -1);
    EXPECT_EQ(errno, ENOENT);
    EXPECT_EQ(find_file(r, missing), nullptr);  // a failed open of a missing file leaves no row
    const wait_record* stack = pfs::test::stack_of(r, thread_id());
    EXPECT_EQ(stack[0].operation, kOpFileOpen);
    EXPECT_EQ(stack[0].state, kWaitCompleted);
    errno = 0;
    EXPECT_EQ(file::unlink(data, missing.c_str()), -1);
    EXPECT_EQ(errno, ENOENT);
    const std::string path = temp_file("ro");
    int fd = file::open(data, path.c_str(), O_CREAT | O_RDONLY, 0600);
    ASSERT_GE(fd, 0);
    char c = 'a';
    errno = 0;
    EXPECT_EQ(file::write(fd, &c, 1), -1);  // not open for writing
    EXPECT_EQ(errno, EBADF);
    const file_instance* f = find_file(r, path);
    EXPECT_EQ(f->stats.write.count, 1u);  // the failed write is a wait too
    EXPECT_EQ(f->stats.write.bytes, 0u);
    file::close(fd);
    file::unlink(data, path.c_str());
  });
}

TEST(FileIo, FullArraysCountLostAndIoStillWorks) {
  in_child([] {
    options o = small_options("filelost");
    o.sizes.max_files = 1;
    o.sizes.max_file_handles = 8;
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    const pfs_key data = file::register_class("app", "data");
    const std::string a = temp_file("a"), b = temp_file("b");
    int fa = file::open(data, a.c_str(), O_CREAT | O_RDWR, 0600);
    int fb = file::open(data, b.c_str(), O_CREAT | O_RDWR, 0600);
    ASSERT_GE(fa, 0);
    ASSERT_GE(fb, 0);
    EXPECT_EQ(pfs::test::lost(r, kLostFileInstances), 1u);
    EXPECT_EQ(file::write(fb, "hello", 5), 5);  // works, not recorded
    // Descriptors above max_file_handles are lost handles.
    int fds[8];
    for (int& x : fds) x = file::open(data, a.c_str(), O_RDONLY);
    EXPECT_GE(pfs::test::lost(r, kLostFileHandles), 1u);
    for (int x : fds) file::close(x);
    file::close(fa);
    file::close(fb);
    file::unlink(data, a.c_str());
    ::unlink(b.c_str());
  });
}

// With no PFS_INSTRUMENT rule, table io is on and timed (MySQL's
// wait/io/table/sql/handler YES YES, WL#4895) while other waits are off.
TEST(TableIo, TheHandlerInstrumentIsOnAndTimedByDefault) {
  in_child([] {
    options o = small_options("tableio_default");
    o.instrument.clear();
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    const pfs_key handler = table::register_class("sql");
    const pfs_key data = file::register_class("sql", "data");
    const auto& classes = r.array<class_record>(kArrayClasses);
    EXPECT_EQ(std::string(classes[handler - 1].name), "wait/io/table/sql/handler");
    EXPECT_EQ(classes[handler - 1].flags, kFlagEnabled | kFlagTimed);
    EXPECT_EQ(classes[data - 1].flags, 0);
  });
}

TEST(TableIo, MolecularWaitsNestingAndDoubleTiming) {
  in_child([] {
    ASSERT_TRUE(init(small_options("tableio"))) << last_error();
    const region_map& r = *current_region();
    const pfs_key handler = table::register_class("store");
    const pfs_key data = file::register_class("store", "data");
    pfs_table* orders = table::declare(handler, "shop", "orders");
    ASSERT_NE(orders, nullptr);
    EXPECT_EQ(table::declare(handler, "shop", "orders"), orders);  // same share
    const unsigned pk = pfs_declare_table_index(orders, "PRIMARY");
    EXPECT_EQ(pk, 1u);
    EXPECT_EQ(pfs_declare_table_index(orders, "PRIMARY"), 1u);
    const std::string path = temp_file("tbl");
    int fd = file::open(data, path.c_str(), O_CREAT | O_RDWR, 0600);
    char buf[64] = {};
    file::write(fd, buf, sizeof(buf));
    const std::uint64_t tid = thread_id();
    const wait_record* stack = pfs::test::stack_of(r, tid);
    {
      table::io fetch(orders, PFS_TABLE_FETCH, pk);
      file::pread(fd, buf, 64, 0);
      // Two rows: the running table io wait and the completed file read in it.
      EXPECT_EQ(stack[0].state, kWaitRunning);
      EXPECT_EQ(stack[0].object_kind, kObjectTable);
      EXPECT_EQ(stack[0].index_number, pk);
      EXPECT_EQ(stack[1].state, kWaitCompleted);
      EXPECT_EQ(stack[1].operation, kOpFileRead);
      EXPECT_EQ(stack[1].nesting_event_id, stack[0].event_id);
      EXPECT_EQ(stack[1].nesting_type, kNestingWait);
      EXPECT_EQ(stack[1].number_of_bytes, 64);
      fetch.rows(25);  // one event for a 25-row scan
    }
    EXPECT_EQ(stack[0].state, kWaitCompleted);
    EXPECT_EQ(stack[0].number_of_bytes, 25);
    EXPECT_EQ(stack[1].state, kWaitEmpty);
    { table::io ins(orders, PFS_TABLE_INSERT); }
    { table::io upd(orders, PFS_TABLE_UPDATE, pk); }
    { table::io del(orders, PFS_TABLE_DELETE); }
    const table_share* t = find_table(r, "shop", "orders");
    ASSERT_NE(t, nullptr);
    const index_stat& ix = r.array<index_stat>(
        kArrayTableIndexes)[(t - r.array<table_share>(kArrayTables)) * r.header().max_indexes_per_table];
    EXPECT_EQ(std::string(ix.name), "PRIMARY");
    EXPECT_EQ(ix.stat.fetch.count, 25u);  // rows
    EXPECT_GT(ix.stat.fetch.sum, 0u);
    EXPECT_EQ(ix.stat.update.count, 1u);
    EXPECT_EQ(t->no_index.insert.count, 1u);
    EXPECT_EQ(t->no_index.del.count, 1u);
    // Table io time stays out of the events_waits_summary_* timing (WL#4895).
    const wait_stat& c = *pfs::test::global_stat_of(r, tid, handler);
    EXPECT_EQ(c.count, 28u);
    EXPECT_EQ(c.sum, 0u);
    std::uint32_t slot = 0;
    pfs::test::find_thread(r, tid, &slot);
    const wait_stat& ts =
        r.array<wait_stat>(kArrayThreadClassStats)[slot * r.header().max_classes + handler - 1];
    EXPECT_EQ(ts.count, 28u);
    EXPECT_EQ(ts.sum, 0u);
    // The sums agree: by index + no index = the class count = the thread's count.
    EXPECT_EQ(sum_counts(ix.stat) + sum_counts(t->no_index), c.count);
    file::close(fd);
    file::unlink(data, path.c_str());
  });
}

// Seed 003: events_waits_current has "#1 the latest wait event of any kind, #2 the
// latest table io wait event": a completed table io stays in slot 0 while later
// waits come and go above it, until the next table io takes its place.
TEST(TableIo, TheLatestTableIoStaysUntilTheNextOne) {
  in_child([] {
    ASSERT_TRUE(init(small_options("tableio_row2"))) << last_error();
    const region_map& r = *current_region();
    const pfs_key handler = table::register_class("store");
    pfs_table* orders = table::declare(handler, "shop", "orders");
    pfs::mutex m{"store", "m"};
    const std::uint64_t tid = thread_id();
    const wait_record* stack = pfs::test::stack_of(r, tid);
    { table::io fetch(orders, PFS_TABLE_FETCH); }
    const std::uint64_t fetch_id = stack[0].event_id;
    { pfs::lock_guard g(m); }
    { pfs::lock_guard g(m); }
    EXPECT_EQ(stack[0].state, kWaitCompleted);  // row #2: the fetch, still
    EXPECT_EQ(stack[0].operation, kOpTableFetch);
    EXPECT_EQ(stack[0].event_id, fetch_id);
    EXPECT_EQ(stack[1].state, kWaitCompleted);  // row #1: the latest wait, the second lock
    EXPECT_EQ(stack[1].operation, kOpLock);
    EXPECT_EQ(stack[1].event_id, fetch_id + 2);
    std::vector<std::string> shown;
    for (const auto& row : pfs::test::scan("events_waits_current"))
      if (pfs::test::I(row, "thread_id") == static_cast<std::int64_t>(tid))
        shown.push_back(pfs::test::S(row, "operation"));
    EXPECT_EQ(shown, (std::vector<std::string>{"fetch", "lock"}));
    {
      table::io ins(orders, PFS_TABLE_INSERT);  // the next table io takes slot 0
      EXPECT_EQ(stack[0].state, kWaitRunning);
      EXPECT_EQ(stack[0].operation, kOpTableInsert);
      EXPECT_EQ(stack[1].state, kWaitEmpty);
      { pfs::lock_guard g(m); }  // nested in it
      EXPECT_EQ(stack[1].operation, kOpLock);
      EXPECT_EQ(stack[1].nesting_event_id, stack[0].event_id);
    }
    EXPECT_EQ(stack[0].state, kWaitCompleted);
    EXPECT_EQ(stack[1].state, kWaitEmpty);
  });
}

TEST(TableIo, SetupObjectsDecideAndApplyToOpenTables) {
  in_child([] {
    ASSERT_TRUE(init(small_options("setupobj"))) << last_error();
    const region_map& r = *current_region();
    const pfs_key handler = table::register_class("store");
    pfs_table* sys_t = table::declare(handler, "mysql", "user");
    pfs_table* app_t = table::declare(handler, "shop", "orders");
    pfs_table* tmp_t = table::declare(handler, "shop", "scratch", true);
    // Defaults: mysql.% off, %.% on and timed.
    EXPECT_EQ(find_table(r, "mysql", "user")->derived, 0);
    EXPECT_EQ(find_table(r, "shop", "orders")->derived, kFlagEnabled | kFlagTimed);
    EXPECT_EQ(find_table(r, "shop", "scratch")->derived, kFlagEnabled | kFlagTimed);
    { table::io w(sys_t, PFS_TABLE_FETCH); }
    EXPECT_EQ(find_table(r, "mysql", "user")->no_index.fetch.count, 0u);
    {
      setup_lock_guard lock(r);
      // The most specific row wins: shop.orders counted only, shop.% off.
      ASSERT_EQ(setup::insert_object(r, "shop", "%", false, false), setup::actor_result::ok);
      ASSERT_EQ(setup::insert_object(r, "shop", "orders", true, false), setup::actor_result::ok);
      EXPECT_EQ(setup::insert_object(r, "shop", "orders", true, true), setup::actor_result::duplicate);
    }
    // Applies to tables already declared (open).
    EXPECT_EQ(find_table(r, "shop", "orders")->derived, kFlagEnabled);
    EXPECT_EQ(find_table(r, "shop", "scratch")->derived, 0);
    { table::io w(app_t, PFS_TABLE_FETCH); }
    { table::io w(tmp_t, PFS_TABLE_FETCH); }
    EXPECT_EQ(find_table(r, "shop", "orders")->no_index.fetch.count, 1u);
    EXPECT_EQ(find_table(r, "shop", "orders")->no_index.fetch.sum, 0u);  // counted, not timed
    EXPECT_EQ(find_table(r, "shop", "scratch")->no_index.fetch.count, 0u);
    {
      setup_lock_guard lock(r);
      setup::truncate_objects(r);
    }
    EXPECT_EQ(find_table(r, "shop", "orders")->derived, 0);  // no row matches: not instrumented
  });
}

TEST(TableIo, FullArraysCountLost) {
  in_child([] {
    options o = small_options("tablelost");
    o.sizes.max_tables = 1;
    o.sizes.max_indexes_per_table = 1;
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    const pfs_key handler = table::register_class("store");
    pfs_table* a = table::declare(handler, "s", "a");
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(table::declare(handler, "s", "b"), nullptr);
    EXPECT_EQ(pfs::test::lost(r, kLostTableInstances), 1u);
    EXPECT_EQ(pfs_declare_table_index(a, "PRIMARY"), 1u);
    EXPECT_EQ(pfs_declare_table_index(a, "k2"), 0u);
    EXPECT_EQ(pfs::test::lost(r, kLostIndexStats), 1u);
    { table::io w(nullptr, PFS_TABLE_FETCH); }  // a lost table: nothing recorded, no crash
    { table::io w(a, PFS_TABLE_FETCH, 7); }     // an undeclared index: counted without index
    EXPECT_EQ(find_table(r, "s", "a")->no_index.fetch.count, 1u);
  });
}
