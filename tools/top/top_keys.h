// pfs_top's keys: what each does to the screen's state (views 1-7, h help, s/r
// sort, / filter, p pause, +/- interval, arrows and Enter for a row's detail, q).
#pragma once

#include <map>
#include <string>

#include "tools/top/top_source.h"

namespace pfs::top {

struct ui_state {
  const view* current = nullptr;
  std::map<char, int> sort_column;  // by view key; the view's default until s
  bool reversed = false;
  std::string filter;
  bool typing_filter = false;  // after '/': keys edit the filter until Enter or Esc
  bool paused = false;
  double interval = 1;
  int selected = 0;  // row under the cursor
  bool help = false;
  bool detail_open = false;
  std::string detail_title;
  table detail;
  std::string detail_error;
  refresh_result raw;   // the latest refresh as read
  refresh_result last;  // raw, filtered and sorted (what is drawn)
  std::string message;  // one line at the bottom (the key's effect)
};

enum class action {
  none,
  redraw,   // the state changed: draw again
  refresh,  // read the view now (another view, or the interval changed)
  detail,   // open the selected row's detail
  quit,
};

action on_key(ui_state& s, int key);

int sort_column_of(const ui_state& s);

}  // namespace pfs::top
