// pfs_top's reads over libpq: the counters it turns into rates (wait classes of
// events_waits_summary_global_by_event_name, digests of
// events_statements_summary_by_digest) and the lock waits running now.
#pragma once

#include <libpq-fe.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace pfs::top {

struct counter {
  std::string label;
  std::uint64_t count = 0;
  std::uint64_t picoseconds = 0;
};
using counters = std::map<std::string, counter>;  // by key (event name, schema + digest)

struct table {
  std::vector<std::string> columns;
  std::vector<std::vector<std::string>> rows;
};

// Each read returns false with the server's message in error (its first line, and
// its hint).
bool read_waits(PGconn* db, const std::string& schema, counters& out, std::string& error);
bool read_statements(PGconn* db, const std::string& schema, counters& out, std::string& error);
// Without the view sys_schema.lock_waits, error says to run perfschema_create_views
// (sys_schema, schema).
bool read_lock_waits(PGconn* db, const std::string& sys_schema, const std::string& schema, int limit,
                     table& out, std::string& error);

// "the program (pid 4711) has exited" when the status table of schema says that
// no region's provider is alive (one line for several: their pids); empty while
// one is, or when status cannot be read.
std::string exited_program(PGconn* db, const std::string& schema);

}  // namespace pfs::top
