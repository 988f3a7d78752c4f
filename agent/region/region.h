// Creating, mapping and validating region files, and typed access to their arrays.
// Used by the provider (create) and by readers (open + validate); no PostgreSQL
// headers, no exceptions across this interface: failures come back as region_error.
#pragma once

#include <csignal>
#include <cstddef>
#include <cstdint>
#include <string>

#include "agent/region/region_layout.h"

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
  std::uint32_t max_sems = 1000;  // sem_instances (beyond MySQL)
  std::uint32_t setup_actors_size = 100;
  std::uint32_t max_sources = 1024;
  std::uint32_t max_files = 1000;
  std::uint32_t max_file_handles = 4096;  // descriptors tracked (fd < this); process-local
  std::uint32_t max_tables = 500;
  std::uint32_t max_indexes_per_table = 8;
  std::uint32_t setup_objects_size = 100;
  // Units of work (stages, statements, transactions) and histograms. MySQL's
  // per-thread history sizes and text length; the long histories and the digest
  // table are smaller than MySQL's so that the default region stays under 16 MiB
  // (status shows the bytes of every array).
  std::uint32_t max_stage_classes = 64;
  std::uint32_t max_memory_classes = 64;  // memory/<category>/<name> classes (layout 5)
  std::uint32_t max_statement_classes = 32;
  std::uint32_t stages_history_size = 10;
  std::uint32_t stages_history_long_size = 5000;
  std::uint32_t statement_stack_depth = 2;  // nested statements visible at once (at most 16)
  std::uint32_t statements_history_size = 10;
  std::uint32_t statements_history_long_size = 500;
  std::uint32_t transactions_history_size = 10;
  std::uint32_t transactions_history_long_size = 500;
  std::uint32_t max_sql_text_length = 1024;
  std::uint32_t digest_size = 100;
  std::uint32_t wait_histograms = 128;        // (thread, wait class) histograms of their own
  std::uint32_t lock_contention_size = 1024;  // lock_contention_by_instance entries (instance, source)
  std::uint32_t max_sockets = 1000;           // socket_instances (open socket descriptors)
  std::uint32_t max_errors = 128;             // errors the program declares (layout 6)
  std::uint32_t max_metadata_locks = 1024;    // metadata_locks rows (locks requested and held)
  std::uint32_t max_data_locks = 1024;        // data_locks rows
  std::uint32_t max_data_lock_waits = 256;    // data_lock_waits rows
  std::uint32_t max_tls_properties = 256;     // tls_channel_status rows (channel, property)
  std::uint32_t max_accounts = 32;  // accounts, users, hosts rows (MySQL's performance_schema_*_size)
  std::uint32_t max_users = 16;
  std::uint32_t max_hosts = 16;
  std::uint32_t max_meters = 64;    // setup_meters rows: the program's meters
  std::uint32_t max_metrics = 512;  // setup_metrics rows (each with a cell per thread slot)

  // Reads PFS_MAX_CLASSES, PFS_MAX_THREADS, PFS_WAITS_STACK_DEPTH,
  // PFS_WAITS_HISTORY_SIZE, PFS_WAITS_HISTORY_LONG_SIZE, PFS_MAX_MUTEXES,
  // PFS_MAX_RWLOCKS, PFS_MAX_CONDS, PFS_SETUP_ACTORS_SIZE, PFS_MAX_SOURCES,
  // PFS_MAX_FILES, PFS_MAX_FILE_HANDLES, PFS_MAX_TABLES, PFS_MAX_INDEXES_PER_TABLE,
  // PFS_SETUP_OBJECTS_SIZE, PFS_MAX_STAGE_CLASSES, PFS_MAX_STATEMENT_CLASSES,
  // PFS_STAGES_HISTORY_SIZE, PFS_STAGES_HISTORY_LONG_SIZE, PFS_STATEMENT_STACK_DEPTH,
  // PFS_STATEMENTS_HISTORY_SIZE, PFS_STATEMENTS_HISTORY_LONG_SIZE,
  // PFS_TRANSACTIONS_HISTORY_SIZE, PFS_TRANSACTIONS_HISTORY_LONG_SIZE,
  // PFS_MAX_SQL_TEXT_LENGTH, PFS_DIGESTS_SIZE, PFS_WAIT_HISTOGRAMS,
  // PFS_LOCK_CONTENTION_SIZE, PFS_MAX_SOCKETS, PFS_MAX_ERRORS,
  // PFS_MAX_METADATA_LOCKS, PFS_MAX_DATA_LOCKS, PFS_MAX_DATA_LOCK_WAITS,
  // PFS_MAX_TLS_PROPERTIES, PFS_MAX_METERS, PFS_MAX_METRICS over the
  // current values. A malformed value leaves the field alone and is reported in
  // *bad (name=value) if bad is not null.
  void apply_environment(std::string* bad = nullptr);
  // Bounds the sizes by the layout's limits (statement stack, text, classes).
  void clamp();
};

enum class region_errc {
  ok = 0,
  not_found,    // the file does not exist
  permission,   // cannot open / lock it
  io,           // other system error
  too_small,    // shorter than a header
  bad_magic,    // not a region file
  bad_version,  // a layout this build does not know
  corrupt,      // header inconsistent with itself or with the file
  in_use,       // (create) another live process owns the path
  changed,      // the file was truncated or shrunk while mapped (fault_guard)
  not_regular,  // a directory, FIFO, socket or device
  unsafe,       // refused: a symbolic link, a hard link, or a directory others control
};

struct region_error {
  region_errc code = region_errc::ok;
  std::string message;  // lower case, no trailing period (PostgreSQL style)
  std::string detail;   // full sentence, may be empty
  std::string hint;     // full sentence, may be empty
  explicit operator bool() const { return code != region_errc::ok; }
};

// The error of a read that faulted because the file shrank under the mapping.
region_error changed_while_read(const std::string& path);
// The error for a path that is a symbolic link a reader does not follow.
region_error symbolic_link_refused(const std::string& path);
// The error for a path that names a directory, FIFO, socket or device (st_mode).
region_error not_a_regular_file(const std::string& path, unsigned mode);

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
  // Nothing is opened through a name another user could have planted (safe_files.h):
  // the file is made under a random name with O_EXCL and renamed into place; a
  // path that is a symbolic link, a hard link of another user's file or not a
  // regular file is refused, and so is a directory writable by others without the
  // sticky bit or owned by another user, unless allow_unsafe_dir.
  // sparse: the file is sized but not reserved (ftruncate): only the pages written
  // take disk space, and lseek SEEK_DATA finds them (what a forked child copies,
  // move_to_copy); a full disk met when a page is first written is a SIGBUS that
  // fault_guard turns into a lost region (recording stops), not a crash.
  static region_map create(const std::string& path, const region_sizes& sizes, unsigned mode,
                           region_error& err, bool allow_unsafe_dir = false, bool sparse = false);

  // Maps an existing region and validates it (magic, version, every array inside
  // the file, strides known). writable: map read-write (setup changes). A symbolic
  // link is refused (region_errc::unsafe) unless follow_symlinks.
  static region_map open(const std::string& path, bool writable, region_error& err,
                         bool follow_symlinks = false);

  // Validates a header against a buffer of the given size (also used by the
  // fuzz tests on in-memory images).
  static region_error validate(const void* base, std::size_t size);

  bool valid() const { return base_ != nullptr; }
  bool writable() const { return writable_; }
  const std::string& path() const { return path_; }
  std::size_t size() const { return size_; }
  int fd() const { return fd_; }

  layout::region_header& header() const { return *static_cast<layout::region_header*>(base_); }

  // Typed array access; count() is 0 for an absent array. From the layout as it
  // was created or validated (a copy of the header's array table), never from the
  // file as it is now: a file truncated, emptied or damaged while mapped must not
  // move an array or change its size under the process.
  template <class T>
  T* array(layout::array_id id) const {
    const auto& d = arrays_[id];
    return d.count == 0 ? nullptr : reinterpret_cast<T*>(static_cast<char*>(base_) + d.offset);
  }
  std::uint64_t count(layout::array_id id) const { return arrays_[id].count; }

  // True while the provider process holds its alive lock.
  bool provider_alive() const;
  // For a reader of a region whose provider has exited: closes the file, keeping
  // the mapping. The descriptor only tells whether the provider is alive, which it
  // never is again (a new process creates a new file), so a backend that keeps
  // thousands of exited processes' regions mapped does not hold their descriptors.
  // False (and the file kept) while the provider is alive.
  bool close_file_if_provider_exited();

  // Takes the mapping's pages out of this process's resident set (madvise
  // MADV_DONTNEED): the file's pages stay in the page cache, and the next access
  // maps them again. A reader scanning a large table piece by piece calls it between
  // pieces, so its peak resident size does not grow with the table.
  void release_resident_pages() const noexcept;

  // True once an access faulted because the file shrank under the mapping: the
  // mapping now holds zeros (see fault_guard.h) and what was read since is void.
  bool lost() const;
  // The provider's way back after lost(): maps the file again at the same address
  // if it is this region again (same size, magic, layout, pid and creation time),
  // for example after an operator copied it back. False if it is not (yet).
  bool remap_if_restored();

  // In the child of a fork (for one region per process): the parent's region, which
  // the child shares, is replaced by a copy of it in a new file of the directory
  // dir_fd (the same mode and group), made under a random name beginning with base
  // (written to tmp, safe_files::create_unique), mapped at the same address, so that
  // every pointer into the region stays valid and now points into the child's own
  // file; the child holds its alive lock. The copy is sparse: only the n byte ranges
  // given are copied (copy_file_range where it works, else pwrite from the
  // mapping); the rest is a hole, zeros, as in a new region. publish_copy then renames it to base once
  // the child has made it its own, unless base is a symbolic link, a hard link of
  // another user's file or not a regular file (*refused says why, errno EEXIST).
  // System calls only, no allocation: both run in a fork child handler. False
  // (errno set) if it could not: the mapping is then the parent's.
  struct byte_range {
    std::uint64_t offset;
    std::uint64_t length;
  };
  bool move_to_copy(int dir_fd, const char* base, char* tmp, std::size_t tmp_cap, const byte_range* ranges,
                    std::size_t n);
  bool publish_copy(int dir_fd, const char* tmp, const char* base, const char* path, const char** refused);

  // The parts of the region's file that hold data (lseek SEEK_DATA/SEEK_HOLE: pages
  // written, or read while in the page cache), in order, at most cap of them in out
  // (the last then reaches to the end of the file); the whole file where the file
  // system cannot tell. Returns their number. System calls only: the fork child
  // handler copies only these parts of what it takes (move_to_copy).
  std::size_t data_map(byte_range* out, std::size_t cap) const;

  // Removes the file from the file system (the mapping stays valid).
  void unlink_file() const;

  // Releases the alive lock (a clean shutdown of the provider).
  void release_alive_lock();

 private:
  void reset() noexcept;
  void keep_layout();  // copies the header's array table into arrays_
  void* base_ = nullptr;
  std::size_t size_ = 0;
  int fd_ = -1;
  int guard_slot_ = -1;  // fault_guard::watch slot
  std::uint64_t creation_time_ns_ = 0;
  bool writable_ = false;
  std::string path_;
  layout::array_desc arrays_[layout::kArrayCount] = {};
};

// The region's setup lock (cross-process; released automatically if the holder
// dies). Setup writers hold it while changing setup rows and derived flags.
class setup_lock_guard {
 public:
  explicit setup_lock_guard(const region_map& region);
  // Waits by polling, and gives up (locked() false, interrupted() true) as soon as
  // *interrupt is non-zero: a PostgreSQL backend's statement_timeout and
  // pg_cancel_backend must end the wait, and F_OFD_SETLKW is restarted after signal
  // handlers installed with SA_RESTART, as PostgreSQL's are.
  // timeout_ms (0: none) bounds the wait; locked() false and timed_out() true then.
  setup_lock_guard(const region_map& region, const volatile sig_atomic_t* interrupt,
                   std::uint32_t timeout_ms = 0);
  ~setup_lock_guard();
  setup_lock_guard(const setup_lock_guard&) = delete;
  setup_lock_guard& operator=(const setup_lock_guard&) = delete;
  bool locked() const { return locked_; }
  bool interrupted() const { return interrupted_; }
  bool timed_out() const { return timed_out_; }

 private:
  int fd_;
  bool locked_;
  bool interrupted_ = false;
  bool timed_out_ = false;
};

}  // namespace pfs
