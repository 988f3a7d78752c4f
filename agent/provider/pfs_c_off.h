/* The C ABI with the agent compiled out (PFS_NO_INSTRUMENTATION; included by
 * pfs_c.h): every function does nothing and says so. Generated from pfs_c.h's
 * declarations; keep the two in step (tests/end_to_end/test_no_instrumentation.cpp builds
 * every header this way). */

PFS_C_API int pfs_init_from_env(void) { return -1; }
PFS_C_API const char* pfs_last_error(void) { return "instrumentation compiled out (PFS_NO_INSTRUMENTATION)"; }
PFS_C_API int pfs_active(void) { return 0; }
PFS_C_API void pfs_shutdown(void) {}
PFS_C_API pfs_key pfs_register_mutex(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API pfs_key pfs_register_rwlock(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API pfs_key pfs_register_cond(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API pfs_key pfs_register_thread(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API const volatile unsigned char* pfs_class_flags(pfs_key key) {
  (void)key;
  static const volatile unsigned char off = 0;
  return &off;
}
PFS_C_API pfs_sync* pfs_init_mutex(pfs_key key, const void* identity) {
  (void)key;
  (void)identity;
  return NULL;
}
PFS_C_API pfs_sync* pfs_init_rwlock(pfs_key key, const void* identity) {
  (void)key;
  (void)identity;
  return NULL;
}
PFS_C_API pfs_sync* pfs_init_cond(pfs_key key, const void* identity) {
  (void)key;
  (void)identity;
  return NULL;
}
PFS_C_API void pfs_destroy_sync(pfs_sync* handle) { (void)handle; }
PFS_C_API int pfs_start_mutex_wait(pfs_wait_locker* locker, pfs_sync* m, int op, const char* file,
                                   unsigned line) {
  (void)locker;
  (void)m;
  (void)op;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_mutex_wait(pfs_wait_locker* locker, int rc) {
  (void)locker;
  (void)rc;
}
PFS_C_API void pfs_unlock_mutex(pfs_sync* m) { (void)m; }
PFS_C_API int pfs_start_rwlock_wait(pfs_wait_locker* locker, pfs_sync* rw, int op, const char* file,
                                    unsigned line) {
  (void)locker;
  (void)rw;
  (void)op;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_rwlock_wait(pfs_wait_locker* locker, int rc) {
  (void)locker;
  (void)rc;
}
PFS_C_API void pfs_unlock_rwlock(pfs_sync* rw) { (void)rw; }
PFS_C_API int pfs_start_cond_wait(pfs_wait_locker* locker, pfs_sync* cond, pfs_sync* m, int op,
                                  const char* file, unsigned line) {
  (void)locker;
  (void)cond;
  (void)m;
  (void)op;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_cond_wait(pfs_wait_locker* locker, int rc) {
  (void)locker;
  (void)rc;
}
PFS_C_API void pfs_signal_cond(pfs_sync* cond) { (void)cond; }
PFS_C_API void pfs_broadcast_cond(pfs_sync* cond) { (void)cond; }
PFS_C_API pfs_key pfs_register_file(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API int pfs_start_file_name_wait(pfs_wait_locker* locker, pfs_key key, int op, const char* path,
                                       const char* file, unsigned line) {
  (void)locker;
  (void)key;
  (void)op;
  (void)path;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_file_open_wait(pfs_wait_locker* locker, int fd) {
  (void)locker;
  (void)fd;
}
PFS_C_API void pfs_end_file_name_wait(pfs_wait_locker* locker, int rc, const char* new_path) {
  (void)locker;
  (void)rc;
  (void)new_path;
}
PFS_C_API int pfs_start_file_wait(pfs_wait_locker* locker, int fd, int op, const char* file, unsigned line) {
  (void)locker;
  (void)fd;
  (void)op;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_file_wait(pfs_wait_locker* locker, int64_t bytes) {
  (void)locker;
  (void)bytes;
}
PFS_C_API void pfs_end_file_close_wait(pfs_wait_locker* locker, int fd) {
  (void)locker;
  (void)fd;
}
PFS_C_API void pfs_forget_fd(int fd) { (void)fd; }
PFS_C_API pfs_key pfs_register_socket(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API int pfs_init_socket(pfs_key key, int fd, const void* addr, unsigned addr_len) {
  (void)key;
  (void)fd;
  (void)addr;
  (void)addr_len;
  return 0;
}
PFS_C_API void pfs_set_socket_address(int fd, const void* addr, unsigned addr_len) {
  (void)fd;
  (void)addr;
  (void)addr_len;
}
PFS_C_API void pfs_set_socket_state(int fd, int state) {
  (void)fd;
  (void)state;
}
PFS_C_API void pfs_set_socket_owner(int fd) { (void)fd; }
PFS_C_API pfs_key pfs_socket_class(int fd) {
  (void)fd;
  return 0;
}
PFS_C_API int pfs_start_socket_wait(pfs_wait_locker* locker, int fd, int op, const char* file,
                                    unsigned line) {
  (void)locker;
  (void)fd;
  (void)op;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_socket_wait(pfs_wait_locker* locker, int64_t bytes) {
  (void)locker;
  (void)bytes;
}
PFS_C_API void pfs_end_socket_close_wait(pfs_wait_locker* locker, int fd) {
  (void)locker;
  (void)fd;
}
PFS_C_API void pfs_destroy_socket(int fd) { (void)fd; }
PFS_C_API pfs_key pfs_register_table_io(const char* category) {
  (void)category;
  return 0;
}
PFS_C_API pfs_table* pfs_declare_table(pfs_key key, int object_type, const char* schema, const char* name) {
  (void)key;
  (void)object_type;
  (void)schema;
  (void)name;
  return NULL;
}
PFS_C_API unsigned pfs_declare_table_index(pfs_table* table, const char* index_name) {
  (void)table;
  (void)index_name;
  return 0;
}
PFS_C_API void pfs_drop_table(pfs_table* table) { (void)table; }
PFS_C_API int pfs_start_table_io_wait(pfs_wait_locker* locker, pfs_table* table, int op, unsigned index,
                                      unsigned flags, const char* file, unsigned line) {
  (void)locker;
  (void)table;
  (void)op;
  (void)index;
  (void)flags;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_table_io_wait(pfs_wait_locker* locker, uint64_t rows) {
  (void)locker;
  (void)rows;
}
PFS_C_API pfs_key pfs_register_stage(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API pfs_key pfs_register_statement(const char* category, const char* name) {
  (void)category;
  (void)name;
  return 0;
}
PFS_C_API int pfs_statement_start(pfs_key key, const char* schema, const char* file, unsigned line) {
  (void)key;
  (void)schema;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_statement_set_text(const char* text, size_t length) {
  (void)text;
  (void)length;
}
PFS_C_API void pfs_statement_set_digest_text(const char* normalized, size_t length) {
  (void)normalized;
  (void)length;
}
PFS_C_API void pfs_statement_set_rows(uint64_t affected, uint64_t sent, uint64_t examined) {
  (void)affected;
  (void)sent;
  (void)examined;
}
PFS_C_API void pfs_statement_set_error(unsigned mysql_errno, const char* sqlstate, const char* message) {
  (void)mysql_errno;
  (void)sqlstate;
  (void)message;
}
PFS_C_API void pfs_statement_add_warnings(unsigned count) { (void)count; }
PFS_C_API void pfs_statement_end(int level) { (void)level; }
PFS_C_API uint64_t pfs_stage_start(pfs_key key, const char* file, unsigned line) {
  (void)key;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_stage_set_progress(uint64_t completed, uint64_t estimated) {
  (void)completed;
  (void)estimated;
}
PFS_C_API void pfs_stage_end(void) {}
PFS_C_API void pfs_stage_end_event(uint64_t event_id) { (void)event_id; }
PFS_C_API int pfs_transaction_start(int read_only, int isolation, int autocommit, const char* file,
                                    unsigned line) {
  (void)read_only;
  (void)isolation;
  (void)autocommit;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_transaction_set_gtid(const char* gtid) { (void)gtid; }
PFS_C_API void pfs_transaction_set_trx_id(uint64_t trx_id) { (void)trx_id; }
PFS_C_API void pfs_transaction_set_xid(long format_id, const char* gtrid, const char* bqual) {
  (void)format_id;
  (void)gtrid;
  (void)bqual;
}
PFS_C_API void pfs_transaction_savepoint(int kind) { (void)kind; }
PFS_C_API void pfs_transaction_end(int committed) { (void)committed; }
PFS_C_API int pfs_start_idle_wait(pfs_wait_locker* locker, const char* file, unsigned line) {
  (void)locker;
  (void)file;
  (void)line;
  return 0;
}
PFS_C_API void pfs_end_idle_wait(pfs_wait_locker* locker) { (void)locker; }
PFS_C_API void pfs_set_thread_connection(uint64_t processlist_id, int connection_type) {
  (void)processlist_id;
  (void)connection_type;
}
PFS_C_API void pfs_register_current_thread(pfs_key thread_class, const char* name) {
  (void)thread_class;
  (void)name;
}
PFS_C_API void pfs_set_thread_actor(const char* user, const char* host, const char* role) {
  (void)user;
  (void)host;
  (void)role;
}
PFS_C_API uint64_t pfs_current_thread_id(void) { return 0; }
PFS_C_API void pfs_unregister_current_thread(void) {}
PFS_C_API int pfs_spawn_thread(pthread_t* thread, const pthread_attr_t* attr, void* (*start)(void*),
                               void* arg) {
  return pthread_create(thread, attr, start, arg);
}
PFS_C_API void pfs_set_thread_parent(uint64_t parent_thread_id) { (void)parent_thread_id; }
