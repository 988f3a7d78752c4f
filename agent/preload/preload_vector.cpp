// Vector and zero-copy io under the interposer: preadv, pwritev (and their 64 and
// v2 forms) as file io waits with the bytes they moved (socket io on a socket, as
// read and write are; readv and writev: preload_file.cpp); sendfile,
// copy_file_range and splice move bytes from one descriptor to another in the
// kernel: each end that is a file opened through the interposer (or a socket) gets
// its wait, a read on the source and a write on the destination, with the bytes
// moved. A pipe's end (splice) is not a file: not recorded.
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "agent/preload/preload_io.h"

namespace pfs::preload {
namespace {

// Until dlsym resolved the C library's functions: the system calls themselves (on
// x86-64 the offset is one register; the high half is 0).
ssize_t boot_preadv(int fd, const iovec* v, int n, off_t off) {
  return syscall(SYS_preadv, fd, v, n, off, 0);
}
ssize_t boot_pwritev(int fd, const iovec* v, int n, off_t off) {
  return syscall(SYS_pwritev, fd, v, n, off, 0);
}
ssize_t boot_preadv2(int fd, const iovec* v, int n, off_t off, int flags) {
  return syscall(SYS_preadv2, fd, v, n, off, 0, flags);
}
ssize_t boot_pwritev2(int fd, const iovec* v, int n, off_t off, int flags) {
  return syscall(SYS_pwritev2, fd, v, n, off, 0, flags);
}
ssize_t boot_sendfile(int out, int in, off_t* off, size_t count) {
  return syscall(SYS_sendfile, out, in, off, count);
}
ssize_t boot_copy_file_range(int in, off_t* off_in, int out, off_t* off_out, size_t len, unsigned flags) {
  return syscall(SYS_copy_file_range, in, off_in, out, off_out, len, flags);
}
ssize_t boot_splice(int in, off_t* off_in, int out, off_t* off_out, size_t len, unsigned flags) {
  return syscall(SYS_splice, in, off_in, out, off_out, len, flags);
}

struct real_vector_functions {
  ssize_t (*preadv)(int, const iovec*, int, off_t) = boot_preadv;
  ssize_t (*preadv64)(int, const iovec*, int, off_t) = boot_preadv;
  ssize_t (*pwritev)(int, const iovec*, int, off_t) = boot_pwritev;
  ssize_t (*pwritev64)(int, const iovec*, int, off_t) = boot_pwritev;
  ssize_t (*preadv2)(int, const iovec*, int, off_t, int) = boot_preadv2;
  ssize_t (*preadv64v2)(int, const iovec*, int, off_t, int) = boot_preadv2;
  ssize_t (*pwritev2)(int, const iovec*, int, off_t, int) = boot_pwritev2;
  ssize_t (*pwritev64v2)(int, const iovec*, int, off_t, int) = boot_pwritev2;
  ssize_t (*sendfile)(int, int, off_t*, size_t) = boot_sendfile;
  ssize_t (*sendfile64)(int, int, off_t*, size_t) = boot_sendfile;
  ssize_t (*copy_file_range)(int, off_t*, int, off_t*, size_t, unsigned) = boot_copy_file_range;
  ssize_t (*splice)(int, off_t*, int, off_t*, size_t, unsigned) = boot_splice;
};
real_vector_functions real_vec;

template <class Fn>
void resolve(Fn& slot, const char* name) {
  if (void* p = dlsym(RTLD_NEXT, name)) slot = reinterpret_cast<Fn>(p);
}

// One end of a transfer: a file wait or a socket wait on its descriptor, or none.
struct end_wait {
  enum { kNone, kFile, kSocket } kind = kNone;
  pfs_wait_locker file;
  socket_wait socket;
};

// op: PFS_FILE_READ for the source, PFS_FILE_WRITE for the destination.
void end_start(end_wait& w, int fd, int op, const void* caller) {
  if (!should_record() || fd < 0) return;
  if (file_of_fd(fd) != nullptr) {
    busy_scope busy;
    errno_keeper keep;
    ensure_thread();
    if (pfs_start_file_wait(&w.file, fd, op, source_of(caller), 0) != 0) w.kind = end_wait::kFile;
    return;
  }
  if (socket_slot_of_fd(fd) == kUntrackedFd) return;
  if (socket_wait_start(w.socket, fd, op == PFS_FILE_READ ? PFS_SOCKET_RECV : PFS_SOCKET_SEND, caller))
    w.kind = end_wait::kSocket;
}

void end_finish(end_wait& w, std::int64_t bytes) {
  if (w.kind == end_wait::kFile) {
    busy_scope busy;
    errno_keeper keep;
    pfs_end_file_wait(&w.file, bytes);
  } else if (w.kind == end_wait::kSocket) {
    socket_wait_end(w.socket, bytes);
  }
}

// A transfer from descriptor in to descriptor out: the destination's wait nests in
// the source's (both time the one call).
template <class Call>
ssize_t transfer(int in, int out, const void* caller, Call call) {
  if (!should_record()) return call();
  end_wait source, destination;
  end_start(source, in, PFS_FILE_READ, caller);
  end_start(destination, out, PFS_FILE_WRITE, caller);
  const ssize_t n = call();
  const std::int64_t bytes = n >= 0 ? static_cast<std::int64_t>(n) : -1;
  end_finish(destination, bytes);
  end_finish(source, bytes);
  return n;
}

}  // namespace

void resolve_vector_functions() {
  real_vector_functions r = real_vec;
  resolve(r.preadv, "preadv");
  resolve(r.preadv64, "preadv64");
  resolve(r.pwritev, "pwritev");
  resolve(r.pwritev64, "pwritev64");
  resolve(r.preadv2, "preadv2");
  resolve(r.preadv64v2, "preadv64v2");
  resolve(r.pwritev2, "pwritev2");
  resolve(r.pwritev64v2, "pwritev64v2");
  resolve(r.sendfile, "sendfile");
  resolve(r.sendfile64, "sendfile64");
  resolve(r.copy_file_range, "copy_file_range");
  resolve(r.splice, "splice");
  real_vec = r;  // each pointer one aligned word, as preload.cpp's table
}

}  // namespace pfs::preload

// ---------------------------------------------------------------------------
// The interposed functions.

using namespace pfs::preload;

PFS_EXPORT ssize_t preadv(int fd, const iovec* v, int n, off_t off) {
  return file_io(
      fd, PFS_FILE_READ, CALLER, [=] { return real_vec.preadv(fd, v, n, off); }, byte_count{});
}
PFS_EXPORT ssize_t preadv64(int fd, const iovec* v, int n, off_t off) {
  return file_io(
      fd, PFS_FILE_READ, CALLER, [=] { return real_vec.preadv64(fd, v, n, off); }, byte_count{});
}
PFS_EXPORT ssize_t pwritev(int fd, const iovec* v, int n, off_t off) {
  return file_io(
      fd, PFS_FILE_WRITE, CALLER, [=] { return real_vec.pwritev(fd, v, n, off); }, byte_count{});
}
PFS_EXPORT ssize_t pwritev64(int fd, const iovec* v, int n, off_t off) {
  return file_io(
      fd, PFS_FILE_WRITE, CALLER, [=] { return real_vec.pwritev64(fd, v, n, off); }, byte_count{});
}
PFS_EXPORT ssize_t preadv2(int fd, const iovec* v, int n, off_t off, int flags) {
  return file_io(
      fd, PFS_FILE_READ, CALLER, [=] { return real_vec.preadv2(fd, v, n, off, flags); }, byte_count{});
}
PFS_EXPORT ssize_t preadv64v2(int fd, const iovec* v, int n, off_t off, int flags) {
  return file_io(
      fd, PFS_FILE_READ, CALLER, [=] { return real_vec.preadv64v2(fd, v, n, off, flags); }, byte_count{});
}
PFS_EXPORT ssize_t pwritev2(int fd, const iovec* v, int n, off_t off, int flags) {
  return file_io(
      fd, PFS_FILE_WRITE, CALLER, [=] { return real_vec.pwritev2(fd, v, n, off, flags); }, byte_count{});
}
PFS_EXPORT ssize_t pwritev64v2(int fd, const iovec* v, int n, off_t off, int flags) {
  return file_io(
      fd, PFS_FILE_WRITE, CALLER, [=] { return real_vec.pwritev64v2(fd, v, n, off, flags); }, byte_count{});
}

PFS_EXPORT ssize_t sendfile(int out, int in, off_t* off, size_t count) noexcept {
  return transfer(in, out, CALLER, [=] { return real_vec.sendfile(out, in, off, count); });
}
PFS_EXPORT ssize_t sendfile64(int out, int in, off_t* off, size_t count) noexcept {
  return transfer(in, out, CALLER, [=] { return real_vec.sendfile64(out, in, off, count); });
}
PFS_EXPORT ssize_t copy_file_range(int in, off_t* off_in, int out, off_t* off_out, size_t len,
                                   unsigned flags) {
  return transfer(in, out, CALLER,
                  [=] { return real_vec.copy_file_range(in, off_in, out, off_out, len, flags); });
}
PFS_EXPORT ssize_t splice(int in, off_t* off_in, int out, off_t* off_out, size_t len, unsigned flags) {
  return transfer(in, out, CALLER, [=] { return real_vec.splice(in, off_in, out, off_out, len, flags); });
}
