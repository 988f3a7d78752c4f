#include "agent/region/region.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <limits>
#include <memory>
#include <utility>

#include "agent/region/error_layout.h"
#include "agent/region/fault_guard.h"
#include "agent/region/internal/region_geometry.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/safe_files.h"
#include "agent/region/tls_layout.h"
#include "agent/region/work_layout.h"
#include "timers/timer.h"

namespace pfs {
namespace {

using namespace layout;

std::string errno_text(int e) { return std::strerror(e); }

region_error make_error(region_errc code, std::string message, std::string detail = {},
                        std::string hint = {}) {
  return region_error{code, std::move(message), std::move(detail), std::move(hint)};
}

region_error open_error(const std::string& path, int e) {
  region_errc code = e == ENOENT                   ? region_errc::not_found
                     : (e == EACCES || e == EPERM) ? region_errc::permission
                                                   : region_errc::io;
  std::string hint;
  if (code == region_errc::not_found)
    hint = "Start the instrumented program with PFS_REGION set to this path, or correct the path.";
  else if (code == region_errc::permission)
    hint = "Give the reading user access to the file, for example through the group of the region file.";
  return make_error(code, "could not open region file \"" + path + "\": " + errno_text(e), {}, hint);
}

// Byte-range OFD lock helpers: OFD locks belong to the open file description, so
// they work between threads of one process too, and vanish when the process dies.
bool ofd_lock(int fd, std::uint64_t byte, short type, bool wait) {
  struct flock fl {};
  fl.l_type = type;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(byte);
  fl.l_len = 1;
  for (;;) {
    if (fcntl(fd, wait ? F_OFD_SETLKW : F_OFD_SETLK, &fl) == 0) return true;
    if (errno != EINTR) return false;
  }
}

bool ofd_locked_by_other(int fd, std::uint64_t byte) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(byte);
  fl.l_len = 1;
  if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return false;
  return fl.l_type != F_UNLCK;
}

}  // namespace

region_map::region_map(region_map&& other) noexcept { *this = std::move(other); }

region_map& region_map::operator=(region_map&& other) noexcept {
  if (this != &other) {
    reset();
    base_ = std::exchange(other.base_, nullptr);
    size_ = std::exchange(other.size_, 0);
    fd_ = std::exchange(other.fd_, -1);
    guard_slot_ = std::exchange(other.guard_slot_, -1);
    creation_time_ns_ = std::exchange(other.creation_time_ns_, 0);
    writable_ = std::exchange(other.writable_, false);
    path_ = std::move(other.path_);
    std::memcpy(arrays_, other.arrays_, sizeof(arrays_));
  }
  return *this;
}

region_map::~region_map() { reset(); }

void region_map::reset() noexcept {
  fault_guard::unwatch(guard_slot_);
  guard_slot_ = -1;
  if (base_ != nullptr) munmap(base_, size_);
  if (fd_ >= 0) close(fd_);
  base_ = nullptr;
  size_ = 0;
  fd_ = -1;
}

region_map region_map::create(const std::string& path, const region_sizes& sizes, unsigned mode,
                              region_error& err, bool allow_unsafe_dir, bool sparse) {
  err = {};
  region_map out;
  const std::string what = "could not create region \"" + path + "\"";
  std::string dir(path.size() + 2, '\0');
  const char* base = safe_files::split_path(path.c_str(), dir.data(), dir.size());
  if (base == nullptr) {
    err = make_error(region_errc::io, what + ": the path names no file");
    return out;
  }
  dir.resize(std::strlen(dir.c_str()));
  const int dir_fd = safe_files::open_directory(dir.c_str());
  if (dir_fd < 0) {
    const int e = errno;
    if (e == ELOOP || e == ENOTDIR)
      err = make_error(region_errc::unsafe, what + ": its directory \"" + dir + "\" is not a directory",
                       "The directory is a symbolic link or not a directory; the agent does not follow "
                       "a symbolic link there.",
                       "Give the real directory in PFS_REGION.");
    else
      err = make_error(e == ENOENT ? region_errc::not_found : region_errc::io,
                       what + ": could not open its directory \"" + dir + "\": " + errno_text(e));
    return out;
  }
  struct dir_closer {
    int fd;
    ~dir_closer() { close(fd); }
  } closer{dir_fd};
  if (const char* why = safe_files::unsafe_directory(dir_fd, allow_unsafe_dir)) {
    // The reason in the message (without its "it "): last_error() shows message and detail only.
    err = make_error(region_errc::unsafe, what + ": its directory \"" + dir + "\" " + (why + 3),
                     "Set PFS_ALLOW_UNSAFE_DIR=1 to create it there anyway.",
                     "Use a directory only the program's user can write to (see docs/security.md).");
    return out;
  }
  if (const char* why = safe_files::unsafe_destination(dir_fd, base)) {
    err = make_error(region_errc::unsafe, what + ": " + why,
                     "The agent neither follows nor replaces a symbolic link, a hard link of another "
                     "user's file or anything but a regular file at the region path.",
                     "Remove it, or give another PFS_REGION.");
    return out;
  }
  // Refuse to replace the region of a live provider.
  int old = openat(dir_fd, base, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY | O_NOFOLLOW);
  if (old >= 0) {
    bool alive =
        safe_files::unsafe_open_file(old, false) == nullptr && ofd_locked_by_other(old, kAliveLockByte);
    close(old);
    if (alive) {
      err = make_error(region_errc::in_use, "region file \"" + path + "\" belongs to a running process",
                       "Another instrumented process holds the region's alive lock.",
                       "Give each instrumented process its own PFS_REGION path.");
      return out;
    }
  }

  region_sizes clamped = sizes;
  clamped.clamp();
  array_desc arrays[kArrayCount];
  const std::uint64_t file_size = geometry::plan_layout(clamped, arrays);
  std::string tmp(std::strlen(base) + 32, '\0');
  int fd = safe_files::create_unique(dir_fd, base, O_RDWR, tmp.data(), tmp.size());
  if (fd < 0) {
    const int e = errno;
    err = open_error(path, e);
    err.message = what + ": " + errno_text(e);
    return out;
  }
  tmp.resize(std::strlen(tmp.c_str()));
  auto fail = [&](const std::string& step, int e) {
    err = make_error(region_errc::io, what + ": " + step + ": " + errno_text(e),
                     "The file being built was \"" + dir + "/" + tmp + "\"; it was removed.");
    close(fd);
    unlinkat(dir_fd, tmp.c_str(), 0);
    return region_map{};
  };
  // fchmod after open: the umask must not narrow the mode the user asked for.
  if (fchmod(fd, static_cast<mode_t>(mode)) != 0) return fail("could not set its mode", errno);
  if (sparse) {
    if (ftruncate(fd, static_cast<off_t>(file_size)) != 0) return fail("could not size it", errno);
  } else if (int e = posix_fallocate(fd, 0, static_cast<off_t>(file_size)); e != 0) {
    return fail("could not reserve " + std::to_string(file_size) + " bytes", e);
  }
  void* base_addr = mmap(nullptr, file_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (base_addr == MAP_FAILED) return fail("could not map it", errno);
  // No read-ahead into the holes of a sparse file (pages of zeros in the page cache).
  if (sparse) madvise(base_addr, file_size, MADV_RANDOM);
  if (!ofd_lock(fd, kAliveLockByte, F_WRLCK, false)) {
    int e = errno;
    munmap(base_addr, file_size);
    return fail("could not lock it", e);
  }
  auto& h = *static_cast<region_header*>(base_addr);
  geometry::init_header(h, clamped, file_size);
  std::memcpy(h.arrays, arrays, sizeof(arrays));
  store_release(h.ready, 1u);
  // renameat replaces whatever was planted at base since the check; it never
  // follows it.
  if (renameat(dir_fd, tmp.c_str(), dir_fd, base) != 0) {
    int e = errno;
    munmap(base_addr, file_size);
    return fail("could not rename it into place", e);
  }
  out.base_ = base_addr;
  out.size_ = file_size;
  out.fd_ = fd;
  out.guard_slot_ = fault_guard::watch(base_addr, file_size, PROT_READ | PROT_WRITE);
  out.creation_time_ns_ = h.creation_time_ns;
  out.writable_ = true;
  out.path_ = path;
  out.keep_layout();
  return out;
}

region_error region_map::validate(const void* base, std::size_t size) {
  if (size < kHeaderSize)
    return make_error(region_errc::too_small, "region file is too small",
                      "The file has " + std::to_string(size) + " bytes; a region has at least " +
                          std::to_string(kHeaderSize) + ".",
                      "The file is not a region, or it was truncated.");
  const auto& h = *static_cast<const region_header*>(base);
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0)
    return make_error(region_errc::bad_magic, "file is not a perfschema region",
                      "The file does not start with the region magic number.",
                      "Check that the server option \"region\" names the file given to the instrumented "
                      "program in PFS_REGION.");
  if (h.layout_version > kLayoutVersion)
    return make_error(
        region_errc::bad_version,
        "region layout version " + std::to_string(h.layout_version) + " is newer than this reader knows",
        "This build reads layout version " + std::to_string(kLayoutVersion) +
            "; the instrumented program's agent writes version " + std::to_string(h.layout_version) + ".",
        "Upgrade perfschema_fdw (and the reader library) to the release of the agent the "
        "program was built with.");
  if (h.layout_version < kLayoutVersion)
    return make_error(
        region_errc::bad_version,
        "region layout version " + std::to_string(h.layout_version) + " is older than this reader reads",
        "This build reads layout version " + std::to_string(kLayoutVersion) +
            "; the instrumented program's agent writes version " + std::to_string(h.layout_version) + ".",
        "Read it with the perfschema_fdw of the program's release, or rebuild the program with "
        "this release's agent.");
  if (h.layout_version != kLayoutVersion || h.header_size != kHeaderSize)
    return make_error(region_errc::bad_version,
                      "unsupported region layout version " + std::to_string(h.layout_version),
                      "This build reads layout version " + std::to_string(kLayoutVersion) + ".",
                      "Use the perfschema_fdw built with the same version as the instrumented program.");
  if (h.file_size != size)
    return make_error(region_errc::corrupt, "region file size does not match its header",
                      "The header says " + std::to_string(h.file_size) + " bytes, the file has " +
                          std::to_string(size) + ".",
                      "The file was truncated or overwritten.");
  for (std::uint32_t id = 0; id < kArrayCount; ++id) {
    const array_desc& d = h.arrays[id];
    if (d.count == 0) continue;
    const std::uint64_t stride = geometry::known_stride(id, h.max_sql_text_length);
    const std::string which = "array " + std::to_string(id);
    if (stride == 0 || d.stride != stride)
      return make_error(
          region_errc::corrupt, "region " + which + " has an unexpected record size",
          "Its record size is " + std::to_string(d.stride) + ", expected " + std::to_string(stride) + ".");
    if (d.offset < kHeaderSize || d.offset % 8 != 0 || d.offset > size ||
        d.count > (size - d.offset) / d.stride)
      return make_error(region_errc::corrupt, "region " + which + " lies outside the file",
                        "Offset " + std::to_string(d.offset) + " with " + std::to_string(d.count) +
                            " records does not fit in " + std::to_string(size) + " bytes.");
  }
  // Per-thread arrays must agree with the sizes the hot path and readers index by.
  const std::uint64_t threads = h.arrays[kArrayThreads].count;
  const std::uint64_t holders = std::uint64_t{h.max_accounts} + h.max_users + h.max_hosts;
  if (h.max_threads != threads || h.max_classes != h.arrays[kArrayClasses].count ||
      h.arrays[kArrayWaitStacks].count != threads * h.wait_stack_depth ||
      h.arrays[kArrayWaitHistory].count != threads * h.history_per_thread ||
      h.arrays[kArrayThreadClassStats].count != threads * h.max_classes ||
      h.arrays[kArrayHistoryLong].count != h.history_long_size ||
      (h.arrays[kArrayClassIo].count != 0 && h.arrays[kArrayClassIo].count != h.max_classes) ||
      h.arrays[kArrayTableIndexes].count !=
          h.arrays[kArrayTables].count * std::uint64_t{h.max_indexes_per_table} ||
      h.arrays[kArrayStageCurrent].count != threads ||
      h.arrays[kArrayStageHistory].count != threads * h.stages_history_size ||
      h.arrays[kArrayStatementCurrent].count != threads * h.statement_stack_depth ||
      h.statement_stack_depth > kMaxStatementStack || h.max_sql_text_length > kMaxSqlTextLength ||
      h.max_classes > kMaxClassesLimit ||
      h.arrays[kArrayStatementHistory].count != threads * h.statements_history_size ||
      h.statement_stride != statement_stride_for(h.max_sql_text_length) ||
      h.arrays[kArrayTransactionCurrent].count != threads ||
      h.arrays[kArrayTransactionHistory].count != threads * h.transactions_history_size ||
      h.arrays[kArrayThreadStageStats].count != threads * h.max_stage_classes ||
      h.arrays[kArrayThreadStatementStats].count != threads * h.max_statement_classes ||
      h.arrays[kArrayThreadTransactionStats].count != threads ||
      h.arrays[kArrayClassStageStats].count != h.max_stage_classes ||
      h.arrays[kArrayClassStatementStats].count != h.max_statement_classes ||
      h.arrays[kArrayClassTransactionStats].count != 1 || h.arrays[kArrayStatementHistogram].count != 1 ||
      h.arrays[kArrayClassWaitHistograms].count != h.max_classes ||
      h.arrays[kArrayWaitHistograms].count != h.wait_histograms ||
      h.arrays[kArrayThreadMemoryStats].count != threads * h.max_memory_classes ||
      h.arrays[kArrayClassMemoryStats].count != h.max_memory_classes ||
      h.arrays[kArrayErrors].count != h.max_errors ||
      h.arrays[kArrayThreadErrorStats].count != threads * (std::uint64_t{h.max_errors} + 1) ||
      h.arrays[kArrayClassErrorStats].count != std::uint64_t{h.max_errors} + 1 ||
      h.arrays[kArrayMetadataLocks].count != h.max_metadata_locks ||
      h.arrays[kArrayDataLocks].count != h.max_data_locks ||
      h.arrays[kArrayDataLockWaits].count != h.max_data_lock_waits ||
      h.arrays[kArrayTableLockStats].count != h.arrays[kArrayTables].count ||
      h.arrays[kArrayTlsProperties].count != h.max_tls_properties ||
      h.arrays[kArrayAccounts].count != holders ||
      h.arrays[kArrayAccountWaitStats].count != holders * h.max_classes ||
      h.arrays[kArrayAccountStageStats].count != holders * h.max_stage_classes ||
      h.arrays[kArrayAccountStatementStats].count != holders * h.max_statement_classes ||
      h.arrays[kArrayAccountTransactionStats].count != holders ||
      h.arrays[kArrayAccountMemoryStats].count != holders * h.max_memory_classes ||
      h.arrays[kArrayAccountErrorStats].count != holders * (std::uint64_t{h.max_errors} + 1) ||
      h.arrays[kArrayMeters].count != h.max_meters || h.arrays[kArrayMetrics].count != h.max_metrics ||
      h.arrays[kArrayThreadMetricValues].count != threads * std::uint64_t{h.max_metrics} ||
      h.arrays[kArrayDigests].count != (h.digest_size == 0 ? 0 : std::uint64_t{h.digest_size} + 1) ||
      (h.history_long_size != 0 &&
       (h.history_long_batch == 0 ||
        h.arrays[kArrayHistoryLongBatches].count !=
            (std::uint64_t{h.history_long_size} + h.history_long_batch - 1) / h.history_long_batch)))
    return make_error(region_errc::corrupt, "region header sizes are inconsistent",
                      "The per-thread array sizes do not match the thread and class counts.");
  return {};
}

region_map region_map::open(const std::string& path, bool writable, region_error& err, bool follow_symlinks) {
  err = {};
  region_map out;
  // O_NONBLOCK: opening a FIFO must not wait for a writer; anything but a regular
  // file is refused right after.
  int fd = ::open(path.c_str(), (writable ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NONBLOCK | O_NOCTTY |
                                    (follow_symlinks ? 0 : O_NOFOLLOW));
  if (fd < 0) {
    err = errno == ELOOP && !follow_symlinks ? symbolic_link_refused(path) : open_error(path, errno);
    return out;
  }
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    err = make_error(region_errc::io, "could not stat region file \"" + path + "\": " + errno_text(errno));
    close(fd);
    return out;
  }
  if (!S_ISREG(st.st_mode)) {
    err = not_a_regular_file(path, st.st_mode);
    close(fd);
    return out;
  }
  const auto size = static_cast<std::size_t>(st.st_size);
  if (size < kHeaderSize) {
    err = validate(nullptr, size);
    close(fd);
    return out;
  }
  void* base = mmap(nullptr, size, writable ? PROT_READ | PROT_WRITE : PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    err = make_error(region_errc::io, "could not map region file \"" + path + "\": " + errno_text(errno));
    close(fd);
    return out;
  }
  // A reader touches scattered records, many of them in holes of a sparse file: no
  // read-ahead around a fault (on a file system with large folios a fault in a hole
  // would otherwise zero a large folio of page cache for a record or two).
  madvise(base, size, MADV_RANDOM);
  out.base_ = base;
  out.size_ = size;
  out.fd_ = fd;
  out.guard_slot_ = fault_guard::watch(base, size, writable ? PROT_READ | PROT_WRITE : PROT_READ);
  out.writable_ = writable;
  out.path_ = path;
  if (out.guard_slot_ < 0) {
    // An unguarded mapping could bring the process down if the file shrank: refuse.
    err =
        make_error(region_errc::io, "could not map region file \"" + path + "\": too many regions are mapped",
                   "This process already maps " + std::to_string(fault_guard::kMaxMappings) +
                       " regions, the most it can protect against files that shrink.",
                   "Use fewer foreign servers in one session, or close sessions that used many.");
    return region_map{};
  }
  {
    // The file may shrink or change between fstat and the header checks: the
    // checks and the layout kept (array()) are of one copy of the header.
    fault_guard::scope guard;
    auto copy = std::make_unique<region_header>();
    std::memcpy(static_cast<void*>(copy.get()), base, sizeof(region_header));
    err = validate(copy.get(), size);
    if (!err) {
      std::memcpy(out.arrays_, copy->arrays, sizeof(out.arrays_));
      out.creation_time_ns_ = copy->creation_time_ns;
    }
  }
  if (!err && out.lost()) err = changed_while_read(path);
  if (err) return region_map{};
  return out;
}

region_error changed_while_read(const std::string& path) {
  return make_error(region_errc::changed,
                    (path.empty() ? std::string("region file") : "region file \"" + path + "\"") +
                        " changed while it was read",
                    "The file was truncated or shrunk while it was mapped; nothing read from it is shown.",
                    "Run the command again. If the error persists, the file was damaged: restart the "
                    "instrumented program to create a new region, and do not give write access to the "
                    "region file to anyone but the program and the database server.");
}

region_error symbolic_link_refused(const std::string& path) {
  return make_error(region_errc::unsafe, "region file \"" + path + "\" is a symbolic link",
                    "Symbolic links are not followed: whoever can write to the link's directory "
                    "could point it at another file.",
                    "Name the region file itself, or allow symbolic links (perfschema_fdw: server "
                    "option follow_symlinks 'true').");
}

region_error not_a_regular_file(const std::string& path, unsigned mode) {
  const char* what = S_ISDIR(mode)    ? "a directory"
                     : S_ISFIFO(mode) ? "a FIFO"
                     : S_ISSOCK(mode) ? "a socket"
                     : S_ISCHR(mode)  ? "a character device"
                     : S_ISBLK(mode)  ? "a block device"
                                      : "not a regular file";
  return make_error(region_errc::not_regular, "region file \"" + path + "\" is not a regular file",
                    std::string("The path names ") + what + ".",
                    "Set the region to the file that the instrumented program created (its PFS_REGION).");
}

void region_map::keep_layout() { std::memcpy(arrays_, header().arrays, sizeof(arrays_)); }

bool region_map::lost() const { return fault_guard::lost(guard_slot_); }

bool region_map::remap_if_restored() {
  if (base_ == nullptr) return false;
  if (!lost()) return true;
  struct stat st {};
  if (fstat(fd_, &st) != 0 || static_cast<std::uint64_t>(st.st_size) != size_) return false;
  // The header as it is in the file now, read without mapping it.
  region_header now{};
  if (pread(fd_, &now, sizeof(now), 0) != static_cast<ssize_t>(sizeof(now))) return false;
  if (std::memcmp(now.magic, kMagic, sizeof(kMagic)) != 0 || now.layout_version != kLayoutVersion ||
      now.file_size != size_ || now.pid != static_cast<std::uint64_t>(getpid()) ||
      now.creation_time_ns != creation_time_ns_)
    return false;
  const int prot = writable_ ? PROT_READ | PROT_WRITE : PROT_READ;
  if (mmap(base_, size_, prot, MAP_SHARED | MAP_FIXED, fd_, 0) == MAP_FAILED) return false;
  fault_guard::rearm(guard_slot_);
  return true;
}

namespace {

// [from, to) of one file into another at the same offsets: copy_file_range (in
// the kernel, no page of it mapped here), else pwrite from the mapping.
bool copy_bytes(int from_fd, const char* from_map, int to_fd, std::uint64_t from, std::uint64_t to) {
  bool in_kernel = true;
  while (from < to) {
    ssize_t w;
    if (in_kernel) {
      loff_t in = static_cast<loff_t>(from), out = static_cast<loff_t>(from);
      w = copy_file_range(from_fd, &in, to_fd, &out, static_cast<std::size_t>(to - from), 0);
      if (w < 0 && errno != EINTR) {
        in_kernel = false;  // EXDEV, EINVAL, ENOSYS, EOPNOTSUPP ...: the plain way
        continue;
      }
    } else {
      w = pwrite(to_fd, from_map + from, static_cast<std::size_t>(to - from), static_cast<off_t>(from));
      if (w < 0 && errno != EINTR) return false;
    }
    if (w == 0) return false;
    if (w > 0) from += static_cast<std::uint64_t>(w);
  }
  return true;
}

}  // namespace

std::size_t region_map::data_map(byte_range* out, std::size_t cap) const {
  if (fd_ < 0 || cap == 0) return 0;
  std::size_t n = 0;
  for (std::uint64_t pos = 0; pos < size_;) {
    const off_t data = lseek(fd_, static_cast<off_t>(pos), SEEK_DATA);
    if (data < 0) {
      if (errno == ENXIO) break;  // no data after pos
      out[0] = {0, size_};        // the file system cannot tell: all of it
      return 1;
    }
    const off_t hole = lseek(fd_, data, SEEK_HOLE);
    std::uint64_t end = hole < 0 ? size_ : static_cast<std::uint64_t>(hole);
    if (end > size_) end = size_;
    if (n == cap) {  // no room: the last part reaches to the end of the file
      out[n - 1].length = size_ - out[n - 1].offset;
      break;
    }
    out[n++] = {static_cast<std::uint64_t>(data), end - static_cast<std::uint64_t>(data)};
    pos = end;
  }
  return n;
}

bool region_map::move_to_copy(int dir_fd, const char* base, char* tmp, std::size_t tmp_cap,
                              const byte_range* ranges, std::size_t n) {
  if (base_ == nullptr || fd_ < 0 || !writable_) {
    errno = EBADF;
    return false;
  }
  struct stat st {};
  if (fstat(fd_, &st) != 0) return false;
  const int fd = safe_files::create_unique(dir_fd, base, O_RDWR, tmp, tmp_cap);
  if (fd < 0) return false;
  const auto fail = [&] {
    const int e = errno;
    ::close(fd);
    unlinkat(dir_fd, tmp, 0);
    errno = e;
    return false;
  };
  if (fchmod(fd, st.st_mode & 07777) != 0) return fail();
  if (fchown(fd, static_cast<uid_t>(-1), st.st_gid) != 0 && errno != EPERM) return fail();
  // Sparse: a hole reads as zeros, which is what the child's statistics, histories
  // and free records are. A full disk met later, when the child first writes to a
  // hole, is a SIGBUS that fault_guard turns into a lost region (recording stops),
  // not a crash. (lseek on the descriptor shared with the parent moves the offset
  // of the parent's open file too; the region is read and written by offset only.)
  if (ftruncate(fd, static_cast<off_t>(size_)) != 0) return fail();
  const char* from = static_cast<const char*>(base_);
  for (std::size_t r = 0; r < n; ++r)
    if (!copy_bytes(fd_, from, fd, ranges[r].offset, ranges[r].offset + ranges[r].length)) return fail();
  if (!ofd_lock(fd, kAliveLockByte, F_WRLCK, false)) return fail();
  if (mmap(base_, size_, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) return fail();
  // No read-ahead: a fault would fill the page cache with the holes around it.
  madvise(base_, size_, MADV_RANDOM);
  ::close(fd_);  // the child's copy of the parent's descriptor (the parent keeps its lock)
  fd_ = fd;
  return true;
}

bool region_map::publish_copy(int dir_fd, const char* tmp, const char* base, const char* path,
                              const char** refused) {
  *refused = safe_files::unsafe_destination(dir_fd, base);
  if (*refused != nullptr) {
    errno = EEXIST;
    return false;
  }
  if (renameat(dir_fd, tmp, dir_fd, base) != 0) return false;
  creation_time_ns_ = header().creation_time_ns;
  path_.assign(path);  // glibc's malloc is usable in fork child handlers
  return true;
}

void region_map::release_resident_pages() const noexcept {
  if (base_ != nullptr) madvise(base_, size_, MADV_DONTNEED);
}

bool region_map::provider_alive() const {
  if (fd_ < 0) return false;
  return ofd_locked_by_other(fd_, kAliveLockByte);
}

bool region_map::close_file_if_provider_exited() {
  if (fd_ < 0 || writable_ || provider_alive()) return false;
  close(fd_);
  fd_ = -1;
  return true;
}

void region_map::unlink_file() const {
  if (!path_.empty()) unlink(path_.c_str());
}

void region_map::release_alive_lock() {
  if (fd_ < 0) return;
  struct flock fl {};
  fl.l_type = F_UNLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(kAliveLockByte);
  fl.l_len = 1;
  fcntl(fd_, F_OFD_SETLK, &fl);
}

setup_lock_guard::setup_lock_guard(const region_map& region)
    : fd_(region.fd()), locked_(fd_ >= 0 && ofd_lock(fd_, kSetupLockByte, F_WRLCK, true)) {}

setup_lock_guard::setup_lock_guard(const region_map& region, const volatile sig_atomic_t* interrupt,
                                   std::uint32_t timeout_ms)
    : fd_(region.fd()), locked_(false) {
  if (fd_ < 0) return;
  if (interrupt == nullptr && timeout_ms == 0) {
    locked_ = ofd_lock(fd_, kSetupLockByte, F_WRLCK, true);
    return;
  }
  timespec start{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  long pause_ns = 50'000;  // doubles up to 10 ms: holders keep the lock for microseconds
  for (;;) {
    if (ofd_lock(fd_, kSetupLockByte, F_WRLCK, false)) {
      locked_ = true;
      return;
    }
    if (errno != EAGAIN && errno != EACCES) return;
    if (interrupt != nullptr && *interrupt != 0) {
      interrupted_ = true;
      return;
    }
    if (timeout_ms != 0) {
      timespec now{};
      clock_gettime(CLOCK_MONOTONIC, &now);
      const std::int64_t waited_ms =
          (now.tv_sec - start.tv_sec) * 1000 + (now.tv_nsec - start.tv_nsec) / 1'000'000;
      if (waited_ms >= timeout_ms) {
        timed_out_ = true;
        return;
      }
    }
    const timespec pause{0, pause_ns};
    nanosleep(&pause, nullptr);
    if (pause_ns < 10'000'000) pause_ns *= 2;
  }
}

setup_lock_guard::~setup_lock_guard() {
  if (!locked_) return;
  struct flock fl {};
  fl.l_type = F_UNLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(kSetupLockByte);
  fl.l_len = 1;
  fcntl(fd_, F_OFD_SETLK, &fl);
}

}  // namespace pfs
