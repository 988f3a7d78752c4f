// The overflow horizon (issue 13, item 5): sums of times beyond 2^63 and 2^64 ps
// stay exact in the region, in the reader and in the FDW core's numeric cells;
// TRUNCATE zeroes their high words; carries are exact under concurrency; timer
// values of 10 years of a 5 GHz cycle counter convert without wrapping.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "agent/reader/internal/consistent_copy.h"
#include "agent/reader/reader.h"
#include "agent/region/io_layout.h"
#include "agent/region/region.h"
#include "agent/region/region_builder.h"
#include "agent/region/setup.h"
#include "agent/region/wide_sum.h"
#include "fdw/pfs_core.h"
#include "timers/timer.h"

namespace {

using namespace pfs;
using namespace pfs::layout;
using reader::region_reader;
using reader::table_id;

constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
constexpr wide_sum kTwo63 = static_cast<wide_sum>(1) << 63;
constexpr wide_sum kTwo64 = static_cast<wide_sum>(1) << 64;

std::string decimal(wide_sum v) {
  std::string s;
  do {
    s.insert(s.begin(), static_cast<char>('0' + static_cast<int>(v % 10)));
    v /= 10;
  } while (v != 0);
  return s;
}

wide_sum value_of(const reader::cell& c) {
  EXPECT_FALSE(c.null);
  return make_wide(static_cast<std::uint64_t>(c.i), c.hi);
}

wait_stat stat_of(std::uint64_t count, wide_sum sum, std::uint64_t min, std::uint64_t max) {
  return wait_stat{count, static_cast<std::uint64_t>(sum), min, max, static_cast<std::uint64_t>(sum >> 64)};
}

// ---------------------------------------------------------------------------
// The carries themselves

TEST(WideSum, SingleWriterCarriesAcross64Bits) {
  std::uint64_t lo = kMax - 9, hi = 0;
  add_sum(lo, hi, 25);
  EXPECT_EQ(lo, 15u);
  EXPECT_EQ(hi, 1u);
  EXPECT_TRUE(load_sum(lo, hi) == kTwo64 + 15);
  add_sum(lo, hi, kMax);  // a second carry
  EXPECT_TRUE(load_sum(lo, hi) == 2 * kTwo64 + 14);
}

TEST(WideSum, FoldAddsHighWordsAndTheCarry) {
  std::uint64_t lo = kMax, hi = 3;
  add_wide_atomic(lo, hi, 2 * kTwo64 + 1);
  EXPECT_TRUE(load_sum(lo, hi) == 6 * kTwo64);
}

// Two threads add into one shared sum that crosses 2^64 (several times) while they
// run: every carry counted once (run under TSan by scripts/test.sh).
TEST(WideSum, SharedCarriesAreExactUnderConcurrency) {
  alignas(64) std::uint64_t lo = kMax - 1000;
  alignas(64) std::uint64_t hi = 0;
  constexpr std::uint64_t kStep = (std::uint64_t{1} << 62) + 12345;  // 4 adds per wrap
  constexpr int kAdds = 200000;
  std::atomic<int> ready{0};
  auto adder = [&] {
    ready.fetch_add(1);
    while (ready.load() < 2) {
    }
    for (int i = 0; i < kAdds; ++i) add_sum_atomic(lo, hi, kStep);
  };
  std::thread a(adder), b(adder);
  // A reader meanwhile: whole values only, never more than the final sum.
  const wide_sum start = kMax - 1000;
  const wide_sum final_sum = start + static_cast<wide_sum>(kStep) * (2 * kAdds);
  for (int i = 0; i < 1000; ++i) {
    const wide_sum v = load_sum(lo, hi);
    ASSERT_TRUE(v <= final_sum);
  }
  a.join();
  b.join();
  EXPECT_EQ(decimal(load_sum(lo, hi)), decimal(final_sum));
}

// ---------------------------------------------------------------------------
// A region whose sums passed 2^63 and 2^64 ps, read back exactly

class OverflowRegion : public testing::Test {
 protected:
  void SetUp() override {
    std::string tmpl = testing::TempDir() + "pfs_overflow_XXXXXX";
    ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
    dir_ = tmpl;
    path_ = dir_ + "/region";
    region_sizes s;
    s.max_classes = 8;
    s.max_threads = 2;
    s.max_mutexes = 2;
    s.max_rwlocks = 1;
    s.max_conds = 1;
    s.max_files = 2;
    s.max_tables = 1;
    s.max_indexes_per_table = 1;
    s.lock_contention_size = 4;
    region_error err;
    map_ = region_map::create(path_, s, 0600, err);
    ASSERT_FALSE(err) << err.message;
    region_builder b(map_);
    // Class 1: a mutex class whose exited threads and destroyed instances left
    // 2^64 - 1 ps; its two live instances 2^64 + 5 and 2^63 ps.
    b.set_class(1, kKindMutex, "wait/synch/mutex/test/m", kFlagEnabled | kFlagTimed,
                stat_of(4, kTwo64 - 1, 1, 1000));
    b.set_sync(kArrayMutexes, 0, 1, 0x1000, stat_of(3, kTwo64 + 5, 2, 2000));
    b.set_sync(kArrayMutexes, 1, 1, 0x2000, stat_of(2, kTwo63, 3, 3000));
    b.set_class(2, kKindThread, "thread/test/worker", kFlagEnabled);
    b.set_class(3, kKindFile, "wait/io/file/test/f", kFlagEnabled | kFlagTimed);
    b.set_class(4, kKindTable, "wait/io/table/sql/handler", kFlagEnabled | kFlagTimed);
    b.set_thread(0, 2, 1);
    map_.array<wait_stat>(kArrayThreadClassStats)[0] = stat_of(1, 3 * kTwo64 + 7, 7, 7);
    io_stats io = region_builder::kNoIoStats;
    const wait_stat read = stat_of(2, kTwo63 + 1, 4, 4);
    io.read = io_stat{read.count, read.sum, read.min, read.max, 4096, read.sum_hi};
    const wait_stat misc = stat_of(1, kTwo64 - 2, 5, 5);
    io.misc = io_stat{misc.count, misc.sum, misc.min, misc.max, 0, misc.sum_hi};
    b.set_file(0, 3, "/data/f", 0x3000, 1, io);
    table_share& t = b.set_table(0, 4, kObjectTypeTable, "shop", "orders", 0x4000);
    t.no_index.fetch = stat_of(5, 2 * kTwo64, 6, 6);
    t.no_index.insert = stat_of(1, kTwo64 - 1, 6, 6);
    auto* c = map_.array<contention_record>(kArrayLockContention);
    c[0] = {contention_key(kContentionMutex, 1, 0), map_.array<sync_instance>(kArrayMutexes)[0].lock, 0,
            stat_of(2, kTwo64 + 9, 8, 8), 0};
    // Thread slot 0's part of the global summary: what the instances and the file
    // counted (every summary consumer on).
    b.count_instances_in_global(0);
  }
  void TearDown() override {
    map_ = region_map();
    std::system(("rm -rf '" + dir_ + "'").c_str());
  }

  std::vector<reader::row> scan(table_id id) {
    region_error err;
    auto r = region_reader::open(path_, false, err);
    EXPECT_FALSE(err) << err.message;
    std::vector<reader::row> rows;
    if (r == nullptr) return rows;
    err = r->scan(reader::table(id), rows);
    EXPECT_FALSE(err) << err.message;
    return rows;
  }
  // The value of column `name` in the first row whose column `key` is `v`.
  wide_sum value(table_id id, const char* key, std::int64_t v, const char* name) {
    const reader::table_def& t = reader::table(id);
    const int k = reader::column_index(t, key), c = reader::column_index(t, name);
    EXPECT_GE(k, 0);
    EXPECT_GE(c, 0);
    for (const reader::row& r : scan(id))
      if (!r[k].null && r[k].i == v) return value_of(r[c]);
    ADD_FAILURE() << "no row with " << key << " = " << v << " in " << t.name;
    return 0;
  }
  // The value of column `name` in the first row of thread `tid` and instrument `event`.
  wide_sum value_of_event(table_id id, std::int64_t tid, const char* event, const char* name) {
    const reader::table_def& t = reader::table(id);
    const int th = reader::column_index(t, "thread_id"), e = reader::column_index(t, "event_name"),
              c = reader::column_index(t, name);
    EXPECT_GE(c, 0);
    for (const reader::row& r : scan(id))
      if ((th < 0 || r[th].i == tid) && r[e].s == event) return value_of(r[c]);
    ADD_FAILURE() << "no row of " << event << " in " << t.name;
    return 0;
  }
  wide_sum value(table_id id, const char* name) {
    const auto rows = scan(id);
    EXPECT_EQ(rows.size(), 1u) << reader::table(id).name;
    if (rows.empty()) return 0;
    return value_of(rows[0][reader::column_index(reader::table(id), name)]);
  }

  std::string dir_, path_;
  region_map map_;
};

TEST_F(OverflowRegion, SumsBeyond64BitsReadBackExactly) {
  EXPECT_EQ(decimal(value(table_id::events_waits_summary_by_instance, "object_instance_begin", 0x1000,
                          "sum_timer_wait")),
            decimal(kTwo64 + 5));
  EXPECT_EQ(decimal(value(table_id::events_waits_summary_by_instance, "object_instance_begin", 0x2000,
                          "sum_timer_wait")),
            decimal(kTwo63));
  // The class row adds its bucket and the live thread's statistics (which counted
  // both instances): two carries in the reader.
  EXPECT_EQ(decimal(value_of_event(table_id::events_waits_summary_global_by_event_name, 0,
                                   "wait/synch/mutex/test/m", "sum_timer_wait")),
            decimal(kTwo64 - 1 + kTwo64 + 5 + kTwo63));
  // AVG = SUM / COUNT stays bigint: (2^64 + 5) / 3.
  EXPECT_EQ(decimal(value(table_id::events_waits_summary_by_instance, "object_instance_begin", 0x1000,
                          "avg_timer_wait")),
            decimal((kTwo64 + 5) / 3));
  EXPECT_EQ(decimal(value_of_event(table_id::events_waits_summary_by_thread_by_event_name, 1,
                                   "wait/synch/mutex/test/m", "sum_timer_wait")),
            decimal(3 * kTwo64 + 7));
  EXPECT_EQ(decimal(value(table_id::file_summary_by_instance, "sum_timer_read")), decimal(kTwo63 + 1));
  EXPECT_EQ(decimal(value(table_id::file_summary_by_instance, "sum_timer_misc")), decimal(kTwo64 - 2));
  EXPECT_EQ(decimal(value(table_id::file_summary_by_instance, "sum_timer_wait")),
            decimal(kTwo63 + kTwo64 - 1));
  EXPECT_EQ(decimal(value(table_id::table_io_waits_summary_by_table, "sum_timer_fetch")),
            decimal(2 * kTwo64));
  EXPECT_EQ(decimal(value(table_id::table_io_waits_summary_by_table, "sum_timer_write")),
            decimal(kTwo64 - 1));
  EXPECT_EQ(decimal(value(table_id::table_io_waits_summary_by_table, "sum_timer_wait")),
            decimal(3 * kTwo64 - 1));
  EXPECT_EQ(decimal(value(table_id::lock_contention_by_instance, "sum_timer_wait")), decimal(kTwo64 + 9));
}

// SUM_LOCK_TIME and SUM_CPU_TIME of the statement summaries: the exited threads'
// bucket plus a live thread's statistics, each past 2^64 ps.
TEST_F(OverflowRegion, StatementTimeSumsBeyond64Bits) {
  region_builder b(map_);
  b.set_class(6, kKindStatement, "statement/sql/select", kFlagEnabled | kFlagTimed).kind_index = 0;
  statement_stat& bucket = map_.array<statement_stat>(kArrayClassStatementStats)[0];
  bucket.time = stat_of(1, kTwo64 + 1, 9, 9);
  bucket.lock_time = kMax;
  bucket.cpu_time = 4;
  bucket.cpu_time_hi = 3;
  const std::uint64_t per = map_.count(kArrayClassStatementStats);
  statement_stat& mine =
      map_.array<statement_stat>(kArrayThreadStatementStats)[0 * per + 0];  // thread slot 0
  mine.time = stat_of(1, kTwo64 - 1, 9, 9);
  mine.lock_time = 2;
  mine.lock_time_hi = 1;
  mine.cpu_time = kMax;
  const table_id g = table_id::events_statements_summary_global_by_event_name;
  EXPECT_EQ(decimal(value_of_event(g, 0, "statement/sql/select", "sum_timer_wait")), decimal(2 * kTwo64));
  EXPECT_EQ(decimal(value_of_event(g, 0, "statement/sql/select", "sum_lock_time")), decimal(2 * kTwo64 + 1));
  EXPECT_EQ(decimal(value_of_event(g, 0, "statement/sql/select", "sum_cpu_time")), decimal(4 * kTwo64 + 3));
  const table_id t = table_id::events_statements_summary_by_thread_by_event_name;
  EXPECT_EQ(decimal(value_of_event(t, 1, "statement/sql/select", "sum_lock_time")), decimal(kTwo64 + 2));
  setup::reset_statement_summaries(map_, false);
  EXPECT_TRUE(load_sum(bucket.lock_time, bucket.lock_time_hi) == 0 &&
              load_sum(bucket.cpu_time, bucket.cpu_time_hi) == 0);
}

TEST_F(OverflowRegion, TruncateZeroesTheHighWords) {
  setup::reset_wait_summaries(map_);
  setup::reset_thread_summaries(map_);
  setup::reset_lock_contention(map_);
  for (const sync_instance* s = map_.array<sync_instance>(kArrayMutexes);
       s != map_.array<sync_instance>(kArrayMutexes) + 2; ++s)
    EXPECT_TRUE(load_sum(s->stat) == 0);
  EXPECT_TRUE(load_sum(map_.array<class_record>(kArrayClasses)[0].stat) == 0);
  EXPECT_TRUE(load_sum(map_.array<wait_stat>(kArrayThreadClassStats)[0]) == 0);
  const file_instance& f = map_.array<file_instance>(kArrayFiles)[0];
  EXPECT_TRUE(load_sum(f.stats.read) == 0 && load_sum(f.stats.misc) == 0);
  const table_share& t = map_.array<table_share>(kArrayTables)[0];
  EXPECT_TRUE(load_sum(t.no_index.fetch) == 0 && load_sum(t.no_index.insert) == 0);
  EXPECT_EQ(decimal(value(table_id::file_summary_by_instance, "sum_timer_wait")), "0");
  EXPECT_EQ(decimal(value(table_id::table_io_waits_summary_by_table, "sum_timer_wait")), "0");
}

// ---------------------------------------------------------------------------
// The FDW core's numeric cells (the fixture's huge-sums region)

TEST(OverflowFdwCore, NumericCellsCarryDecimalDigitsBeyondInt64) {
  std::string tmpl = testing::TempDir() + "pfs_overflow_fdw_XXXXXX";
  ASSERT_NE(mkdtemp(tmpl.data()), nullptr);
  const std::string dir = tmpl, path = dir + "/region";
  const std::string cmd = std::string(PFS_BUILD_DIR) + "/tools/pfs_fixture --kind=huge-sums '" + path + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
  ASSERT_TRUE(pfs_core_init());
  PfsCoreError err;
  PfsCoreRegion* region = pfs_core_region_get(77, path.c_str(), &err);
  ASSERT_NE(region, nullptr) << err.message;
  const int table = static_cast<int>(table_id::events_waits_summary_by_instance);
  ASSERT_EQ(pfs_core_column_type(table, 3), PFS_CORE_NUMERIC);
  ASSERT_STREQ(pfs_core_column_name(table, 3), "sum_timer_wait");
  PfsCoreScan* scan = pfs_core_scan_begin(region, table, nullptr, nullptr, 0, 4, SIZE_MAX, &err);
  ASSERT_NE(scan, nullptr) << err.message;
  const PfsCoreRowset* rows = pfs_core_scan_next(scan, nullptr, &err);
  ASSERT_NE(rows, nullptr) << err.message;
  int huge = 0, small = 0;
  for (std::size_t r = 0; r < rows->nrows; ++r) {
    const PfsCoreCell* cells = rows->cells + r * static_cast<std::size_t>(rows->ncells);
    const PfsCoreCell& sum = cells[3];
    if (cells[1].value == 0x1000) {  // queue_lock's instance: 2^64 + 5 ps
      ++huge;
      ASSERT_EQ(sum.len, 20u);
      EXPECT_EQ(std::string(rows->text + sum.value + 4, sum.len), "18446744073709551621");
      EXPECT_EQ(rows->text[sum.value + 4 + sum.len], '\0');
    } else if (cells[1].value == 0x6000) {  // the log file: reads 2^63 + 1, writes 9e6, misc 5e5 ps
      ++huge;
      EXPECT_EQ(std::string(rows->text + sum.value + 4, sum.len), "9223372036864275809");
    } else if (!sum.isnull) {
      ++small;
      EXPECT_EQ(sum.len, 0u);  // fits in int64: the value itself
      EXPECT_GE(sum.value, 0);
    }
  }
  EXPECT_EQ(huge, 2);
  EXPECT_GT(small, 0);
  pfs_core_scan_end(scan);
  pfs_core_region_forget_all();
  std::system(("rm -rf '" + dir + "'").c_str());
}

// ---------------------------------------------------------------------------
// Timer values: 10 years of a 5 GHz cycle counter

TEST(OverflowTimers, TenYearsOfCyclesConvertWithoutWrap) {
  const std::uint64_t base = 123456789;
  const timers::pico_converter c = timers::make_converter(5e9, base);
  ASSERT_NE(c.mult, 0u);
  const std::uint64_t ten_years = 10ull * 365 * 86400 * 5000000000ull;  // 1.58e18 cycles < 2^64
  // A single interval: saturated at UINT64_MAX beyond 2^64 ps (213 days), never wrapped.
  EXPECT_EQ(c.delta_to_pico(ten_years), kMax);
  const std::uint64_t hundred_days = 100ull * 86400 * 5000000000ull;
  EXPECT_EQ(c.delta_to_pico(hundred_days), hundred_days * 200);
  // The reader's conversion of TIMER_START/TIMER_END: a 128-bit product, the bigint
  // cell capped at INT64_MAX (106.7 days), monotonic: never a small value again.
  const reader::detail::converter rc{c.base, c.mult, c.shift};
  EXPECT_EQ(reader::detail::to_pico(rc, base + hundred_days), hundred_days * 200);
  const auto cap = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  EXPECT_EQ(reader::detail::to_pico(rc, base + ten_years), cap);
  std::uint64_t prev = 0;
  for (std::uint64_t raw = base; raw < base + ten_years; raw += ten_years / 997) {
    const std::uint64_t ps = reader::detail::to_pico(rc, raw);
    ASSERT_GE(ps, prev) << raw;
    prev = ps;
  }
  // The raw counter itself may be anywhere, even near 2^64: no overflow either.
  const timers::pico_converter late = timers::make_converter(5e9, kMax - ten_years);
  const reader::detail::converter lc{late.base, late.mult, late.shift};
  EXPECT_EQ(reader::detail::to_pico(lc, kMax), cap);
  EXPECT_EQ(reader::detail::to_pico(lc, late.base + 1000), 200000u);
}

}  // namespace
