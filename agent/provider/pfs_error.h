// Error instrumentation for C++ (MySQL's PSI error service): how often each of the
// program's errors was raised and handled, per thread and in all, and when it was
// first and last seen (events_errors_summary_by_thread_by_error,
// events_errors_summary_global_by_error).
//
//   constinit pfs::error_def key_not_found{1032, "ER_KEY_NOT_FOUND", "HY000"};
//   key_not_found.raised();   // declared on its first use
//   key_not_found.handled();  // the program recovered: moves it from raised to handled
//   pfs::error::raised(2013); // by number: an error never declared counts in the NULL row
//
// Sits on the C ABI (pfs_c.h: pfs_register_error, pfs_log_error), so it compiles
// to nothing under PFS_NO_INSTRUMENTATION.
#pragma once

#include <atomic>

#include "agent/provider/pfs_c.h"

namespace pfs {

class error_def {
 public:
  // sql_state: the SQLSTATE (5 characters), or nullptr for none.
  constexpr error_def(int number, const char* name, const char* sql_state = nullptr)
      : number_(number), name_(name), sql_state_(sql_state) {}
  error_def(const error_def&) = delete;
  error_def& operator=(const error_def&) = delete;

  int number() const { return number_; }
  void raised() const {
    declare();
    pfs_log_error(number_, PFS_ERROR_RAISED);
  }
  void handled() const {
    declare();
    pfs_log_error(number_, PFS_ERROR_HANDLED);
  }

  // Declares the error (once; the first call starts the agent from PFS_REGION, as
  // any registration does); false when it cannot be.
  bool declare() const {
    if (declared_.load(std::memory_order_acquire)) return true;
    if (pfs_register_error(number_, name_, sql_state_) == 0) return false;  // starts the agent
    declared_.store(true, std::memory_order_release);
    return true;
  }

 private:
  int number_;
  const char* name_;
  const char* sql_state_;
  mutable std::atomic<bool> declared_{false};
};

namespace error {
inline void raised(int number) { pfs_log_error(number, PFS_ERROR_RAISED); }
inline void handled(int number) { pfs_log_error(number, PFS_ERROR_HANDLED); }
}  // namespace error

}  // namespace pfs
