#include "tools/otlp/otlp_events.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

#include "tools/otlp/otlp_scan.h"

namespace pfs::otlp {

namespace {

using reader::cell_view;
using reader::table_id;

// The positions of named columns in a table (looked up once per scan).
struct columns {
  explicit columns(const reader::table_def& t) : table(t) {}
  int operator()(const char* name) const { return reader::column_index(table, name); }
  const reader::table_def& table;
};

std::string text(const cell_view* c, int i) {
  return i < 0 || c[i].null ? std::string() : std::string(c[i].s);
}
std::string_view text(const cell_view* c, int i, text_pool& pool) {
  return i < 0 || c[i].null ? std::string_view() : pool.intern(c[i].s);
}
std::int64_t integer(const cell_view* c, int i, std::int64_t null_value) {
  return i < 0 || c[i].null ? null_value : c[i].i;
}

// The columns every event table has.
struct event_columns {
  explicit event_columns(const reader::table_def& t)
      : thread(reader::column_index(t, "thread_id")),
        event(reader::column_index(t, "event_id")),
        end_event(reader::column_index(t, "end_event_id")),
        name(reader::column_index(t, "event_name")),
        source(reader::column_index(t, "source")),
        start(reader::column_index(t, "timer_start")),
        end(reader::column_index(t, "timer_end")),
        wait(reader::column_index(t, "timer_wait")),
        nesting(reader::column_index(t, "nesting_event_id")),
        trace(reader::column_index(t, "trace_id")),
        parent_span(reader::column_index(t, "parent_span_id")) {}
  int thread, event, end_event, name, source, start, end, wait, nesting, trace, parent_span;

  // The ids, times and trace context; name and source are read only for the events
  // exported (texts).
  void fill(const cell_view* c, event_kind kind, work_event& e) const {
    e.kind = kind;
    e.thread_id = static_cast<std::uint64_t>(integer(c, thread, 0));
    e.event_id = static_cast<std::uint64_t>(integer(c, event, 0));
    e.end_event_id = static_cast<std::uint64_t>(integer(c, end_event, 0));
    e.nesting_event_id = static_cast<std::uint64_t>(integer(c, nesting, 0));
    e.timer_start = integer(c, start, -1);
    e.timer_end = integer(c, end, -1);
    // 32 and 16 lower-case hex digits from the reader, NULL when none.
    if (trace >= 0 && parent_span >= 0 && !c[trace].null && !c[parent_span].null && c[trace].s.size() == 32 &&
        c[parent_span].s.size() == 16) {
      const std::string t(c[trace].s), p(c[parent_span].s);  // strtoull needs terminated text
      e.trace_high = std::strtoull(t.substr(0, 16).c_str(), nullptr, 16);
      e.trace_low = std::strtoull(t.substr(16).c_str(), nullptr, 16);
      e.parent_span = std::strtoull(p.c_str(), nullptr, 16);
      e.has_trace = true;
    }
  }
  void texts(const cell_view* c, work_event& e, text_pool& pool) const {
    e.name = text(c, name, pool);
    e.source = text(c, source, pool);
  }
};

struct table_pass {
  table_id history_long;
  table_id current;
  event_kind kind;
};

// Innermost kind first, and each kind's running events before its ended ones: an
// event's ancestors started before it, so when a completed event is read, each of its
// ancestors is either running then (seen in a later current scan) or ends before the
// later history scan. Read outermost first, a statement that starts between the
// statement scans and whose stage ends before the stage scan would be missing from the
// stage's chain, and the stage would get a trace id of its own (a child in another
// trace than its parent's span in the next export).
constexpr table_pass kPasses[] = {
    {table_id::events_waits_history_long, table_id::events_waits_current, event_kind::wait},
    {table_id::events_stages_history_long, table_id::events_stages_current, event_kind::stage},
    {table_id::events_statements_history_long, table_id::events_statements_current, event_kind::statement},
    {table_id::events_transactions_history_long, table_id::events_transactions_current,
     event_kind::transaction},
};

// The columns of each kind beyond the common ones (-1 where the table has none).
struct detail_columns {
  explicit detail_columns(const reader::table_def& t)
      : sql_text(reader::column_index(t, "sql_text")),
        digest_text(reader::column_index(t, "digest_text")),
        current_schema(reader::column_index(t, "current_schema")),
        mysql_errno(reader::column_index(t, "mysql_errno")),
        sqlstate(reader::column_index(t, "returned_sqlstate")),
        message_text(reader::column_index(t, "message_text")),
        rows_sent(reader::column_index(t, "rows_sent")),
        state(reader::column_index(t, "state")),
        isolation_level(reader::column_index(t, "isolation_level")),
        access_mode(reader::column_index(t, "access_mode")),
        object_type(reader::column_index(t, "object_type")),
        object_schema(reader::column_index(t, "object_schema")),
        object_name(reader::column_index(t, "object_name")),
        operation(reader::column_index(t, "operation")),
        number_of_bytes(reader::column_index(t, "number_of_bytes")) {}
  int sql_text, digest_text, current_schema, mysql_errno, sqlstate, message_text, rows_sent;
  int state, isolation_level, access_mode;
  int object_type, object_schema, object_name, operation, number_of_bytes;

  void fill(const cell_view* c, work_event& e, text_pool& pool) const {
    switch (e.kind) {
      case event_kind::statement:
        e.sql_text = text(c, sql_text, pool);
        e.digest_text = text(c, digest_text, pool);
        e.current_schema = text(c, current_schema, pool);
        e.mysql_errno = integer(c, mysql_errno, 0);
        e.sqlstate = text(c, sqlstate, pool);
        e.message_text = text(c, message_text, pool);
        e.rows_sent = integer(c, rows_sent, -1);
        break;
      case event_kind::transaction:
        e.state = text(c, state, pool);
        e.isolation_level = text(c, isolation_level, pool);
        e.access_mode = text(c, access_mode, pool);
        break;
      case event_kind::wait:
        e.object_type = text(c, object_type, pool);
        e.object_schema = text(c, object_schema, pool);
        e.object_name = text(c, object_name, pool);
        e.operation = text(c, operation, pool);
        e.number_of_bytes = integer(c, number_of_bytes, -1);
        break;
      case event_kind::stage:
        break;
    }
  }
};

}  // namespace

std::string_view text_pool::intern(std::string_view text) {
  if (auto it = texts_.find(text); it != texts_.end()) return *it;
  return *texts_.emplace(text).first;
}

bool after(const cursor_key& event, const cursor_key& cursor) {
  if (event.end_event_id != cursor.end_event_id) return event.end_event_id > cursor.end_event_id;
  return event.event_id < cursor.event_id;  // same END_EVENT_ID: the outer one ends later
}

region_identity read_identity(const reader::region_reader& r) {
  const auto& h = r.region().header();
  region_identity id;
  id.pid = h.pid;
  id.creation_time_ns = h.creation_time_ns;
  id.program.assign(h.program, strnlen(h.program, sizeof h.program));
  return id;
}

region_error read_region_events(reader::region_reader& r, std::uint64_t min_wait_ps, region_memory& memory,
                                region_events& out) {
  out.identity = read_identity(r);
  const cursors& where = memory.where;
  // The links of the round's new events, and their ends (-1: not timed): those that
  // ended within kKeptLinkMarginPs of the latest end are kept (region_memory). The
  // region's own timer, not the wall clock, which it does not follow.
  struct new_link {
    std::uint64_t thread_id, event_id;
    std::int64_t timer_end;
    ancestry_link link;
  };
  std::vector<new_link> new_links;
  std::int64_t latest_end = -1;
  {
    const columns col(reader::table(table_id::threads));
    const int id = col("thread_id"), name = col("name"), thread_name = col("thread_name");
    auto err = scan(r, table_id::threads, [&](const cell_view* c) {
      std::string n = text(c, thread_name);
      out.thread_names[static_cast<std::uint64_t>(integer(c, id, 0))] =
          n.empty() ? text(c, name) : std::move(n);
    });
    if (err.code != region_errc::ok) return err;
  }
  cursors moved = where;
  // Room for every history row at once (the slots claimed so far, at most each
  // table's size): the events are not moved while they are read.
  std::uint64_t rows = 0;
  for (const table_pass& pass : kPasses) {
    const reader::table_def& t = reader::table(pass.history_long);
    rows += std::min(r.expected_rows(t), r.estimated_rows(t));
  }
  out.completed.reserve(out.completed.size() + rows);
  for (const table_pass& pass : kPasses) {
    // Running events first: ancestry only.
    const reader::table_def& current = reader::table(pass.current);
    const event_columns cur(current);
    auto err = scan(r, pass.current, [&](const cell_view* c) {
      work_event e;
      cur.fill(c, pass.kind, e);
      out.ancestry[e.thread_id][e.event_id] = {e.nesting_event_id, pass.kind,   false,        e.has_trace,
                                               e.trace_high,       e.trace_low, e.parent_span};
    });
    if (err.code != region_errc::ok) return err;

    const reader::table_def& t = reader::table(pass.history_long);
    const event_columns ev(t);
    const detail_columns details(t);
    const int kind_index = static_cast<int>(pass.kind);
    err = scan(r, pass.history_long, [&](const cell_view* c) {
      work_event e;
      ev.fill(c, pass.kind, e);
      const bool timed = e.timer_start >= 0 && e.timer_end >= e.timer_start;
      const bool short_wait =
          pass.kind == event_kind::wait &&
          (!timed || static_cast<std::uint64_t>(e.timer_end - e.timer_start) < min_wait_ps);
      const ancestry_link link{e.nesting_event_id, pass.kind,   short_wait,   e.has_trace,
                               e.trace_high,       e.trace_low, e.parent_span};
      out.ancestry[e.thread_id][e.event_id] = link;
      const cursor_key key{e.end_event_id, e.event_id};
      const auto slot = std::make_pair(e.thread_id, kind_index);
      if (auto it = where.find(slot); it != where.end() && !after(key, it->second)) return;
      if (auto [it, fresh] = moved.try_emplace(slot, key); !fresh && after(key, it->second)) it->second = key;
      new_links.push_back({e.thread_id, e.event_id, timed ? e.timer_end : -1, link});
      if (timed) latest_end = std::max(latest_end, e.timer_end);
      if (short_wait) return;
      if (!timed) {
        ++out.untimed_skipped;
        return;
      }
      ev.texts(c, e, out.texts);
      details.fill(c, e, out.texts);
      out.completed.push_back(e);
    });
    if (err.code != region_errc::ok) return err;
  }
  // The last round's links of events no longer in the region.
  for (const auto& [thread, links] : memory.links) {
    auto& now = out.ancestry[thread];
    for (const auto& [event, link] : links) now.try_emplace(event, link);
  }
  memory.where = std::move(moved);
  memory.links.clear();
  for (const new_link& f : new_links)
    if (f.timer_end < 0 || f.timer_end >= latest_end - kKeptLinkMarginPs)
      memory.links[f.thread_id][f.event_id] = f.link;
  return {};
}

}  // namespace pfs::otlp
