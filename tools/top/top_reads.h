// pfs_top's reads over libpq: a view's rows, a row's detail, whether the sys views
// exist, and whether the program has exited.
#pragma once

#include <libpq-fe.h>

#include <string>
#include <vector>

namespace pfs::top {

struct table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;  // NULL as "-"
};

// The rows of sql ($1 = parameter when given). False with the server's message in
// error (its first line and its hint, not "LINE 1:" and a caret).
bool read_rows(PGconn* db, const std::string& sql, const std::string* parameter, table& out,
               std::string& error);

// Empty when sys_schema has perfschema_create_views' views; otherwise what to run.
std::string missing_views(PGconn* db, const std::string& sys_schema, const std::string& schema);

// "the program (pid 4711) has exited" when the status table of schema says that
// no region's provider is alive (one line for several: their pids); empty while
// one is, or when status cannot be read.
std::string exited_program(PGconn* db, const std::string& schema);

}  // namespace pfs::top
