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
  region_memory* current = nullptr;
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
      if (fields && kind >= 0 && kind < kEventKinds) current->where[{thread, kind}] = {end_event, event};
    } else if (word == "link" && current != nullptr) {
      std::uint64_t thread = 0, event = 0;
      ancestry_link l;
      int kind = -1, short_wait = 0, has_trace = 0;
      fields >> thread >> event >> l.nesting_event_id >> kind >> short_wait >> has_trace >> l.trace_high >>
          l.trace_low >> l.parent_span;
      if (!fields || kind < 0 || kind >= kEventKinds) continue;
      l.kind = static_cast<event_kind>(kind);
      l.short_wait = short_wait != 0;
      l.has_trace = has_trace != 0;
      current->links[thread][event] = l;
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
  using ull = unsigned long long;
  for (const auto& [region, memory] : state) {
    std::fprintf(f, "region %llu %llu\n", static_cast<ull>(region.first), static_cast<ull>(region.second));
    for (const auto& [slot, key] : memory.where)
      std::fprintf(f, "cursor %llu %d %llu %llu\n", static_cast<ull>(slot.first), slot.second,
                   static_cast<ull>(key.end_event_id), static_cast<ull>(key.event_id));
    for (const auto& [thread, links] : memory.links)
      for (const auto& [event, l] : links)
        std::fprintf(f, "link %llu %llu %llu %d %d %d %llu %llu %llu\n", static_cast<ull>(thread),
                     static_cast<ull>(event), static_cast<ull>(l.nesting_event_id), static_cast<int>(l.kind),
                     l.short_wait ? 1 : 0, l.has_trace ? 1 : 0, static_cast<ull>(l.trace_high),
                     static_cast<ull>(l.trace_low), static_cast<ull>(l.parent_span));
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
