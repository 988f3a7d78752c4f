// The mappings of region directories' files a backend keeps between scans: at most
// a limit of them (pfs_core_set_max_mapped_regions), the least recently read
// unmapped first. Every mapping holds a descriptor, a VMA and a slot of the SIGBUS
// guard (fault_guard::kMaxMappings per process), so a directory of 10,000 regions
// cannot keep them all: beyond the limit a scan maps a file when it reaches it and
// lets it go after. A mapping a scan still holds is unmapped when the scan lets go.
#include <cstddef>
#include <list>
#include <memory>
#include <string>
#include <unordered_map>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

struct mapping_pool {
  std::list<std::shared_ptr<mapped_region>> recent;  // front: the most recently read
  std::unordered_map<std::string, std::list<std::shared_ptr<mapped_region>>::iterator> by_path;
  std::size_t limit = kDefaultMappedRegions;

  void trim() {
    while (recent.size() > limit) {
      by_path.erase(recent.back()->path);
      recent.pop_back();
    }
  }
};

// Backends are single-threaded: no locking.
mapping_pool& pool() noexcept {
  static mapping_pool p;
  return p;
}

}  // namespace

std::shared_ptr<mapped_region> kept_mapping(const std::string& path, bool read) {
  mapping_pool& p = pool();
  auto it = p.by_path.find(path);
  if (it == p.by_path.end()) return nullptr;
  if (read) p.recent.splice(p.recent.begin(), p.recent, it->second);
  return *it->second;
}

void keep_mapping(const std::shared_ptr<mapped_region>& r, bool evict) {
  mapping_pool& p = pool();
  if (auto it = p.by_path.find(r->path); it != p.by_path.end()) {
    *it->second = r;
    p.recent.splice(p.recent.begin(), p.recent, it->second);
    return;
  }
  if (!evict && p.recent.size() >= p.limit) return;
  p.recent.push_front(r);
  try {
    p.by_path.emplace(r->path, p.recent.begin());
  } catch (...) {
    p.recent.pop_front();
    throw;
  }
  p.trim();
}

void drop_mapping(const std::string& path) noexcept {
  mapping_pool& p = pool();
  if (auto it = p.by_path.find(path); it != p.by_path.end()) {
    p.recent.erase(it->second);
    p.by_path.erase(it);
  }
}

void drop_all_mappings() noexcept {
  mapping_pool& p = pool();
  p.by_path.clear();
  p.recent.clear();
}

std::size_t kept_mapping_count() noexcept { return pool().recent.size(); }

}  // namespace pfs::fdw

extern "C" void pfs_core_set_max_mapped_regions(int limit) noexcept {
  pfs::fdw::mapping_pool& p = pfs::fdw::pool();
  p.limit = limit < 1 ? 1 : static_cast<std::size_t>(limit);
  p.trim();
}
