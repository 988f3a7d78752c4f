// The event path of file io and table io (WL#4895), inline, on top of
// event_path.h. Same rules: no lock, no allocation, no system call but the timer.
//
// File and table statistics may be updated by several threads at once (two threads
// reading one file, two threads fetching from one table), so they use atomic adds;
// an io call costs hundreds of nanoseconds or more, so these are cheap in context.
#pragma once

#include "agent/provider/event_path.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"

namespace pfs::detail {

// Process-local view of the io arrays, filled by init (like g_hot).
struct io_hot_state {
  file_instance* files = nullptr;
  std::uint32_t file_count = 0;
  wait_stat* file_waits = nullptr;  // file_count entries: events_waits_summary_by_instance
  std::uint32_t* fd_map = nullptr;  // fd -> 1-based file instance; 0 = not tracked
  std::uint32_t fd_map_size = 0;
  table_share* tables = nullptr;
  std::uint32_t table_count = 0;
  index_stat* indexes = nullptr;
  std::uint32_t indexes_per_table = 0;
  table_lock_stat* table_locks = nullptr;  // table_count entries (same index as tables)
};
extern io_hot_state g_io;

inline void add_stat_atomic(std::uint64_t& count, std::uint64_t& sum, std::uint64_t& sum_hi,
                            std::uint64_t& min, std::uint64_t& max, std::uint64_t n, bool timed,
                            std::uint64_t ps) {
  __atomic_fetch_add(&count, n, __ATOMIC_RELAXED);
  if (!timed) return;
  add_sum_atomic(sum, sum_hi, ps);
  atomic_min(min, ps);
  atomic_max(max, ps);
}

// ---------------------------------------------------------------------------
// File io

enum class io_group { read, write, misc };

inline io_group group_of(int op) {
  if (op == kOpFileRead) return io_group::read;
  if (op == kOpFileWrite) return io_group::write;
  return io_group::misc;
}

inline file_instance* file_of_fd(int fd) {
  if (fd < 0 || static_cast<std::uint32_t>(fd) >= g_io.fd_map_size) return nullptr;
  const std::uint32_t index = load_relaxed(g_io.fd_map[fd]);
  return index == 0 ? nullptr : &g_io.files[index - 1];
}

inline bool begin_file_wait(wait_locker& l, file_instance* f, int op) {
  if (f == nullptr || !load_relaxed(g_hot.recording)) return false;
  const std::uint32_t key = load_relaxed(f->class_index);
  if (!begin_wait_flags(l, key, class_flags_of(key), load_relaxed(f->identity), op)) return false;
  wait_record& e = l.event;
  e.object_kind = kObjectFile;
  e.object_index = static_cast<std::uint32_t>(f - g_io.files) + 1;
  e.object_version = load_relaxed(f->lock) & ~kStateMask;
  l.object = f;
  return true;
}

// bytes: what the call transferred (read/write), or -1.
inline void end_file_wait(wait_locker& l, std::int64_t bytes) {
  const std::uint64_t ps = stop_timer(l);
  const bool timed = l.event.timer != 0;
  l.event.number_of_bytes = bytes;
  // file_summary_by_instance and _by_event_name: MySQL's rule (the instrument and
  // global_instrumentation, which begin_file_wait already checked).
  auto* f = static_cast<file_instance*>(l.object);
  io_stat& s = group_of(l.event.operation) == io_group::read    ? f->stats.read
               : group_of(l.event.operation) == io_group::write ? f->stats.write
                                                                : f->stats.misc;
  add_stat_atomic(s.count, s.sum, s.sum_hi, s.min, s.max, 1, timed, ps);
  if (bytes > 0) __atomic_fetch_add(&s.bytes, static_cast<std::uint64_t>(bytes), __ATOMIC_RELAXED);
  // The file's row of events_waits_summary_by_instance, under its own consumer.
  if (l.class_flags & kFlagInstanceStats)
    aggregate_shared(g_io.file_waits[static_cast<std::uint64_t>(f - g_io.files)], timed, ps);
  aggregate_global(l, timed, ps);
  if (l.thread_flags & kThreadSummary)
    aggregate_single(l.thread->class_stats[l.event.class_index - 1], timed, ps);
  if (timed && l.thread->wait_histogram_of != nullptr) add_to_histogram(*l.thread, l.event.class_index, ps);
  finish_slot(l);
}

// ---------------------------------------------------------------------------
// Table io

// A wait of class `key` on table t (table io, or a table lock): enabled and timed
// only when both the class and the table's setup_objects row say so; its object
// is the table (OBJECT_TYPE, OBJECT_SCHEMA, OBJECT_NAME).
inline bool begin_table_object_wait(wait_locker& l, table_share* t, std::uint32_t key, int op) {
  const std::uint8_t cflags = static_cast<std::uint8_t>(
      class_flags_of(key) & (load_relaxed(t->derived) | kFlagInstanceStats | kFlagEventNameStats));
  if (!begin_wait_flags(l, key, cflags, load_relaxed(t->identity), op)) return false;
  wait_record& e = l.event;
  e.object_kind = kObjectTable;
  e.object_index = static_cast<std::uint32_t>(t - g_io.tables) + 1;
  e.object_version = load_relaxed(t->lock) & ~kStateMask;
  l.object = t;
  return true;
}

// index: 1-based declared index, 0 = no index. flags: the FLAGS column.
inline bool begin_table_wait(wait_locker& l, table_share* t, int op, std::uint32_t index,
                             std::uint32_t flags) {
  if (t == nullptr || !load_relaxed(g_hot.recording)) return false;
  if (!begin_table_object_wait(l, t, load_relaxed(t->class_index), op)) return false;
  l.event.index_number = index <= load_relaxed(t->index_count) ? index : 0;
  l.event.flags = flags;
  return true;
}

// A table io starting with no wait running: the table io kept in slot 0 (and the
// latest wait above it) give way; the new one takes slot 0.
inline void reset_wait_frame(thread_context& t) {
  if (t.depth != 0 || t.stack == t.stack_base) return;
  complete_deferred(&t);  // a lock acquisition's event in the slot cleared here
  if (load_relaxed(t.stack[0].state) != kWaitEmpty) clear_event(t.stack[0]);
  t.stack = t.stack_base;
  t.stack_room = g_hot.stack_depth;
}

// A top-level table io just completed in slot 0: it stays there (WL#4895: the
// latest table io is a second row of events_waits_current) and the waits that
// follow use the slots above it, until the next table io.
inline void keep_table_io(wait_locker& l) {
  thread_context& t = *l.thread;
  if (l.slot == nullptr || l.slot != t.stack_base || t.depth != 0 || g_hot.stack_depth < 2) return;
  t.stack = t.stack_base + 1;
  t.stack_room = g_hot.stack_depth - 1;
}

// rows: how many rows the event covers (a batch, such as a whole scan, is one
// event of many rows). NUMBER_OF_BYTES shows the row count, as in MySQL 8.
inline void end_table_wait(wait_locker& l, std::uint64_t rows) {
  const std::uint64_t ps = stop_timer(l);
  const bool timed = l.event.timer != 0;
  wait_record& e = l.event;
  e.number_of_bytes = static_cast<std::int64_t>(rows);
  auto* t = static_cast<table_share*>(l.object);
  table_io_stat& ts =
      e.index_number == 0
          ? t->no_index
          : g_io.indexes[static_cast<std::uint64_t>(t - g_io.tables) * g_io.indexes_per_table +
                         e.index_number - 1]
                .stat;
  wait_stat& s = e.operation == kOpTableFetch    ? ts.fetch
                 : e.operation == kOpTableInsert ? ts.insert
                 : e.operation == kOpTableUpdate ? ts.update
                                                 : ts.del;
  add_stat_atomic(s.count, s.sum, s.sum_hi, s.min, s.max, rows, timed, ps);
  // Double timing (WL#4895): table io encloses other waits, so its time stays out
  // of the events_waits_summary_* tables; its counts go in.
  if (l.class_flags & kFlagEventNameStats) {
    if (wait_stat* g = l.thread->global_stats)
      store_relaxed(g[e.class_index - 1].count, load_relaxed(g[e.class_index - 1].count) + rows);
    else
      __atomic_fetch_add(&g_hot.classes[e.class_index - 1].stat.count, rows, __ATOMIC_RELAXED);
  }
  if (l.thread_flags & kThreadSummary) {
    wait_stat& th = l.thread->class_stats[e.class_index - 1];
    store_relaxed(th.count, load_relaxed(th.count) + rows);
  }
  finish_slot(l);
  keep_table_io(l);
}

// ---------------------------------------------------------------------------
// Table locks (MySQL's start_table_lock_wait_v1 / end_table_lock_wait_v1)

// kind: a table_lock_kind. The class is the table's lock class
// (table_lock_stat::class_index, set when the table was declared).
inline bool begin_table_lock_wait(wait_locker& l, table_share* t, int kind) {
  if (t == nullptr || kind < 0 || kind >= kTableLockKinds || g_io.table_locks == nullptr ||
      !load_relaxed(g_hot.recording))
    return false;
  const std::uint64_t slot = static_cast<std::uint64_t>(t - g_io.tables);
  return begin_table_object_wait(l, t, load_relaxed(g_io.table_locks[slot].class_index),
                                 kOpTableLockFirst + kind);
}

// A lock wait encloses no other wait: unlike table io, its time goes into the
// wait summaries as well as into the table's row of the kind.
inline void end_table_lock_wait(wait_locker& l) {
  const std::uint64_t ps = stop_timer(l);
  const bool timed = l.event.timer != 0;
  auto* t = static_cast<table_share*>(l.object);
  wait_stat& s = g_io.table_locks[static_cast<std::uint64_t>(t - g_io.tables)]
                     .kinds[l.event.operation - kOpTableLockFirst];
  add_stat_atomic(s.count, s.sum, s.sum_hi, s.min, s.max, 1, timed, ps);
  aggregate_global(l, timed, ps);
  if (l.thread_flags & kThreadSummary)
    aggregate_single(l.thread->class_stats[l.event.class_index - 1], timed, ps);
  if (timed && l.thread->wait_histogram_of != nullptr) add_to_histogram(*l.thread, l.event.class_index, ps);
  finish_slot(l);
}

}  // namespace pfs::detail
