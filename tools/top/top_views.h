// pfs_top's views: what each number key shows, the SQL that reads it (over the
// imported perfschema tables and perfschema_create_views' sys views), which columns
// are counters shown per second, and the SQL of a row's detail (Enter).
#pragma once

#include <string>
#include <vector>

namespace pfs::top {

enum class column_kind {
  text,
  number,      // as read
  per_second,  // a counter: its growth since the previous read, per second
  time,        // picoseconds as read, shown like format_pico_time
  time_per_second,
};

struct column {
  std::string title;
  column_kind kind = column_kind::text;
};

struct view {
  char key;                     // '1'..'7'
  std::string name;             // --view NAME
  std::string title;            // the screen's title line, with the table read
  std::vector<column> columns;  // of the SQL's columns after the first (the row's key)
  int sort_column = 0;          // default sort, descending
  bool active_only = false;     // rows whose counters did not grow are left out
  std::string detail_title;     // what Enter shows; empty: no detail
};

const std::vector<view>& views();
const view* find_view(const std::string& key_or_name);

// The view's query: its first column is the row's key (hidden when it repeats a
// shown column). schema: the imported tables; sys_schema: perfschema_create_views'.
std::string view_sql(const view& v, const std::string& schema, const std::string& sys_schema);
// The detail's query: $1 is the row's key.
std::string detail_sql(const view& v, const std::string& schema, const std::string& sys_schema);

}  // namespace pfs::top
