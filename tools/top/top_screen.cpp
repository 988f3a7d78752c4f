#include "tools/top/top_screen.h"

#include <curses.h>

#include <algorithm>
#include <vector>

namespace pfs::top {

namespace {

enum pair_id : short { kHeader = 1, kBad = 2, kWarn = 3, kTitle = 4 };

bool g_colour = false;

void put(int row, const std::string& text, attr_t attributes = A_NORMAL, short pair = 0) {
  if (row >= LINES) return;
  if (g_colour && pair != 0) attributes |= COLOR_PAIR(pair);
  attron(attributes);
  mvaddnstr(row, 0, text.c_str(), COLS);
  if (attributes & A_REVERSE)
    for (int x = static_cast<int>(std::min<std::size_t>(text.size(), static_cast<std::size_t>(COLS)));
         x < COLS; ++x)
      addch(' ');
  attroff(attributes);
}

const char* const kHelp[] = {
    "pfs_top keys",
    "",
    "  1  waits by event name          5  threads: current statement, stage, wait",
    "  2  lock waits and holders       6  processes of a region directory",
    "  3  statements by digest         7  memory by event name",
    "  4  files by instance",
    "",
    "  s  next sort column             r  reverse the sort",
    "  /  filter by text (Enter keeps it, Esc clears it)",
    "  p  pause / resume               +  -  interval x2 / /2",
    "  up/down (j/k) select a row      Enter  the row's detail",
    "  h  this help                    q  quit",
    "",
    "any key closes this help",
};

void draw_table(int& row, const std::vector<std::string>& columns,
                const std::vector<std::vector<std::string>>& rows) {
  std::vector<std::size_t> widths(columns.size());
  for (std::size_t c = 0; c < columns.size(); ++c) {
    widths[c] = columns[c].size();
    for (const auto& r : rows) widths[c] = std::max(widths[c], std::min<std::size_t>(r[c].size(), 70));
  }
  put(row++, text_line(columns, widths), A_BOLD);
  for (const auto& r : rows) put(row++, text_line(r, widths));
}

}  // namespace

void screen_open() {
  initscr();
  cbreak();
  noecho();
  keypad(stdscr, TRUE);
  curs_set(0);
  set_escdelay(50);
  if (has_colors()) {
    start_color();
    use_default_colors();
    init_pair(kHeader, COLOR_BLACK, COLOR_CYAN);
    init_pair(kBad, COLOR_RED, -1);
    init_pair(kWarn, COLOR_YELLOW, -1);
    init_pair(kTitle, COLOR_GREEN, -1);
    g_colour = true;
  }
}

void screen_close() { endwin(); }

void draw(const ui_state& s, const std::string& header) {
  erase();
  int row = 0;
  put(row++, header, A_REVERSE, kHeader);
  if (s.help) {
    for (const char* line : kHelp) put(row++, line);
    refresh();
    return;
  }
  std::string title = s.current->title + "  sorted by " +
                      s.current->columns[static_cast<std::size_t>(sort_column_of(s))].title +
                      (s.reversed ? " ascending" : " descending");
  if (!s.filter.empty() && !s.typing_filter) title += "  filter \"" + s.filter + "\"";
  if (s.paused) title += "  PAUSED";
  put(row++, title, A_BOLD, kTitle);
  const refresh_result& r = s.last;
  if (!r.unreachable.empty()) put(row++, r.unreachable, A_BOLD, kBad);
  if (!r.exited.empty()) put(row++, r.exited + ": its counters no longer change", A_BOLD, kWarn);
  for (const auto& w : r.new_warnings) put(row++, "warning (shown once): " + w, A_NORMAL, kWarn);
  if (s.detail_open) {
    put(row++, s.detail_title, A_BOLD);
    if (!s.detail_error.empty())
      put(row++, "(" + s.detail_error + ")", A_NORMAL, kBad);
    else if (s.detail.rows.empty())
      put(row++, "(no rows)");
    else
      draw_table(row, s.detail.columns, s.detail.rows);
    put(LINES - 1, "any key closes the detail", A_REVERSE, kHeader);
    refresh();
    return;
  }
  if (!r.error.empty()) put(row++, "(" + r.error + ")", A_BOLD, kBad);
  if (r.error.empty() && r.unreachable.empty()) {
    const std::vector<std::string> lines = text_lines(*s.current, r.rows, static_cast<std::size_t>(COLS));
    put(row++, lines[0], A_BOLD);
    if (!r.rows.rates && s.current->active_only)
      put(row++, "(rates from the next refresh)");
    else if (r.rows.rows.empty())
      put(row++, "(no rows in this interval)");
    for (std::size_t i = 1; i < lines.size() && row < LINES - 1; ++i) {
      const auto& shown_row = r.rows.rows[i - 1];
      attr_t a = static_cast<int>(i - 1) == s.selected ? A_REVERSE : A_NORMAL;
      put(row++, lines[i], a, shown_row.in_cycle ? kBad : 0);
    }
  }
  if (s.typing_filter)
    put(LINES - 1, "/" + s.filter, A_REVERSE, kHeader);
  else if (!s.message.empty())
    put(LINES - 1, s.message + "  (h: help)", A_NORMAL);
  refresh();
}

}  // namespace pfs::top
