#include "tools/top/top_views.h"

#include <utility>

namespace pfs::top {

namespace {

using k = column_kind;

// "schema.table", quoted as an identifier (the names come from the command line).
std::string quoted(const std::string& name) {
  std::string out = "\"";
  for (char c : name) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

// The queries name the schemas " S." and " Y." (each after a space).
std::string substitute(std::string sql, const std::string& schema, const std::string& sys_schema) {
  for (const auto& [from, to] : {std::pair<std::string, std::string>{" S.", " " + quoted(schema) + "."},
                                 std::pair<std::string, std::string>{" Y.", " " + quoted(sys_schema) + "."}})
    for (std::size_t at = 0; (at = sql.find(from, at)) != std::string::npos; at += to.size())
      sql.replace(at, from.size(), to);
  return sql;
}

}  // namespace

const std::vector<view>& views() {
  static const std::vector<view> all = {
      {'1',
       "waits",
       "Waits by event name (events_waits_summary_global_by_event_name)",
       {{"event name"},
        {"count/s", k::per_second},
        {"time/s", k::time_per_second},
        {"avg", k::time},
        {"count", k::number}},
       2,
       true,
       "histogram (events_waits_histogram_global_by_event_name)"},
      {'2',
       "locks",
       "Lock waits now and their holders (lock_waits; a wait cycle in red, marked *)",
       {{"age", k::time},
        {"lock"},
        {"waiting"},
        {"waits at"},
        {"holder"},
        {"holder took it at"},
        {"held", k::time}},
       0,
       false,
       "holders of this lock (lock_waits, threads)"},
      {'3',
       "statements",
       "Statements by digest (events_statements_summary_by_digest)",
       {{"digest text"},
        {"count/s", k::per_second},
        {"time/s", k::time_per_second},
        {"avg", k::time},
        {"p95", k::time},
        {"p99", k::time},
        {"count", k::number}},
       2,
       true,
       "histogram (events_statements_histogram_by_digest)"},
      {'4',
       "files",
       "Files by instance (file_summary_by_instance)",
       {{"file"},
        {"reads/s", k::per_second},
        {"read B/s", k::per_second},
        {"writes/s", k::per_second},
        {"write B/s", k::per_second},
        {"time/s", k::time_per_second},
        {"read B", k::number},
        {"written B", k::number}},
       5,
       false,
       ""},
      {'5',
       "threads",
       "Threads with their current statement, stage and wait (threads, events_*_current)",
       {{"thread", k::number}, {"name"}, {"statement"}, {"stage"}, {"wait"}},
       0,
       false,
       "history (events_statements/stages/waits_history)"},
      {'6',
       "processes",
       "Processes of a region directory (status, summaries by process_id)",
       {{"pid", k::number},
        {"program"},
        {"alive"},
        {"waits/s", k::per_second},
        {"statements/s", k::per_second},
        {"waits", k::number}},
       3,
       false,
       "top waits of this process"},
      {'7',
       "memory",
       "Memory by event name (memory_summary_global_by_event_name)",
       {{"event name"},
        {"allocs/s", k::per_second},
        {"current bytes", k::number},
        {"high bytes", k::number},
        {"allocs", k::number}},
       2,
       false,
       "by thread (memory_summary_by_thread_by_event_name)"},
  };
  return all;
}

const view* find_view(const std::string& key_or_name) {
  for (const view& v : views())
    if (key_or_name == v.name || key_or_name == std::string(1, v.key)) return &v;
  return nullptr;
}

std::string view_sql(const view& v, const std::string& schema, const std::string& sys_schema) {
  std::string sql;
  switch (v.key) {
    case '1':
      sql =
          "SELECT event_name, event_name, count_star, sum_timer_wait, avg_timer_wait, count_star "
          "FROM S.events_waits_summary_global_by_event_name WHERE count_star > 0";
      break;
    case '2':
      sql =
          "SELECT locked_lock, wait_age, locked_lock, waiting_thread_id, waiting_source, blocking_thread_id, "
          "blocking_lock_source, blocking_lock_held FROM Y.x$lock_waits";
      break;
    case '3':
      sql =
          "SELECT coalesce(digest, ''), coalesce(digest_text, '-'), count_star, sum_timer_wait, "
          "avg_timer_wait, "
          "quantile_95, quantile_99, count_star FROM S.events_statements_summary_by_digest";
      break;
    case '4':
      sql =
          "SELECT file_name || ' ' || object_instance_begin, file_name, count_read, "
          "sum_number_of_bytes_read, "
          "count_write, sum_number_of_bytes_write, sum_timer_wait, sum_number_of_bytes_read, "
          "sum_number_of_bytes_write FROM S.file_summary_by_instance";
      break;
    case '5':
      // Each current table holds a thread's latest events (a statement's nesting
      // too): the latest per thread, joined by hash (not per thread: a nested loop
      // would read the region again for every thread; docs/sql.md).
      sql =
          "WITH st AS (SELECT DISTINCT ON (thread_id) thread_id, coalesce(sql_text, event_name) "
          "|| CASE WHEN end_event_id IS NULL THEN '' ELSE ' (done)' END AS s "
          "FROM S.events_statements_current ORDER BY thread_id, event_id DESC), "
          "sg AS (SELECT DISTINCT ON (thread_id) thread_id, event_name "
          "|| CASE WHEN end_event_id IS NULL THEN '' ELSE ' (done)' END AS s "
          "FROM S.events_stages_current ORDER BY thread_id, event_id DESC), "
          "w AS (SELECT DISTINCT ON (thread_id) thread_id, event_name AS s FROM S.events_waits_current "
          "WHERE end_event_id IS NULL ORDER BY thread_id, event_id DESC) "
          "SELECT t.thread_id, t.thread_id, t.name, coalesce(st.s, '-'), coalesce(sg.s, '-'), coalesce(w.s, "
          "'-') "
          "FROM S.threads t LEFT JOIN st USING (thread_id) LEFT JOIN sg USING (thread_id) "
          "LEFT JOIN w USING (thread_id)";
      break;
    case '6':
      sql =
          "WITH w AS (SELECT process_id, sum(count_star) AS n FROM "
          "S.events_waits_summary_global_by_event_name "
          "GROUP BY process_id), "
          "st AS (SELECT process_id, sum(count_star) AS n FROM "
          "S.events_statements_summary_global_by_event_name "
          "GROUP BY process_id) "
          "SELECT s.process_id, s.process_id, s.program, CASE WHEN s.variable_value = 1 THEN 'yes' ELSE 'no "
          "(exited)' END, coalesce(w.n, 0), coalesce(st.n, 0), coalesce(w.n, 0) FROM S.status s "
          "LEFT JOIN w USING (process_id) LEFT JOIN st USING (process_id) "
          "WHERE s.variable_name = 'provider_alive'";
      break;
    case '7':
      sql =
          "SELECT event_name, event_name, count_alloc, current_number_of_bytes_used, "
          "high_number_of_bytes_used, "
          "count_alloc FROM S.memory_summary_global_by_event_name WHERE count_alloc > 0";
      break;
  }
  return substitute(sql, schema, sys_schema);
}

std::string detail_sql(const view& v, const std::string& schema, const std::string& sys_schema) {
  std::string sql;
  switch (v.key) {
    case '1':
      sql =
          "SELECT bucket_timer_low AS low_ps, bucket_timer_high AS high_ps, count_bucket AS count, "
          "bucket_quantile AS quantile FROM S.events_waits_histogram_global_by_event_name "
          "WHERE event_name = $1 AND count_bucket > 0 ORDER BY bucket_number";
      break;
    case '2':
      sql =
          "SELECT l.blocking_thread_id AS holder, t.name AS thread, l.blocking_lock_source AS took_it_at, "
          "l.blocking_lock_held AS held_ps, count(*) AS waiters FROM Y.x$lock_waits l "
          "LEFT JOIN S.threads t ON t.thread_id = l.blocking_thread_id WHERE l.locked_lock = $1 "
          "GROUP BY 1, 2, 3, 4 ORDER BY 1";
      break;
    case '3':
      sql =
          "SELECT bucket_timer_low AS low_ps, bucket_timer_high AS high_ps, count_bucket AS count, "
          "bucket_quantile AS quantile FROM S.events_statements_histogram_by_digest "
          "WHERE digest = $1 AND count_bucket > 0 ORDER BY bucket_number";
      break;
    case '5':
      sql =
          "SELECT * FROM (SELECT event_id, 'statement' AS kind, coalesce(sql_text, event_name) AS event, "
          "timer_wait AS time_ps FROM S.events_statements_history WHERE thread_id = $1::bigint "
          "UNION ALL SELECT event_id, 'stage', event_name, timer_wait FROM S.events_stages_history "
          "WHERE thread_id = $1::bigint UNION ALL SELECT event_id, 'wait', event_name, timer_wait "
          "FROM S.events_waits_history WHERE thread_id = $1::bigint) h ORDER BY event_id DESC LIMIT 60";
      break;
    case '6':
      sql =
          "SELECT event_name, count_star, sum_timer_wait AS time_ps FROM "
          "S.events_waits_summary_global_by_event_name WHERE process_id = $1::bigint AND count_star > 0 "
          "ORDER BY sum_timer_wait DESC LIMIT 40";
      break;
    case '7':
      sql =
          "SELECT thread_id, count_alloc, current_number_of_bytes_used AS current_bytes, "
          "high_number_of_bytes_used AS high_bytes FROM S.memory_summary_by_thread_by_event_name "
          "WHERE event_name = $1 AND count_alloc > 0 ORDER BY current_number_of_bytes_used DESC LIMIT 40";
      break;
    default:
      return {};
  }
  return substitute(sql, schema, sys_schema);
}

}  // namespace pfs::top
