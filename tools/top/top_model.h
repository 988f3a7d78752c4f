// pfs_top's rows of a view: the counters of two reads turned into rates, the text
// filter, the sort, and the lock wait cycles; what the screen and batch mode print.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tools/top/top_reads.h"
#include "tools/top/top_views.h"

namespace pfs::top {

struct cell {
  std::string text;
  double number = 0;
  bool numeric = false;
};

struct shown_row {
  std::string key;
  std::vector<cell> cells;
  bool in_cycle = false;  // lock view: its waiting thread is in a wait-for cycle
};

struct shown {
  std::vector<shown_row> rows;
  bool rates = false;  // false at a view's first read (its rates come with the next)
};

// Rows of a read with the same key made one (a directory's tables repeat an event
// name per process): counters and numbers summed, the first row's text and times
// kept. The order of first appearance stays. Views without counters as read.
table merge_by_key(const view& v, const table& read);

// The rows of a read (raw: key, then the view's columns as the server returned
// them), with per-second columns from the growth since previous over seconds. A
// counter that went back (TRUNCATE) counts from 0.
shown make_rows(const view& v, const table& now, const table* previous, double seconds);
// Keeps the rows with text in any cell (case-insensitive); sorts by column,
// descending unless reversed (numbers as numbers).
void filter_and_sort(shown& s, const std::string& filter, int column, bool reversed);

// "12.34 us" like format_pico_time.
std::string format_pico(double picoseconds);

// The view as aligned text lines: a header of the column titles, then the rows,
// each cut to width (0: not cut).
std::vector<std::string> text_lines(const view& v, const shown& s, std::size_t width);
std::string text_line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths);

}  // namespace pfs::top
