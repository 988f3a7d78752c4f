// The interposed file io system call wrappers of the C library: open, close, read,
// write and the rest, on descriptors opened through the interposer; see preload.cpp.
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cstring>

#include "agent/preload/preload_io.h"

namespace pfs::preload {
namespace {

// File io on a descriptor: counts_bytes when the call returns the bytes it moved.
template <class Call>
[[gnu::always_inline]] inline auto fd_io(int fd, int op, bool counts_bytes, const void* caller, Call call)
    -> decltype(call()) {
  if (counts_bytes) return file_io(fd, op, caller, call, byte_count{});
  return file_io(fd, op, caller, call, no_bytes{});
}

// create / open: the file's instance is found or created by its absolute name, fd bound to it.
template <class Call>
int open_common(int dirfd, const char* path, int flags, const void* caller, Call call) {
  return open_named(dirfd, path, (flags & O_CREAT) ? PFS_FILE_CREATE : PFS_FILE_OPEN, caller, call,
                    [](int fd) { return fd; });
}

// delete / rename of a file named by path (relative to dirfd, and new_path to
// new_dirfd: AT_FDCWD for the working directory).
template <class Call>
int name_op(int dirfd, const char* path, int new_dirfd, const char* new_path, int op, const void* caller,
            Call call) {
  if (!should_record() || path == nullptr) return call();
  pfs_wait_locker locker;
  const int rec = start_named_wait(locker, dirfd, path, op, caller);
  const int rc = call();
  const int saved = errno;
  if (rec != 0) {
    tls.busy = true;
    char name[layout::kObjectNameLen];
    pfs_end_file_name_wait(&locker, rc,
                           new_path != nullptr ? absolute_name(new_dirfd, new_path, name) : nullptr);
    tls.busy = false;
  }
  errno = saved;
  return rc;
}

// close of a descriptor that is not a recorded file: a socket's close is a wait,
// and its row goes; any other number is forgotten (it may be a socket next).
int close_socket(int fd, const void* caller) {
  if (socket_of_fd(fd) == nullptr) {
    socket_fd_reset(fd);
    return real.close(fd);
  }
  socket_wait w;
  if (!socket_wait_start(w, fd, PFS_SOCKET_CLOSE, caller)) {
    socket_fd_reset(fd);  // before the number can be reused
    return real.close(fd);
  }
  const int rc = real.close(fd);
  const int saved = errno;
  tls.busy = true;
  pfs_end_socket_close_wait(&w.locker, fd);
  tls.busy = false;
  errno = saved;
  return rc;
}

int close_common(int fd, const void* caller) {
  // The region's descriptor stays open while the agent records (a forked child,
  // which records nothing, may close its copy: the parent's keeps the lock).
  if (fd == g_region_fd && fd >= 0 && load_relaxed(g_hot.recording)) [[unlikely]]
    return 0;
  if (!should_record()) return real.close(fd);
  if (file_of_fd(fd) == nullptr) return close_socket(fd, caller);
  return close_bound(fd, caller, [=] { return real.close(fd); });
}

// A descriptor made by dup*: the same open file as from, so bound to from's file
// instance if it has one (a program that dup2s its output file onto stdout, as
// sort -o does, writes to that file); a duplicated socket is looked at on its
// first io.
int duplicated(int from, int fd) {
  if (fd >= 0 && load_relaxed(g_hot.recording)) {
    const int saved = errno;
    {
      busy_scope busy;
      duplicate_file_fd(from, fd);
    }
    socket_fd_reset(fd);
    errno = saved;
  }
  return fd;
}

mode_t mode_arg(int flags, va_list ap) {
  return __OPEN_NEEDS_MODE(flags) ? static_cast<mode_t>(va_arg(ap, int)) : 0;
}

}  // namespace
}  // namespace pfs::preload

// ---------------------------------------------------------------------------
// The interposed functions.

using namespace pfs::preload;

// Files: open and create
PFS_EXPORT int open(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, CALLER, [=] { return real.open(path, flags, mode); });
}
PFS_EXPORT int open64(const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(AT_FDCWD, path, flags, CALLER, [=] { return real.open64(path, flags, mode); });
}
PFS_EXPORT int openat(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, CALLER, [=] { return real.openat(dirfd, path, flags, mode); });
}
PFS_EXPORT int openat64(int dirfd, const char* path, int flags, ...) {
  va_list ap;
  va_start(ap, flags);
  const mode_t mode = mode_arg(flags, ap);
  va_end(ap);
  return open_common(dirfd, path, flags, CALLER, [=] { return real.openat64(dirfd, path, flags, mode); });
}
// _FORTIFY_SOURCE forms (open without a mode argument).
PFS_EXPORT int __open_2(const char* path, int flags) {
  auto fn = get(real.open_2);
  if (fn == nullptr) return boot_open(path, flags, 0);
  return open_common(AT_FDCWD, path, flags, CALLER, [=] { return fn(path, flags); });
}
PFS_EXPORT int __open64_2(const char* path, int flags) {
  auto fn = get(real.open64_2);
  if (fn == nullptr) return boot_open(path, flags, 0);
  return open_common(AT_FDCWD, path, flags, CALLER, [=] { return fn(path, flags); });
}
PFS_EXPORT int __openat_2(int dirfd, const char* path, int flags) {
  auto fn = get(real.openat_2);
  if (fn == nullptr) return boot_openat(dirfd, path, flags, 0);
  return open_common(dirfd, path, flags, CALLER, [=] { return fn(dirfd, path, flags); });
}
PFS_EXPORT int __openat64_2(int dirfd, const char* path, int flags) {
  auto fn = get(real.openat64_2);
  if (fn == nullptr) return boot_openat(dirfd, path, flags, 0);
  return open_common(dirfd, path, flags, CALLER, [=] { return fn(dirfd, path, flags); });
}
PFS_EXPORT int creat(const char* path, mode_t mode) {
  auto fn = get(real.creat);
  if (fn == nullptr) return boot_open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
  return open_common(AT_FDCWD, path, O_CREAT, CALLER, [=] { return fn(path, mode); });
}
PFS_EXPORT int creat64(const char* path, mode_t mode) {
  auto fn = get(real.creat64);
  if (fn == nullptr) return boot_open(path, O_CREAT | O_WRONLY | O_TRUNC, mode);
  return open_common(AT_FDCWD, path, O_CREAT, CALLER, [=] { return fn(path, mode); });
}

PFS_EXPORT int close(int fd) { return close_common(fd, CALLER); }

// Files: descriptor io
PFS_EXPORT ssize_t read(int fd, void* buf, size_t n) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.read(fd, buf, n); });
}
PFS_EXPORT ssize_t write(int fd, const void* buf, size_t n) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.write(fd, buf, n); });
}
PFS_EXPORT ssize_t pread(int fd, void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.pread(fd, buf, n, off); });
}
PFS_EXPORT ssize_t pread64(int fd, void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.pread64(fd, buf, n, off); });
}
PFS_EXPORT ssize_t pwrite(int fd, const void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.pwrite(fd, buf, n, off); });
}
PFS_EXPORT ssize_t pwrite64(int fd, const void* buf, size_t n, off_t off) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.pwrite64(fd, buf, n, off); });
}
PFS_EXPORT ssize_t __read_chk(int fd, void* buf, size_t n, size_t buflen) {
  auto fn = get(real.read_chk);
  if (fn == nullptr) return boot_read(fd, buf, n);
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return fn(fd, buf, n, buflen); });
}
PFS_EXPORT ssize_t __pread_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  auto fn = get(real.pread_chk);
  if (fn == nullptr) return boot_pread(fd, buf, n, off);
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return fn(fd, buf, n, off, buflen); });
}
PFS_EXPORT ssize_t __pread64_chk(int fd, void* buf, size_t n, off_t off, size_t buflen) {
  auto fn = get(real.pread64_chk);
  if (fn == nullptr) return boot_pread(fd, buf, n, off);
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return fn(fd, buf, n, off, buflen); });
}
PFS_EXPORT ssize_t readv(int fd, const iovec* v, int n) {
  return fd_io(fd, PFS_FILE_READ, true, CALLER, [=] { return real.readv(fd, v, n); });
}
PFS_EXPORT ssize_t writev(int fd, const iovec* v, int n) {
  return fd_io(fd, PFS_FILE_WRITE, true, CALLER, [=] { return real.writev(fd, v, n); });
}
PFS_EXPORT off_t lseek(int fd, off_t off, int whence) noexcept {
  return fd_io(fd, PFS_FILE_SEEK, false, CALLER, [=] { return real.lseek(fd, off, whence); });
}
PFS_EXPORT off_t lseek64(int fd, off_t off, int whence) noexcept {
  return fd_io(fd, PFS_FILE_SEEK, false, CALLER, [=] { return real.lseek64(fd, off, whence); });
}
PFS_EXPORT int fsync(int fd) {
  return fd_io(fd, PFS_FILE_SYNC, false, CALLER, [=] { return real.fsync(fd); });
}
PFS_EXPORT int fdatasync(int fd) {
  return fd_io(fd, PFS_FILE_SYNC, false, CALLER, [=] { return real.fdatasync(fd); });
}

// Files: by name
PFS_EXPORT int rename(const char* from, const char* to) noexcept {
  return name_op(AT_FDCWD, from, AT_FDCWD, to, PFS_FILE_RENAME, CALLER,
                 [=] { return real.rename(from, to); });
}
PFS_EXPORT int renameat(int from_dir, const char* from, int to_dir, const char* to) noexcept {
  return name_op(from_dir, from, to_dir, to, PFS_FILE_RENAME, CALLER,
                 [=] { return real.renameat(from_dir, from, to_dir, to); });
}
// RENAME_EXCHANGE swaps two names: not a rename of one file (not recorded).
PFS_EXPORT int renameat2(int from_dir, const char* from, int to_dir, const char* to,
                         unsigned flags) noexcept {
  auto fn = get(real.renameat2);
  if (fn == nullptr) return static_cast<int>(syscall(SYS_renameat2, from_dir, from, to_dir, to, flags));
  if (flags & RENAME_EXCHANGE) return fn(from_dir, from, to_dir, to, flags);
  return name_op(from_dir, from, to_dir, to, PFS_FILE_RENAME, CALLER,
                 [=] { return fn(from_dir, from, to_dir, to, flags); });
}
PFS_EXPORT int unlink(const char* path) noexcept {
  return name_op(AT_FDCWD, path, AT_FDCWD, nullptr, PFS_FILE_DELETE, CALLER,
                 [=] { return real.unlink(path); });
}
// AT_REMOVEDIR removes a directory: not a file (not recorded).
PFS_EXPORT int unlinkat(int dir, const char* path, int flags) noexcept {
  if (flags & AT_REMOVEDIR) return real.unlinkat(dir, path, flags);
  return name_op(dir, path, AT_FDCWD, nullptr, PFS_FILE_DELETE, CALLER,
                 [=] { return real.unlinkat(dir, path, flags); });
}

// Descriptors made by duplication: the file of the descriptor they copy.
PFS_EXPORT int dup(int fd) noexcept { return duplicated(fd, real.dup(fd)); }
PFS_EXPORT int dup2(int fd, int fd2) noexcept { return duplicated(fd, real.dup2(fd, fd2)); }
PFS_EXPORT int dup3(int fd, int fd2, int flags) noexcept { return duplicated(fd, real.dup3(fd, fd2, flags)); }
// fcntl's third argument is an int, a pointer or nothing, by command: passed on as
// one word (the C library reads it the same way). F_DUPFD and F_DUPFD_CLOEXEC make a
// descriptor as dup does. Not noexcept: F_SETLKW is a cancellation point.
namespace {
int fcntl_common(int (*fn)(int, int, unsigned long), int fd, int cmd, unsigned long arg) {
  const int rc = fn(fd, cmd, arg);
  if (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) return duplicated(fd, rc);
  return rc;
}
}  // namespace
PFS_EXPORT int fcntl(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  const unsigned long arg = va_arg(ap, unsigned long);
  va_end(ap);
  return fcntl_common(real.fcntl, fd, cmd, arg);
}
PFS_EXPORT int fcntl64(int fd, int cmd, ...) {
  va_list ap;
  va_start(ap, cmd);
  const unsigned long arg = va_arg(ap, unsigned long);
  va_end(ap);
  return fcntl_common(real.fcntl64, fd, cmd, arg);
}
