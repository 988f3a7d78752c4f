// Real threads and real processes sharing a real region: provider threads write
// while a reader process scans; setup changes from another process take effect.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <thread>

#include "agent/reader/reader.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"

using namespace pfs;
using namespace std::chrono_literals;
using pfs::test::in_child;
using pfs::test::small_options;

namespace {

constexpr int kProviders = 3;

struct row_checker {
  const reader::table_def& t;
  int thread_id, event_id, end_event_id, event_name, timer_start, timer_end, timer_wait, object, nesting, op;
  explicit row_checker(const reader::table_def& table)
      : t(table),
        thread_id(reader::column_index(t, "thread_id")),
        event_id(reader::column_index(t, "event_id")),
        end_event_id(reader::column_index(t, "end_event_id")),
        event_name(reader::column_index(t, "event_name")),
        timer_start(reader::column_index(t, "timer_start")),
        timer_end(reader::column_index(t, "timer_end")),
        timer_wait(reader::column_index(t, "timer_wait")),
        object(reader::column_index(t, "object_instance_begin")),
        nesting(reader::column_index(t, "nesting_event_id")),
        op(reader::column_index(t, "operation")) {}
};

// The reader process: scans every table for `seconds`, checking that each event
// row is internally consistent. Returns the number of inconsistent rows.
int reader_process(const std::string& path, const std::map<std::int64_t, std::string>& name_of_object,
                   double seconds, std::uint64_t& scans, std::uint64_t& rows_seen) {
  region_error err;
  auto r = reader::region_reader::open(path, false, err);
  if (!r) {
    std::fprintf(stderr, "reader: %s\n", err.message.c_str());
    return 1000;
  }
  int bad = 0;
  std::map<std::int64_t, std::int64_t> last_count;  // by_instance COUNT_STAR never goes down
  std::map<std::int64_t, std::int64_t> owner_of_object;
  const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<reader::row> rows;
  while (std::chrono::steady_clock::now() < until) {
    for (const auto& t : reader::tables()) {
      if (r->scan(t, rows)) {
        ++bad;
        continue;
      }
      rows_seen += rows.size();
      const std::string name = t.name;
      if (name.rfind("events_waits_", 0) == 0 && name.find("summary") == std::string::npos &&
          name.find("histogram") == std::string::npos) {
        row_checker c(t);
        for (const auto& row : rows) {
          const auto obj = row[c.object].i;
          auto it = name_of_object.find(obj);
          bool ok = it != name_of_object.end() && row[c.event_name].s == it->second;
          ok = ok && !row[c.event_id].null && row[c.event_id].i > 0;
          ok = ok && (row[c.end_event_id].null || row[c.end_event_id].i > row[c.event_id].i);
          ok = ok && (row[c.timer_start].null ||
                      (!row[c.timer_end].null && row[c.timer_end].i >= row[c.timer_start].i));
          ok = ok && (row[c.timer_wait].null || row[c.timer_wait].i >= 0);
          ok = ok && (row[c.op].s == "lock" || row[c.op].s == "try_lock");
          // Each provider locks its own mutex only: one thread per object.
          auto [o, inserted] = owner_of_object.emplace(obj, row[c.thread_id].i);
          ok = ok && (inserted || o->second == row[c.thread_id].i);
          if (!ok) {
            ++bad;
            if (bad < 5)
              std::fprintf(stderr, "reader: inconsistent row in %s: %s event %lld\n", t.name,
                           row[c.event_name].s.c_str(), static_cast<long long>(row[c.event_id].i));
          }
        }
      } else if (name == "events_waits_summary_by_instance") {
        const int obj = reader::column_index(t, "object_instance_begin");
        const int cnt = reader::column_index(t, "count_star");
        for (const auto& row : rows) {
          auto& last = last_count[row[obj].i];
          if (row[cnt].i < last) ++bad;
          last = row[cnt].i;
        }
      }
    }
    ++scans;
  }
  return bad;
}

}  // namespace

TEST(Concurrency, ProvidersWriteWhileAnotherProcessReads) {
  in_child([] {
    options o = small_options("conc");
    o.sizes.history_long_size = 2000;
    o.sizes.history_per_thread = 16;
    ASSERT_TRUE(init(o)) << last_error();
    std::vector<std::unique_ptr<pfs::mutex>> mutexes;
    std::map<std::int64_t, std::string> names;
    for (int i = 0; i < kProviders; ++i) {
      std::string name = "m" + std::to_string(i);
      mutexes.push_back(std::make_unique<pfs::mutex>(pfs_register_mutex("conc", name.c_str())));
      std::string full = "wait/synch/mutex/conc/";
      full += name;
      names[static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(mutexes.back().get()))] = full;
    }
    int result_pipe[2];
    ASSERT_EQ(pipe(result_pipe), 0);
    // The reader is forked before any provider thread exists.
    pid_t reader = fork();
    ASSERT_GE(reader, 0);
    if (reader == 0) {
      std::uint64_t scans = 0, rows = 0;
      int bad = reader_process(o.region_path, names, 2.5, scans, rows);
      std::uint64_t msg[3] = {static_cast<std::uint64_t>(bad), scans, rows};
      ssize_t n = write(result_pipe[1], msg, sizeof(msg));
      _exit(n == sizeof(msg) ? 0 : 2);
    }
    std::atomic<bool> stop{false};
    std::atomic<std::uint64_t> ops{0};
    std::vector<std::thread> threads;
    for (int i = 0; i < kProviders; ++i)
      threads.emplace_back([&, i] {
        std::uint64_t n = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          if (n % 7 == 0) {
            if (mutexes[i]->try_lock()) mutexes[i]->unlock();
          } else {
            pfs::lock_guard g(*mutexes[i]);
          }
          ++n;
        }
        ops += n;
      });
    std::uint64_t msg[3] = {};
    ASSERT_EQ(read(result_pipe[0], msg, sizeof(msg)), static_cast<ssize_t>(sizeof(msg)));
    stop = true;
    for (auto& t : threads) t.join();
    int status = 0;
    waitpid(reader, &status, 0);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    EXPECT_EQ(msg[0], 0u) << "inconsistent rows accepted by the reader";
    EXPECT_GT(msg[1], 10u) << "scans";
    EXPECT_GT(msg[2], 1000u) << "rows";
    EXPECT_GT(ops.load(), 10000u);
    std::printf("provider ops %llu, reader scans %llu, rows %llu\n", static_cast<unsigned long long>(ops.load()),
                static_cast<unsigned long long>(msg[1]), static_cast<unsigned long long>(msg[2]));
    // Every event was counted: the instance counts add up to the operations.
    std::uint64_t counted = 0;
    for (auto& m : mutexes)
      counted += pfs::test::find_instance(*current_region(), layout::kArrayMutexes, m.get())->stat.count;
    EXPECT_EQ(counted, ops.load());
  });
}

TEST(Concurrency, SetupChangeFromAnotherProcessTakesEffect) {
  in_child([] {
    options o = small_options("setupx");
    ASSERT_TRUE(init(o)) << last_error();
    pfs::mutex m{"app", "m"};
    { pfs::lock_guard g(m); }
    const layout::sync_instance* inst = pfs::test::find_instance(*current_region(), layout::kArrayMutexes, &m);
    auto change = [&](bool enabled) {
      pid_t pid = fork();
      if (pid == 0) {
        region_error err;
        auto r = reader::region_reader::open(o.region_path, true, err);
        if (!r) _exit(3);
        setup_lock_guard lock(r->region());
        setup::set_instrument(r->region(), r->find_class("wait/synch/mutex/app/m"), enabled ? 1 : 0, -1);
        _exit(0);
      }
      int status = 0;
      waitpid(pid, &status, 0);
      ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    };
    change(false);
    const std::uint64_t before = inst->stat.count;
    for (int i = 0; i < 100; ++i) pfs::lock_guard g(m);
    EXPECT_EQ(inst->stat.count, before);  // the very next events obey
    change(true);
    for (int i = 0; i < 100; ++i) pfs::lock_guard g(m);
    EXPECT_EQ(inst->stat.count, before + 100);
  });
}
