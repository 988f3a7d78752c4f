#include "tools/otlp/otlp_regions.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "agent/region/safe_files.h"

namespace pfs::otlp {

bool list_regions(const std::string& path, std::vector<std::string>& out, bool& is_directory,
                  std::string& error) {
  out.clear();
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  is_directory = S_ISDIR(st.st_mode);
  if (!is_directory) {
    out.push_back(path);
    return true;
  }
  DIR* d = opendir(path.c_str());
  if (d == nullptr) {
    error = path + ": " + std::strerror(errno);
    return false;
  }
  while (const dirent* e = readdir(d)) {
    const char* name = e->d_name;
    if (name[0] == '\0' || name[0] == '.' || safe_files::is_temporary_name(name)) continue;
    const std::string file = path + "/" + name;
    struct stat f {};
    if (lstat(file.c_str(), &f) == 0 && S_ISREG(f.st_mode)) out.push_back(file);
  }
  closedir(d);
  std::sort(out.begin(), out.end());
  return true;
}

std::string default_state_path(const std::string& path, bool is_directory) {
  return is_directory ? path + "/.pfs_otlp-state" : path + ".otlp-state";
}

}  // namespace pfs::otlp
