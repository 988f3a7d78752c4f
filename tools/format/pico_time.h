// Picoseconds as people read them, as MySQL's sys.format_pico_time: "12.34 us"
// (whole picoseconds below a nanosecond). pfs_top and pfs_flamegraph show times so.
#pragma once

#include <cstdio>
#include <string>

namespace pfs::tools {

inline std::string format_pico(double picoseconds) {
  static const char* const kUnits[] = {"ps", "ns", "us", "ms", "s"};
  int unit = 0;
  while (unit < 4 && picoseconds >= 1000) {
    picoseconds /= 1000;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : "%.2f %s", picoseconds, kUnits[unit]);
  return buffer;
}

}  // namespace pfs::tools
