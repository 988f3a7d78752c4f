// File io and table io for C++ programs.
//
// File io: POSIX calls with the same arguments and results, each recorded as a
// wait of class wait/io/file/<category>/<name> (OPERATION in MySQL's words,
// NUMBER_OF_BYTES what was transferred). The real call's result and errno reach
// the caller untouched; a failed call is a wait too.
//
//   pfs_key log = pfs::file::register_class("app", "log");  // wait/io/file/app/log
//   int fd = pfs::file::open(log, "/var/tmp/app.log", O_CREAT | O_WRONLY, 0644);
//   pfs::file::write(fd, buf, n);
//   pfs::file::fsync(fd);
//   pfs::file::close(fd);
//
// Table io (WL#4895): a data layer declares its tables and wraps row operations:
//
//   pfs_key io = pfs::table::register_class("store");        // wait/io/table/store/handler
//   pfs_table* orders = pfs::table::declare(io, "shop", "orders");
//   unsigned pk = pfs_declare_table_index(orders, "PRIMARY");
//   { pfs::table::io w(orders, PFS_TABLE_FETCH, pk); ...; w.rows(n); }  // one event, n rows
//
// Table locks (MySQL's psi_table.h): the time spent getting a lock on a table, a
// wait of class wait/lock/table/store/handler (made with the io class):
//
//   { pfs::table::lock_wait w(orders, PFS_TABLE_LOCK_WRITE_NORMAL); lock_the_table(); }
#pragma once

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>

#include "agent/provider/pfs_c.h"
#include "agent/provider/source_location.h"

namespace pfs::file {

using where = pfs::source_location;

inline pfs_key register_class(const char* category, const char* name) {
  return pfs_register_file(category, name);
}

namespace detail {

// An operation on an open descriptor: real() returns the call's result; bytes
// tells how many bytes it moved (negative: none / error).
template <class Real, class Bytes>
auto on_fd(int fd, int op, const where& at, Real&& real, Bytes&& bytes) {
  pfs_wait_locker l;
  const int rec = pfs_start_file_wait(&l, fd, op, at.file_name(), at.line());
  auto rc = real();
  if (rec) {
    const int saved = errno;
    pfs_end_file_wait(&l, bytes(rc));
    errno = saved;
  }
  return rc;
}

// Closing a descriptor: fd is unbound from its file whatever happens.
template <class Real>
int on_close(int fd, const where& at, Real&& real) {
  pfs_wait_locker l;
  const int rec = pfs_start_file_wait(&l, fd, PFS_FILE_CLOSE, at.file_name(), at.line());
  const int rc = real();
  const int saved = errno;
  if (rec)
    pfs_end_file_close_wait(&l, fd);
  else
    pfs_forget_fd(fd);
  errno = saved;
  return rc;
}

inline std::int64_t transferred(ssize_t rc) { return rc >= 0 ? static_cast<std::int64_t>(rc) : -1; }
inline std::int64_t none(long long) { return -1; }

}  // namespace detail

inline int open(pfs_key key, const char* path, int flags, mode_t mode = 0, where at = where::current()) {
  pfs_wait_locker l;
  const int op = (flags & O_CREAT) ? PFS_FILE_CREATE : PFS_FILE_OPEN;
  const int rec = pfs_start_file_name_wait(&l, key, op, path, at.file_name(), at.line());
  const int fd = ::open(path, flags, mode);
  if (rec) {
    const int saved = errno;
    pfs_end_file_open_wait(&l, fd);
    errno = saved;
  }
  return fd;
}

inline int creat(pfs_key key, const char* path, mode_t mode, where at = where::current()) {
  return open(key, path, O_CREAT | O_WRONLY | O_TRUNC, mode, at);
}

inline int close(int fd, where at = where::current()) {
  return detail::on_close(fd, at, [&] { return ::close(fd); });
}

inline ssize_t read(int fd, void* buf, size_t n, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_READ, at, [&] { return ::read(fd, buf, n); }, detail::transferred);
}
inline ssize_t write(int fd, const void* buf, size_t n, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_WRITE, at, [&] { return ::write(fd, buf, n); }, detail::transferred);
}
inline ssize_t pread(int fd, void* buf, size_t n, off_t offset, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_READ, at, [&] { return ::pread(fd, buf, n, offset); }, detail::transferred);
}
inline ssize_t pwrite(int fd, const void* buf, size_t n, off_t offset, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_WRITE, at, [&] { return ::pwrite(fd, buf, n, offset); }, detail::transferred);
}
inline ssize_t readv(int fd, const iovec* iov, int count, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_READ, at, [&] { return ::readv(fd, iov, count); }, detail::transferred);
}
inline ssize_t writev(int fd, const iovec* iov, int count, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_WRITE, at, [&] { return ::writev(fd, iov, count); }, detail::transferred);
}
// lseek(fd, 0, SEEK_CUR) only asks where the file is: MySQL's "tell".
inline off_t lseek(int fd, off_t offset, int whence, where at = where::current()) {
  const int op = (whence == SEEK_CUR && offset == 0) ? PFS_FILE_TELL : PFS_FILE_SEEK;
  return detail::on_fd(
      fd, op, at, [&] { return ::lseek(fd, offset, whence); }, detail::none);
}
inline int fsync(int fd, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_SYNC, at, [&] { return ::fsync(fd); }, detail::none);
}
inline int fdatasync(int fd, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_SYNC, at, [&] { return ::fdatasync(fd); }, detail::none);
}
inline int fstat(int fd, struct stat* st, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_STAT, at, [&] { return ::fstat(fd, st); }, detail::none);
}
inline int ftruncate(int fd, off_t length, where at = where::current()) {
  return detail::on_fd(
      fd, PFS_FILE_CHSIZE, at, [&] { return ::ftruncate(fd, length); }, detail::none);
}

// Operations on a path name (the file instance is found or created by name).
template <class Real>
int on_name(pfs_key key, int op, const char* path, const char* new_path, const where& at, Real&& real) {
  pfs_wait_locker l;
  const int rec = pfs_start_file_name_wait(&l, key, op, path, at.file_name(), at.line());
  const int rc = real();
  if (rec) {
    const int saved = errno;
    pfs_end_file_name_wait(&l, rc, new_path);
    errno = saved;
  }
  return rc;
}
inline int stat(pfs_key key, const char* path, struct stat* st, where at = where::current()) {
  return on_name(key, PFS_FILE_STAT, path, nullptr, at, [&] { return ::stat(path, st); });
}
inline int unlink(pfs_key key, const char* path, where at = where::current()) {
  return on_name(key, PFS_FILE_DELETE, path, nullptr, at, [&] { return ::unlink(path); });
}
inline int rename(pfs_key key, const char* from, const char* to, where at = where::current()) {
  return on_name(key, PFS_FILE_RENAME, from, to, at, [&] { return ::rename(from, to); });
}

// FILE* helpers: the stream's descriptor carries the file instance.
inline FILE* fopen(pfs_key key, const char* path, const char* mode, where at = where::current()) {
  pfs_wait_locker l;
  const bool creates = mode != nullptr && (mode[0] == 'w' || mode[0] == 'a');
  const int rec = pfs_start_file_name_wait(&l, key, creates ? PFS_FILE_CREATE : PFS_FILE_OPEN, path,
                                           at.file_name(), at.line());
  FILE* f = ::fopen(path, mode);
  if (rec) {
    const int saved = errno;
    pfs_end_file_open_wait(&l, f != nullptr ? ::fileno(f) : -1);
    errno = saved;
  }
  return f;
}
inline int fclose(FILE* f, where at = where::current()) {
  return detail::on_close(::fileno(f), at, [&] { return ::fclose(f); });
}
inline size_t fread(void* ptr, size_t size, size_t n, FILE* f, where at = where::current()) {
  return detail::on_fd(
      ::fileno(f), PFS_FILE_READ, at, [&] { return ::fread(ptr, size, n, f); },
      [size](size_t items) { return static_cast<std::int64_t>(items * size); });
}
inline size_t fwrite(const void* ptr, size_t size, size_t n, FILE* f, where at = where::current()) {
  return detail::on_fd(
      ::fileno(f), PFS_FILE_WRITE, at, [&] { return ::fwrite(ptr, size, n, f); },
      [size](size_t items) { return static_cast<std::int64_t>(items * size); });
}
inline int fflush(FILE* f, where at = where::current()) {
  return detail::on_fd(
      ::fileno(f), PFS_FILE_FLUSH, at, [&] { return ::fflush(f); }, detail::none);
}

}  // namespace pfs::file

namespace pfs::table {

inline pfs_key register_class(const char* category) { return pfs_register_table_io(category); }
inline pfs_table* declare(pfs_key key, const char* schema, const char* name, bool temporary = false) {
  return pfs_declare_table(key, temporary ? PFS_OBJECT_TEMPORARY_TABLE : PFS_OBJECT_TABLE, schema, name);
}

// One table io wait, from construction to destruction (or to end()). rows()
// sets how many rows it covers (default 1).
class io {
 public:
  io(pfs_table* table, int op, unsigned index = 0, unsigned flags = 0,
     pfs::source_location at = pfs::source_location::current())
      : rec_(pfs_start_table_io_wait(&l_, table, op, index, flags, at.file_name(), at.line()) != 0) {}
  ~io() { end(); }
  io(const io&) = delete;
  io& operator=(const io&) = delete;
  void rows(std::uint64_t n) { rows_ = n; }
  void end() {
    if (rec_) pfs_end_table_io_wait(&l_, rows_);
    rec_ = false;
  }

 private:
  pfs_wait_locker l_;
  bool rec_;
  std::uint64_t rows_ = 1;
};

// One table lock wait (kind: PFS_TABLE_LOCK_*), from construction to destruction
// (or to end()): wrap the lock call, not the time the lock is held.
class lock_wait {
 public:
  lock_wait(pfs_table* table, int kind, pfs::source_location at = pfs::source_location::current())
      : rec_(pfs_start_table_lock_wait(&l_, table, kind, at.file_name(), at.line()) != 0) {}
  ~lock_wait() { end(); }
  lock_wait(const lock_wait&) = delete;
  lock_wait& operator=(const lock_wait&) = delete;
  void end() {
    if (rec_) pfs_end_table_lock_wait(&l_);
    rec_ = false;
  }

 private:
  pfs_wait_locker l_;
  bool rec_;
};

}  // namespace pfs::table
