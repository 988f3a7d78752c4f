// The reader library: see reader.h. Everything in the region is untrusted input;
// every shared field is read with layout::load_relaxed / load_acquire.
#include "agent/reader/reader.h"

#include <sys/stat.h>

#include <atomic>
#include <cmath>
#include <cstring>
#include <exception>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <new>
#include <optional>
#include <unordered_map>
#include <utility>

#include "agent/region/fault_guard.h"
#include "agent/region/setup.h"
#include "timers/timer.h"

namespace pfs::reader {

using namespace pfs::layout;

namespace {

constexpr int kAttempts = 4;  // copies of one record before it counts as torn
constexpr std::uint64_t kInt64Max = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
constexpr std::uint64_t kNoMin = std::numeric_limits<std::uint64_t>::max();
constexpr std::string_view kUnknownThreadClass = "thread/pfs/unknown";

__extension__ typedef unsigned __int128 u128;

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// ---------------------------------------------------------------------------
// Table definitions

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

// Arrays this reader knows, with the record size it expects and the name used in the
// status table.
struct known_array {
  array_id id;
  std::uint64_t stride;
  const char* status_name;
};
constexpr known_array kKnownArrays[] = {
    {kArrayClasses, sizeof(class_record), "instrument_classes"},
    {kArrayThreads, sizeof(thread_record), "threads"},
    {kArrayWaitStacks, sizeof(wait_record), "events_waits_current"},
    {kArrayWaitHistory, sizeof(wait_record), "events_waits_history"},
    {kArrayThreadClassStats, sizeof(wait_stat), "events_waits_summary_by_thread_by_event_name"},
    {kArrayHistoryLong, sizeof(wait_record), "events_waits_history_long"},
    {kArrayHistoryLongBatches, sizeof(batch_record), "events_waits_history_long_batches"},
    {kArrayMutexes, sizeof(sync_instance), "mutex_instances"},
    {kArrayRwlocks, sizeof(sync_instance), "rwlock_instances"},
    {kArrayConds, sizeof(sync_instance), "cond_instances"},
    {kArraySetupActors, sizeof(actor_record), "setup_actors"},
    {kArraySources, sizeof(source_record), "sources"},
    {kArrayFiles, sizeof(file_instance), "file_instances"},
    {kArrayClassIo, sizeof(io_stats), "file_summary_by_event_name"},
    {kArrayTables, sizeof(table_share), "table_shares"},
    {kArrayTableIndexes, sizeof(index_stat), "table_index_stats"},
    {kArraySetupObjects, sizeof(object_record), "setup_objects"},
};

// Status names of the lost counters, by lost_id (every id below kLostCount needs one:
// a missing name would be a null pointer). trace_errors is the slot after
// sources_lost (kTraceErrors, trace files); only the first kLostCount are shown.
constexpr const char* kLostNames[] = {
    "mutex_classes_lost",   "rwlock_classes_lost",   "cond_classes_lost",    "thread_classes_lost",
    "file_classes_lost",    "table_classes_lost",    "mutex_instances_lost", "rwlock_instances_lost",
    "cond_instances_lost",  "thread_instances_lost", "file_instances_lost",  "file_handles_lost",
    "table_instances_lost", "table_handles_lost",    "index_stats_lost",     "locker_lost",
    "sources_lost",         "trace_errors",          "region_faults",
};
static_assert(std::size(kLostNames) >= kLostCount, "a lost counter without a status name");

// Fixed number of status rows before the per-array and lost rows.
constexpr std::uint64_t kStatusFixedRows = 12;
constexpr std::uint64_t kStatusRows = kStatusFixedRows + 2 * std::size(kKnownArrays) + 1 + kLostCount + 2;

// ---------------------------------------------------------------------------
// Value helpers

inline std::int64_t clamp64(std::uint64_t v) {
  return static_cast<std::int64_t>(v > kInt64Max ? kInt64Max : v);
}

// Cells are views: text either points at data that lives for the whole scan
// (class names, sources, constants: stable_text) or at the scanner's text slots,
// which hold it until the row has been handed to the sink (scanner::text_cell).
using cell = cell_view;

// One row being built: slots reused from row to row.
struct row_builder {
  std::vector<cell> slots;
  std::size_t n = 0;
  void reserve(std::size_t) {}
  void push_back(const cell& c) {
    if (n == slots.size()) slots.emplace_back();
    slots[n++] = c;
  }
};

cell null_cell() { return cell{}; }
cell int_cell(std::uint64_t v) {
  cell c;
  c.null = false;
  c.i = clamp64(v);
  return c;
}
cell int_cell_signed(std::int64_t v) {
  cell c;
  c.null = false;
  c.i = v;
  return c;
}
cell nullable_int(std::uint64_t v) { return v == 0 ? null_cell() : int_cell(v); }
cell stable_text(std::string_view s) { return cell{false, 0, s}; }
cell yes_no(bool v) { return stable_text(std::string_view(v ? "YES" : "NO")); }

inline std::uint64_t sat_add(std::uint64_t a, std::uint64_t b) {
  std::uint64_t r;
  return __builtin_add_overflow(a, b, &r) ? kNoMin : r;
}

// Appends n bytes as UTF-8, replacing every byte that does not start a valid sequence
// (overlong forms, surrogates and code points above U+10FFFF included) with '?'.
void append_utf8(std::string& out, const char* p, std::size_t n) {
  out.reserve(out.size() + n);
  std::size_t i = 0;
  while (i < n) {
    const auto c = static_cast<unsigned char>(p[i]);
    if (c < 0x80) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    std::size_t len = 0;
    std::uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) {
      len = 2, cp = c & 0x1Fu, min = 0x80;
    } else if ((c & 0xF0) == 0xE0) {
      len = 3, cp = c & 0x0Fu, min = 0x800;
    } else if ((c & 0xF8) == 0xF0) {
      len = 4, cp = c & 0x07u, min = 0x10000;
    }
    bool ok = len != 0 && i + len <= n;
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto d = static_cast<unsigned char>(p[i + k]);
      if ((d & 0xC0) != 0x80) ok = false;
      cp = (cp << 6) | (d & 0x3Fu);
    }
    if (ok && (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))) ok = false;
    if (ok) {
      out.append(p + i, len);
      i += len;
    } else {
      out.push_back('?');
      ++i;
    }
  }
}

// A string field copied out of a live record: relaxed loads, bounded by the field
// (at most N - 1 bytes, stops at the first NUL).
template <std::size_t N>
struct fixed_str {
  char buf[N];
  std::size_t len = 0;
  void load(const char (&field)[N]) {
    std::size_t n = 0;
    for (; n + 1 < N; ++n) {
      const char c = load_relaxed(field[n]);
      if (c == '\0') break;
      buf[n] = c;
    }
    len = n;
  }
  bool empty() const { return len == 0; }
  std::string str() const {
    std::string s;
    append_utf8(s, buf, len);
    return s;
  }
};

// A file's name, which a rename may rewrite while the record stays allocated: it
// has a seqlock of its own (file_instance::name_seq). False if it kept changing.
bool load_file_name(const file_instance& f, fixed_str<kObjectNameLen>& name) {
  for (int a = 0; a < 4; ++a) {
    const std::uint32_t s1 = load_acquire(f.name_seq);
    if ((s1 & 1u) == 0) {
      name.load(f.name);
      std::atomic_thread_fence(std::memory_order_acquire);
      if (load_relaxed(f.name_seq) == s1) return true;
    }
  }
  return false;
}

wait_stat load_stat(const wait_stat& s) {
  return wait_stat{load_relaxed(s.count), load_relaxed(s.sum), load_relaxed(s.min), load_relaxed(s.max)};
}

void add_stat(wait_stat& into, const wait_stat& s) {
  into.count = sat_add(into.count, s.count);
  into.sum = sat_add(into.sum, s.sum);
  if (s.min < into.min) into.min = s.min;
  if (s.max > into.max) into.max = s.max;
}

void append_stat_cells(row_builder& r, const wait_stat& s) {
  r.push_back(int_cell(s.count));
  r.push_back(int_cell(s.sum));
  r.push_back(int_cell(s.min == kNoMin ? 0 : s.min));
  r.push_back(int_cell(s.count == 0 ? 0 : s.sum / s.count));
  r.push_back(int_cell(s.max));
}

// ---------------------------------------------------------------------------
// File io and table io statistics

constexpr wait_stat kZeroStat{0, 0, kNoMin, 0};
constexpr io_stat kZeroIo{0, 0, kNoMin, 0, 0};
constexpr io_stats kZeroIoStats{kZeroIo, kZeroIo, kZeroIo};
constexpr table_io_stat kZeroTableIo{kZeroStat, kZeroStat, kZeroStat, kZeroStat};

// Combining groups: a group that counted nothing adds nothing (its min/max are not
// meaningful, whatever they hold).
void merge_stat(wait_stat& into, const wait_stat& s) {
  if (s.count != 0) add_stat(into, s);
}

io_stat load_io(const io_stat& s) {
  return io_stat{load_relaxed(s.count), load_relaxed(s.sum), load_relaxed(s.min), load_relaxed(s.max),
                 load_relaxed(s.bytes)};
}
io_stats load_io_stats(const io_stats& s) {
  return io_stats{load_io(s.read), load_io(s.write), load_io(s.misc)};
}

wait_stat timer_part(const io_stat& s) { return wait_stat{s.count, s.sum, s.min, s.max}; }

void merge_io(io_stat& into, const io_stat& s) {
  if (s.count == 0) return;
  into.count = sat_add(into.count, s.count);
  into.sum = sat_add(into.sum, s.sum);
  into.bytes = sat_add(into.bytes, s.bytes);
  if (s.min < into.min) into.min = s.min;
  if (s.max > into.max) into.max = s.max;
}

void merge_io_stats(io_stats& into, const io_stats& s) {
  merge_io(into.read, s.read);
  merge_io(into.write, s.write);
  merge_io(into.misc, s.misc);
}

// STAR of a file: its read, write and misc groups together.
wait_stat io_star(const io_stats& s) {
  wait_stat star = kZeroStat;
  merge_stat(star, timer_part(s.read));
  merge_stat(star, timer_part(s.write));
  merge_stat(star, timer_part(s.misc));
  return star;
}

// STAR, READ, sum_number_of_bytes_read, WRITE, sum_number_of_bytes_write, MISC.
void append_io_cells(row_builder& r, const io_stats& s) {
  append_stat_cells(r, io_star(s));
  append_stat_cells(r, timer_part(s.read));
  r.push_back(int_cell(s.read.bytes));
  append_stat_cells(r, timer_part(s.write));
  r.push_back(int_cell(s.write.bytes));
  append_stat_cells(r, timer_part(s.misc));
}

table_io_stat load_table_io(const table_io_stat& s) {
  return table_io_stat{load_stat(s.fetch), load_stat(s.insert), load_stat(s.update), load_stat(s.del)};
}

void merge_table_io(table_io_stat& into, const table_io_stat& s) {
  merge_stat(into.fetch, s.fetch);
  merge_stat(into.insert, s.insert);
  merge_stat(into.update, s.update);
  merge_stat(into.del, s.del);
}

// STAR, READ (= FETCH), WRITE (= INSERT + UPDATE + DELETE), FETCH, INSERT, UPDATE, DELETE.
void append_table_io_cells(row_builder& r, const table_io_stat& s) {
  wait_stat read = kZeroStat;
  merge_stat(read, s.fetch);
  wait_stat write = kZeroStat;
  merge_stat(write, s.insert);
  merge_stat(write, s.update);
  merge_stat(write, s.del);
  wait_stat star = read;
  merge_stat(star, write);
  for (const wait_stat* g :
       std::initializer_list<const wait_stat*>{&star, &read, &write, &s.fetch, &s.insert, &s.update, &s.del})
    append_stat_cells(r, *g);
}

// ---------------------------------------------------------------------------
// Consistent copies of records

enum class rd { ok, absent, torn };

// Version+state records: the lock word must say allocated and be unchanged around
// the copy. *lock_out receives the word of the accepted copy. A record still dirty
// after the last attempt is absent (not counted as torn).
template <class Rec, class Copy>
rd read_versioned(const Rec& r, Copy&& copy, std::uint32_t* lock_out = nullptr) {
  bool dirty = false;
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t l1 = load_acquire(r.lock);
    if ((l1 & kStateMask) != kStateAllocated) {
      // Free: not a row. Dirty: being allocated, changed (setup_actors updates) or
      // freed; such a change is short, so look again before giving up.
      if ((l1 & kStateMask) != kStateDirty) return rd::absent;
      dirty = true;
      cpu_relax();
      continue;
    }
    dirty = false;
    copy(r);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.lock) == l1) {
      if (lock_out != nullptr) *lock_out = l1;
      return rd::ok;
    }
    cpu_relax();
  }
  return dirty ? rd::absent : rd::torn;
}

struct class_copy {
  std::uint8_t kind = 0;
  std::uint8_t flags = 0;
  wait_stat stat{};
  fixed_str<kNameLen> name;
};

struct thread_copy {
  std::uint32_t class_index = 0;
  std::uint64_t thread_id = 0;
  std::uint64_t os_thread_id = 0;
  std::uint64_t parent_thread_id = 0;
  std::uint8_t instrumented = 0;
  std::uint8_t history = 0;
  std::uint8_t foreground = 0;
  std::uint64_t history_index = 0;
  fixed_str<kUserLen> user;
  fixed_str<kHostLen> host;
  fixed_str<kUserLen> role;
};

struct sync_copy {
  std::uint32_t class_index = 0;
  std::uint64_t identity = 0;
  std::uint64_t owner_thread_id = 0;
  std::uint32_t readers = 0;
  wait_stat stat{};
};

struct actor_copy {
  std::uint8_t enabled = 0;
  std::uint8_t history = 0;
  std::uint8_t trace_enabled = 0;
  fixed_str<kHostLen> host;
  fixed_str<kUserLen> user;
  fixed_str<kUserLen> role;
};

rd read_class(const class_record& r, class_copy& c) {
  return read_versioned(r, [&c](const class_record& s) {
    c.kind = load_relaxed(s.kind);
    c.flags = load_relaxed(s.flags);
    c.stat = load_stat(s.stat);
    c.name.load(s.name);
  });
}

rd read_thread(const thread_record& r, thread_copy& c, std::uint32_t* lock_out = nullptr) {
  return read_versioned(
      r,
      [&c](const thread_record& s) {
        c.class_index = load_relaxed(s.class_index);
        c.thread_id = load_relaxed(s.thread_id);
        c.os_thread_id = load_relaxed(s.os_thread_id);
        c.parent_thread_id = load_relaxed(s.parent_thread_id);
        c.instrumented = load_relaxed(s.instrumented);
        c.history = load_relaxed(s.history);
        c.foreground = load_relaxed(s.foreground);
        c.history_index = load_relaxed(s.history_index);
        c.user.load(s.user);
        c.host.load(s.host);
        c.role.load(s.role);
      },
      lock_out);
}

rd read_sync(const sync_instance& r, sync_copy& c) {
  return read_versioned(r, [&c](const sync_instance& s) {
    c.class_index = load_relaxed(s.class_index);
    c.identity = load_relaxed(s.identity);
    c.owner_thread_id = load_relaxed(s.owner_thread_id);
    c.readers = load_relaxed(s.readers);
    c.stat = load_stat(s.stat);
  });
}

rd read_actor(const actor_record& r, actor_copy& c) {
  return read_versioned(r, [&c](const actor_record& s) {
    c.enabled = load_relaxed(s.enabled);
    c.history = load_relaxed(s.history);
    c.trace_enabled = load_relaxed(s.trace_enabled);
    c.host.load(s.host);
    c.user.load(s.user);
    c.role.load(s.role);
  });
}

struct file_copy {
  std::uint32_t class_index = 0;
  std::uint32_t open_count = 0;
  std::uint64_t identity = 0;
  io_stats stats = kZeroIoStats;
  fixed_str<kObjectNameLen> name;
  bool name_ok = false;
};

struct object_copy {
  std::uint8_t object_type = 0;
  std::uint8_t enabled = 0;
  std::uint8_t timed = 0;
  fixed_str<kObjectSchemaLen> schema;
  fixed_str<kTableNameLen> name;
};

void copy_file(const file_instance& s, file_copy& c) {
  c.class_index = load_relaxed(s.class_index);
  c.open_count = load_relaxed(s.open_count);
  c.identity = load_relaxed(s.identity);
  c.stats = load_io_stats(s.stats);
  c.name_ok = load_file_name(s, c.name);
}

rd read_file(const file_instance& r, file_copy& c) {
  const rd result = read_versioned(r, [&c](const file_instance& s) { copy_file(s, c); });
  return result == rd::ok && !c.name_ok ? rd::torn : result;
}

rd read_object(const object_record& r, object_copy& c) {
  return read_versioned(r, [&c](const object_record& s) {
    c.object_type = load_relaxed(s.object_type);
    c.enabled = load_relaxed(s.enabled);
    c.timed = load_relaxed(s.timed);
    c.schema.load(s.schema);
    c.name.load(s.name);
  });
}

// A record a wait event names by (index, version): a file instance or a table share.
// It still is the event's object while its version is the event's, allocated or freed
// since (a freed record keeps its name until reused). Dirty: being reused (the old
// version is still in the word then) or renamed; looked at again, then given up.
// Version 0 is never the version of an allocated record (allocation adds
// kVersionInc to it), so it names nothing. True when copy ran on a stable record.
template <class Rec, class Copy>
bool read_referenced(const Rec& r, std::uint32_t version, Copy&& copy) {
  if (version == 0 || (version & kStateMask) != 0) return false;
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t l1 = load_acquire(r.lock);
    const std::uint32_t state = l1 & kStateMask;
    if (state == kStateDirty) {
      cpu_relax();
      continue;
    }
    if ((state != kStateAllocated && state != kStateFree) || (l1 & ~kStateMask) != version) return false;
    copy(r);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.lock) == l1) return true;
    cpu_relax();
  }
  return false;
}

struct wait_copy {
  std::uint8_t state = 0;
  std::uint8_t timer = 0;
  std::uint8_t operation = 0;
  std::uint8_t nesting_type = 0;
  std::uint32_t class_index = 0;
  std::uint32_t source_index = 0;
  std::uint64_t thread_id = 0;
  std::uint64_t event_id = 0;
  std::uint64_t end_event_id = 0;
  std::uint64_t nesting_event_id = 0;
  std::uint64_t timer_start = 0;
  std::uint64_t timer_end = 0;
  std::uint64_t object_instance_begin = 0;
  std::int64_t number_of_bytes = 0;
  std::uint8_t object_kind = 0;
  std::uint32_t object_index = 0;
  std::uint32_t object_version = 0;
  std::uint32_t index_number = 0;
  std::uint32_t flags = 0;
};

// Seqlock copy: an even sequence unchanged around the copy.
rd read_wait(const wait_record& r, wait_copy& c) {
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t s1 = load_acquire(r.seq);
    if ((s1 & 1u) != 0) {
      cpu_relax();
      continue;
    }
    c.state = load_relaxed(r.state);
    c.timer = load_relaxed(r.timer);
    c.operation = load_relaxed(r.operation);
    c.nesting_type = load_relaxed(r.nesting_type);
    c.class_index = load_relaxed(r.class_index);
    c.source_index = load_relaxed(r.source_index);
    c.thread_id = load_relaxed(r.thread_id);
    c.event_id = load_relaxed(r.event_id);
    c.end_event_id = load_relaxed(r.end_event_id);
    c.nesting_event_id = load_relaxed(r.nesting_event_id);
    c.timer_start = load_relaxed(r.timer_start);
    c.timer_end = load_relaxed(r.timer_end);
    c.object_instance_begin = load_relaxed(r.object_instance_begin);
    c.number_of_bytes = load_relaxed(r.number_of_bytes);
    c.object_kind = load_relaxed(r.object_kind);
    c.object_index = load_relaxed(r.object_index);
    c.object_version = load_relaxed(r.object_version);
    c.index_number = load_relaxed(r.index_number);
    c.flags = load_relaxed(r.flags);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.seq) == s1) return rd::ok;
    cpu_relax();
  }
  return rd::torn;
}

// ---------------------------------------------------------------------------
// Timer conversion with the header's converters.

struct converter {
  std::uint64_t base = 0;
  std::uint64_t mult = 0;  // 0: unavailable
  std::uint32_t shift = 0;
};

// ps = ((raw - base) * mult) >> shift, saturated to INT64_MAX; raw < base gives 0.
std::uint64_t to_pico(const converter& c, std::uint64_t raw) {
  if (raw < c.base) return 0;
  const u128 p = (static_cast<u128>(raw - c.base) * c.mult) >> c.shift;
  return p > kInt64Max ? kInt64Max : static_cast<std::uint64_t>(p);
}

bool is_wait_kind(std::uint8_t kind) { return kind >= kKindMutex && kind <= kKindTable; }
bool is_sync_kind(std::uint8_t kind) { return kind >= kKindMutex && kind <= kKindCond; }

}  // namespace

// ---------------------------------------------------------------------------
// The reader state: the mapping and a private, checked copy of its geometry.

struct region_reader::impl {
  struct array_view {
    const char* base = nullptr;
    std::uint64_t count = 0;
    std::uint64_t stride = 0;
  };

  region_map map;
  array_view arrays[kArrayCount];
  std::uint64_t threads = 0;      // thread slots
  std::uint64_t classes = 0;      // class slots (= max_classes)
  std::uint64_t stack_depth = 0;  // wait_stack_depth
  std::uint64_t history_per_thread = 0;
  std::uint64_t history_long_batch = 0;  // status only
  std::uint64_t indexes_per_table = 0;   // index_stat slots per table share
  std::atomic<std::uint64_t> torn{0};
  std::atomic<std::uint64_t> invalid{0};

  template <class T>
  const T* at(array_id id, std::uint64_t i) const {
    const array_view& a = arrays[id];
    return i < a.count ? reinterpret_cast<const T*>(a.base + i * sizeof(T)) : nullptr;
  }
  std::uint64_t count(array_id id) const { return arrays[id].count; }
  const region_header& header() const { return map.header(); }

  // Copies the directory out of the mapped header and checks it against the mapping
  // (independently of region_map::validate, so a header changed after validation
  // cannot make this reader read outside the file).
  region_error load_geometry();
};

namespace {

region_error corrupt(std::string message, std::string detail = {}) {
  region_error e;
  e.code = region_errc::corrupt;
  e.message = std::move(message);
  e.detail = std::move(detail);
  return e;
}

region_error internal_error(const char* what) {
  region_error e;
  e.code = region_errc::io;
  e.message = std::string("could not read region: ") + what;
  return e;
}

region_error out_of_memory() {
  region_error e;
  e.code = region_errc::io;
  e.message = "out of memory while reading region";
  e.hint = "Lower the sizes of the instrumented process's arrays, or give the reader more memory.";
  return e;
}

}  // namespace

region_error region_reader::impl::load_geometry() {
  const region_header& h = header();
  const std::uint64_t size = map.size();
  for (const known_array& k : kKnownArrays) {
    const array_desc& d = h.arrays[k.id];
    const std::uint64_t offset = load_relaxed(d.offset);
    const std::uint64_t n = load_relaxed(d.count);
    const std::uint64_t stride = load_relaxed(d.stride);
    if (n == 0) continue;
    if (stride != k.stride || offset < kHeaderSize || offset % 8 != 0 || offset > size ||
        n > (size - offset) / stride)
      return corrupt("region array " + std::to_string(k.id) + " does not fit the file",
                     "Offset " + std::to_string(offset) + ", " + std::to_string(n) + " records of " +
                         std::to_string(stride) + " bytes, file of " + std::to_string(size) + " bytes.");
    arrays[k.id] = array_view{static_cast<const char*>(static_cast<const void*>(&h)) + offset, n, stride};
  }
  threads = count(kArrayThreads);
  classes = count(kArrayClasses);
  stack_depth = load_relaxed(h.wait_stack_depth);
  history_per_thread = load_relaxed(h.history_per_thread);
  history_long_batch = load_relaxed(h.history_long_batch);
  indexes_per_table = load_relaxed(h.max_indexes_per_table);
  const bool consistent = load_relaxed(h.max_classes) == classes && load_relaxed(h.max_threads) == threads &&
                          u128{threads} * stack_depth == count(kArrayWaitStacks) &&
                          u128{threads} * history_per_thread == count(kArrayWaitHistory) &&
                          u128{threads} * classes == count(kArrayThreadClassStats) &&
                          (count(kArrayClassIo) == 0 || count(kArrayClassIo) == classes) &&
                          u128{count(kArrayTables)} * indexes_per_table == count(kArrayTableIndexes);
  if (!consistent)
    return corrupt("region header sizes are inconsistent",
                   "The per-thread array sizes do not match the thread and class counts.");
  if (threads == 0) stack_depth = history_per_thread = 0;
  if (count(kArrayTables) == 0) indexes_per_table = 0;
  return {};
}

// ---------------------------------------------------------------------------
// One scan: working state on the stack.

namespace {

struct class_entry {
  bool valid = false;
  std::uint8_t kind = 0;
  std::uint8_t flags = 0;
  wait_stat stat{};
  std::string name;
};

class scanner {
 public:
  scanner(const region_reader::impl& r, row_sink& out) : r_(r), h_(r.header()), out_(out) {}
  ~scanner() = default;
  bool stopped = false;
  // Hands the row being built to the sink.
  void flush() {
    if (!pending_ || stopped) return;
    pending_ = false;
    if (!out_.row(cur_.slots.data(), cur_.n)) stopped = true;
  }

  std::uint64_t torn = 0;
  std::uint64_t invalid = 0;

  void setup_instruments() {
    load_classes();
    for (const class_entry& c : classes_) {
      if (!c.valid || c.kind == kKindThread) continue;
      auto& x = add_row();
      x.push_back(text_cell(std::string_view(c.name)));
      x.push_back(yes_no((c.flags & kFlagEnabled) != 0));
      x.push_back(yes_no((c.flags & kFlagTimed) != 0));
      x.push_back(yes_no((c.flags & kFlagTraced) != 0));
    }
  }

  void setup_consumers() {
    for (std::uint32_t id = 0; id < kConsumerCount; ++id) {
      auto& x = add_row();
      x.push_back(text_cell(setup::consumer_name(id)));
      x.push_back(yes_no(load_relaxed(h_.consumers[id]) != 0));
    }
  }

  void setup_timers() {
    const std::uint8_t kind = load_relaxed(h_.wait_timer);
    auto& x = add_row();
    x.push_back(text_cell(std::string_view("wait")));
    x.push_back(kind >= 1 && kind < timers::timer_kind_count
                    ? text_cell(timers::timer_name(static_cast<timers::timer_kind>(kind)))
                    : null_cell());
  }

  void setup_actors() {
    for (std::uint64_t i = 0; i < r_.count(kArraySetupActors); ++i) {
      actor_copy a;
      if (!accept(read_actor(*r_.at<actor_record>(kArraySetupActors, i), a))) continue;
      auto& x = add_row();
      x.push_back(text_cell(a.host.str()));
      x.push_back(text_cell(a.user.str()));
      x.push_back(text_cell(a.role.str()));
      x.push_back(yes_no(a.enabled != 0));
      x.push_back(yes_no(a.history != 0));
      x.push_back(yes_no(a.trace_enabled != 0));
    }
  }

  void performance_timers() {
    for (int k = 1; k < timers::timer_kind_count; ++k) {
      const auto kind = static_cast<timers::timer_kind>(k);
      const timers::timer_info& ti = timers::info(kind);
      auto& x = add_row();
      x.push_back(text_cell(timers::timer_name(kind)));
      if (ti.available && std::isfinite(ti.frequency) && ti.frequency > 0) {
        const double f = std::round(ti.frequency);
        x.push_back(int_cell(f >= 9.2e18 ? kInt64Max : static_cast<std::uint64_t>(f)));
        x.push_back(int_cell(ti.resolution));
        x.push_back(int_cell(ti.overhead));
      } else {
        x.push_back(null_cell());
        x.push_back(null_cell());
        x.push_back(null_cell());
      }
    }
  }

  void threads() {
    load_classes();
    for (std::uint64_t i = 0; i < r_.threads; ++i) {
      thread_copy t;
      if (!accept(read_thread(*r_.at<thread_record>(kArrayThreads, i), t))) continue;
      const class_entry* c = class_at(t.class_index);
      auto& x = add_row();
      x.push_back(int_cell(t.thread_id));
      x.push_back(text_cell(c != nullptr && c->kind == kKindThread ? std::string_view(c->name)
                                                                   : kUnknownThreadClass));
      x.push_back(text_cell(std::string_view(t.foreground != 0 ? "FOREGROUND" : "BACKGROUND")));
      x.push_back(t.user.empty() ? null_cell() : text_cell(t.user.str()));
      x.push_back(t.host.empty() ? null_cell() : text_cell(t.host.str()));
      x.push_back(t.role.empty() ? null_cell() : text_cell(t.role.str()));
      x.push_back(yes_no(t.instrumented != 0));
      x.push_back(yes_no(t.history != 0));
      x.push_back(nullable_int(t.parent_thread_id));
      x.push_back(nullable_int(t.os_thread_id));
    }
  }

  // events_waits_current (history = false) or events_waits_history (history = true):
  // per allocated thread, its slots, all copied while the thread's lock word stays
  // the same (so a thread slot reused meanwhile does not mix two threads' rows).
  void waits_per_thread(bool history) {
    load_classes();
    load_timers();
    const std::uint64_t per = history ? r_.history_per_thread : r_.stack_depth;
    const array_id arr = history ? kArrayWaitHistory : kArrayWaitStacks;
    std::vector<wait_copy> rows;
    rows.reserve(per);
    for (std::uint64_t i = 0; i < r_.threads; ++i) {
      const thread_record& tr = *r_.at<thread_record>(kArrayThreads, i);
      bool done = false, absent = false;
      std::uint64_t slot_torn = 0;
      for (int a = 0; a < kAttempts && !done; ++a) {
        const std::uint32_t l1 = load_acquire(tr.lock);
        if ((l1 & kStateMask) != kStateAllocated) {
          if ((l1 & kStateMask) == kStateDirty && a + 1 < kAttempts) {  // short change: look again
            cpu_relax();
            continue;
          }
          absent = true;
          break;
        }
        const std::uint64_t tid = load_relaxed(tr.thread_id);
        const std::uint64_t next = load_relaxed(tr.history_index);
        // TRUNCATE: this thread's events below its horizon are gone.
        const std::uint64_t horizon = load_acquire(tr.horizon[history ? kTruncateHistory : kTruncateCurrent]);
        rows.clear();
        slot_torn = 0;
        // History: oldest first (the next slot to be written holds the oldest event
        // once the ring has wrapped).
        const std::uint64_t start = history && per != 0 && next >= per ? next % per : 0;
        for (std::uint64_t k = 0; k < per; ++k) {
          const std::uint64_t slot = i * per + (start + k) % per;
          const wait_record* w = r_.at<wait_record>(arr, slot);
          if (w == nullptr) break;  // cannot happen: the geometry was checked
          wait_copy c;
          const rd res = read_wait(*w, c);
          if (res == rd::torn) {
            ++slot_torn;
            continue;
          }
          if (c.thread_id != tid || c.event_id < horizon) continue;
          if (history ? c.state != kWaitCompleted : (c.state != kWaitRunning && c.state != kWaitCompleted))
            continue;
          rows.push_back(c);
        }
        std::atomic_thread_fence(std::memory_order_acquire);
        done = load_relaxed(tr.lock) == l1;
        if (!done) cpu_relax();
      }
      if (absent) continue;
      if (!done) {
        ++torn;
        continue;
      }
      torn += slot_torn;
      for (const wait_copy& c : rows) emit_wait(c);
    }
  }

  void waits_history_long() {
    load_classes();
    load_timers();
    // TRUNCATE horizons: a live thread hides its events below its own horizon; a
    // thread that is gone hides all of them if it existed at the last TRUNCATE.
    std::unordered_map<std::uint64_t, std::uint64_t> live_horizon;
    for (std::uint64_t i = 0; i < r_.threads; ++i) {
      const thread_record& tr = *r_.at<thread_record>(kArrayThreads, i);
      std::uint64_t tid = 0, horizon = 0;
      const rd res = read_versioned(tr, [&](const thread_record& t) {
        tid = load_relaxed(t.thread_id);
        horizon = load_relaxed(t.horizon[kTruncateHistoryLong]);
      });
      if (res == rd::ok) live_horizon[tid] = horizon;
    }
    const std::uint64_t gone_below = load_acquire(r_.header().horizon_thread_id[kTruncateHistoryLong]);
    for (std::uint64_t i = 0; i < r_.count(kArrayHistoryLong); ++i) {
      wait_copy c;
      if (!accept(read_wait(*r_.at<wait_record>(kArrayHistoryLong, i), c))) continue;
      if (c.state != kWaitCompleted) continue;
      const auto live = live_horizon.find(c.thread_id);
      if (live != live_horizon.end() ? c.event_id < live->second : c.thread_id < gone_below) continue;
      emit_wait(c);
    }
  }

  void summary_global() {
    load_classes();
    std::vector<wait_stat> sums(classes_.size(), kZeroStat);
    const std::vector<io_stats> files = file_class_stats();
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      const class_entry& e = classes_[c];
      if (!e.valid) continue;
      if (is_sync_kind(e.kind)) {
        add_stat(sums[c], e.stat);
      } else if (e.kind == kKindFile) {
        sums[c] = io_star(files[c]);
      } else if (e.kind == kKindTable) {
        // Counts only: table io time stays out of the wait summaries (WL#4895).
        sums[c].count = e.stat.count;
      }
    }
    for (array_id arr : {kArrayMutexes, kArrayRwlocks, kArrayConds}) {
      for (std::uint64_t i = 0; i < r_.count(arr); ++i) {
        sync_copy s;
        if (!accept(read_sync(*r_.at<sync_instance>(arr, i), s))) continue;
        if (class_at(s.class_index) == nullptr) {
          ++invalid;
          continue;
        }
        add_stat(sums[s.class_index - 1], s.stat);
      }
    }
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      if (!classes_[c].valid || !is_wait_kind(classes_[c].kind)) continue;
      auto& x = add_row();
      x.push_back(text_cell(std::string_view(classes_[c].name)));
      append_stat_cells(x, sums[c]);
    }
  }

  void summary_by_thread() {
    load_classes();
    std::vector<wait_stat> stats(classes_.size());
    for (std::uint64_t i = 0; i < r_.threads; ++i) {
      const thread_record& tr = *r_.at<thread_record>(kArrayThreads, i);
      bool done = false, absent = false;
      std::uint64_t tid = 0;
      for (int a = 0; a < kAttempts && !done; ++a) {
        const std::uint32_t l1 = load_acquire(tr.lock);
        if ((l1 & kStateMask) != kStateAllocated) {
          if ((l1 & kStateMask) == kStateDirty && a + 1 < kAttempts) {  // short change: look again
            cpu_relax();
            continue;
          }
          absent = true;
          break;
        }
        tid = load_relaxed(tr.thread_id);
        for (std::size_t c = 0; c < classes_.size(); ++c) {
          if (!classes_[c].valid || !is_wait_kind(classes_[c].kind)) continue;
          const wait_stat* s = r_.at<wait_stat>(kArrayThreadClassStats, i * r_.classes + c);
          stats[c] = s != nullptr ? load_stat(*s) : wait_stat{0, 0, kNoMin, 0};
        }
        std::atomic_thread_fence(std::memory_order_acquire);
        done = load_relaxed(tr.lock) == l1;
        if (!done) cpu_relax();
      }
      if (absent) continue;
      if (!done) {
        ++torn;
        continue;
      }
      for (std::size_t c = 0; c < classes_.size(); ++c) {
        if (!classes_[c].valid || !is_wait_kind(classes_[c].kind)) continue;
        auto& x = add_row();
        x.push_back(int_cell(tid));
        x.push_back(text_cell(std::string_view(classes_[c].name)));
        append_stat_cells(x, stats[c]);
      }
    }
  }

  // Sync instance tables: events_waits_summary_by_instance (all three arrays), or
  // the instance table of one array.
  void sync_instances(table_id which) {
    load_classes();
    const bool summary = which == table_id::events_waits_summary_by_instance;
    for (array_id arr : {kArrayMutexes, kArrayRwlocks, kArrayConds}) {
      if (!summary && !((which == table_id::mutex_instances && arr == kArrayMutexes) ||
                        (which == table_id::rwlock_instances && arr == kArrayRwlocks) ||
                        (which == table_id::cond_instances && arr == kArrayConds)))
        continue;
      for (std::uint64_t i = 0; i < r_.count(arr); ++i) {
        sync_copy s;
        if (!accept(read_sync(*r_.at<sync_instance>(arr, i), s))) continue;
        const class_entry* c = class_at(s.class_index);
        if (c == nullptr) {
          ++invalid;
          continue;
        }
        auto& x = add_row();
        x.push_back(text_cell(std::string_view(c->name)));
        x.push_back(int_cell(s.identity));
        if (summary) {
          append_stat_cells(x, s.stat);
        } else if (arr == kArrayMutexes) {
          x.push_back(nullable_int(s.owner_thread_id));
        } else if (arr == kArrayRwlocks) {
          x.push_back(nullable_int(s.owner_thread_id));
          x.push_back(int_cell(s.readers));
        }
      }
    }
    if (summary) {
      for_each_file([this](const file_copy& f, const class_entry& c) {
        auto& x = add_row();
        x.push_back(text_cell(std::string_view(c.name)));
        x.push_back(int_cell(f.identity));
        append_stat_cells(x, io_star(f.stats));
      });
    }
  }

  void setup_objects() {
    for (std::uint64_t i = 0; i < r_.count(kArraySetupObjects); ++i) {
      object_copy o;
      if (!accept(read_object(*r_.at<object_record>(kArraySetupObjects, i), o))) continue;
      if (o.object_type != kSetupObjectTable) {
        ++invalid;
        continue;
      }
      auto& x = add_row();
      x.push_back(text_cell(std::string_view("TABLE")));
      x.push_back(text_cell(o.schema.str()));
      x.push_back(text_cell(o.name.str()));
      x.push_back(yes_no(o.enabled != 0));
      x.push_back(yes_no(o.timed != 0));
    }
  }

  // file_instances (summary = false) or file_summary_by_instance (summary = true).
  void file_instances(bool summary) {
    load_classes();
    for_each_file([this, summary](const file_copy& f, const class_entry& c) {
      auto& x = add_row();
      x.push_back(text_cell(f.name.str()));
      x.push_back(text_cell(std::string_view(c.name)));
      if (summary) {
        x.push_back(int_cell(f.identity));
        append_io_cells(x, f.stats);
      } else {
        x.push_back(int_cell(f.open_count));
      }
    });
  }

  void file_summary_by_event_name() {
    load_classes();
    const std::vector<io_stats> sums = file_class_stats();
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      if (!classes_[c].valid || classes_[c].kind != kKindFile) continue;
      auto& x = add_row();
      x.push_back(text_cell(std::string_view(classes_[c].name)));
      append_io_cells(x, sums[c]);
    }
  }

  // table_io_waits_summary_by_table (by_index = false) or _by_index_usage (true).
  void table_io(bool by_index) {
    table_copy t;
    for (std::uint64_t i = 0; i < r_.count(kArrayTables); ++i) {
      const table_share& rec = *r_.at<table_share>(kArrayTables, i);
      if (!accept(read_versioned(rec, [this, i, &t](const table_share& s) { copy_table(i, s, t, true); })))
        continue;
      const char* type = object_type_name(t.object_type);
      if (type == nullptr) {
        ++invalid;
        continue;
      }
      auto key = [&](row_builder& x) {
        x.push_back(text_cell(std::string_view(type)));
        x.push_back(text_cell(t.schema.str()));
        x.push_back(text_cell(t.name.str()));
      };
      if (!by_index) {
        table_io_stat sum = kZeroTableIo;
        merge_table_io(sum, t.no_index);
        for (const index_copy& ix : t.indexes) merge_table_io(sum, ix.stat);
        auto& x = add_row();
        key(x);
        append_table_io_cells(x, sum);
        continue;
      }
      for (const index_copy& ix : t.indexes) {
        auto& x = add_row();
        key(x);
        x.push_back(text_cell(ix.name.str()));
        append_table_io_cells(x, ix.stat);
      }
      auto& x = add_row();
      key(x);
      x.push_back(null_cell());  // io that used no index
      append_table_io_cells(x, t.no_index);
    }
  }

  void status(bool alive, std::uint64_t torn_total, std::uint64_t invalid_total) {
    auto put = [this](std::string name, std::uint64_t v) {
      auto& x = add_row();
      x.push_back(text_cell(std::move(name)));
      x.push_back(int_cell(v));
    };
    put("layout_version", load_relaxed(h_.layout_version));
    put("pid", load_relaxed(h_.pid));
    put("provider_alive", alive ? 1 : 0);
    put("creation_time_ns", load_relaxed(h_.creation_time_ns));
    put("ready", load_relaxed(h_.ready));
    put("exited", load_relaxed(h_.exited));
    put("setup_generation", load_relaxed(h_.setup_generation));
    put("next_thread_id", load_relaxed(h_.next_thread_id));
    put("wait_stack_depth", r_.stack_depth);
    put("history_per_thread", r_.history_per_thread);
    put("history_long_batch", r_.history_long_batch);
    put("max_indexes_per_table", r_.indexes_per_table);
    for (const known_array& k : kKnownArrays) {
      const std::uint64_t n = r_.count(k.id);
      put(std::string(k.status_name) + "_size", n);
      put(std::string(k.status_name) + "_memory", n * k.stride);
    }
    put("total_memory", r_.map.size());
    for (std::uint32_t id = 0; id < kLostCount; ++id) put(kLostNames[id], load_relaxed(h_.lost[id]));
    put("torn_rows_skipped", torn_total);
    put("invalid_rows_skipped", invalid_total);
  }

 private:
  row_builder& add_row() {
    flush();
    pending_ = true;
    cur_.n = 0;
    next_text_ = 0;
    return cur_;
  }

  bool accept(rd res) {
    if (res == rd::torn) ++torn;
    return res == rd::ok;
  }

  // Every class record, copied once per scan.
  void load_classes() {
    if (classes_loaded_) return;
    classes_loaded_ = true;
    classes_.resize(r_.classes);
    for (std::uint64_t i = 0; i < r_.classes; ++i) {
      class_copy c;
      if (!accept(read_class(*r_.at<class_record>(kArrayClasses, i), c))) continue;
      class_entry& e = classes_[i];
      e.valid = true;
      e.kind = c.kind;
      e.flags = c.flags;
      e.stat = c.stat;
      e.name = c.name.str();
    }
  }

  // 1-based class index → the class, nullptr if out of range or not allocated.
  const class_entry* class_at(std::uint32_t index) const {
    if (index == 0 || index > classes_.size()) return nullptr;
    const class_entry& e = classes_[index - 1];
    return e.valid ? &e : nullptr;
  }

  // Every allocated file instance whose class is an allocated file class, in array
  // order; the others are counted invalid.
  template <class Fn>
  void for_each_file(Fn&& fn) {
    load_classes();
    file_copy f;
    for (std::uint64_t i = 0; i < r_.count(kArrayFiles); ++i) {
      if (!accept(read_file(*r_.at<file_instance>(kArrayFiles, i), f))) continue;
      const class_entry* c = class_at(f.class_index);
      if (c == nullptr || c->kind != kKindFile) {
        ++invalid;
        continue;
      }
      fn(f, *c);
    }
  }

  // Per class (index = class index - 1), for the allocated file classes: the class's
  // bucket of deleted files + every allocated file instance of the class.
  std::vector<io_stats> file_class_stats() {
    load_classes();
    std::vector<io_stats> sums(classes_.size(), kZeroIoStats);
    for (std::size_t c = 0; c < classes_.size(); ++c) {
      if (!classes_[c].valid || classes_[c].kind != kKindFile) continue;
      if (const io_stats* b = r_.at<io_stats>(kArrayClassIo, c)) merge_io_stats(sums[c], load_io_stats(*b));
    }
    for_each_file([&sums](const file_copy& f, const class_entry&) {
      merge_io_stats(sums[f.class_index - 1], f.stats);
    });
    return sums;
  }

  static const char* object_type_name(std::uint8_t type) {
    return type == kObjectTypeTable            ? "TABLE"
           : type == kObjectTypeTemporaryTable ? "TEMPORARY TABLE"
                                               : nullptr;
  }

  struct index_copy {
    fixed_str<kIndexNameLen> name;
    table_io_stat stat = kZeroTableIo;
  };
  struct table_copy {
    std::uint8_t object_type = 0;
    fixed_str<kObjectSchemaLen> schema;
    fixed_str<kTableNameLen> name;
    table_io_stat no_index = kZeroTableIo;
    std::vector<index_copy> indexes;  // the declared ones
  };

  // Copies the share in slot `slot` (inside a read_versioned / read_referenced copy:
  // the share's lock word is re-checked around it) and its declared indexes: the first
  // index_count (acquire: the provider writes an index's name before publishing the
  // count) of its max_indexes_per_table slots.
  void copy_table(std::uint64_t slot, const table_share& s, table_copy& c, bool stats) {
    c.object_type = load_relaxed(s.object_type);
    c.schema.load(s.schema);
    c.name.load(s.name);
    if (stats) c.no_index = load_table_io(s.no_index);
    std::uint64_t n = load_acquire(s.index_count);
    if (n > r_.indexes_per_table) n = r_.indexes_per_table;
    c.indexes.resize(n);
    for (std::uint64_t k = 0; k < n; ++k) {
      const index_stat* ix = r_.at<index_stat>(kArrayTableIndexes, slot * r_.indexes_per_table + k);
      if (ix == nullptr) {  // cannot happen: the geometry was checked
        c.indexes.resize(k);
        break;
      }
      c.indexes[k].name.load(ix->name);
      if (stats) c.indexes[k].stat = load_table_io(ix->stat);
    }
  }

  // The name of the file a wait names, if its record still has the event's version.
  const std::optional<std::string>& file_name_of(std::uint32_t index, std::uint32_t version) {
    static const std::optional<std::string> none;
    if (index == 0 || index > r_.count(kArrayFiles)) return none;
    const std::uint64_t key = (std::uint64_t{index} << 32) | version;
    auto it = file_refs_.find(key);
    if (it == file_refs_.end()) {
      fixed_str<kObjectNameLen> name;
      bool name_ok = false;
      const bool ok = read_referenced(*r_.at<file_instance>(kArrayFiles, index - 1), version,
                                      [&](const file_instance& f) { name_ok = load_file_name(f, name); }) &&
                      name_ok;
      it = file_refs_.emplace(key, ok ? std::optional<std::string>(name.str()) : std::nullopt).first;
    }
    return it->second;
  }

  struct table_ref {
    const char* type = nullptr;
    std::string schema, name;
    std::vector<std::string> indexes;
  };

  // The table share a wait names, if it still has the event's version; nullptr if not.
  const table_ref* table_of(std::uint32_t index, std::uint32_t version) {
    if (index == 0 || index > r_.count(kArrayTables)) return nullptr;
    const std::uint64_t key = (std::uint64_t{index} << 32) | version;
    auto it = table_refs_.find(key);
    if (it == table_refs_.end()) {
      std::optional<table_ref> ref;
      table_copy t;
      if (read_referenced(*r_.at<table_share>(kArrayTables, index - 1), version,
                          [this, index, &t](const table_share& s) { copy_table(index - 1, s, t, false); })) {
        if (const char* type = object_type_name(t.object_type)) {
          ref.emplace();
          ref->type = type;
          ref->schema = t.schema.str();
          ref->name = t.name.str();
          for (const index_copy& ix : t.indexes) ref->indexes.push_back(ix.name.str());
        }
      }
      it = table_refs_.emplace(key, std::move(ref)).first;
    }
    return it->second ? &*it->second : nullptr;
  }

  void load_timers() {
    for (int k = 0; k < timers::timer_kind_count; ++k) {
      const auto& d = h_.timers[k];
      converter& c = timers_[k];
      c.base = load_relaxed(d.base);
      c.mult = load_relaxed(d.mult);
      c.shift = load_relaxed(d.shift);
      if (c.shift > 127) c.mult = 0;  // garbage: a shift this large is undefined
    }
  }

  // SOURCE text of a 1-based source index; nullopt-like (false) when unknown.
  const std::string* source_ref(std::uint32_t index) {
    std::string dummy;
    if (!source_text(index, dummy, true)) return nullptr;
    return &sources_.find(index)->second.second;
  }
  bool source_text(std::uint32_t index, std::string& text, bool no_copy = false) {
    if (index == 0 || index > r_.count(kArraySources)) return false;
    auto it = sources_.find(index);
    if (it == sources_.end()) {
      const source_record& s = *r_.at<source_record>(kArraySources, index - 1);
      std::pair<bool, std::string> v{false, {}};
      const std::uint32_t st = load_acquire(s.state);
      if (st == kSourceReady) {
        fixed_str<kSourceLen> f;
        f.load(s.text);
        std::atomic_thread_fence(std::memory_order_acquire);
        if (load_relaxed(s.state) == st) v = {true, f.str()};
      }
      it = sources_.emplace(index, std::move(v)).first;
    }
    if (!it->second.first) return false;
    if (!no_copy) text = it->second.second;
    return true;
  }

  void emit_wait(const wait_copy& c) {
    const class_entry* cls = class_at(c.class_index);
    if (cls == nullptr) {
      ++invalid;
      return;
    }
    auto& x = add_row();
    const bool* w = out_.wanted;
    if (w == nullptr) {
      emit_wait_all(x, *cls, c);
      return;
    }
    // Only the wanted columns of wait_columns() (19, in that order) are computed.
    if (x.slots.size() < 19) x.slots.resize(19);
    x.n = 19;
    for (auto& v : x.slots) v = cell{};
    cell* o = x.slots.data();
    if (w[0]) o[0] = int_cell(c.thread_id);
    if (w[1]) o[1] = int_cell(c.event_id);
    if (w[2]) o[2] = nullable_int(c.end_event_id);
    if (w[3]) o[3] = stable_text(std::string_view(cls->name));
    if (w[4]) {
      const std::string* src = source_ref(c.source_index);
      if (src != nullptr) o[4] = stable_text(std::string_view(*src));
    }
    if (w[5] || w[6] || w[7]) {
      row_builder& t = times_;
      t.n = 0;
      append_times(t, c);
      o[5] = t.slots[0], o[6] = t.slots[1], o[7] = t.slots[2];
    }
    if (w[9] || w[10] || w[11] || w[12]) {
      row_builder& t = objects_;
      t.n = 0;
      append_object(t, c);
      o[9] = t.slots[0], o[10] = t.slots[1], o[11] = t.slots[2], o[12] = t.slots[3];
    }
    if (w[13]) o[13] = int_cell(c.object_instance_begin);
    if (w[14]) o[14] = nullable_int(c.nesting_event_id);
    if (w[15] && c.nesting_type == kNestingWait) o[15] = stable_text(std::string_view("WAIT"));
    if (w[16])
      if (const char* op = operation_name(c.operation)) o[16] = stable_text(std::string_view(op));
    if (w[17] && c.number_of_bytes >= 0) o[17] = int_cell_signed(c.number_of_bytes);
    if (w[18]) o[18] = int_cell(c.flags);
  }

  void emit_wait_all(row_builder& x, const class_entry& k, const wait_copy& c) {
    const class_entry* cls = &k;
    x.reserve(19);
    x.push_back(int_cell(c.thread_id));
    x.push_back(int_cell(c.event_id));
    x.push_back(nullable_int(c.end_event_id));
    x.push_back(stable_text(std::string_view(cls->name)));
    const std::string* src = source_ref(c.source_index);
    x.push_back(src != nullptr ? stable_text(std::string_view(*src)) : null_cell());
    append_times(x, c);
    x.push_back(null_cell());  // spins
    append_object(x, c);
    x.push_back(int_cell(c.object_instance_begin));
    x.push_back(nullable_int(c.nesting_event_id));
    x.push_back(c.nesting_type == kNestingWait ? stable_text(std::string_view("WAIT")) : null_cell());
    const char* op = operation_name(c.operation);
    x.push_back(op != nullptr ? stable_text(std::string_view(op)) : null_cell());
    // -1 = NULL; other negative values are garbage, NULL too.
    x.push_back(c.number_of_bytes < 0 ? null_cell() : int_cell_signed(c.number_of_bytes));
    x.push_back(int_cell(c.flags));
  }

  // timer_start, timer_end, timer_wait.
  void append_times(row_builder& x, const wait_copy& c) {
    const converter* conv = c.timer >= 1 && c.timer < timers::timer_kind_count ? &timers_[c.timer] : nullptr;
    if (conv == nullptr || conv->mult == 0) {
      for (int k = 0; k < 3; ++k) x.push_back(null_cell());
      return;
    }
    const std::uint64_t start = to_pico(*conv, c.timer_start);
    x.push_back(int_cell(start));
    std::uint64_t end = 0;
    if (c.state == kWaitRunning) {
      const auto kind = static_cast<timers::timer_kind>(c.timer);
      if (kind == timers::timer_kind::thread_cpu) {  // per thread: "now" means nothing here
        x.push_back(null_cell());
        x.push_back(null_cell());
        return;
      }
      end = to_pico(*conv, timers::read(kind));
    } else {
      end = to_pico(*conv, c.timer_end);
    }
    x.push_back(int_cell(end));
    x.push_back(int_cell(end >= start ? end - start : 0));
  }

  // object_schema, object_name, index_name, object_type.
  void append_object(row_builder& x, const wait_copy& c) {
    if (c.object_kind == kObjectFile) {
      const std::optional<std::string>& name = file_name_of(c.object_index, c.object_version);
      x.push_back(null_cell());
      x.push_back(name ? text_cell(std::string_view(*name)) : null_cell());
      x.push_back(null_cell());
      x.push_back(text_cell(std::string_view("FILE")));
      return;
    }
    if (c.object_kind == kObjectTable) {
      if (const table_ref* t = table_of(c.object_index, c.object_version)) {
        x.push_back(text_cell(std::string_view(t->schema)));
        x.push_back(text_cell(std::string_view(t->name)));
        x.push_back(c.index_number >= 1 && c.index_number <= t->indexes.size()
                        ? text_cell(std::string_view(t->indexes[c.index_number - 1]))
                        : null_cell());
        x.push_back(text_cell(std::string_view(t->type)));
        return;
      }
    }
    for (int k = 0; k < 4; ++k) x.push_back(null_cell());  // no object, or one that is gone
  }

  const region_reader::impl& r_;
  const region_header& h_;
  // Text made for the row being built (copied from a record, or computed); reused
  // row after row. No row has more than a handful of text cells.
  static constexpr unsigned kTextSlots = 16;
  std::string text_slots_[kTextSlots];
  unsigned next_text_ = 0;
  cell text_cell(std::string_view s) {
    std::string& slot = text_slots_[next_text_++ % kTextSlots];
    slot.assign(s.data(), s.size());
    return cell{false, 0, slot};
  }
  cell text_cell(std::string&& s) {
    std::string& slot = text_slots_[next_text_++ % kTextSlots];
    slot = std::move(s);
    return cell{false, 0, slot};
  }

  row_sink& out_;
  row_builder cur_;
  row_builder times_;
  row_builder objects_;
  std::vector<cell_view> views_;
  bool pending_ = false;
  bool classes_loaded_ = false;
  std::vector<class_entry> classes_;
  converter timers_[timers::timer_kind_count];
  std::unordered_map<std::uint32_t, std::pair<bool, std::string>> sources_;
  // Objects of wait events by (index << 32 | version), looked up once per scan.
  std::unordered_map<std::uint64_t, std::optional<std::string>> file_refs_;
  std::unordered_map<std::uint64_t, std::optional<table_ref>> table_refs_;
};

}  // namespace

// ---------------------------------------------------------------------------
// Public functions

const std::vector<table_def>& tables() noexcept {
  static const std::vector<table_def> all = build_tables();
  return all;
}

const table_def* find_table(std::string_view name) noexcept {
  for (const table_def& t : tables())
    if (name == t.name) return &t;
  return nullptr;
}

const table_def& table(table_id id) noexcept { return tables()[static_cast<std::size_t>(id)]; }

int column_index(const table_def& t, std::string_view name) noexcept {
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (name == t.columns[i].name) return static_cast<int>(i);
  return -1;
}

region_reader::region_reader(std::unique_ptr<impl> p) noexcept : impl_(std::move(p)) {}
region_reader::~region_reader() = default;

std::unique_ptr<region_reader> region_reader::open(const std::string& path, bool writable,
                                                   region_error& err) noexcept {
  try {
    err = {};
    auto p = std::make_unique<impl>();
    p->map = region_map::open(path, writable, err);
    if (err) return nullptr;
    if (!p->map.valid()) {
      err = internal_error("the region could not be mapped");
      return nullptr;
    }
    err = p->load_geometry();
    if (err) return nullptr;
    return std::unique_ptr<region_reader>(new region_reader(std::move(p)));
  } catch (const std::bad_alloc&) {
    err = out_of_memory();
  } catch (const std::exception& e) {
    err = internal_error(e.what());
  } catch (...) {
    err = internal_error("unknown error");
  }
  return nullptr;
}

namespace {
struct vector_sink final : row_sink {
  std::vector<pfs::reader::row>& out;
  explicit vector_sink(std::vector<pfs::reader::row>& o) : out(o) {}
  bool row(const cell_view* cells, std::size_t n) override {
    pfs::reader::row r(n);
    for (std::size_t k = 0; k < n; ++k) {
      r[k].null = cells[k].null;
      r[k].i = cells[k].i;
      r[k].s.assign(cells[k].s.data(), cells[k].s.size());
    }
    out.push_back(std::move(r));
    return true;
  }
};
}  // namespace

region_error region_reader::scan(const table_def& t, std::vector<pfs::reader::row>& out) noexcept {
  out.clear();
  vector_sink sink(out);
  region_error e = scan(t, sink);
  if (e) out.clear();
  return e;
}

region_error region_reader::scan(const table_def& t, row_sink& out) noexcept {
  try {
    if (t.id >= static_cast<std::uint32_t>(table_id::count)) return internal_error("unknown table");
    const impl& r = *impl_;
    // A file that shrinks during the scan makes the next access fault; fault_guard
    // then swaps the mapping for zeros and the scan ends on them, to be thrown away.
    fault_guard::scope guard;
    if (r.map.lost()) return changed_while_read(r.map.path());
    // A file shrunk under the mapping would fault on access: refuse to read it.
    struct stat st {};
    if (fstat(r.map.fd(), &st) == 0 && static_cast<std::uint64_t>(st.st_size) < r.map.size()) {
      region_error e = changed_while_read(r.map.path());
      e.detail = "The file has " + std::to_string(st.st_size) + " bytes, " + std::to_string(r.map.size()) +
                 " were mapped: it was truncated.";
      return e;
    }
    scanner s(r, out);
    switch (static_cast<table_id>(t.id)) {
      case table_id::setup_instruments:
        s.setup_instruments();
        break;
      case table_id::setup_consumers:
        s.setup_consumers();
        break;
      case table_id::setup_timers:
        s.setup_timers();
        break;
      case table_id::setup_actors:
        s.setup_actors();
        break;
      case table_id::performance_timers:
        s.performance_timers();
        break;
      case table_id::threads:
        s.threads();
        break;
      case table_id::events_waits_current:
        s.waits_per_thread(false);
        break;
      case table_id::events_waits_history:
        s.waits_per_thread(true);
        break;
      case table_id::events_waits_history_long:
        s.waits_history_long();
        break;
      case table_id::events_waits_summary_global_by_event_name:
        s.summary_global();
        break;
      case table_id::events_waits_summary_by_thread_by_event_name:
        s.summary_by_thread();
        break;
      case table_id::events_waits_summary_by_instance:
      case table_id::mutex_instances:
      case table_id::rwlock_instances:
      case table_id::cond_instances:
        s.sync_instances(static_cast<table_id>(t.id));
        break;
      case table_id::status:
        s.status(r.map.provider_alive(), impl_->torn.load(std::memory_order_relaxed),
                 impl_->invalid.load(std::memory_order_relaxed));
        break;
      case table_id::setup_objects:
        s.setup_objects();
        break;
      case table_id::file_instances:
        s.file_instances(false);
        break;
      case table_id::file_summary_by_event_name:
        s.file_summary_by_event_name();
        break;
      case table_id::file_summary_by_instance:
        s.file_instances(true);
        break;
      case table_id::table_io_waits_summary_by_table:
        s.table_io(false);
        break;
      case table_id::table_io_waits_summary_by_index_usage:
        s.table_io(true);
        break;
      case table_id::count:
        break;
    }
    s.flush();
    if (r.map.lost()) return changed_while_read(r.map.path());
    impl_->torn.fetch_add(s.torn, std::memory_order_relaxed);
    impl_->invalid.fetch_add(s.invalid, std::memory_order_relaxed);
    return {};
  } catch (const std::bad_alloc&) {
    return out_of_memory();
  } catch (const std::exception& e) {
    return internal_error(e.what());
  } catch (...) {
    return internal_error("unknown error");
  }
}

std::uint64_t region_reader::estimated_rows(const table_def& t) const noexcept {
  const impl& r = *impl_;
  switch (static_cast<table_id>(t.id)) {
    case table_id::setup_instruments:
    case table_id::events_waits_summary_global_by_event_name:
      return r.classes;
    case table_id::setup_consumers:
      return kConsumerCount;
    case table_id::setup_timers:
      return 1;
    case table_id::setup_actors:
      return r.count(kArraySetupActors);
    case table_id::performance_timers:
      return timers::timer_kind_count - 1;
    case table_id::threads:
      return r.threads;
    case table_id::events_waits_current:
      return r.count(kArrayWaitStacks);
    case table_id::events_waits_history:
      return r.count(kArrayWaitHistory);
    case table_id::events_waits_history_long:
      return r.count(kArrayHistoryLong);
    case table_id::events_waits_summary_by_thread_by_event_name:
      return r.count(kArrayThreadClassStats);
    case table_id::events_waits_summary_by_instance:
      return r.count(kArrayMutexes) + r.count(kArrayRwlocks) + r.count(kArrayConds) + r.count(kArrayFiles);
    case table_id::mutex_instances:
      return r.count(kArrayMutexes);
    case table_id::rwlock_instances:
      return r.count(kArrayRwlocks);
    case table_id::cond_instances:
      return r.count(kArrayConds);
    case table_id::status:
      return kStatusRows;
    case table_id::setup_objects:
      return r.count(kArraySetupObjects);
    case table_id::file_instances:
    case table_id::file_summary_by_instance:
      return r.count(kArrayFiles);
    case table_id::file_summary_by_event_name:
      return r.classes;
    case table_id::table_io_waits_summary_by_table:
      return r.count(kArrayTables);
    case table_id::table_io_waits_summary_by_index_usage:
      // One row per declared index (at most max_indexes_per_table) + one per table.
      return r.count(kArrayTables) + r.count(kArrayTableIndexes);
    case table_id::count:
      break;
  }
  return 0;
}

std::uint64_t region_reader::torn_rows_skipped() const noexcept {
  return impl_->torn.load(std::memory_order_relaxed);
}

std::uint64_t region_reader::invalid_rows_skipped() const noexcept {
  return impl_->invalid.load(std::memory_order_relaxed);
}

std::uint32_t region_reader::find_class(std::string_view name) const noexcept {
  const impl& r = *impl_;
  if (name.size() >= kNameLen) return 0;
  for (std::uint64_t i = 0; i < r.classes; ++i) {
    class_copy c;
    if (read_class(*r.at<class_record>(kArrayClasses, i), c) != rd::ok) continue;
    if (std::string_view(c.name.buf, c.name.len) == name) return static_cast<std::uint32_t>(i + 1);
  }
  return 0;
}

const region_map& region_reader::region() const noexcept { return impl_->map; }

}  // namespace pfs::reader
