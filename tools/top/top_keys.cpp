#include "tools/top/top_keys.h"

#include <curses.h>

#include <algorithm>
#include <cstdio>

namespace pfs::top {

namespace {

constexpr int kEscape = 27;

action filter_key(ui_state& s, int key) {
  if (key == '\n' || key == KEY_ENTER || key == kEscape) {
    s.typing_filter = false;
    if (key == kEscape) s.filter.clear();
    s.message = s.filter.empty() ? "filter cleared" : "filter: " + s.filter;
    s.selected = 0;
    return action::refresh;
  }
  if (key == KEY_BACKSPACE || key == 127 || key == 8) {
    if (!s.filter.empty()) s.filter.pop_back();
  } else if (key >= 32 && key < 127) {
    s.filter += static_cast<char>(key);
  }
  return action::redraw;
}

}  // namespace

int sort_column_of(const ui_state& s) {
  const auto it = s.sort_column.find(s.current->key);
  return it == s.sort_column.end() ? s.current->sort_column : it->second;
}

action on_key(ui_state& s, int key) {
  if (s.typing_filter) return filter_key(s, key);
  if (s.help || s.detail_open) {  // any key closes them; q still quits
    if (key == 'q') return action::quit;
    s.help = false;
    s.detail_open = false;
    return action::redraw;
  }
  if (key >= '1' && key <= '7') {
    s.current = find_view(std::string(1, static_cast<char>(key)));
    s.selected = 0;
    s.message = "view " + s.current->name;
    return action::refresh;
  }
  switch (key) {
    case 'q':
      return action::quit;
    case 'h':
    case '?':
      s.help = true;
      return action::redraw;
    case 's': {
      const int next = (sort_column_of(s) + 1) % static_cast<int>(s.current->columns.size());
      s.sort_column[s.current->key] = next;
      s.message = "sorted by " + s.current->columns[static_cast<std::size_t>(next)].title;
      return action::redraw;
    }
    case 'r':
      s.reversed = !s.reversed;
      s.message = s.reversed ? "sort reversed (ascending)" : "sort descending";
      return action::redraw;
    case '/':
      s.typing_filter = true;
      s.filter.clear();
      return action::redraw;
    case 'p':
      s.paused = !s.paused;
      s.message = s.paused ? "paused (p resumes)" : "resumed";
      return action::redraw;
    case '+':
    case '-': {
      s.interval = key == '+' ? std::min(s.interval * 2, 3600.0) : std::max(s.interval / 2, 0.25);
      char text[48];
      std::snprintf(text, sizeof text, "interval %.2f s", s.interval);
      s.message = text;
      return action::redraw;
    }
    case KEY_DOWN:
    case 'j':
      s.selected = std::min(s.selected + 1, std::max(0, static_cast<int>(s.last.rows.rows.size()) - 1));
      return action::redraw;
    case KEY_UP:
    case 'k':
      s.selected = std::max(s.selected - 1, 0);
      return action::redraw;
    case '\n':
    case '\r':
    case KEY_ENTER:
      return action::detail;
    case KEY_RESIZE:
      return action::redraw;
    default:
      return action::none;
  }
}

}  // namespace pfs::top
