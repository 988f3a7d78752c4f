// Rows of a table of the current region (the agent's, in a test child) as maps
// column -> cell, for readable checks: scan("threads"), I(row, "thread_id").
#pragma once

#include <gtest/gtest.h>

#include <map>
#include <string>
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

// A bigint cell (-1 for NULL) and a text cell ("<NULL>").
inline std::int64_t I(const named_row& r, const char* c) { return r.at(c).null ? -1 : r.at(c).i; }
inline std::string S(const named_row& r, const char* c) { return r.at(c).null ? "<NULL>" : r.at(c).s; }

}  // namespace pfs::test
