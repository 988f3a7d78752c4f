// pfs_get_interface: the versioned service table of pfs_service.h, for plugins
// that are loaded at run time (MySQL's PSI service, the instrumentation interface).
#include "agent/provider/pfs_service.h"

namespace {

// Version 1's functions in its order: both tables start with them.
#define PFS_SERVICE_V1_FUNCTIONS                                                                             \
  pfs_init_from_env, pfs_last_error, pfs_active, pfs_shutdown, pfs_register_mutex, pfs_register_rwlock,      \
      pfs_register_cond, pfs_register_thread, pfs_class_flags, pfs_init_mutex, pfs_init_rwlock,              \
      pfs_init_cond, pfs_destroy_sync, pfs_start_mutex_wait, pfs_end_mutex_wait, pfs_unlock_mutex,           \
      pfs_start_rwlock_wait, pfs_end_rwlock_wait, pfs_unlock_rwlock, pfs_start_cond_wait, pfs_end_cond_wait, \
      pfs_signal_cond, pfs_broadcast_cond, pfs_register_file, pfs_start_file_name_wait,                      \
      pfs_end_file_open_wait, pfs_end_file_name_wait, pfs_start_file_wait, pfs_end_file_wait,                \
      pfs_end_file_close_wait, pfs_forget_fd, pfs_register_table_io, pfs_declare_table,                      \
      pfs_declare_table_index, pfs_drop_table, pfs_start_table_io_wait, pfs_end_table_io_wait,               \
      pfs_register_stage, pfs_register_statement, pfs_statement_start, pfs_statement_set_text,               \
      pfs_statement_set_digest_text, pfs_statement_set_rows, pfs_statement_set_error,                        \
      pfs_statement_add_warnings, pfs_statement_end, pfs_stage_start, pfs_stage_set_progress, pfs_stage_end, \
      pfs_stage_end_event, pfs_transaction_start, pfs_transaction_set_gtid, pfs_transaction_set_trx_id,      \
      pfs_transaction_set_xid, pfs_transaction_savepoint, pfs_transaction_end, pfs_start_idle_wait,          \
      pfs_end_idle_wait, pfs_set_thread_connection, pfs_register_current_thread, pfs_set_thread_actor,       \
      pfs_current_thread_id, pfs_unregister_current_thread, pfs_spawn_thread, pfs_set_thread_parent

constexpr pfs_service_v1 kServiceV1 = {
    PFS_SERVICE_VERSION_1,
    sizeof(pfs_service_v1),
    PFS_SERVICE_V1_FUNCTIONS,
};

#define PFS_SERVICE_V2_SOCKETS                                                                              \
  pfs_register_socket, pfs_init_socket, pfs_set_socket_address, pfs_set_socket_state, pfs_set_socket_owner, \
      pfs_socket_class, pfs_start_socket_wait, pfs_end_socket_wait, pfs_end_socket_close_wait,              \
      pfs_destroy_socket

constexpr pfs_service_v2 kServiceV2 = {
    {
        PFS_SERVICE_VERSION_2,
        sizeof(pfs_service_v2),
        PFS_SERVICE_V1_FUNCTIONS,
    },
    PFS_SERVICE_V2_SOCKETS,
};

#define PFS_SERVICE_V3_MEMORY \
  pfs_register_memory, pfs_memory_alloc, pfs_memory_realloc, pfs_memory_claim, pfs_memory_free

constexpr pfs_service_v3 kServiceV3 = {
    {
        {
            PFS_SERVICE_VERSION_3,
            sizeof(pfs_service_v3),
            PFS_SERVICE_V1_FUNCTIONS,
        },
        PFS_SERVICE_V2_SOCKETS,
    },
    PFS_SERVICE_V3_MEMORY,
};

constexpr pfs_service_v4 kServiceV4 = {
    {
        {
            {
                PFS_SERVICE_VERSION_4,
                sizeof(pfs_service_v4),
                PFS_SERVICE_V1_FUNCTIONS,
            },
            PFS_SERVICE_V2_SOCKETS,
        },
        PFS_SERVICE_V3_MEMORY,
    },
    pfs_register_error,
    pfs_log_error,
};

constexpr pfs_service_v5 kServiceV5 = {
    {
        {
            {
                {
                    PFS_SERVICE_VERSION_5,
                    sizeof(pfs_service_v5),
                    PFS_SERVICE_V1_FUNCTIONS,
                },
                PFS_SERVICE_V2_SOCKETS,
            },
            PFS_SERVICE_V3_MEMORY,
        },
        pfs_register_error,
        pfs_log_error,
    },
    // Table locks
    pfs_start_table_lock_wait,
    pfs_end_table_lock_wait,
    // TLS channels
    pfs_register_tls_channel,
    pfs_tls_channel_set,
    pfs_unregister_tls_channel,
    // Data locks
    pfs_data_lock_create,
    pfs_data_lock_set_status,
    pfs_data_lock_destroy,
    pfs_data_lock_wait_create,
    pfs_data_lock_wait_destroy,
    // Metadata locks
    pfs_create_metadata_lock,
    pfs_set_metadata_lock_status,
    pfs_destroy_metadata_lock,
    pfs_start_metadata_wait,
    pfs_end_metadata_wait,
    // Plugin unload
    pfs_unload_plugin,
};

// Version 6: version 5's table with its own version and size, then the metrics.
constexpr pfs_service_v6 make_service_v6() {
  pfs_service_v6 t{};
  t.base = kServiceV5;
  t.base.base.base.base.base.version = PFS_SERVICE_VERSION_6;
  t.base.base.base.base.base.size = sizeof(pfs_service_v6);
  t.register_meter = pfs_register_meter;
  t.register_metric = pfs_register_metric;
  t.register_observed_metric = pfs_register_observed_metric;
  t.unregister_observer = pfs_unregister_observer;
  t.metric_add = pfs_metric_add;
  t.metric_add_double = pfs_metric_add_double;
  t.metric_set = pfs_metric_set;
  t.metric_set_double = pfs_metric_set_double;
  t.metric_gauge_cell = pfs_metric_gauge_cell;
  return t;
}
constexpr pfs_service_v6 kServiceV6 = make_service_v6();

}  // namespace

extern "C" __attribute__((visibility("default"))) const void* pfs_get_interface(int version) {
  switch (version) {
    case PFS_SERVICE_VERSION_1:
      return &kServiceV1;
    case PFS_SERVICE_VERSION_2:
      return &kServiceV2;
    case PFS_SERVICE_VERSION_3:
      return &kServiceV3;
    case PFS_SERVICE_VERSION_4:
      return &kServiceV4;
    case PFS_SERVICE_VERSION_5:
      return &kServiceV5;
    case PFS_SERVICE_VERSION_6:
      return &kServiceV6;
    default:
      return nullptr;  // a newer plugin than this agent: it runs uninstrumented
  }
}
