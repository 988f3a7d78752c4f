// The shared column lists of the table registry (see table_columns.h).
#include "agent/reader/internal/table_columns.h"

namespace pfs::reader::detail::table_columns {
namespace {

// Stat groups other than STAR: count_x, sum_timer_x, min_timer_x, avg_timer_x,
// max_timer_x (column_def holds the name as a const char*: literals only).
enum group_id {
  kGroupRead,
  kGroupWrite,
  kGroupMisc,
  kGroupFetch,
  kGroupInsert,
  kGroupUpdate,
  kGroupDelete,
  // Table lock kinds, in table_lock_waits_summary_by_table's order.
  kGroupReadNormal,
  kGroupReadWithSharedLocks,
  kGroupReadHighPriority,
  kGroupReadNoInsert,
  kGroupReadExternal,
  kGroupWriteAllowWrite,
  kGroupWriteConcurrentInsert,
  kGroupWriteLowPriority,
  kGroupWriteNormal,
  kGroupWriteExternal,
};
constexpr const char* kGroupColumns[][5] = {
    {"count_read", "sum_timer_read", "min_timer_read", "avg_timer_read", "max_timer_read"},
    {"count_write", "sum_timer_write", "min_timer_write", "avg_timer_write", "max_timer_write"},
    {"count_misc", "sum_timer_misc", "min_timer_misc", "avg_timer_misc", "max_timer_misc"},
    {"count_fetch", "sum_timer_fetch", "min_timer_fetch", "avg_timer_fetch", "max_timer_fetch"},
    {"count_insert", "sum_timer_insert", "min_timer_insert", "avg_timer_insert", "max_timer_insert"},
    {"count_update", "sum_timer_update", "min_timer_update", "avg_timer_update", "max_timer_update"},
    {"count_delete", "sum_timer_delete", "min_timer_delete", "avg_timer_delete", "max_timer_delete"},
    {"count_read_normal", "sum_timer_read_normal", "min_timer_read_normal", "avg_timer_read_normal",
     "max_timer_read_normal"},
    {"count_read_with_shared_locks", "sum_timer_read_with_shared_locks", "min_timer_read_with_shared_locks",
     "avg_timer_read_with_shared_locks", "max_timer_read_with_shared_locks"},
    {"count_read_high_priority", "sum_timer_read_high_priority", "min_timer_read_high_priority",
     "avg_timer_read_high_priority", "max_timer_read_high_priority"},
    {"count_read_no_insert", "sum_timer_read_no_insert", "min_timer_read_no_insert",
     "avg_timer_read_no_insert", "max_timer_read_no_insert"},
    {"count_read_external", "sum_timer_read_external", "min_timer_read_external", "avg_timer_read_external",
     "max_timer_read_external"},
    {"count_write_allow_write", "sum_timer_write_allow_write", "min_timer_write_allow_write",
     "avg_timer_write_allow_write", "max_timer_write_allow_write"},
    {"count_write_concurrent_insert", "sum_timer_write_concurrent_insert",
     "min_timer_write_concurrent_insert", "avg_timer_write_concurrent_insert",
     "max_timer_write_concurrent_insert"},
    {"count_write_low_priority", "sum_timer_write_low_priority", "min_timer_write_low_priority",
     "avg_timer_write_low_priority", "max_timer_write_low_priority"},
    {"count_write_normal", "sum_timer_write_normal", "min_timer_write_normal", "avg_timer_write_normal",
     "max_timer_write_normal"},
    {"count_write_external", "sum_timer_write_external", "min_timer_write_external",
     "avg_timer_write_external", "max_timer_write_external"},
};

void add_group(std::vector<column_def>& cols, group_id g) {
  for (const char* n : kGroupColumns[g]) cols.push_back(S(n));
}

}  // namespace

std::vector<column_def> stage_columns() {
  return {I("thread_id"),
          I("event_id"),
          I("end_event_id", true),
          T("event_name"),
          T("source", true),
          I("timer_start", true),
          I("timer_end", true),
          I("timer_wait", true),
          I("work_completed", true),
          I("work_estimated", true),
          I("nesting_event_id", true),
          T("nesting_event_type", true)};
}

std::vector<column_def> statement_columns() {
  std::vector<column_def> c = {I("thread_id"),
                               I("event_id"),
                               I("end_event_id", true),
                               T("event_name"),
                               T("source", true),
                               I("timer_start", true),
                               I("timer_end", true),
                               I("timer_wait", true),
                               I("lock_time"),
                               T("sql_text", true),
                               T("digest", true),
                               T("digest_text", true),
                               T("current_schema", true),
                               T("object_type", true),
                               T("object_schema", true),
                               T("object_name", true),
                               I("object_instance_begin", true),
                               I("mysql_errno", true),
                               T("returned_sqlstate", true),
                               T("message_text", true),
                               I("errors"),
                               I("warnings"),
                               I("rows_affected"),
                               I("rows_sent"),
                               I("rows_examined")};
  for (const char* n :
       {"created_tmp_disk_tables", "created_tmp_tables", "select_full_join", "select_full_range_join",
        "select_range", "select_range_check", "select_scan", "sort_merge_passes", "sort_range", "sort_rows",
        "sort_scan", "no_index_used", "no_good_index_used"})
    c.push_back(I(n));
  for (const column_def& d : {I("nesting_event_id", true), T("nesting_event_type", true),
                              I("nesting_event_level", true), I("statement_id", true), I("cpu_time"),
                              I("max_controlled_memory"), I("max_total_memory"), T("execution_engine", true)})
    c.push_back(d);
  // Beyond MySQL: the caller's W3C trace context (pfs_statement_set_traceparent).
  c.push_back(T("trace_id", true));
  c.push_back(T("parent_span_id", true));
  return c;
}

std::vector<column_def> transaction_columns() {
  return {I("thread_id"), I("event_id"), I("end_event_id", true), T("event_name"), T("state", true),
          I("trx_id", true), T("gtid", true), I("xid_format_id", true), T("xid_gtrid", true),
          T("xid_bqual", true), T("xa_state", true), T("source", true), I("timer_start", true),
          I("timer_end", true), I("timer_wait", true), T("access_mode", true), T("isolation_level", true),
          T("autocommit"), I("number_of_savepoints", true), I("number_of_rollback_to_savepoint", true),
          I("number_of_release_savepoint", true), I("object_instance_begin", true),
          I("nesting_event_id", true), T("nesting_event_type", true),
          // Beyond MySQL: the caller's W3C trace context (pfs_transaction_set_traceparent).
          T("trace_id", true), T("parent_span_id", true)};
}

// The statement statistics after count_star ... max_timer_wait (MySQL 8.0.3x order).
std::vector<column_def> with_statement_stats(std::vector<column_def> key) {
  key = with_stats(std::move(key));
  for (const char* n : {"sum_lock_time",
                        "sum_errors",
                        "sum_warnings",
                        "sum_rows_affected",
                        "sum_rows_sent",
                        "sum_rows_examined",
                        "sum_created_tmp_disk_tables",
                        "sum_created_tmp_tables",
                        "sum_select_full_join",
                        "sum_select_full_range_join",
                        "sum_select_range",
                        "sum_select_range_check",
                        "sum_select_scan",
                        "sum_sort_merge_passes",
                        "sum_sort_range",
                        "sum_sort_rows",
                        "sum_sort_scan",
                        "sum_no_index_used",
                        "sum_no_good_index_used",
                        "sum_cpu_time",
                        "max_controlled_memory",
                        "max_total_memory",
                        "count_secondary"})
    key.push_back(S(n));
  return key;
}

std::vector<column_def> with_transaction_stats(std::vector<column_def> key) {
  key = with_stats(std::move(key));
  for (const char* n :
       {"count_read_write", "sum_timer_read_write", "min_timer_read_write", "avg_timer_read_write",
        "max_timer_read_write", "count_read_only", "sum_timer_read_only", "min_timer_read_only",
        "avg_timer_read_only", "max_timer_read_only"})
    key.push_back(S(n));
  return key;
}

std::vector<column_def> with_buckets(std::vector<column_def> key) {
  for (const column_def& d : {I("bucket_number"), I("bucket_timer_low"), I("bucket_timer_high"),
                              I("count_bucket"), I("count_bucket_and_lower"), F("bucket_quantile")})
    key.push_back(d);
  return key;
}

std::vector<column_def> wait_columns() {
  return {I("thread_id"), I("event_id"), I("end_event_id", true), T("event_name"), T("source", true),
          I("timer_start", true), I("timer_end", true), I("timer_wait", true), I("spins", true),
          T("object_schema", true), T("object_name", true), T("index_name", true), T("object_type", true),
          I("object_instance_begin"), I("nesting_event_id", true), T("nesting_event_type", true),
          T("operation", true), I("number_of_bytes", true), I("flags"),
          // Beyond MySQL: who made the thread wait (docs/design.md, "Who blocks whom").
          I("blocking_thread_id", true), I("blocking_event_id", true), I("signalling_thread_id", true)};
}

std::vector<column_def> with_stats(std::vector<column_def> key) {
  for (const char* n : {"count_star", "sum_timer_wait", "min_timer_wait", "avg_timer_wait", "max_timer_wait"})
    key.push_back(S(n));
  return key;
}

// events_errors_summary_*: the error, its counts and when it was seen (MySQL 8.0).
std::vector<column_def> with_errors(std::vector<column_def> key) {
  for (const column_def& d :
       {I("error_number", true), T("error_name", true), T("sql_state", true), S("sum_error_raised"),
        S("sum_error_handled"), TS("first_seen", true), TS("last_seen", true)})
    key.push_back(d);
  return key;
}

// memory_summary_*: the counts and the low/current/high marks (MySQL 8.0 order).
std::vector<column_def> with_memory(std::vector<column_def> key) {
  for (const char* n : {"count_alloc", "count_free", "sum_number_of_bytes_alloc", "sum_number_of_bytes_free"})
    key.push_back(S(n));
  for (const char* n : {"low_count_used", "current_count_used", "high_count_used", "low_number_of_bytes_used",
                        "current_number_of_bytes_used", "high_number_of_bytes_used"})
    key.push_back(I(n));
  return key;
}

// file_summary_*: STAR, READ + bytes, WRITE + bytes, MISC (MySQL 8 column order).
std::vector<column_def> with_file_groups(std::vector<column_def> key) {
  key = with_stats(std::move(key));
  add_group(key, kGroupRead);
  key.push_back(I("sum_number_of_bytes_read"));
  add_group(key, kGroupWrite);
  key.push_back(I("sum_number_of_bytes_write"));
  add_group(key, kGroupMisc);
  return key;
}

// table_io_waits_summary_*: STAR, READ, WRITE, FETCH, INSERT, UPDATE, DELETE.
std::vector<column_def> with_table_groups(std::vector<column_def> key) {
  key = with_stats(std::move(key));
  for (group_id g : {kGroupRead, kGroupWrite, kGroupFetch, kGroupInsert, kGroupUpdate, kGroupDelete})
    add_group(key, g);
  return key;
}

// table_lock_waits_summary_by_table (MySQL 8.0's table_tlws_by_table.cc): STAR,
// READ, WRITE, then each kind, the read kinds first.
std::vector<column_def> with_table_lock_groups(std::vector<column_def> key) {
  key = with_stats(std::move(key));
  for (int g = kGroupRead; g <= kGroupWrite; ++g) add_group(key, static_cast<group_id>(g));
  for (int g = kGroupReadNormal; g <= kGroupWriteExternal; ++g) add_group(key, static_cast<group_id>(g));
  return key;
}

}  // namespace pfs::reader::detail::table_columns
