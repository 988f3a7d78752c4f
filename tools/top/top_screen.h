// pfs_top's screen: rates from two reads of a counter table, and the text lines of
// one refresh (sections: waits, lock waits, statements).
#pragma once

#include <string>
#include <vector>

#include "tools/top/top_reads.h"

namespace pfs::top {

struct rate {
  std::string label;
  double count_per_second = 0;
  double picoseconds_per_second = 0;  // waited time per second of wall clock
  double average_picoseconds = 0;     // per event of the interval
};

// The n entries whose time grew most between the reads (then count); entries
// that did not grow are left out. A counter that went back (TRUNCATE) counts from 0.
std::vector<rate> top_rates(const counters& before, const counters& after, double seconds, int n);

// "12.34 us" like format_pico_time.
std::string format_pico(double picoseconds);

struct frame {
  std::string header;
  std::string exited;  // "the program (pid N) has exited", or empty
  std::vector<rate> waits;
  std::string waits_error;
  table lock_waits;
  std::string lock_waits_error;
  std::vector<rate> statements;
  std::string statements_error;
};

std::vector<std::string> render(const frame& f);

}  // namespace pfs::top
