/* The instrumentation service for dynamically loaded plugins (MySQL's PSI
 * service): a versioned table of the C ABI's functions that a plugin obtains at
 * run time, so it needs no link with the agent and keeps working with newer ones.
 *
 *   typedef const void* (*pfs_get_interface_fn)(int);
 *   pfs_get_interface_fn get = (pfs_get_interface_fn)dlsym(RTLD_DEFAULT, "pfs_get_interface");
 *   const pfs_service_v1* pfs = get ? get(PFS_SERVICE_VERSION_1) : NULL;
 *   if (pfs) { pfs_key k = pfs->register_mutex("plugin", "lock"); ... }
 *
 * pfs_get_interface(version) returns the table of that version, or NULL for a
 * version this agent does not know (a plugin newer than the agent then runs
 * uninstrumented). A version's table never changes: a later version is a new
 * struct that starts with all of the previous one's members, in order, and adds
 * its own at the end. size is sizeof the struct as this agent built it. */
#ifndef PFS_SERVICE_H
#define PFS_SERVICE_H

#include "agent/provider/pfs_c.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PFS_SERVICE_VERSION_1 1
#define PFS_SERVICE_VERSION_2 2 /* version 1 + socket io */
#define PFS_SERVICE_VERSION_3 3 /* version 2 + memory */
#define PFS_SERVICE_VERSION_4 4 /* version 3 + errors */
#define PFS_SERVICE_VERSION_5 \
  5 /* version 4 + metadata locks, table locks, data locks, TLS channels, plugin unload */
#define PFS_SERVICE_VERSION_6 6 /* version 5 + the program's metrics */

typedef struct pfs_service_v1 {
  uint32_t version; /* PFS_SERVICE_VERSION_1 */
  uint32_t size;    /* sizeof(pfs_service_v1) */
  int (*init_from_env)(void);
  const char* (*last_error)(void);
  int (*active)(void);
  void (*shutdown)(void);
  pfs_key (*register_mutex)(const char* category, const char* name);
  pfs_key (*register_rwlock)(const char* category, const char* name);
  pfs_key (*register_cond)(const char* category, const char* name);
  pfs_key (*register_thread)(const char* category, const char* name);
  const volatile unsigned char* (*class_flags)(pfs_key key);
  pfs_sync* (*init_mutex)(pfs_key key, const void* identity);
  pfs_sync* (*init_rwlock)(pfs_key key, const void* identity);
  pfs_sync* (*init_cond)(pfs_key key, const void* identity);
  void (*destroy_sync)(pfs_sync* handle);
  int (*start_mutex_wait)(pfs_wait_locker* locker, pfs_sync* m, int op, const char* file, unsigned line);
  void (*end_mutex_wait)(pfs_wait_locker* locker, int rc);
  void (*unlock_mutex)(pfs_sync* m);
  int (*start_rwlock_wait)(pfs_wait_locker* locker, pfs_sync* rw, int op, const char* file, unsigned line);
  void (*end_rwlock_wait)(pfs_wait_locker* locker, int rc);
  void (*unlock_rwlock)(pfs_sync* rw);
  int (*start_cond_wait)(pfs_wait_locker* locker, pfs_sync* cond, pfs_sync* m, int op, const char* file,
                         unsigned line);
  void (*end_cond_wait)(pfs_wait_locker* locker, int rc);
  void (*signal_cond)(pfs_sync* cond);
  void (*broadcast_cond)(pfs_sync* cond);
  pfs_key (*register_file)(const char* category, const char* name);
  int (*start_file_name_wait)(pfs_wait_locker* locker, pfs_key key, int op, const char* path,
                              const char* file, unsigned line);
  void (*end_file_open_wait)(pfs_wait_locker* locker, int fd);
  void (*end_file_name_wait)(pfs_wait_locker* locker, int rc, const char* new_path);
  int (*start_file_wait)(pfs_wait_locker* locker, int fd, int op, const char* file, unsigned line);
  void (*end_file_wait)(pfs_wait_locker* locker, int64_t bytes);
  void (*end_file_close_wait)(pfs_wait_locker* locker, int fd);
  void (*forget_fd)(int fd);
  pfs_key (*register_table_io)(const char* category);
  pfs_table* (*declare_table)(pfs_key key, int object_type, const char* schema, const char* name);
  unsigned (*declare_table_index)(pfs_table* table, const char* index_name);
  void (*drop_table)(pfs_table* table);
  int (*start_table_io_wait)(pfs_wait_locker* locker, pfs_table* table, int op, unsigned index,
                             unsigned flags, const char* file, unsigned line);
  void (*end_table_io_wait)(pfs_wait_locker* locker, uint64_t rows);
  pfs_key (*register_stage)(const char* category, const char* name);
  pfs_key (*register_statement)(const char* category, const char* name);
  int (*statement_start)(pfs_key key, const char* schema, const char* file, unsigned line);
  void (*statement_set_text)(const char* text, size_t length);
  void (*statement_set_digest_text)(const char* normalized, size_t length);
  void (*statement_set_rows)(uint64_t affected, uint64_t sent, uint64_t examined);
  void (*statement_set_error)(unsigned mysql_errno, const char* sqlstate, const char* message);
  void (*statement_add_warnings)(unsigned count);
  void (*statement_end)(int level);
  uint64_t (*stage_start)(pfs_key key, const char* file, unsigned line);
  void (*stage_set_progress)(uint64_t completed, uint64_t estimated);
  void (*stage_end)(void);
  void (*stage_end_event)(uint64_t event_id);
  int (*transaction_start)(int read_only, int isolation, int autocommit, const char* file, unsigned line);
  void (*transaction_set_gtid)(const char* gtid);
  void (*transaction_set_trx_id)(uint64_t trx_id);
  void (*transaction_set_xid)(long format_id, const char* gtrid, const char* bqual);
  void (*transaction_savepoint)(int kind);
  void (*transaction_end)(int committed);
  int (*start_idle_wait)(pfs_wait_locker* locker, const char* file, unsigned line);
  void (*end_idle_wait)(pfs_wait_locker* locker);
  void (*set_thread_connection)(uint64_t processlist_id, int connection_type);
  void (*register_current_thread)(pfs_key thread_class, const char* name);
  void (*set_thread_actor)(const char* user, const char* host, const char* role);
  uint64_t (*current_thread_id)(void);
  void (*unregister_current_thread)(void);
  int (*spawn_thread)(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*), void* arg);
  void (*set_thread_parent)(uint64_t parent_thread_id);
} pfs_service_v1;

/* Version 2: version 1's members (base.version is PFS_SERVICE_VERSION_2 and
 * base.size sizeof(pfs_service_v2)), then socket io. */
typedef struct pfs_service_v2 {
  pfs_service_v1 base;
  pfs_key (*register_socket)(const char* category, const char* name);
  int (*init_socket)(pfs_key key, int fd, const void* addr, unsigned addr_len);
  void (*set_socket_address)(int fd, const void* addr, unsigned addr_len);
  void (*set_socket_state)(int fd, int state);
  void (*set_socket_owner)(int fd);
  pfs_key (*socket_class)(int fd);
  int (*start_socket_wait)(pfs_wait_locker* locker, int fd, int op, const char* file, unsigned line);
  void (*end_socket_wait)(pfs_wait_locker* locker, int64_t bytes);
  void (*end_socket_close_wait)(pfs_wait_locker* locker, int fd);
  void (*destroy_socket)(int fd);
} pfs_service_v2;

/* Version 3: version 2's members (base.base.version is PFS_SERVICE_VERSION_3 and
 * base.base.size sizeof(pfs_service_v3)), then memory. */
typedef struct pfs_service_v3 {
  pfs_service_v2 base;
  pfs_key (*register_memory)(const char* category, const char* name, unsigned flags);
  pfs_key (*memory_alloc)(pfs_key key, size_t size, pfs_memory_owner* owner);
  pfs_key (*memory_realloc)(pfs_key key, size_t old_size, size_t new_size, pfs_memory_owner* owner);
  pfs_key (*memory_claim)(pfs_key key, size_t size, pfs_memory_owner* owner);
  void (*memory_free)(pfs_key key, size_t size, pfs_memory_owner owner);
} pfs_service_v3;

/* Version 4: version 3's members (base.base.base.version is PFS_SERVICE_VERSION_4
 * and its size sizeof(pfs_service_v4)), then errors. */
typedef struct pfs_service_v4 {
  pfs_service_v3 base;
  int (*register_error)(int number, const char* name, const char* sql_state);
  void (*log_error)(int number, int operation);
} pfs_service_v4;

/* Version 5: version 4's members (base.base.base.base.version is
 * PFS_SERVICE_VERSION_5 and its size sizeof(pfs_service_v5)), then metadata locks,
 * table locks, data locks, TLS channels and plugin unload. */
typedef struct pfs_service_v5 {
  pfs_service_v4 base;
  /* Table locks */
  int (*start_table_lock_wait)(pfs_wait_locker* locker, pfs_table* table, int lock_kind, const char* file,
                               unsigned line);
  void (*end_table_lock_wait)(pfs_wait_locker* locker);
  /* TLS channels */
  pfs_tls_channel* (*register_tls_channel)(const char* name);
  int (*tls_channel_set)(pfs_tls_channel* channel, const char* property, const char* value);
  void (*unregister_tls_channel)(pfs_tls_channel* channel);
  /* Data locks */
  pfs_data_lock* (*data_lock_create)(const pfs_data_lock_desc* desc);
  void (*data_lock_set_status)(pfs_data_lock* lock, const char* status);
  void (*data_lock_destroy)(pfs_data_lock* lock);
  pfs_data_lock_wait* (*data_lock_wait_create)(pfs_data_lock* requesting, pfs_data_lock* blocking);
  void (*data_lock_wait_destroy)(pfs_data_lock_wait* wait);
  /* Metadata locks */
  pfs_metadata_lock* (*create_metadata_lock)(const void* identity, const char* object_type,
                                             const char* schema, const char* name, const char* column,
                                             int lock_type, int duration, int status, const char* file,
                                             unsigned line);
  void (*set_metadata_lock_status)(pfs_metadata_lock* lock, int status);
  void (*destroy_metadata_lock)(pfs_metadata_lock* lock);
  int (*start_metadata_wait)(pfs_wait_locker* locker, pfs_metadata_lock* lock, const char* file,
                             unsigned line);
  void (*end_metadata_wait)(pfs_wait_locker* locker, int rc);
  /* Plugin unload */
  unsigned (*unload_plugin)(const char* plugin_name);
} pfs_service_v5;

/* Version 6: version 5's members (its size sizeof(pfs_service_v6)), then the
 * program's metrics. */
typedef struct pfs_service_v6 {
  pfs_service_v5 base;
  pfs_meter (*register_meter)(const char* name, const char* description, unsigned frequency);
  pfs_metric (*register_metric)(pfs_meter meter, const char* name, int type, int num_type, const char* unit,
                                const char* description);
  pfs_metric (*register_observed_metric)(pfs_meter meter, const char* name, int type, int num_type,
                                         const char* unit, const char* description, pfs_observe_fn callback,
                                         void* arg);
  void (*unregister_observer)(pfs_metric metric);
  void (*metric_add)(pfs_metric metric, int64_t delta);
  void (*metric_add_double)(pfs_metric metric, double delta);
  void (*metric_set)(pfs_metric metric, int64_t value);
  void (*metric_set_double)(pfs_metric metric, double value);
  uint64_t* (*metric_gauge_cell)(pfs_metric metric);
} pfs_service_v6;

/* The table of a version, NULL if unknown. Exported by the agent (the program's
 * executable when it links libpfs_agent.a with -rdynamic, or libpfs_preload.so). */
const void* pfs_get_interface(int version);

#ifdef __cplusplus
}
#endif

#endif /* PFS_SERVICE_H */
