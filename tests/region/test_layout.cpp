// The region layout is the contract between a provider and every reader built from
// another commit: a record that changes size or moves a field must come with a new
// kLayoutVersion (readers refuse versions they do not know). This test writes
// sizeof and offsetof of every region record, one line each, and compares them with
// tests/layout/v<kLayoutVersion>.txt: a change without a version bump fails here.
//
// After a deliberate change: bump kLayoutVersion in agent/region/region_layout.h,
// run this test once with PFS_LAYOUT_RECORD=1 to write the new file, and commit it.
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "agent/region/error_layout.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/meter_layout.h"
#include "agent/region/region_layout.h"
#include "agent/region/tls_layout.h"
#include "agent/region/work_layout.h"

namespace {

using namespace pfs::layout;

std::string layout_text() {
  std::ostringstream out;
#define PFS_RECORD(T) out << #T " size " << sizeof(T) << "\n"
#define PFS_FIELD(T, f) out << #T "." #f " " << offsetof(T, f) << " " << sizeof(T::f) << "\n"
  PFS_RECORD(wait_stat);
  PFS_FIELD(wait_stat, count);
  PFS_FIELD(wait_stat, sum);
  PFS_FIELD(wait_stat, min);
  PFS_FIELD(wait_stat, max);
  PFS_FIELD(wait_stat, sum_hi);
  PFS_RECORD(class_record);
  PFS_FIELD(class_record, lock);
  PFS_FIELD(class_record, kind);
  PFS_FIELD(class_record, flags);
  PFS_FIELD(class_record, derived);
  PFS_FIELD(class_record, traits);
  PFS_FIELD(class_record, stat);
  PFS_FIELD(class_record, name);
  PFS_RECORD(thread_record);
  PFS_FIELD(thread_record, lock);
  PFS_FIELD(thread_record, class_index);
  PFS_FIELD(thread_record, thread_id);
  PFS_FIELD(thread_record, os_thread_id);
  PFS_FIELD(thread_record, parent_thread_id);
  PFS_FIELD(thread_record, instrumented);
  PFS_FIELD(thread_record, history);
  PFS_FIELD(thread_record, derived);
  PFS_FIELD(thread_record, foreground);
  PFS_FIELD(thread_record, stack_depth);
  PFS_FIELD(thread_record, event_id);
  PFS_FIELD(thread_record, history_index);
  PFS_FIELD(thread_record, name);
  PFS_FIELD(thread_record, user);
  PFS_FIELD(thread_record, host);
  PFS_FIELD(thread_record, role);
  PFS_FIELD(thread_record, horizon);
  PFS_FIELD(thread_record, work_derived);
  PFS_FIELD(thread_record, statement_depth);
  PFS_FIELD(thread_record, stage_history_index);
  PFS_FIELD(thread_record, statement_history_index);
  PFS_FIELD(thread_record, transaction_history_index);
  PFS_FIELD(thread_record, processlist_id);
  PFS_FIELD(thread_record, connection_type);
  PFS_FIELD(thread_record, idle);
  PFS_FIELD(thread_record, last_end_timer);
  PFS_FIELD(thread_record, last_statement_end);
  PFS_FIELD(thread_record, controlled_memory);
  PFS_FIELD(thread_record, max_controlled_memory);
  PFS_FIELD(thread_record, total_memory);
  PFS_FIELD(thread_record, max_total_memory);
  PFS_RECORD(wait_record);
  PFS_FIELD(wait_record, seq);
  PFS_FIELD(wait_record, state);
  PFS_FIELD(wait_record, timer);
  PFS_FIELD(wait_record, operation);
  PFS_FIELD(wait_record, nesting_type);
  PFS_FIELD(wait_record, class_index);
  PFS_FIELD(wait_record, source_index);
  PFS_FIELD(wait_record, thread_id);
  PFS_FIELD(wait_record, event_id);
  PFS_FIELD(wait_record, end_event_id);
  PFS_FIELD(wait_record, nesting_event_id);
  PFS_FIELD(wait_record, timer_start);
  PFS_FIELD(wait_record, timer_end);
  PFS_FIELD(wait_record, object_instance_begin);
  PFS_FIELD(wait_record, number_of_bytes);
  PFS_FIELD(wait_record, object_kind);
  PFS_FIELD(wait_record, object_index);
  PFS_FIELD(wait_record, object_version);
  PFS_FIELD(wait_record, index_number);
  PFS_FIELD(wait_record, flags);
  PFS_FIELD(wait_record, blocking_thread_id);
  PFS_FIELD(wait_record, blocking_event_id);
  PFS_RECORD(batch_record);
  PFS_FIELD(batch_record, owner);
  PFS_RECORD(sync_instance);
  PFS_FIELD(sync_instance, lock);
  PFS_FIELD(sync_instance, class_index);
  PFS_FIELD(sync_instance, identity);
  PFS_FIELD(sync_instance, owner_thread_id);
  PFS_FIELD(sync_instance, readers);
  PFS_FIELD(sync_instance, owner_source);
  PFS_FIELD(sync_instance, owner_event_id);
  PFS_FIELD(sync_instance, stat);
  PFS_RECORD(contention_record);
  PFS_FIELD(contention_record, key);
  PFS_FIELD(contention_record, incarnation);
  PFS_FIELD(contention_record, stat);
  PFS_RECORD(actor_record);
  PFS_FIELD(actor_record, lock);
  PFS_FIELD(actor_record, enabled);
  PFS_FIELD(actor_record, history);
  PFS_FIELD(actor_record, trace_enabled);
  PFS_FIELD(actor_record, host);
  PFS_FIELD(actor_record, user);
  PFS_FIELD(actor_record, role);
  PFS_RECORD(source_record);
  PFS_FIELD(source_record, state);
  PFS_FIELD(source_record, line);
  PFS_FIELD(source_record, key);
  PFS_FIELD(source_record, text);
  PFS_RECORD(io_stat);
  PFS_FIELD(io_stat, count);
  PFS_FIELD(io_stat, sum);
  PFS_FIELD(io_stat, min);
  PFS_FIELD(io_stat, max);
  PFS_FIELD(io_stat, bytes);
  PFS_FIELD(io_stat, sum_hi);
  PFS_RECORD(io_stats);
  PFS_FIELD(io_stats, read);
  PFS_FIELD(io_stats, write);
  PFS_FIELD(io_stats, misc);
  PFS_RECORD(file_instance);
  PFS_FIELD(file_instance, lock);
  PFS_FIELD(file_instance, class_index);
  PFS_FIELD(file_instance, open_count);
  PFS_FIELD(file_instance, name_seq);
  PFS_FIELD(file_instance, identity);
  PFS_FIELD(file_instance, stats);
  PFS_FIELD(file_instance, name);
  PFS_RECORD(socket_instance);
  PFS_FIELD(socket_instance, lock);
  PFS_FIELD(socket_instance, class_index);
  PFS_FIELD(socket_instance, identity);
  PFS_FIELD(socket_instance, thread_id);
  PFS_FIELD(socket_instance, fd);
  PFS_FIELD(socket_instance, port);
  PFS_FIELD(socket_instance, addr_seq);
  PFS_FIELD(socket_instance, state);
  PFS_FIELD(socket_instance, stats);
  PFS_FIELD(socket_instance, ip);
  PFS_RECORD(table_io_stat);
  PFS_FIELD(table_io_stat, fetch);
  PFS_FIELD(table_io_stat, insert);
  PFS_FIELD(table_io_stat, update);
  PFS_FIELD(table_io_stat, del);
  PFS_RECORD(table_share);
  PFS_FIELD(table_share, lock);
  PFS_FIELD(table_share, class_index);
  PFS_FIELD(table_share, object_type);
  PFS_FIELD(table_share, derived);
  PFS_FIELD(table_share, index_count);
  PFS_FIELD(table_share, identity);
  PFS_FIELD(table_share, no_index);
  PFS_FIELD(table_share, schema);
  PFS_FIELD(table_share, name);
  PFS_RECORD(index_stat);
  PFS_FIELD(index_stat, stat);
  PFS_FIELD(index_stat, name);
  PFS_RECORD(object_record);
  PFS_FIELD(object_record, lock);
  PFS_FIELD(object_record, object_type);
  PFS_FIELD(object_record, enabled);
  PFS_FIELD(object_record, timed);
  PFS_FIELD(object_record, schema);
  PFS_FIELD(object_record, name);
  PFS_RECORD(array_desc);
  PFS_FIELD(array_desc, offset);
  PFS_FIELD(array_desc, count);
  PFS_FIELD(array_desc, stride);
  PFS_RECORD(region_header::timer_desc);
  PFS_FIELD(region_header::timer_desc, base);
  PFS_FIELD(region_header::timer_desc, mult);
  PFS_FIELD(region_header::timer_desc, shift);
  PFS_FIELD(region_header::timer_desc, available);
  PFS_FIELD(region_header::timer_desc, frequency);
  PFS_RECORD(stage_record);
  PFS_FIELD(stage_record, seq);
  PFS_FIELD(stage_record, state);
  PFS_FIELD(stage_record, timer);
  PFS_FIELD(stage_record, nesting_type);
  PFS_FIELD(stage_record, class_index);
  PFS_FIELD(stage_record, source_index);
  PFS_FIELD(stage_record, thread_id);
  PFS_FIELD(stage_record, event_id);
  PFS_FIELD(stage_record, end_event_id);
  PFS_FIELD(stage_record, nesting_event_id);
  PFS_FIELD(stage_record, timer_start);
  PFS_FIELD(stage_record, timer_end);
  PFS_FIELD(stage_record, work_completed);
  PFS_FIELD(stage_record, work_estimated);
  PFS_RECORD(statement_stat);
  PFS_FIELD(statement_stat, time);
  PFS_FIELD(statement_stat, lock_time);
  PFS_FIELD(statement_stat, errors);
  PFS_FIELD(statement_stat, warnings);
  PFS_FIELD(statement_stat, rows_affected);
  PFS_FIELD(statement_stat, rows_sent);
  PFS_FIELD(statement_stat, rows_examined);
  PFS_FIELD(statement_stat, cpu_time);
  PFS_FIELD(statement_stat, lock_time_hi);
  PFS_FIELD(statement_stat, cpu_time_hi);
  PFS_FIELD(statement_stat, max_controlled_memory);
  PFS_FIELD(statement_stat, max_total_memory);
  PFS_FIELD(statement_record, max_controlled_memory);
  PFS_FIELD(statement_record, max_total_memory);
  PFS_RECORD(memory_stat);
  PFS_FIELD(memory_stat, count_alloc);
  PFS_FIELD(memory_stat, count_free);
  PFS_FIELD(memory_stat, bytes_alloc);
  PFS_FIELD(memory_stat, bytes_free);
  PFS_FIELD(memory_stat, low_count);
  PFS_FIELD(memory_stat, high_count);
  PFS_FIELD(memory_stat, low_bytes);
  PFS_FIELD(memory_stat, high_bytes);
  PFS_FIELD(memory_stat, claimed_count);
  PFS_FIELD(memory_stat, claimed_bytes);
  PFS_RECORD(memory_class_stat);
  PFS_RECORD(transaction_stat);
  PFS_FIELD(transaction_stat, all);
  PFS_FIELD(transaction_stat, read_write);
  PFS_FIELD(transaction_stat, read_only);
  PFS_RECORD(statement_record);
  PFS_FIELD(statement_record, seq);
  PFS_FIELD(statement_record, state);
  PFS_FIELD(statement_record, timer);
  PFS_FIELD(statement_record, nesting_type);
  PFS_FIELD(statement_record, nesting_level);
  PFS_FIELD(statement_record, class_index);
  PFS_FIELD(statement_record, source_index);
  PFS_FIELD(statement_record, thread_id);
  PFS_FIELD(statement_record, event_id);
  PFS_FIELD(statement_record, end_event_id);
  PFS_FIELD(statement_record, nesting_event_id);
  PFS_FIELD(statement_record, timer_start);
  PFS_FIELD(statement_record, timer_end);
  PFS_FIELD(statement_record, lock_time);
  PFS_FIELD(statement_record, cpu_time);
  PFS_FIELD(statement_record, rows_affected);
  PFS_FIELD(statement_record, rows_sent);
  PFS_FIELD(statement_record, rows_examined);
  PFS_FIELD(statement_record, statement_id);
  PFS_FIELD(statement_record, errors);
  PFS_FIELD(statement_record, warnings);
  PFS_FIELD(statement_record, mysql_errno);
  PFS_FIELD(statement_record, digest_index);
  PFS_FIELD(statement_record, sql_text_length);
  PFS_FIELD(statement_record, has_digest);
  PFS_FIELD(statement_record, has_text);
  PFS_FIELD(statement_record, returned_sqlstate);
  PFS_FIELD(statement_record, digest);
  PFS_FIELD(statement_record, current_schema);
  PFS_FIELD(statement_record, message_text);
  PFS_RECORD(transaction_record);
  PFS_FIELD(transaction_record, seq);
  PFS_FIELD(transaction_record, state);
  PFS_FIELD(transaction_record, timer);
  PFS_FIELD(transaction_record, nesting_type);
  PFS_FIELD(transaction_record, trx_state);
  PFS_FIELD(transaction_record, class_index);
  PFS_FIELD(transaction_record, source_index);
  PFS_FIELD(transaction_record, thread_id);
  PFS_FIELD(transaction_record, event_id);
  PFS_FIELD(transaction_record, end_event_id);
  PFS_FIELD(transaction_record, nesting_event_id);
  PFS_FIELD(transaction_record, timer_start);
  PFS_FIELD(transaction_record, timer_end);
  PFS_FIELD(transaction_record, trx_id);
  PFS_FIELD(transaction_record, savepoints);
  PFS_FIELD(transaction_record, rollback_to_savepoint);
  PFS_FIELD(transaction_record, release_savepoint);
  PFS_FIELD(transaction_record, xid_format_id);
  PFS_FIELD(transaction_record, has_xid);
  PFS_FIELD(transaction_record, access_mode);
  PFS_FIELD(transaction_record, isolation);
  PFS_FIELD(transaction_record, autocommit);
  PFS_FIELD(transaction_record, xa_state);
  PFS_FIELD(transaction_record, gtid);
  PFS_FIELD(transaction_record, xid_gtrid);
  PFS_FIELD(transaction_record, xid_bqual);
  PFS_RECORD(latency_histogram);
  PFS_FIELD(latency_histogram, counts);
  PFS_RECORD(wait_histogram);
  PFS_FIELD(wait_histogram, counts);
  PFS_RECORD(thread_histogram);
  PFS_FIELD(thread_histogram, lock);
  PFS_FIELD(thread_histogram, class_index);
  PFS_FIELD(thread_histogram, thread_id);
  PFS_FIELD(thread_histogram, h);
  PFS_RECORD(digest_record);
  PFS_FIELD(digest_record, lock);
  PFS_FIELD(digest_record, key);
  PFS_FIELD(digest_record, digest);
  PFS_FIELD(digest_record, schema);
  PFS_FIELD(digest_record, digest_text);
  PFS_FIELD(digest_record, stat);
  PFS_FIELD(digest_record, first_seen_ns);
  PFS_FIELD(digest_record, last_seen_ns);
  PFS_FIELD(digest_record, sample_seq);
  PFS_FIELD(digest_record, sample_seen_ns);
  PFS_FIELD(digest_record, sample_timer_wait);
  PFS_FIELD(digest_record, sample_text);
  PFS_FIELD(digest_record, h);
  PFS_RECORD(region_header);
  PFS_FIELD(region_header, magic);
  PFS_FIELD(region_header, layout_version);
  PFS_FIELD(region_header, header_size);
  PFS_FIELD(region_header, file_size);
  PFS_FIELD(region_header, pid);
  PFS_FIELD(region_header, creation_time_ns);
  PFS_FIELD(region_header, ready);
  PFS_FIELD(region_header, exited);
  PFS_FIELD(region_header, max_classes);
  PFS_FIELD(region_header, max_threads);
  PFS_FIELD(region_header, wait_stack_depth);
  PFS_FIELD(region_header, history_per_thread);
  PFS_FIELD(region_header, history_long_size);
  PFS_FIELD(region_header, history_long_batch);
  PFS_FIELD(region_header, max_indexes_per_table);
  PFS_FIELD(region_header, timers);
  PFS_FIELD(region_header, setup_generation);
  PFS_FIELD(region_header, wait_timer);
  PFS_FIELD(region_header, consumers);
  PFS_FIELD(region_header, next_thread_id);
  PFS_FIELD(region_header, history_long_next_batch);
  PFS_FIELD(region_header, horizon_thread_id);
  PFS_FIELD(region_header, max_stage_classes);
  PFS_FIELD(region_header, max_statement_classes);
  PFS_FIELD(region_header, stages_history_size);
  PFS_FIELD(region_header, statement_stack_depth);
  PFS_FIELD(region_header, statements_history_size);
  PFS_FIELD(region_header, transactions_history_size);
  PFS_FIELD(region_header, max_sql_text_length);
  PFS_FIELD(region_header, statement_stride);
  PFS_FIELD(region_header, digest_size);
  PFS_FIELD(region_header, wait_histograms);
  PFS_FIELD(region_header, idle_timer);
  PFS_FIELD(region_header, stage_timer);
  PFS_FIELD(region_header, statement_timer);
  PFS_FIELD(region_header, transaction_timer);
  PFS_FIELD(region_header, stages_long_next);
  PFS_FIELD(region_header, statements_long_next);
  PFS_FIELD(region_header, transactions_long_next);
  PFS_FIELD(region_header, next_statement_id);
  PFS_FIELD(region_header, digest_generation);
  PFS_FIELD(region_header, lost);
  PFS_FIELD(region_header, arrays);
  PFS_FIELD(region_header, program);
  PFS_FIELD(region_header, cycle_watch);
  PFS_FIELD(region_header, cycle_watch_interval_ms);
  PFS_FIELD(region_header, cycle_checks);
  PFS_FIELD(region_header, cycle_max_drift_ppb);
  PFS_FIELD(region_header, cycle_epoch_count);
  PFS_FIELD(region_header, cycle_epochs);
  PFS_RECORD(cycle_epoch);
  PFS_FIELD(cycle_epoch, number);
  PFS_FIELD(cycle_epoch, raw_start);
  PFS_FIELD(cycle_epoch, ps_start);
  PFS_FIELD(cycle_epoch, mult);
  PFS_FIELD(cycle_epoch, frequency);
  PFS_FIELD(region_header, max_errors);
  PFS_RECORD(error_record);
  PFS_FIELD(error_record, lock);
  PFS_FIELD(error_record, number);
  PFS_FIELD(error_record, name);
  PFS_FIELD(error_record, sql_state);
  PFS_RECORD(error_stat);
  PFS_FIELD(error_stat, raised);
  PFS_FIELD(error_stat, handled);
  PFS_FIELD(error_stat, first_seen);
  PFS_FIELD(error_stat, last_seen);
  PFS_FIELD(region_header, max_metadata_locks);
  PFS_FIELD(region_header, max_data_locks);
  PFS_FIELD(region_header, max_data_lock_waits);
  PFS_FIELD(region_header, max_tls_properties);
  PFS_RECORD(metadata_lock_record);
  PFS_FIELD(metadata_lock_record, lock);
  PFS_FIELD(metadata_lock_record, lock_type);
  PFS_FIELD(metadata_lock_record, duration);
  PFS_FIELD(metadata_lock_record, status);
  PFS_FIELD(metadata_lock_record, identity);
  PFS_FIELD(metadata_lock_record, owner_thread_id);
  PFS_FIELD(metadata_lock_record, owner_event_id);
  PFS_FIELD(metadata_lock_record, source_index);
  PFS_FIELD(metadata_lock_record, object_type);
  PFS_FIELD(metadata_lock_record, object_schema);
  PFS_FIELD(metadata_lock_record, object_name);
  PFS_FIELD(metadata_lock_record, column_name);
  PFS_RECORD(data_lock_record);
  PFS_FIELD(data_lock_record, lock);
  PFS_FIELD(data_lock_record, seq);
  PFS_FIELD(data_lock_record, transaction_id);
  PFS_FIELD(data_lock_record, thread_id);
  PFS_FIELD(data_lock_record, event_id);
  PFS_FIELD(data_lock_record, identity);
  PFS_FIELD(data_lock_record, engine);
  PFS_FIELD(data_lock_record, engine_lock_id);
  PFS_FIELD(data_lock_record, object_schema);
  PFS_FIELD(data_lock_record, object_name);
  PFS_FIELD(data_lock_record, partition_name);
  PFS_FIELD(data_lock_record, subpartition_name);
  PFS_FIELD(data_lock_record, index_name);
  PFS_FIELD(data_lock_record, lock_type);
  PFS_FIELD(data_lock_record, lock_mode);
  PFS_FIELD(data_lock_record, lock_status);
  PFS_FIELD(data_lock_record, lock_data);
  PFS_RECORD(data_lock_wait_record);
  PFS_FIELD(data_lock_wait_record, lock);
  PFS_FIELD(data_lock_wait_record, requesting_index);
  PFS_FIELD(data_lock_wait_record, requesting_version);
  PFS_FIELD(data_lock_wait_record, blocking_index);
  PFS_FIELD(data_lock_wait_record, blocking_version);
  PFS_RECORD(table_lock_stat);
  PFS_FIELD(table_lock_stat, class_index);
  PFS_FIELD(table_lock_stat, kinds);
  PFS_RECORD(tls_property_record);
  PFS_FIELD(tls_property_record, lock);
  PFS_FIELD(tls_property_record, value_seq);
  PFS_FIELD(tls_property_record, channel_id);
  PFS_FIELD(tls_property_record, channel);
  PFS_FIELD(tls_property_record, property);
  PFS_FIELD(tls_property_record, value);
  PFS_FIELD(region_header, max_meters);
  PFS_FIELD(region_header, max_metrics);
  PFS_FIELD(region_header, metric_folds_started);
  PFS_FIELD(region_header, metric_folds_finished);
  PFS_RECORD(meter_record);
  PFS_FIELD(meter_record, lock);
  PFS_FIELD(meter_record, frequency);
  PFS_FIELD(meter_record, enabled);
  PFS_FIELD(meter_record, name);
  PFS_FIELD(meter_record, description);
  PFS_RECORD(metric_record);
  PFS_FIELD(metric_record, value);
  PFS_FIELD(metric_record, lock);
  PFS_FIELD(metric_record, meter_index);
  PFS_FIELD(metric_record, type);
  PFS_FIELD(metric_record, num_type);
  PFS_FIELD(metric_record, name);
  PFS_FIELD(metric_record, unit);
  PFS_FIELD(metric_record, description);
#undef PFS_FIELD
#undef PFS_RECORD
  // The numbering of arrays, lost counters, consumers and kinds is layout too.
  out << "kArrayCount " << kArrayCount << " kArrayLockContention " << kArrayLockContention << "\n";
  out << "kArrayThreadGlobalStats " << kArrayThreadGlobalStats << " kArrayFileWaitStats "
      << kArrayFileWaitStats << "\n";
  out << "kFlagEventNameStats " << int{kFlagEventNameStats} << "\n";
  out << "kLostLockContention " << kLostLockContention << "\n";
  out << "kArraySockets " << kArraySockets << " kLostSocketClasses " << kLostSocketClasses
      << " kLostSocketInstances " << kLostSocketInstances << " kLostCount " << kLostCount << "\n";
  out << "kKindSocket " << int{kKindSocket} << " kObjectSocket " << int{kObjectSocket} << " kOpSocketCreate "
      << int{kOpSocketCreate} << " kOpCount " << int{kOpCount} << "\n";
  out << "kArrayErrors " << kArrayErrors << " kArrayThreadErrorStats " << kArrayThreadErrorStats
      << " kArrayClassErrorStats " << kArrayClassErrorStats << " kLostErrors " << kLostErrors
      << " kKindError " << int{kKindError} << "\n";
  out << "kArrayMetadataLocks " << kArrayMetadataLocks << " kArrayDataLocks " << kArrayDataLocks
      << " kArrayDataLockWaits " << kArrayDataLockWaits << " kArrayTableLockStats " << kArrayTableLockStats
      << " kArrayTlsProperties " << kArrayTlsProperties << "\n";
  out << "kLostMetadataLocks " << kLostMetadataLocks << " kLostDataLocks " << kLostDataLocks
      << " kLostDataLockWaits " << kLostDataLockWaits << " kLostTlsProperties " << kLostTlsProperties << "\n";
  out << "kKindMetadata " << int{kKindMetadata} << " kKindTableLock " << int{kKindTableLock}
      << " kObjectMetadata " << int{kObjectMetadata} << " kOpMetadataLock " << int{kOpMetadataLock}
      << " kOpTableLockFirst " << int{kOpTableLockFirst} << " kTableLockKinds " << int{kTableLockKinds}
      << "\n";
  out << "kArraySems " << kArraySems << " kLostSemClasses " << kLostSemClasses << " kLostSemInstances "
      << kLostSemInstances << " kKindSem " << int{kKindSem} << " kOpTryWait " << int{kOpTryWait} << "\n";
  out << "kArrayMeters " << kArrayMeters << " kArrayMetrics " << kArrayMetrics << " kArrayThreadMetricValues "
      << kArrayThreadMetricValues << " kLostMeters " << kLostMeters << " kLostMetrics " << kLostMetrics
      << " kMetricCounter " << int{kMetricCounter} << " kMetricAsyncGauge " << int{kMetricAsyncGauge}
      << " kMetricInteger " << int{kMetricInteger} << " kMetricDouble " << int{kMetricDouble} << "\n";
  out << "kLostSlots " << kLostSlots << "\n";
  out << "kConsumerSlots " << kConsumerSlots << "\n";
  out << "kHeaderSize " << kHeaderSize << "\n";
  out << "kAliveLockByte " << kAliveLockByte << " kSetupLockByte " << kSetupLockByte << "\n";
  return out.str();
}

TEST(Layout, RecordsMatchTheLayoutVersion) {
  const std::string path =
      std::string(PFS_SOURCE_DIR) + "/tests/layout/v" + std::to_string(kLayoutVersion) + ".txt";
  const std::string now = layout_text();
  if (std::getenv("PFS_LAYOUT_RECORD") != nullptr) {
    std::ofstream(path) << now;
    GTEST_SKIP() << "recorded " << path;
  }
  std::ifstream in(path);
  ASSERT_TRUE(in.good()) << "no record of layout version " << kLayoutVersion << " (" << path
                         << "): run this test with PFS_LAYOUT_RECORD=1 to write it";
  std::stringstream recorded;
  recorded << in.rdbuf();
  EXPECT_EQ(now, recorded.str()) << "the region layout changed but kLayoutVersion is still " << kLayoutVersion
                                 << ": bump it in agent/region/region_layout.h, then record the new layout "
                                    "(PFS_LAYOUT_RECORD=1)";
}

}  // namespace
