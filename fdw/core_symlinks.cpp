// The server option follow_symlinks, per region path: the shim sets it whenever it
// resolves a foreign table's server (pfs_get_table_options), before any call that
// opens the path, and the core's opens look it up. Kept by path rather than passed
// along because writes are applied at commit, long after the call that named the
// server. Backends are single-threaded: no locking.
#include <string>
#include <unordered_map>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

std::unordered_map<std::string, bool>& policies() noexcept {
  static std::unordered_map<std::string, bool> paths;
  return paths;
}

}  // namespace

bool follows_symlinks(const std::string& path) noexcept {
  const auto& p = policies();
  if (p.empty()) return false;
  if (auto it = p.find(path); it != p.end()) return it->second;
  // A file of a region directory: the directory's server decides.
  const std::size_t slash = path.rfind('/');
  if (slash == std::string::npos || slash == 0) return false;
  if (auto it = p.find(path.substr(0, slash)); it != p.end()) return it->second;
  return false;
}

}  // namespace pfs::fdw

void pfs_core_set_follow_symlinks(const char* path, bool follow) noexcept {
  if (path == nullptr) return;
  try {
    auto& p = pfs::fdw::policies();
    std::string key(path);
    while (key.size() > 1 && key.back() == '/') key.pop_back();  // a directory named with a trailing '/'
    if (follow)
      p[key] = true;
    else
      p.erase(key);
  } catch (...) {  // out of memory: the path keeps its previous setting
  }
}
