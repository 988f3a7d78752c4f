#include "tools/top/top_model.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <set>

#include "tools/format/pico_time.h"

namespace pfs::top {

namespace {

double parse(const std::string& s, bool& ok) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  ok = !s.empty() && *end == '\0';
  return ok ? v : 0;
}

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Lock view: the waiting threads (column 2) that reach themselves by following
// waiting -> holder (column 4).
void mark_cycles(shown& s) {
  std::map<std::string, std::string> holder_of;
  for (const auto& r : s.rows) holder_of[r.cells[2].text] = r.cells[4].text;
  for (auto& r : s.rows) {
    std::set<std::string> seen;
    for (std::string t = r.cells[4].text; holder_of.count(t) != 0 && seen.insert(t).second; t = holder_of[t])
      if (t == r.cells[2].text) r.in_cycle = true;
  }
}

}  // namespace

std::string format_pico(double picoseconds) { return pfs::tools::format_pico(picoseconds); }

table merge_by_key(const view& v, const table& read) {
  // Only views of counters: the lock waits' rows repeat a lock for each waiter.
  if (std::none_of(v.columns.begin(), v.columns.end(),
                   [](const column& c) { return c.kind == column_kind::per_second; }))
    return read;
  table out{read.columns, {}};
  std::map<std::string, std::size_t> at;
  for (const auto& row : read.rows) {
    const auto [it, added] = at.emplace(row[0], out.rows.size());
    if (added) {
      out.rows.push_back(row);
      continue;
    }
    auto& merged = out.rows[it->second];
    for (std::size_t c = 0; c < v.columns.size() && c + 1 < row.size(); ++c) {
      const column_kind kind = v.columns[c].kind;
      if (kind != column_kind::number && kind != column_kind::per_second &&
          kind != column_kind::time_per_second)
        continue;
      bool ok_a = false, ok_b = false;
      const double a = parse(merged[c + 1], ok_a), b = parse(row[c + 1], ok_b);
      if (!ok_a || !ok_b) continue;
      char text[32];
      std::snprintf(text, sizeof text, "%.0f", a + b);
      merged[c + 1] = text;
    }
  }
  return out;
}

shown make_rows(const view& v, const table& now, const table* previous, double seconds) {
  std::map<std::string, const std::vector<std::string>*> before;
  if (previous != nullptr)
    for (const auto& row : previous->rows) before[row[0]] = &row;
  shown out;
  out.rates = previous != nullptr && seconds > 0;
  for (const auto& row : now.rows) {
    shown_row r{row[0], {}, false};
    bool grew = false;
    const auto old = before.find(row[0]);
    for (std::size_t c = 0; c < v.columns.size() && c + 1 < row.size(); ++c) {
      const std::string& raw = row[c + 1];
      cell x{raw, 0, false};
      bool ok = false;
      const double value = parse(raw, ok);
      switch (v.columns[c].kind) {
        case column_kind::text:
          break;
        case column_kind::number:
          x = {raw, value, ok};
          break;
        case column_kind::time:
          x = {ok ? format_pico(value) : raw, value, ok};
          break;
        case column_kind::per_second:
        case column_kind::time_per_second: {
          if (!out.rates) {
            x = {"-", 0, true};
            break;
          }
          double base = 0;
          bool base_ok = false;
          if (old != before.end()) base = parse((*old->second)[c + 1], base_ok);
          const double grown = base_ok && base <= value ? value - base : value;
          const double rate = grown / seconds;
          grew = grew || grown > 0;
          char text[32];
          std::snprintf(text, sizeof text, "%.1f", rate);
          x = {v.columns[c].kind == column_kind::time_per_second ? format_pico(rate) : text, rate, true};
          break;
        }
      }
      r.cells.push_back(std::move(x));
    }
    if (v.active_only && out.rates && !grew) continue;
    out.rows.push_back(std::move(r));
  }
  if (v.key == '2') mark_cycles(out);
  return out;
}

void filter_and_sort(shown& s, const std::string& filter, int column, bool reversed) {
  if (!filter.empty()) {
    const std::string f = lower(filter);
    std::erase_if(s.rows, [&](const shown_row& r) {
      if (lower(r.key).find(f) != std::string::npos) return false;
      return std::none_of(r.cells.begin(), r.cells.end(),
                          [&](const cell& c) { return lower(c.text).find(f) != std::string::npos; });
    });
  }
  std::stable_sort(s.rows.begin(), s.rows.end(), [&](const shown_row& a, const shown_row& b) {
    const auto c = static_cast<std::size_t>(column);
    if (c >= a.cells.size() || c >= b.cells.size()) return false;
    const cell &x = a.cells[c], &y = b.cells[c];
    bool less;
    if (x.numeric && y.numeric) {
      if (x.number == y.number) return a.key < b.key;
      less = x.number < y.number;
    } else {
      if (x.text == y.text) return a.key < b.key;
      less = x.text < y.text;
    }
    return reversed ? less : !less;
  });
}

std::string text_line(const std::vector<std::string>& cells, const std::vector<std::size_t>& widths) {
  std::string s;
  for (std::size_t c = 0; c < cells.size(); ++c) {
    if (c > 0) s += "  ";
    const std::size_t pad = widths[c] > cells[c].size() ? widths[c] - cells[c].size() : 0;
    s += c + 1 == cells.size() ? cells[c] : cells[c] + std::string(pad, ' ');
  }
  return s;
}

std::vector<std::string> text_lines(const view& v, const shown& s, std::size_t width) {
  std::vector<std::size_t> widths(v.columns.size());
  std::vector<std::string> titles;
  for (std::size_t c = 0; c < v.columns.size(); ++c) {
    titles.push_back(v.columns[c].title);
    widths[c] = titles[c].size();
    for (const auto& r : s.rows)
      widths[c] = std::max(widths[c], std::min<std::size_t>(r.cells[c].text.size(), 60));
  }
  std::vector<std::string> lines{text_line(titles, widths)};
  for (const auto& r : s.rows) {
    std::vector<std::string> cells;
    for (const auto& c : r.cells) cells.push_back(c.text);
    lines.push_back(text_line(cells, widths) + (r.in_cycle ? "  *" : ""));
  }
  if (width > 0)
    for (auto& l : lines)
      if (l.size() > width) l.resize(width);
  return lines;
}

}  // namespace pfs::top
