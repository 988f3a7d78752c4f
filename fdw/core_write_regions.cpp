// Writable mappings of regions, one per path, kept across transactions, and the
// error that explains a region the server may read but not write.
#include "fdw/core_write.h"

namespace pfs::fdw::write {

// ---------------------------------------------------------------------------
// Writable mappings, one per region path, kept across transactions.

writable_cache& writables() noexcept {
  static writable_cache regions;
  return regions;
}

static bool same_file(const mapped_region& r) {
  struct stat st {};
  // lstat unless links are followed: a file replaced by a link is opened again, and refused.
  if ((follows_symlinks(r.path) ? stat(r.path.c_str(), &st) : lstat(r.path.c_str(), &st)) != 0) return false;
  return st.st_dev == r.dev && st.st_ino == r.ino && st.st_size == r.size;
}

static std::string user_name(uid_t uid) {
  if (const passwd* p = getpwuid(uid)) return p->pw_name;
  return std::to_string(uid);
}
static std::string group_name(gid_t gid) {
  if (const group* g = getgrgid(gid)) return g->gr_name;
  return std::to_string(gid);
}

// A region this process may read but not write: the error says so, with the file's
// mode, owner and group.
static bool read_only_error(const std::string& path, PfsCoreWriteError* err) {
  if (access(path.c_str(), W_OK) == 0) return false;
  const int write_errno = errno;
  if (write_errno != EACCES && write_errno != EPERM && write_errno != EROFS) return false;
  if (access(path.c_str(), R_OK) != 0) return false;
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return false;
  const std::string message = "region file \"" + path + "\" is read-only";
  if (write_errno == EROFS) {
    write_error(err, kObjectNotInPrerequisiteState, message,
                "The file system that holds the file is mounted read-only.",
                "Put the region on a writable file system to change the setup from SQL.");
    return true;
  }
  char mode[8];
  std::snprintf(mode, sizeof(mode), "%04o", static_cast<unsigned>(st.st_mode & 07777));
  write_error(
      err, kInsufficientPrivilege, message,
      "The file has mode " + std::string(mode) + ", owner " + dq(user_name(st.st_uid)) + " and group " +
          dq(group_name(st.st_gid)) + "; the server runs as user " + dq(user_name(geteuid())) +
          ", which may read it but not write it.",
      "Start the instrumented program with PFS_REGION_MODE=0660 (the default) and a group the server's "
      "operating system user belongs to, or make the file writable for that user.");
  return true;
}

mapped_region* writable_region(const std::string& path, PfsCoreWriteError* err) {
  writable_cache& c = writables();
  auto it = c.find(path);
  if (it != c.end()) {
    // The same file, and still a valid region (a file rewritten in place is not).
    const region_map& m = it->second->reader->region();
    if (same_file(*it->second) && !m.lost() && !region_map::validate(&m.header(), m.size()))
      return it->second.get();
    c.erase(it);
  }
  region_error e;
  auto reader = reader::region_reader::open(path, true, e, follows_symlinks(path));
  if (reader == nullptr) {
    if (e.code == region_errc::permission || e.code == region_errc::io)
      if (read_only_error(path, err)) return nullptr;
    set_error(&err->error, e);
    return nullptr;
  }
  auto r = std::make_unique<mapped_region>();
  struct stat st {};
  if (fstat(reader->region().fd(), &st) == 0) {
    r->dev = st.st_dev;
    r->ino = st.st_ino;
    r->size = st.st_size;
  }
  r->reader = std::move(reader);
  r->path = path;
  mapped_region* out = r.get();
  c.emplace(path, std::move(r));
  return out;
}

}  // namespace pfs::fdw::write
