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

#include "agent/reader.h"
#include "fdw/pfs_core.h"

// A mapped region and the identity of the file it maps (to notice a new file at
// the same path).
struct PfsCoreRegion {
  std::unique_ptr<pfs::reader::region_reader> reader;
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
template <class R, class F>
R guarded(PfsCoreError* err, R on_failure, F&& f) noexcept {
  try {
    return f();
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
