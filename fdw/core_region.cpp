// The per-backend cache of mapped regions, keyed by foreign server. A region is
// mapped once and kept, so scans do not map the file again every time; it is mapped
// again when the server's path changes or the file at that path is not the one
// mapped any more (device, inode, size or modification time differ: the provider
// was restarted, the file replaced or truncated).
#include <sys/stat.h>

#include <cstdint>
#include <unordered_map>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

using region_cache = std::unordered_map<std::uint32_t, std::unique_ptr<PfsCoreRegion>>;

// Backends are single-threaded: no locking.
region_cache& cache() noexcept {
  static region_cache regions;
  return regions;
}

void set_identity(PfsCoreRegion& r, const struct stat& st) noexcept {
  r.dev = st.st_dev;
  r.ino = st.st_ino;
  r.size = st.st_size;
  r.mtime = st.st_mtim;
}

// True when path still names the file r maps, unchanged.
bool same_file(const PfsCoreRegion& r, const char* path) noexcept {
  struct stat st {};
  if (r.path != path || r.reader->region().lost() || stat(path, &st) != 0) return false;
  return st.st_dev == r.dev && st.st_ino == r.ino && st.st_size == r.size &&
         st.st_mtim.tv_sec == r.mtime.tv_sec && st.st_mtim.tv_nsec == r.mtime.tv_nsec;
}

std::unique_ptr<PfsCoreRegion> open_region(const char* path, PfsCoreError* err) {
  region_error e;
  auto reader = reader::region_reader::open(path, false, e);
  if (reader == nullptr) {
    set_error(err, e);
    return nullptr;
  }
  auto r = std::make_unique<PfsCoreRegion>();
  // The identity of the file actually mapped (it may have been replaced since path
  // was resolved by the open).
  struct stat st {};
  if (fstat(reader->region().fd(), &st) == 0) set_identity(*r, st);
  r->reader = std::move(reader);
  r->path = path;
  return r;
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
  return guarded(err, static_cast<PfsCoreRegion*>(nullptr), [&]() -> PfsCoreRegion* {
    region_cache& c = cache();
    auto it = c.find(key);
    if (it != c.end()) {
      if (same_file(*it->second, path)) return it->second.get();
      c.erase(it);  // unmaps the old file
    }
    std::unique_ptr<PfsCoreRegion> r = open_region(path, err);
    if (r == nullptr) return nullptr;
    PfsCoreRegion* out = r.get();
    c.emplace(key, std::move(r));
    return out;
  });
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

void pfs_core_region_forget_all(void) noexcept { pfs::fdw::cache().clear(); }

int pfs_core_region_cached(void) noexcept { return static_cast<int>(pfs::fdw::cache().size()); }

double pfs_core_estimated_rows(const PfsCoreRegion* region, int table) noexcept {
  const pfs::reader::table_def* t = pfs::fdw::table_at(table);
  if (region == nullptr || t == nullptr) return 0;
  return static_cast<double>(region->reader->expected_rows(*t));
}

}  // extern "C"
