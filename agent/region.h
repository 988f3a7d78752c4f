// Creating, mapping and validating region files, and typed access to their arrays.
// Used by the provider (create) and by readers (open + validate); no PostgreSQL
// headers, no exceptions across this interface: failures come back as region_error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/region_layout.h"

namespace pfs {

// Sizes of every array; 0 disables an array. Defaults follow MySQL 5.5 scaled to a
// single application process.
struct region_sizes {
  std::uint32_t max_classes = 256;
  std::uint32_t max_threads = 256;
  std::uint32_t wait_stack_depth = 4;  // nested waits visible at once per thread
  std::uint32_t history_per_thread = 10;
  std::uint32_t history_long_size = 10000;
  std::uint32_t max_mutexes = 10000;
  std::uint32_t max_rwlocks = 10000;
  std::uint32_t max_conds = 1000;
  std::uint32_t setup_actors_size = 100;
  std::uint32_t max_sources = 1024;
  std::uint32_t max_files = 1000;
  std::uint32_t max_file_handles = 4096;  // descriptors tracked (fd < this); process-local
  std::uint32_t max_tables = 500;
  std::uint32_t max_indexes_per_table = 8;
  std::uint32_t setup_objects_size = 100;

  // Reads PFS_MAX_CLASSES, PFS_MAX_THREADS, PFS_WAITS_STACK_DEPTH,
  // PFS_WAITS_HISTORY_SIZE, PFS_WAITS_HISTORY_LONG_SIZE, PFS_MAX_MUTEXES,
  // PFS_MAX_RWLOCKS, PFS_MAX_CONDS, PFS_SETUP_ACTORS_SIZE, PFS_MAX_SOURCES,
  // PFS_MAX_FILES, PFS_MAX_FILE_HANDLES, PFS_MAX_TABLES, PFS_MAX_INDEXES_PER_TABLE,
  // PFS_SETUP_OBJECTS_SIZE over the
  // current values. A malformed value leaves the field alone and is reported in
  // *bad (name=value) if bad is not null.
  void apply_environment(std::string* bad = nullptr);
};

enum class region_errc {
  ok = 0,
  not_found,      // the file does not exist
  permission,     // cannot open / lock it
  io,             // other system error
  too_small,      // shorter than a header
  bad_magic,      // not a region file
  bad_version,    // a layout this build does not know
  corrupt,        // header inconsistent with itself or with the file
  in_use,         // (create) another live process owns the path
};

struct region_error {
  region_errc code = region_errc::ok;
  std::string message;  // lower case, no trailing period (PostgreSQL style)
  std::string detail;   // full sentence, may be empty
  std::string hint;     // full sentence, may be empty
  explicit operator bool() const { return code != region_errc::ok; }
};

// A mapped region. Movable, not copyable; unmaps on destruction.
class region_map {
 public:
  region_map() = default;
  region_map(region_map&& other) noexcept;
  region_map& operator=(region_map&& other) noexcept;
  region_map(const region_map&) = delete;
  region_map& operator=(const region_map&) = delete;
  ~region_map();

  // Creates the file at path with its final size (disk space reserved, so a full
  // disk cannot SIGBUS the provider later), initializes header and arrays, takes
  // the alive lock, and only then renames it into place, so readers never see a
  // half-built region. Refuses a path whose current file belongs to a live provider.
  static region_map create(const std::string& path, const region_sizes& sizes, unsigned mode,
                           region_error& err);

  // Maps an existing region and validates it (magic, version, every array inside
  // the file, strides known). writable: map read-write (setup changes).
  static region_map open(const std::string& path, bool writable, region_error& err);

  // Validates a header against a buffer of the given size (also used by the
  // fuzz tests on in-memory images).
  static region_error validate(const void* base, std::size_t size);

  bool valid() const { return base_ != nullptr; }
  bool writable() const { return writable_; }
  const std::string& path() const { return path_; }
  std::size_t size() const { return size_; }
  int fd() const { return fd_; }

  layout::region_header& header() const { return *static_cast<layout::region_header*>(base_); }

  // Typed array access; count() is 0 for an absent array.
  template <class T>
  T* array(layout::array_id id) const {
    const auto& d = header().arrays[id];
    return d.count == 0 ? nullptr : reinterpret_cast<T*>(static_cast<char*>(base_) + d.offset);
  }
  std::uint64_t count(layout::array_id id) const { return header().arrays[id].count; }

  // True while the provider process holds its alive lock.
  bool provider_alive() const;

  // Removes the file from the file system (the mapping stays valid).
  void unlink_file() const;

  // Releases the alive lock (a clean shutdown of the provider).
  void release_alive_lock();

 private:
  void reset() noexcept;
  void* base_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
  bool writable_ = false;
  std::string path_;
};

// The region's setup lock (cross-process; released automatically if the holder
// dies). Setup writers hold it while changing setup rows and derived flags.
class setup_lock_guard {
 public:
  explicit setup_lock_guard(const region_map& region);
  ~setup_lock_guard();
  setup_lock_guard(const setup_lock_guard&) = delete;
  setup_lock_guard& operator=(const setup_lock_guard&) = delete;
  bool locked() const { return locked_; }

 private:
  int fd_;
  bool locked_;
};

}  // namespace pfs
