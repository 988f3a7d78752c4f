// The per-backend cache of what each foreign server reads, keyed by server: one
// region file (option "region") or every region file of a directory (option
// "region_directory"). A one-file server's region is mapped once and kept, so scans
// do not map the file again every time; it is mapped again when the file at that
// path is not the one mapped any more (device, inode, size or modification time
// differ: the provider was restarted, the file replaced or truncated). A directory
// is listed again in every transaction (a few microseconds per file): files that
// appeared are mapped, files that are gone are dropped, and a file that is not a
// readable region becomes a damaged member that scans skip with a warning. Its
// mappings are kept by the mapping pool (core_mappings.cpp), at most a limit of
// them: a member unchanged since its mapping was let go keeps what was read of it
// (process, program) and is mapped again when a scan reaches it. Both kinds are
// looked at once per transaction, a one-file server's file at most once per
// recheck interval (get).
#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <unordered_map>

#include "agent/region/safe_files.h"
#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

using region_cache = std::unordered_map<std::uint32_t, std::unique_ptr<PfsCoreRegion>>;

// Backends are single-threaded: no locking.
region_cache& cache() noexcept {
  static region_cache regions;
  return regions;
}

// A file's identity as fstat or lstat gave it (device, inode, size, modification
// time), kept in a mapping (mapped_region) or in a directory's member as listed.
template <class Kept>
void set_identity(Kept& r, const struct stat& st) noexcept {
  r.dev = st.st_dev;
  r.ino = st.st_ino;
  r.size = st.st_size;
  r.mtime = st.st_mtim;
}

template <class Kept>
bool same_identity(const Kept& r, const struct stat& st) noexcept {
  return st.st_dev == r.dev && st.st_ino == r.ino && st.st_size == r.size &&
         st.st_mtim.tv_sec == r.mtime.tv_sec && st.st_mtim.tv_nsec == r.mtime.tv_nsec;
}

// True when path still names the file r maps, unchanged.
bool same_file(const mapped_region& r, const std::string& path) noexcept {
  struct stat st {};
  // lstat unless links are followed: a file replaced by a link is opened again, and refused.
  if (r.path != path || r.reader->region().lost() ||
      (follows_symlinks(path) ? stat(path.c_str(), &st) : lstat(path.c_str(), &st)) != 0)
    return false;
  return same_identity(r, st);
}

}  // namespace

std::shared_ptr<mapped_region> open_region(const std::string& path, region_error& e) {
  auto reader = reader::region_reader::open(path, false, e, follows_symlinks(path));
  if (reader == nullptr) return nullptr;
  // same_file checks the file's identity and size at each transaction's first use,
  // before its scans: the reader's own fstat at every scan would repeat it.
  reader->check_size_at_each_scan(false);
  auto r = std::make_shared<mapped_region>();
  // The identity of the file actually mapped (it may have been replaced since path
  // was resolved by the open).
  struct stat st {};
  if (fstat(reader->region().fd(), &st) == 0) set_identity(*r, st);
  // A directory may hold thousands of exited processes' regions, all kept mapped:
  // not their descriptors.
  reader->close_file_if_provider_exited();
  r->reader = std::move(reader);
  r->path = path;
  return r;
}

namespace {

// A program name as text: printable ASCII kept, anything else '?', so that any
// database encoding can show it.
std::string printable(std::string_view s) {
  std::string out(s);
  for (char& ch : out)
    if (static_cast<unsigned char>(ch) < 0x20 || static_cast<unsigned char>(ch) > 0x7e) ch = '?';
  return out;
}

// The writer's name: from the header, or (a region of an older agent) from /proc
// while that process runs.
std::string program_of(const region_map& m, std::int64_t pid) {
  const char* p = m.header().program;
  const std::size_t n = ::strnlen(p, layout::kProgramLen);
  if (n != 0 && n < layout::kProgramLen) return printable(std::string_view(p, n));
  if (pid <= 0 || !m.provider_alive()) return {};
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%lld/comm", static_cast<long long>(pid));
  std::FILE* f = std::fopen(path, "re");
  if (f == nullptr) return {};
  char comm[64] = {};
  const bool ok = std::fgets(comm, sizeof(comm), f) != nullptr;
  std::fclose(f);
  if (!ok) return {};
  std::string_view c(comm);
  if (!c.empty() && c.back() == '\n') c.remove_suffix(1);
  return printable(c);
}

region_member member_of(std::shared_ptr<mapped_region> r) {
  region_member m;
  m.file = r->path;
  const region_map& map = r->reader->region();
  m.pid = static_cast<std::int64_t>(layout::load_relaxed(map.header().pid));
  m.program = program_of(map, m.pid);
  m.region = std::move(r);
  return m;
}

// The writer of a member whose mapping is kept: the header's pid and program may
// have been written since. No new strings while both are unchanged (a monitoring
// query's transaction looks its region up once).
void refresh_writer(region_member& m) {
  const region_map& map = m.region->reader->region();
  const auto pid = static_cast<std::int64_t>(layout::load_relaxed(map.header().pid));
  const char* p = map.header().program;
  const std::size_t n = ::strnlen(p, layout::kProgramLen);
  if (pid == m.pid && n != 0 && n < layout::kProgramLen && m.program.size() == n &&
      std::equal(m.program.begin(), m.program.end(), p, [](char kept, char now) {
        const auto c = static_cast<unsigned char>(now);
        return kept == (c < 0x20 || c > 0x7e ? '?' : now);
      }))
    return;
  m.pid = pid;
  m.program = program_of(map, pid);
}

region_member damaged_member(const std::string& file, const region_error& e) {
  region_member m;
  m.file = file;
  m.damaged = true;
  PfsCoreError why{};
  set_error(&why, e);
  m.damage = skip_warning(file, why);
  return m;
}

// A file of a region directory that is not taken for a region: hidden files, and
// the copies the agent builds before it renames them to a region's name.
bool skipped_name(const char* name) {
  return name[0] == '\0' || name[0] == '.' || safe_files::is_temporary_name(name);
}

region_error refused_link(const std::string& file, bool symlink) {
  region_error e = symlink ? symbolic_link_refused(file) : region_error{};
  if (!symlink) {
    e.code = region_errc::unsafe;
    e.message = "region file \"" + file + "\" is a hard link";
    e.detail = "It has more than one link: another name of it may be in a directory others write to.";
    e.hint =
        "Let the instrumented program create the file in this directory, or allow links with the "
        "server option follow_symlinks 'true'.";
  } else {
    e.hint =
        "Let the instrumented program create the file in this directory, or allow symbolic links with "
        "the server option follow_symlinks 'true'.";
  }
  return e;
}

}  // namespace

bool list_region_files(const std::string& dir, std::vector<std::string>& files, PfsCoreError* err,
                       std::vector<std::pair<std::string, region_error>>* refused,
                       std::vector<struct stat>* stats) {
  DIR* d = opendir(dir.c_str());
  if (d == nullptr) {
    const int e = errno;
    struct stat st {};
    if (e == ENOTDIR || (stat(dir.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))) {
      set_error(
          err, PFS_CORE_WRONG_TYPE, "region directory \"" + dir + "\" is not a directory", "",
          "Set region_directory to the directory that holds the region files (the directory of PFS_REGION).");
    } else if (e == ENOENT) {
      set_error(
          err, PFS_CORE_FILE_NOT_FOUND, "region directory \"" + dir + "\" does not exist", "",
          "Create it, or set region_directory to the directory of the instrumented programs' PFS_REGION.");
    } else {
      set_error(err, e == EACCES ? PFS_CORE_PERMISSION : PFS_CORE_IO,
                "could not open region directory \"" + dir + "\": " + std::strerror(e));
    }
    return false;
  }
  const bool follow = follows_symlinks(dir);
  std::vector<std::pair<std::string, struct stat>> found;
  while (const dirent* entry = readdir(d)) {
    if (skipped_name(entry->d_name)) continue;
    std::string file = dir;
    if (file.back() != '/') file += '/';
    file += entry->d_name;
    struct stat st {};
    if (lstat(file.c_str(), &st) != 0) continue;  // gone
    if (!follow && (S_ISLNK(st.st_mode) || (S_ISREG(st.st_mode) && st.st_nlink > 1))) {
      if (refused != nullptr) refused->emplace_back(file, refused_link(file, S_ISLNK(st.st_mode)));
      continue;
    }
    if (S_ISLNK(st.st_mode) && stat(file.c_str(), &st) != 0) continue;  // a dangling link
    if (!S_ISREG(st.st_mode)) continue;                                 // not a file
    found.emplace_back(std::move(file), st);
  }
  closedir(d);
  std::sort(found.begin(), found.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  files.reserve(files.size() + found.size());
  if (stats != nullptr) stats->reserve(stats->size() + found.size());
  for (auto& [file, st] : found) {
    files.push_back(std::move(file));
    if (stats != nullptr) stats->push_back(st);
  }
  if (refused != nullptr)
    std::sort(refused->begin(), refused->end(),
              [](const auto& a, const auto& b) { return a.first < b.first; });
  return true;
}

namespace {

// A directory's member for a file as listed now (st): its kept mapping while the
// file is unchanged; the process and program read before while the file is
// unchanged and its mapping was let go (mapped again by the scan that reaches it);
// else the file mapped now, to learn its process or that it is damaged.
region_member listed_member(const std::string& file, const struct stat& st, region_member* before) {
  if (std::shared_ptr<mapped_region> kept = kept_mapping(file, false)) {
    if (same_identity(*kept, st) && !kept->reader->region().lost()) {
      region_member m;
      if (before != nullptr && !before->damaged) {
        m = std::move(*before);
        m.region = kept;
        refresh_writer(m);
        m.region = nullptr;
      } else {
        m = member_of(std::move(kept));
        m.region = nullptr;
      }
      set_identity(m, st);
      return m;
    }
    drop_mapping(file);
  }
  if (before != nullptr && !before->damaged && same_identity(*before, st)) return std::move(*before);
  region_error e;
  std::shared_ptr<mapped_region> opened = open_region(file, e);
  region_member m;
  if (opened != nullptr) {
    keep_mapping(opened);
    m = member_of(std::move(opened));
    m.region = nullptr;
  } else if (e.code != region_errc::not_found) {  // removed since it was listed
    m = damaged_member(file, e);
  } else {
    m.file.clear();  // gone: left out
    return m;
  }
  set_identity(m, st);
  return m;
}

// A directory's modification time changes whenever a file is created, renamed or
// removed in it, which is how the agent makes and replaces regions (a temporary
// file renamed). The time comes from a clock that advances in ticks, so a change in
// the same tick as the one before can leave it as it was: a listing is kept only if
// the directory's time was older than this when it was listed.
constexpr std::int64_t kDirectoryTimeMarginNs = 100'000'000;

std::int64_t ns_of(const timespec& t) noexcept {
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

// True when the members listed last still stand (the directory unchanged since a
// listing that may be kept): the files of live regions checked as before and their
// writers looked at again; the regions of exited processes (their files closed)
// not looked at: a new process makes a new file. A kept mapping that faulted, or a
// damaged member (a file that may have been completed since), asks for a new
// listing.
bool listing_still_stands(PfsCoreRegion& r, const struct stat& dir) {
  if (!r.listing_reusable || dir.st_dev != r.dir_dev || dir.st_ino != r.dir_ino ||
      ns_of(dir.st_mtim) != ns_of(r.dir_mtime))
    return false;
  for (region_member& m : r.members) {
    if (m.damaged) return false;
    std::shared_ptr<mapped_region> kept = kept_mapping(m.file, false);
    if (kept == nullptr) continue;  // mapped again when a scan reaches it
    if (kept->reader->region().lost()) return false;
    if (kept->reader->region().fd() < 0) continue;  // an exited process's: nothing new
    if (!same_file(*kept, m.file)) return false;
    m.region = std::move(kept);
    refresh_writer(m);
    m.region = nullptr;
  }
  return true;
}

// The members of a directory now: unchanged files keep their mapping, or what was
// read of them.
bool refresh_directory(PfsCoreRegion& r, PfsCoreError* err) {
  struct stat dir {};
  const bool dir_known = stat(r.path.c_str(), &dir) == 0;
  if (dir_known && listing_still_stands(r, dir)) return true;
  r.listing_reusable = false;
  std::vector<std::string> files;
  std::vector<struct stat> stats;
  std::vector<std::pair<std::string, region_error>> refused;
  if (!list_region_files(r.path, files, err, &refused, &stats)) return false;
  std::unordered_map<std::string, region_member*> before;
  before.reserve(r.members.size());
  for (region_member& m : r.members) before.emplace(m.file, &m);
  std::vector<region_member> members;
  members.reserve(files.size() + refused.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    auto it = before.find(files[i]);
    region_member m = listed_member(files[i], stats[i], it != before.end() ? it->second : nullptr);
    if (!m.file.empty()) members.push_back(std::move(m));
  }
  if (!refused.empty()) {
    for (const auto& [file, why] : refused) members.push_back(damaged_member(file, why));
    std::stable_sort(members.begin(), members.end(),
                     [](const region_member& a, const region_member& b) { return a.file < b.file; });
  }
  r.members = std::move(members);
  timespec now{};
  if (dir_known && clock_gettime(CLOCK_REALTIME, &now) == 0) {
    r.dir_dev = dir.st_dev;
    r.dir_ino = dir.st_ino;
    r.dir_mtime = dir.st_mtim;
    r.listing_reusable = ns_of(now) - ns_of(dir.st_mtim) > kDirectoryTimeMarginNs;
  }
  return true;
}

// The member of a one-file server: the cached mapping while the file is unchanged.
bool refresh_file(PfsCoreRegion& r, PfsCoreError* err) {
  if (r.members.size() == 1 && r.members[0].region != nullptr && same_file(*r.members[0].region, r.path)) {
    refresh_writer(r.members[0]);
    return true;
  }
  r.members.clear();
  region_error e;
  std::shared_ptr<mapped_region> opened = open_region(r.path, e);
  if (opened == nullptr) {
    set_error(err, e);
    return false;
  }
  r.members.push_back(member_of(std::move(opened)));
  return true;
}

bool any_lost(const PfsCoreRegion& r) noexcept {
  for (const region_member& m : r.members)
    if (m.region != nullptr && m.region->reader->region().lost()) return true;
  return false;
}

// A server's region, its files checked (and its directory listed) once per
// transaction: a monitoring query is a few scans in one transaction, each of
// which asked for the region again. A transaction keeps the files it first saw; a
// program restarted meanwhile is seen by the next transaction, or for a one-file
// server by the first one that starts kRecheckIntervalNs after the last check (a
// lstat is a microsecond on a virtual machine, a small query's transaction some
// 60). A file shrunk meanwhile is seen at once (its mapping faulted: lost).
PfsCoreRegion* get(std::uint32_t key, const char* path, bool directory, PfsCoreError* err) {
  region_cache& c = cache();
  auto it = c.find(key);
  if (it != c.end() && (it->second->path != path || it->second->directory != directory)) {
    c.erase(it);  // unmaps the old files
    it = c.end();
  }
  if (it == c.end()) {
    auto r = std::make_unique<PfsCoreRegion>();
    r->path = path;
    r->directory = directory;
    it = c.emplace(key, std::move(r)).first;
  }
  PfsCoreRegion& r = *it->second;
  if (r.checked_in == transaction_number() && !any_lost(r)) return &r;
  const std::int64_t now = transaction_clock_ns();
  if (!directory && r.checked_in != 0 && checked_within_interval(now, r.checked_at_ns) && !any_lost(r) &&
      r.members.size() == 1 && r.members[0].region != nullptr) {
    // The file was checked within the interval: only its writer is read again.
    refresh_writer(r.members[0]);
    r.checked_in = transaction_number();
    return &r;
  }
  if (!(directory ? refresh_directory(r, err) : refresh_file(r, err))) {
    c.erase(it);
    return nullptr;
  }
  r.checked_in = transaction_number();
  r.checked_at_ns = now;
  return &r;
}

}  // namespace
}  // namespace pfs::fdw

extern "C" {

PfsCoreRegion* pfs_core_region_get(std::uint32_t key, const char* path, PfsCoreError* err) noexcept {
  using namespace pfs::fdw;
  clear_error(err);
  if (path == nullptr) {
    set_error(err, PFS_CORE_INTERNAL, "no region path given");
    return nullptr;
  }
  return guarded(err, static_cast<PfsCoreRegion*>(nullptr), [&] { return get(key, path, false, err); });
}

PfsCoreRegion* pfs_core_region_directory_get(std::uint32_t key, const char* path,
                                             PfsCoreError* err) noexcept {
  using namespace pfs::fdw;
  clear_error(err);
  if (path == nullptr) {
    set_error(err, PFS_CORE_INTERNAL, "no region directory given");
    return nullptr;
  }
  return guarded(err, static_cast<PfsCoreRegion*>(nullptr), [&] { return get(key, path, true, err); });
}

bool pfs_core_check_region_path(const char* path, PfsCoreError* err) noexcept {
  using namespace pfs::fdw;
  clear_error(err);
  return guarded(err, false, [&] {
    struct stat st {};
    if (path == nullptr || stat(path, &st) != 0 || S_ISREG(st.st_mode)) return true;
    set_error(err, pfs::not_a_regular_file(path, st.st_mode));
    return false;
  });
}

bool pfs_core_check_region_directory(const char* path, PfsCoreError* err) noexcept {
  using namespace pfs::fdw;
  clear_error(err);
  return guarded(err, false, [&] {
    struct stat st {};
    if (path == nullptr || stat(path, &st) != 0 || S_ISDIR(st.st_mode)) return true;
    set_error(
        err, PFS_CORE_WRONG_TYPE, "region directory \"" + std::string(path) + "\" is not a directory", "",
        "Set region_directory to the directory that holds the region files, or use the option region for "
        "one file.");
    return false;
  });
}

void pfs_core_region_forget_all(void) noexcept {
  pfs::fdw::cache().clear();
  pfs::fdw::drop_all_mappings();
}

int pfs_core_region_cached(void) noexcept {
  int n = static_cast<int>(pfs::fdw::kept_mapping_count());
  for (const auto& [key, r] : pfs::fdw::cache())
    for (const pfs::fdw::region_member& m : r->members) n += m.region != nullptr;
  return n;
}

int pfs_core_region_count(const PfsCoreRegion* region) noexcept {
  return region != nullptr ? static_cast<int>(region->members.size()) : 0;
}

bool pfs_core_region_damage(const PfsCoreRegion* region, int member, PfsCoreError* err) noexcept {
  pfs::fdw::clear_error(err);
  if (region == nullptr || member < 0 || static_cast<std::size_t>(member) >= region->members.size())
    return false;
  const pfs::fdw::region_member& m = region->members[static_cast<std::size_t>(member)];
  if (!m.damaged) return false;
  *err = m.damage;
  return true;
}

double pfs_core_estimated_rows(const PfsCoreRegion* region, int table) noexcept {
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (region == nullptr || t == nullptr) return 0;
  // A member whose mapping was let go counts as the mapped ones on average (its
  // rows are not worth a mapping to the planner).
  double rows = 0, mapped_rows = 0;
  std::size_t mapped = 0, unmapped = 0;
  for (const pfs::fdw::region_member& m : region->members) {
    std::shared_ptr<pfs::fdw::mapped_region> r = m.region;
    if (r == nullptr && !m.damaged) r = pfs::fdw::kept_mapping(m.file, false);
    if (r != nullptr) {
      mapped_rows += static_cast<double>(r->reader->expected_rows(*t));
      ++mapped;
    } else if (m.damaged) {
      rows += 1;
    } else {
      ++unmapped;
    }
  }
  rows += mapped_rows;
  if (unmapped != 0)
    rows += static_cast<double>(unmapped) * (mapped != 0 ? mapped_rows / static_cast<double>(mapped) : 1);
  return rows;
}

}  // extern "C"
