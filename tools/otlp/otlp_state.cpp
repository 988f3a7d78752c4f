#include "tools/otlp/otlp_state.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace pfs::otlp {

export_state load_state(const std::string& path) {
  export_state out;
  std::ifstream in(path);
  std::string line;
  if (!std::getline(in, line) || line != "pfs_otlp state 2") return out;
  cursors* current = nullptr;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string word;
    fields >> word;
    if (word == "region") {
      std::uint64_t pid = 0, created = 0;
      fields >> pid >> created;
      current = fields ? &out[{pid, created}] : nullptr;
    } else if (word == "cursor" && current != nullptr) {
      std::uint64_t thread = 0, end_event = 0, event = 0;
      int kind = -1;
      fields >> thread >> kind >> end_event >> event;
      if (fields && kind >= 0 && kind < kEventKinds) (*current)[{thread, kind}] = {end_event, event};
    }
  }
  return out;
}

bool save_state(const std::string& path, const export_state& state, std::string& error) {
  const std::string tmp = path + ".tmp";
  std::FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr) {
    error = "cannot write " + tmp + ": " + std::strerror(errno);
    return false;
  }
  std::fputs("pfs_otlp state 2\n", f);
  for (const auto& [region, where] : state) {
    std::fprintf(f, "region %llu %llu\n", static_cast<unsigned long long>(region.first),
                 static_cast<unsigned long long>(region.second));
    for (const auto& [slot, key] : where)
      std::fprintf(f, "cursor %llu %d %llu %llu\n", static_cast<unsigned long long>(slot.first), slot.second,
                   static_cast<unsigned long long>(key.end_event_id),
                   static_cast<unsigned long long>(key.event_id));
  }
  const bool written = std::fflush(f) == 0 && fsync(fileno(f)) == 0;
  const int saved_errno = errno;
  if (std::fclose(f) != 0 || !written) {
    error = "cannot write " + tmp + ": " + std::strerror(written ? errno : saved_errno);
    unlink(tmp.c_str());
    return false;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    error = "cannot rename " + tmp + " to " + path + ": " + std::strerror(errno);
    unlink(tmp.c_str());
    return false;
  }
  return true;
}

}  // namespace pfs::otlp
