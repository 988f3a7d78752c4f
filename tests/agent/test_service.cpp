// The service table for plugins (pfs_service.h, MySQL's PSI service): the
// versions the agent knows, and a plugin loaded with dlopen that records waits
// through it without any link with the agent.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <string>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_service.h"
#include "tests/agent/agent_test_util.h"
#include "tests/agent/named_rows.h"

namespace {

TEST(Service, VersionOneIsTheCAbiAndUnknownVersionsAreNull) {
  EXPECT_EQ(pfs_get_interface(0), nullptr);
  EXPECT_EQ(pfs_get_interface(7), nullptr);
  EXPECT_EQ(pfs_get_interface(-1), nullptr);
  const auto* v1 = static_cast<const pfs_service_v1*>(pfs_get_interface(PFS_SERVICE_VERSION_1));
  ASSERT_NE(v1, nullptr);
  EXPECT_EQ(v1->version, 1u);
  EXPECT_EQ(v1->size, sizeof(pfs_service_v1));
  EXPECT_EQ(v1->register_mutex, &pfs_register_mutex);
  EXPECT_EQ(v1->start_mutex_wait, &pfs_start_mutex_wait);
  EXPECT_EQ(v1->statement_start, &pfs_statement_start);
  EXPECT_EQ(v1->set_thread_parent, &pfs_set_thread_parent);  // the last member
}

TEST(Service, VersionTwoIsVersionOnePlusSockets) {
  const auto* v2 = static_cast<const pfs_service_v2*>(pfs_get_interface(PFS_SERVICE_VERSION_2));
  ASSERT_NE(v2, nullptr);
  EXPECT_EQ(v2->base.version, 2u);
  EXPECT_EQ(v2->base.size, sizeof(pfs_service_v2));
  EXPECT_EQ(v2->base.register_mutex, &pfs_register_mutex);
  EXPECT_EQ(v2->base.set_thread_parent, &pfs_set_thread_parent);
  EXPECT_EQ(v2->register_socket, &pfs_register_socket);
  EXPECT_EQ(v2->start_socket_wait, &pfs_start_socket_wait);
  EXPECT_EQ(v2->destroy_socket, &pfs_destroy_socket);  // the last member
}

TEST(Service, VersionThreeIsVersionTwoPlusMemory) {
  const auto* v3 = static_cast<const pfs_service_v3*>(pfs_get_interface(PFS_SERVICE_VERSION_3));
  ASSERT_NE(v3, nullptr);
  EXPECT_EQ(v3->base.base.version, 3u);
  EXPECT_EQ(v3->base.base.size, sizeof(pfs_service_v3));
  EXPECT_EQ(v3->base.base.register_mutex, &pfs_register_mutex);
  EXPECT_EQ(v3->base.destroy_socket, &pfs_destroy_socket);
  EXPECT_EQ(v3->register_memory, &pfs_register_memory);
  EXPECT_EQ(v3->memory_alloc, &pfs_memory_alloc);
  EXPECT_EQ(v3->memory_free, &pfs_memory_free);  // the last member
}

TEST(Service, VersionFourIsVersionThreePlusErrors) {
  const auto* v4 = static_cast<const pfs_service_v4*>(pfs_get_interface(PFS_SERVICE_VERSION_4));
  ASSERT_NE(v4, nullptr);
  EXPECT_EQ(v4->base.base.base.version, 4u);
  EXPECT_EQ(v4->base.base.base.size, sizeof(pfs_service_v4));
  EXPECT_EQ(v4->base.base.base.register_mutex, &pfs_register_mutex);
  EXPECT_EQ(v4->base.memory_free, &pfs_memory_free);
  EXPECT_EQ(v4->register_error, &pfs_register_error);
  EXPECT_EQ(v4->log_error, &pfs_log_error);  // the last member
}

TEST(Service, VersionFiveIsVersionFourPlusTheLockTlsAndPluginFamilies) {
  const auto* v5 = static_cast<const pfs_service_v5*>(pfs_get_interface(PFS_SERVICE_VERSION_5));
  ASSERT_NE(v5, nullptr);
  EXPECT_EQ(v5->base.base.base.base.version, 5u);
  EXPECT_EQ(v5->base.base.base.base.size, sizeof(pfs_service_v5));
  EXPECT_EQ(v5->base.base.base.base.register_mutex, &pfs_register_mutex);
  EXPECT_EQ(v5->base.log_error, &pfs_log_error);
  // Table locks
  EXPECT_EQ(v5->start_table_lock_wait, &pfs_start_table_lock_wait);
  EXPECT_EQ(v5->end_table_lock_wait, &pfs_end_table_lock_wait);
  // TLS channels
  EXPECT_EQ(v5->register_tls_channel, &pfs_register_tls_channel);
  EXPECT_EQ(v5->tls_channel_set, &pfs_tls_channel_set);
  EXPECT_EQ(v5->unregister_tls_channel, &pfs_unregister_tls_channel);
  // Data locks
  EXPECT_EQ(v5->data_lock_create, &pfs_data_lock_create);
  EXPECT_EQ(v5->data_lock_set_status, &pfs_data_lock_set_status);
  EXPECT_EQ(v5->data_lock_destroy, &pfs_data_lock_destroy);
  EXPECT_EQ(v5->data_lock_wait_create, &pfs_data_lock_wait_create);
  EXPECT_EQ(v5->data_lock_wait_destroy, &pfs_data_lock_wait_destroy);
  // Metadata locks
  EXPECT_EQ(v5->create_metadata_lock, &pfs_create_metadata_lock);
  EXPECT_EQ(v5->set_metadata_lock_status, &pfs_set_metadata_lock_status);
  EXPECT_EQ(v5->destroy_metadata_lock, &pfs_destroy_metadata_lock);
  EXPECT_EQ(v5->start_metadata_wait, &pfs_start_metadata_wait);
  EXPECT_EQ(v5->end_metadata_wait, &pfs_end_metadata_wait);
  EXPECT_EQ(v5->unload_plugin, &pfs_unload_plugin);  // the last member
}

TEST(Service, VersionSixIsVersionFivePlusTheProgramsMetrics) {
  const auto* v6 = static_cast<const pfs_service_v6*>(pfs_get_interface(PFS_SERVICE_VERSION_6));
  ASSERT_NE(v6, nullptr);
  const auto* v5 = static_cast<const pfs_service_v5*>(pfs_get_interface(PFS_SERVICE_VERSION_5));
  ASSERT_NE(v5, nullptr);
  EXPECT_EQ(v6->base.base.base.base.base.version, 6u);
  EXPECT_EQ(v6->base.base.base.base.base.size, sizeof(pfs_service_v6));
  EXPECT_EQ(v6->base.base.base.base.base.register_mutex, &pfs_register_mutex);
  EXPECT_EQ(v6->base.base.base.register_memory, &pfs_register_memory);
  EXPECT_EQ(v6->base.unload_plugin, v5->unload_plugin);
  EXPECT_EQ(v6->register_meter, &pfs_register_meter);
  EXPECT_EQ(v6->register_metric, &pfs_register_metric);
  EXPECT_EQ(v6->register_observed_metric, &pfs_register_observed_metric);
  EXPECT_EQ(v6->unregister_observer, &pfs_unregister_observer);
  EXPECT_EQ(v6->metric_add, &pfs_metric_add);
  EXPECT_EQ(v6->metric_add_double, &pfs_metric_add_double);
  EXPECT_EQ(v6->metric_set, &pfs_metric_set);
  EXPECT_EQ(v6->metric_set_double, &pfs_metric_set_double);
  EXPECT_EQ(v6->metric_gauge_cell, &pfs_metric_gauge_cell);  // the last member
}

TEST(Service, APluginLoadedAtRunTimeRecordsItsWaits) {
  pfs::test::in_child([] {
    ASSERT_TRUE(pfs::init(pfs::test::small_options("service"))) << pfs::last_error();
    const std::string path = std::string(PFS_BUILD_DIR) + "/tests/pfs_test_plugin.so";
    void* plugin = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(plugin, nullptr) << dlerror();
    auto run = reinterpret_cast<int (*)(int)>(dlsym(plugin, "pfs_test_plugin_run"));
    ASSERT_NE(run, nullptr);
    EXPECT_EQ(run(5), 5);
    std::int64_t count = -1;
    for (const auto& r : pfs::test::scan("events_waits_summary_global_by_event_name"))
      if (pfs::test::S(r, "event_name") == "wait/synch/mutex/plugin/lock")
        count = pfs::test::I(r, "count_star");
    EXPECT_EQ(count, 5);
    dlclose(plugin);
  });
}

}  // namespace
