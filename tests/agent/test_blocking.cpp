// Who made a thread wait: BLOCKING_THREAD_ID and BLOCKING_EVENT_ID of lock waits
// (the holder and its acquisition), SIGNALLING_THREAD_ID of condition waits, with
// real threads holding real locks in a scripted order, read back through the reader
// while the waiter still waits and afterwards.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_c.h"
#include "agent/reader/reader.h"
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

// The rows of a thread in a table with this operation, oldest first.
std::vector<named_row> rows_of(const char* table, std::uint64_t thread, const char* operation) {
  std::vector<named_row> out;
  for (auto& r : scan(table))
    if (I(r, "thread_id") == static_cast<std::int64_t>(thread) && S(r, "operation") == operation)
      out.push_back(r);
  return out;
}

// Polls until pred() holds (a few seconds at most).
template <class Pred>
bool eventually(Pred pred) {
  for (int i = 0; i < 4000; ++i) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return false;
}

// The thread's running wait with this operation, once it shows in
// events_waits_current (a few seconds at most); false if it never does. thread is
// read at each look: the thread sets it when it starts.
bool running_wait(const std::atomic<std::uint64_t>& thread, const char* operation, named_row* out = nullptr) {
  return eventually([&] {
    const auto rows = rows_of("events_waits_current", thread.load(), operation);
    if (rows.empty() || I(rows.back(), "end_event_id") != -1) return false;
    if (out != nullptr) *out = rows.back();
    return true;
  });
}

// A one-shot gate between the scripted threads (not instrumented).
struct gate {
  std::mutex m;
  std::condition_variable cv;
  bool open = false;
  void release() {
    std::lock_guard g(m);
    open = true;
    cv.notify_all();
  }
  void wait() {
    std::unique_lock g(m);
    cv.wait(g, [&] { return open; });
  }
};

options blocking_options(const char* tag) {
  options o = small_options(tag);
  o.consumers = "events_waits_current=ON,events_waits_history=ON,events_waits_history_long=ON";
  return o;
}

// The rows of lock_contention_by_instance of one instrument, by BLOCKING_SOURCE
// ("<NULL>" when the holder was not known).
std::map<std::string, named_row> contention_of(const char* event_name) {
  std::map<std::string, named_row> out;
  for (auto& r : scan("lock_contention_by_instance"))
    if (S(r, "event_name") == event_name) {
      EXPECT_EQ(out.count(S(r, "blocking_source")), 0u) << "one row per (instance, source)";
      out[S(r, "blocking_source")] = r;
    }
  return out;
}

std::string source_at(unsigned line) { return "test_blocking.cpp:" + std::to_string(line); }

TEST(Blocking, AMutexWaitNamesTheHolderAndItsAcquisition) {
  in_child([] {
    ASSERT_TRUE(init(blocking_options("block_mutex"))) << last_error();
    mutex m{"test", "held"};
    gate held, done;
    std::atomic<std::uint64_t> holder_id{0}, waiter_id{0};
    std::thread holder([&] {
      holder_id = thread_id();
      m.lock();
      held.release();
      done.wait();
      m.unlock();
    });
    held.wait();
    std::thread waiter([&] {
      waiter_id = thread_id();
      lock_guard g(m);  // blocks until the holder lets go
    });
    // While the waiter waits, its running wait names the holder.
    named_row running;
    ASSERT_TRUE(running_wait(waiter_id, "lock", &running));
    // The holder's acquisition is its latest completed wait in events_waits_current;
    // it reaches the histories when the lock is released (event_path.h, record_deferred).
    const auto acquisition = rows_of("events_waits_current", holder_id, "lock");
    ASSERT_EQ(acquisition.size(), 1u);
    EXPECT_NE(I(acquisition[0], "end_event_id"), -1);
    EXPECT_TRUE(rows_of("events_waits_history_long", holder_id, "lock").empty());
    EXPECT_EQ(I(running, "blocking_thread_id"), static_cast<std::int64_t>(holder_id.load()));
    EXPECT_EQ(I(running, "blocking_event_id"), I(acquisition[0], "event_id"));
    EXPECT_EQ(I(running, "signalling_thread_id"), -1);
    EXPECT_EQ(I(acquisition[0], "blocking_thread_id"), -1);  // taken at the first try
    done.release();
    holder.join();
    waiter.join();
    const auto released = rows_of("events_waits_history_long", holder_id, "lock");
    ASSERT_EQ(released.size(), 1u);
    EXPECT_EQ(I(released[0], "event_id"), I(acquisition[0], "event_id"));
    EXPECT_EQ(I(released[0], "timer_wait"), I(acquisition[0], "timer_wait"));
    // The completed wait keeps them (history_long outlives the threads).
    for (const char* table : {"events_waits_history_long"}) {
      const auto waits = rows_of(table, waiter_id, "lock");
      ASSERT_EQ(waits.size(), 1u) << table;
      EXPECT_EQ(I(waits[0], "blocking_thread_id"), static_cast<std::int64_t>(holder_id.load())) << table;
      EXPECT_EQ(I(waits[0], "blocking_event_id"), I(acquisition[0], "event_id")) << table;
    }
  });
}

TEST(Blocking, RwlockReadersNameTheWriterAndWritersBlockedByReadersNameNobody) {
  in_child([] {
    ASSERT_TRUE(init(blocking_options("block_rw"))) << last_error();
    shared_mutex rw{"test", "rw"};
    gate held, done;
    std::atomic<std::uint64_t> writer_id{0}, reader_id{0};
    std::thread writer([&] {
      writer_id = thread_id();
      rw.lock();
      held.release();
      done.wait();
      rw.unlock();
    });
    const unsigned write_line = __LINE__ - 5;
    held.wait();
    std::thread reader([&] {
      reader_id = thread_id();
      rw.lock_shared();
      rw.unlock_shared();
    });
    ASSERT_TRUE(running_wait(reader_id, "read_lock"));
    done.release();
    writer.join();
    reader.join();
    const auto write = rows_of("events_waits_history_long", writer_id, "write_lock");
    const auto read = rows_of("events_waits_history_long", reader_id, "read_lock");
    ASSERT_EQ(write.size(), 1u);
    ASSERT_EQ(read.size(), 1u);
    EXPECT_EQ(I(read[0], "blocking_thread_id"), static_cast<std::int64_t>(writer_id.load()));
    EXPECT_EQ(I(read[0], "blocking_event_id"), I(write[0], "event_id"));

    // A writer blocked by readers: several holders, none named.
    gate reading, finish;
    std::atomic<std::uint64_t> writer2_id{0};
    std::thread reader2([&] {
      rw.lock_shared();
      reading.release();
      finish.wait();
      rw.unlock_shared();
    });
    reading.wait();
    std::thread writer2([&] {
      writer2_id = thread_id();
      rw.lock();
      rw.unlock();
    });
    ASSERT_TRUE(running_wait(writer2_id, "write_lock"));
    finish.release();
    reader2.join();
    writer2.join();
    const auto blocked = rows_of("events_waits_history_long", writer2_id, "write_lock");
    ASSERT_EQ(blocked.size(), 1u);
    EXPECT_EQ(I(blocked[0], "blocking_thread_id"), -1);
    EXPECT_EQ(I(blocked[0], "blocking_event_id"), -1);
    // lock_contention_by_instance: the reader's wait under the writer's source,
    // the writer's wait behind readers under none (BLOCKING_SOURCE NULL).
    auto rows = contention_of("wait/synch/rwlock/test/rw");
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(I(rows[source_at(write_line)], "count_star"), 1);
    EXPECT_EQ(I(rows["<NULL>"], "count_star"), 1);
  });
}

TEST(Blocking, AConditionWaitNamesTheThreadThatSignalledIt) {
  in_child([] {
    ASSERT_TRUE(init(blocking_options("block_cond"))) << last_error();
    mutex m{"test", "m"};
    condition_variable cv{"test", "cv"};
    bool ready = false;
    std::atomic<std::uint64_t> waiter_id{0}, signaller_id{0};
    std::thread waiter([&] {
      waiter_id = thread_id();
      unique_lock g(m);
      cv.wait(g, [&] { return ready; });
      // A wait that times out was signalled by nobody.
      cv.wait_for(g, std::chrono::milliseconds(5));
    });
    ASSERT_TRUE(running_wait(waiter_id, "wait"));
    std::thread signaller([&] {
      signaller_id = thread_id();
      {
        lock_guard g(m);
        ready = true;
      }
      cv.notify_one();
    });
    signaller.join();
    waiter.join();
    const auto waits = rows_of("events_waits_history_long", waiter_id, "wait");
    ASSERT_FALSE(waits.empty());
    EXPECT_EQ(I(waits.back(), "signalling_thread_id"), static_cast<std::int64_t>(signaller_id.load()));
    EXPECT_EQ(I(waits.back(), "blocking_thread_id"), -1);
    const auto timed = rows_of("events_waits_history_long", waiter_id, "timed_wait");
    ASSERT_EQ(timed.size(), 1u);
    EXPECT_EQ(I(timed[0], "signalling_thread_id"), -1);
  });
}

TEST(Blocking, TheCAbiNamesTheHolderOfALockHeldAtTheStart) {
  in_child([] {
    ASSERT_TRUE(init(blocking_options("block_c"))) << last_error();
    const pfs_key key = pfs_register_mutex("test", "c_mutex");
    std::mutex real;
    pfs_sync* m = pfs_init_mutex(key, &real);
    ASSERT_NE(m, nullptr);
    gate held, done;
    std::atomic<std::uint64_t> holder_id{0}, waiter_id{0};
    auto lock = [&] {
      pfs_wait_locker l;
      const int rec = pfs_start_mutex_wait(&l, m, PFS_OP_LOCK, __FILE__, __LINE__);
      real.lock();
      if (rec) pfs_end_mutex_wait(&l, 0);
    };
    auto unlock = [&] {
      pfs_unlock_mutex(m);
      real.unlock();
    };
    std::thread holder([&] {
      holder_id = thread_id();
      lock();
      held.release();
      done.wait();
      unlock();
    });
    held.wait();
    std::thread waiter([&] {
      waiter_id = thread_id();
      lock();
      unlock();
    });
    ASSERT_TRUE(running_wait(waiter_id, "lock"));
    done.release();
    holder.join();
    waiter.join();
    const auto acquisition = rows_of("events_waits_history_long", holder_id, "lock");
    const auto waits = rows_of("events_waits_history_long", waiter_id, "lock");
    ASSERT_EQ(acquisition.size(), 1u);
    ASSERT_EQ(waits.size(), 1u);
    EXPECT_EQ(I(acquisition[0], "blocking_thread_id"), -1);  // free at its start
    EXPECT_EQ(I(waits[0], "blocking_thread_id"), static_cast<std::int64_t>(holder_id.load()));
    EXPECT_EQ(I(waits[0], "blocking_event_id"), I(acquisition[0], "event_id"));
    // The one wait of a lock held at its start, under the holder's source.
    const auto rows = contention_of("wait/synch/mutex/test/c_mutex");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_NE(rows.begin()->first, "<NULL>");
    EXPECT_EQ(I(rows.begin()->second, "count_star"), 1);
    pfs_destroy_sync(m);
    // A destroyed lock's contention goes with it.
    EXPECT_TRUE(contention_of("wait/synch/mutex/test/c_mutex").empty());
  });
}

TEST(Blocking, ContentionIsCountedByTheSourceThatHeldTheLock) {
  in_child([] {
    ASSERT_TRUE(init(blocking_options("block_contention"))) << last_error();
    mutex m{"test", "queue_lock"};
    // Two code paths that hold the lock while another thread queues for it.
    const auto hold_at_a = [&] { m.lock(); };
    const unsigned line_a = __LINE__ - 1;
    const auto hold_at_b = [&] { m.lock(); };
    const unsigned line_b = __LINE__ - 1;
    const auto one_contended_wait = [&](const std::function<void()>& hold) {
      gate held, done;
      std::atomic<std::uint64_t> waiter_id{0};
      std::thread holder([&] {
        hold();
        held.release();
        done.wait();
        m.unlock();
      });
      held.wait();
      std::thread waiter([&] {
        waiter_id = thread_id();
        lock_guard g(m);
      });
      EXPECT_TRUE(running_wait(waiter_id, "lock"));
      done.release();
      holder.join();
      waiter.join();
    };
    one_contended_wait(hold_at_a);
    one_contended_wait(hold_at_a);
    one_contended_wait(hold_at_b);
    { lock_guard g(m); }  // uncontended: not counted

    auto rows = contention_of("wait/synch/mutex/test/queue_lock");
    ASSERT_EQ(rows.size(), 2u);
    const named_row& a = rows[source_at(line_a)];
    const named_row& b = rows[source_at(line_b)];
    ASSERT_FALSE(a.empty());
    ASSERT_FALSE(b.empty());
    EXPECT_EQ(I(a, "count_star"), 2);
    EXPECT_EQ(I(b, "count_star"), 1);
    EXPECT_EQ(I(a, "object_instance_begin"), static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(&m)));
    // Timed: each wait lasted until its holder let go.
    EXPECT_GT(I(a, "min_timer_wait"), 0);
    EXPECT_GE(I(a, "max_timer_wait"), I(a, "min_timer_wait"));
    EXPECT_EQ(I(a, "avg_timer_wait"), I(a, "sum_timer_wait") / 2);
    EXPECT_EQ(I(b, "sum_timer_wait"), I(b, "max_timer_wait"));

    // TRUNCATE empties it; the next contended wait starts a new count.
    {
      setup_lock_guard lock(*current_region());
      setup::reset_lock_contention(*current_region());
    }
    EXPECT_TRUE(contention_of("wait/synch/mutex/test/queue_lock").empty());
    one_contended_wait(hold_at_b);
    rows = contention_of("wait/synch/mutex/test/queue_lock");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(I(rows[source_at(line_b)], "count_star"), 1);
  });
}

// Many threads on one lock: every wait that named a holder is counted under its
// source, once; the table agrees with the waits' own BLOCKING columns.
TEST(Blocking, ContentionCountsAgreeWithTheWaitsUnderLoad) {
  in_child([] {
    options o = blocking_options("block_contention_load");
    o.sizes.history_long_size = 8192;  // every wait of the run stays
    ASSERT_TRUE(init(o)) << last_error();
    mutex m{"test", "hot"};
    constexpr int kThreads = 4, kRounds = 300;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([&] {
        for (int i = 0; i < kRounds; ++i) {
          lock_guard g(m);
          std::this_thread::sleep_for(std::chrono::microseconds(20));  // held long enough to queue behind
        }
      });
    for (auto& t : threads) t.join();
    std::int64_t named = 0, waits = 0, blocked = 0;
    for (auto& r : scan("events_waits_history_long"))
      if (S(r, "event_name") == "wait/synch/mutex/test/hot") {
        ++waits;
        if (I(r, "blocking_thread_id") != -1) ++blocked;
      }
    ASSERT_EQ(waits, kThreads * kRounds);
    std::int64_t unknown = 0;
    for (auto& [source, r] : contention_of("wait/synch/mutex/test/hot")) {
      if (source == "<NULL>")
        unknown = I(r, "count_star");
      else
        named += I(r, "count_star");
    }
    EXPECT_GT(blocked, 0) << "no wait queued: the test proves nothing";
    EXPECT_EQ(named, blocked);
    EXPECT_LE(named + unknown, waits);
  });
}

}  // namespace
