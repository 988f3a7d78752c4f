// Retention of exited processes' regions (internal/region_retention.h).
#include "agent/provider/internal/region_retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "agent/region/region_layout.h"

namespace pfs::detail {
namespace {

// The pattern's text before and after %p; false when it has no %p.
bool split_pattern(const char* pattern, const char** after, std::size_t* before_len) {
  const char* p = std::strstr(pattern, "%p");
  if (p == nullptr) return false;
  *before_len = static_cast<std::size_t>(p - pattern);
  *after = p + 2;
  return true;
}

// Whether name is the pattern with a pid in place of %p.
bool matches(const char* name, const char* pattern, std::size_t before_len, const char* after) {
  if (std::strncmp(name, pattern, before_len) != 0) return false;
  const char* digits = name + before_len;
  const char* d = digits;
  while (*d >= '0' && *d <= '9') ++d;
  return d != digits && std::strcmp(d, after) == 0;
}

// True when a process holds the region's alive lock (region_layout.h kAliveLockByte).
bool provider_alive(int fd) {
  struct flock fl {};
  fl.l_type = F_WRLCK;
  fl.l_whence = SEEK_SET;
  fl.l_start = static_cast<off_t>(layout::kAliveLockByte);
  fl.l_len = 1;
  if (fcntl(fd, F_OFD_GETLK, &fl) != 0) return true;  // cannot tell: keep it
  return fl.l_type != F_UNLCK;
}

std::uint64_t mtime_ns(const struct stat& st) {
  return static_cast<std::uint64_t>(st.st_mtim.tv_sec) * 1000000000ull +
         static_cast<std::uint64_t>(st.st_mtim.tv_nsec);
}

// Removes name if it is still the file (dev, ino) found dead: renamed away first,
// checked, then unlinked; renamed back when another file took the name meanwhile.
bool remove_if_same(int dir_fd, const char* name, dev_t dev, ino_t ino) {
  char tmp[320];
  const int n = std::snprintf(tmp, sizeof(tmp), "%s.%ld.sweep.tmp", name, static_cast<long>(getpid()));
  if (n < 0 || static_cast<std::size_t>(n) >= sizeof(tmp)) return false;
  if (syscall(SYS_renameat2, dir_fd, name, dir_fd, tmp, RENAME_NOREPLACE) != 0) return false;
  struct stat st {};
  const bool same =
      fstatat(dir_fd, tmp, &st, AT_SYMLINK_NOFOLLOW) == 0 && st.st_dev == dev && st.st_ino == ino;
  if (same) {
    const int fd = openat(dir_fd, tmp, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    const bool dead = fd >= 0 && !provider_alive(fd);
    if (fd >= 0) close(fd);
    if (dead) return unlinkat(dir_fd, tmp, 0) == 0;
  }
  syscall(SYS_renameat2, dir_fd, tmp, dir_fd, name, RENAME_NOREPLACE);
  return false;
}

// One dead region found by the listing.
struct candidate {
  char name[256];
  dev_t dev;
  ino_t ino;
  std::uint64_t mtime;
};
constexpr std::size_t kMaxCandidates = 1024;  // static: no allocation in a fork child

}  // namespace

bool parse_keep_duration(const char* text, std::uint64_t* ns) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || errno != 0) return false;
  std::uint64_t unit = 1;
  if (*end == '\0' || std::strcmp(end, "s") == 0)
    unit = 1;
  else if (std::strcmp(end, "min") == 0 || std::strcmp(end, "m") == 0)
    unit = 60;
  else if (std::strcmp(end, "h") == 0)
    unit = 3600;
  else if (std::strcmp(end, "d") == 0)
    unit = 86400;
  else
    return false;
  if (v > ~std::uint64_t{0} / unit / 1000000000ull) return false;
  *ns = v * unit * 1000000000ull;
  return true;
}

std::size_t sweep_exited_regions(int dir_fd, const char* base_pattern, const retention_policy& policy,
                                 std::uint64_t now) {
  static candidate dead[kMaxCandidates];
  const char* after = nullptr;
  std::size_t before_len = 0;
  if (!policy.any() || !split_pattern(base_pattern, &after, &before_len)) return 0;
  const int list_fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (list_fd < 0) return 0;
  DIR* dir = fdopendir(list_fd);  // glibc allocates the DIR: the child handler may (malloc is safe there)
  if (dir == nullptr) {
    close(list_fd);
    return 0;
  }
  std::size_t count = 0;
  while (const dirent* e = readdir(dir)) {
    if (!matches(e->d_name, base_pattern, before_len, after) ||
        std::strlen(e->d_name) >= sizeof(dead[0].name))
      continue;
    const int fd = openat(dir_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    struct stat st {};
    const bool keep = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || provider_alive(fd) ||
                      mtime_ns(st) + kRetentionMinAgeNs > now;
    close(fd);
    if (keep || count == kMaxCandidates) continue;
    candidate& c = dead[count++];
    std::memcpy(c.name, e->d_name, std::strlen(e->d_name) + 1);
    c.dev = st.st_dev;
    c.ino = st.st_ino;
    c.mtime = mtime_ns(st);
  }
  closedir(dir);
  // Newest first (insertion sort: no allocation, and the list is short once bounded).
  for (std::size_t i = 1; i < count; ++i)
    for (std::size_t j = i; j > 0 && dead[j - 1].mtime < dead[j].mtime; --j) {
      candidate t = dead[j];
      dead[j] = dead[j - 1];
      dead[j - 1] = t;
    }
  std::size_t removed = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const bool too_old = policy.keep_ns != 0 && dead[i].mtime + policy.keep_ns <= now;
    const bool too_many = policy.keep_count != 0 && i >= policy.keep_count;
    if ((too_old || too_many) && remove_if_same(dir_fd, dead[i].name, dead[i].dev, dead[i].ino)) ++removed;
  }
  return removed;
}

}  // namespace pfs::detail
