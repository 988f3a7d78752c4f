// TRUNCATE through the region: event tables hidden behind horizons, summaries
// reset; new events show up again afterwards.
#include <gtest/gtest.h>

#include <thread>

#include "agent/reader/reader.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"

using namespace pfs;
using namespace pfs::layout;
using pfs::test::in_child;
using pfs::test::small_options;

namespace {

std::size_t rows_of(reader::region_reader& r, const char* table) {
  std::vector<reader::row> rows;
  EXPECT_FALSE(r.scan(*reader::find_table(table), rows));
  return rows.size();
}

std::int64_t count_star_of(reader::region_reader& r, const char* table, const char* event_name) {
  const reader::table_def& t = *reader::find_table(table);
  std::vector<reader::row> rows;
  EXPECT_FALSE(r.scan(t, rows));
  const int name = reader::column_index(t, "event_name"), count = reader::column_index(t, "count_star");
  std::int64_t total = 0;
  for (const auto& row : rows)
    if (row[name].s == event_name) total += row[count].i;
  return total;
}

}  // namespace

TEST(Truncate, EventTablesEmptyThenRefill) {
  in_child([] {
    options o = small_options("truncate");
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& region = *current_region();
    region_error err;
    auto r = reader::region_reader::open(o.region_path, true, err);
    ASSERT_TRUE(r) << err.message;
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 3; ++i) pfs::lock_guard g(m);
    std::thread gone([&] {
      for (int i = 0; i < 3; ++i) pfs::lock_guard g(m);
    });
    gone.join();
    EXPECT_EQ(rows_of(*r, "events_waits_history_long"), 6u);
    EXPECT_EQ(rows_of(*r, "events_waits_history"), 3u);
    EXPECT_EQ(rows_of(*r, "events_waits_current"), 1u);
    {
      setup_lock_guard lock(r->region());
      setup::truncate_events(r->region(), kTruncateHistoryLong);
    }
    EXPECT_EQ(rows_of(*r, "events_waits_history_long"), 0u);
    EXPECT_EQ(rows_of(*r, "events_waits_history"), 3u);  // another table, untouched
    {
      setup_lock_guard lock(r->region());
      setup::truncate_events(r->region(), kTruncateHistory);
      setup::truncate_events(r->region(), kTruncateCurrent);
    }
    EXPECT_EQ(rows_of(*r, "events_waits_history"), 0u);
    EXPECT_EQ(rows_of(*r, "events_waits_current"), 0u);
    // New events of this thread and of a new thread come back.
    { pfs::lock_guard g(m); }
    std::thread fresh([&] { pfs::lock_guard g(m); });
    fresh.join();
    EXPECT_EQ(rows_of(*r, "events_waits_history_long"), 2u);
    EXPECT_EQ(rows_of(*r, "events_waits_history"), 1u);
    EXPECT_EQ(rows_of(*r, "events_waits_current"), 1u);
    (void)region;
  });
}

TEST(Truncate, SummariesReset) {
  in_child([] {
    options o = small_options("truncsum");
    ASSERT_TRUE(init(o)) << last_error();
    region_error err;
    auto r = reader::region_reader::open(o.region_path, true, err);
    ASSERT_TRUE(r) << err.message;
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 5; ++i) pfs::lock_guard g(m);
    const char* name = "wait/synch/mutex/app/m";
    EXPECT_EQ(count_star_of(*r, "events_waits_summary_global_by_event_name", name), 5);
    EXPECT_EQ(count_star_of(*r, "events_waits_summary_by_thread_by_event_name", name), 5);
    {
      setup_lock_guard lock(r->region());
      setup::reset_wait_summaries(r->region());
    }
    EXPECT_EQ(count_star_of(*r, "events_waits_summary_global_by_event_name", name), 0);
    EXPECT_EQ(count_star_of(*r, "events_waits_summary_by_instance", name), 0);
    EXPECT_EQ(count_star_of(*r, "events_waits_summary_by_thread_by_event_name", name), 5);
    {
      setup_lock_guard lock(r->region());
      setup::reset_thread_summaries(r->region());
    }
    EXPECT_EQ(count_star_of(*r, "events_waits_summary_by_thread_by_event_name", name), 0);
    for (int i = 0; i < 2; ++i) pfs::lock_guard g(m);
    EXPECT_EQ(count_star_of(*r, "events_waits_summary_global_by_event_name", name), 2);
  });
}
