// Conditions evaluated by a scan: see row_filter.h.
#include "agent/reader/row_filter.h"

#include <algorithm>

#include "agent/reader/reader.h"

namespace pfs::reader {

namespace {
bool null_test(filter_op op) { return op == filter_op::is_null || op == filter_op::is_not_null; }
}  // namespace

bool column_filter::matches_int(std::int64_t v) const noexcept {
  switch (op) {
    case filter_op::eq:
      return v == ints[0];
    case filter_op::lt:
      return v < ints[0];
    case filter_op::le:
      return v <= ints[0];
    case filter_op::gt:
      return v > ints[0];
    case filter_op::ge:
      return v >= ints[0];
    case filter_op::in:
      return std::binary_search(ints.begin(), ints.end(), v);
    case filter_op::is_not_null:
      return true;
    case filter_op::prefix:
    case filter_op::is_null:
      return false;
  }
  return false;
}

bool column_filter::matches_text(std::string_view v) const noexcept {
  switch (op) {
    case filter_op::eq:
      return v == texts[0];
    case filter_op::in:
      return std::binary_search(texts.begin(), texts.end(), v,
                                [](std::string_view a, std::string_view b) { return a < b; });
    case filter_op::prefix:
      return v.substr(0, texts[0].size()) == texts[0];
    case filter_op::is_not_null:
      return true;
    default:
      return false;
  }
}

bool column_filter::matches(const cell_view& c) const noexcept {
  if (c.null) return op == filter_op::is_null;
  return text ? matches_text(c.s) : matches_int(c.i);
}

void row_filter::add(column_filter f) {
  const bool needs_operand = f.op != filter_op::is_null && f.op != filter_op::is_not_null;
  if (f.text) {
    std::sort(f.texts.begin(), f.texts.end());
    f.texts.erase(std::unique(f.texts.begin(), f.texts.end()), f.texts.end());
    if (needs_operand && f.texts.empty()) rejects_all_ = true;
  } else {
    std::sort(f.ints.begin(), f.ints.end());
    f.ints.erase(std::unique(f.ints.begin(), f.ints.end()), f.ints.end());
    if (needs_operand && f.ints.empty()) rejects_all_ = true;
  }
  if (f.column >= 0 && f.column < 64) columns_ |= std::uint64_t{1} << f.column;
  if (f.column < 0 || f.column >= 64) wide_ = true;
  // A NULL test is the same on a column of any type, whatever its text flag says.
  if ((!f.text || !needs_operand) && f.column >= 0 && f.column < kFoldedColumns) fold(bounds_[f.column], f);
  filters_.push_back(std::move(f));
}

bool row_filter::matches_tests(const cell_view* cells, std::uint64_t skip) const noexcept {
  if (rejects_all_) return false;
  for (const column_filter& f : filters_) {
    if (f.column < 64 && (skip >> f.column & 1) != 0) continue;
    if (!f.matches(cells[f.column])) return false;
  }
  return true;
}

// Narrows b to the values an int test lets through when they are not NULL.
void row_filter::fold(int_bounds& b, const column_filter& f) {
  constexpr std::int64_t kMin = INT64_MIN, kMax = INT64_MAX;
  const auto narrow = [&b](std::int64_t lo, std::int64_t hi) {
    b.lo = std::max(b.lo, lo);
    b.hi = std::min(b.hi, hi);
  };
  const auto none = [&b] { b.lo = 1, b.hi = 0; };
  switch (f.op) {
    case filter_op::eq:
      narrow(f.ints[0], f.ints[0]);
      break;
    case filter_op::lt:
      f.ints[0] == kMin ? none() : narrow(kMin, f.ints[0] - 1);
      break;
    case filter_op::le:
      narrow(kMin, f.ints[0]);
      break;
    case filter_op::gt:
      f.ints[0] == kMax ? none() : narrow(f.ints[0] + 1, kMax);
      break;
    case filter_op::ge:
      narrow(f.ints[0], kMax);
      break;
    case filter_op::in:
      if (f.ints.empty()) {
        none();
      } else {
        narrow(f.ints.front(), f.ints.back());
        b.has_in = true;
      }
      break;
    case filter_op::is_not_null:
      break;
    case filter_op::prefix:
    case filter_op::is_null:
      none();  // no non-NULL int passes
      break;
  }
}

// The slow form of may_match_int: every int test on the column, one by one.
bool row_filter::may_match_int_tests(int column, std::int64_t v) const noexcept {
  for (const column_filter& f : filters_)
    if (f.column == column && (!f.text || null_test(f.op)) && !f.matches_int(v)) return false;
  return true;
}

bool row_filter::may_match_text_tests(int column, std::string_view v) const noexcept {
  if (rejects_all_) return false;
  for (const column_filter& f : filters_)
    if (f.column == column && (f.text || null_test(f.op)) && !f.matches_text(v)) return false;
  return true;
}

}  // namespace pfs::reader
