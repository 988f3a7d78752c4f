// A lock acquisition's thread-private statistics (its part of
// events_waits_summary_global_by_event_name, its row of
// events_waits_summary_by_thread_by_event_name and its histogram) and its copies
// in events_waits_history and events_waits_history_long are completed after the
// lock's release, so the critical section does not pay for them. What must not
// change: events_waits_current shows the acquisition from the moment it is made,
// the instance's summary counts it while the lock is held (its holder is its only
// writer), and once released every value is what it was before, in the order of
// the events.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using pfs::test::I;
using pfs::test::named_row;
using pfs::test::S;

struct counts {
  std::int64_t global = 0, thread = 0, instance = 0, histogram = 0;
  bool current = false;  // the thread's events_waits_current row is an acquisition of the class
};

counts read_counts(const std::string& event_name, std::uint64_t tid) {
  counts c;
  for (const named_row& r : pfs::test::scan("events_waits_summary_global_by_event_name"))
    if (S(r, "event_name") == event_name) c.global = I(r, "count_star");
  for (const named_row& r : pfs::test::scan("events_waits_summary_by_thread_by_event_name"))
    if (I(r, "thread_id") == static_cast<std::int64_t>(tid) && S(r, "event_name") == event_name)
      c.thread = I(r, "count_star");
  for (const named_row& r : pfs::test::scan("events_waits_summary_by_instance"))
    if (S(r, "event_name") == event_name) c.instance += I(r, "count_star");
  for (const named_row& r : pfs::test::scan("events_waits_histogram_global_by_event_name"))
    if (S(r, "event_name") == event_name) c.histogram += I(r, "count_bucket");
  for (const named_row& r : pfs::test::scan("events_waits_current"))
    if (I(r, "thread_id") == static_cast<std::int64_t>(tid) && S(r, "event_name") == event_name)
      c.current = true;
  return c;
}

TEST(DeferredStatistics, ThreadPrivatePartsArriveAtTheRelease) {
  pfs::test::in_child([] {
    ASSERT_TRUE(pfs::init(pfs::test::small_options("deferred"))) << pfs::last_error();
    pfs::register_thread("app", "main");
    const std::uint64_t tid = pfs::thread_id();
    const std::string a_name = "wait/synch/mutex/app/a", b_name = "wait/synch/mutex/app/b";
    pfs::mutex a{"app", "a"};
    pfs::mutex b{"app", "b"};

    a.lock();
    counts held = read_counts(a_name, tid);
    EXPECT_TRUE(held.current);    // shown from the acquisition on
    EXPECT_EQ(held.instance, 1);  // written by the holder, inside
    EXPECT_EQ(held.global, 0);    // not yet: after the release
    EXPECT_EQ(held.thread, 0);
    EXPECT_EQ(held.histogram, 0);

    // A second lock taken while holding the first completes the first.
    b.lock();
    held = read_counts(a_name, tid);
    EXPECT_EQ(held.global, 1);
    EXPECT_EQ(held.thread, 1);
    EXPECT_EQ(held.histogram, 1);
    EXPECT_EQ(read_counts(b_name, tid).global, 0);
    b.unlock();
    EXPECT_EQ(read_counts(b_name, tid).global, 1);
    a.unlock();

    // Released: every table counts it once.
    for (int i = 0; i < 9; ++i) pfs::lock_guard g(a);
    const counts done = read_counts(a_name, tid);
    EXPECT_EQ(done.global, 10);
    EXPECT_EQ(done.thread, 10);
    EXPECT_EQ(done.instance, 10);
    EXPECT_EQ(done.histogram, 10);
    EXPECT_EQ(read_counts(b_name, tid).thread, 1);
  });
}

TEST(DeferredStatistics, TryLocksAndSharedLocks) {
  pfs::test::in_child([] {
    ASSERT_TRUE(pfs::init(pfs::test::small_options("deferred_try"))) << pfs::last_error();
    pfs::register_thread("app", "main");
    const std::uint64_t tid = pfs::thread_id();
    pfs::mutex m{"app", "m"};
    pfs::shared_mutex rw{"app", "rw"};

    ASSERT_TRUE(m.try_lock());
    EXPECT_EQ(read_counts("wait/synch/mutex/app/m", tid).global, 0);
    m.unlock();
    EXPECT_EQ(read_counts("wait/synch/mutex/app/m", tid).global, 1);

    // A failed try-lock has no release to wait for: counted at once.
    m.lock();
    std::thread([&] { EXPECT_FALSE(m.try_lock()); }).join();
    m.unlock();
    EXPECT_EQ(read_counts("wait/synch/mutex/app/m", tid).global, 3);

    rw.lock_shared();
    EXPECT_EQ(read_counts("wait/synch/rwlock/app/rw", tid).instance, 1);
    EXPECT_EQ(read_counts("wait/synch/rwlock/app/rw", tid).thread, 0);
    rw.unlock_shared();
    rw.lock();
    rw.unlock();
    const counts c = read_counts("wait/synch/rwlock/app/rw", tid);
    EXPECT_EQ(c.thread, 2);
    EXPECT_EQ(c.global, 2);
    EXPECT_EQ(c.histogram, 2);
  });
}

// A COUNTED mutex on a thread that does not record events_waits_current takes
// the path without a locker (count_mutex_acquired): the same counts, at once, and
// the same owner, and a deferred acquisition above it still completed first.
TEST(DeferredStatistics, CountedWithoutCurrentIsItsCountsAndOwner) {
  pfs::test::in_child([] {
    ASSERT_TRUE(pfs::init(pfs::test::small_options("deferred_counted"))) << pfs::last_error();
    pfs::register_thread("app", "main");
    const std::uint64_t tid = pfs::thread_id();
    const std::string a_name = "wait/synch/mutex/app/a", c_name = "wait/synch/mutex/app/c";
    pfs::mutex a{"app", "a"};
    pfs::mutex c{"app", "c"};
    ASSERT_TRUE(pfs::set_instrument(c_name, true, false));
    ASSERT_TRUE(pfs::set_consumer("events_waits_current", false));
    const auto owner_of_c = [&] {
      for (const named_row& r : pfs::test::scan("mutex_instances"))
        if (S(r, "name") == c_name) return I(r, "locked_by_thread_id");
      return std::int64_t{-2};  // no row
    };

    a.lock();  // timed: its thread-private statistics wait for its release
    EXPECT_EQ(read_counts(a_name, tid).global, 0);
    c.lock();
    EXPECT_EQ(read_counts(a_name, tid).global, 1);  // completed by c's acquisition
    const counts held = read_counts(c_name, tid);
    EXPECT_EQ(held.instance, 1);
    EXPECT_EQ(held.global, 1);  // a counted acquisition adds its counts at once
    EXPECT_EQ(held.thread, 1);
    EXPECT_FALSE(held.current);
    EXPECT_EQ(owner_of_c(), static_cast<std::int64_t>(tid));
    c.unlock();
    EXPECT_EQ(owner_of_c(), -1);  // NULL
    a.unlock();

    for (int i = 0; i < 9; ++i) pfs::lock_guard g(c);
    const counts done = read_counts(c_name, tid);
    EXPECT_EQ(done.instance, 10);
    EXPECT_EQ(done.global, 10);
    EXPECT_EQ(done.thread, 10);
    EXPECT_EQ(done.histogram, 0);  // not timed
    for (const named_row& r : pfs::test::scan("events_waits_summary_global_by_event_name"))
      if (S(r, "event_name") == c_name) {
        EXPECT_EQ(I(r, "sum_timer_wait"), 0);
      }
    EXPECT_EQ(read_counts(a_name, tid).global, 1);

    // With events_waits_current on, the full path: the acquisition is an event again.
    ASSERT_TRUE(pfs::set_consumer("events_waits_current", true));
    c.lock();
    EXPECT_TRUE(read_counts(c_name, tid).current);
    c.unlock();
    EXPECT_EQ(read_counts(c_name, tid).global, 11);
  });
}

std::vector<named_row> waits_of(const char* table, std::uint64_t tid) {
  std::vector<named_row> out;
  for (named_row& r : pfs::test::scan(table))
    if (I(r, "thread_id") == static_cast<std::int64_t>(tid)) out.push_back(r);
  return out;
}

std::vector<std::int64_t> event_ids(const std::vector<named_row>& rows) {
  std::vector<std::int64_t> ids;
  for (const named_row& r : rows) ids.push_back(I(r, "event_id"));
  return ids;
}

TEST(DeferredHistory, TheHistoriesGetTheAcquisitionAtTheReleaseInEventOrder) {
  pfs::test::in_child([] {
    pfs::options o = pfs::test::small_options("deferred_history");
    o.consumers = "events_waits_current=ON,events_waits_history=ON,events_waits_history_long=ON";
    ASSERT_TRUE(pfs::init(o)) << pfs::last_error();
    pfs::register_thread("app", "main");
    const std::uint64_t tid = pfs::thread_id();
    pfs::mutex a{"app", "a"};
    pfs::mutex b{"app", "b"};
    pfs::mutex counted{"app", "counted"};
    ASSERT_TRUE(pfs::set_instrument("wait/synch/mutex/app/counted", true, false));

    a.lock();
    const auto current = waits_of("events_waits_current", tid);
    ASSERT_EQ(current.size(), 1u);
    EXPECT_EQ(S(current[0], "event_name"), "wait/synch/mutex/app/a");
    EXPECT_NE(I(current[0], "end_event_id"), -1);  // completed, shown at once
    EXPECT_TRUE(waits_of("events_waits_history", tid).empty());
    EXPECT_TRUE(waits_of("events_waits_history_long", tid).empty());
    // A second lock taken while holding the first: the first reaches the
    // histories, with the values events_waits_current showed.
    b.lock();
    auto history = waits_of("events_waits_history", tid);
    ASSERT_EQ(history.size(), 1u);
    EXPECT_EQ(I(history[0], "event_id"), I(current[0], "event_id"));
    EXPECT_EQ(I(history[0], "timer_start"), I(current[0], "timer_start"));
    EXPECT_EQ(I(history[0], "timer_end"), I(current[0], "timer_end"));
    EXPECT_EQ(S(history[0], "source"), S(current[0], "source"));
    b.unlock();
    a.unlock();
    // A counted acquisition's history copies wait for its release too.
    counted.lock();
    EXPECT_EQ(waits_of("events_waits_history_long", tid).size(), 2u);
    counted.unlock();
    history = waits_of("events_waits_history_long", tid);
    ASSERT_EQ(history.size(), 3u);
    EXPECT_EQ(S(history[2], "event_name"), "wait/synch/mutex/app/counted");
    EXPECT_EQ(I(history[2], "timer_wait"), -1);  // not timed
    const std::vector<std::int64_t> ids = event_ids(history);
    EXPECT_LT(ids[0], ids[1]);
    EXPECT_LT(ids[1], ids[2]);
    EXPECT_EQ(event_ids(waits_of("events_waits_history", tid)), ids);
  });
}

// An acquisition made while a wait of the thread runs (the C ABI's running
// wait): the running wait's end clears the slots above it, and completes the
// acquisition first, so the histories keep it whole.
TEST(DeferredHistory, ARunningWaitEndingAboveKeepsTheAcquisition) {
  pfs::test::in_child([] {
    pfs::options o = pfs::test::small_options("deferred_running");
    o.consumers = "events_waits_current=ON,events_waits_history=ON,events_waits_history_long=ON";
    ASSERT_TRUE(pfs::init(o)) << pfs::last_error();
    pfs::register_thread("app", "main");
    const std::uint64_t tid = pfs::thread_id();
    pfs_sync* outer = pfs_init_mutex(pfs_register_mutex("app", "outer"), &o);
    pfs::mutex inner{"app", "inner"};
    pfs_wait_locker locker;
    ASSERT_TRUE(pfs_start_mutex_wait(&locker, outer, PFS_OP_LOCK, __FILE__, __LINE__));
    inner.lock();
    pfs_end_mutex_wait(&locker, 0);
    inner.unlock();
    const auto history = waits_of("events_waits_history_long", tid);
    ASSERT_EQ(history.size(), 2u);
    EXPECT_EQ(S(history[0], "event_name"), "wait/synch/mutex/app/inner");
    EXPECT_EQ(S(history[1], "event_name"), "wait/synch/mutex/app/outer");
    EXPECT_EQ(I(history[0], "nesting_event_id"), I(history[1], "event_id"));
    EXPECT_GT(I(history[0], "timer_wait"), -1);
    pfs_destroy_sync(outer);
  });
}

}  // namespace
