// Data locks end to end: a scripted lock manager on real threads publishes its
// locks and waits (C ABI and the RAII C++ API), read back exactly from data_locks
// and data_lock_waits at each step; a wait whose lock is gone or reused is not
// shown; bad arguments are ignored; full tables are counted lost; a reader scans
// while threads create, change and destroy locks.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "agent/provider/pfs_data_lock.h"
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

options lock_options(const char* tag, std::uint32_t max_locks = 16, std::uint32_t max_waits = 8) {
  options o = small_options(tag);
  o.sizes.max_data_locks = max_locks;
  o.sizes.max_data_lock_waits = max_waits;
  return o;
}

// A real thread that runs what it is given, one task at a time, while the test
// waits: the steps of the script happen in a known order on distinct threads.
class worker {
 public:
  worker() : thread_([this] { loop(); }) {}
  ~worker() {
    run([this] { done_ = true; });
    thread_.join();
  }
  void run(std::function<void()> task) {
    std::unique_lock<std::mutex> g(m_);
    task_ = std::move(task);
    cv_.notify_all();
    cv_.wait(g, [this] { return !task_; });
  }

 private:
  void loop() {
    while (!done_) {
      std::unique_lock<std::mutex> g(m_);
      cv_.wait(g, [this] { return static_cast<bool>(task_); });
      task_();
      task_ = nullptr;
      cv_.notify_all();
    }
  }
  std::mutex m_;
  std::condition_variable cv_;
  std::function<void()> task_;
  bool done_ = false;
  std::thread thread_;
};

pfs_data_lock_desc desc(const char* id, std::uint64_t trx, const char* type, const char* mode,
                        const char* status, const char* data) {
  pfs_data_lock_desc d{};
  d.engine = "INNODB";
  d.engine_lock_id = id;
  d.engine_transaction_id = trx;
  d.object_schema = "shop";
  d.object_name = "orders";
  d.index_name = std::string_view(type) == "RECORD" ? "PRIMARY" : nullptr;
  d.lock_type = type;
  d.lock_mode = mode;
  d.lock_status = status;
  d.lock_data = data;
  return d;
}

// ENGINE_LOCK_ID, ENGINE_TRANSACTION_ID, THREAD_ID, LOCK_TYPE, LOCK_MODE,
// LOCK_STATUS, LOCK_DATA of every row, in array order.
std::vector<std::string> lock_rows() {
  std::vector<std::string> out;
  for (const auto& r : scan("data_locks"))
    out.push_back(S(r, "engine_lock_id") + " " + std::to_string(I(r, "engine_transaction_id")) + " " +
                  std::to_string(I(r, "thread_id")) + " " + S(r, "lock_type") + " " + S(r, "lock_mode") +
                  " " + S(r, "lock_status") + " " + S(r, "lock_data"));
  return out;
}

// REQUESTING_ENGINE_LOCK_ID -> BLOCKING_ENGINE_LOCK_ID of every row.
std::vector<std::string> wait_rows() {
  std::vector<std::string> out;
  for (const auto& r : scan("data_lock_waits"))
    out.push_back(S(r, "requesting_engine_lock_id") + "->" + S(r, "blocking_engine_lock_id"));
  return out;
}

using V = std::vector<std::string>;

TEST(DataLocks, AScriptedLockManagerIsReadBackExactlyAtEachStep) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("dl_script")));
    worker a;
    worker b;
    std::uint64_t ta = 0;
    std::uint64_t tb = 0;
    pfs_data_lock* a_table = nullptr;
    pfs_data_lock* a_row = nullptr;
    pfs_data_lock* b_table = nullptr;
    pfs_data_lock* b_row = nullptr;
    pfs_data_lock_wait* b_waits = nullptr;
    // Step 1: transaction 101 (thread a) locks row 17 of shop.orders.
    a.run([&] {
      const pfs_data_lock_desc d1 = desc("101:1:table", 101, "TABLE", "IX", "GRANTED", nullptr);
      a_table = pfs_data_lock_create(&d1);
      const pfs_data_lock_desc d2 = desc("101:1:4:17", 101, "RECORD", "X,REC_NOT_GAP", "GRANTED", "17");
      a_row = pfs_data_lock_create(&d2);
      ta = pfs_current_thread_id();  // the thread took its record at its first lock
    });
    ASSERT_NE(a_table, nullptr);
    ASSERT_NE(a_row, nullptr);
    const std::string sa = std::to_string(ta);
    EXPECT_EQ(lock_rows(), (V{"101:1:table 101 " + sa + " TABLE IX GRANTED <NULL>",
                              "101:1:4:17 101 " + sa + " RECORD X,REC_NOT_GAP GRANTED 17"}));
    EXPECT_EQ(wait_rows(), V{});
    // Step 2: transaction 102 (thread b) asks for the same row and waits for a's lock.
    b.run([&] {
      const pfs_data_lock_desc d3 = desc("102:1:table", 102, "TABLE", "IX", "GRANTED", nullptr);
      b_table = pfs_data_lock_create(&d3);
      const pfs_data_lock_desc d4 = desc("102:1:4:17", 102, "RECORD", "X,REC_NOT_GAP", "WAITING", "17");
      b_row = pfs_data_lock_create(&d4);
      tb = pfs_current_thread_id();  // the thread took its record at its first lock
      b_waits = pfs_data_lock_wait_create(b_row, a_row);
    });
    ASSERT_NE(b_waits, nullptr);
    const std::string sb = std::to_string(tb);
    EXPECT_NE(ta, tb);
    EXPECT_EQ(lock_rows(), (V{"101:1:table 101 " + sa + " TABLE IX GRANTED <NULL>",
                              "101:1:4:17 101 " + sa + " RECORD X,REC_NOT_GAP GRANTED 17",
                              "102:1:table 102 " + sb + " TABLE IX GRANTED <NULL>",
                              "102:1:4:17 102 " + sb + " RECORD X,REC_NOT_GAP WAITING 17"}));
    EXPECT_EQ(wait_rows(), (V{"102:1:4:17->101:1:4:17"}));
    // Every column of the wait.
    const auto waits = scan("data_lock_waits");
    ASSERT_EQ(waits.size(), 1u);
    const named_row& w = waits[0];
    const auto locks = scan("data_locks");
    EXPECT_EQ(S(w, "engine"), "INNODB");
    EXPECT_EQ(I(w, "requesting_engine_transaction_id"), 102);
    EXPECT_EQ(I(w, "requesting_thread_id"), static_cast<std::int64_t>(tb));
    EXPECT_EQ(I(w, "requesting_event_id"), I(locks[3], "event_id"));
    EXPECT_EQ(I(w, "requesting_object_instance_begin"), I(locks[3], "object_instance_begin"));
    EXPECT_EQ(I(w, "blocking_engine_transaction_id"), 101);
    EXPECT_EQ(I(w, "blocking_thread_id"), static_cast<std::int64_t>(ta));
    EXPECT_EQ(I(w, "blocking_event_id"), I(locks[1], "event_id"));
    EXPECT_EQ(I(w, "blocking_object_instance_begin"), I(locks[1], "object_instance_begin"));
    // The columns of one lock: the names, and the record's address as its identity.
    EXPECT_EQ(S(locks[1], "engine"), "INNODB");
    EXPECT_EQ(S(locks[1], "object_schema"), "shop");
    EXPECT_EQ(S(locks[1], "object_name"), "orders");
    EXPECT_EQ(S(locks[1], "partition_name"), "<NULL>");
    EXPECT_EQ(S(locks[1], "subpartition_name"), "<NULL>");
    EXPECT_EQ(S(locks[1], "index_name"), "PRIMARY");
    EXPECT_EQ(S(locks[0], "index_name"), "<NULL>");
    EXPECT_EQ(I(locks[1], "event_id"), 1);  // a's event counter: it ran no event yet
    EXPECT_NE(I(locks[0], "object_instance_begin"), I(locks[1], "object_instance_begin"));
    // Step 3: a commits; its locks go. The wait names a lock that is gone: not shown.
    a.run([&] {
      pfs_data_lock_destroy(a_row);
      pfs_data_lock_destroy(a_table);
    });
    EXPECT_EQ(lock_rows(), (V{"102:1:table 102 " + sb + " TABLE IX GRANTED <NULL>",
                              "102:1:4:17 102 " + sb + " RECORD X,REC_NOT_GAP WAITING 17"}));
    EXPECT_EQ(wait_rows(), V{});
    // Step 4: b is granted the row: its wait ends, its lock's status changes.
    b.run([&] {
      pfs_data_lock_wait_destroy(b_waits);
      pfs_data_lock_set_status(b_row, "GRANTED");
    });
    EXPECT_EQ(lock_rows(), (V{"102:1:table 102 " + sb + " TABLE IX GRANTED <NULL>",
                              "102:1:4:17 102 " + sb + " RECORD X,REC_NOT_GAP GRANTED 17"}));
    // Step 5: b commits: nothing left.
    b.run([&] {
      pfs_data_lock_destroy(b_row);
      pfs_data_lock_destroy(b_table);
    });
    EXPECT_EQ(lock_rows(), V{});
    EXPECT_EQ(wait_rows(), V{});
    EXPECT_EQ(status_value("data_locks_lost"), 0);
    EXPECT_EQ(status_value("data_lock_waits_lost"), 0);
  });
}

TEST(DataLocks, TheCxxApiOwnsItsRows) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("dl_cxx")));
    pfs_data_lock_desc d = desc("7:1", 0, "TABLE", "S", "GRANTED", nullptr);
    d.thread_id = 42;  // given: kept as given, with the given event
    d.event_id = 9;
    d.partition_name = "p0";
    d.subpartition_name = "p0sp1";
    static int object;
    d.object_instance = &object;
    {
      data_lock holder{d};
      d.engine_lock_id = "8:1";
      d.lock_mode = "X";
      d.lock_status = "WAITING";
      data_lock waiter{d};
      data_lock_wait w{waiter, holder};
      EXPECT_TRUE(w.recorded());
      const auto rows = scan("data_locks");
      ASSERT_EQ(rows.size(), 2u);
      EXPECT_EQ(I(rows[0], "engine_transaction_id"), -1);  // 0: NULL
      EXPECT_EQ(I(rows[0], "thread_id"), 42);
      EXPECT_EQ(I(rows[0], "event_id"), 9);
      EXPECT_EQ(S(rows[0], "partition_name"), "p0");
      EXPECT_EQ(S(rows[0], "subpartition_name"), "p0sp1");
      EXPECT_EQ(I(rows[0], "object_instance_begin"),
                static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(&object)));
      EXPECT_EQ(wait_rows(), (V{"8:1->7:1"}));
      data_lock moved = std::move(holder);  // the row stays, owned by moved
      EXPECT_FALSE(holder.recorded());
      EXPECT_EQ(scan("data_locks").size(), 2u);
    }
    EXPECT_EQ(lock_rows(), V{});
    EXPECT_EQ(wait_rows(), V{});
  });
}

TEST(DataLocks, AWaitWhoseLockWasReusedIsNotShown) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("dl_reuse")));
    pfs_data_lock_desc d = desc("1", 1, "RECORD", "X", "GRANTED", "1");
    pfs_data_lock* holder = pfs_data_lock_create(&d);
    d.engine_lock_id = "2";
    d.lock_status = "WAITING";
    pfs_data_lock* waiter = pfs_data_lock_create(&d);
    pfs_data_lock_wait* w = pfs_data_lock_wait_create(waiter, holder);
    EXPECT_EQ(wait_rows(), (V{"2->1"}));
    pfs_data_lock_destroy(holder);
    d.engine_lock_id = "3";
    pfs_data_lock* other = pfs_data_lock_create(&d);
    EXPECT_EQ(other, holder);  // the same record, a new version
    EXPECT_EQ(wait_rows(), V{});
    pfs_data_lock_wait_destroy(w);
    pfs_data_lock_destroy(waiter);
    pfs_data_lock_destroy(other);
    EXPECT_EQ(lock_rows(), V{});
  });
}

TEST(DataLocks, BadArgumentsAreIgnoredAndLockDataIsCut) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("dl_bad")));
    pfs_data_lock_desc d = desc("1", 1, "RECORD", "X", "GRANTED", nullptr);
    EXPECT_EQ(pfs_data_lock_create(nullptr), nullptr);
    d.engine = nullptr;
    EXPECT_EQ(pfs_data_lock_create(&d), nullptr);
    d.engine = "INNODB";
    const std::string long_id(128, 'i');
    d.engine_lock_id = long_id.c_str();
    EXPECT_EQ(pfs_data_lock_create(&d), nullptr);
    d.engine_lock_id = "1";
    const std::string long_name(64, 'n');
    d.object_name = long_name.c_str();
    EXPECT_EQ(pfs_data_lock_create(&d), nullptr);
    d.object_name = "orders";
    d.lock_status = "";
    EXPECT_EQ(pfs_data_lock_create(&d), nullptr);
    d.lock_status = "GRANTED";
    const std::string long_data(300, 'd');
    d.lock_data = long_data.c_str();
    pfs_data_lock* l = pfs_data_lock_create(&d);
    ASSERT_NE(l, nullptr);
    pfs_data_lock_set_status(l, nullptr);
    pfs_data_lock_set_status(l, std::string(32, 's').c_str());
    pfs_data_lock_set_status(nullptr, "WAITING");
    EXPECT_EQ(pfs_data_lock_wait_create(l, nullptr), nullptr);
    EXPECT_EQ(pfs_data_lock_wait_create(l, l), nullptr);
    pfs_data_lock_wait_destroy(nullptr);
    pfs_data_lock_destroy(nullptr);
    const auto rows = scan("data_locks");
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(S(rows[0], "lock_status"), "GRANTED");
    EXPECT_EQ(S(rows[0], "lock_data"), std::string(255, 'd'));  // cut at kDataLockDataLen - 1
    pfs_data_lock_destroy(l);
    pfs_data_lock_destroy(l);  // twice: nothing
    EXPECT_EQ(status_value("data_locks_lost"), 0);
  });
}

TEST(DataLocks, FullTablesAreCountedLost) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("dl_full", 2, 1)));
    pfs_data_lock_desc d = desc("1", 1, "RECORD", "X", "GRANTED", nullptr);
    pfs_data_lock* one = pfs_data_lock_create(&d);
    d.engine_lock_id = "2";
    pfs_data_lock* two = pfs_data_lock_create(&d);
    d.engine_lock_id = "3";
    pfs_data_lock* three = pfs_data_lock_create(&d);
    pfs_data_lock* four = pfs_data_lock_create(&d);
    ASSERT_NE(one, nullptr);
    ASSERT_NE(two, nullptr);
    EXPECT_EQ(three, nullptr);
    EXPECT_EQ(four, nullptr);
    pfs_data_lock_set_status(three, "WAITING");  // NULL handles: nothing
    pfs_data_lock_destroy(three);
    pfs_data_lock_wait* w1 = pfs_data_lock_wait_create(two, one);
    pfs_data_lock_wait* w2 = pfs_data_lock_wait_create(one, two);
    EXPECT_NE(w1, nullptr);
    EXPECT_EQ(w2, nullptr);
    EXPECT_EQ(pfs_data_lock_wait_create(three, one), nullptr);  // not counted: no lock to wait with
    pfs_data_lock_wait_destroy(w2);
    EXPECT_EQ(status_value("data_locks_lost"), 2);
    EXPECT_EQ(status_value("data_lock_waits_lost"), 1);
    EXPECT_EQ(lock_rows().size(), 2u);
    EXPECT_EQ(wait_rows(), (V{"2->1"}));
    // Freed records are taken again.
    pfs_data_lock_wait_destroy(w1);
    pfs_data_lock_destroy(one);
    d.engine_lock_id = "5";
    EXPECT_NE(pfs_data_lock_create(&d), nullptr);
    EXPECT_EQ(status_value("data_locks_lost"), 2);
  });
}

// Threads take and release locks (and waits between their own locks) while the
// reader scans: every row it sees is a whole lock, every wait names two locks of
// one round of one thread.
TEST(DataLocks, AReaderScansWhileThreadsCreateAndDestroyLocks) {
  in_child([] {
    ASSERT_TRUE(init(lock_options("dl_race", 64, 32)));
    constexpr int kThreads = 4;
    constexpr int kRounds = 3000;
    std::atomic<int> running{kThreads};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t)
      threads.emplace_back([t, &running] {
        for (int i = 0; i < kRounds; ++i) {
          const std::string held = "t" + std::to_string(t) + ":" + std::to_string(i) + ":held";
          const std::string want = "t" + std::to_string(t) + ":" + std::to_string(i) + ":want";
          const std::string data = std::to_string(t * 100000 + i);
          pfs_data_lock_desc d = desc(held.c_str(), 1000 + t, "RECORD", "X", "GRANTED", data.c_str());
          data_lock h{d};
          d.engine_lock_id = want.c_str();
          d.lock_status = "WAITING";
          data_lock wl{d};
          {
            data_lock_wait w{wl, h};
            for (int k = 0; k < 20; ++k) wl.set_status(k % 2 == 0 ? "GRANTED" : "WAITING");  // under the seq
          }
          wl.set_status("GRANTED");
        }
        running.fetch_sub(1);
      });
    int scans = 0;
    std::uint64_t rows_seen = 0;
    std::uint64_t waits_seen = 0;
    while (running.load() > 0 || scans == 0) {
      ++scans;
      for (const auto& r : scan("data_locks")) {
        ++rows_seen;
        const std::string id = S(r, "engine_lock_id");
        const std::size_t c1 = id.find(':');
        const std::size_t c2 = id.find(':', c1 + 1);
        ASSERT_NE(c2, std::string::npos) << id;
        const int t = std::stoi(id.substr(1, c1 - 1));
        const int i = std::stoi(id.substr(c1 + 1, c2 - c1 - 1));
        EXPECT_EQ(S(r, "lock_data"), std::to_string(t * 100000 + i)) << id;
        EXPECT_EQ(I(r, "engine_transaction_id"), 1000 + t) << id;
        const std::string status = S(r, "lock_status");
        EXPECT_TRUE(status == "GRANTED" || status == "WAITING") << status;
        if (id.ends_with(":held")) {
          EXPECT_EQ(status, "GRANTED") << id;
        }
      }
      for (const auto& w : scan("data_lock_waits")) {
        ++waits_seen;
        std::string req = S(w, "requesting_engine_lock_id");
        std::string blk = S(w, "blocking_engine_lock_id");
        ASSERT_TRUE(req.ends_with(":want")) << req;
        EXPECT_EQ(req.substr(0, req.size() - 5), blk.substr(0, blk.size() - 5)) << req << " " << blk;
        EXPECT_EQ(I(w, "requesting_engine_transaction_id"), I(w, "blocking_engine_transaction_id"));
      }
    }
    for (auto& th : threads) th.join();
    EXPECT_EQ(lock_rows(), V{});
    EXPECT_EQ(wait_rows(), V{});
    EXPECT_EQ(status_value("data_locks_lost"), 0);
    EXPECT_EQ(status_value("data_lock_waits_lost"), 0);
    std::printf("%d scans saw %llu locks and %llu waits\n", scans, static_cast<unsigned long long>(rows_seen),
                static_cast<unsigned long long>(waits_seen));
  });
}

}  // namespace
