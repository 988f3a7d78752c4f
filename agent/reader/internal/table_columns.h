// The column lists of the registry's tables (tables.cpp): one-column helpers by
// type, and the column lists many tables share (MySQL 8.0's names and order, in lower
// case).
#pragma once

#include <string_view>
#include <vector>

#include "agent/reader/reader.h"

namespace pfs::reader::detail::table_columns {

constexpr column_def I(const char* name, bool nullable = false) {
  return {name, column_type::int64, nullable};
}
// A statistics column: the sums of times (SUM_TIMER_*, SUM_LOCK_TIME, SUM_CPU_TIME)
// are numeric (128-bit ps), the rest bigint.
constexpr column_def S(const char* name) {
  const std::string_view n = name;
  const bool time_sum = n.starts_with("sum_timer_") || n == "sum_lock_time" || n == "sum_cpu_time";
  return {name, time_sum ? column_type::numeric : column_type::int64, false};
}
constexpr column_def T(const char* name, bool nullable = false) {
  return {name, column_type::text, nullable};
}
constexpr column_def F(const char* name, bool nullable = false) {
  return {name, column_type::float64, nullable};
}
constexpr column_def TS(const char* name, bool nullable = false) {
  return {name, column_type::timestamp, nullable};
}

// Event rows of each kind (current, history and history_long share them).
std::vector<column_def> wait_columns();
std::vector<column_def> stage_columns();
std::vector<column_def> statement_columns();
std::vector<column_def> transaction_columns();

// A summary's key columns followed by its statistics.
// COUNT_STAR, SUM/MIN/AVG/MAX_TIMER_WAIT
std::vector<column_def> with_stats(std::vector<column_def> key);
std::vector<column_def> with_statement_stats(std::vector<column_def> key);
std::vector<column_def> with_transaction_stats(std::vector<column_def> key);
std::vector<column_def> with_buckets(std::vector<column_def> key);
std::vector<column_def> with_errors(std::vector<column_def> key);
std::vector<column_def> with_memory(std::vector<column_def> key);
std::vector<column_def> with_file_groups(std::vector<column_def> key);
std::vector<column_def> with_table_groups(std::vector<column_def> key);
std::vector<column_def> with_table_lock_groups(std::vector<column_def> key);

}  // namespace pfs::reader::detail::table_columns
