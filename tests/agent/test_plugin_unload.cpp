// Plugin unload (pfs_unload_plugin): a plugin loaded with dlopen leaves a mutex, an
// rwlock, a condition, an open file and a table behind; unloading it removes those
// rows while a reader scans, keeps its classes and their summaries, and a plugin
// loaded again reuses its classes. The plugin is tests/plugin/pfs_unload_plugin.c.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_c.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

using pfs::test::I;
using pfs::test::in_child;
using pfs::test::S;
using pfs::test::scan;

const std::string kPlugin = std::string(PFS_BUILD_DIR) + "/tests/pfs_unload_plugin.so";

// Rows of table whose column names something of the plugin (its category in the
// name, or the given file).
int rows_of_plugin(const char* table, const char* column, const std::string& also = "") {
  int n = 0;
  for (const auto& r : scan(table)) {
    const std::string v = S(r, column);
    if (v.find("/unloadme/") != std::string::npos || (!also.empty() && v == also)) ++n;
  }
  return n;
}

std::int64_t column_of(const char* table, const char* event_name, const char* column) {
  for (const auto& r : scan(table))
    if (S(r, "event_name") == event_name) return I(r, column);
  return -1;
}

// Loads the plugin, runs it, returns its handle (nullptr on failure).
void* load_and_run(int waits, const std::string& path, int bytes) {
  void* plugin = dlopen(kPlugin.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(plugin, nullptr) << dlerror();
  if (plugin == nullptr) return nullptr;
  auto run = reinterpret_cast<int (*)(int, const char*, int)>(dlsym(plugin, "unload_plugin_run"));
  EXPECT_NE(run, nullptr);
  if (run == nullptr) return plugin;
  EXPECT_EQ(run(waits, path.c_str(), bytes), waits);
  return plugin;
}

TEST(PluginUnload, InstancesLeaveClassesStayAndAReloadReusesThem) {
  in_child([] {
    pfs::options o = pfs::test::small_options("plugin_unload");
    o.sizes.max_files = 16;
    o.sizes.max_tables = 8;
    ASSERT_TRUE(pfs::init(o)) << pfs::last_error();
    const std::string file1 = o.region_path + ".data1";
    const std::string file2 = o.region_path + ".data2";
    // Another plugin whose name starts the same: not unloaded with it.
    static int other;
    pfs_sync* kept = pfs_init_mutex(pfs_register_mutex("unloadme2", "lock"), &other);
    ASSERT_NE(kept, nullptr);

    // A reader scans the instance and event tables all along.
    std::atomic<bool> stop{false};
    std::atomic<int> scans{0};
    std::thread reader([&] {
      while (!stop.load()) {
        for (const char* t :
             {"mutex_instances", "rwlock_instances", "cond_instances", "file_instances", "setup_instruments",
              "events_waits_history_long", "file_summary_by_instance", "table_io_waits_summary_by_table"})
          (void)scan(t);
        scans.fetch_add(1);
      }
    });

    void* plugin = load_and_run(5, file1, 1000);
    ASSERT_NE(plugin, nullptr);
    EXPECT_EQ(rows_of_plugin("mutex_instances", "name"), 1);
    EXPECT_EQ(rows_of_plugin("rwlock_instances", "name"), 1);
    EXPECT_EQ(rows_of_plugin("cond_instances", "name"), 1);
    EXPECT_EQ(rows_of_plugin("file_instances", "file_name", file1), 1);
    EXPECT_EQ(rows_of_plugin("table_io_waits_summary_by_table", "object_schema", "unloadme"), 1);
    const std::size_t classes = scan("setup_instruments").size();

    // Unloaded: its five instances go, with the rows of nothing else.
    EXPECT_EQ(pfs_unload_plugin("unloadme"), 5u);
    dlclose(plugin);
    EXPECT_EQ(rows_of_plugin("mutex_instances", "name"), 0);
    EXPECT_EQ(rows_of_plugin("rwlock_instances", "name"), 0);
    EXPECT_EQ(rows_of_plugin("cond_instances", "name"), 0);
    EXPECT_EQ(rows_of_plugin("file_instances", "file_name", file1), 0);
    EXPECT_EQ(rows_of_plugin("table_io_waits_summary_by_table", "object_schema", "unloadme"), 0);
    int others = 0;
    for (const auto& r : scan("mutex_instances")) others += S(r, "name") == "wait/synch/mutex/unloadme2/lock";
    EXPECT_EQ(others, 1);
    // Its classes and their summaries stay, names and SOURCE texts copied.
    EXPECT_EQ(scan("setup_instruments").size(), classes);
    EXPECT_EQ(column_of("events_waits_summary_global_by_event_name", "wait/synch/mutex/unloadme/lock",
                        "count_star"),
              5);
    EXPECT_EQ(
        column_of("file_summary_by_event_name", "wait/io/file/unloadme/data", "sum_number_of_bytes_write"),
        1000);
    EXPECT_EQ(column_of("file_summary_by_event_name", "wait/io/file/unloadme/data", "count_write"), 4);
    int with_source = 0;
    for (const auto& r : scan("events_waits_history_long"))
      if (S(r, "event_name") == "wait/synch/mutex/unloadme/lock")
        with_source += S(r, "source").rfind("pfs_unload_plugin.c:", 0) == 0;
    EXPECT_EQ(with_source, 5);

    // Loaded again: the same classes, the summaries go on.
    plugin = load_and_run(3, file2, 100);
    ASSERT_NE(plugin, nullptr);
    EXPECT_EQ(scan("setup_instruments").size(), classes);
    EXPECT_EQ(rows_of_plugin("mutex_instances", "name"), 1);
    EXPECT_EQ(column_of("events_waits_summary_global_by_event_name", "wait/synch/mutex/unloadme/lock",
                        "count_star"),
              8);
    EXPECT_EQ(
        column_of("file_summary_by_event_name", "wait/io/file/unloadme/data", "sum_number_of_bytes_write"),
        1100);
    EXPECT_EQ(pfs_unload_plugin("unloadme"), 5u);
    dlclose(plugin);
    // A loaded machine may not have given the reader one whole round yet.
    while (scans.load() == 0) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    stop = true;
    reader.join();

    // Nothing of it is left to unload; bad names do nothing.
    EXPECT_EQ(pfs_unload_plugin("unloadme"), 0u);
    EXPECT_EQ(pfs_unload_plugin(nullptr), 0u);
    EXPECT_EQ(pfs_unload_plugin(""), 0u);
    EXPECT_EQ(pfs_unload_plugin("wait/synch"), 0u);
    EXPECT_EQ(pfs::unload_plugin("unloadme2"), 1u);
    unlink(file1.c_str());
    unlink(file2.c_str());
  });
}

}  // namespace
