// Seed 000: "If a consumer is enabled, then any data that's gathered goes to the
// consumer table. If it's off, the table is frozen." Each of the three wait
// summary consumers freezes its own table while the other two keep counting, and
// file_summary_* follows MySQL's rule (global_instrumentation and the instrument)
// whatever the wait summary consumers say.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <string>
#include <thread>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_io.h"
#include "agent/provider/pfs_socket.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using namespace pfs;
using pfs::test::I;
using pfs::test::named_row;
using pfs::test::S;

constexpr const char* kMutex = "wait/synch/mutex/app/m";
constexpr const char* kFile = "wait/io/file/app/data";

struct counts {
  std::int64_t global_mutex = 0, global_file = 0;
  std::int64_t instance_mutex = 0, instance_file = 0;
  std::int64_t thread_mutex = 0;
  std::int64_t file_summary = 0, file_by_event = 0;
};

counts read_counts(std::uint64_t tid, const void* mutex_address) {
  counts c;
  for (const named_row& r : pfs::test::scan("events_waits_summary_global_by_event_name")) {
    if (S(r, "event_name") == kMutex) c.global_mutex = I(r, "count_star");
    if (S(r, "event_name") == kFile) c.global_file = I(r, "count_star");
  }
  for (const named_row& r : pfs::test::scan("events_waits_summary_by_instance")) {
    if (I(r, "object_instance_begin") ==
        static_cast<std::int64_t>(reinterpret_cast<std::uintptr_t>(mutex_address)))
      c.instance_mutex = I(r, "count_star");
    if (S(r, "event_name") == kFile) c.instance_file += I(r, "count_star");
  }
  for (const named_row& r : pfs::test::scan("events_waits_summary_by_thread_by_event_name"))
    if (I(r, "thread_id") == static_cast<std::int64_t>(tid) && S(r, "event_name") == kMutex)
      c.thread_mutex = I(r, "count_star");
  for (const named_row& r : pfs::test::scan("file_summary_by_instance"))
    if (S(r, "event_name") == kFile) c.file_summary += I(r, "count_star");
  for (const named_row& r : pfs::test::scan("file_summary_by_event_name"))
    if (S(r, "event_name") == kFile) c.file_by_event = I(r, "count_star");
  return c;
}

// 10 lock/unlock pairs and 5 file writes.
void work(pfs::mutex& m, int fd) {
  for (int i = 0; i < 10; ++i) pfs::lock_guard g(m);
  const char buf[16] = {};
  for (int i = 0; i < 5; ++i) ASSERT_EQ(file::write(fd, buf, sizeof buf), static_cast<ssize_t>(sizeof buf));
}

// Runs the work with `consumer` on, then off, then on again, and checks which
// tables moved.
void freeze_test(const char* consumer) {
  pfs::test::in_child([consumer] {
    ASSERT_TRUE(init(pfs::test::small_options("consumers"))) << last_error();
    register_thread("app", "main");
    const std::uint64_t tid = thread_id();
    pfs::mutex m{"app", "m"};
    const pfs_key data = file::register_class("app", "data");
    const std::string path = current_region()->path() + ".data";
    const int fd = file::open(data, path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);  // 1 io
    ASSERT_GE(fd, 0);

    work(m, fd);
    const counts on = read_counts(tid, &m);
    EXPECT_EQ(on.global_mutex, 10);
    EXPECT_EQ(on.instance_mutex, 10);
    EXPECT_EQ(on.thread_mutex, 10);
    EXPECT_EQ(on.global_file, 6);
    EXPECT_EQ(on.instance_file, 6);
    EXPECT_EQ(on.file_summary, 6);

    ASSERT_TRUE(set_consumer(consumer, false));
    work(m, fd);
    const counts off = read_counts(tid, &m);
    const std::string c = consumer;
    const bool global = c == "events_waits_summary_global_by_event_name";
    const bool instance = c == "events_waits_summary_by_instance";
    const bool thread = c == "events_waits_summary_by_thread_by_event_name";
    // The consumer's own table is frozen; the others count on.
    EXPECT_EQ(off.global_mutex, global ? 10 : 20) << consumer;
    EXPECT_EQ(off.global_file, global ? 6 : 11) << consumer;
    EXPECT_EQ(off.instance_mutex, instance ? 10 : 20) << consumer;
    EXPECT_EQ(off.instance_file, instance ? 6 : 11) << consumer;
    EXPECT_EQ(off.thread_mutex, thread ? 10 : 20) << consumer;
    // File io summaries follow MySQL's rule: not these consumers.
    EXPECT_EQ(off.file_summary, 11) << consumer;
    EXPECT_EQ(off.file_by_event, 11) << consumer;

    // On again: counting resumes from the frozen values (what happened while off
    // is not in the table).
    ASSERT_TRUE(set_consumer(consumer, true));
    work(m, fd);
    const counts again = read_counts(tid, &m);
    EXPECT_EQ(again.global_mutex, global ? 20 : 30) << consumer;
    EXPECT_EQ(again.instance_mutex, instance ? 20 : 30) << consumer;
    EXPECT_EQ(again.thread_mutex, thread ? 20 : 30) << consumer;
    EXPECT_EQ(again.global_file, global ? 11 : 16) << consumer;
    EXPECT_EQ(again.instance_file, instance ? 11 : 16) << consumer;
    EXPECT_EQ(again.file_summary, 16) << consumer;
    file::close(fd);
    ::unlink(path.c_str());
  });
}

TEST(Consumers, SummaryGlobalByEventNameFreezesAlone) {
  freeze_test("events_waits_summary_global_by_event_name");
}
TEST(Consumers, SummaryByInstanceFreezesAlone) { freeze_test("events_waits_summary_by_instance"); }
TEST(Consumers, SummaryByThreadFreezesAlone) { freeze_test("events_waits_summary_by_thread_by_event_name"); }

// Sockets follow the same rules: their rows of events_waits_summary_by_instance
// freeze with that consumer, socket_summary_* count on (MySQL's rule).
TEST(Consumers, SocketRowsFreezeWithTheirConsumer) {
  pfs::test::in_child([] {
    options o = pfs::test::small_options("consumers_socket");
    o.instrument = "wait/io/socket/%=ON";  // MySQL ships them off
    ASSERT_TRUE(init(o)) << last_error();
    register_thread("app", "main");
    const pfs_key cls = pfs::socket::register_class("app", "pair");
    int sv[2];
    ASSERT_EQ(pfs::socket::socketpair(cls, AF_UNIX, SOCK_STREAM, 0, sv), 0);
    const auto counts = [] {
      std::int64_t global = 0, instance = 0, summary = 0;
      for (const named_row& r : pfs::test::scan("events_waits_summary_global_by_event_name"))
        if (S(r, "event_name") == "wait/io/socket/app/pair") global = I(r, "count_star");
      for (const named_row& r : pfs::test::scan("events_waits_summary_by_instance"))
        if (S(r, "event_name") == "wait/io/socket/app/pair") instance += I(r, "count_star");
      for (const named_row& r : pfs::test::scan("socket_summary_by_instance"))
        if (S(r, "event_name") == "wait/io/socket/app/pair") summary += I(r, "count_star");
      return std::array<std::int64_t, 3>{global, instance, summary};
    };
    const char buf[8] = {};
    char in[8];
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(pfs::socket::send(sv[0], buf, sizeof buf, 0), static_cast<ssize_t>(sizeof buf));
      ASSERT_EQ(pfs::socket::recv(sv[1], in, sizeof in, 0), static_cast<ssize_t>(sizeof in));
    }
    const auto on = counts();
    EXPECT_GE(on[0], 8);
    EXPECT_EQ(on[1], on[0]);
    EXPECT_EQ(on[2], on[0]);
    ASSERT_TRUE(set_consumer("events_waits_summary_by_instance", false));
    for (int i = 0; i < 4; ++i) {
      ASSERT_EQ(pfs::socket::send(sv[0], buf, sizeof buf, 0), static_cast<ssize_t>(sizeof buf));
      ASSERT_EQ(pfs::socket::recv(sv[1], in, sizeof in, 0), static_cast<ssize_t>(sizeof in));
    }
    const auto off = counts();
    EXPECT_EQ(off[0], on[0] + 8);  // the global row counts on
    EXPECT_EQ(off[1], on[1]);      // the instances' rows are frozen
    EXPECT_EQ(off[2], on[2] + 8);  // socket_summary_by_instance counts on
    pfs::socket::close(sv[0]);
    pfs::socket::close(sv[1]);
  });
}

// global_instrumentation off: nothing counts, file summaries included (MySQL).
TEST(Consumers, GlobalInstrumentationOffFreezesEverySummary) {
  pfs::test::in_child([] {
    ASSERT_TRUE(init(pfs::test::small_options("consumers_global"))) << last_error();
    register_thread("app", "main");
    const std::uint64_t tid = thread_id();
    pfs::mutex m{"app", "m"};
    const pfs_key data = file::register_class("app", "data");
    const std::string path = current_region()->path() + ".data";
    const int fd = file::open(data, path.c_str(), O_CREAT | O_RDWR | O_TRUNC, 0600);
    ASSERT_GE(fd, 0);
    work(m, fd);
    const counts before = read_counts(tid, &m);
    ASSERT_TRUE(set_consumer("global_instrumentation", false));
    work(m, fd);
    const counts after = read_counts(tid, &m);
    EXPECT_EQ(after.global_mutex, before.global_mutex);
    EXPECT_EQ(after.instance_mutex, before.instance_mutex);
    EXPECT_EQ(after.thread_mutex, before.thread_mutex);
    EXPECT_EQ(after.file_summary, before.file_summary);
    EXPECT_EQ(after.file_by_event, before.file_by_event);
    file::close(fd);
    ::unlink(path.c_str());
  });
}

// A thread that exits leaves its part of the global summary in its classes'
// buckets: the global row keeps every wait, its by-thread rows leave with it.
TEST(Consumers, GlobalSummaryKeepsTheWaitsOfExitedThreads) {
  pfs::test::in_child([] {
    ASSERT_TRUE(init(pfs::test::small_options("consumers_exit"))) << last_error();
    register_thread("app", "main");
    pfs::mutex m{"app", "m"};
    std::thread worker([&m] {
      register_thread("app", "worker");
      for (int i = 0; i < 7; ++i) pfs::lock_guard g(m);
      unregister_thread();
    });
    worker.join();
    for (int i = 0; i < 3; ++i) pfs::lock_guard g(m);
    std::int64_t global = -1;
    for (const named_row& r : pfs::test::scan("events_waits_summary_global_by_event_name"))
      if (S(r, "event_name") == kMutex) global = I(r, "count_star");
    EXPECT_EQ(global, 10);
    std::int64_t by_thread = 0;
    for (const named_row& r : pfs::test::scan("events_waits_summary_by_thread_by_event_name"))
      if (S(r, "event_name") == kMutex) by_thread += I(r, "count_star");
    EXPECT_EQ(by_thread, 3);
  });
}

}  // namespace
