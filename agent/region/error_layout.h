// Errors (layout 6): the records of events_errors_summary_by_thread_by_error and
// events_errors_summary_global_by_error, as MySQL 8.0's error instrumentation
// (psi_error.h, log_error) keeps them.
//
// The program declares its errors (number, name, SQLSTATE) in kArrayErrors; each
// has a row index from 1 on, and row 0 is the NULL row: errors reported but not
// declared, shown with NULL ERROR_NUMBER, ERROR_NAME and SQL_STATE as MySQL shows
// errors outside its list. Each thread slot has max_errors + 1 rows
// (kArrayThreadErrorStats), written by that thread only (relaxed loads and stores);
// kArrayClassErrorStats has max_errors + 1 rows written with atomic operations:
// what threads that exited reported, and what was reported on threads without a
// slot.
#pragma once

#include <cstdint>
#include <type_traits>

#include "agent/region/region_layout.h"

namespace pfs::layout {

inline constexpr std::size_t kErrorNameLen = 64;     // ERROR_NAME varchar(64)
inline constexpr std::size_t kErrorSqlStateLen = 8;  // SQL_STATE varchar(5), NUL-terminated

// A declared error. lock: kStateFree until its fields are written, then
// kStateAllocated (release), never freed.
struct error_record {
  std::uint32_t lock;
  std::int32_t number;
  char name[kErrorNameLen];
  char sql_state[kErrorSqlStateLen];
};

// One (thread, error) row, or an error's global part. raised counts the errors
// raised and not handled: a handled error moves from raised to handled (MySQL's
// PFS_error_single_stat). first_seen and last_seen: seconds since the Unix epoch of
// the first and latest report (0: none), as MySQL's TIMESTAMP(0) columns show them.
struct error_stat {
  std::int64_t raised;
  std::uint64_t handled;
  std::uint64_t first_seen;
  std::uint64_t last_seen;
};

static_assert(sizeof(error_record) == 80);
static_assert(sizeof(error_stat) == 32);
static_assert(std::is_trivially_copyable_v<error_stat> && std::is_standard_layout_v<error_stat>);

inline error_stat load_error_stat(const error_stat& s) {
  error_stat c;
  c.raised = load_relaxed(s.raised);
  c.handled = load_relaxed(s.handled);
  c.first_seen = load_relaxed(s.first_seen);
  c.last_seen = load_relaxed(s.last_seen);
  return c;
}

// Adds one source row to an aggregate: the counts add, FIRST_SEEN is the earliest
// and LAST_SEEN the latest of the sources that saw the error.
inline void add_error(error_stat& into, const error_stat& from) {
  into.raised += from.raised;
  into.handled += from.handled;
  if (from.first_seen != 0 && (into.first_seen == 0 || from.first_seen < into.first_seen))
    into.first_seen = from.first_seen;
  if (from.last_seen > into.last_seen) into.last_seen = from.last_seen;
}

}  // namespace pfs::layout
