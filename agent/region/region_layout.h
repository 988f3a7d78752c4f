// The shared region: the file a provider process maps and fills, and that readers
// (the FDW, tests, tools) map and copy rows from. This header is the contract
// between the two sides, so everything here is plain data: fixed-size records,
// indexes instead of pointers, little-endian native integers (same machine).
//
// Layout of the file:
//   [region_header, 4096 bytes][array 0][array 1]...   each array 64-byte aligned
// The header's array directory gives offset, record count and record size (stride)
// of every array; an array of count 0 is absent. Readers check every entry against
// the file size before touching anything.
//
// Concurrency rules:
// - Every record a reader copies while a writer may change it starts with a version
//   word. Event records use a seqlock (odd while being written); instance, thread,
//   class and setup rows use a version+state word (low 2 bits: free, dirty, allocated;
//   the version, in the high bits, is bumped on every change of state), as MySQL's
//   pfs_lock. Readers copy with relaxed atomic loads, then re-check the word.
// - Every record has one writer at a time on the event path (its thread, or the
//   thread holding the instrumented lock); setup rows are written by setup writers
//   (the agent's API or the FDW) that hold the region's setup lock (an OFD fcntl lock
//   on byte kSetupLockByte of the file).
// - The provider holds an OFD write lock on byte kAliveLockByte while it runs, so a
//   reader can tell whether the process is still alive (F_OFD_GETLK).
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "agent/region/operation_layout.h"

namespace pfs::layout {

inline constexpr char kMagic[8] = {'P', 'F', 'S', 'R', 'E', 'G', 'N', '1'};
inline constexpr std::uint32_t kLayoutVersion = 6;
inline constexpr std::uint32_t kHeaderSize = 4096;
inline constexpr std::uint64_t kAliveLockByte = 0;
inline constexpr std::uint64_t kSetupLockByte = 1;

// Fixed string widths (bytes, including the terminating NUL).
inline constexpr std::size_t kNameLen = 128;       // instrument and thread class names
inline constexpr std::size_t kSourceLen = 64;      // "file.cpp:123"
inline constexpr std::size_t kProgramLen = 64;     // region_header::program
inline constexpr std::size_t kUserLen = 32;        // setup_actors USER / ROLE
inline constexpr std::size_t kHostLen = 64;        // setup_actors HOST
inline constexpr std::size_t kThreadNameLen = 64;  // free-form name the thread gave itself
inline constexpr std::size_t kObjectSchemaLen = 64;
inline constexpr std::size_t kObjectNameLen = 512;  // file names, table names

// ---------------------------------------------------------------------------
// Version+state word (pfs_lock): low 2 bits state, version in the rest.
inline constexpr std::uint32_t kStateMask = 3;
inline constexpr std::uint32_t kStateFree = 0;
inline constexpr std::uint32_t kStateDirty = 1;
inline constexpr std::uint32_t kStateAllocated = 2;
inline constexpr std::uint32_t kVersionInc = 4;

// ---------------------------------------------------------------------------
// Array directory
enum array_id : std::uint32_t {
  kArrayClasses = 0,             // class_record[max_classes]
  kArrayThreads = 1,             // thread_record[max_threads]
  kArrayWaitStacks = 2,          // wait_record[max_threads * wait_stack_depth]
  kArrayWaitHistory = 3,         // wait_record[max_threads * history_per_thread]
  kArrayThreadClassStats = 4,    // wait_stat[max_threads * max_classes]
  kArrayHistoryLong = 5,         // wait_record[history_long_size]
  kArrayHistoryLongBatches = 6,  // batch_record[history_long_batches]
  kArrayMutexes = 7,             // sync_instance[max_mutexes]
  kArrayRwlocks = 8,             // sync_instance[max_rwlocks]
  kArrayConds = 9,               // sync_instance[max_conds]
  kArraySetupActors = 10,        // actor_record[setup_actors_size]
  kArraySources = 11,            // source_record[max_sources]
  kArrayFiles = 12,              // file_instance[max_files]
  kArrayClassIo = 13,            // io_stats[max_classes]: file classes' bucket of deleted files
  kArrayTables = 14,             // table_share[max_tables]
  kArrayTableIndexes = 15,       // index_stat[max_tables * max_indexes_per_table]
  kArraySetupObjects = 16,       // object_record[setup_objects_size]
  // Units of work (work_layout.h): stages, statements, transactions.
  kArrayStageCurrent = 17,            // stage_record[max_threads]
  kArrayStageHistory = 18,            // stage_record[max_threads * stages_history_size]
  kArrayStageHistoryLong = 19,        // stage_record[stages_history_long_size]
  kArrayStatementCurrent = 20,        // statement_record+text[max_threads * statement_stack_depth]
  kArrayStatementHistory = 21,        // statement_record+text[max_threads * statements_history_size]
  kArrayStatementHistoryLong = 22,    // statement_record+text[statements_history_long_size]
  kArrayTransactionCurrent = 23,      // transaction_record[max_threads]
  kArrayTransactionHistory = 24,      // transaction_record[max_threads * transactions_history_size]
  kArrayTransactionHistoryLong = 25,  // transaction_record[transactions_history_long_size]
  kArrayThreadStageStats = 26,        // wait_stat[max_threads * max_stage_classes]
  kArrayThreadStatementStats = 27,    // statement_stat[max_threads * max_statement_classes]
  kArrayThreadTransactionStats = 28,  // transaction_stat[max_threads]
  kArrayClassStageStats = 29,         // wait_stat[max_stage_classes]: threads that exited
  kArrayClassStatementStats = 30,     // statement_stat[max_statement_classes]: threads that exited
  kArrayClassTransactionStats = 31,   // transaction_stat[1]: threads that exited
  kArrayDigests = 32,                 // digest_record[digest_size]
  kArrayStatementHistogram = 33,      // histogram[1]: events_statements_histogram_global
  kArrayWaitHistograms = 34,          // thread_histogram[wait_histograms]: per (thread, class)
  kArrayClassWaitHistograms = 35,     // histogram[max_classes]: exited threads, and overflow
  kArrayLockContention = 36,          // contention_record[lock_contention_size]: waits by blocking source
  // events_waits_summary_global_by_event_name, kept apart from the instances so that
  // each summary consumer freezes its own table: per (thread, class), folded into
  // class_record::stat when the thread exits.
  kArrayThreadGlobalStats = 37,  // wait_stat[max_threads * max_classes]
  // events_waits_summary_by_instance rows of files (file_summary_by_instance keeps
  // counting under MySQL's rules when that consumer is off).
  kArrayFileWaitStats = 38,    // wait_stat[max_files]
  kArraySockets = 39,          // socket_instance[max_sockets]
  kArraySocketWaitStats = 40,  // wait_stat[max_sockets]: sockets' rows of events_waits_summary_by_instance
  // Layout 5: memory (memory_layout.h).
  kArrayThreadMemoryStats = 41,  // memory_stat[max_threads * max_memory_classes]
  kArrayClassMemoryStats = 42,   // memory_class_stat[max_memory_classes]
  // Layout 6: errors (error_layout.h).
  kArrayErrors = 43,            // error_record[max_errors]: the declared errors
  kArrayThreadErrorStats = 44,  // error_stat[max_threads * (max_errors + 1)]
  kArrayClassErrorStats = 45,   // error_stat[max_errors + 1]
  // Layout 6: locks (lock_layout.h) and TLS channels (tls_layout.h).
  kArrayMetadataLocks = 46,   // metadata_lock_record[max_metadata_locks]
  kArrayDataLocks = 47,       // data_lock_record[max_data_locks]
  kArrayDataLockWaits = 48,   // data_lock_wait_record[max_data_lock_waits]
  kArrayTableLockStats = 49,  // table_lock_stat[max_tables]
  kArrayTlsProperties = 50,   // tls_property_record[max_tls_properties]
  // Layout 6: POSIX semaphores (sem_instances, beyond MySQL), the shape of conds.
  kArraySems = 51,  // sync_instance[max_sems]
  // Layout 6: accounts, users and hosts (account_layout.h): the holders, then each
  // holder's rows of every summary family (holders = max_accounts + max_users + max_hosts).
  kArrayAccounts = 56,                 // account_record[holders]
  kArrayAccountWaitStats = 57,         // wait_stat[holders * max_classes]
  kArrayAccountStageStats = 58,        // wait_stat[holders * max_stage_classes]
  kArrayAccountStatementStats = 59,    // statement_stat[holders * max_statement_classes]
  kArrayAccountTransactionStats = 60,  // transaction_stat[holders]
  kArrayAccountMemoryStats = 61,       // memory_stat[holders * max_memory_classes]
  kArrayAccountErrorStats = 62,        // error_stat[holders * (max_errors + 1)]
  // Layout 6: the program's own metrics (meter_layout.h, MySQL 8.4's setup_meters/_metrics).
  kArrayMeters = 52,              // meter_record[max_meters]
  kArrayMetrics = 53,             // metric_record[max_metrics]
  kArrayThreadMetricValues = 54,  // std::uint64_t[max_threads * max_metrics]: per-thread cells
  kArrayCount = 64,
};

struct array_desc {
  std::uint64_t offset;  // from the start of the file; 64-byte aligned
  std::uint64_t count;   // number of records
  std::uint64_t stride;  // sizeof(record) as the writer knew it
};

// ---------------------------------------------------------------------------
// Consumers (setup_consumers rows), in display order. Index = position in
// region_header::consumers.
enum consumer_id : std::uint32_t {
  kConsumerGlobalInstrumentation = 0,
  kConsumerThreadInstrumentation = 1,
  kConsumerWaitsCurrent = 2,
  kConsumerWaitsHistory = 3,
  kConsumerWaitsHistoryLong = 4,
  kConsumerWaitsSummaryByThreadByEventName = 5,
  kConsumerWaitsSummaryByEventName = 6,
  kConsumerWaitsSummaryByInstance = 7,
  // MySQL 5.6+ consumers of the units of work (appended: the ids above stay).
  kConsumerStagesCurrent = 8,
  kConsumerStagesHistory = 9,
  kConsumerStagesHistoryLong = 10,
  kConsumerStatementsCpu = 11,
  kConsumerStatementsCurrent = 12,
  kConsumerStatementsHistory = 13,
  kConsumerStatementsHistoryLong = 14,
  kConsumerTransactionsCurrent = 15,
  kConsumerTransactionsHistory = 16,
  kConsumerTransactionsHistoryLong = 17,
  kConsumerStatementsDigest = 18,
  kConsumerCount = 19,
  kConsumerSlots = 32,
};

// Lost counters (status table rows), index into region_header::lost.
enum lost_id : std::uint32_t {
  kLostMutexClasses = 0,
  kLostRwlockClasses,
  kLostCondClasses,
  kLostThreadClasses,
  kLostFileClasses,
  kLostTableClasses,
  kLostMutexInstances,
  kLostRwlockInstances,
  kLostCondInstances,
  kLostThreadInstances,
  kLostFileInstances,
  kLostFileHandles,
  kLostTableInstances,
  kLostTableHandles,
  kLostIndexStats,
  kLostLocker,    // wait stack full: the event was not recorded
  kLostSources,   // source table full: SOURCE shown as NULL
  kTraceErrors,   // trace file create/write errors (each disables tracing for its actor)
  kRegionFaults,  // the region file shrank under the provider, which then recorded nothing
                  // until the file was restored (counted when the provider maps it again)
  kLostStageClasses,
  kLostStatementClasses,
  kLostDigests,           // digest table full: counted in the NULL digest row
  kLostNestedStatements,  // statement stack full: the statement was not recorded
  kWorkCallErrors,        // an end without a start, unbalanced nesting, a stage with no class...
  kSqlTextTruncated,      // statements whose SQL_TEXT was cut at max_sql_text_length
  kWaitHistogramsShared,  // (thread, class) pairs without a histogram of their own
  kLostLockContention,    // contended waits not counted in lock_contention_by_instance (table full)
  kLostSocketClasses,     // layout 4: socket classes and instances (a socket without a row)
  kLostSocketInstances,
  kLostMemoryClasses,  // layout 5: memory classes beyond max_memory_classes
  kLostErrors,         // layout 6: errors declared beyond max_errors (reported in the NULL row)
  kLostMetadataLocks,  // layout 6: metadata lock requests without a record (not shown, not waited on)
  kLostDataLocks,      // data locks without a record
  kLostDataLockWaits,  // data lock waits without a record
  kLostTlsProperties,  // TLS channel properties without a record
  kLostSemClasses,     // layout 6: semaphore classes and instances (beyond MySQL)
  kLostSemInstances,
  kLostAccounts,  // layout 6: threads whose account, user or host found its array full
  kLostUsers,
  kLostHosts,
  kLostMeters,   // layout 6: meters declared beyond max_meters
  kLostMetrics,  // metrics declared beyond max_metrics
  kLostCount,
  kLostSlots = 48,
};

// Instrument kinds (class_record::kind).
enum instrument_kind : std::uint8_t {
  kKindNone = 0,
  kKindMutex = 1,
  kKindRwlock = 2,
  kKindCond = 3,
  kKindFile = 4,
  kKindTable = 5,
  kKindThread = 6,       // thread classes: listed by threads.NAME, not in setup_instruments
  kKindStage = 7,        // stage/<category>/<name>
  kKindStatement = 8,    // statement/<category>/<name>
  kKindTransaction = 9,  // transaction (one class)
  kKindIdle = 10,        // idle (one class): a thread waiting for work, recorded as a wait
  kKindSocket = 11,      // wait/io/socket/<category>/<name> (layout 4)
  kKindMemory = 12,      // memory/<category>/<name> (layout 5): counted, never timed
  kKindError = 13,       // error (one class, layout 6): counted, never timed
  kKindMetadata = 14,    // wait/lock/metadata/<category>/<name> (layout 6; MySQL: wait/lock/metadata/sql/mdl)
  kKindTableLock = 15,   // wait/lock/table/<category>/handler (layout 6)
  kKindSem = 16,         // wait/synch/sem/<category>/<name> (layout 6, beyond MySQL): POSIX semaphores
};

// Memory and error instruments are counted, never timed: TIMED is NULL (MySQL 8.0).
inline constexpr bool never_timed(std::uint8_t kind) { return kind == kKindMemory || kind == kKindError; }

// ---------------------------------------------------------------------------
// Records

// Aggregated wait statistics. Times in picoseconds (converted at the end of each
// wait with the timer that timed it, so changing setup_timers never mixes units).
// min is UINT64_MAX while count_timed is 0. count counts every event, timed or
// not; sum/min/max only timed ones (MySQL: "COUNTED" instruments add to COUNT_STAR
// only). The sum is 128 bits: sum + 2^64 * sum_hi (wide_sum.h; layout 4).
struct wait_stat {
  std::uint64_t count;
  std::uint64_t sum;
  std::uint64_t min;
  std::uint64_t max;
  std::uint64_t sum_hi;  // carries of sum
};

// Per-class flags byte (class_record::flags), also the derived byte.
inline constexpr std::uint8_t kFlagEnabled = 1;
inline constexpr std::uint8_t kFlagTimed = 2;
// Only in class_record::derived: instance statistics are kept (the
// events_waits_summary_by_instance consumer is on).
inline constexpr std::uint8_t kFlagInstanceStats = 4;
// setup_instruments TRACE_ENABLED (in flags); in derived: traced (enabled too).
inline constexpr std::uint8_t kFlagTraced = 8;
// Only in class_record::derived: the thread's global statistics of the class are
// kept (the events_waits_summary_global_by_event_name consumer is on).
inline constexpr std::uint8_t kFlagEventNameStats = 16;

struct class_record {
  std::uint32_t lock;    // version+state; allocated once registered, never freed
  std::uint8_t kind;     // instrument_kind
  std::uint8_t flags;    // setup_instruments ENABLED/TIMED as set (kFlagEnabled|kFlagTimed)
  std::uint8_t derived;  // flags AND global_instrumentation: what the hot path tests
  std::uint8_t traits;   // kind memory: kMemory* (fixed at registration)
  std::uint32_t
      kind_index;       // stage, statement, memory: 0-based among its kind's classes (per-kind stat arrays)
  wait_stat stat;       // global statistics of exited threads (atomic adds)
  char name[kNameLen];  // full taxonomy name, "wait/synch/mutex/<category>/<name>"
};

// Per-thread derived flags (thread_record::derived); recomputed by setup writers.
inline constexpr std::uint8_t kThreadEnabled = 1;      // global && thread_instrumentation && INSTRUMENTED
inline constexpr std::uint8_t kThreadCurrent = 2;      // ... && events_waits_current
inline constexpr std::uint8_t kThreadHistory = 4;      // ... && events_waits_history && HISTORY
inline constexpr std::uint8_t kThreadHistoryLong = 8;  // ... && events_waits_history_long && HISTORY
inline constexpr std::uint8_t kThreadSummary = 16;     // ... && summary_by_thread_by_event_name
inline constexpr std::uint8_t kThreadTraced = 32;  // kThreadEnabled && its setup_actors row has TRACE_ENABLED

struct thread_record {
  std::uint32_t lock;              // version+state
  std::uint32_t class_index;       // 1-based class (kind thread); 0 = none
  std::uint64_t thread_id;         // THREAD_ID, unique, never reused (starts at 1)
  std::uint64_t os_thread_id;      // gettid()
  std::uint64_t parent_thread_id;  // 0 = NULL
  std::uint8_t instrumented;       // threads.INSTRUMENTED (1 = YES)
  std::uint8_t history;            // threads.HISTORY
  std::uint8_t derived;            // kThread* flags for the hot path
  std::uint8_t foreground;         // 1 when the thread declared an actor (user/host)
  std::uint32_t stack_depth;       // number of running waits (written by the thread)
  std::uint64_t event_id;          // next EVENT_ID (written by the thread)
  std::uint64_t history_index;     // next slot in the thread's history ring (monotonic)
  char name[kThreadNameLen];       // name the thread gave itself (may be empty)
  char user[kUserLen];
  char host[kHostLen];
  char role[kUserLen];
  // TRUNCATE of the event tables (written by setup writers only): this thread's
  // rows with an EVENT_ID below the horizon are gone. Index: truncate_table.
  std::uint64_t horizon[12];
  // Units of work (written by the thread).
  std::uint32_t work_derived;             // kWork* flags for the work path (setup writers)
  std::uint32_t statement_depth;          // running statements (slots of the statement stack)
  std::uint64_t stage_history_index;      // next slot of the stage history ring (monotonic)
  std::uint64_t statement_history_index;  // ... statement history
  std::uint64_t transaction_history_index;
  std::uint64_t processlist_id;  // PROCESSLIST_ID the program gave the thread; 0 = NULL
  std::uint8_t connection_type;  // connection_type_id; 0 = NULL
  std::uint8_t idle;             // 1 while the thread waits for work (an idle wait is running)
  std::uint8_t last_end_timer;   // timer of last_statement_end; 0 = none
  std::uint8_t pad_work[5];
  std::uint64_t last_statement_end;  // raw timer value at the end of its last statement
  // Memory (layout 5), written by the thread: threads.CONTROLLED_MEMORY,
  // MAX_CONTROLLED_MEMORY, TOTAL_MEMORY, MAX_TOTAL_MEMORY (bytes it holds now, and
  // the most it held). Signed: a thread that frees what others allocated goes below 0.
  std::int64_t controlled_memory;
  std::int64_t max_controlled_memory;
  std::int64_t total_memory;
  std::int64_t max_total_memory;
  // Whole cache lines: the thread writes its record on every event (EVENT_ID,
  // the stack depth) and every allocation (the memory columns), so neighbours
  // must not share a line.
  // Its account, user and host (account_layout.h), 1-based holder slots; 0 = none
  // (that array was full). Written by the thread.
  std::uint32_t account_slot;
  std::uint32_t user_slot;
  std::uint32_t host_slot;
  std::uint32_t pad_lines;
};
static_assert(sizeof(thread_record) % 64 == 0);

// Per-thread derived flags of the units of work (thread_record::work_derived).
inline constexpr std::uint32_t kWorkStagesCurrent = 1u << 0;
inline constexpr std::uint32_t kWorkStagesHistory = 1u << 1;
inline constexpr std::uint32_t kWorkStagesHistoryLong = 1u << 2;
inline constexpr std::uint32_t kWorkStatementsCurrent = 1u << 3;
inline constexpr std::uint32_t kWorkStatementsHistory = 1u << 4;
inline constexpr std::uint32_t kWorkStatementsHistoryLong = 1u << 5;
inline constexpr std::uint32_t kWorkTransactionsCurrent = 1u << 6;
inline constexpr std::uint32_t kWorkTransactionsHistory = 1u << 7;
inline constexpr std::uint32_t kWorkTransactionsHistoryLong = 1u << 8;
inline constexpr std::uint32_t kWorkStatementsCpu = 1u << 9;
inline constexpr std::uint32_t kWorkDigest = 1u << 10;   // statements_digest (global, not per thread)
inline constexpr std::uint32_t kWorkEnabled = 1u << 11;  // global && thread_instrumentation && INSTRUMENTED

// threads.CONNECTION_TYPE values.
enum connection_type_id : std::uint8_t {
  kConnectionNone = 0,
  kConnectionTcp = 1,     // 'TCP/IP'
  kConnectionSocket = 2,  // 'Socket'
  kConnectionPipe = 3,    // 'Named Pipe'
  kConnectionSsl = 4,     // 'SSL/TLS'
  kConnectionMemory = 5,  // 'Shared Memory'
  kConnectionCount = 6,
};

// Event tables a TRUNCATE empties, index into thread_record::horizon and
// region_header::horizon_thread_id. Writers never touch the providers' records:
// readers hide a row (thread_id, event_id) when thread_id is below the header's
// horizon_thread_id[table] and its thread is gone, or when event_id is below its
// live thread's horizon[table].
enum truncate_table : std::uint32_t {
  kTruncateCurrent = 0,
  kTruncateHistory = 1,
  kTruncateHistoryLong = 2,
  kTruncateStagesCurrent = 3,
  kTruncateStagesHistory = 4,
  kTruncateStagesHistoryLong = 5,
  kTruncateStatementsCurrent = 6,
  kTruncateStatementsHistory = 7,
  kTruncateStatementsHistoryLong = 8,
  kTruncateTransactionsCurrent = 9,
  kTruncateTransactionsHistory = 10,
  kTruncateTransactionsHistoryLong = 11,
  kTruncateTables = 12,
};

// Wait record states.
inline constexpr std::uint8_t kWaitEmpty = 0;
inline constexpr std::uint8_t kWaitRunning = 1;
inline constexpr std::uint8_t kWaitCompleted = 2;

// NESTING_EVENT_TYPE values (MySQL's enum: TRANSACTION, STATEMENT, STAGE, WAIT).
inline constexpr std::uint8_t kNestingNone = 0;
inline constexpr std::uint8_t kNestingWait = 1;
inline constexpr std::uint8_t kNestingTransaction = 2;
inline constexpr std::uint8_t kNestingStatement = 3;
inline constexpr std::uint8_t kNestingStage = 4;
inline const char* nesting_type_name(std::uint8_t type) {
  switch (type) {
    case kNestingWait:
      return "WAIT";
    case kNestingTransaction:
      return "TRANSACTION";
    case kNestingStatement:
      return "STATEMENT";
    case kNestingStage:
      return "STAGE";
    default:
      return nullptr;
  }
}

// Object kinds referenced by a wait (wait_record::object_kind).
inline constexpr std::uint8_t kObjectNone = 0;
inline constexpr std::uint8_t kObjectFile = 1;
inline constexpr std::uint8_t kObjectTable = 2;
inline constexpr std::uint8_t kObjectSocket = 3;    // layout 4
inline constexpr std::uint8_t kObjectMetadata = 4;  // layout 6: a metadata_lock_record

// One wait event: a row of events_waits_current / _history / _history_long.
// The timer byte of an event record: the clock its raw values were read from (low
// four bits, a timers::timer_kind; 0 = not timed) and, when it is another, the
// setup_timers row's timer whose unit the event is shown in (high four bits).
// Stages, statements and transactions of a NANOSECOND (MICROSECOND, MILLISECOND)
// row read the wait timer's clock when it is finer, so that the waits inside them
// lie inside them on one time axis; readers show their times in whole units of
// the row's timer, the start rounded down and the end up, so a parent at a coarser
// unit still covers its children.
inline constexpr std::uint8_t event_clock(std::uint8_t timer) { return timer & 0x0F; }
inline constexpr std::uint8_t event_unit(std::uint8_t timer) { return static_cast<std::uint8_t>(timer >> 4); }
inline constexpr std::uint8_t event_timer(std::uint8_t clock, std::uint8_t unit) {
  return clock == unit ? clock : static_cast<std::uint8_t>(clock | unit << 4);
}
// Picoseconds in one unit of an event_unit (1: no rounding); the numbers are
// timers::timer_kind's, part of the layout: NANOSECOND 2, MICROSECOND 3,
// MILLISECOND 4.
inline constexpr std::uint64_t unit_ps(std::uint8_t unit) {
  return unit == 2 ? 1000 : unit == 3 ? 1000000 : unit == 4 ? 1000000000 : 1;
}

// Guarded by seq (seqlock: odd while the writer changes it).
struct wait_record {
  std::uint32_t seq;
  std::uint8_t state;          // kWait*
  std::uint8_t timer;          // event_clock/event_unit; 0 = not timed (NULL times)
  std::uint8_t operation;      // operation_id
  std::uint8_t nesting_type;   // kNesting*
  std::uint32_t class_index;   // 1-based into classes
  std::uint32_t source_index;  // 1-based into sources; 0 = unknown (NULL)
  std::uint64_t thread_id;
  std::uint64_t event_id;
  std::uint64_t end_event_id;           // 0 = NULL (running)
  std::uint64_t nesting_event_id;       // 0 = NULL
  std::uint64_t timer_start;            // raw timer value
  std::uint64_t timer_end;              // raw; 0 while running
  std::uint64_t object_instance_begin;  // address (identity) of the instrumented object
  std::int64_t number_of_bytes;         // -1 = NULL
  std::uint8_t object_kind;             // kObject*
  std::uint8_t pad0[3];
  std::uint32_t object_index;    // 1-based file instance / table share / socket instance
  std::uint32_t object_version;  // its lock version when the event started
  std::uint32_t index_number;    // table io: 1-based index; 0 = NULL
  std::uint32_t flags;           // FLAGS column (reserved, 0)
  std::uint32_t pad1;
  // Who made the thread wait (0 = NULL, unknown). A mutex or rwlock wait that did not
  // get the lock at once: the holder's THREAD_ID (a writer's for a rwlock) and the
  // EVENT_ID of its acquisition (BLOCKING_THREAD_ID, BLOCKING_EVENT_ID). A condition
  // wait: blocking_thread_id is the thread whose signal or broadcast ended it
  // (SIGNALLING_THREAD_ID).
  std::uint64_t blocking_thread_id;
  std::uint64_t blocking_event_id;
  // Pads the record to two cache lines. The arrays of records are line-aligned,
  // so a record never straddles three lines and the records of two threads (each
  // thread's stack and history are a run of records) never share one: at 120
  // bytes, two threads writing the ends of their histories bounced a line
  // between them.
  std::uint64_t reserved;
};

// history_long is claimed in batches so threads do not share a cache line per
// event: a thread owns batch b (owner = its THREAD_ID) while it fills it.
struct batch_record {
  std::uint64_t owner;  // THREAD_ID of the filling thread; 0 = free
  std::uint64_t pad[7];
};

// mutex_instances / rwlock_instances / cond_instances rows (+ their stats).
struct sync_instance {
  // First line: what every lock call reads (the interposer's lookup checks the
  // identity, the event path the class), written only when the instance is made
  // or freed, so both threads' caches keep it.
  std::uint32_t lock;         // version+state
  std::uint32_t class_index;  // 1-based
  std::uint64_t identity;     // OBJECT_INSTANCE_BEGIN
  std::uint64_t pad_read[6];
  // Second line: what every acquisition writes, while the lock is held. Two whole
  // cache lines (the array starts on a line): two locks' instances sharing a line
  // made two threads on two different locks slow each other down (false sharing),
  // and the written fields next to the read ones cost a second trip per
  // acquisition when the lock moves between threads.
  // mutex LOCKED_BY_THREAD_ID / rwlock WRITE_LOCKED_BY_THREAD_ID; 0 = NULL. A
  // condition: the thread that signalled it last.
  std::uint64_t owner_thread_id;
  std::uint32_t readers;         // rwlock READ_LOCKED_BY_COUNT
  std::uint32_t owner_source;    // SOURCE (1-based) of the owner's acquisition; 0 = unknown
  std::uint64_t owner_event_id;  // EVENT_ID of the owner's acquisition; 0 = unknown
  wait_stat stat;                // events_waits_summary_by_instance
};
static_assert(sizeof(sync_instance) == 128 && offsetof(sync_instance, owner_thread_id) == 64);

// lock_contention_by_instance: the waits a mutex or rwlock instance made threads
// queue for, by the SOURCE of the holder's acquisition. An open-addressing table:
// a contended wait claims its entry with one CAS on key (0 = free), then adds to
// it with atomic adds (several waiters of one lock at once). An entry belongs to
// one life of its instance (incarnation: the instance's lock word when it was
// claimed), so a destroyed lock's counts never pass to the next lock in its slot;
// readers show an entry while its instance is that life still. Two threads
// claiming the same key at once may make two entries: readers add them up.
inline constexpr std::uint64_t kContentionMutex = 1;
inline constexpr std::uint64_t kContentionRwlock = 2;
inline constexpr std::uint32_t kContentionProbes = 8;  // slots tried before a wait is counted lost
// key = kind << 62 | instance index (1-based) << 32 | blocking source (1-based; 0 = unknown holder)
inline constexpr std::uint64_t contention_key(std::uint64_t kind, std::uint64_t instance,
                                              std::uint32_t source) {
  return kind << 62 | instance << 32 | source;
}
struct contention_record {
  std::uint64_t key;
  std::uint32_t incarnation;
  std::uint32_t pad;
  wait_stat stat;  // COUNT_STAR, SUM/MIN/MAX_TIMER_WAIT (min UINT64_MAX while none was timed)
  std::uint64_t pad2;
};

// setup_actors rows.
struct actor_record {
  std::uint32_t lock;  // version+state
  std::uint8_t enabled;
  std::uint8_t history;
  std::uint8_t trace_enabled;  // setup_actors TRACE_ENABLED (trace worklog)
  std::uint8_t pad;
  char host[kHostLen];
  char user[kUserLen];
  char role[kUserLen];
};

// SOURCE strings, interned by (file pointer, line) in the provider.
inline constexpr std::uint32_t kSourceFree = 0;
inline constexpr std::uint32_t kSourceWriting = 1;
inline constexpr std::uint32_t kSourceReady = 2;
struct source_record {
  std::uint32_t state;  // kSource*
  std::uint32_t line;
  std::uint64_t key;  // provider-private (address of the file name string)
  char text[kSourceLen];
};

// ---------------------------------------------------------------------------
// A calibration epoch of the CYCLE timer. Epoch 0 is region_header::timers[CYCLE]
// (raw base, ps 0, its multiplier); epoch n >= 1 converts the raw values from
// raw_start on: ps = ps_start + (((raw - raw_start) * mult) >> timers[CYCLE].shift).
// ps_start is the previous epoch's conversion of raw_start, so conversion stays
// continuous and monotonic across epochs.
inline constexpr std::uint32_t kCycleEpochSlots = 32;
struct cycle_epoch {
  std::uint64_t number;  // the epoch's number; 0 while its slot is being written
  std::uint64_t raw_start;
  std::uint64_t ps_start;
  std::uint64_t mult;
  double frequency;  // measured counter rate, Hz (performance_timers shows the latest)
};

// ---------------------------------------------------------------------------
// The header. Fields written after creation are accessed atomically.
struct region_header {
  char magic[8];
  std::uint32_t layout_version;
  std::uint32_t header_size;
  std::uint64_t file_size;
  std::uint64_t pid;
  std::uint64_t creation_time_ns;  // CLOCK_REALTIME at creation
  std::uint32_t ready;             // 1 once fully initialized
  std::uint32_t exited;            // 1 after a clean shutdown of the agent

  // Sizes of the per-thread parts (also derivable from the arrays).
  std::uint32_t max_classes;
  std::uint32_t max_threads;
  std::uint32_t wait_stack_depth;
  std::uint32_t history_per_thread;
  std::uint32_t history_long_size;
  std::uint32_t history_long_batch;  // slots per batch
  std::uint32_t max_indexes_per_table;
  std::uint32_t max_memory_classes;  // layout 5 (was padding)
  // Units of work.
  std::uint32_t max_stage_classes;
  std::uint32_t max_statement_classes;
  std::uint32_t stages_history_size;  // per thread
  std::uint32_t statement_stack_depth;
  std::uint32_t statements_history_size;
  std::uint32_t transactions_history_size;
  std::uint32_t max_sql_text_length;  // bytes of SQL_TEXT kept (the record holds one more, the NUL)
  std::uint32_t statement_stride;     // sizeof(statement_record) + text, 8-byte aligned
  std::uint32_t digest_size;
  std::uint32_t wait_histograms;

  // Timers: baseline and fixed-point converter of each timers::timer_kind
  // (index = kind). ps = ((raw - base) * mult) >> shift; mult 0 = unavailable.
  struct timer_desc {
    std::uint64_t base;
    std::uint64_t mult;
    std::uint32_t shift;
    std::uint32_t available;
    double frequency;
  } timers[8];

  // Setup state (written by setup writers under the setup lock).
  std::uint64_t setup_generation;  // bumped after every setup change
  std::uint8_t wait_timer;         // setup_timers 'wait' (timers::timer_kind)
  std::uint8_t idle_timer;         // setup_timers 'idle', 'stage', 'statement', 'transaction'
  std::uint8_t stage_timer;
  std::uint8_t statement_timer;
  std::uint8_t transaction_timer;
  std::uint8_t pad0[3];
  std::uint8_t consumers[kConsumerSlots];  // 1 = YES

  // Provider-wide counters (atomic).
  std::uint64_t next_thread_id;
  std::uint64_t history_long_next_batch;             // monotonic batch counter (mod batches)
  std::uint64_t horizon_thread_id[kTruncateTables];  // see truncate_table (setup writers only)
  std::uint64_t lost[kLostSlots];
  std::uint64_t stages_long_next;  // monotonic slot counters of the history_long arrays of work
  std::uint64_t statements_long_next;
  std::uint64_t transactions_long_next;
  std::uint64_t next_statement_id;  // STATEMENT_ID
  std::uint64_t digest_generation;  // bumped by TRUNCATE of the digest table

  array_desc arrays[kArrayCount];

  // The program's name (the base name of its argv[0]), NUL-terminated, for readers
  // that show many processes. Added after layout 4 was first published, in space
  // that was zero before: empty means a region of an older agent (readers then ask
  // /proc/<pid>/comm while the process runs).
  char program[kProgramLen];

  // CYCLE's recalibrations (cycle_epochs.h), appended like `program` in space that
  // was zero before: zeros mean no check and no epoch (timers[CYCLE] converts every
  // value). Written by the provider's CYCLE watch thread only.
  std::uint32_t cycle_watch;                   // 1: the provider checks CYCLE's rate itself
  std::uint32_t cycle_watch_interval_ms;       // between two checks
  std::uint64_t cycle_checks;                  // rates measured
  std::uint64_t cycle_max_drift_ppb;           // largest |drift| measured, parts per billion
  std::uint64_t cycle_epoch_count;             // epochs published (= recalibrations); release
  cycle_epoch cycle_epochs[kCycleEpochSlots];  // epoch n (1-based) in slot (n - 1) % slots

  // Layout 6.
  std::uint32_t max_errors;          // declared errors (error_layout.h); each table has one row more
  std::uint32_t max_metadata_locks;  // lock_layout.h
  std::uint32_t max_data_locks;
  std::uint32_t max_data_lock_waits;
  std::uint32_t max_tls_properties;  // tls_layout.h
  // Thread slots ever claimed: 1 + the highest slot a thread took (atomic max, never
  // lowered), with kThreadSlotsKnown set (the agent sets that bit alone when it
  // starts on the region: none claimed yet). Readers walk the slots below it only; 0 (a region
  // of an older agent, or one a test built): all of them. A reader that predates the
  // bit takes the value as more than the slots, so all of them too.
  std::uint32_t thread_slots_used;
  // Accounts, users and hosts (account_layout.h).
  std::uint32_t max_accounts;
  std::uint32_t max_users;
  std::uint32_t max_hosts;
  // The program's metrics (meter_layout.h).
  std::uint32_t max_meters;
  std::uint32_t max_metrics;
  // Class records ever allocated: 1 + the highest one (atomic max, never lowered;
  // classes are allocated in order and never freed), in layout 6's padding. Readers
  // look at the records below it only; 0 (an older agent's region, or one a test
  // built): all of them.
  std::uint32_t classes_used;
  // Folds of an ending thread's cells into the records, started and finished: a
  // reader sums again when they differ or changed while it summed.
  std::uint64_t metric_folds_started;
  std::uint64_t metric_folds_finished;
};

inline constexpr std::uint32_t kThreadSlotsKnown = 0x80000000u;  // region_header::thread_slots_used

static_assert(sizeof(region_header) <= kHeaderSize);
static_assert(offsetof(region_header, classes_used) + 4 ==
              offsetof(region_header, metric_folds_started));  // padding before
static_assert(std::is_trivially_copyable_v<wait_record> && std::is_standard_layout_v<wait_record>);
static_assert(sizeof(wait_record) == 128);  // two whole cache lines
static_assert(sizeof(batch_record) == 64);
static_assert(sizeof(contention_record) == 64);

// The memory orders every side uses on these plain-data records (GCC/Clang
// builtins on plain fields: no std::atomic members, so the records stay C-like
// and trivially copyable).
template <class T>
inline T load_relaxed(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_RELAXED);
}
template <class T>
inline T load_acquire(const T& field) {
  return __atomic_load_n(&field, __ATOMIC_ACQUIRE);
}
template <class T>
inline void store_relaxed(T& field, T value) {
  __atomic_store_n(&field, value, __ATOMIC_RELAXED);
}
template <class T>
inline void store_release(T& field, T value) {
  __atomic_store_n(&field, value, __ATOMIC_RELEASE);
}
// Lowers (raises) a field that several writers may update at once to v, if v is
// lower (higher): statistics' MIN and MAX, memory's low and high marks.
template <class T>
inline void atomic_min(T& field, T v) {
  T seen = load_relaxed(field);
  while (v < seen &&
         !__atomic_compare_exchange_n(&field, &seen, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}
template <class T>
inline void atomic_max(T& field, T v) {
  T seen = load_relaxed(field);
  while (v > seen &&
         !__atomic_compare_exchange_n(&field, &seen, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

}  // namespace pfs::layout
