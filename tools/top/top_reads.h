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

// Each read returns false with the server's message in error.
bool read_waits(PGconn* db, const std::string& schema, counters& out, std::string& error);
bool read_statements(PGconn* db, const std::string& schema, counters& out, std::string& error);
bool read_lock_waits(PGconn* db, const std::string& sys_schema, int limit, table& out, std::string& error);

}  // namespace pfs::top
