// Conditions a scan evaluates itself (the FDW pushes a query's simple WHERE
// conditions down here): a conjunction of tests on single columns, applied to every
// row before it reaches the sink, and, by the row builders of the large event
// tables, to a record's thread id, event id and class name before the row is built.
//
// The tests are SQL's on non-NULL values: a NULL cell fails every test but IS NULL.
// Text compares bytes (UTF-8), which is SQL's equality and LIKE 'prefix%' under a
// deterministic collation; the FDW pushes text conditions only under one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pfs::reader {

struct cell_view;

enum class filter_op : std::uint8_t {
  eq,           // = value (int or text)
  lt,           // < value (int)
  le,           // <= value
  gt,           // > value
  ge,           // >= value
  in,           // = one of values (int or text): IN (...), = ANY (...)
  prefix,       // text starts with value: LIKE 'prefix%'
  is_null,      // IS NULL
  is_not_null,  // IS NOT NULL
};

struct column_filter {
  int column = 0;  // position in the table's columns
  filter_op op = filter_op::eq;
  bool text = false;               // compares text values (else int)
  std::vector<std::int64_t> ints;  // int operands (in: sorted, unique)
  std::vector<std::string> texts;  // text operands (in: sorted, unique)

  bool matches(const cell_view& c) const noexcept;
  bool matches_int(std::int64_t v) const noexcept;
  bool matches_text(std::string_view v) const noexcept;
};

class row_filter {
 public:
  // Adds a test (sorts an IN list). A test no value passes (IN of nothing) makes
  // the filter reject every row.
  void add(column_filter f);
  bool empty() const noexcept { return filters_.empty(); }
  // No test, as made (the list's memory kept for the next tests).
  void clear() noexcept {
    filters_.clear();
    columns_ = 0;
    wide_ = false;
    for (int_bounds& b : bounds_) b = int_bounds{};
    rejects_all_ = false;
  }
  // Whether no row can pass (found while adding: an empty IN list).
  bool rejects_all() const noexcept { return rejects_all_; }
  const std::vector<column_filter>& filters() const noexcept { return filters_; }

  // Every test holds on the row (one cell per column of the table), but those on
  // the columns of skip (bit c: column c, below 64), which the caller checked.
  bool matches(const cell_view* cells, std::uint64_t skip = 0) const noexcept {
    if ((columns_ & ~skip) == 0 && !wide_) return !rejects_all_;  // every test was checked
    return matches_tests(cells, skip);
  }
  // The tests on `column` hold for this non-NULL value: row builders call these
  // with a record's raw value before building the row, to skip it early.
  bool may_match_int(int column, std::int64_t v) const noexcept {
    if (rejects_all_) return false;
    if (column >= 0 && column < kFoldedColumns) {
      const int_bounds& b = bounds_[column];
      if (v < b.lo || v > b.hi) return false;
      if (!b.has_in) return true;
    }
    return may_match_int_tests(column, v);
  }
  bool may_match_text(int column, std::string_view v) const noexcept {
    if (column >= 0 && column < 64 && !tests(column)) return !rejects_all_;
    return may_match_text_tests(column, v);
  }
  // Whether every test is on the columns of `columns` (bit c: column c).
  bool tests_only(std::uint64_t columns) const noexcept { return (columns_ & ~columns) == 0 && !wide_; }
  // Whether some test is on `column` (lets a builder skip the early test).
  bool tests(int column) const noexcept {
    return column >= 0 && column < 64 && (columns_ & (std::uint64_t{1} << column)) != 0;
  }

 private:
  // The int tests on one column folded into one range, so that the row builders'
  // early test of a record's raw value (millions per scan) is two compares; an IN
  // list narrows the range and is searched after it.
  struct int_bounds {
    std::int64_t lo = INT64_MIN;
    std::int64_t hi = INT64_MAX;
    bool has_in = false;  // an IN list on the column: search it after the range
  };
  static constexpr int kFoldedColumns = 8;  // the event tables' head columns are 0, 1, 3
  static void fold(int_bounds& b, const column_filter& f);
  bool may_match_int_tests(int column, std::int64_t v) const noexcept;  // every int test on column
  bool may_match_text_tests(int column, std::string_view v) const noexcept;
  bool matches_tests(const cell_view* cells, std::uint64_t skip) const noexcept;

  std::vector<column_filter> filters_;
  std::uint64_t columns_ = 0;  // bit c: a test on column c (columns below 64)
  bool wide_ = false;          // a test on a column outside 0..63
  int_bounds bounds_[kFoldedColumns];
  bool rejects_all_ = false;
};

}  // namespace pfs::reader
