// The region's geometry: where each array lies for given sizes (plan_layout), the
// record size a layout version fixes for each array (known_stride, which validate
// checks a header against), and a new region's header (init_header).
#include "agent/region/internal/region_geometry.h"

#include <errno.h>  // program_invocation_short_name (GNU)
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <ctime>

#include "agent/region/account_layout.h"
#include "agent/region/error_layout.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/meter_layout.h"
#include "agent/region/tls_layout.h"
#include "agent/region/work_layout.h"
#include "timers/timer.h"

namespace pfs::geometry {

using namespace layout;

namespace {

constexpr std::uint64_t align64(std::uint64_t v) { return (v + 63) & ~std::uint64_t{63}; }

struct array_plan {
  array_id id;
  std::uint64_t count;
  std::uint64_t stride;
};

std::uint32_t history_long_batch_size(std::uint32_t size) {
  if (size < 256) return 1;
  return 16;
}

bool default_consumer_on(std::uint32_t c) {
  switch (c) {
    case kConsumerStagesCurrent:
    case kConsumerStagesHistory:
    case kConsumerStagesHistoryLong:
    case kConsumerStatementsCpu:
    case kConsumerStatementsHistoryLong:
    case kConsumerTransactionsHistoryLong:
      return false;
    default:
      return true;
  }
}

}  // namespace

// Computes the array directory for the given sizes; returns the file size.
std::uint64_t plan_layout(const region_sizes& s, array_desc (&arrays)[kArrayCount]) {
  const std::uint64_t threads = s.max_threads;
  const std::uint32_t batch = history_long_batch_size(s.history_long_size);
  const std::uint64_t batches = s.history_long_size == 0 ? 0 : (s.history_long_size + batch - 1) / batch;
  const std::uint64_t holders = std::uint64_t{s.max_accounts} + s.max_users + s.max_hosts;
  const array_plan plan[] = {
      {kArrayClasses, s.max_classes, sizeof(class_record)},
      {kArrayThreads, threads, sizeof(thread_record)},
      {kArrayWaitStacks, threads * s.wait_stack_depth, sizeof(wait_record)},
      {kArrayWaitHistory, threads * s.history_per_thread, sizeof(wait_record)},
      {kArrayThreadClassStats, threads * s.max_classes, sizeof(wait_stat)},
      {kArrayHistoryLong, s.history_long_size, sizeof(wait_record)},
      {kArrayHistoryLongBatches, batches, sizeof(batch_record)},
      {kArrayMutexes, s.max_mutexes, sizeof(sync_instance)},
      {kArrayRwlocks, s.max_rwlocks, sizeof(sync_instance)},
      {kArrayConds, s.max_conds, sizeof(sync_instance)},
      {kArraySems, s.max_sems, sizeof(sync_instance)},
      {kArraySetupActors, s.setup_actors_size, sizeof(actor_record)},
      {kArraySources, s.max_sources, sizeof(source_record)},
      {kArrayFiles, s.max_files, sizeof(file_instance)},
      {kArrayClassIo, s.max_classes, sizeof(io_stats)},
      {kArrayTables, s.max_tables, sizeof(table_share)},
      {kArrayTableIndexes, std::uint64_t{s.max_tables} * s.max_indexes_per_table, sizeof(index_stat)},
      {kArraySetupObjects, s.setup_objects_size, sizeof(object_record)},
      {kArrayStageCurrent, threads, sizeof(stage_record)},
      {kArrayStageHistory, threads * s.stages_history_size, sizeof(stage_record)},
      {kArrayStageHistoryLong, s.stages_history_long_size, sizeof(stage_record)},
      {kArrayStatementCurrent, threads * s.statement_stack_depth,
       statement_stride_for(s.max_sql_text_length)},
      {kArrayStatementHistory, threads * s.statements_history_size,
       statement_stride_for(s.max_sql_text_length)},
      {kArrayStatementHistoryLong, s.statements_history_long_size,
       statement_stride_for(s.max_sql_text_length)},
      {kArrayTransactionCurrent, threads, sizeof(transaction_record)},
      {kArrayTransactionHistory, threads * s.transactions_history_size, sizeof(transaction_record)},
      {kArrayTransactionHistoryLong, s.transactions_history_long_size, sizeof(transaction_record)},
      {kArrayThreadStageStats, threads * s.max_stage_classes, sizeof(wait_stat)},
      {kArrayThreadStatementStats, threads * s.max_statement_classes, sizeof(statement_stat)},
      {kArrayThreadTransactionStats, threads, sizeof(transaction_stat)},
      {kArrayClassStageStats, s.max_stage_classes, sizeof(wait_stat)},
      {kArrayClassStatementStats, s.max_statement_classes, sizeof(statement_stat)},
      {kArrayClassTransactionStats, 1, sizeof(transaction_stat)},
      // Row 1 is the NULL digest row: one more than digest_size when digests are kept.
      {kArrayDigests, s.digest_size == 0 ? 0 : std::uint64_t{s.digest_size} + 1, sizeof(digest_record)},
      {kArrayStatementHistogram, 1, sizeof(latency_histogram)},
      {kArrayWaitHistograms, s.wait_histograms, sizeof(thread_histogram)},
      {kArrayClassWaitHistograms, s.max_classes, sizeof(wait_histogram)},
      {kArrayLockContention, s.lock_contention_size, sizeof(contention_record)},
      {kArrayThreadGlobalStats, threads * s.max_classes, sizeof(wait_stat)},
      {kArrayFileWaitStats, s.max_files, sizeof(wait_stat)},
      {kArraySockets, s.max_sockets, sizeof(socket_instance)},
      {kArraySocketWaitStats, s.max_sockets, sizeof(wait_stat)},
      {kArrayThreadMemoryStats, threads * s.max_memory_classes, sizeof(memory_stat)},
      {kArrayClassMemoryStats, s.max_memory_classes, sizeof(memory_class_stat)},
      {kArrayErrors, s.max_errors, sizeof(error_record)},
      {kArrayThreadErrorStats, threads * (std::uint64_t{s.max_errors} + 1), sizeof(error_stat)},
      {kArrayClassErrorStats, std::uint64_t{s.max_errors} + 1, sizeof(error_stat)},
      {kArrayMetadataLocks, s.max_metadata_locks, sizeof(metadata_lock_record)},
      {kArrayDataLocks, s.max_data_locks, sizeof(data_lock_record)},
      {kArrayDataLockWaits, s.max_data_lock_waits, sizeof(data_lock_wait_record)},
      {kArrayTableLockStats, s.max_tables, sizeof(table_lock_stat)},
      {kArrayTlsProperties, s.max_tls_properties, sizeof(tls_property_record)},
      {kArrayAccounts, holders, sizeof(account_record)},
      {kArrayAccountWaitStats, holders * s.max_classes, sizeof(wait_stat)},
      {kArrayAccountStageStats, holders * s.max_stage_classes, sizeof(wait_stat)},
      {kArrayAccountStatementStats, holders * s.max_statement_classes, sizeof(statement_stat)},
      {kArrayAccountTransactionStats, holders, sizeof(transaction_stat)},
      {kArrayAccountMemoryStats, holders * s.max_memory_classes, sizeof(memory_stat)},
      {kArrayAccountErrorStats, holders * (std::uint64_t{s.max_errors} + 1), sizeof(error_stat)},
      {kArrayMeters, s.max_meters, sizeof(meter_record)},
      {kArrayMetrics, s.max_metrics, sizeof(metric_record)},
      {kArrayThreadMetricValues, threads * std::uint64_t{s.max_metrics}, sizeof(std::uint64_t)},
  };
  std::memset(arrays, 0, sizeof(arrays));
  std::uint64_t offset = kHeaderSize;
  for (const auto& p : plan) {
    arrays[p.id].stride = p.stride;
    arrays[p.id].count = p.count;
    arrays[p.id].offset = p.count == 0 ? 0 : offset;
    offset = align64(offset + p.count * p.stride);
  }
  return offset;
}

std::uint64_t known_stride(std::uint32_t id, std::uint32_t max_sql_text_length) {
  switch (id) {
    case kArrayStageCurrent:
    case kArrayStageHistory:
    case kArrayStageHistoryLong:
      return sizeof(stage_record);
    case kArrayStatementCurrent:
    case kArrayStatementHistory:
    case kArrayStatementHistoryLong:
      return statement_stride_for(max_sql_text_length);
    case kArrayTransactionCurrent:
    case kArrayTransactionHistory:
    case kArrayTransactionHistoryLong:
      return sizeof(transaction_record);
    case kArrayThreadStageStats:
    case kArrayClassStageStats:
      return sizeof(wait_stat);
    case kArrayThreadStatementStats:
    case kArrayClassStatementStats:
      return sizeof(statement_stat);
    case kArrayThreadTransactionStats:
    case kArrayClassTransactionStats:
      return sizeof(transaction_stat);
    case kArrayDigests:
      return sizeof(digest_record);
    case kArrayStatementHistogram:
      return sizeof(latency_histogram);
    case kArrayClassWaitHistograms:
      return sizeof(wait_histogram);
    case kArrayWaitHistograms:
      return sizeof(thread_histogram);
    case kArrayLockContention:
      return sizeof(contention_record);
    case kArraySockets:
      return sizeof(socket_instance);
    case kArrayThreadMemoryStats:
      return sizeof(memory_stat);
    case kArrayClassMemoryStats:
      return sizeof(memory_class_stat);
    case kArrayErrors:
      return sizeof(error_record);
    case kArrayThreadErrorStats:
    case kArrayClassErrorStats:
      return sizeof(error_stat);
    case kArrayMetadataLocks:
      return sizeof(metadata_lock_record);
    case kArrayDataLocks:
      return sizeof(data_lock_record);
    case kArrayDataLockWaits:
      return sizeof(data_lock_wait_record);
    case kArrayTableLockStats:
      return sizeof(table_lock_stat);
    case kArrayTlsProperties:
      return sizeof(tls_property_record);
    case kArrayAccounts:
      return sizeof(account_record);
    case kArrayAccountWaitStats:
    case kArrayAccountStageStats:
      return sizeof(wait_stat);
    case kArrayAccountStatementStats:
      return sizeof(statement_stat);
    case kArrayAccountTransactionStats:
      return sizeof(transaction_stat);
    case kArrayAccountMemoryStats:
      return sizeof(memory_stat);
    case kArrayAccountErrorStats:
      return sizeof(error_stat);
    case kArrayMeters:
      return sizeof(meter_record);
    case kArrayMetrics:
      return sizeof(metric_record);
    case kArrayThreadMetricValues:
      return sizeof(std::uint64_t);
    case kArrayClasses:
      return sizeof(class_record);
    case kArrayThreads:
      return sizeof(thread_record);
    case kArrayWaitStacks:
    case kArrayWaitHistory:
    case kArrayHistoryLong:
      return sizeof(wait_record);
    case kArrayThreadClassStats:
    case kArrayThreadGlobalStats:
    case kArrayFileWaitStats:
    case kArraySocketWaitStats:
      return sizeof(wait_stat);
    case kArrayHistoryLongBatches:
      return sizeof(batch_record);
    case kArrayMutexes:
    case kArrayRwlocks:
    case kArrayConds:
    case kArraySems:
      return sizeof(sync_instance);
    case kArraySetupActors:
      return sizeof(actor_record);
    case kArraySources:
      return sizeof(source_record);
    case kArrayFiles:
      return sizeof(file_instance);
    case kArrayClassIo:
      return sizeof(io_stats);
    case kArrayTables:
      return sizeof(table_share);
    case kArrayTableIndexes:
      return sizeof(index_stat);
    case kArraySetupObjects:
      return sizeof(object_record);
    default:
      return 0;
  }
}

void init_header(region_header& h, const region_sizes& s, std::uint64_t file_size) {
  std::memcpy(h.magic, kMagic, sizeof(h.magic));
  h.layout_version = kLayoutVersion;
  h.header_size = kHeaderSize;
  h.file_size = file_size;
  h.pid = static_cast<std::uint64_t>(getpid());
  std::snprintf(h.program, sizeof(h.program), "%s", program_invocation_short_name);
  timespec ts{};
  clock_gettime(CLOCK_REALTIME, &ts);
  h.creation_time_ns =
      static_cast<std::uint64_t>(ts.tv_sec) * 1000000000u + static_cast<std::uint64_t>(ts.tv_nsec);
  h.max_classes = s.max_classes;
  h.max_threads = s.max_threads;
  h.wait_stack_depth = s.wait_stack_depth;
  h.history_per_thread = s.history_per_thread;
  h.history_long_size = s.history_long_size;
  h.history_long_batch = history_long_batch_size(s.history_long_size);
  h.max_indexes_per_table = s.max_indexes_per_table;
  h.max_stage_classes = s.max_stage_classes;
  h.max_memory_classes = s.max_memory_classes;
  h.max_errors = s.max_errors;
  h.max_metadata_locks = s.max_metadata_locks;
  h.max_data_locks = s.max_data_locks;
  h.max_data_lock_waits = s.max_data_lock_waits;
  h.max_tls_properties = s.max_tls_properties;
  h.max_accounts = s.max_accounts;
  h.max_users = s.max_users;
  h.max_hosts = s.max_hosts;
  h.max_meters = s.max_meters;
  h.max_metrics = s.max_metrics;
  h.max_statement_classes = s.max_statement_classes;
  h.stages_history_size = s.stages_history_size;
  h.statement_stack_depth = s.statement_stack_depth;
  h.statements_history_size = s.statements_history_size;
  h.transactions_history_size = s.transactions_history_size;
  h.max_sql_text_length = s.max_sql_text_length;
  h.statement_stride = static_cast<std::uint32_t>(statement_stride_for(s.max_sql_text_length));
  h.digest_size = s.digest_size;
  h.wait_histograms = s.wait_histograms;
  // Every timer's zero is the same instant (to within the reads below, about a
  // microsecond), so that waits (CYCLE) and stages or statements (NANOSECOND) line
  // up on one timeline: measure them all first (CYCLE calibrates for milliseconds),
  // then read every base back to back.
  for (int k = 1; k < timers::timer_kind_count; ++k) timers::info(static_cast<timers::timer_kind>(k));
  std::uint64_t bases[timers::timer_kind_count] = {};
  for (int k = 1; k < timers::timer_kind_count; ++k)
    if (timers::info(static_cast<timers::timer_kind>(k)).available)
      bases[k] = timers::read(static_cast<timers::timer_kind>(k));
  for (int k = 1; k < timers::timer_kind_count; ++k) {
    auto kind = static_cast<timers::timer_kind>(k);
    const timers::timer_info& info = timers::info(kind);
    auto& d = h.timers[k];
    if (!info.available) continue;
    const timers::pico_converter conv = timers::make_converter(info.frequency, bases[k]);
    d.base = conv.base;
    d.mult = conv.mult;
    d.shift = conv.shift;
    d.available = 1;
    d.frequency = info.frequency;
  }
  h.wait_timer = static_cast<std::uint8_t>(timers::default_wait_timer());
  // Seed 001: idle, stage, statement and transaction events use NANOSECOND
  // (MICROSECOND where it is unavailable).
  const auto work_timer = static_cast<std::uint8_t>(
      h.timers[static_cast<int>(timers::timer_kind::nanosecond)].available ? timers::timer_kind::nanosecond
                                                                           : timers::timer_kind::microsecond);
  h.idle_timer = h.stage_timer = h.statement_timer = h.transaction_timer = work_timer;
  // The wait consumers on (MySQL 5.5's defaults, as WL#2360); those of the units
  // of work as MySQL 8.0 ships them: statements and transactions current and
  // history, and statements_digest, on; stages, the long histories of statements
  // and transactions, and events_statements_cpu off.
  for (std::uint32_t c = 0; c < kConsumerCount; ++c) h.consumers[c] = default_consumer_on(c) ? 1 : 0;
  h.next_thread_id = 1;
  h.setup_generation = 1;
}

}  // namespace pfs::geometry
