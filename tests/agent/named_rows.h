// Rows of a table of the current region (the agent's, in a test child) as maps
// column -> cell, for readable checks: scan("threads"), I(row, "thread_id").
#pragma once

#include <gtest/gtest.h>

#include <initializer_list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/provider/pfs.h"
#include "agent/reader/reader.h"

namespace pfs::test {

using named_row = std::map<std::string, reader::cell>;

inline std::vector<named_row> scan(const char* table) {
  region_error err;
  auto r = reader::region_reader::open(current_region()->path(), false, err);
  EXPECT_TRUE(r) << err.message;
  if (!r) return {};
  const reader::table_def* t = reader::find_table(table);
  EXPECT_NE(t, nullptr) << table;
  if (t == nullptr) return {};
  std::vector<reader::row> rows;
  EXPECT_FALSE(r->scan(*t, rows));
  std::vector<named_row> out;
  for (const auto& row : rows) {
    named_row m;
    for (std::size_t c = 0; c < t->columns.size(); ++c) m[t->columns[c].name] = row[c];
    out.push_back(std::move(m));
  }
  return out;
}

// The rows of a table scanned for the named columns only (the sink's wanted
// columns, as the FDW asks for the columns a query reads): those columns are
// filled, the others come back NULL or computed.
inline std::vector<named_row> scan_columns(const char* table, std::initializer_list<const char*> columns) {
  region_error err;
  auto r = reader::region_reader::open(current_region()->path(), false, err);
  EXPECT_TRUE(r) << err.message;
  const reader::table_def* t = reader::find_table(table);
  EXPECT_NE(t, nullptr) << table;
  if (!r || t == nullptr) return {};
  struct sink final : reader::row_sink {
    const reader::table_def* t = nullptr;
    std::vector<named_row> rows;
    bool row(const reader::cell_view* cells, std::size_t n) override {
      named_row m;
      for (std::size_t c = 0; c < n; ++c) {
        reader::cell& x = m[t->columns[c].name];
        x.null = cells[c].null;
        x.i = cells[c].i;
        x.s = std::string(cells[c].s);
      }
      rows.push_back(std::move(m));
      return true;
    }
  } out;
  out.t = t;
  std::unique_ptr<bool[]> wanted(new bool[t->columns.size()]());
  for (const char* c : columns)
    for (std::size_t k = 0; k < t->columns.size(); ++k)
      if (std::string_view(t->columns[k].name) == c) wanted[k] = true;
  out.wanted = wanted.get();
  EXPECT_FALSE(r->scan(*t, out));
  return std::move(out.rows);
}

// A bigint cell (-1 for NULL) and a text cell ("<NULL>").
inline std::int64_t I(const named_row& r, const char* c) { return r.at(c).null ? -1 : r.at(c).i; }
inline std::string S(const named_row& r, const char* c) { return r.at(c).null ? "<NULL>" : r.at(c).s; }

// A status variable's value (the lost counters), -1 when the table has no such row.
inline std::int64_t status_value(const char* name) {
  for (const auto& r : scan("status"))
    if (S(r, "variable_name") == name) return I(r, "variable_value");
  return -1;
}

}  // namespace pfs::test
