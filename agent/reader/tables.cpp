// The table registry: every table's name and columns (MySQL's names and order, in
// lower case), in table_id order.
#include "agent/reader/reader_internal.h"

namespace pfs::reader::detail {
namespace {

constexpr column_def I(const char* name, bool nullable = false) {
  return {name, column_type::int64, nullable};
}
constexpr column_def T(const char* name, bool nullable = false) {
  return {name, column_type::text, nullable};
}

std::vector<column_def> wait_columns() {
  return {I("thread_id"),
          I("event_id"),
          I("end_event_id", true),
          T("event_name"),
          T("source", true),
          I("timer_start", true),
          I("timer_end", true),
          I("timer_wait", true),
          I("spins", true),
          T("object_schema", true),
          T("object_name", true),
          T("index_name", true),
          T("object_type", true),
          I("object_instance_begin"),
          I("nesting_event_id", true),
          T("nesting_event_type", true),
          T("operation", true),
          I("number_of_bytes", true),
          I("flags")};
}

std::vector<column_def> with_stats(std::vector<column_def> key) {
  for (const char* n : {"count_star", "sum_timer_wait", "min_timer_wait", "avg_timer_wait", "max_timer_wait"})
    key.push_back(I(n));
  return key;
}

// Stat groups other than STAR: count_x, sum_timer_x, min_timer_x, avg_timer_x,
// max_timer_x (column_def holds the name as a const char*: literals only).
enum group_id { kGroupRead, kGroupWrite, kGroupMisc, kGroupFetch, kGroupInsert, kGroupUpdate, kGroupDelete };
constexpr const char* kGroupColumns[][5] = {
    {"count_read", "sum_timer_read", "min_timer_read", "avg_timer_read", "max_timer_read"},
    {"count_write", "sum_timer_write", "min_timer_write", "avg_timer_write", "max_timer_write"},
    {"count_misc", "sum_timer_misc", "min_timer_misc", "avg_timer_misc", "max_timer_misc"},
    {"count_fetch", "sum_timer_fetch", "min_timer_fetch", "avg_timer_fetch", "max_timer_fetch"},
    {"count_insert", "sum_timer_insert", "min_timer_insert", "avg_timer_insert", "max_timer_insert"},
    {"count_update", "sum_timer_update", "min_timer_update", "avg_timer_update", "max_timer_update"},
    {"count_delete", "sum_timer_delete", "min_timer_delete", "avg_timer_delete", "max_timer_delete"},
};

void add_group(std::vector<column_def>& cols, group_id g) {
  for (const char* n : kGroupColumns[g]) cols.push_back(I(n));
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

}  // namespace

std::vector<table_def> build_tables() {
  std::vector<table_def> t;
  auto add = [&t](table_id id, const char* name, std::vector<column_def> cols) {
    t.push_back(table_def{name, std::move(cols), static_cast<std::uint32_t>(id)});
  };
  add(table_id::setup_instruments, "setup_instruments",
      {T("name"), T("enabled"), T("timed"), T("trace_enabled")});
  add(table_id::setup_consumers, "setup_consumers", {T("name"), T("enabled")});
  add(table_id::setup_timers, "setup_timers", {T("name"), T("timer_name", true)});
  add(table_id::setup_actors, "setup_actors",
      {T("host"), T("user"), T("role"), T("enabled"), T("history"), T("trace_enabled")});
  add(table_id::performance_timers, "performance_timers",
      {T("timer_name"), I("timer_frequency", true), I("timer_resolution", true), I("timer_overhead", true)});
  add(table_id::threads, "threads",
      {I("thread_id"), T("name"), T("type"), T("processlist_user", true), T("processlist_host", true),
       T("role", true), T("instrumented"), T("history"), I("parent_thread_id", true),
       I("thread_os_id", true)});
  add(table_id::events_waits_current, "events_waits_current", wait_columns());
  add(table_id::events_waits_history, "events_waits_history", wait_columns());
  add(table_id::events_waits_history_long, "events_waits_history_long", wait_columns());
  add(table_id::events_waits_summary_global_by_event_name, "events_waits_summary_global_by_event_name",
      with_stats({T("event_name")}));
  add(table_id::events_waits_summary_by_thread_by_event_name, "events_waits_summary_by_thread_by_event_name",
      with_stats({I("thread_id"), T("event_name")}));
  add(table_id::events_waits_summary_by_instance, "events_waits_summary_by_instance",
      with_stats({T("event_name"), I("object_instance_begin")}));
  add(table_id::mutex_instances, "mutex_instances",
      {T("name"), I("object_instance_begin"), I("locked_by_thread_id", true)});
  add(table_id::rwlock_instances, "rwlock_instances",
      {T("name"), I("object_instance_begin"), I("write_locked_by_thread_id", true),
       I("read_locked_by_count")});
  add(table_id::cond_instances, "cond_instances", {T("name"), I("object_instance_begin")});
  add(table_id::status, "status", {T("variable_name"), I("variable_value")});
  add(table_id::setup_objects, "setup_objects",
      {T("object_type"), T("object_schema"), T("object_name"), T("enabled"), T("timed")});
  add(table_id::file_instances, "file_instances", {T("file_name"), T("event_name"), I("open_count")});
  add(table_id::file_summary_by_event_name, "file_summary_by_event_name",
      with_file_groups({T("event_name")}));
  add(table_id::file_summary_by_instance, "file_summary_by_instance",
      with_file_groups({T("file_name"), T("event_name"), I("object_instance_begin")}));
  add(table_id::table_io_waits_summary_by_table, "table_io_waits_summary_by_table",
      with_table_groups({T("object_type"), T("object_schema"), T("object_name")}));
  add(table_id::table_io_waits_summary_by_index_usage, "table_io_waits_summary_by_index_usage",
      with_table_groups({T("object_type"), T("object_schema"), T("object_name"), T("index_name", true)}));
  return t;
}

}  // namespace pfs::reader::detail
