// Metadata locks end to end, on real threads: thread A holds EXCLUSIVE on TABLE s.t,
// thread B requests SHARED_READ and waits PENDING until A releases, then is
// GRANTED. metadata_locks is read at each step, and so is B's wait of class
// wait/lock/metadata/sql/mdl (its object columns, its nesting in B's statement,
// the exact counts in the wait summaries); then the other statuses, the table
// full (metadata_locks_lost), bad arguments, and the class disabled.
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs_metadata.h"
#include "agent/provider/pfs_work.h"
#include "agent/reader/reader.h"
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
using pfs::test::status_value;

constexpr const char* kMdlClass = "wait/lock/metadata/sql/mdl";

options mdl_options(const char* tag, std::uint32_t max_locks = 8) {
  options o = small_options(tag);
  o.sizes.max_metadata_locks = max_locks;
  o.consumers = "events_waits_current=ON,events_waits_history=ON,events_waits_history_long=ON";
  return o;
}

std::vector<named_row> locks() { return scan("metadata_locks"); }

// The rows of table about the metadata class, of one thread (0: all).
std::vector<named_row> mdl_waits(const char* table, std::uint64_t thread) {
  std::vector<named_row> out;
  for (auto& r : scan(table))
    if (S(r, "event_name") == kMdlClass &&
        (thread == 0 || I(r, "thread_id") == static_cast<std::int64_t>(thread)))
      out.push_back(r);
  return out;
}

std::int64_t count_star(const char* table, std::uint64_t thread = 0) {
  for (const auto& r : scan(table))
    if (S(r, "event_name") == kMdlClass &&
        (thread == 0 || I(r, "thread_id") == static_cast<std::int64_t>(thread)))
      return I(r, "count_star");
  return -1;
}

// One step of the script: each side waits for the step the other reached.
struct script {
  std::mutex m;
  std::condition_variable cv;
  int step = 0;
  void reach(int s) {
    std::lock_guard<std::mutex> g(m);
    step = s;
    cv.notify_all();
  }
  void wait_for(int s) {
    std::unique_lock<std::mutex> g(m);
    cv.wait(g, [&] { return step >= s; });
  }
};

TEST(MetadataLocks, ABlockedRequestWaitsPendingUntilTheHolderReleases) {
  in_child([] {
    ASSERT_TRUE(init(mdl_options("mdl_script")));
    script sc;
    int ticket_a = 0, ticket_b = 0;
    std::uint64_t a_id = 0, b_id = 0;
    std::thread a([&] {
      a_id = thread_id();
      metadata_lock lock(&ticket_a, "TABLE", "s", "t", PFS_MDL_EXCLUSIVE, PFS_MDL_TRANSACTION);
      ASSERT_TRUE(lock);
      lock.granted();  // nobody held it: no wait
      sc.reach(1);
      sc.wait_for(3);  // B waits meanwhile
    });                // released
    sc.wait_for(1);
    // A's lock alone, every column.
    auto rows = locks();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(S(rows[0], "object_type"), "TABLE");
    EXPECT_EQ(S(rows[0], "object_schema"), "s");
    EXPECT_EQ(S(rows[0], "object_name"), "t");
    EXPECT_EQ(S(rows[0], "column_name"), "<NULL>");
    EXPECT_EQ(I(rows[0], "object_instance_begin"),
              static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(&ticket_a)));
    EXPECT_EQ(S(rows[0], "lock_type"), "EXCLUSIVE");
    EXPECT_EQ(S(rows[0], "lock_duration"), "TRANSACTION");
    EXPECT_EQ(S(rows[0], "lock_status"), "GRANTED");
    EXPECT_NE(S(rows[0], "source").find("test_metadata_locks.cpp:"), std::string::npos)
        << S(rows[0], "source");
    EXPECT_EQ(I(rows[0], "owner_thread_id"), static_cast<std::int64_t>(a_id));
    EXPECT_GE(I(rows[0], "owner_event_id"), 1);

    std::int64_t b_statement = 0;
    std::thread b([&] {
      b_id = thread_id();
      const pfs_key q = pfs_register_statement("app", "request");
      const int level = pfs_statement_start(q, "s", __FILE__, __LINE__);
      for (const auto& r : scan("events_statements_current"))
        if (I(r, "thread_id") == static_cast<std::int64_t>(b_id)) b_statement = I(r, "event_id");
      metadata_lock lock(&ticket_b, "TABLE", "s", "t", PFS_MDL_SHARED_READ, PFS_MDL_TRANSACTION);
      ASSERT_TRUE(lock);
      lock.wait([&] {
        sc.reach(2);
        sc.wait_for(4);  // A released
      });
      lock.granted();
      sc.reach(5);
      sc.wait_for(6);
      pfs_statement_end(level);
    });
    sc.wait_for(2);
    // B PENDING behind A's EXCLUSIVE; B's wait is running.
    rows = locks();
    ASSERT_EQ(rows.size(), 2u);
    int pending = 0, granted = 0;
    for (const auto& r : rows) {
      if (I(r, "owner_thread_id") == static_cast<std::int64_t>(b_id)) {
        ++pending;
        EXPECT_EQ(S(r, "lock_type"), "SHARED_READ");
        EXPECT_EQ(S(r, "lock_status"), "PENDING");
      } else {
        ++granted;
        EXPECT_EQ(S(r, "lock_status"), "GRANTED");
      }
    }
    EXPECT_EQ(pending, 1);
    EXPECT_EQ(granted, 1);
    std::int64_t b_owner_event = 0;
    for (const auto& r : rows)
      if (I(r, "owner_thread_id") == static_cast<std::int64_t>(b_id)) b_owner_event = I(r, "owner_event_id");
    auto current = mdl_waits("events_waits_current", b_id);
    ASSERT_EQ(current.size(), 1u);
    const named_row& w = current[0];
    EXPECT_EQ(I(w, "end_event_id"), -1);  // running
    EXPECT_EQ(S(w, "object_type"), "TABLE");
    EXPECT_EQ(S(w, "object_schema"), "s");
    EXPECT_EQ(S(w, "object_name"), "t");
    EXPECT_EQ(S(w, "index_name"), "<NULL>");
    EXPECT_EQ(S(w, "operation"), "metadata lock");
    EXPECT_EQ(I(w, "object_instance_begin"),
              static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(&ticket_b)));
    EXPECT_EQ(S(w, "nesting_event_type"), "STATEMENT");
    EXPECT_EQ(I(w, "nesting_event_id"), b_statement);
    // As MySQL: the lock's OWNER_EVENT_ID is the thread's event counter when it
    // was requested, which the wait that followed took.
    EXPECT_EQ(b_owner_event, I(w, "event_id"));
    EXPECT_EQ(count_star("events_waits_summary_global_by_event_name"), 0);  // not ended yet

    sc.reach(3);  // A releases
    a.join();
    sc.reach(4);
    sc.wait_for(5);
    rows = locks();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(I(rows[0], "owner_thread_id"), static_cast<std::int64_t>(b_id));
    EXPECT_EQ(S(rows[0], "lock_status"), "GRANTED");
    // One wait in all, B's, timed, in the history with the lock's object columns.
    EXPECT_EQ(count_star("events_waits_summary_global_by_event_name"), 1);
    EXPECT_EQ(count_star("events_waits_summary_by_thread_by_event_name", b_id), 1);
    EXPECT_EQ(count_star("events_waits_summary_by_thread_by_event_name", a_id), -1);  // A exited
    auto history = mdl_waits("events_waits_history_long", 0);
    ASSERT_EQ(history.size(), 1u);
    EXPECT_EQ(I(history[0], "thread_id"), static_cast<std::int64_t>(b_id));
    EXPECT_GT(I(history[0], "timer_wait"), 0);
    EXPECT_EQ(S(history[0], "object_name"), "t");
    sc.reach(6);
    b.join();
    EXPECT_TRUE(locks().empty());
    // Released but not reused: the wait still names the lock (MySQL's version check).
    history = mdl_waits("events_waits_history_long", 0);
    ASSERT_EQ(history.size(), 1u);
    EXPECT_EQ(S(history[0], "object_type"), "TABLE");
  });
}

TEST(MetadataLocks, StatusesChangeInPlace) {
  in_child([] {
    ASSERT_TRUE(init(mdl_options("mdl_status")));
    int ticket = 0;
    pfs_metadata_lock* l =
        pfs_create_metadata_lock(&ticket, "TENANT", nullptr, "acme", "quota", PFS_MDL_SHARED_UPGRADABLE,
                                 PFS_MDL_EXPLICIT, PFS_MDL_PENDING, "tenant.cpp", 7);
    ASSERT_NE(l, nullptr);
    const auto status = [] {
      const auto rows = locks();
      return rows.size() == 1 ? S(rows[0], "lock_status")
                              : std::string("rows: ") + std::to_string(rows.size());
    };
    EXPECT_EQ(status(), "PENDING");
    const std::vector<std::pair<int, const char*>> steps = {
        {PFS_MDL_VICTIM, "VICTIM"},   {PFS_MDL_TIMEOUT, "TIMEOUT"},
        {PFS_MDL_KILLED, "KILLED"},   {PFS_MDL_PRE_ACQUIRE_NOTIFY, "PRE_ACQUIRE_NOTIFY"},
        {PFS_MDL_GRANTED, "GRANTED"}, {PFS_MDL_POST_RELEASE_NOTIFY, "POST_RELEASE_NOTIFY"}};
    for (const auto& [value, name] : steps) {
      pfs_set_metadata_lock_status(l, value);
      EXPECT_EQ(status(), name);
    }
    pfs_set_metadata_lock_status(l, 0);  // out of range: ignored
    pfs_set_metadata_lock_status(l, 8);
    EXPECT_EQ(status(), "POST_RELEASE_NOTIFY");
    const named_row r = locks()[0];
    EXPECT_EQ(S(r, "object_type"), "TENANT");
    EXPECT_EQ(S(r, "object_schema"), "<NULL>");
    EXPECT_EQ(S(r, "object_name"), "acme");
    EXPECT_EQ(S(r, "column_name"), "quota");
    EXPECT_EQ(S(r, "lock_type"), "SHARED_UPGRADABLE");
    EXPECT_EQ(S(r, "lock_duration"), "EXPLICIT");
    EXPECT_EQ(S(r, "source"), "tenant.cpp:7");
    pfs_destroy_metadata_lock(l);
    EXPECT_TRUE(locks().empty());
    // The C++ API's statuses.
    {
      metadata_lock m(&ticket, "SCHEMA", "s", nullptr, PFS_MDL_INTENTION_EXCLUSIVE, PFS_MDL_STATEMENT);
      m.timeout();
      EXPECT_EQ(status(), "TIMEOUT");
      m.victim();
      EXPECT_EQ(status(), "VICTIM");
      m.killed();
      EXPECT_EQ(status(), "KILLED");
      EXPECT_EQ(S(locks()[0], "lock_duration"), "STATEMENT");
      EXPECT_EQ(S(locks()[0], "object_name"), "<NULL>");
    }
    EXPECT_TRUE(locks().empty());
  });
}

TEST(MetadataLocks, AFullTableIsCountedLostAndAReusedRecordNoLongerNamesTheOldWait) {
  in_child([] {
    ASSERT_TRUE(init(mdl_options("mdl_lost", 2)));
    int t1 = 0, t2 = 0, t3 = 0;
    pfs_metadata_lock* first =
        pfs_create_metadata_lock(&t1, "TABLE", "s", "old", nullptr, PFS_MDL_SHARED_WRITE, PFS_MDL_TRANSACTION,
                                 PFS_MDL_PENDING, __FILE__, __LINE__);
    ASSERT_NE(first, nullptr);
    pfs_wait_locker w;
    ASSERT_EQ(pfs_start_metadata_wait(&w, first, __FILE__, __LINE__), 1);
    pfs_end_metadata_wait(&w, 0);
    pfs_set_metadata_lock_status(first, PFS_MDL_GRANTED);
    pfs_destroy_metadata_lock(first);
    EXPECT_EQ(S(mdl_waits("events_waits_history", thread_id())[0], "object_name"), "old");
    // Both records taken: the old one has a new version, so the wait's object is gone.
    pfs_metadata_lock* x = pfs_create_metadata_lock(&t1, "TABLE", "s", "x", nullptr, PFS_MDL_SHARED,
                                                    PFS_MDL_STATEMENT, PFS_MDL_GRANTED, __FILE__, __LINE__);
    pfs_metadata_lock* y = pfs_create_metadata_lock(&t2, "TABLE", "s", "y", nullptr, PFS_MDL_SHARED,
                                                    PFS_MDL_STATEMENT, PFS_MDL_GRANTED, __FILE__, __LINE__);
    ASSERT_NE(x, nullptr);
    ASSERT_NE(y, nullptr);
    const auto waits = mdl_waits("events_waits_history", thread_id());
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(S(waits[0], "object_type"), "<NULL>");
    EXPECT_EQ(S(waits[0], "object_name"), "<NULL>");
    EXPECT_EQ(status_value("metadata_locks_lost"), 0);
    pfs_metadata_lock* z = pfs_create_metadata_lock(&t3, "TABLE", "s", "z", nullptr, PFS_MDL_SHARED,
                                                    PFS_MDL_STATEMENT, PFS_MDL_PENDING, __FILE__, __LINE__);
    EXPECT_EQ(z, nullptr);
    EXPECT_EQ(status_value("metadata_locks_lost"), 1);
    // Every call on the NULL handle does nothing.
    EXPECT_EQ(pfs_start_metadata_wait(&w, z, __FILE__, __LINE__), 0);
    pfs_set_metadata_lock_status(z, PFS_MDL_GRANTED);
    pfs_destroy_metadata_lock(z);
    EXPECT_EQ(locks().size(), 2u);
    EXPECT_EQ(count_star("events_waits_summary_global_by_event_name"), 1);
    pfs_destroy_metadata_lock(x);
    pfs_destroy_metadata_lock(y);
    EXPECT_TRUE(locks().empty());
  });
}

TEST(MetadataLocks, BadArgumentsRecordNothing) {
  in_child([] {
    ASSERT_TRUE(init(mdl_options("mdl_bad")));
    int t = 0;
    const std::string long_type(32, 'T'), long_name(64, 'n');
    const auto make = [&](const char* type, const char* name, int lock_type, int duration, int status) {
      return pfs_create_metadata_lock(&t, type, "s", name, nullptr, lock_type, duration, status, __FILE__,
                                      __LINE__);
    };
    EXPECT_EQ(make(nullptr, "t", PFS_MDL_SHARED, PFS_MDL_STATEMENT, PFS_MDL_PENDING), nullptr);
    EXPECT_EQ(make("", "t", PFS_MDL_SHARED, PFS_MDL_STATEMENT, PFS_MDL_PENDING), nullptr);
    EXPECT_EQ(make(long_type.c_str(), "t", PFS_MDL_SHARED, PFS_MDL_STATEMENT, PFS_MDL_PENDING), nullptr);
    EXPECT_EQ(make("TABLE", long_name.c_str(), PFS_MDL_SHARED, PFS_MDL_STATEMENT, PFS_MDL_PENDING), nullptr);
    EXPECT_EQ(make("TABLE", "t", -1, PFS_MDL_STATEMENT, PFS_MDL_PENDING), nullptr);
    EXPECT_EQ(make("TABLE", "t", PFS_MDL_EXCLUSIVE + 1, PFS_MDL_STATEMENT, PFS_MDL_PENDING), nullptr);
    EXPECT_EQ(make("TABLE", "t", PFS_MDL_SHARED, PFS_MDL_EXPLICIT + 1, PFS_MDL_PENDING), nullptr);
    EXPECT_EQ(make("TABLE", "t", PFS_MDL_SHARED, PFS_MDL_STATEMENT, 0), nullptr);
    EXPECT_EQ(make("TABLE", "t", PFS_MDL_SHARED, PFS_MDL_STATEMENT, PFS_MDL_POST_RELEASE_NOTIFY + 1),
              nullptr);
    EXPECT_TRUE(locks().empty());
    EXPECT_EQ(status_value("metadata_locks_lost"), 0);
    pfs_wait_locker w;
    EXPECT_EQ(pfs_start_metadata_wait(&w, nullptr, __FILE__, __LINE__), 0);
    pfs_end_metadata_wait(nullptr, 0);
    const std::string longest_type(31, 'T'), longest_name(63, 'n');
    pfs_metadata_lock* l =
        make(longest_type.c_str(), longest_name.c_str(), PFS_MDL_SHARED, PFS_MDL_STATEMENT, PFS_MDL_PENDING);
    ASSERT_NE(l, nullptr);
    EXPECT_EQ(S(locks()[0], "object_type"), longest_type);
    EXPECT_EQ(S(locks()[0], "object_name"), longest_name);
    pfs_destroy_metadata_lock(l);
  });
}

TEST(MetadataLocks, TheClassDisabledRecordsNoLockAndNoWait) {
  in_child([] {
    ASSERT_TRUE(init(mdl_options("mdl_off")));
    bool found = false;
    for (const auto& r : scan("setup_instruments")) {
      if (S(r, "name") != kMdlClass) continue;
      found = true;
      EXPECT_EQ(S(r, "enabled"), "YES");
      EXPECT_EQ(S(r, "timed"), "YES");
    }
    EXPECT_TRUE(found);
    int t = 0;
    metadata_lock held(&t, "TABLE", "s", "t", PFS_MDL_EXCLUSIVE, PFS_MDL_TRANSACTION);
    ASSERT_TRUE(held);
    ASSERT_TRUE(set_instrument(kMdlClass, false, false));
    {
      metadata_lock off(&t, "TABLE", "s", "t", PFS_MDL_SHARED_READ, PFS_MDL_TRANSACTION);
      EXPECT_FALSE(off);
      off.wait([] {});
    }
    held.wait([] {});  // a lock recorded before: its wait is not recorded either
    EXPECT_EQ(locks().size(), 1u);
    EXPECT_EQ(count_star("events_waits_summary_global_by_event_name"), 0);
    ASSERT_TRUE(set_instrument(kMdlClass, true, true));
    held.wait([] {});
    EXPECT_EQ(count_star("events_waits_summary_global_by_event_name"), 1);
  });
}

}  // namespace
