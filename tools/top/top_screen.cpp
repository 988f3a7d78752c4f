#include "tools/top/top_screen.h"

#include <algorithm>
#include <cstdio>

namespace pfs::top {

namespace {

void rate_section(std::vector<std::string>& lines, const char* title, const std::vector<rate>& rates,
                  const std::string& error, const std::string& exited) {
  lines.emplace_back(title);
  if (!error.empty()) {
    lines.push_back("  (" + error + ")");
    return;
  }
  char head[128];
  std::snprintf(head, sizeof head, "  %12s %12s %12s  %s", "count/s", "time/s", "avg", "name");
  lines.emplace_back(head);
  if (rates.empty())
    lines.push_back(exited.empty() ? "  (none in this interval)"
                                   : "  (none in this interval: " + exited + ")");
  for (const rate& r : rates) {
    char line[128];
    std::snprintf(line, sizeof line, "  %12.1f %12s %12s  ", r.count_per_second,
                  format_pico(r.picoseconds_per_second).c_str(), format_pico(r.average_picoseconds).c_str());
    lines.push_back(line + r.label);
  }
}

}  // namespace

std::vector<rate> top_rates(const counters& before, const counters& after, double seconds, int n) {
  std::vector<rate> out;
  for (const auto& [key, now] : after) {
    std::uint64_t count = now.count, time = now.picoseconds;
    if (const auto it = before.find(key); it != before.end() && it->second.count <= now.count) {
      count -= it->second.count;
      time = it->second.picoseconds <= time ? time - it->second.picoseconds : time;
    }
    if (count == 0) continue;
    const auto c = static_cast<double>(count), t = static_cast<double>(time);
    out.push_back(rate{now.label, c / seconds, t / seconds, t / c});
  }
  std::sort(out.begin(), out.end(), [](const rate& a, const rate& b) {
    if (a.picoseconds_per_second != b.picoseconds_per_second)
      return a.picoseconds_per_second > b.picoseconds_per_second;
    if (a.count_per_second != b.count_per_second) return a.count_per_second > b.count_per_second;
    return a.label < b.label;
  });
  if (out.size() > static_cast<std::size_t>(n)) out.resize(static_cast<std::size_t>(n));
  return out;
}

std::string format_pico(double picoseconds) {
  static const char* const kUnits[] = {"ps", "ns", "us", "ms", "s"};
  std::size_t unit = 0;
  while (unit < 4 && picoseconds >= 1000) {
    picoseconds /= 1000;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.2f %s", picoseconds, kUnits[unit]);
  return buffer;
}

std::vector<std::string> render(const frame& f) {
  std::vector<std::string> lines{f.header};
  if (!f.exited.empty()) lines.push_back(f.exited + ": its counters no longer change");
  lines.emplace_back("");
  rate_section(lines, "Top waits per second (events_waits_summary_global_by_event_name)", f.waits,
               f.waits_error, f.exited);
  lines.emplace_back("");
  lines.emplace_back("Lock waits now (lock_waits)");
  if (!f.lock_waits_error.empty()) {
    lines.push_back("  (" + f.lock_waits_error + ")");
  } else if (f.lock_waits.rows.empty()) {
    lines.emplace_back("  (no thread is waiting for a lock)");
  } else {
    std::vector<std::size_t> width(f.lock_waits.columns.size());
    for (std::size_t c = 0; c < width.size(); ++c) {
      width[c] = f.lock_waits.columns[c].size();
      for (const auto& row : f.lock_waits.rows) width[c] = std::max(width[c], row[c].size());
    }
    auto line = [&](const std::vector<std::string>& cells) {
      std::string s = " ";
      for (std::size_t c = 0; c < width.size(); ++c)
        s += " " + cells[c] + std::string(width[c] - cells[c].size(), ' ');
      lines.push_back(s);
    };
    line(f.lock_waits.columns);
    for (const auto& row : f.lock_waits.rows) line(row);
  }
  lines.emplace_back("");
  rate_section(lines, "Top statements per second (events_statements_summary_by_digest)", f.statements,
               f.statements_error, f.exited);
  return lines;
}

}  // namespace pfs::top
