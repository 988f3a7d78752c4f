// Table lock waits end to end (MySQL's psi_table.h start_table_lock_wait): a scripted
// workload of real threads taking real locks, by kind, on two tables, read back
// exactly from table_lock_waits_summary_by_table (each kind, READ, WRITE, STAR), the
// wait summaries and events_waits_history; setup_objects turning a table off or
// untimed; TRUNCATE of the table and of events_waits_summary_global_by_event_name;
// a reused share; bad arguments.
#include <gtest/gtest.h>

#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs_io.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using pfs::test::I;
using pfs::test::in_child;
using pfs::test::named_row;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::small_options;

// The column group of each PFS_TABLE_LOCK_* kind.
constexpr const char* kKindColumn[10] = {
    "read_normal",       "read_with_shared_locks",  "read_high_priority", "read_no_insert",
    "write_allow_write", "write_concurrent_insert", "write_low_priority", "write_normal",
    "read_external",     "write_external"};
bool is_read_kind(int k) { return k <= 3 || k == 8; }

named_row row_of(const char* schema, const char* name) {
  for (const auto& r : scan("table_lock_waits_summary_by_table"))
    if (S(r, "object_schema") == schema && S(r, "object_name") == name) return r;
  ADD_FAILURE() << "no row for " << schema << "." << name;
  return {};
}

std::int64_t count_of(const named_row& r, const char* group) {
  return r.empty() ? -1 : I(r, ("count_" + std::string(group)).c_str());
}
std::int64_t sum_of(const named_row& r, const char* group) {
  return r.empty() ? -1 : I(r, ("sum_timer_" + std::string(group)).c_str());
}

// A real lock on a table, taken as the kind asks (shared for the read kinds).
struct table_lock {
  std::shared_mutex m;
  void take(pfs_table* t, int kind) {
    table::lock_wait w(t, kind);
    if (is_read_kind(kind)) {
      m.lock_shared();
      w.end();
      m.unlock_shared();
    } else {
      m.lock();
      w.end();
      m.unlock();
    }
  }
};

options lock_options(const char* tag) {
  options o = small_options(tag);
  o.consumers = "events_waits_current=ON,events_waits_history=ON,events_waits_history_long=ON";
  o.sizes.history_per_thread = 16;
  return o;
}

std::int64_t global_count(const char* event_name) {
  for (const auto& r : scan("events_waits_summary_global_by_event_name"))
    if (S(r, "event_name") == event_name) return I(r, "count_star");
  return -1;
}

TEST(TableLocks, KindsAreCountedExactlyOnTwoTables) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("tl_exact"))) << last_error();
    const pfs_key io = table::register_class("store");
    ASSERT_NE(io, 0u);
    pfs_table* orders = table::declare(io, "shop", "orders");
    pfs_table* items = table::declare(io, "shop", "items");
    ASSERT_NE(orders, nullptr);
    ASSERT_NE(items, nullptr);
    table_lock orders_lock, items_lock;
    // Four threads: on orders, kind k taken k + 1 times; on items, write normal
    // three times and read external twice.
    std::vector<pfs::thread> threads;
    for (int j = 0; j < 4; ++j)
      threads.emplace_back([&] {
        for (int k = 0; k < 10; ++k)
          for (int n = 0; n <= k; ++n) orders_lock.take(orders, k);
        for (int n = 0; n < 3; ++n) items_lock.take(items, PFS_TABLE_LOCK_WRITE_NORMAL);
        for (int n = 0; n < 2; ++n) items_lock.take(items, PFS_TABLE_LOCK_READ_EXTERNAL);
      });
    for (auto& t : threads) t.join();

    const named_row o = row_of("shop", "orders");
    ASSERT_FALSE(o.empty());
    EXPECT_EQ(S(o, "object_type"), "TABLE");
    for (int k = 0; k < 10; ++k) EXPECT_EQ(count_of(o, kKindColumn[k]), 4 * (k + 1)) << kKindColumn[k];
    EXPECT_EQ(count_of(o, "read"), 4 * (1 + 2 + 3 + 4 + 9));
    EXPECT_EQ(count_of(o, "write"), 4 * (5 + 6 + 7 + 8 + 10));
    EXPECT_EQ(count_of(o, "star"), 4 * 55);
    // Timed (wait/lock/table/store/handler is TIMED): every group has a time, and
    // the groups add up.
    std::int64_t read_sum = 0, write_sum = 0;
    for (int k = 0; k < 10; ++k) {
      const std::string g = kKindColumn[k];
      EXPECT_GT(sum_of(o, g.c_str()), 0) << g;
      EXPECT_LE(I(o, ("min_timer_" + g).c_str()), I(o, ("avg_timer_" + g).c_str())) << g;
      EXPECT_LE(I(o, ("avg_timer_" + g).c_str()), I(o, ("max_timer_" + g).c_str())) << g;
      (is_read_kind(k) ? read_sum : write_sum) += sum_of(o, g.c_str());
    }
    EXPECT_EQ(sum_of(o, "read"), read_sum);
    EXPECT_EQ(sum_of(o, "write"), write_sum);
    EXPECT_EQ(I(o, "sum_timer_wait"), read_sum + write_sum);

    const named_row it = row_of("shop", "items");
    EXPECT_EQ(count_of(it, "write_normal"), 12);
    EXPECT_EQ(count_of(it, "read_external"), 8);
    EXPECT_EQ(count_of(it, "read"), 8);
    EXPECT_EQ(count_of(it, "write"), 12);
    EXPECT_EQ(count_of(it, "star"), 20);
    EXPECT_EQ(count_of(it, "read_normal"), 0);
    EXPECT_EQ(I(it, "min_timer_read_normal"), 0);  // no wait: 0, not the "no min" mark

    // Every wait summary, with its time (a lock wait encloses no other wait).
    EXPECT_EQ(global_count("wait/lock/table/store/handler"), 240);
    bool listed = false;
    for (const auto& r : scan("setup_instruments"))
      if (S(r, "name") == "wait/lock/table/store/handler")
        listed = S(r, "enabled") == "YES" && S(r, "timed") == "YES";
    EXPECT_TRUE(listed);
    // Table io saw none of it.
    for (const auto& r : scan("table_io_waits_summary_by_table")) EXPECT_EQ(I(r, "count_star"), 0);
  });
}

TEST(TableLocks, EventsShowTheOperationAndTheTable) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("tl_events"))) << last_error();
    pfs_table* orders = table::declare(table::register_class("store"), "shop", "orders");
    ASSERT_NE(orders, nullptr);
    table_lock lock;
    lock.take(orders, PFS_TABLE_LOCK_WRITE_LOW_PRIORITY);
    lock.take(orders, PFS_TABLE_LOCK_READ_NO_INSERT);
    const std::uint64_t me = thread_id();
    std::vector<std::string> ops;
    for (const auto& r : scan("events_waits_history")) {
      if (I(r, "thread_id") != static_cast<std::int64_t>(me) ||
          S(r, "event_name") != "wait/lock/table/store/handler")
        continue;
      ops.push_back(S(r, "operation"));
      EXPECT_EQ(S(r, "object_type"), "TABLE");
      EXPECT_EQ(S(r, "object_schema"), "shop");
      EXPECT_EQ(S(r, "object_name"), "orders");
      EXPECT_EQ(S(r, "index_name"), "<NULL>");
      EXPECT_EQ(I(r, "number_of_bytes"), -1);  // NULL
      EXPECT_GT(I(r, "timer_wait"), 0);
      EXPECT_NE(S(r, "source"), "<NULL>");
    }
    EXPECT_EQ(ops, (std::vector<std::string>{"write low priority", "read no insert"}));
    // The thread's summary has both.
    std::int64_t by_thread = -1;
    for (const auto& r : scan("events_waits_summary_by_thread_by_event_name"))
      if (I(r, "thread_id") == static_cast<std::int64_t>(me) &&
          S(r, "event_name") == "wait/lock/table/store/handler")
        by_thread = I(r, "count_star");
    EXPECT_EQ(by_thread, 2);
  });
}

TEST(TableLocks, SetupObjectsTurnATableOffOrUntimed) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("tl_objects"))) << last_error();
    const region_map& r = *current_region();
    const pfs_key io = table::register_class("store");
    pfs_table* orders = table::declare(io, "shop", "orders");
    pfs_table* items = table::declare(io, "shop", "items");
    pfs_table* user = table::declare(io, "mysql", "user");  // MySQL's default: mysql.% off
    {
      setup_lock_guard lock(r);
      ASSERT_EQ(setup::insert_object(r, "shop", "orders", false, false), setup::actor_result::ok);
      ASSERT_EQ(setup::insert_object(r, "shop", "items", true, false), setup::actor_result::ok);
    }
    table_lock lock;
    for (int n = 0; n < 3; ++n) {
      lock.take(orders, PFS_TABLE_LOCK_WRITE_NORMAL);
      lock.take(items, PFS_TABLE_LOCK_WRITE_NORMAL);
      lock.take(user, PFS_TABLE_LOCK_READ_NORMAL);
    }
    EXPECT_EQ(count_of(row_of("shop", "orders"), "star"), 0);
    EXPECT_EQ(count_of(row_of("mysql", "user"), "star"), 0);
    const named_row it = row_of("shop", "items");
    EXPECT_EQ(count_of(it, "write_normal"), 3);  // counted, not timed
    EXPECT_EQ(sum_of(it, "write_normal"), 0);
    EXPECT_EQ(global_count("wait/lock/table/store/handler"), 3);
  });
}

TEST(TableLocks, TruncateResetsThemAndAReusedShareStartsAtZero) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("tl_truncate"))) << last_error();
    const region_map& r = *current_region();
    const pfs_key io = table::register_class("store");
    pfs_table* orders = table::declare(io, "shop", "orders");
    table_lock lock;
    auto work = [&] {
      for (int n = 0; n < 5; ++n) lock.take(orders, PFS_TABLE_LOCK_READ_HIGH_PRIORITY);
      { table::io w(orders, PFS_TABLE_FETCH); }
    };
    work();
    EXPECT_EQ(count_of(row_of("shop", "orders"), "read_high_priority"), 5);
    // Table io's TRUNCATE leaves the lock waits.
    setup::reset_table_summaries(r);
    EXPECT_EQ(count_of(row_of("shop", "orders"), "star"), 5);
    // Their own TRUNCATE (kResetTableLocks) resets them, and only them.
    work();
    setup::reset_table_lock_summaries(r);
    const named_row z = row_of("shop", "orders");
    EXPECT_EQ(count_of(z, "star"), 0);
    EXPECT_EQ(I(z, "sum_timer_wait"), 0);
    EXPECT_EQ(I(z, "max_timer_read_high_priority"), 0);
    EXPECT_EQ(global_count("wait/lock/table/store/handler"), 10);
    EXPECT_EQ(global_count("wait/io/table/store/handler"), 2);
    // events_waits_summary_global_by_event_name's TRUNCATE resets them too (MySQL).
    work();
    EXPECT_EQ(count_of(row_of("shop", "orders"), "star"), 5);
    setup::reset_wait_summaries(r);
    EXPECT_EQ(count_of(row_of("shop", "orders"), "star"), 0);
    EXPECT_EQ(global_count("wait/lock/table/store/handler"), 0);
    // A dropped table's share, reused by another table, starts with no lock waits.
    work();
    pfs_drop_table(orders);
    pfs_table* items = table::declare(io, "shop", "items");
    EXPECT_EQ(items, orders);  // the same slot
    EXPECT_EQ(count_of(row_of("shop", "items"), "star"), 0);
    lock.take(items, PFS_TABLE_LOCK_WRITE_EXTERNAL);
    EXPECT_EQ(count_of(row_of("shop", "items"), "write_external"), 1);
    EXPECT_EQ(scan("table_lock_waits_summary_by_table").size(), 1u);
  });
}

TEST(TableLocks, BadArgumentsRecordNothing) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("tl_bad"))) << last_error();
    pfs_table* orders = table::declare(table::register_class("store"), "shop", "orders");
    pfs_wait_locker l;
    EXPECT_EQ(pfs_start_table_lock_wait(&l, nullptr, PFS_TABLE_LOCK_READ_NORMAL, __FILE__, __LINE__), 0);
    EXPECT_EQ(pfs_start_table_lock_wait(&l, orders, -1, __FILE__, __LINE__), 0);
    EXPECT_EQ(pfs_start_table_lock_wait(&l, orders, 10, __FILE__, __LINE__), 0);
    { table::lock_wait w(nullptr, PFS_TABLE_LOCK_WRITE_NORMAL); }  // a lost table: no crash
    EXPECT_EQ(count_of(row_of("shop", "orders"), "star"), 0);
    ASSERT_EQ(pfs_start_table_lock_wait(&l, orders, PFS_TABLE_LOCK_WRITE_EXTERNAL, __FILE__, __LINE__), 1);
    pfs_end_table_lock_wait(&l);
    EXPECT_EQ(count_of(row_of("shop", "orders"), "write_external"), 1);
  });
}

}  // namespace
