// The server option follow_symlinks, per region path: the shim sets it whenever it
// resolves a foreign table's server (pfs_get_table_options), before any call that
// opens the path, and the core's opens look it up. Kept by path rather than passed
// along because writes are applied at commit, long after the call that named the
// server. Backends are single-threaded: no locking.
#include <string>
#include <string_view>
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
  std::string_view key(path);
  while (key.size() > 1 && key.back() == '/') key.remove_suffix(1);  // a directory named with a trailing '/'
  // Every scan sets its server's path again: the same setting as the last call is
  // already in place (no other call changes this path's entry).
  static std::string last;
  static bool last_follow = false;
  if (!last.empty() && last_follow == follow && key == last) return;
  try {
    auto& p = pfs::fdw::policies();
    if (follow)
      p[std::string(key)] = true;
    else
      p.erase(std::string(key));
    last = key;
    last_follow = follow;
  } catch (...) {  // out of memory: the path keeps its previous setting
    last.clear();
  }
}
