// The reader library: maps a region file and yields the rows of every
// performance_schema table as plain values (64-bit integers and text), with times in
// picoseconds. The PostgreSQL FDW is written on top of it; this header has no
// PostgreSQL dependency and no function declared here lets an exception escape
// (std::bad_alloc and anything else is caught and reported as a region_error).
//
// Table-driven: tables() describes every table (name, columns, types, nullability);
// region_reader::scan(t) returns the rows of t as vectors of cells in column order.
//
// Value rules (MySQL names in lower case, see reference/mysql_perfschema.md 1.2):
// - Times are bigint picoseconds, NULL when the event was not timed.
// - ENUM('YES','NO') columns are text 'YES' / 'NO'.
// - A region field documented "0 = NULL" (or -1 for number_of_bytes) gives a NULL cell;
//   so does any other negative number_of_bytes (garbage). Every int64 cell is >= 0.
// - Unsigned 64-bit values above INT64_MAX (times, counters, ids) are clamped to
//   INT64_MAX: a bigint cannot hold them and such values only come from garbage.
// - Text cells are always valid UTF-8 (invalid bytes are replaced with '?') and never
//   longer than their region field minus its NUL (strings without a NUL are cut).
// - A column whose column_def::nullable is false never holds a NULL cell, whatever is
//   in the region (the FDW may declare it NOT NULL).
//
// Consistency (see region_layout.h): every shared field is read with
// layout::load_relaxed / load_acquire, records are copied field by field and then
// re-checked (seqlock for wait records, version+state word for class, thread,
// instance, actor, file, table share and setup_objects records). A record that keeps
// changing is retried a few times and then skipped and counted (torn_rows_skipped()).
// Records that are free are not rows; a record in the "dirty" state (being allocated,
// changed or freed) is looked at again a few times and, if it stays dirty, is not a
// row either (as in MySQL) and is not counted. The file or table share a wait event
// names is looked up the same way, by its version rather than its state; when it
// cannot be read consistently the object columns are NULL (the event row is kept).
//
// Robustness: the region is untrusted input. The array directory is copied and
// re-checked against the mapping when the reader opens (later header changes cannot
// move the arrays under the reader), every index found inside a record (class, source,
// thread slot) is range-checked, strings are bounded by their field. Rows that cannot
// be shown because an index in them is invalid are skipped and counted
// (invalid_rows_skipped()):
// - wait events, sync instances and per-instance summaries whose class_index is 0, out
//   of range or names a class that is not allocated;
// - file instances (in every table that lists or sums them) whose class is not an
//   allocated class of kind file;
// - table shares whose object_type is neither TABLE nor TEMPORARY TABLE, and
//   setup_objects rows whose object_type is not TABLE;
// - a threads row whose class is invalid is kept, with NAME 'thread/pfs/unknown'.
// An index that only names something shown in a nullable column (SOURCE, the object of
// a wait) gives a NULL cell instead, and is not counted.
// Each scan also checks that the file was not truncated under the mapping (a shrunk
// file would otherwise fault on access) and fails with region_errc::corrupt if it was.
//
// Threading: one region_reader may be used by several threads at once (scan keeps
// its working state on the stack; the counters are atomic).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "agent/reader/row_filter.h"
#include "agent/region/region.h"

namespace pfs::reader {

// bigint, text, double precision, timestamp with time zone, numeric in PostgreSQL.
// A float64 cell holds its value in cell::d; a timestamp cell holds microseconds
// since the Unix epoch in cell::i; a numeric cell an unsigned 128-bit integer, its
// low 64 bits in cell::i and its high 64 bits in cell::hi (the SUM_TIMER_* sums:
// docs/design.md, "Overflow").
enum class column_type { int64, text, float64, timestamp, numeric };

struct column_def {
  const char* name;
  column_type type;
  bool nullable;
};

// Table ids: the value of table_def::id and the position of the table in tables().
enum class table_id : std::uint32_t {
  setup_instruments = 0,
  setup_consumers,
  setup_timers,
  setup_actors,
  performance_timers,
  threads,
  events_waits_current,
  events_waits_history,
  events_waits_history_long,
  events_waits_summary_global_by_event_name,
  events_waits_summary_by_thread_by_event_name,
  events_waits_summary_by_instance,
  mutex_instances,
  rwlock_instances,
  cond_instances,
  status,
  // File io and table io (appended after status: the ids above stay stable).
  setup_objects,
  file_instances,
  file_summary_by_event_name,
  file_summary_by_instance,
  table_io_waits_summary_by_table,
  table_io_waits_summary_by_index_usage,
  // Units of work (MySQL 5.6 stages and statements, 5.7 transactions, 8.0 histograms).
  events_stages_current,
  events_stages_history,
  events_stages_history_long,
  events_statements_current,
  events_statements_history,
  events_statements_history_long,
  events_transactions_current,
  events_transactions_history,
  events_transactions_history_long,
  events_stages_summary_by_thread_by_event_name,
  events_stages_summary_global_by_event_name,
  events_statements_summary_by_thread_by_event_name,
  events_statements_summary_global_by_event_name,
  events_statements_summary_by_digest,
  events_transactions_summary_by_thread_by_event_name,
  events_transactions_summary_global_by_event_name,
  events_statements_histogram_global,
  events_statements_histogram_by_digest,
  events_waits_histogram_global_by_event_name,
  // Who blocks whom (beyond MySQL).
  lock_contention_by_instance,
  // Socket io (MySQL 5.6+).
  socket_instances,
  socket_summary_by_instance,
  socket_summary_by_event_name,
  // Memory (MySQL 5.7+).
  memory_summary_global_by_event_name,
  memory_summary_by_thread_by_event_name,
  // Errors (MySQL 8.0).
  events_errors_summary_by_thread_by_error,
  events_errors_summary_global_by_error,
  // Table locks (MySQL 5.6+).
  table_lock_waits_summary_by_table,
  // TLS channels (MySQL 8.0).
  tls_channel_status,
  // Data locks (MySQL 8.0).
  data_locks,
  data_lock_waits,
  // Metadata locks (MySQL 8.0).
  metadata_locks,
  // POSIX semaphores (beyond MySQL: the shape of cond_instances).
  sem_instances,
  // Accounts, users and hosts (MySQL 8.0) and the summaries by each.
  accounts,
  users,
  hosts,
  events_waits_summary_by_account_by_event_name,
  events_waits_summary_by_user_by_event_name,
  events_waits_summary_by_host_by_event_name,
  events_stages_summary_by_account_by_event_name,
  events_stages_summary_by_user_by_event_name,
  events_stages_summary_by_host_by_event_name,
  events_statements_summary_by_account_by_event_name,
  events_statements_summary_by_user_by_event_name,
  events_statements_summary_by_host_by_event_name,
  events_transactions_summary_by_account_by_event_name,
  events_transactions_summary_by_user_by_event_name,
  events_transactions_summary_by_host_by_event_name,
  memory_summary_by_account_by_event_name,
  memory_summary_by_user_by_event_name,
  memory_summary_by_host_by_event_name,
  events_errors_summary_by_account_by_error,
  events_errors_summary_by_user_by_error,
  events_errors_summary_by_host_by_error,
  // The program's own metrics (MySQL 8.4's telemetry tables).
  setup_meters,
  setup_metrics,
  count,
};

// What TRUNCATE does (write_rules::truncate) and which of its effects change what a
// scan of a table shows (write_rules::seen), as bits.
enum truncate_effect : std::uint64_t {
  kNoEffect = 0,
  kHideCurrent = 1ull << 0,      // events_waits_current emptied
  kHideHistory = 1ull << 1,      // events_waits_history
  kHideHistoryLong = 1ull << 2,  // events_waits_history_long
  kResetWait = 1ull << 3,        // wait summaries reset (also file and table io)
  kResetThread = 1ull << 4,      // per-thread summaries reset
  kResetFile = 1ull << 5,        // file io summaries reset
  kResetTable = 1ull << 6,       // table io summaries reset
  kEmptyActors = 1ull << 7,      // setup_actors emptied
  kEmptyObjects = 1ull << 8,     // setup_objects emptied
  kHideStages = 1ull << 9,       // events_stages_current, _history, _history_long: one bit each
  kHideStagesHistory = 1ull << 10,
  kHideStagesHistoryLong = 1ull << 11,
  kHideStatements = 1ull << 12,
  kHideStatementsHistory = 1ull << 13,
  kHideStatementsHistoryLong = 1ull << 14,
  kHideTransactions = 1ull << 15,
  kHideTransactionsHistory = 1ull << 16,
  kHideTransactionsHistoryLong = 1ull << 17,
  kResetStages = 1ull << 18,          // stage summaries reset (by thread and global)
  kResetStagesByThread = 1ull << 19,  // by thread only (folded into global first)
  kResetStatements = 1ull << 20,
  kResetStatementsByThread = 1ull << 21,
  kResetTransactions = 1ull << 22,
  kResetTransactionsByThread = 1ull << 23,
  kResetDigests = 1ull << 24,             // the digest table emptied
  kResetStatementHistogram = 1ull << 25,  // events_statements_histogram_global
  kResetDigestHistograms = 1ull << 26,    // events_statements_histogram_by_digest
  kResetWaitHistograms = 1ull << 27,      // events_waits_histogram_global_by_event_name
  kResetLockContention = 1ull << 28,      // lock_contention_by_instance
  kResetSocket = 1ull << 29,              // socket io summaries reset
  kResetMemory = 1ull << 30,              // memory summaries rebased (by thread and global)
  kResetMemoryByThread = 1ull << 31,      // by thread only (the pairs moved to the global rows)
  kResetErrors = 1ull << 32,              // error summaries reset (by thread and global)
  kResetErrorsByThread = 1ull << 33,      // by thread only (folded into the global rows first)
  kResetTableLocks = 1ull << 34,          // table lock summaries reset
  // Summaries by account, user and host (setup::reset_holder_summaries).
  kResetWaitsByAccount = 1ull << 35,
  kResetWaitsByUser = 1ull << 36,
  kResetWaitsByHost = 1ull << 37,
  kResetStagesByAccount = 1ull << 38,
  kResetStagesByUser = 1ull << 39,
  kResetStagesByHost = 1ull << 40,
  kResetStatementsByAccount = 1ull << 41,
  kResetStatementsByUser = 1ull << 42,
  kResetStatementsByHost = 1ull << 43,
  kResetTransactionsByAccount = 1ull << 44,
  kResetTransactionsByUser = 1ull << 45,
  kResetTransactionsByHost = 1ull << 46,
  kResetMemoryByAccount = 1ull << 47,
  kResetMemoryByUser = 1ull << 48,
  kResetMemoryByHost = 1ull << 49,
  kResetErrorsByAccount = 1ull << 50,
  kResetErrorsByUser = 1ull << 51,
  kResetErrorsByHost = 1ull << 52,
  kResetAccounts = 1ull << 53,  // TOTAL_CONNECTIONS restarts
  kResetUsers = 1ull << 54,     // TOTAL_CONNECTIONS restarts
  kResetHosts = 1ull << 55,     // TOTAL_CONNECTIONS restarts
};

// The changes SQL may make (write_rules::ops).
enum write_op : unsigned { kWriteUpdate = 1, kWriteInsert = 2, kWriteDelete = 4, kWriteTruncate = 8 };

// What SQL may change in a table: MySQL's rules (reference: mysql_perfschema.md),
// enforced by the FDW.
struct write_rules {
  unsigned ops = 0;                          // write_op bits
  const char* keys[3] = {};                  // the columns that identify a row (UPDATE, DELETE)
  const char* updatable[4] = {};             // the columns UPDATE may set
  std::uint64_t truncate = kNoEffect;        // what TRUNCATE of the table does
  std::uint64_t seen = kNoEffect;            // the effects that change what a scan of it shows
  std::uint64_t seen_file_rows = kNoEffect;  // ... of which these touch only its wait/io/file rows
                                             // (kResetSocket: only its wait/io/socket rows)
  const char* size_variable = nullptr;       // sizes the table when INSERT finds it full
};

// The values a writable column (updatable, or set by INSERT) accepts, and MySQL's
// default for an inserted row. Declared once per column name (tables.cpp): ENABLED
// means the same in every setup table.
enum class value_domain { any, yes_no, timer_name, object_type, key_text, meter_frequency };
struct column_rule {
  const char* name;
  value_domain domain;
  const char* default_value;  // INSERT with NULL; nullptr: none
  std::size_t max_bytes;      // key_text: the field's size without its NUL; 0: no limit
};
// The rule of a writable column by name; nullptr for columns SQL never writes.
const column_rule* find_column_rule(std::string_view name) noexcept;

struct table_def {
  const char* name;
  std::vector<column_def> columns;
  std::uint32_t id;                     // static_cast<std::uint32_t>(table_id)
  const char* size_variable = nullptr;  // the PFS_* variables that size it; nullptr: fixed
  write_rules writes;                   // ops 0: read-only
};

// Every table, in table_id order. Built on the first call (a few KB; call it once at
// load time, e.g. from _PG_init, if an allocation failure there must be ruled out:
// this function is noexcept and would terminate on std::bad_alloc).
const std::vector<table_def>& tables() noexcept;
// Exact (lower-case) name; nullptr if unknown.
const table_def* find_table(std::string_view name) noexcept;
const table_def& table(table_id id) noexcept;  // id must be < table_id::count
// Position of a column by exact name; -1 if the table has no such column.
int column_index(const table_def& t, std::string_view name) noexcept;

struct cell {
  bool null = true;
  std::int64_t i = 0;    // column_type::int64 (and timestamp: microseconds since the epoch)
  std::string s;         // column_type::text
  double d = 0;          // column_type::float64
  std::uint64_t hi = 0;  // column_type::numeric: the high 64 bits (i: the low ones)
};
using row = std::vector<cell>;  // one cell per column, same order as table_def::columns

// A row handed out without allocation (scan with a row_sink): cells are views,
// valid during the call only.
struct cell_view {
  bool null = true;
  std::int64_t i = 0;
  std::string_view s;
  // One word for both: a cell is float64 or numeric, never both, and the scan's
  // cells stay 40 bytes (a wider cell slowed history_long scans by ~5%).
  union {
    double d = 0;
    std::uint64_t hi;  // column_type::numeric (see cell)
  };
};
// Where a scan in pieces goes on (region_reader::scan with a cursor).
struct scan_cursor {
  std::uint64_t next = 0;  // the record position to resume at (the table's own order)
  bool done = false;       // the end of the table was reached
};

class packed_rows;

class row_sink {
 public:
  // cells: one per column of the table. Return false to stop the scan.
  virtual bool row(const cell_view* cells, std::size_t n) = 0;
  // Asked between records by the tables that can pause (the history_long ones) when
  // scanned with a cursor: true ends this call of scan after the rows delivered so
  // far; the next call with the same cursor goes on from there. region_bytes: the
  // bytes of records this call went past (what it mapped of the region), so that a
  // filter that keeps few rows still pauses.
  virtual bool pause(std::uint64_t region_bytes) {
    (void)region_bytes;
    return false;
  }
  // Columns the sink reads (nullptr: all); others may be left NULL, uncomputed. The
  // columns the filter tests must be among them.
  const bool* wanted = nullptr;
  // Only the rows that pass reach row() (nullptr: all).
  const row_filter* filter = nullptr;
  // Where the builders that can write rows packed (the wait tables) put them instead
  // of calling row(), when the filter needs no built row (packed_rows.h; nullptr:
  // every row comes through row()). The sink's row() then packs the others itself.
  packed_rows* packed = nullptr;

 protected:
  ~row_sink() = default;
};

// Tables and their rows:
// - setup_instruments(name, enabled, timed, trace_enabled): every allocated class whose kind is not
//   thread, in class index order.
// - setup_consumers(name, enabled): the kConsumerCount consumers.
// - setup_timers(name, timer_name): ('wait', header.wait_timer); timer_name NULL if the
//   header holds no valid timer.
// - setup_actors(host, user, role, enabled, history, trace_enabled): allocated actor rows.
// - performance_timers(timer_name, timer_frequency, timer_resolution, timer_overhead):
//   measured live in this process (timers::info), NULLs for an unavailable timer.
// - threads(thread_id, name, type, processlist_user, processlist_host, role,
//   instrumented, history, parent_thread_id, thread_os_id): name = the thread's class
//   (kind thread) or 'thread/pfs/unknown'; user/host/role NULL when empty; parent and
//   thread_os_id NULL when 0. After MySQL 8.0's columns, thread_name: the name the
//   thread gave itself (register_thread's thread_name), NULL when empty.
// - events_waits_current / _history / _history_long(thread_id, event_id, end_event_id,
//   event_name, source, timer_start, timer_end, timer_wait, spins, object_schema,
//   object_name, index_name, object_type, object_instance_begin, nesting_event_id,
//   nesting_event_type, operation, number_of_bytes, flags, + blocking_thread_id,
//   blocking_event_id, signalling_thread_id: who made the thread wait, NULL when unknown).
//   current: per allocated thread, its running or completed stack slots; history: per
//   allocated thread its completed ring slots, oldest first; history_long: completed
//   slots in array order. current/history rows whose thread_id is not the owning
//   thread's (a slot not yet cleared after the thread slot was reused) are not shown.
//   A running event's timer_end is "now" read in this process (NULL, with
//   timer_wait, for THREAD_CPU which is per thread).
//   Object columns: NULL for synch waits. Socket io: object_type 'SOCKET', object_name
//   'ip:port' of the socket while its record has the event's version (MySQL's), else
//   NULL. File io: object_type 'FILE', object_name
//   the file's name while the file record (object_index) still has the event's
//   version (a deleted file keeps its name until its record is reused), else NULL;
//   object_schema and index_name NULL. Table io: object_type 'TABLE' or 'TEMPORARY
//   TABLE', object_schema, object_name and index_name (NULL when no index, or an
//   index_number above the share's index_count) from the table share while it has the
//   event's version (dropped or not); all four NULL once the share was reused.
//   number_of_bytes as stored (table io stores the row count, as MySQL 8).
// - events_waits_summary_global_by_event_name(event_name, count_star, sum_timer_wait,
//   min_timer_wait, avg_timer_wait, max_timer_wait): one row per class of a wait kind,
//   in class order. Mutex/rwlock/cond: class.stat + the stats of every allocated
//   instance of the class. File (socket): the STAR group of file_summary_by_event_name
//   (socket_summary_by_event_name). Table:
//   class.stat's count only (sum, min, avg, max 0): table io time stays out of the
//   events_waits_summary_* timing aggregates (WL#4895 "double timing"); its own
//   summaries are the table_io_waits_summary_* tables.
// - events_waits_summary_by_thread_by_event_name(thread_id, event_name, + 5 stats):
//   every allocated thread x every allocated class of a wait kind (mutex, rwlock,
//   cond, file, table), zero rows included.
// - events_waits_summary_by_instance(event_name, object_instance_begin, + 5 stats):
//   every allocated mutex, rwlock, cond and sem instance, then every allocated file instance,
//   then every allocated socket instance (the STAR group of its read, write and misc
//   groups).
// - socket_instances(event_name, object_instance_begin, thread_id, socket_id, ip, port,
//   state): allocated socket instances (one per open socket descriptor); thread_id NULL
//   when the owner thread had no THREAD_ID; ip '' and port 0 for a unix socket or one
//   not bound or connected yet; state 'IDLE' or 'ACTIVE'.
// - socket_summary_by_instance(event_name, object_instance_begin, + the file groups)
//   and socket_summary_by_event_name(event_name, + the same): as the file summaries;
//   READ = recv, recvfrom, recvmsg; WRITE = send, sendto, sendmsg; MISC = the rest.
// - mutex_instances(name, object_instance_begin, locked_by_thread_id),
//   rwlock_instances(name, object_instance_begin, write_locked_by_thread_id,
//   read_locked_by_count), cond_instances(name, object_instance_begin),
//   sem_instances(name, object_instance_begin) (beyond MySQL: POSIX semaphores).
// - setup_objects(object_type, object_schema, object_name, enabled, timed): allocated
//   object rows; object_type 'TABLE'.
// - file_instances(file_name, event_name, open_count): allocated file instances.
// - file_summary_by_event_name(event_name, STAR, READ, sum_number_of_bytes_read, WRITE,
//   sum_number_of_bytes_write, MISC): one row per allocated class of kind file, in
//   class order: the class's bucket of deleted files + every allocated file instance of
//   the class.
// - file_summary_by_instance(file_name, event_name, object_instance_begin, + the same
//   groups): per allocated file instance.
//   A group is count_x, sum_timer_x, min_timer_x, avg_timer_x, max_timer_x (STAR:
//   count_star, sum_timer_wait, min_timer_wait, avg_timer_wait, max_timer_wait);
//   STAR = READ + WRITE + MISC (counts and sums added, min of the mins, max of the maxes).
// - table_io_waits_summary_by_table(object_type, object_schema, object_name, STAR, READ,
//   WRITE, FETCH, INSERT, UPDATE, DELETE): per allocated table share, its no-index
//   statistics + those of its declared indexes. READ = FETCH, WRITE = INSERT + UPDATE +
//   DELETE, STAR = READ + WRITE. Counts are rows.
// - table_io_waits_summary_by_index_usage(object_type, object_schema, object_name,
//   index_name, + the same groups): per allocated table share, one row per declared
//   index (in declaration order), then one row with index_name NULL (io without index).
//   A share's declared indexes are the first index_count (at most
//   header.max_indexes_per_table) of its index slots.
// - table_lock_waits_summary_by_table(object_type, object_schema, object_name, STAR,
//   READ, WRITE, READ_NORMAL, READ_WITH_SHARED_LOCKS, READ_HIGH_PRIORITY,
//   READ_NO_INSERT, READ_EXTERNAL, WRITE_ALLOW_WRITE, WRITE_CONCURRENT_INSERT,
//   WRITE_LOW_PRIORITY, WRITE_NORMAL, WRITE_EXTERNAL): per allocated table share, its
//   lock waits by kind (table_lock_stat). READ = the five read kinds, WRITE = the five
//   write kinds, STAR = READ + WRITE.
// - status(variable_name, variable_value): layout_version, pid, provider_alive,
//   creation_time_ns, ready, exited, setup_generation, next_thread_id,
//   wait_stack_depth, history_per_thread, history_long_batch, <array>_size (records)
//   and <array>_memory (bytes) for instrument_classes, threads, events_waits_current,
//   events_waits_history, events_waits_summary_by_thread_by_event_name,
//   events_waits_history_long, events_waits_history_long_batches, mutex_instances,
//   rwlock_instances, cond_instances, setup_actors, sources, file_instances,
//   file_summary_by_event_name (the per-class buckets of deleted files), table_shares,
//   table_index_stats, setup_objects; max_indexes_per_table; total_memory (file size);
//   the lost counters (mutex_classes_lost ... sources_lost, trace_errors); torn_rows_skipped,
//   invalid_rows_skipped (this reader's counters).
// Stats: min is 0 when nothing was timed; avg = sum / count (0 when count is 0).
class region_reader {
 public:
  ~region_reader();
  region_reader(const region_reader&) = delete;
  region_reader& operator=(const region_reader&) = delete;

  // Maps and validates the region (region_map::open), then copies and re-checks its
  // array directory. nullptr and err set on failure (err.code ok otherwise). A
  // symbolic link is refused unless follow_symlinks.
  static std::unique_ptr<region_reader> open(const std::string& path, bool writable, region_error& err,
                                             bool follow_symlinks = false) noexcept;

  // Replaces out with a consistent copy of every row of t (one pass over the arrays,
  // each row seqlock/version-checked). t must be an entry of tables() (it is
  // identified by t.id). On error out is left empty.
  region_error scan(const table_def& t, std::vector<row>& out) noexcept;
  // The same rows, one at a time, without allocating per row.
  region_error scan(const table_def& t, row_sink& sink) noexcept;
  // The same in pieces, for a reader that must not hold a whole large table (the
  // FDW): each call delivers rows until the sink asks to pause, and cursor.done says
  // whether the table's end was reached. Tables that cannot pause are delivered whole.
  // Every row is still copied consistently; rows of different calls are not one
  // snapshot (neither are a single pass's: the provider runs meanwhile).
  region_error scan(const table_def& t, row_sink& sink, scan_cursor& cursor) noexcept;

  // Upper bound of the row count from the array sizes.
  std::uint64_t estimated_rows(const table_def& t) const noexcept;
  // The rows the table holds now, as far as the provider's counters tell without a
  // scan (for the planner; not a bound): a history_long table the slots claimed so
  // far, a per-thread table the thread ids handed out so far; others estimated_rows.
  std::uint64_t expected_rows(const table_def& t) const noexcept;

  // Rows skipped because they kept changing while being copied (over this reader's
  // life), and rows skipped because an index in them was invalid.
  std::uint64_t torn_rows_skipped() const noexcept;
  std::uint64_t invalid_rows_skipped() const noexcept;

  // 1-based index of the allocated class with this exact name (for setup writes such
  // as setup::set_instrument); 0 if there is none.
  std::uint32_t find_class(std::string_view name) const noexcept;

  const region_map& region() const noexcept;

  // Each scan first checks with fstat that the file was not shrunk under the mapping
  // (a clean error rather than a scan of zeros after the fault). A caller that checks
  // the file's identity and size itself before its scans (the FDW, once per
  // transaction: fdw/core_region.cpp) turns that off; a file shrunk after its check
  // still ends the scan with "changed while it was read" through the fault guard.
  void check_size_at_each_scan(bool on) noexcept;
  // Closes the region's file when its provider has exited (the mapping stays;
  // provider_alive() is false from then on): region_map::close_file_if_provider_exited.
  // For a caller that keeps many regions mapped.
  bool close_file_if_provider_exited() noexcept;

  struct impl;  // implementation detail (reader.cpp)

 private:
  explicit region_reader(std::unique_ptr<impl> p) noexcept;
  std::unique_ptr<impl> impl_;
};

}  // namespace pfs::reader
