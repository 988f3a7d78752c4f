// Trace files (trace worklog): exact contents, per-thread files, error handling,
// and the merge tool.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include <atomic>
#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>

#include "agent/provider/pfs_io.h"
#include "agent/region/setup.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

using namespace pfs;
using namespace pfs::layout;
using pfs::test::in_child;
using pfs::test::small_options;

namespace {

std::string make_dir(const char* tag) {
  std::string dir = pfs::test::temp_region_path(tag) + ".d";
  std::string cmd = "rm -rf '" + dir + "' && mkdir -p '" + dir + "'";
  EXPECT_EQ(std::system(cmd.c_str()), 0);
  return dir;
}

std::vector<std::string> files_in(const std::string& dir) {
  std::vector<std::string> out;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d))
      if (std::string(e->d_name).rfind("thread.", 0) == 0) out.push_back(e->d_name);
    closedir(d);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// Everything traced, counted (not timed) so that lines are exact.
options trace_options(const char* tag, const std::string& dir) {
  options o = small_options(tag);
  o.instrument = "%=COUNTED";
  o.trace_dir = dir;
  o.trace_all = true;
  return o;
}

void trace_actor(const region_map& r, bool on) {
  setup_lock_guard lock(r);
  ASSERT_EQ(setup::update_actor(r, "%", "%", "%", -1, -1, on ? 1 : 0), setup::actor_result::ok);
}

}  // namespace

TEST(Trace, ExactLinesForAScriptedWorkload) {
  const std::string dir = make_dir("trace_exact");
  in_child([&] {
    ASSERT_TRUE(init(trace_options("trace_exact", dir))) << last_error();
    const region_map& r = *current_region();
    pfs::mutex m{"app", "m"};
    trace_actor(r, false);
    { pfs::lock_guard g(m); }  // not traced: the actor row says NO
    trace_actor(r, true);
    { pfs::lock_guard g(m); }
    const unsigned line = __LINE__ - 1;
    const pfs_key data = file::register_class("app", "data");
    const std::string path = dir + "/it's data";  // a quote to escape
    int fd = file::open(data, path.c_str(), O_CREAT | O_RDWR, 0600);
    const unsigned open_line = __LINE__ - 1;
    ASSERT_EQ(file::write(fd, "abc", 3), 3);
    const unsigned write_line = __LINE__ - 1;
    file::close(fd);
    const std::uint64_t tid = thread_id();
    pfs::shutdown();  // flushes this thread's trace file

    const auto files = files_in(dir);
    ASSERT_EQ(files.size(), 1u);
    EXPECT_EQ(files[0], "thread.background." + std::to_string(tid));
    const auto lines = lines_of(dir + "/" + files[0]);
    ASSERT_EQ(lines.size(), 1u + 8u);  // header, then a start and an end line per wait
    EXPECT_EQ(lines[0].rfind("/* perfschema trace file for background on ", 0), 0u) << lines[0];
    const std::string m_addr = std::to_string(reinterpret_cast<std::uintptr_t>(&m));
    const std::string src = "'test_trace.cpp:" + std::to_string(line) + "'";
    EXPECT_EQ(lines[1], "INSERT INTO events_waits_current VALUES (" + std::to_string(tid) +
                            ", 2, NULL, 'wait/synch/mutex/app/m', " + src +
                            ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, " + m_addr +
                            ", NULL, NULL, 'lock', NULL, 0, NULL, NULL, NULL);");
    EXPECT_EQ(lines[2], "INSERT INTO events_waits_current VALUES (" + std::to_string(tid) +
                            ", 2, 3, 'wait/synch/mutex/app/m', " + src +
                            ", NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, " + m_addr +
                            ", NULL, NULL, 'lock', NULL, 0, NULL, NULL, NULL);");
    const std::string fname = "'" + dir + "/it''s data'";
    EXPECT_NE(
        lines[3].find(", 3, NULL, 'wait/io/file/app/data', 'test_trace.cpp:" + std::to_string(open_line) +
                      "', NULL, NULL, NULL, NULL, NULL, " + fname + ", NULL, 'FILE', "),
        std::string::npos)
        << lines[3];
    EXPECT_NE(lines[3].find(", NULL, NULL, 'create', NULL, 0, NULL, NULL, NULL);"), std::string::npos)
        << lines[3];
    EXPECT_NE(lines[6].find("'test_trace.cpp:" + std::to_string(write_line) + "'"), std::string::npos);
    EXPECT_NE(lines[6].find(", 'write', 3, 0, NULL, NULL, NULL);"), std::string::npos)
        << lines[6];  // NUMBER_OF_BYTES at the end
    EXPECT_NE(lines[5].find(", 'write', NULL, 0, NULL, NULL, NULL);"), std::string::npos) << lines[5];
    EXPECT_NE(lines[8].find(", 'close', NULL, 0, NULL, NULL, NULL);"), std::string::npos) << lines[8];
  });
}

// PFS_TRACE_ALL=1 traces from the first event: the default actor row starts with
// TRACE_ENABLED YES (WL#4878).
TEST(Trace, TraceAllTracesFromTheFirstEvent) {
  const std::string dir = make_dir("trace_all");
  in_child([&] {
    ASSERT_TRUE(init(trace_options("trace_all", dir))) << last_error();
    pfs::mutex m{"app", "first"};
    { pfs::lock_guard g(m); }
    const std::uint64_t tid = thread_id();
    pfs::shutdown();
    const auto lines = lines_of(dir + "/thread.background." + std::to_string(tid));
    ASSERT_EQ(lines.size(), 3u);  // header, start and end of the first wait
    EXPECT_NE(lines[2].find("'wait/synch/mutex/app/first'"), std::string::npos) << lines[2];
  });
}

// A wait that had to queue: its end line names the holder and the holder's
// acquisition, the same values as its events_waits_history_long row.
TEST(Trace, AContendedWaitNamesItsBlocker) {
  const std::string dir = make_dir("trace_blocked");
  in_child([&] {
    options o = trace_options("trace_blocked", dir);
    o.consumers = "events_waits_current=ON,events_waits_history_long=ON";
    ASSERT_TRUE(init(o)) << last_error();
    trace_actor(*current_region(), true);
    pfs::mutex m{"app", "m"};
    const std::uint64_t holder = thread_id();
    m.lock();
    std::atomic<std::uint64_t> waiter{0};
    std::thread t([&] {
      waiter = thread_id();
      pfs::lock_guard g(m);
    });
    // unlock only once the waiter's wait is running (it then has to queue)
    bool waiting = false;
    for (int i = 0; i < 4000 && !waiting; ++i) {
      for (const auto& row : pfs::test::scan("events_waits_current"))
        if (pfs::test::I(row, "thread_id") == static_cast<std::int64_t>(waiter.load()) &&
            pfs::test::I(row, "end_event_id") == -1 && pfs::test::S(row, "operation") == "lock")
          waiting = true;
      if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ASSERT_TRUE(waiting);
    m.unlock();
    t.join();
    std::int64_t held_by = -1;
    for (const auto& row : pfs::test::scan("events_waits_history_long"))
      if (pfs::test::I(row, "thread_id") == static_cast<std::int64_t>(holder))
        held_by = pfs::test::I(row, "event_id");
    ASSERT_NE(held_by, -1);
    pfs::shutdown();
    const auto lines = lines_of(dir + "/thread.background." + std::to_string(waiter.load()));
    ASSERT_EQ(lines.size(), 3u);  // header, start, end
    const std::string tail =
        ", 'lock', NULL, 0, " + std::to_string(holder) + ", " + std::to_string(held_by) + ", NULL);";
    EXPECT_EQ(lines[2].substr(lines[2].size() - tail.size()), tail) << lines[2];
  });
}

TEST(Trace, TraceEnabledNeedsEnabled) {
  in_child([] {
    options o = small_options("trace_rule");
    o.instrument = "wait/synch/mutex/app/on=ON";
    ASSERT_TRUE(init(o)) << last_error();
    pfs::mutex on{"app", "on"}, off{"app", "off"};
    EXPECT_TRUE(set_instrument_trace("wait/synch/mutex/app/on", true));
    EXPECT_FALSE(set_instrument_trace("wait/synch/mutex/app/off", true));  // ENABLED is NO: an error
    const region_map& r = *current_region();
    EXPECT_EQ(pfs::test::find_class(r, "wait/synch/mutex/app/off")->flags & kFlagTraced, 0);
    EXPECT_NE(pfs::test::find_class(r, "wait/synch/mutex/app/on")->flags & kFlagTraced, 0);
    // Disabling an instrument ends its tracing.
    EXPECT_TRUE(set_instrument("wait/synch/mutex/app/on", false, false));
    EXPECT_EQ(pfs::test::find_class(r, "wait/synch/mutex/app/on")->flags & kFlagTraced, 0);
  });
}

TEST(Trace, OneFilePerThreadNamedByActor) {
  const std::string dir = make_dir("trace_threads");
  in_child([&] {
    ASSERT_TRUE(init(trace_options("trace_threads", dir))) << last_error();
    const region_map& r = *current_region();
    {
      setup_lock_guard lock(r);
      ASSERT_EQ(setup::insert_actor(r, "%", "harry", "%", true, true, true), setup::actor_result::ok);
    }
    trace_actor(r, false);  // the default row (PFS_TRACE_ALL made it YES)
    pfs::mutex m{"app", "m"};
    std::vector<std::uint64_t> ids;
    std::mutex ids_mutex;
    std::vector<std::thread> threads;
    for (int i = 0; i < 3; ++i)
      threads.emplace_back([&] {
        set_thread_actor("harry", "db1");
        for (int k = 0; k < 100; ++k) pfs::lock_guard g(m);
        std::lock_guard<std::mutex> g(ids_mutex);
        ids.push_back(thread_id());
      });
    for (auto& t : threads) t.join();
    { pfs::lock_guard g(m); }  // main thread: background, its row says NO
    const auto files = files_in(dir);
    ASSERT_EQ(files.size(), 3u);
    for (auto id : ids) {
      const std::string name = "thread.harry_db1." + std::to_string(id);
      EXPECT_NE(std::find(files.begin(), files.end(), name), files.end()) << name;
      EXPECT_EQ(lines_of(dir + "/" + name).size(), 1u + 200u);
    }
  });
}

TEST(Trace, ErrorsDisableTracingForTheActorOnly) {
  in_child([] {
    options o = trace_options("trace_err", "/nonexistent/dir");
    ASSERT_TRUE(init(o)) << last_error();
    const region_map& r = *current_region();
    trace_actor(r, true);
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 10; ++i) pfs::lock_guard g(m);  // the workload completes
    EXPECT_EQ(pfs::test::lost(r, kTraceErrors), 1u);
    const setup::actor_match a = setup::match_actor(r, "", "", "");
    EXPECT_TRUE(a.found);
    EXPECT_FALSE(a.trace);  // TRACE_ENABLED shows NO
    EXPECT_TRUE(a.enabled);
    EXPECT_EQ(pfs::test::find_instance(r, kArrayMutexes, &m)->stat.count, 10u);  // instrumentation goes on
  });
}

TEST(Trace, FullDiskStopsTracingAndTheProgramRunsOn) {
  const std::string dir = make_dir("trace_full");
  in_child([&] {
    signal(SIGXFSZ, SIG_IGN);  // a write past RLIMIT_FSIZE fails with EFBIG instead
    ASSERT_TRUE(init(trace_options("trace_full", dir))) << last_error();
    const region_map& r = *current_region();
    trace_actor(r, true);
    rlimit lim{100 * 1024, RLIM_INFINITY};  // a 100 KiB "disk"
    ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &lim), 0);
    pfs::mutex m{"app", "m"};
    for (int i = 0; i < 20000; ++i) pfs::lock_guard g(m);
    EXPECT_GE(pfs::test::lost(r, kTraceErrors), 1u);
    EXPECT_FALSE(setup::match_actor(r, "", "", "").trace);
    EXPECT_EQ(pfs::test::find_instance(r, kArrayMutexes, &m)->stat.count, 20000u);
    struct stat st {};
    const auto files = files_in(dir);
    ASSERT_EQ(files.size(), 1u);
    ASSERT_EQ(::stat((dir + "/" + files[0]).c_str(), &st), 0);
    EXPECT_LE(st.st_size, 100 * 1024);
  });
}

TEST(Trace, MergeToolOrdersThreadsByTimerStart) {
  const std::string dir = make_dir("trace_merge");
  in_child([&] {
    options o = trace_options("trace_merge", dir);
    o.instrument = "%=ON";  // timed: TIMER_START orders the merge
    ASSERT_TRUE(init(o)) << last_error();
    trace_actor(*current_region(), true);
    pfs::mutex a{"app", "a"}, b{"app", "b"};
    std::thread t1([&] {
      for (int i = 0; i < 500; ++i) pfs::lock_guard g(a);
    });
    std::thread t2([&] {
      for (int i = 0; i < 500; ++i) pfs::lock_guard g(b);
    });
    t1.join();
    t2.join();
  });
  ASSERT_EQ(files_in(dir).size(), 2u);
  const std::string merged = dir + "/merged.sql";
  const std::string cmd =
      std::string(PFS_BUILD_DIR) + "/tools/pfs_trace_merge '" + dir + "' > '" + merged + "'";
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  const auto lines = lines_of(merged);
  ASSERT_EQ(lines.size(), 1u + 2000u);  // one header, every line of both files
  std::int64_t last = -1;
  int from_a = 0, from_b = 0;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    // TIMER_START is the 6th value.
    std::string values = lines[i].substr(lines[i].find('(') + 1);
    std::size_t pos = 0;
    for (int field = 0; field < 5; ++field) pos = values.find(", ", pos) + 2;
    const std::int64_t start = std::stoll(values.substr(pos));
    EXPECT_GE(start, last) << lines[i];
    last = start;
    from_a += lines[i].find("app/a'") != std::string::npos;
    from_b += lines[i].find("app/b'") != std::string::npos;
  }
  EXPECT_EQ(from_a, 1000);
  EXPECT_EQ(from_b, 1000);
}
