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

// True when out holds rows; otherwise error says why.
bool rows_or_error(PGconn* db, const result& out, std::string& error) {
  if (PQresultStatus(out.get()) == PGRES_TUPLES_OK) return true;
  // The primary message and the hint, on one line (not "LINE 1: ..." and a caret,
  // which a screen line cuts off); libpq's own message when the server sent none.
  const char* primary = PQresultErrorField(out.get(), PG_DIAG_MESSAGE_PRIMARY);
  const char* hint = PQresultErrorField(out.get(), PG_DIAG_MESSAGE_HINT);
  error = primary != nullptr ? primary : PQerrorMessage(db);
  if (hint != nullptr) error += std::string(" (") + hint + ")";
  while (!error.empty() && error.back() == '\n') error.pop_back();
  if (const auto nl = error.find('\n'); nl != std::string::npos) error.resize(nl);
  return false;
}

bool run(PGconn* db, const std::string& sql, result& out, std::string& error) {
  out.reset(PQexec(db, sql.c_str()));
  return rows_or_error(db, out, error);
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

}  // namespace

bool read_rows(PGconn* db, const std::string& sql, const std::string* parameter, table& out,
               std::string& error) {
  result r(nullptr, &PQclear);
  if (parameter == nullptr) {
    if (!run(db, sql, r, error)) return false;
  } else {
    const char* values[] = {parameter->c_str()};
    r.reset(PQexecParams(db, sql.c_str(), 1, nullptr, values, nullptr, nullptr, 0));
    if (!rows_or_error(db, r, error)) return false;
  }
  out.columns.clear();
  out.rows.clear();
  for (int c = 0; c < PQnfields(r.get()); ++c) out.columns.emplace_back(PQfname(r.get(), c));
  for (int i = 0; i < PQntuples(r.get()); ++i) {
    std::vector<std::string> row;
    for (int c = 0; c < PQnfields(r.get()); ++c)
      row.emplace_back(PQgetisnull(r.get(), i, c) ? "-" : PQgetvalue(r.get(), i, c));
    out.rows.push_back(std::move(row));
  }
  return true;
}

std::string missing_views(PGconn* db, const std::string& sys_schema, const std::string& schema) {
  result r(nullptr, &PQclear);
  std::string error;
  if (!run(db,
           "SELECT to_regclass(" + literal(db, identifier(db, sys_schema) + ".\"x$lock_waits\"") +
               ") IS NOT NULL",
           r, error))
    return error;
  if (PQntuples(r.get()) == 1 && std::string_view(PQgetvalue(r.get(), 0, 0)) == "t") return {};
  return "no view " + identifier(db, sys_schema) + ".lock_waits: run SELECT perfschema_create_views(" +
         literal(db, sys_schema) + ", " + literal(db, schema) + ") to make the sys views, or give -S";
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
