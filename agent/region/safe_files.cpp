#include "agent/region/safe_files.h"

#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

namespace pfs::safe_files {
namespace {

constexpr int kSuffixLen = 8;
constexpr char kTmp[] = ".tmp.";

const char* unsafe_stat(const struct stat& st, bool must_own) {
  if (S_ISLNK(st.st_mode)) return "it is a symbolic link";
  if (!S_ISREG(st.st_mode)) return "it is not a regular file";
  const bool ours = st.st_uid == geteuid();
  if (st.st_nlink > 1 && (must_own || !ours)) return "it is a hard link of another file";
  if (must_own && !ours) return "it belongs to another user";
  return nullptr;
}

// Random bytes from the kernel; if it has none to give, a mix of the time and
// the pid (O_EXCL still makes creation safe, the name is only less unpredictable).
void random_bytes(unsigned char* out, std::size_t n) {
  if (getrandom(out, n, GRND_NONBLOCK) == static_cast<ssize_t>(n)) return;
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  std::uint64_t x = static_cast<std::uint64_t>(ts.tv_nsec) ^ (static_cast<std::uint64_t>(ts.tv_sec) << 30) ^
                    (static_cast<std::uint64_t>(getpid()) << 17);
  for (std::size_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    out[i] = static_cast<unsigned char>(x >> 56);
  }
}

}  // namespace

const char* split_path(const char* path, char* dir, std::size_t dir_cap) {
  const char* slash = std::strrchr(path, '/');
  const char* base = slash == nullptr ? path : slash + 1;
  if (*base == '\0') return nullptr;
  std::size_t n = slash == nullptr ? 0 : static_cast<std::size_t>(slash - path);
  const char* from = path;
  if (slash == nullptr) {
    from = ".";
    n = 1;
  } else if (n == 0) {
    from = "/";
    n = 1;
  }
  if (n + 1 > dir_cap) return nullptr;
  std::memcpy(dir, from, n);
  dir[n] = '\0';
  return base;
}

int open_directory(const char* dir) { return open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC); }

const char* unsafe_directory(int dir_fd, bool allow_unsafe) {
  if (allow_unsafe) return nullptr;
  struct stat st {};
  if (fstat(dir_fd, &st) != 0) return "it cannot be examined";
  // Anyone who can write there can rename or remove what the agent made.
  if ((st.st_mode & S_IWOTH) != 0 && (st.st_mode & S_ISVTX) == 0)
    return "it is writable by other users and has no sticky bit";
  if (st.st_uid != 0 && st.st_uid != geteuid()) return "it belongs to another user";
  return nullptr;
}

const char* unsafe_destination(int dir_fd, const char* name, bool must_own) {
  struct stat st {};
  if (fstatat(dir_fd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) return nullptr;  // absent
  return unsafe_stat(st, must_own);
}

const char* unsafe_open_file(int fd, bool must_own) {
  struct stat st {};
  if (fstat(fd, &st) != 0) return "it cannot be examined";
  return unsafe_stat(st, must_own);
}

int create_unique(int dir_fd, const char* base, int flags, char* out, std::size_t out_cap) {
  const std::size_t len = std::strlen(base);
  if (len + sizeof(kTmp) - 1 + kSuffixLen + 1 > out_cap) {
    errno = ENAMETOOLONG;
    return -1;
  }
  static constexpr char kChars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
  std::memcpy(out, base, len);
  std::memcpy(out + len, kTmp, sizeof(kTmp) - 1);
  char* suffix = out + len + sizeof(kTmp) - 1;
  for (int attempt = 0; attempt < 100; ++attempt) {
    unsigned char r[kSuffixLen];
    random_bytes(r, sizeof(r));
    for (int i = 0; i < kSuffixLen; ++i) suffix[i] = kChars[r[i] % (sizeof(kChars) - 1)];
    suffix[kSuffixLen] = '\0';
    const int fd = openat(dir_fd, out, (flags & O_ACCMODE) | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0 || errno != EEXIST) return fd;
  }
  errno = EEXIST;
  return -1;
}

bool is_temporary_name(const char* name) {
  const std::size_t n = std::strlen(name);
  if (n >= 4 && std::strcmp(name + n - 4, ".tmp") == 0) return true;
  const std::size_t tail = sizeof(kTmp) - 1 + kSuffixLen;
  if (n <= tail || std::strncmp(name + n - tail, kTmp, sizeof(kTmp) - 1) != 0) return false;
  for (const char* p = name + n - kSuffixLen; *p != '\0'; ++p)
    if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9'))) return false;
  return true;
}

}  // namespace pfs::safe_files
