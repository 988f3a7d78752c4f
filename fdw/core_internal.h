// Shared by the core's translation units (fdw/core_*.cpp): the region handle behind
// PfsCoreRegion and the error plumbing of the C ABI. No PostgreSQL header may be
// included by the core: it must stay free of ereport/longjmp and of PG types.
#pragma once

#ifdef POSTGRES_H
#error "the perfschema_fdw core (fdw/core_*.cpp) must not include PostgreSQL headers"
#endif

#include <sys/types.h>

#include <ctime>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>

#include "agent/region/fault_guard.h"
#include "agent/reader/reader.h"
#include "fdw/pfs_core.h"

// A mapped region and the identity of the file it maps (to notice a new file at
// the same path).
struct PfsCoreRegion {
  std::shared_ptr<pfs::reader::region_reader> reader;  // shared with the scans reading it
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
};

namespace pfs::fdw {

void clear_error(PfsCoreError* err) noexcept;
// Fills err, cutting each text at a UTF-8 character boundary if it is too long.
void set_error(PfsCoreError* err, PfsCoreErrorKind kind, std::string_view message,
               std::string_view detail = {}, std::string_view hint = {}) noexcept;
void set_error(PfsCoreError* err, const region_error& e) noexcept;

// The reader's table with this index, nullptr if out of range.
const reader::table_def* table_at(int table) noexcept;

// Runs f and returns its result; an exception becomes *err and on_failure. Every
// C ABI entry point that can allocate runs its body through this.
//
// It also runs f under fault_guard: a region file that shrinks while f reads or
// writes its mapping cannot raise SIGBUS in the backend. The reads that notice it
// report PFS_CORE_CHANGED themselves; a fault nobody reported (header checks, setup
// writes at commit) fails the call here.
template <class R, class F>
R guarded(PfsCoreError* err, R on_failure, F&& f) noexcept {
  fault_guard::scope fault_scope;
  const std::uint64_t faults = fault_guard::fault_count();
  try {
    R result = f();
    if (fault_guard::fault_count() == faults) return result;
    if constexpr (std::is_same_v<R, bool> || std::is_same_v<R, PfsCoreRegion*>) {
      if (err->kind == PFS_CORE_OK) set_error(err, changed_while_read(""));
      return on_failure;
    }
    return result;
  } catch (const std::bad_alloc&) {
    set_error(err, PFS_CORE_OUT_OF_MEMORY, "out of memory in perfschema_fdw",
              "The region's rows do not fit in this backend's memory.");
  } catch (const std::exception& e) {
    set_error(err, PFS_CORE_INTERNAL, "internal error in perfschema_fdw", e.what());
  } catch (...) {
    set_error(err, PFS_CORE_INTERNAL, "internal error in perfschema_fdw");
  }
  return on_failure;
}

}  // namespace pfs::fdw
