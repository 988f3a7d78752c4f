// Region reading for pfs_otlp: the completed transactions, statements, stages and
// waits of the history_long tables (the spans to be), the running ones of the
// _current tables (their ancestry only: a stage completes before its statement),
// the threads' names, and the region's identity (pid, creation time, program).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <utility>
#include <vector>

#include "agent/reader/reader.h"

namespace pfs::otlp {

enum class event_kind : std::uint8_t { transaction = 0, statement, stage, wait };
inline constexpr int kEventKinds = 4;

// The texts of a round's events, each kept once: names, sources and objects repeat
// over thousands of events, and an event then holds views (no allocation of its own).
class text_pool {
 public:
  std::string_view intern(std::string_view text);

 private:
  struct hash {
    using is_transparent = void;
    std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_set<std::string, hash, std::equal_to<>> texts_;  // nodes: stable addresses
};

// A completed event; its texts are views into the round's text_pool.
struct work_event {
  event_kind kind = event_kind::statement;
  // TRACE_ID and PARENT_SPAN_ID (statements and transactions): the caller's W3C
  // trace context; has_trace false when the program gave none.
  bool has_trace = false;
  std::uint64_t thread_id = 0;
  std::uint64_t event_id = 0;
  std::uint64_t end_event_id = 0;
  std::uint64_t nesting_event_id = 0;  // 0: none (a root)
  std::int64_t timer_start = -1;       // picoseconds since the region's creation; -1: not timed
  std::int64_t timer_end = -1;
  std::uint64_t trace_high = 0, trace_low = 0, parent_span = 0;
  std::string_view name;    // EVENT_NAME
  std::string_view source;  // SOURCE, "file:line"
  // statements
  std::string_view sql_text, digest_text, current_schema, sqlstate, message_text;
  std::int64_t mysql_errno = 0;
  std::int64_t rows_sent = -1;
  // transactions
  std::string_view state, isolation_level, access_mode;
  // waits
  std::string_view object_type, object_schema, object_name, operation;
  std::int64_t number_of_bytes = -1;
};

// Where an export resumes, per thread and table: the last exported event's
// (END_EVENT_ID, EVENT_ID). Events of one thread and table complete in the order of
// (END_EVENT_ID, -EVENT_ID): a later sibling has a larger END_EVENT_ID, a nesting event
// of the same table (a stored procedure's statement, a table io wait over a file io
// wait) ends with an END_EVENT_ID at least its inner event's and a smaller EVENT_ID.
struct cursor_key {
  std::uint64_t end_event_id = 0;
  std::uint64_t event_id = 0;
};
bool after(const cursor_key& event, const cursor_key& cursor);
using cursors = std::map<std::pair<std::uint64_t, int>, cursor_key>;  // (thread, event_kind)

struct region_identity {
  std::uint64_t pid = 0;
  std::uint64_t creation_time_ns = 0;  // CLOCK_REALTIME; TIMER_* picoseconds count from it
  std::string program;
};

struct ancestry_link {
  std::uint64_t nesting_event_id = 0;
  event_kind kind = event_kind::statement;
  bool short_wait = false;  // a wait under --min-wait: no span, its children go to its parent
  bool has_trace = false;   // the caller's trace context (work_event)
  std::uint64_t trace_high = 0, trace_low = 0, parent_span = 0;
};

// (thread, event id) -> its link
using ancestry_map = std::unordered_map<std::uint64_t, std::unordered_map<std::uint64_t, ancestry_link>>;

// What an export keeps of a region from one round to the next (and in the state
// file): the cursors, and the links of the round's new events that ended last. A
// child that ends between the round's scans of its table and of its parent's is
// read in the next round, when an ancestor may have left its ring: its chain (its
// trace id) goes on through these links. One round's are enough: a child is read at
// the latest in the round after its parent's.
struct region_memory {
  cursors where;
  ancestry_map links;
};

// The new events kept in region_memory::links: those that ended within this of the
// round's latest end (region timer picoseconds: a second, far more than a round's
// scans take), and the untimed ones.
inline constexpr std::int64_t kKeptLinkMarginPs = 1000000000000;

struct region_events {
  region_identity identity;
  text_pool texts;                    // the completed events' texts
  std::vector<work_event> completed;  // new since the cursors, timed, waits >= min_wait
  // (thread, event id) -> its nesting event, for every event read (completed or
  // running), and the last round's kept links of those that are no longer there
  ancestry_map ancestry;
  std::unordered_map<std::uint64_t, std::string> thread_names;  // THREAD_NAME, else NAME
  std::uint64_t untimed_skipped = 0;
};

// Reads the events after the cursors (all when they are empty), moves the cursors
// past them and keeps the links of the new ones that ended last (region_memory).
// min_wait_ps: shorter waits are left out (they still link).
region_error read_region_events(reader::region_reader& r, std::uint64_t min_wait_ps, region_memory& memory,
                                region_events& out);

region_identity read_identity(const reader::region_reader& r);

}  // namespace pfs::otlp
