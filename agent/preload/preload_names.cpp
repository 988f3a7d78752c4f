// File names as a person reads them: a file opened relative to the working
// directory or to a directory descriptor (openat(dirfd, "etc", ...), as glibc's
// name-service modules do) is recorded under its absolute name, so that /lib and
// /usr/lib are two instances, not one named "lib". System calls only (no malloc,
// no stdio): this runs inside the interposer, at open time.
#include <fcntl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "agent/preload/preload_io.h"

namespace pfs::preload {

const char* absolute_name(int dirfd, const char* path, char (&buf)[layout::kObjectNameLen]) {
  if (path == nullptr || path[0] == '/' || path[0] == '\0') return path;
  long n = 0;
  if (dirfd == AT_FDCWD) {
    // The system call returns the length with its NUL; a directory that is no
    // longer reachable starts with "(unreachable)".
    n = syscall(SYS_getcwd, buf, sizeof(buf));
    if (n <= 1 || buf[0] != '/') return path;
    --n;
  } else {
    char link[32];
    std::snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
    n = syscall(SYS_readlinkat, AT_FDCWD, link, buf, sizeof(buf) - 1);
    if (n <= 0 || buf[0] != '/') return path;  // no /proc, or not a directory's name
  }
  // "./x" is "x"; "." alone is the directory itself.
  while (path[0] == '.' && path[1] == '/') {
    path += 2;
    while (*path == '/') ++path;
  }
  if (path[0] == '.' && path[1] == '\0') ++path;
  std::size_t len = static_cast<std::size_t>(n);
  const std::size_t rest = std::strlen(path);
  const bool slash = len > 1 && rest > 0;  // the root is "/" already
  if (len + (slash ? 1 : 0) + rest >= sizeof(buf)) return path;
  if (slash) buf[len++] = '/';
  std::memcpy(buf + len, path, rest + 1);
  return buf;
}

}  // namespace pfs::preload
