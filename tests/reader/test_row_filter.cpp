// row_filter's early test of a raw value (may_match_int, which the row builders
// call on every record) folds a column's int tests into one range: it must agree
// with the tests themselves for every operator, at the ends of the int64 range and
// with IN lists, alone and combined.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <random>
#include <vector>

#include "agent/reader/reader.h"
#include "agent/reader/row_filter.h"

namespace {

using pfs::reader::column_filter;
using pfs::reader::filter_op;
using pfs::reader::row_filter;

constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();

column_filter int_test(int column, filter_op op, std::vector<std::int64_t> operands = {}) {
  column_filter f;
  f.column = column;
  f.op = op;
  f.ints = std::move(operands);
  return f;
}

// What may_match_int must answer: every int test on the column holds.
bool reference(const std::vector<column_filter>& tests, int column, std::int64_t v) {
  for (column_filter f : tests) {
    if (f.column != column || f.text) continue;
    if (f.op == filter_op::in && f.ints.empty()) return false;
    std::sort(f.ints.begin(), f.ints.end());  // matches_int searches a sorted IN list
    if (!f.matches_int(v)) return false;
  }
  return true;
}

void expect_agrees(const std::vector<column_filter>& tests, const std::vector<std::int64_t>& values) {
  row_filter filter;
  for (const column_filter& f : tests) filter.add(f);
  for (int column = 0; column < 10; ++column)
    for (std::int64_t v : values)
      EXPECT_EQ(filter.may_match_int(column, v), reference(tests, column, v))
          << "column " << column << " value " << v;
}

const std::vector<std::int64_t> kEdges = {kMin, kMin + 1, -2, -1, 0, 1, 2, 3, 5, 9, 10, 11, kMax - 1, kMax};

TEST(RowFilter, EachOperatorAloneAgreesWithItsTest) {
  for (std::int64_t operand : {kMin, std::int64_t{-1}, std::int64_t{0}, std::int64_t{2}, kMax}) {
    for (filter_op op : {filter_op::eq, filter_op::lt, filter_op::le, filter_op::gt, filter_op::ge}) {
      expect_agrees({int_test(0, op, {operand})}, kEdges);
      expect_agrees({int_test(9, op, {operand})}, kEdges);  // beyond the folded columns
    }
  }
  for (filter_op op : {filter_op::is_null, filter_op::is_not_null}) expect_agrees({int_test(1, op)}, kEdges);
  expect_agrees({int_test(1, filter_op::in, {3, kMin, 10, 3, kMax})}, kEdges);
}

TEST(RowFilter, LessThanTheSmallestAndGreaterThanTheLargestPassNothing) {
  row_filter below;
  below.add(int_test(0, filter_op::lt, {kMin}));
  row_filter above;
  above.add(int_test(0, filter_op::gt, {kMax}));
  for (std::int64_t v : kEdges) {
    EXPECT_FALSE(below.may_match_int(0, v));
    EXPECT_FALSE(above.may_match_int(0, v));
  }
}

TEST(RowFilter, AnEmptyInListRejectsEveryRow) {
  row_filter filter;
  filter.add(int_test(3, filter_op::in, {}));
  EXPECT_TRUE(filter.rejects_all());
  for (std::int64_t v : kEdges) {
    EXPECT_FALSE(filter.may_match_int(3, v));
    EXPECT_FALSE(filter.may_match_int(0, v));
  }
}

TEST(RowFilter, TestsOnTheSameColumnCombine) {
  expect_agrees({int_test(0, filter_op::ge, {2}), int_test(0, filter_op::lt, {10})}, kEdges);
  expect_agrees({int_test(0, filter_op::gt, {5}), int_test(0, filter_op::lt, {3})}, kEdges);  // empty range
  expect_agrees({int_test(1, filter_op::in, {1, 3, 5, 11}), int_test(1, filter_op::le, {5})}, kEdges);
  expect_agrees({int_test(1, filter_op::in, {1, 3, 5}), int_test(1, filter_op::in, {3, 5, 9})}, kEdges);
  expect_agrees(
      {int_test(0, filter_op::eq, {2}), int_test(1, filter_op::eq, {3}), int_test(3, filter_op::gt, {0})},
      kEdges);
}

// Random conjunctions of up to four tests on three columns, against random and edge values.
TEST(RowFilter, RandomConjunctionsAgreeWithTheirTests) {
  std::mt19937_64 rng(20261126);
  const std::vector<filter_op> ops = {filter_op::eq,          filter_op::lt,     filter_op::le,
                                      filter_op::gt,          filter_op::ge,     filter_op::in,
                                      filter_op::is_not_null, filter_op::is_null};
  auto small = [&rng] { return static_cast<std::int64_t>(rng() % 21) - 10; };
  std::vector<std::int64_t> values = kEdges;
  for (int k = -12; k <= 12; ++k) values.push_back(k);
  for (int round = 0; round < 2000; ++round) {
    std::vector<column_filter> tests;
    const int n = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < n; ++k) {
      const filter_op op = ops[rng() % (ops.size() - (round % 10 == 0 ? 0 : 1))];  // IS NULL now and then
      std::vector<std::int64_t> operands;
      if (op == filter_op::in) {
        for (int m = static_cast<int>(rng() % 4); m >= 0; --m) operands.push_back(small());
      } else if (op != filter_op::is_null && op != filter_op::is_not_null) {
        operands.push_back(rng() % 8 == 0 ? (rng() % 2 ? kMin : kMax) : small());
      }
      tests.push_back(int_test(static_cast<int>(rng() % 3), op, operands));
    }
    expect_agrees(tests, values);
    if (HasFailure()) return;
  }
}

// matches() on whole rows tests every column but those the caller says it checked
// (skip), and answers at once when it checked them all; may_match_text lets any
// text through a column without tests, unless the filter rejects everything.
// A NULL test says nothing of a value's type: the FDW sends `event_name IS NULL` with
// no text flag. The early tests of a non-NULL value must fail IS NULL and pass IS NOT
// NULL on a column of either type, whatever the flag (a row builder that trusted a
// passing early test returned every row of `WHERE event_name IS NULL`).
TEST(RowFilter, NullTestsHoldForEitherTypeOfColumn) {
  for (const bool flag : {false, true}) {
    for (const filter_op op : {filter_op::is_null, filter_op::is_not_null}) {
      column_filter f;
      f.column = 3;
      f.op = op;
      f.text = flag;
      column_filter g = f;
      g.column = 0;
      row_filter filter;
      filter.add(f);
      filter.add(g);
      const bool passes = op == filter_op::is_not_null;
      EXPECT_EQ(filter.may_match_text(3, "wait/io/file"), passes) << "text flag " << flag;
      EXPECT_EQ(filter.may_match_int(0, 7), passes) << "text flag " << flag;
      EXPECT_TRUE(filter.tests_only(0b1001));
      EXPECT_FALSE(filter.tests_only(0b1000));
    }
  }
}

TEST(RowFilter, WholeRowsSkipOnlyTheCheckedColumns) {
  std::mt19937_64 rng(1126);
  for (int round = 0; round < 2000; ++round) {
    std::vector<column_filter> tests;
    for (int k = 1 + static_cast<int>(rng() % 3); k > 0; --k) {
      const bool in = rng() % 5 == 0;
      std::vector<std::int64_t> operands;
      if (!in || rng() % 4 != 0) operands.push_back(static_cast<std::int64_t>(rng() % 5));
      tests.push_back(int_test(static_cast<int>(rng() % 3), in ? filter_op::in : filter_op::le, operands));
    }
    row_filter filter;
    for (const column_filter& f : tests) filter.add(f);
    pfs::reader::cell_view cells[4];
    for (auto& c : cells) {
      c.null = rng() % 6 == 0;
      c.i = c.null ? 0 : static_cast<std::int64_t>(rng() % 6);
    }
    for (std::uint64_t skip = 0; skip < 16; ++skip) {
      bool expected = true;
      for (column_filter f : tests) {
        if ((skip >> f.column & 1) != 0) continue;
        std::sort(f.ints.begin(), f.ints.end());
        if ((f.op == filter_op::in && f.ints.empty()) || !f.matches(cells[f.column])) expected = false;
      }
      if (filter.rejects_all()) expected = false;
      EXPECT_EQ(filter.matches(cells, skip), expected) << "round " << round << " skip " << skip;
    }
    EXPECT_EQ(filter.may_match_text(3, "wait/io/file"), !filter.rejects_all());
    if (HasFailure()) return;
  }
}

}  // namespace
