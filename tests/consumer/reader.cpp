// Reads a region with the installed reader library: the COUNT_STAR of one
// instrument in events_waits_summary_global_by_event_name.
#include <cstdio>
#include <string>
#include <vector>

#include "agent/reader/reader.h"

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: pfs_consumer_reader REGION EVENT_NAME\n");
    return 2;
  }
  pfs::region_error err;
  auto reader = pfs::reader::region_reader::open(argv[1], false, err);
  if (!reader) {
    std::fprintf(stderr, "pfs_consumer_reader: %s\n", err.message.c_str());
    return 1;
  }
  const auto* t = pfs::reader::find_table("events_waits_summary_global_by_event_name");
  std::vector<pfs::reader::row> rows;
  if (t == nullptr || reader->scan(*t, rows)) return 1;
  for (const auto& r : rows)
    if (r[0].s == argv[2]) std::printf("count_star=%lld\n", static_cast<long long>(r[1].i));
  return 0;
}
