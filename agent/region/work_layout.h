// Units of work in the region: stage, statement and transaction events, their
// statistics, the statement digest table and the latency histograms (MySQL 5.6
// stages and statements, 5.7 transactions, 8.0 histograms). The same rules as
// region_layout.h: plain data, one writer per record on the event path, seqlocks on
// event records, version+state words on the rows of the digest table.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "agent/region/region_layout.h"

namespace pfs::layout {

inline constexpr std::size_t kMessageTextLen = 128;          // MESSAGE_TEXT
inline constexpr std::size_t kSqlStateLen = 8;               // RETURNED_SQLSTATE (5 characters)
inline constexpr std::size_t kDigestLen = 32;                // SHA-256, shown as 64 hex digits
inline constexpr std::size_t kDigestTextLen = 1024;          // DIGEST_TEXT (MySQL's max_digest_length)
inline constexpr std::size_t kSampleTextLen = 1024;          // QUERY_SAMPLE_TEXT
inline constexpr std::size_t kGtidLen = 64;                  // GTID
inline constexpr std::size_t kXidPartLen = 72;               // XID_GTRID, XID_BQUAL (64 bytes of data + room)
inline constexpr std::uint32_t kHistogramBuckets = 450;      // statements: MySQL's scale
inline constexpr std::uint32_t kWaitHistogramBuckets = 552;  // waits: 1 ns to 100 s (histogram.h)
inline constexpr std::uint32_t kMaxStatementStack = 16;      // statement_stack_depth cannot exceed this
inline constexpr std::uint32_t kMaxSqlTextLength = 1048576;  // MySQL's maximum of max_sql_text_length
inline constexpr std::uint32_t kMaxClassesLimit = 65536;     // max_classes cannot exceed this

// States of the working records of stages, statements and transactions beyond
// kWait*: kept while their _current consumer is off, but not shown.
inline constexpr std::uint8_t kWorkHiddenRunning = 3;
inline constexpr std::uint8_t kWorkHiddenCompleted = 4;

// NULL for WORK_COMPLETED / WORK_ESTIMATED.
inline constexpr std::uint64_t kNoWork = UINT64_MAX;

// One stage event: events_stages_current / _history / _history_long.
struct stage_record {
  std::uint32_t seq;          // seqlock
  std::uint8_t state;         // kWait* (empty, running, completed)
  std::uint8_t timer;         // timers::timer_kind; 0 = not timed
  std::uint8_t nesting_type;  // kNesting*
  std::uint8_t pad0;
  std::uint32_t class_index;  // 1-based, kind stage
  std::uint32_t source_index;
  std::uint64_t thread_id;
  std::uint64_t event_id;
  std::uint64_t end_event_id;  // 0 = NULL (running)
  std::uint64_t nesting_event_id;
  std::uint64_t timer_start;
  std::uint64_t timer_end;
  std::uint64_t work_completed;  // kNoWork = NULL
  std::uint64_t work_estimated;
};

// Statistics of statements: events_statements_summary_* (and the digest table).
// Times in picoseconds. min is UINT64_MAX while nothing was timed.
struct statement_stat {
  wait_stat time;  // COUNT_STAR, SUM/MIN/MAX_TIMER_WAIT
  std::uint64_t lock_time;
  std::uint64_t errors;
  std::uint64_t warnings;
  std::uint64_t rows_affected;
  std::uint64_t rows_sent;
  std::uint64_t rows_examined;
  std::uint64_t cpu_time;
  std::uint64_t lock_time_hi;  // carries of lock_time and cpu_time (wide_sum.h; layout 4)
  std::uint64_t cpu_time_hi;
  // Layout 5: the largest MAX_CONTROLLED_MEMORY / MAX_TOTAL_MEMORY of its statements.
  std::int64_t max_controlled_memory;
  std::int64_t max_total_memory;
};

// Transactions: STAR, READ_WRITE and READ_ONLY groups.
struct transaction_stat {
  wait_stat all;
  wait_stat read_write;
  wait_stat read_only;
};

// TRANSACTION STATE, ACCESS_MODE, ISOLATION_LEVEL, XA_STATE values.
enum transaction_state_id : std::uint8_t {
  kTrxNone = 0,
  kTrxActive = 1,
  kTrxCommitted = 2,
  kTrxRolledBack = 3
};
enum access_mode_id : std::uint8_t { kAccessNone = 0, kAccessReadWrite = 1, kAccessReadOnly = 2 };
enum isolation_id : std::uint8_t {
  kIsolationNone = 0,
  kIsolationReadUncommitted = 1,
  kIsolationReadCommitted = 2,
  kIsolationRepeatableRead = 3,
  kIsolationSerializable = 4,
};
enum xa_state_id : std::uint8_t {
  kXaNone = 0,
  kXaActive = 1,
  kXaIdle = 2,
  kXaPrepared = 3,
  kXaRolledBack = 4,
  kXaCommitted = 5,
};

// One statement event. The record is followed, within its stride
// (header.statement_stride), by SQL_TEXT: sql_text_length bytes and a NUL.
// A W3C trace context (traceparent "00-<trace id>-<parent span id>-<flags>") that
// the program gave a statement or transaction (beyond MySQL: the TRACE_ID and
// PARENT_SPAN_ID columns, and pfs_otlp's spans join the caller's trace). The ids as
// big-endian numbers (the hex digits read as one number); all zero: none.
struct trace_context {
  std::uint64_t trace_id_high;
  std::uint64_t trace_id_low;
  std::uint64_t parent_span_id;
};

struct statement_record {
  std::uint32_t seq;  // seqlock
  std::uint8_t state;
  std::uint8_t timer;
  std::uint8_t nesting_type;
  std::uint8_t nesting_level;  // NESTING_EVENT_LEVEL
  std::uint32_t class_index;   // 1-based, kind statement
  std::uint32_t source_index;
  std::uint64_t thread_id;
  std::uint64_t event_id;
  std::uint64_t end_event_id;
  std::uint64_t nesting_event_id;
  std::uint64_t timer_start;
  std::uint64_t timer_end;
  std::uint64_t lock_time;  // ps of mutex and rwlock waits nested in it (running: so far)
  std::uint64_t cpu_time;   // ps of thread CPU time; 0 when not measured
  std::uint64_t rows_affected;
  std::uint64_t rows_sent;
  std::uint64_t rows_examined;
  std::uint64_t statement_id;  // STATEMENT_ID
  std::uint32_t errors;
  std::uint32_t warnings;
  std::uint32_t mysql_errno;
  std::uint32_t digest_index;  // 1-based row of the digest table; 0 = none
  std::uint32_t sql_text_length;
  std::uint8_t has_digest;  // digest holds a value
  std::uint8_t has_text;    // SQL_TEXT was given (else NULL)
  std::uint8_t pad0[2];
  // Layout 5: the thread's most memory while the statement ran (bytes; 0 while it runs).
  std::int64_t max_controlled_memory;
  std::int64_t max_total_memory;
  trace_context trace;  // layout 6: the caller's W3C trace context (TRACE_ID, PARENT_SPAN_ID)
  char returned_sqlstate[kSqlStateLen];
  std::uint8_t digest[kDigestLen];
  char current_schema[kObjectSchemaLen];
  char message_text[kMessageTextLen];
};

// The SQL_TEXT bytes of a statement record (inside its stride).
inline char* statement_text(statement_record& r) { return reinterpret_cast<char*>(&r + 1); }
inline const char* statement_text(const statement_record& r) { return reinterpret_cast<const char*>(&r + 1); }
inline constexpr std::uint64_t statement_stride_for(std::uint32_t max_sql_text_length) {
  return (sizeof(statement_record) + max_sql_text_length + 1 + 7) & ~std::uint64_t{7};
}

// One transaction event.
struct transaction_record {
  std::uint32_t seq;  // seqlock
  std::uint8_t state;
  std::uint8_t timer;
  std::uint8_t nesting_type;
  std::uint8_t trx_state;  // transaction_state_id
  std::uint32_t class_index;
  std::uint32_t source_index;
  std::uint64_t thread_id;
  std::uint64_t event_id;
  std::uint64_t end_event_id;
  std::uint64_t nesting_event_id;
  std::uint64_t timer_start;
  std::uint64_t timer_end;
  std::uint64_t trx_id;  // TRX_ID; 0 = NULL
  std::uint64_t savepoints;
  std::uint64_t rollback_to_savepoint;
  std::uint64_t release_savepoint;
  std::int64_t xid_format_id;
  std::uint8_t has_xid;
  std::uint8_t access_mode;  // access_mode_id
  std::uint8_t isolation;    // isolation_id
  std::uint8_t autocommit;   // 1 = YES
  std::uint8_t xa_state;     // xa_state_id
  std::uint8_t pad0[3];
  trace_context trace;  // layout 6: the caller's W3C trace context (TRACE_ID, PARENT_SPAN_ID)
  char gtid[kGtidLen];  // '' = AUTOMATIC (MySQL shows AUTOMATIC when no GTID is assigned)
  char xid_gtrid[kXidPartLen];
  char xid_bqual[kXidPartLen];
};

// A statement latency histogram (MySQL 8.0's 450 logarithmic buckets from 10 us,
// agent/region/histogram.h statement_scale).
struct latency_histogram {
  std::uint64_t counts[kHistogramBuckets];
};

// A wait latency histogram (552 buckets of the same growth from 1 ns,
// histogram.h wait_scale).
struct wait_histogram {
  std::uint64_t counts[kWaitHistogramBuckets];
};

// thread_histogram::class_index of a thread's share of events_statements_histogram_global.
inline constexpr std::uint32_t kStatementHistogramClass = 0xFFFFFFFFu;

// One (thread, wait class) histogram of the pool: written by its thread only. A
// thread's statement histogram is a pool entry too (kStatementHistogramClass): it
// uses the first kHistogramBuckets counts.
struct thread_histogram {
  std::uint32_t lock;         // version+state; allocated while its thread owns it
  std::uint32_t class_index;  // 1-based
  std::uint64_t thread_id;
  std::uint64_t pad[6];
  wait_histogram h;
};

// events_statements_summary_by_digest rows. A row is claimed by the first statement
// with its (schema, digest); its statistics are updated with atomic adds by every
// thread that runs such a statement. Row 1 is the NULL digest row: the statements
// that found the table full (MySQL's rule).
struct digest_record {
  std::uint32_t lock;  // version+state (free, dirty while claimed, allocated)
  std::uint32_t pad0;
  std::uint64_t key;  // hash of (schema, digest); 0 = free (claimed with a CAS on it)
  std::uint8_t digest[kDigestLen];
  char schema[kObjectSchemaLen];
  char digest_text[kDigestTextLen];
  statement_stat stat;
  std::uint64_t first_seen_ns;  // CLOCK_REALTIME
  std::uint64_t last_seen_ns;
  std::uint32_t sample_seq;  // seqlock of the query sample
  std::uint32_t pad1;
  std::uint64_t sample_seen_ns;
  std::uint64_t sample_timer_wait;  // ps
  char sample_text[kSampleTextLen];
  latency_histogram h;
};

static_assert(sizeof(stage_record) % 8 == 0 && sizeof(statement_record) % 8 == 0 &&
              sizeof(transaction_record) % 8 == 0 && sizeof(digest_record) % 8 == 0);
static_assert(std::is_trivially_copyable_v<statement_record> && std::is_standard_layout_v<statement_record>);

}  // namespace pfs::layout
