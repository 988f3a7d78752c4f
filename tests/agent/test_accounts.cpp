// Accounts, users and hosts end to end: threads of known actors do known work,
// read back exactly from accounts, users, hosts and the summaries by account,
// user and host (waits, stages, statements, transactions, memory, errors); a
// thread that changes actor, threads that exit, TRUNCATE of each level as MySQL
// does it, background threads in the NULL rows, and full arrays counted as lost.
#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_error.h"
#include "agent/provider/pfs_memory.h"
#include "agent/provider/pfs_work.h"
#include "agent/reader/reader.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using pfs::layout::kHolderAccount;
using pfs::layout::kHolderUser;
using pfs::test::I;
using pfs::test::in_child;
using pfs::test::named_row;
using pfs::test::S;
using pfs::test::scan;
using pfs::test::small_options;

// The value of column of the row whose key columns (user, host; "<NULL>" for
// NULL) and event_name match, -2 when there is none.
std::int64_t value(const char* table, const std::string& user, const std::string& host,
                   const std::string& event, const char* column) {
  for (const auto& r : scan(table)) {
    if (r.count("user") != 0 && S(r, "user") != user) continue;
    if (r.count("host") != 0 && S(r, "host") != host) continue;
    if (r.count("event_name") != 0 && S(r, "event_name") != event) continue;
    return I(r, column);
  }
  return -2;
}

std::int64_t waits(const char* level, const std::string& user, const std::string& host) {
  const std::string t = std::string("events_waits_summary_by_") + level + "_by_event_name";
  return value(t.c_str(), user, host, "wait/synch/mutex/acct/m", "count_star");
}

// Runs body on a new thread that declared the actor (user, host) first.
void as(const char* user, const char* host, const std::function<void()>& body) {
  std::thread([&] {
    set_thread_actor(user, host);
    body();
  }).join();
}

TEST(Accounts, EachLevelCountsItsThreadsExactly) {
  in_child([] {
    ASSERT_TRUE(init(small_options("acct_exact")));
    register_thread("test", "main");  // a thread without an actor
    pfs::mutex m{"acct", "m"};
    statement_class select{"sql", "select"};
    const auto lock_n = [&m](int n) {
      for (int i = 0; i < n; ++i) {
        m.lock();
        m.unlock();
      }
    };
    // Two threads of alice@h1 (one alive while we read), one of bob@h1, one of alice@h2.
    std::thread alive([&] {
      set_thread_actor("alice", "h1");
      lock_n(7);
      std::this_thread::sleep_for(std::chrono::milliseconds(300));
    });
    as("alice", "h1", [&] {
      lock_n(100);
      for (int i = 0; i < 3; ++i) statement s(select);
    });
    as("bob", "h1", [&] { lock_n(20); });
    as("alice", "h2", [&] { lock_n(5); });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // Live threads' rows and exited ones' alike.
    EXPECT_EQ(waits("account", "alice", "h1"), 107);
    EXPECT_EQ(waits("account", "bob", "h1"), 20);
    EXPECT_EQ(waits("account", "alice", "h2"), 5);
    EXPECT_EQ(waits("user", "alice", ""), 112);
    EXPECT_EQ(waits("user", "bob", ""), 20);
    EXPECT_EQ(waits("host", "", "h1"), 127);
    EXPECT_EQ(waits("host", "", "h2"), 5);
    EXPECT_EQ(value("events_statements_summary_by_account_by_event_name", "alice", "h1",
                    "statement/sql/select", "count_star"),
              3);
    EXPECT_EQ(value("events_statements_summary_by_host_by_event_name", "", "h2", "statement/sql/select",
                    "count_star"),
              0);
    EXPECT_EQ(value("accounts", "alice", "h1", "", "current_connections"), 1);
    EXPECT_EQ(value("accounts", "alice", "h1", "", "total_connections"), 2);
    EXPECT_EQ(value("users", "alice", "", "", "total_connections"), 3);
    EXPECT_EQ(value("hosts", "", "h1", "", "total_connections"), 3);
    // This thread never declared an actor: the NULL rows (MySQL's internal threads).
    EXPECT_GE(value("accounts", "<NULL>", "<NULL>", "", "current_connections"), 1);
    alive.join();
    EXPECT_EQ(value("accounts", "alice", "h1", "", "current_connections"), 0);
    EXPECT_EQ(waits("account", "alice", "h1"), 107);
    // The global table still has every wait once.
    EXPECT_EQ(
        value("events_waits_summary_global_by_event_name", "", "", "wait/synch/mutex/acct/m", "count_star"),
        132);
  });
}

TEST(Accounts, AThreadThatChangesActorLeavesItsWorkWithTheOldAccount) {
  in_child([] {
    ASSERT_TRUE(init(small_options("acct_move")));
    pfs::mutex m{"acct", "m"};
    std::thread([&] {
      set_thread_actor("carol", "h1");
      for (int i = 0; i < 10; ++i) {
        m.lock();
        m.unlock();
      }
      pfs_register_error(1213, "ER_LOCK_DEADLOCK", "40001");
      pfs_log_error(1213, PFS_ERROR_RAISED);
      set_thread_actor("dave", "h1");
      for (int i = 0; i < 4; ++i) {
        m.lock();
        m.unlock();
      }
      EXPECT_EQ(waits("account", "carol", "h1"), 10);
      EXPECT_EQ(waits("account", "dave", "h1"), 4);
      EXPECT_EQ(waits("host", "", "h1"), 14);
      // MySQL moves the thread's statistics: its own row restarts.
      EXPECT_EQ(value("events_waits_summary_by_thread_by_event_name", "", "", "wait/synch/mutex/acct/m",
                      "count_star"),
                4);
      bool found = false;
      for (const auto& r : scan("events_errors_summary_by_account_by_error"))
        if (S(r, "user") == "carol" && I(r, "error_number") == 1213) {
          found = true;
          EXPECT_EQ(I(r, "sum_error_raised"), 1);
        }
      EXPECT_TRUE(found);
      EXPECT_EQ(value("accounts", "carol", "h1", "", "current_connections"), 0);
      EXPECT_EQ(value("accounts", "dave", "h1", "", "current_connections"), 1);
    }).join();
  });
}

TEST(Accounts, TruncateMovesEachLevelIntoTheNextAsMySql) {
  in_child([] {
    ASSERT_TRUE(init(small_options("acct_truncate")));
    pfs::mutex m{"acct", "m"};
    std::thread alive([&] {
      set_thread_actor("erin", "h1");
      for (int i = 0; i < 6; ++i) {
        m.lock();
        m.unlock();
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(400));
    });
    as("erin", "h1", [&] {
      for (int i = 0; i < 9; ++i) {
        m.lock();
        m.unlock();
      }
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const region_map& r = *current_region();
    // By thread: the live thread's rows move into its account.
    setup::reset_thread_summaries(r);
    EXPECT_EQ(waits("account", "erin", "h1"), 15);
    // By account: the accounts move into their users and hosts.
    setup::reset_holder_summaries(r, setup::kFamilyWaits, kHolderAccount);
    EXPECT_EQ(waits("account", "erin", "h1"), 0);
    EXPECT_EQ(waits("user", "erin", ""), 15);
    EXPECT_EQ(waits("host", "", "h1"), 15);
    // By user: the users empty, the hosts keep their totals.
    setup::reset_holder_summaries(r, setup::kFamilyWaits, kHolderUser);
    EXPECT_EQ(waits("user", "erin", ""), 0);
    EXPECT_EQ(waits("host", "", "h1"), 15);
    // accounts: TOTAL_CONNECTIONS restarts from the current ones.
    EXPECT_EQ(value("accounts", "erin", "h1", "", "total_connections"), 2);
    setup::reset_connections(r, kHolderAccount);
    EXPECT_EQ(value("accounts", "erin", "h1", "", "total_connections"), 1);
    alive.join();
  });
}

TEST(Accounts, MemoryIsCountedPerAccountAndAFullArrayIsLost) {
  in_child([] {
    options o = small_options("acct_lost");
    o.sizes.max_accounts = 2;  // the NULL account and one more
    ASSERT_TRUE(init(o));
    static constinit pfs::memory_class cache{"acct", "cache"};
    as("frank", "h1", [&] {
      void* p = pfs::memory::allocate(cache, 1000);
      pfs::memory::deallocate(p);
      void* q = pfs::memory::allocate(cache, 300);
      (void)q;  // held when the thread ends: still in use by the account
    });
    EXPECT_EQ(
        value("memory_summary_by_account_by_event_name", "frank", "h1", "memory/acct/cache", "count_alloc"),
        2);
    EXPECT_EQ(value("memory_summary_by_account_by_event_name", "frank", "h1", "memory/acct/cache",
                    "current_number_of_bytes_used"),
              300);
    EXPECT_EQ(
        value("memory_summary_by_user_by_event_name", "frank", "", "memory/acct/cache", "high_count_used"),
        1);
    as("grace", "h1", [] {});  // no account left: counted as lost, but her user and host exist
    EXPECT_EQ(value("accounts", "grace", "h1", "", "total_connections"), -2);
    EXPECT_EQ(value("users", "grace", "", "", "total_connections"), 1);
    std::int64_t lost = -1;
    for (const auto& row : scan("status"))
      if (S(row, "variable_name") == "accounts_lost") lost = I(row, "variable_value");
    EXPECT_EQ(lost, 1);
  });
}

}  // namespace
