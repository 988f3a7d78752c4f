// File io around a real call, shared by the interposer's io wrappers: descriptor
// calls (preload_file.cpp), stdio streams (preload_stdio.cpp) and vector and
// zero-copy io (preload_vector.cpp). The waits are MySQL's file io waits (WL#4895):
// OPERATION open/create/read/write/seek/tell/flush/close, NUMBER_OF_BYTES what the
// call moved, on the file instance the descriptor was bound to when it was opened.
#pragma once

#include <fcntl.h>

#include <cstdint>

#include "agent/preload/preload_real.h"

namespace pfs::preload {

// The absolute name of path as open(dirfd, path) would find it: path itself when it
// is absolute; else the directory (the working directory for AT_FDCWD, read with a
// system call; a directory descriptor's name from /proc/self/fd), '/', path. Only
// when a file is opened, never on io. path when the directory cannot be named or
// the result does not fit (kObjectNameLen). buf: the room for the result.
const char* absolute_name(int dirfd, const char* path, char (&buf)[layout::kObjectNameLen]);

// File io on descriptor fd: call() is the real call; bytes(result) what it moved
// (-1: none). A descriptor that is not a file opened through the interposer: a
// socket's read and write are its recv and send; anything else is not recorded.
template <class Call, class Bytes>
[[gnu::always_inline]] inline auto file_io(int fd, int op, const void* caller, Call call, Bytes bytes)
    -> decltype(call()) {
  if (!should_record()) return call();
  file_instance* f = file_of_fd(fd);
  if (f == nullptr) {
    if (socket_slot_of_fd(fd) == kUntrackedFd || (op != PFS_FILE_READ && op != PFS_FILE_WRITE)) return call();
    socket_wait w;
    if (!socket_wait_start(w, fd, op == PFS_FILE_READ ? PFS_SOCKET_RECV : PFS_SOCKET_SEND, caller))
      return call();
    const auto r = call();
    socket_wait_end(w, bytes(r));
    return r;
  }
  tls.busy = true;
  ensure_thread();
  prefetch_event_slots();
  wait_locker l;
  if (!begin_file_wait(l, f, op)) {
    tls.busy = false;
    return call();
  }
  {
    errno_keeper keep;
    start_running(l, source_of(caller), 0);
  }
  tls.busy = false;
  const auto r = call();
  const int saved = errno;
  tls.busy = true;
  end_file_wait(l, bytes(r));
  tls.busy = false;
  errno = saved;
  return r;
}

// What a call that returns a byte count (or -1) moved.
struct byte_count {
  template <class R>
  std::int64_t operator()(R r) const {
    return r >= 0 ? static_cast<std::int64_t>(r) : -1;
  }
};
struct no_bytes {
  template <class R>
  std::int64_t operator()(R) const {
    return -1;
  }
};

// The start of a wait on a file named by path (relative to dirfd): 1 if it is
// recorded. The agent's work runs busy and keeps the caller's errno.
inline int start_named_wait(pfs_wait_locker& locker, int dirfd, const char* path, int op,
                            const void* caller) {
  tls.busy = true;
  int rec = 0;
  {
    errno_keeper keep;
    ensure_thread();
    const pfs_key key = file_class(caller);
    if (key != 0) {
      char name[layout::kObjectNameLen];
      rec =
          pfs_start_file_name_wait(&locker, key, op, absolute_name(dirfd, path, name), source_of(caller), 0);
    }
  }
  tls.busy = false;
  return rec;
}

// Opening a file by name (open, creat, fopen ...): op PFS_FILE_OPEN or
// PFS_FILE_CREATE; the file's instance is found or created by its absolute name,
// and the descriptor fd_of(result) (negative: the call failed) is bound to it.
template <class Call, class FdOf>
auto open_named(int dirfd, const char* path, int op, const void* caller, Call call, FdOf fd_of)
    -> decltype(call()) {
  if (!should_record() || path == nullptr) return call();
  pfs_wait_locker locker;
  const int rec = start_named_wait(locker, dirfd, path, op, caller);
  const auto r = call();
  const int saved = errno;
  tls.busy = true;
  const int fd = fd_of(r);
  if (fd >= 0) socket_fd_reset(fd);  // a number that was a socket's before
  if (rec != 0)
    pfs_end_file_open_wait(&locker, fd);
  else if (fd >= 0)
    pfs_forget_fd(fd);  // not recorded: no stale binding of this number either
  tls.busy = false;
  errno = saved;
  return r;
}

// Closing descriptor fd of a file opened through the interposer: a close wait
// around call(), and fd unbound whatever the result. Only for a bound fd
// (file_of_fd(fd) != nullptr) while recording.
template <class Call>
auto close_bound(int fd, const void* caller, Call call) -> decltype(call()) {
  tls.busy = true;
  pfs_wait_locker locker;
  int rec = 0;
  {
    errno_keeper keep;
    ensure_thread();
    rec = pfs_start_file_wait(&locker, fd, PFS_FILE_CLOSE, source_of(caller), 0);
  }
  tls.busy = false;
  const auto rc = call();
  const int saved = errno;
  tls.busy = true;
  if (rec != 0)
    pfs_end_file_close_wait(&locker, fd);
  else
    pfs_forget_fd(fd);
  tls.busy = false;
  errno = saved;
  return rc;
}

}  // namespace pfs::preload
