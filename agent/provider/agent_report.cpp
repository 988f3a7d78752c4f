// What the agent says to the program's user: one line on stderr when it cannot
// start, when a setting was ignored, and when its region changed under it.
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include "agent/provider/internal/agent_internal.h"

namespace pfs::detail {

void report(const std::string& text) {
  const char* quiet = std::getenv("PFS_QUIET");
  if (quiet != nullptr && std::strcmp(quiet, "1") == 0) return;
  // One write, so that lines of several threads or processes do not interleave.
  const std::string line = "perfschema: " + text + "\n";
  const char* p = line.data();
  std::size_t n = line.size();
  while (n > 0) {
    const ssize_t w = ::write(STDERR_FILENO, p, n);
    if (w <= 0) return;
    p += w;
    n -= static_cast<std::size_t>(w);
  }
}

}  // namespace pfs::detail
