// End to end: the agent writes a region, the reader turns it into rows. Checks that
// both sides read the layout contract the same way, and (under TSan) that scanning a
// region while instrumented threads write it is race-free.
#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/reader/reader.h"
#include "tests/agent/agent_test_util.h"

namespace {

using namespace pfs;
using pfs::reader::column_type;
using pfs::reader::region_reader;
using pfs::reader::row;
using pfs::reader::table_def;
using pfs::reader::table_id;

std::vector<row> scan(region_reader& r, table_id id) {
  std::vector<row> rows;
  const table_def& t = reader::table(id);
  region_error err = r.scan(t, rows);
  EXPECT_FALSE(err) << t.name << ": " << err.message;
  for (const row& x : rows) {
    EXPECT_EQ(x.size(), t.columns.size());
    for (std::size_t i = 0; i < x.size() && i < t.columns.size(); ++i)
      if (x[i].null) {
        EXPECT_TRUE(t.columns[i].nullable) << t.name << "." << t.columns[i].name;
      }
  }
  return rows;
}

std::string text(const reader::cell& c) { return c.null ? "<NULL>" : c.s; }

TEST(ReaderAgent, AgentEventsReadBackAsRows) {
  pfs::test::in_child([] {
    const options o = pfs::test::small_options("reader_e2e");
    ASSERT_TRUE(init(o)) << last_error();
    register_thread("app", "main");
    const std::uint64_t tid = thread_id();
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 3; ++i) {
      pfs::lock_guard g(m);
    }
    const unsigned line = __LINE__ - 2;
    // A wait left running (the thread is "blocked" in it).
    pfs_wait_locker l;
    ASSERT_EQ(pfs_start_mutex_wait(&l, m.psi(), PFS_OP_LOCK, "blocked.cpp", 42), 1);

    region_error err;
    auto r = region_reader::open(o.region_path, false, err);
    ASSERT_NE(r, nullptr) << err.message;
    const std::string mname = "wait/synch/mutex/app/m";
    const auto addr = static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(&m));

    bool found = false;
    for (const row& x : scan(*r, table_id::setup_instruments)) {
      EXPECT_NE(x[0].s.rfind("thread/", 0), 0u) << "thread classes are not instruments";
      if (x[0].s == mname) {
        found = true;
        EXPECT_EQ(text(x[1]), "YES");
        EXPECT_EQ(text(x[2]), "YES");
      }
    }
    EXPECT_TRUE(found);
    EXPECT_NE(r->find_class(mname), 0u);

    found = false;
    for (const row& x : scan(*r, table_id::threads)) {
      if (x[0].i != static_cast<std::int64_t>(tid)) continue;
      found = true;
      EXPECT_EQ(text(x[1]), "thread/app/main");
      EXPECT_EQ(text(x[2]), "BACKGROUND");
      EXPECT_EQ(text(x[13]), "YES");  // instrumented
      EXPECT_FALSE(x[16].null);       // thread_os_id
    }
    EXPECT_TRUE(found);

    std::vector<row> hist;
    for (row& x : scan(*r, table_id::events_waits_history))
      if (x[0].i == static_cast<std::int64_t>(tid)) hist.push_back(std::move(x));
    ASSERT_EQ(hist.size(), 3u);
    for (std::size_t i = 0; i < hist.size(); ++i) {
      const row& x = hist[i];
      if (i > 0) {
        EXPECT_GT(x[1].i, hist[i - 1][1].i) << "oldest first";
      }
      EXPECT_EQ(x[2].i, x[1].i + 1);  // end_event_id: the next event id
      EXPECT_EQ(text(x[3]), mname);
      EXPECT_EQ(text(x[4]), "test_reader_agent.cpp:" + std::to_string(line));
      ASSERT_FALSE(x[5].null);
      ASSERT_FALSE(x[6].null);
      EXPECT_EQ(x[7].i, x[6].i - x[5].i);
      EXPECT_TRUE(x[8].null);
      EXPECT_EQ(x[13].i, addr);
      EXPECT_EQ(text(x[16]), "lock");
      EXPECT_TRUE(x[17].null);
    }

    found = false;
    for (const row& x : scan(*r, table_id::events_waits_current)) {
      if (x[0].i != static_cast<std::int64_t>(tid) || !x[2].null) continue;
      found = true;  // the running wait
      EXPECT_EQ(text(x[3]), mname);
      EXPECT_EQ(text(x[4]), "blocked.cpp:42");
      ASSERT_FALSE(x[5].null);
      ASSERT_FALSE(x[6].null) << "timer_end of a running wait is now";
      EXPECT_GE(x[6].i, x[5].i);
      EXPECT_EQ(x[7].i, x[6].i - x[5].i);
    }
    EXPECT_TRUE(found);
    EXPECT_GE(scan(*r, table_id::events_waits_history_long).size(), 3u);

    pfs_end_mutex_wait(&l, 0);
    found = false;
    for (const row& x : scan(*r, table_id::mutex_instances)) {
      if (x[1].i != addr) continue;
      found = true;
      EXPECT_EQ(text(x[0]), mname);
      EXPECT_EQ(x[2].i, static_cast<std::int64_t>(tid));
    }
    EXPECT_TRUE(found);
    pfs_unlock_mutex(m.psi());  // (the real std::mutex was never taken)

    std::int64_t by_instance = -1, global = -1, by_thread = -1;
    for (const row& x : scan(*r, table_id::events_waits_summary_by_instance))
      if (x[1].i == addr) by_instance = x[2].i;
    for (const row& x : scan(*r, table_id::events_waits_summary_global_by_event_name))
      if (x[0].s == mname) global = x[1].i;
    for (const row& x : scan(*r, table_id::events_waits_summary_by_thread_by_event_name))
      if (x[0].i == static_cast<std::int64_t>(tid) && x[1].s == mname) by_thread = x[2].i;
    EXPECT_EQ(by_instance, 4);
    EXPECT_EQ(global, 4);
    EXPECT_EQ(by_thread, 4);

    std::map<std::string, std::int64_t> status;
    for (const row& x : scan(*r, table_id::status)) status[x[0].s] = x[1].i;
    EXPECT_EQ(status["provider_alive"], 1);
    EXPECT_EQ(status["pid"], getpid());
    EXPECT_EQ(status["ready"], 1);
    EXPECT_EQ(status["torn_rows_skipped"], 0);
    EXPECT_EQ(status["invalid_rows_skipped"], 0);

    auto consumers = scan(*r, table_id::setup_consumers);
    ASSERT_EQ(consumers.size(), std::size_t{pfs::layout::kConsumerCount});
    // MySQL 8.0's defaults for the units of work; the wait consumers all on.
    const std::set<std::string> off = {"events_stages_current",          "events_stages_history",
                                       "events_stages_history_long",     "events_statements_cpu",
                                       "events_statements_history_long", "events_transactions_history_long"};
    for (const row& x : consumers) EXPECT_EQ(text(x[1]), off.count(x[0].s) ? "NO" : "YES") << x[0].s;
    auto timer = scan(*r, table_id::setup_timers);
    ASSERT_EQ(timer.size(), 5u);
    EXPECT_EQ(text(timer[1][1]), std::string(timers::timer_name(static_cast<timers::timer_kind>(
                                     current_region()->header().wait_timer))));
    shutdown();
  });
}

// Instrumented threads lock and unlock while the reader scans every table: every
// accepted row is well formed and internally consistent.
TEST(ReaderAgent, ScansWhileThreadsWrite) {
  pfs::test::in_child([] {
    options o = pfs::test::small_options("reader_live");
    ASSERT_TRUE(init(o)) << last_error();
    pfs::mutex a{"app", "a"};
    pfs::shared_mutex rw{"app", "rw"};
    std::atomic<bool> stop{false};
    std::vector<std::thread> workers;
    for (int w = 0; w < 2; ++w)
      workers.emplace_back([&, w] {
        register_thread("app", "worker");
        pfs::mutex own{"app", "own"};
        while (!stop.load(std::memory_order_relaxed)) {
          { pfs::lock_guard g(a); }
          { pfs::lock_guard g(own); }
          if (w == 0) {
            rw.lock();
            rw.unlock();
          } else {
            rw.lock_shared();
            rw.unlock_shared();
          }
        }
        unregister_thread();
      });
    region_error err;
    auto r = region_reader::open(o.region_path, false, err);
    ASSERT_NE(r, nullptr) << err.message;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(400);
    std::uint64_t events = 0;
    while (std::chrono::steady_clock::now() < deadline) {
      for (const table_def& t : reader::tables()) {
        auto rows = scan(*r, static_cast<table_id>(t.id));
        const auto id = static_cast<table_id>(t.id);
        if (id != table_id::events_waits_current && id != table_id::events_waits_history &&
            id != table_id::events_waits_history_long)
          continue;
        for (const row& x : rows) {
          ++events;
          EXPECT_EQ(x[3].s.rfind("wait/synch/", 0), 0u) << x[3].s;
          if (!x[2].null) {
            EXPECT_GT(x[2].i, x[1].i);
          }
          if (!x[5].null && !x[6].null) {
            EXPECT_EQ(x[7].i, x[6].i - x[5].i);
          }
          EXPECT_FALSE(x[16].null);
        }
      }
    }
    stop = true;
    for (auto& t : workers) t.join();
    EXPECT_GT(events, 0u);
    shutdown();
  });
}

}  // namespace
