// Data locks for C++ (MySQL's psi_data_lock.h): a lock manager's locks as rows of
// data_locks while they exist, and which lock waits for which as rows of
// data_lock_waits.
//
//   pfs_data_lock_desc d{};
//   d.engine = "INNODB"; d.engine_lock_id = "140:5:4:2"; d.object_name = "orders";
//   d.lock_type = "RECORD"; d.lock_mode = "X"; d.lock_status = "WAITING";
//   pfs::data_lock mine{d};                  // a row while it lives
//   { pfs::data_lock_wait w{mine, holder};   // a row of data_lock_waits while it lives
//     ... }
//   mine.set_status("GRANTED");
//
// Sits on the C ABI (pfs_c.h: pfs_data_lock_create ...), so it compiles to nothing
// under PFS_NO_INSTRUMENTATION. A lock the agent could not record (agent off, a
// text too long, the table full) is an empty handle whose calls do nothing.
#pragma once

#include <utility>

#include "agent/provider/pfs_c.h"

namespace pfs {

class data_lock {
 public:
  data_lock() = default;
  explicit data_lock(const pfs_data_lock_desc& desc) : handle_(pfs_data_lock_create(&desc)) {}
  data_lock(data_lock&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  data_lock& operator=(data_lock&& o) noexcept {
    if (this != &o) {
      pfs_data_lock_destroy(handle_);
      handle_ = std::exchange(o.handle_, nullptr);
    }
    return *this;
  }
  ~data_lock() { pfs_data_lock_destroy(handle_); }

  // LOCK_STATUS ('GRANTED', 'WAITING', or the program's word).
  void set_status(const char* status) { pfs_data_lock_set_status(handle_, status); }
  bool recorded() const { return handle_ != nullptr; }
  pfs_data_lock* handle() const { return handle_; }

 private:
  pfs_data_lock* handle_ = nullptr;
};

class data_lock_wait {
 public:
  data_lock_wait() = default;
  data_lock_wait(const data_lock& requesting, const data_lock& blocking)
      : handle_(pfs_data_lock_wait_create(requesting.handle(), blocking.handle())) {}
  data_lock_wait(data_lock_wait&& o) noexcept : handle_(std::exchange(o.handle_, nullptr)) {}
  data_lock_wait& operator=(data_lock_wait&& o) noexcept {
    if (this != &o) {
      pfs_data_lock_wait_destroy(handle_);
      handle_ = std::exchange(o.handle_, nullptr);
    }
    return *this;
  }
  ~data_lock_wait() { pfs_data_lock_wait_destroy(handle_); }

  bool recorded() const { return handle_ != nullptr; }

 private:
  pfs_data_lock_wait* handle_ = nullptr;
};

}  // namespace pfs
