// Metadata locks for C++ (MySQL's PSI metadata lock service): a lock the program
// requests on a named object is a row of metadata_locks from its request until
// its release, and the time it waits PENDING is a wait/lock/metadata/sql/mdl wait.
//
//   {
//     pfs::metadata_lock lock(&ticket, "TABLE", "shop", "orders", PFS_MDL_SHARED_READ,
//                             PFS_MDL_TRANSACTION);         // PENDING
//     lock.wait([&] { return my_lock_manager.acquire(ticket); });  // timed
//     lock.granted();                                      // GRANTED
//     ...
//   }                                                      // released: the row is gone
//
// Sits on the C ABI (pfs_c.h: pfs_create_metadata_lock...), so it compiles to
// nothing under PFS_NO_INSTRUMENTATION.
#pragma once

#include <utility>

#include "agent/provider/pfs_c.h"
#include "agent/provider/source_location.h"

namespace pfs {

class metadata_lock {
 public:
  // Requested now (PENDING). column: COLUMN_NAME, nullptr for none.
  metadata_lock(const void* identity, const char* object_type, const char* schema, const char* name,
                int lock_type, int duration, const char* column = nullptr,
                pfs::source_location at = pfs::source_location::current())
      : handle_(pfs_create_metadata_lock(identity, object_type, schema, name, column, lock_type, duration,
                                         PFS_MDL_PENDING, at.file_name(), at.line())) {}
  ~metadata_lock() { pfs_destroy_metadata_lock(handle_); }
  metadata_lock(const metadata_lock&) = delete;
  metadata_lock& operator=(const metadata_lock&) = delete;

  void granted() { pfs_set_metadata_lock_status(handle_, PFS_MDL_GRANTED); }
  void victim() { pfs_set_metadata_lock_status(handle_, PFS_MDL_VICTIM); }
  void timeout() { pfs_set_metadata_lock_status(handle_, PFS_MDL_TIMEOUT); }
  void killed() { pfs_set_metadata_lock_status(handle_, PFS_MDL_KILLED); }
  void set_status(int status) { pfs_set_metadata_lock_status(handle_, status); }

  // Calls acquire() (which blocks until the lock is granted or refused) as the
  // request's PENDING wait, and returns what it returns.
  template <class Acquire>
  decltype(auto) wait(Acquire&& acquire, pfs::source_location at = pfs::source_location::current()) {
    pending_wait w(*this, at);
    return std::forward<Acquire>(acquire)();
  }

  // The PENDING wait as a scope: started at construction, ended at destruction.
  class pending_wait {
   public:
    explicit pending_wait(metadata_lock& lock, pfs::source_location at = pfs::source_location::current())
        : recording_(pfs_start_metadata_wait(&locker_, lock.handle_, at.file_name(), at.line())) {}
    ~pending_wait() {
      if (recording_) pfs_end_metadata_wait(&locker_, 0);
    }
    pending_wait(const pending_wait&) = delete;
    pending_wait& operator=(const pending_wait&) = delete;

   private:
    pfs_wait_locker locker_;
    int recording_;
  };

  pfs_metadata_lock* handle() const { return handle_; }
  explicit operator bool() const { return handle_ != nullptr; }

 private:
  pfs_metadata_lock* handle_;
};

}  // namespace pfs
