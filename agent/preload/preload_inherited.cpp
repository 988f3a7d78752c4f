// Descriptors the program inherited (issue 40): `prog > out.txt` opens out.txt in the
// shell, so the program never calls open for it. At start-up, once, every inherited
// descriptor that is a regular file is bound to its file by the name the kernel
// gives it (/proc/self/fd/N), in the program's file class
// (wait/io/file/<program>/file), with no wait: its reads and writes are then
// recorded as those of a file the program opened. System calls only (no malloc, no
// stdio): this runs in the interposer's constructor. Sockets are found on their
// first io (socket_wait_start); pipes, terminals and devices are not files.
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "agent/preload/preload_real.h"

namespace pfs::preload {
namespace {

struct linux_dirent64 {
  std::uint64_t d_ino;
  std::int64_t d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[1];
};

// The program's own file class: the one its open calls get (file_class of a caller
// in the main program).
pfs_key program_file_class() {
  char module[64];
  const char* program = ::program_invocation_name != nullptr ? ::program_invocation_name : "program";
  sanitize_module(program, module, sizeof(module));
  return register_class(kKindFile, module[0] != '\0' ? module : "program", "file");
}

void bind_if_file(int fd, pfs_key& key) {
  struct stat st;
  if (syscall(SYS_fstat, fd, &st) != 0 || !S_ISREG(st.st_mode)) return;
  char link[32];
  std::snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
  char name[layout::kObjectNameLen];
  const long n = syscall(SYS_readlinkat, AT_FDCWD, link, name, sizeof(name) - 1);
  if (n <= 0 || name[0] != '/') return;
  name[n] = '\0';
  constexpr const char kDeleted[] = " (deleted)";
  const std::size_t len = static_cast<std::size_t>(n);
  if (len > sizeof(kDeleted) - 1 && std::strcmp(name + len - (sizeof(kDeleted) - 1), kDeleted) == 0) return;
  if (key == 0) key = program_file_class();
  bind_inherited_file(key, fd, name);
}

}  // namespace

void bind_inherited_files() {
  busy_scope busy;
  const int saved = errno;
  const int dir =
      static_cast<int>(syscall(SYS_openat, AT_FDCWD, "/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  if (dir < 0) {
    errno = saved;
    return;
  }
  pfs_key key = 0;
  alignas(8) char buf[4096];
  for (;;) {
    const long got = syscall(SYS_getdents64, dir, buf, sizeof(buf));
    if (got <= 0) break;
    for (long at = 0; at < got;) {
      const auto* d = reinterpret_cast<const linux_dirent64*>(buf + at);
      at += d->d_reclen;
      int fd = 0;
      bool number = d->d_name[0] != '\0';
      for (const char* p = d->d_name; *p != '\0'; ++p) {
        if (*p < '0' || *p > '9') number = false;
        fd = fd * 10 + (*p - '0');
      }
      if (!number || fd == dir || fd == g_region_fd) continue;
      bind_if_file(fd, key);
    }
  }
  syscall(SYS_close, dir);
  errno = saved;
}

}  // namespace pfs::preload
