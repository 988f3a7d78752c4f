// pfs_top's rows (tools/top/top_model.cpp): rates from two reads, the filter, the
// sort, the lock wait cycles; and what its keys do (top_keys.cpp).
#include <curses.h>
#include <gtest/gtest.h>

#include "tools/top/top_keys.h"
#include "tools/top/top_model.h"
#include "tools/top/top_views.h"

namespace pfs::top {
namespace {

const view& waits() { return *find_view("waits"); }

// A waits read: event_name (key), event_name, count_star, sum_timer_wait, avg, count.
table waits_read(std::vector<std::vector<std::string>> rows) { return table{{}, std::move(rows)}; }

TEST(TopModel, RatesAreTheGrowthPerSecond) {
  const table before = waits_read({{"a", "a", "10", "1000000", "1", "10"}, {"b", "b", "5", "50", "10", "5"}});
  const table after = waits_read({{"a", "a", "30", "3000000", "1", "30"}, {"b", "b", "5", "50", "10", "5"}});
  const shown s = make_rows(waits(), after, &before, 2.0);
  ASSERT_TRUE(s.rates);
  ASSERT_EQ(s.rows.size(), 1u);  // b did not grow: the waits view leaves it out
  EXPECT_EQ(s.rows[0].key, "a");
  EXPECT_DOUBLE_EQ(s.rows[0].cells[1].number, 10.0);  // (30 - 10) / 2 s
  EXPECT_EQ(s.rows[0].cells[1].text, "10.0");
  EXPECT_DOUBLE_EQ(s.rows[0].cells[2].number, 1e6);  // picoseconds per second
  EXPECT_EQ(s.rows[0].cells[2].text, "1.00 us");
  EXPECT_EQ(s.rows[0].cells[4].text, "30");  // the count as read
}

TEST(TopModel, ACounterThatWentBackCountsFromZero) {
  const table before = waits_read({{"a", "a", "100", "100", "1", "100"}});
  const table after = waits_read({{"a", "a", "4", "8", "2", "4"}});  // TRUNCATE between the reads
  const shown s = make_rows(waits(), after, &before, 1.0);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(s.rows[0].cells[1].number, 4.0);
}

TEST(TopModel, RowsOfOneKeyAreSummed) {
  // a directory's tables: the same class in two processes
  const table merged = merge_by_key(waits(), waits_read({{"a", "a", "4", "8", "2", "4"},
                                                         {"b", "b", "1", "1", "1", "1"},
                                                         {"a", "a", "6", "2", "3", "6"}}));
  ASSERT_EQ(merged.rows.size(), 2u);
  EXPECT_EQ(merged.rows[0], (std::vector<std::string>{"a", "a", "10", "10", "2", "10"}));  // avg: the first's
  EXPECT_EQ(merged.rows[1][2], "1");
  const table locks{{},
                    {{"l1", "5", "l1", "1", "s", "2", "s", "9"}, {"l1", "5", "l1", "3", "s", "2", "s", "9"}}};
  EXPECT_EQ(merge_by_key(*find_view("locks"), locks).rows.size(), 2u);  // one row per waiter
}

TEST(TopModel, TheFirstReadHasNoRates) {
  const shown s = make_rows(waits(), waits_read({{"a", "a", "4", "8", "2", "4"}}), nullptr, 0);
  EXPECT_FALSE(s.rates);
  ASSERT_EQ(s.rows.size(), 1u);
  EXPECT_EQ(s.rows[0].cells[1].text, "-");
}

TEST(TopModel, FilterAndSort) {
  shown s;
  for (const auto& [name, count] : std::vector<std::pair<std::string, double>>{
           {"wait/synch/mutex/x", 9}, {"wait/io/file/y", 100}, {"wait/synch/MUTEX/z", 20}})
    s.rows.push_back({name, {{name, 0, false}, {"", count, true}}, false});
  shown sorted = s;
  filter_and_sort(sorted, "", 1, false);
  EXPECT_EQ(sorted.rows[0].key, "wait/io/file/y");  // numbers as numbers, descending
  EXPECT_EQ(sorted.rows[2].key, "wait/synch/mutex/x");
  filter_and_sort(sorted, "", 1, true);
  EXPECT_EQ(sorted.rows[0].key, "wait/synch/mutex/x");
  filter_and_sort(sorted, "", 0, true);  // text, ascending
  EXPECT_EQ(sorted.rows[0].key, "wait/io/file/y");
  shown filtered = s;
  filter_and_sort(filtered, "Mutex", 1, false);  // case-insensitive
  ASSERT_EQ(filtered.rows.size(), 2u);
  EXPECT_EQ(filtered.rows[0].key, "wait/synch/MUTEX/z");
}

TEST(TopModel, LockWaitCyclesAreMarked) {
  // lock view rows: key, age, lock, waiting, waits at, holder, took it at, held
  const table locks{{},
                    {{"l1", "5", "l1", "1", "s", "2", "s", "9"},
                     {"l2", "5", "l2", "2", "s", "1", "s", "9"},
                     {"l1", "5", "l1", "3", "s", "1", "s", "9"}}};
  const shown s = make_rows(*find_view("locks"), locks, nullptr, 0);
  ASSERT_EQ(s.rows.size(), 3u);
  EXPECT_TRUE(s.rows[0].in_cycle);  // 1 waits for 2, 2 for 1
  EXPECT_TRUE(s.rows[1].in_cycle);
  EXPECT_FALSE(s.rows[2].in_cycle);  // 3 waits for 1, nobody waits for 3
  EXPECT_EQ(s.rows[0].cells[0].text, "5 ps");
  EXPECT_NE(text_lines(*find_view("locks"), s, 0)[1].find("  *"), std::string::npos);
}

TEST(TopViews, QueriesNameTheSchemasQuoted) {
  const std::string sql = view_sql(*find_view("locks"), "my ps", "my\"sys");
  EXPECT_NE(sql.find("FROM \"my\"\"sys\".x$lock_waits"), std::string::npos) << sql;
  EXPECT_NE(view_sql(waits(), "my ps", "s").find("FROM \"my ps\".events_waits"), std::string::npos);
  EXPECT_TRUE(detail_sql(*find_view("files"), "ps", "sys").empty());
  ASSERT_NE(find_view("7"), nullptr);
  EXPECT_EQ(find_view("7")->name, "memory");
  EXPECT_EQ(find_view("8"), nullptr);
}

TEST(TopKeys, EveryKey) {
  ui_state s;
  s.current = find_view("waits");
  EXPECT_EQ(on_key(s, '3'), action::refresh);
  EXPECT_EQ(s.current->name, "statements");
  EXPECT_EQ(on_key(s, '1'), action::refresh);
  EXPECT_EQ(sort_column_of(s), 2);  // time/s
  EXPECT_EQ(on_key(s, 's'), action::redraw);
  EXPECT_EQ(sort_column_of(s), 3);
  for (int i = 0; i < 2; ++i) on_key(s, 's');
  EXPECT_EQ(sort_column_of(s), 0);  // wraps around
  on_key(s, 'r');
  EXPECT_TRUE(s.reversed);
  EXPECT_EQ(on_key(s, '/'), action::redraw);
  for (char c : std::string("lockx")) on_key(s, c);
  on_key(s, KEY_BACKSPACE);
  EXPECT_EQ(on_key(s, '\n'), action::refresh);
  EXPECT_EQ(s.filter, "lock");
  EXPECT_FALSE(s.typing_filter);
  on_key(s, '/');
  on_key(s, 27);  // Esc clears
  EXPECT_EQ(s.filter, "");
  on_key(s, 'p');
  EXPECT_TRUE(s.paused);
  s.interval = 1;
  on_key(s, '+');
  EXPECT_DOUBLE_EQ(s.interval, 2);
  for (int i = 0; i < 10; ++i) on_key(s, '-');
  EXPECT_DOUBLE_EQ(s.interval, 0.25);  // the floor
  s.last.rows.rows.resize(3);
  on_key(s, KEY_DOWN);
  on_key(s, KEY_DOWN);
  on_key(s, KEY_DOWN);
  EXPECT_EQ(s.selected, 2);  // the last row
  on_key(s, KEY_UP);
  EXPECT_EQ(s.selected, 1);
  EXPECT_EQ(on_key(s, '\n'), action::detail);
  EXPECT_EQ(on_key(s, 'h'), action::redraw);
  EXPECT_TRUE(s.help);
  EXPECT_EQ(on_key(s, '5'), action::redraw);  // any key closes the help, no view change
  EXPECT_FALSE(s.help);
  EXPECT_EQ(s.current->name, "waits");
  EXPECT_EQ(on_key(s, KEY_RESIZE), action::redraw);
  EXPECT_EQ(on_key(s, 'q'), action::quit);
}

}  // namespace
}  // namespace pfs::top
