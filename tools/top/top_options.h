// pfs_top's command line: psql's connection options (-h -p -U -d; what is not
// given comes from PGHOST, PGPORT, PGUSER, PGDATABASE... as libpq reads them),
// the schemas, top's -n/-b, and the view to show (--view).
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pfs::top {

struct options {
  std::vector<std::pair<std::string, std::string>> connection;  // libpq keyword, value
  std::string schema = "ps";                                    // the imported perfschema tables
  std::string sys_schema = "sys";                               // perfschema_create_views' views (lock_waits)
  int iterations = 0;                                           // 0: until interrupted
  bool batch = false;                                           // plain text, no screen control
  int top = 10;                                                 // rows per refresh in batch mode
  double interval = 1.0;                                        // seconds between reads
  bool print_sql = false;      // --sql: print the view's query and exit (bench/fdw_small_queries.sh)
  std::string view = "waits";  // --view: the first view shown
};

// The options, or nullopt after printing an error or the usage (help set then).
std::optional<options> parse_options(int argc, char** argv, bool& help);

}  // namespace pfs::top
