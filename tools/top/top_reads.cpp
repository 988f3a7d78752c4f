#include "tools/top/top_reads.h"

#include <cstdlib>
#include <memory>
#include <string_view>

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
  // The primary message and the hint, on one line (not "LINE 1: ..." and a caret,
  // which a screen line cuts off); libpq's own message when the server sent none.
  const char* primary = PQresultErrorField(out.get(), PG_DIAG_MESSAGE_PRIMARY);
  const char* hint = PQresultErrorField(out.get(), PG_DIAG_MESSAGE_HINT);
  error = primary != nullptr ? primary : PQerrorMessage(db);
  if (hint != nullptr) error += std::string(" (") + hint + ")";
  while (!error.empty() && error.back() == '\n') error.pop_back();
  return false;
}

std::string literal(PGconn* db, const std::string& s) {
  char* quoted = PQescapeLiteral(db, s.c_str(), s.size());
  if (quoted == nullptr) return "''";
  std::string out = quoted;
  PQfreemem(quoted);
  return out;
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

bool read_lock_waits(PGconn* db, const std::string& sys_schema, const std::string& schema, int limit,
                     table& out, std::string& error) {
  result r(nullptr, &PQclear);
  std::string missing;
  if (run(db, "SELECT to_regclass(" + literal(db, identifier(db, sys_schema) + ".lock_waits") + ") IS NULL",
          r, missing) &&
      PQntuples(r.get()) == 1 && std::string_view(PQgetvalue(r.get(), 0, 0)) == "t") {
    error = "no view " + identifier(db, sys_schema) + ".lock_waits: run SELECT perfschema_create_views(" +
            literal(db, sys_schema) + ", " + literal(db, schema) + ") to make the sys views, or give -S";
    return false;
  }
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

std::string exited_program(PGconn* db, const std::string& schema) {
  result r(nullptr, &PQclear);
  std::string error;
  if (!run(db,
           "SELECT max(variable_value) FILTER (WHERE variable_name = 'provider_alive'), "
           "string_agg(variable_value::text, ', ' ORDER BY variable_value) FILTER (WHERE variable_name = "
           "'pid'), "
           "count(*) FILTER (WHERE variable_name = 'pid') FROM " +
               identifier(db, schema) + ".status WHERE variable_name IN ('provider_alive', 'pid')",
           r, error) ||
      PQntuples(r.get()) != 1 || PQgetisnull(r.get(), 0, 0) || number(r.get(), 0, 0) != 0)
    return {};
  const std::string pids = PQgetisnull(r.get(), 0, 1) ? "?" : PQgetvalue(r.get(), 0, 1);
  return number(r.get(), 0, 2) > 1 ? "the programs (pids " + pids + ") have exited"
                                   : "the program (pid " + pids + ") has exited";
}

}  // namespace pfs::top
