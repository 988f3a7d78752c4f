#include "tools/top/top_reads.h"

#include <cstdlib>
#include <memory>

namespace pfs::top {

namespace {

using result = std::unique_ptr<PGresult, decltype(&PQclear)>;

std::string identifier(PGconn* db, const std::string& name) {
  char* quoted = PQescapeIdentifier(db, name.c_str(), name.size());
  if (quoted == nullptr) return "\"\"";
  std::string out = quoted;
  PQfreemem(quoted);
  return out;
}

bool run(PGconn* db, const std::string& sql, result& out, std::string& error) {
  out.reset(PQexec(db, sql.c_str()));
  if (PQresultStatus(out.get()) == PGRES_TUPLES_OK) return true;
  error = PQerrorMessage(db);
  while (!error.empty() && error.back() == '\n') error.pop_back();
  return false;
}

std::uint64_t number(const PGresult* r, int row, int column) {
  return PQgetisnull(r, row, column) ? 0 : std::strtoull(PQgetvalue(r, row, column), nullptr, 10);
}

// Rows of (key, label, count, picoseconds).
bool read_counters(PGconn* db, const std::string& sql, counters& out, std::string& error) {
  result r(nullptr, &PQclear);
  if (!run(db, sql, r, error)) return false;
  out.clear();
  for (int i = 0; i < PQntuples(r.get()); ++i)
    out[PQgetvalue(r.get(), i, 0)] =
        counter{PQgetvalue(r.get(), i, 1), number(r.get(), i, 2), number(r.get(), i, 3)};
  return true;
}

}  // namespace

bool read_waits(PGconn* db, const std::string& schema, counters& out, std::string& error) {
  return read_counters(db,
                       "SELECT event_name, event_name, count_star, sum_timer_wait FROM " +
                           identifier(db, schema) +
                           ".events_waits_summary_global_by_event_name WHERE count_star > 0",
                       out, error);
}

bool read_statements(PGconn* db, const std::string& schema, counters& out, std::string& error) {
  return read_counters(db,
                       "SELECT coalesce(schema_name, '') || '/' || coalesce(digest, ''), "
                       "coalesce(digest_text, '(no digest)'), count_star, sum_timer_wait FROM " +
                           identifier(db, schema) +
                           ".events_statements_summary_by_digest WHERE count_star > 0",
                       out, error);
}

bool read_lock_waits(PGconn* db, const std::string& sys_schema, int limit, table& out, std::string& error) {
  result r(nullptr, &PQclear);
  if (!run(db,
           "SELECT wait_age, locked_lock, waiting_thread_id, waiting_source, blocking_thread_id, "
           "blocking_lock_source, blocking_lock_held FROM " +
               identifier(db, sys_schema) + ".lock_waits LIMIT " + std::to_string(limit),
           r, error))
    return false;
  out.columns = {"age", "lock", "waiting", "waits at", "holder", "holder took it at", "held"};
  out.rows.clear();
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(r.get()); ++c)
      row.emplace_back(PQgetisnull(r.get(), i, c) ? "-" : PQgetvalue(r.get(), i, c));
    out.rows.push_back(std::move(row));
  }
  return true;
}

}  // namespace pfs::top
