// The table registry (agent/reader/tables.cpp) is the one description of every
// table. This test checks what follows from it elsewhere:
// - docs/tables.md's table list (between the "tables: begin/end" markers) is the
//   one the registry gives (PFS_README_RECORD=1 rewrites it after a change);
// - every write rule names columns the table has, and every column SQL writes has a
//   column rule (its domain and default);
// - ids and order agree, names are unique and lower case.
#include <gtest/gtest.h>

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "agent/reader/reader.h"

namespace {

using namespace pfs::reader;

std::string operations(const write_rules& w) {
  std::string out;
  auto add = [&out](const char* what) { out += (out.empty() ? "" : ", ") + std::string(what); };
  if (w.ops & kWriteUpdate) {
    std::string cols;
    for (const char* c : w.updatable)
      if (c != nullptr) cols += (cols.empty() ? "" : ", ") + std::string(c);
    add(("UPDATE (" + cols + ")").c_str());
  }
  if (w.ops & kWriteInsert) add("INSERT");
  if (w.ops & kWriteDelete) add("DELETE");
  if (w.ops & kWriteTruncate) add("TRUNCATE");
  return out.empty() ? "read only" : out;
}

std::string table_list() {
  std::ostringstream out;
  out << "| Table | Columns | Sized by | SQL may |\n|---|---|---|---|\n";
  for (const table_def& t : tables())
    out << "| `" << t.name << "` | " << t.columns.size() << " | "
        << (t.size_variable != nullptr ? "`" + std::string(t.size_variable) + "`" : std::string("fixed"))
        << " | " << operations(t.writes) << " |\n";
  return out.str();
}

TEST(Tables, ReadmeListsTheRegistry) {
  const std::string path = std::string(PFS_SOURCE_DIR) + "/docs/tables.md";
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << path;
  std::stringstream all;
  all << in.rdbuf();
  std::string readme = all.str();
  const std::string begin = "<!-- tables: begin -->\n", end = "<!-- tables: end -->";
  const std::size_t b = readme.find(begin), e = readme.find(end);
  ASSERT_NE(b, std::string::npos) << "docs/tables.md has no " << begin;
  ASSERT_NE(e, std::string::npos) << "docs/tables.md has no " << end;
  const std::string listed = readme.substr(b + begin.size(), e - b - begin.size());
  if (std::getenv("PFS_README_RECORD") != nullptr) {
    readme.replace(b + begin.size(), e - b - begin.size(), table_list());
    std::ofstream(path) << readme;
    GTEST_SKIP() << "rewrote the table list of " << path;
  }
  EXPECT_EQ(listed, table_list())
      << "docs/tables.md's table list is not the registry's: run test_tables with "
         "PFS_README_RECORD=1";
}

TEST(Tables, RulesNameColumnsOfTheirTable) {
  std::set<std::string> names;
  for (std::size_t i = 0; i < tables().size(); ++i) {
    const table_def& t = tables()[i];
    EXPECT_EQ(t.id, i);
    EXPECT_TRUE(names.insert(t.name).second) << t.name;
    for (const char* p = t.name; *p != '\0'; ++p) EXPECT_FALSE(std::isupper(static_cast<unsigned char>(*p)));
    for (const char* c : t.writes.keys) {
      if (c == nullptr) continue;
      EXPECT_GE(column_index(t, c), 0) << t.name << " key " << c;
    }
    for (const char* c : t.writes.updatable) {
      if (c == nullptr) continue;
      EXPECT_GE(column_index(t, c), 0) << t.name << " updatable " << c;
      EXPECT_NE(find_column_rule(c), nullptr) << t.name << " updatable " << c << " has no column rule";
    }
    if (t.writes.ops & (kWriteUpdate | kWriteDelete)) {
      EXPECT_NE(t.writes.keys[0], nullptr) << t.name;
    }
    if (t.writes.ops & kWriteTruncate) {
      EXPECT_NE(t.writes.truncate, 0u) << t.name;
    }
    if (t.writes.ops & kWriteInsert) {
      EXPECT_NE(t.writes.size_variable, nullptr) << t.name;
      for (const char* c : t.writes.keys) {
        if (c == nullptr) continue;
        EXPECT_NE(find_column_rule(c), nullptr) << t.name << " key " << c << " has no column rule";
      }
    }
  }
}

}  // namespace
