// Retention of exited processes' regions (internal/region_retention.h).
#include "agent/provider/internal/region_retention.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/mman.h>
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

// The mtimes of the newest exited regions seen so far, at most cap of them: a
// min-heap (the oldest of them at [0]) in memory mapped for one sweep (no
// allocation: it runs in a fork child handler).
class newest_mtimes {
 public:
  explicit newest_mtimes(std::uint32_t cap) : cap_(cap) {
    if (cap_ == 0) return;
    // Reserved as it fills (a large PFS_REGION_KEEP_COUNT under strict overcommit);
    // if even that fails, the sweep removes by age only this time.
    void* p =
        mmap(nullptr, bytes(), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) heap_ = static_cast<std::uint64_t*>(p);
  }
  ~newest_mtimes() {
    if (heap_ != nullptr) munmap(heap_, bytes());
  }
  newest_mtimes(const newest_mtimes&) = delete;
  newest_mtimes& operator=(const newest_mtimes&) = delete;

  bool ok() const { return heap_ != nullptr; }
  void add(std::uint64_t mtime) {
    if (n_ < cap_) {  // sift up
      std::size_t i = n_++;
      for (; i > 0 && heap_[(i - 1) / 2] > mtime; i = (i - 1) / 2) heap_[i] = heap_[(i - 1) / 2];
      heap_[i] = mtime;
    } else if (mtime > heap_[0]) {  // replaces the oldest kept; sift down
      std::size_t i = 0;
      for (;;) {
        std::size_t c = 2 * i + 1;
        if (c >= n_) break;
        if (c + 1 < n_ && heap_[c + 1] < heap_[c]) ++c;
        if (heap_[c] >= mtime) break;
        heap_[i] = heap_[c];
        i = c;
      }
      heap_[i] = mtime;
    }
  }
  // Regions changed before this are beyond the cap newest; 0 while fewer were seen.
  std::uint64_t cutoff() const { return n_ == cap_ && n_ != 0 ? heap_[0] : 0; }

 private:
  std::size_t bytes() const { return std::size_t{cap_} * sizeof(std::uint64_t); }
  std::uint32_t cap_;
  std::size_t n_ = 0;
  std::uint64_t* heap_ = nullptr;
};

// f(name, stat) for each file of the listing that matches the pattern, is old
// enough to be considered (kRetentionMinAgeNs), is wanted(stat), and is an
// exited region (no alive lock): the lock is looked at only for the wanted.
template <class W, class F>
void each_exited_region(DIR* dir, int dir_fd, const char* pattern, std::size_t before_len, const char* after,
                        std::uint64_t now, W&& wanted, F&& f) {
  rewinddir(dir);
  while (const dirent* e = readdir(dir)) {
    if (!matches(e->d_name, pattern, before_len, after)) continue;
    struct stat st {};
    // The young first, without opening them: most of a busy directory.
    if (fstatat(dir_fd, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode) ||
        mtime_ns(st) + kRetentionMinAgeNs > now || !wanted(st))
      continue;
    const int fd = openat(dir_fd, e->d_name, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
    if (fd < 0) continue;
    const bool alive = fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || provider_alive(fd);
    close(fd);
    if (!alive) f(e->d_name, st);
  }
}

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
  const auto too_old = [&](std::uint64_t mtime) {
    return policy.keep_ns != 0 && mtime + policy.keep_ns <= now;
  };
  // First pass: the keep_count newest of the exited regions that age keeps, whose
  // oldest is the cutoff. However many the directory holds: a server that forks
  // faster than the sweeps (one a second) ran is brought back to keep_count.
  std::uint64_t cutoff = 0;
  if (policy.keep_count != 0) {
    newest_mtimes newest(policy.keep_count);
    if (newest.ok())
      each_exited_region(
          dir, dir_fd, base_pattern, before_len, after, now,
          [&](const struct stat& st) { return !too_old(mtime_ns(st)); },
          [&](const char*, const struct stat& st) { newest.add(mtime_ns(st)); });
    cutoff = newest.cutoff();
  }
  if (cutoff == 0 && policy.keep_ns == 0) {  // fewer than keep_count, and no age limit
    closedir(dir);
    return 0;
  }
  // Second pass: the expired and those older than the cutoff go (a region changed
  // at the cutoff itself stays: ties keep a few more than keep_count).
  std::size_t removed = 0;
  const auto goes = [&](const struct stat& st) { return too_old(mtime_ns(st)) || mtime_ns(st) < cutoff; };
  each_exited_region(dir, dir_fd, base_pattern, before_len, after, now, goes,
                     [&](const char* name, const struct stat& st) {
                       if (goes(st) && remove_if_same(dir_fd, name, st.st_dev, st.st_ino)) ++removed;
                     });
  closedir(dir);
  return removed;
}

}  // namespace pfs::detail
