// The reader tests' fixture (tests/test_reader*.cpp, one binary per table family):
// regions built in a temp dir and filled directly through the layout structs, the
// cell checks, and the shape every row of every table must have.
#pragma once

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
#include "agent/region/io_layout.h"
#include "agent/region/region.h"
#include "agent/region/region_builder.h"
#include "agent/region/region_layout.h"
#include "agent/region/setup.h"
#include "agent/region/work_layout.h"
#include "timers/timer.h"

namespace pfs::reader_test {

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

inline testing::AssertionResult IsNull(const cell& c) {
  if (c.null) return testing::AssertionSuccess();
  return testing::AssertionFailure() << "expected NULL, got i=" << c.i << " s='" << c.s << "'";
}
inline testing::AssertionResult IsInt(const cell& c, std::int64_t v) {
  if (c.null) return testing::AssertionFailure() << "expected " << v << ", got NULL";
  if (c.i != v || c.hi != 0)
    return testing::AssertionFailure()
           << "expected " << v << ", got " << c.i << " (high word " << c.hi << ")";
  return testing::AssertionSuccess();
}
inline testing::AssertionResult IsText(const cell& c, const std::string& v) {
  if (c.null) return testing::AssertionFailure() << "expected '" << v << "', got NULL";
  if (c.s != v) return testing::AssertionFailure() << "expected '" << v << "', got '" << c.s << "'";
  return testing::AssertionSuccess();
}

inline const table_def& T(table_id id) { return reader::table(id); }

// The shape every row of every table must have, whatever the region holds.
inline void check_shape(const table_def& t, const std::vector<row>& rows) {
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
    s.max_sems = 2;
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

}  // namespace pfs::reader_test
