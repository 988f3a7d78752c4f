// Every entry point of the agent, each called through a scenario: the C ABI's
// are keyed by their address in the service table (pfs_service.h), so a caller can
// check that each entry of the table has one; then the C++ API on top. Shared by
// tests/agent/test_region_changes.cpp and tests/fuzz/fuzz_provider.cpp, which call them
// all on a region that changed under the program.
#pragma once

#include <fcntl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/provider/pfs_io.h"
#include "agent/provider/pfs_service.h"
#include "agent/provider/pfs_socket.h"
#include "agent/provider/pfs_work.h"

namespace pfs::entry_points {

// What the scenarios use: classes and objects made before the change (their
// records are in the old file) and made again after it.
struct fixture {
  pfs_key mutex_key = 0, rwlock_key = 0, cond_key = 0, thread_key = 0, file_key = 0, table_key = 0;
  pfs_key stage_key = 0, statement_key = 0, socket_key = 0;
  pfs_sync* mutex = nullptr;
  pfs_sync* rwlock = nullptr;
  pfs_sync* cond = nullptr;
  pfs_table* table = nullptr;
  std::string file_path;
  int sockets[2] = {-1, -1};
};

inline fixture g_fix;
inline constexpr const char* kHere = __FILE__;

inline void lock_mutex(pfs_sync* m) {
  pfs_wait_locker l;
  if (pfs_start_mutex_wait(&l, m, PFS_OP_LOCK, kHere, __LINE__)) pfs_end_mutex_wait(&l, 0);
  pfs_unlock_mutex(m);
}
inline void lock_rwlock(pfs_sync* rw) {
  pfs_wait_locker l;
  if (pfs_start_rwlock_wait(&l, rw, PFS_OP_READ_LOCK, kHere, __LINE__)) pfs_end_rwlock_wait(&l, 0);
  pfs_unlock_rwlock(rw);
}
inline void wait_cond(pfs_sync* c, pfs_sync* m) {
  pfs_wait_locker l;
  if (pfs_start_cond_wait(&l, c, m, PFS_OP_TIMED_WAIT, kHere, __LINE__)) pfs_end_cond_wait(&l, 110);
  pfs_signal_cond(c);
  pfs_broadcast_cond(c);
}
inline void file_io(const fixture& f) {
  pfs_wait_locker l;
  int fd = -1;
  const int rec =
      pfs_start_file_name_wait(&l, f.file_key, PFS_FILE_OPEN, f.file_path.c_str(), kHere, __LINE__);
  fd = ::open(f.file_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (rec) pfs_end_file_open_wait(&l, fd);
  if (fd < 0) return;
  if (pfs_start_file_wait(&l, fd, PFS_FILE_WRITE, kHere, __LINE__)) pfs_end_file_wait(&l, 4);
  if (pfs_start_file_wait(&l, fd, PFS_FILE_CLOSE, kHere, __LINE__)) pfs_end_file_close_wait(&l, fd);
  ::close(fd);
  pfs_forget_fd(fd);
  if (pfs_start_file_name_wait(&l, f.file_key, PFS_FILE_STAT, f.file_path.c_str(), kHere, __LINE__))
    pfs_end_file_name_wait(&l, 0, nullptr);
}
inline void table_io(pfs_table* t) {
  pfs_wait_locker l;
  if (pfs_start_table_io_wait(&l, t, PFS_TABLE_FETCH, 1, 0, kHere, __LINE__)) pfs_end_table_io_wait(&l, 3);
}
inline void socket_io(const fixture& f) {
  const int fd = f.sockets[0];
  pfs_wait_locker l;
  if (pfs_start_socket_wait(&l, fd, PFS_SOCKET_SEND, kHere, __LINE__)) pfs_end_socket_wait(&l, 1);
  pfs_set_socket_state(fd, PFS_SOCKET_STATE_IDLE);
  pfs_set_socket_owner(fd);
  (void)pfs_socket_class(fd);
}
inline void statement() {
  if (!pfs_statement_start(g_fix.statement_key, "db", kHere, __LINE__)) return;
  pfs_statement_set_text("SELECT 1", 8);
  pfs_statement_set_digest_text("SELECT ?", 8);
  const std::uint64_t stage = pfs_stage_start(g_fix.stage_key, kHere, __LINE__);
  pfs_stage_set_progress(1, 2);
  pfs_stage_end_event(stage);
  pfs_stage_start(g_fix.stage_key, kHere, __LINE__);
  pfs_stage_end();
  pfs_statement_set_rows(1, 2, 3);
  pfs_statement_set_error(1064, "42000", "syntax error");
  pfs_statement_add_warnings(2);
  pfs_statement_end(0);
}
inline void transaction() {
  if (!pfs_transaction_start(0, PFS_ISOLATION_REPEATABLE_READ, 0, kHere, __LINE__)) return;
  pfs_transaction_set_gtid("3E11FA47-71CA-11E1-9E33-C80AA9429562:23");
  pfs_transaction_set_trx_id(42);
  pfs_transaction_set_xid(1, "gtrid", "bqual");
  pfs_transaction_savepoint(PFS_SAVEPOINT);
  pfs_transaction_end(1);
}
inline void* spawned(void*) {
  lock_mutex(g_fix.mutex);
  return nullptr;
}
inline void thread_calls() {
  pfs_register_current_thread(g_fix.thread_key, "changed");
  pfs_set_thread_actor("user", "host", "%");
  pfs_set_thread_connection(7, PFS_CONNECTION_TCP);
  pfs_set_thread_parent(pfs_current_thread_id());
  pthread_t t;
  if (pfs_spawn_thread(&t, nullptr, spawned, nullptr) == 0) pthread_join(t, nullptr);
  lock_mutex(g_fix.mutex);
  pfs_unregister_current_thread();
  lock_mutex(g_fix.mutex);  // registers again on first use
}
inline void new_objects() {
  int identity = 0;
  const pfs_key m = pfs_register_mutex("changed", "new_mutex");
  (void)pfs_class_flags(m);
  pfs_sync* s = pfs_init_mutex(m, &identity);
  lock_mutex(s);
  pfs_destroy_sync(s);
  s = pfs_init_rwlock(pfs_register_rwlock("changed", "new_rwlock"), &identity);
  lock_rwlock(s);
  pfs_destroy_sync(s);
  s = pfs_init_cond(pfs_register_cond("changed", "new_cond"), &identity);
  pfs_destroy_sync(s);
  (void)pfs_register_thread("changed", "new_thread");
  (void)pfs_register_file("changed", "new_file");
  (void)pfs_register_stage("changed", "new stage");
  (void)pfs_register_statement("changed", "new_statement");
  pfs_table* t = pfs_declare_table(pfs_register_table_io("changed"), PFS_OBJECT_TABLE, "db", "new_table");
  (void)pfs_declare_table_index(t, "PRIMARY");
  table_io(t);
  pfs_drop_table(t);
  int sv[2];
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) return;
  const pfs_key sk = pfs_register_socket("changed", "new_socket");
  pfs_init_socket(sk, sv[0], nullptr, 0);
  pfs_set_socket_address(sv[0], nullptr, 0);
  pfs_wait_locker l;
  if (pfs_start_socket_wait(&l, sv[0], PFS_SOCKET_CLOSE, kHere, __LINE__))
    pfs_end_socket_close_wait(&l, sv[0]);
  pfs_destroy_socket(sv[0]);
  ::close(sv[0]);
  ::close(sv[1]);
}
inline void idle() {
  pfs_wait_locker l;
  if (pfs_start_idle_wait(&l, kHere, __LINE__)) pfs_end_idle_wait(&l);
}

using scenario = void (*)();
template <class F>
inline const void* key_of(F* f) {
  return reinterpret_cast<const void*>(f);
}

// Every entry point of the service table, and what calls it. pfs_shutdown's and
// pfs_init_from_env's scenarios run last (shutdown ends recording).
inline std::map<const void*, scenario> scenarios() {
  const scenario sync = [] {
    lock_mutex(g_fix.mutex);
    lock_rwlock(g_fix.rwlock);
    wait_cond(g_fix.cond, g_fix.mutex);
  };
  const scenario file = [] { file_io(g_fix); };
  const scenario table = [] { table_io(g_fix.table); };
  const scenario sock = [] { socket_io(g_fix); };
  const scenario none = [] {};
  std::map<const void*, scenario> m;
  for (const void* k : {key_of(pfs_register_mutex),      key_of(pfs_register_rwlock),
                        key_of(pfs_register_cond),       key_of(pfs_register_thread),
                        key_of(pfs_class_flags),         key_of(pfs_init_mutex),
                        key_of(pfs_init_rwlock),         key_of(pfs_init_cond),
                        key_of(pfs_destroy_sync),        key_of(pfs_register_file),
                        key_of(pfs_register_table_io),   key_of(pfs_declare_table),
                        key_of(pfs_declare_table_index), key_of(pfs_drop_table),
                        key_of(pfs_register_stage),      key_of(pfs_register_statement),
                        key_of(pfs_register_socket),     key_of(pfs_init_socket),
                        key_of(pfs_set_socket_address),  key_of(pfs_end_socket_close_wait),
                        key_of(pfs_destroy_socket)})
    m[k] = new_objects;
  for (const void* k : {key_of(pfs_start_mutex_wait), key_of(pfs_end_mutex_wait), key_of(pfs_unlock_mutex),
                        key_of(pfs_start_rwlock_wait), key_of(pfs_end_rwlock_wait), key_of(pfs_unlock_rwlock),
                        key_of(pfs_start_cond_wait), key_of(pfs_end_cond_wait), key_of(pfs_signal_cond),
                        key_of(pfs_broadcast_cond)})
    m[k] = sync;
  for (const void* k : {key_of(pfs_start_file_name_wait), key_of(pfs_end_file_open_wait),
                        key_of(pfs_end_file_name_wait), key_of(pfs_start_file_wait),
                        key_of(pfs_end_file_wait), key_of(pfs_end_file_close_wait), key_of(pfs_forget_fd)})
    m[k] = file;
  for (const void* k : {key_of(pfs_start_table_io_wait), key_of(pfs_end_table_io_wait)}) m[k] = table;
  for (const void* k : {key_of(pfs_set_socket_state), key_of(pfs_set_socket_owner), key_of(pfs_socket_class),
                        key_of(pfs_start_socket_wait), key_of(pfs_end_socket_wait)})
    m[k] = sock;
  for (const void* k :
       {key_of(pfs_statement_start), key_of(pfs_statement_set_text), key_of(pfs_statement_set_digest_text),
        key_of(pfs_statement_set_rows), key_of(pfs_statement_set_error), key_of(pfs_statement_add_warnings),
        key_of(pfs_statement_end), key_of(pfs_stage_start), key_of(pfs_stage_set_progress),
        key_of(pfs_stage_end), key_of(pfs_stage_end_event)})
    m[k] = statement;
  for (const void* k :
       {key_of(pfs_transaction_start), key_of(pfs_transaction_set_gtid), key_of(pfs_transaction_set_trx_id),
        key_of(pfs_transaction_set_xid), key_of(pfs_transaction_savepoint), key_of(pfs_transaction_end)})
    m[k] = transaction;
  for (const void* k : {key_of(pfs_start_idle_wait), key_of(pfs_end_idle_wait)}) m[k] = idle;
  for (const void* k :
       {key_of(pfs_set_thread_connection), key_of(pfs_register_current_thread), key_of(pfs_set_thread_actor),
        key_of(pfs_current_thread_id), key_of(pfs_unregister_current_thread), key_of(pfs_spawn_thread),
        key_of(pfs_set_thread_parent)})
    m[k] = thread_calls;
  m[key_of(pfs_last_error)] = [] { (void)pfs_last_error(); };
  m[key_of(pfs_active)] = [] { (void)pfs_active(); };
  m[key_of(pfs_init_from_env)] = none;  // at the end, with pfs_shutdown
  m[key_of(pfs_shutdown)] = none;
  return m;
}

// The service table's function pointers, in order (version 2 holds version 1).
inline std::vector<const void*> service_entry_points() {
  const auto* v2 = static_cast<const pfs_service_v2*>(pfs_get_interface(PFS_SERVICE_VERSION_2));
  std::vector<const void*> out;
  const auto* first = reinterpret_cast<const char*>(&v2->base.init_from_env);
  const auto* end = reinterpret_cast<const char*>(v2) + v2->base.size;
  for (const char* p = first; p < end; p += sizeof(void*)) {
    const void* f = nullptr;
    std::memcpy(&f, p, sizeof(f));
    out.push_back(f);
  }
  return out;
}

// The C++ API on top of the C ABI: objects, io wrappers, units of work, setters.
inline void cxx_api() {
  static pfs::mutex m{"changed", "cxx_mutex"};
  static pfs::shared_mutex rw{"changed", "cxx_rwlock"};
  static pfs::condition_variable cv{"changed", "cxx_cond"};
  {
    pfs::unique_lock lock(m);
    cv.wait_for(lock, std::chrono::microseconds(10));
  }
  rw.lock_shared();
  rw.unlock_shared();
  pfs::thread t([] {
    pfs::register_thread("changed", "cxx_thread");
    pfs::lock_guard g(m);
  });
  t.join();
  pfs::register_thread("changed", "cxx_registered", "me");
  pfs::set_thread_actor("u", "h");
  (void)pfs::thread_id();
  const pfs_key fk = pfs::file::register_class("changed", "cxx_file");
  const int fd = pfs::file::open(fk, g_fix.file_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0) {
    (void)pfs::file::write(fd, "abc", 3);
    pfs::file::close(fd);
  }
  static const pfs::statement_class sc{"changed", "cxx_statement"};
  {
    pfs::statement s(sc);
    pfs::transaction tx;
  }
  pfs::set_instrument("%changed%", true, true);
  pfs::set_instrument_trace("%changed%", true);
  pfs::set_actor_trace("%", "%", "%", true);
  pfs::set_consumer("events_waits_history", true);
  pfs::set_wait_timer("NANOSECOND");
  pfs::unregister_thread();
  (void)pfs::active();
  (void)pfs::last_error();
}

// Each scenario once (one scenario calls several entry points), then the C++ API.
inline void every_entry_point(const std::map<const void*, scenario>& all) {
  std::vector<scenario> done;
  for (const auto& [key, run] : all) {
    bool seen = false;
    for (scenario d : done) seen |= d == run;
    if (seen) continue;
    done.push_back(run);
    run();
  }
  cxx_api();
}

// Classes and objects of every kind, made while the region is sound; the socket
// pair and the data file next to region_path. False if the program cannot run.
inline bool make_fixture(const std::string& region_path) {
  g_fix.mutex_key = pfs_register_mutex("changed", "mutex");
  g_fix.rwlock_key = pfs_register_rwlock("changed", "rwlock");
  g_fix.cond_key = pfs_register_cond("changed", "cond");
  g_fix.thread_key = pfs_register_thread("changed", "thread");
  g_fix.file_key = pfs_register_file("changed", "file");
  g_fix.table_key = pfs_register_table_io("changed");
  g_fix.stage_key = pfs_register_stage("changed", "a stage");
  g_fix.statement_key = pfs_register_statement("changed", "statement");
  g_fix.socket_key = pfs_register_socket("changed", "socket");
  static int identity = 0;
  g_fix.mutex = pfs_init_mutex(g_fix.mutex_key, &identity);
  g_fix.rwlock = pfs_init_rwlock(g_fix.rwlock_key, &identity);
  g_fix.cond = pfs_init_cond(g_fix.cond_key, &identity);
  g_fix.table = pfs_declare_table(g_fix.table_key, PFS_OBJECT_TABLE, "db", "t");
  pfs_declare_table_index(g_fix.table, "PRIMARY");
  g_fix.file_path = region_path + ".data";
  if (socketpair(AF_UNIX, SOCK_STREAM, 0, g_fix.sockets) != 0) return false;
  pfs_init_socket(g_fix.socket_key, g_fix.sockets[0], nullptr, 0);
  return true;
}

}  // namespace pfs::entry_points
