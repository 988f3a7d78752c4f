// A lock acquisition's thread-private statistics (its part of
// events_waits_summary_global_by_event_name, its row of
// events_waits_summary_by_thread_by_event_name and its histogram) are completed
// after the lock's release, so the critical section does not pay for them. What
// must not change: events_waits_current shows the acquisition from the moment it
// is made, the instance's summary counts it while the lock is held (its holder is
// its only writer), and once released every value is what it was before.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <thread>

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

}  // namespace
