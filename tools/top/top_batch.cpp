#include "tools/top/top_batch.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <thread>

namespace pfs::top {

std::string header_line(const options& o, const source& db, const view& v, double seconds, int refresh) {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char clock[16];
  std::strftime(clock, sizeof clock, "%H:%M:%S", &local);
  char header[512];
  std::snprintf(header, sizeof header, "pfs_top - %s  %s  schema %s  view %c %s  interval %.2f s  refresh %d",
                clock, db.where().c_str(), o.schema.c_str(), v.key, v.name.c_str(), seconds, refresh);
  return header;
}

int run_batch(const options& o, source& db, const volatile int& stop) {
  const view& v = *find_view(o.view);
  refresh_result first = db.refresh(v);  // the baseline of the rates
  if (!first.unreachable.empty()) {
    std::fprintf(stderr, "pfs_top: %s\n", first.unreachable.c_str());
    return 1;
  }
  for (const auto& w : first.new_warnings) std::printf("warning (shown once): %s\n", w.c_str());
  bool any_read = first.error.empty();
  for (int refresh = 1; stop == 0; ++refresh) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
    if (stop != 0) break;
    refresh_result r = db.refresh(v);
    std::printf("%s\n%s\n", header_line(o, db, v, r.seconds, refresh).c_str(), v.title.c_str());
    if (!r.unreachable.empty()) std::printf("%s\n", r.unreachable.c_str());
    if (!r.exited.empty()) std::printf("%s: its counters no longer change\n", r.exited.c_str());
    for (const auto& w : r.new_warnings) std::printf("warning (shown once): %s\n", w.c_str());
    any_read = any_read || (r.error.empty() && r.unreachable.empty());
    if (!r.error.empty()) {
      std::printf("(%s)\n", r.error.c_str());
    } else if (r.unreachable.empty()) {
      filter_and_sort(r.rows, "", v.sort_column, false);
      if (r.rows.rows.size() > static_cast<std::size_t>(o.top))
        r.rows.rows.resize(static_cast<std::size_t>(o.top));
      for (const auto& line : text_lines(v, r.rows, 0)) std::printf("%s\n", line.c_str());
      if (r.rows.rows.empty()) std::printf("(no rows in this interval)\n");
    }
    std::printf("\n");
    std::fflush(stdout);
    if (o.iterations > 0 && refresh >= o.iterations) break;
  }
  return any_read ? 0 : 1;  // 1: not one read of the view succeeded
}

}  // namespace pfs::top
