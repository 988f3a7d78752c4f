// Shared by the core's translation units (fdw/core_*.cpp): the region handle behind
// PfsCoreRegion and the error plumbing of the C ABI. No PostgreSQL header may be
// included by the core: it must stay free of ereport/longjmp and of PG types.
#pragma once

#ifdef POSTGRES_H
#error "the perfschema_fdw core (fdw/core_*.cpp) must not include PostgreSQL headers"
#endif

#include <sys/stat.h>
#include <sys/types.h>

#include <cstdint>
#include <ctime>
#include <exception>
#include <memory>
#include <new>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "agent/reader/reader.h"
#include "agent/region/fault_guard.h"
#include "fdw/pfs_core.h"

namespace pfs::fdw {

// A mapped region and the identity of the file it maps (to notice a new file at
// the same path).
struct mapped_region {
  std::shared_ptr<pfs::reader::region_reader> reader;  // shared with the scans reading it
  std::string path;
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
  std::uint64_t unreleased_bytes = 0;  // of records scanned since its pages were released

  mapped_region() = default;
  mapped_region(const mapped_region&) = delete;
  mapped_region& operator=(const mapped_region&) = delete;
  ~mapped_region();  // its unreleased bytes leave the backend's count (core_scan.cpp)
};

// One region file of a server, as the last look at the server found it.
struct region_member {
  // A one-file server's mapping, kept while the file is unchanged. A directory's
  // members are kept by the mapping pool below instead (nullptr here).
  std::shared_ptr<mapped_region> region;
  std::string file;      // its path
  std::int64_t pid = 0;  // the writer's (0: unknown)
  std::string program;   // the writer's name (empty: unknown)
  bool damaged = false;  // not a readable region: damage says why
  PfsCoreError damage{};
  dev_t dev = 0;  // the file as the directory's listing saw it
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{};
};

// The mapping pool of directory members (core_mappings.cpp): at most
// pfs_core_set_max_mapped_regions mappings (kDefaultMappedRegions until set), the
// least recently read dropped first. A scan holds the one it reads.
inline constexpr int kDefaultMappedRegions = 1024;
// The kept mapping of path (made the most recently read unless !read), nullptr if none.
std::shared_ptr<mapped_region> kept_mapping(const std::string& path, bool read = true);
// Keeps r (by its path, replacing a mapping kept for that path), dropping the least
// recently read beyond the limit; when the pool is full and !evict, does not keep it
// (a scan of more files than the limit keeps the first ones it found kept instead
// of dropping each just before it is read again).
void keep_mapping(const std::shared_ptr<mapped_region>& r, bool evict = true);
void drop_mapping(const std::string& path) noexcept;
void drop_all_mappings() noexcept;
std::size_t kept_mapping_count() noexcept;
// Maps the region file at path (nullptr and e on failure), for reading.
std::shared_ptr<mapped_region> open_region(const std::string& path, region_error& e);

// The columns the core appends to every table of the reader (after MySQL's and the
// reader's own): the process that wrote the row, and for status the region file.
enum extra_column : int { kExtraProcessId = 0, kExtraProgram = 1, kExtraRegionFile = 2 };
// How many the table has (status has all three, the others two).
int extra_column_count(const reader::table_def& t) noexcept;

// The warning for a region file a directory's scan skips: "skipping region file
// "<file>"", the reason as a sentence in the detail, the hint kept.
PfsCoreError skip_warning(const std::string& file, const PfsCoreError& why) noexcept;

// The files of a region directory taken for regions (regular files but hidden ones
// and the agent's temporary files), in name order; false and *err if it cannot be
// listed. Unless the directory's server follows symbolic links, symbolic links and
// hard links (more than one link) are left out, and added to *refused (if not
// null) with the reason, for a warning. *stats (if not null): each file's stat, as
// listed.
bool list_region_files(const std::string& dir, std::vector<std::string>& files, PfsCoreError* err,
                       std::vector<std::pair<std::string, region_error>>* refused = nullptr,
                       std::vector<struct stat>* stats = nullptr);

// The server option follow_symlinks of the server that reads path, or of the
// region directory that holds it (core_symlinks.cpp); false if never set.
bool follows_symlinks(const std::string& path) noexcept;

}  // namespace pfs::fdw

// What a server reads: one region file (option "region") or every region file of
// a directory (option "region_directory"), in file name order.
struct PfsCoreRegion {
  std::string path;
  bool directory = false;
  std::vector<pfs::fdw::region_member> members;
  std::uint64_t checked_in = 0;    // the transaction that last checked its files (0: none)
  std::int64_t checked_at_ns = 0;  // when (transaction_clock_ns)
  // A directory as it was when last listed; the listing is kept while these are
  // unchanged, if it was old enough (core_region.cpp, refresh_directory).
  dev_t dir_dev = 0;
  ino_t dir_ino = 0;
  timespec dir_mtime{};
  bool listing_reusable = false;
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
//
// The handler is installed by the first call that touches a mapping and kept for
// the backend's life (core_transaction.cpp says why), not installed around each
// call: a small scan makes several core calls, and each sigaction call costs about
// a microsecond on a virtual machine.
void keep_fault_guard_installed() noexcept;
// How long a check of the process-wide state (the SIGBUS handler, a one-file
// server's file at its path) stands: a monitoring query sent back to back, each its
// own transaction, does not pay the system calls of both every time. A program
// restarted at a server's path is seen by the first transaction that starts at
// least this long after the last check.
inline constexpr std::int64_t kRecheckIntervalNs = 1'000'000;
// A check made at checked_ns (transaction_clock_ns) still holds at now; a clock
// set back makes it stale.
inline bool checked_within_interval(std::int64_t now, std::int64_t checked_ns) noexcept {
  return now >= checked_ns && now - checked_ns < kRecheckIntervalNs;
}
// The transaction's time, ns since the Unix epoch: when PostgreSQL started it
// (pfs_core_transaction_clock), else CLOCK_REALTIME at its first call that asked.
std::int64_t transaction_clock_ns() noexcept;
// The backend's current transaction, as a number that changes when one ends
// (pfs_core_transaction_end; core_transaction.cpp).
std::uint64_t transaction_number() noexcept;
template <class R, class F>
R guarded(PfsCoreError* err, R on_failure, F&& f) noexcept {
  keep_fault_guard_installed();
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
