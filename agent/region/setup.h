// Setup changes on a region: instrument flags, consumers, the wait timer, thread
// flags and setup_actors rows, and the derived flags the provider's hot path tests.
// The same code serves the provider's own API and readers (the FDW), so a change
// made from either side takes effect the same way: write the setting, recompute the
// derived flags, bump setup_generation. Callers hold the region's setup lock
// (setup_lock_guard) around a change; these functions do not take it.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "agent/region/account_layout.h"
#include "agent/region/error_layout.h"
#include "agent/region/io_layout.h"
#include "agent/region/region.h"
#include "timers/timer.h"

namespace pfs::setup {

// Names of setup_consumers rows, index = layout::consumer_id.
std::string_view consumer_name(std::uint32_t id);
// Index of a consumer by name (exact, lower case); -1 if unknown.
int consumer_from_name(std::string_view name);

// Recomputes class_record::derived for every class, thread_record::derived for
// every live thread and table_share::derived for every table from the settings,
// then bumps setup_generation.
void recompute_derived(const region_map& region);

// The derived flags of one thread from the current settings (consumers, its
// INSTRUMENTED/HISTORY, and TRACE_ENABLED of its setup_actors row).
std::uint8_t thread_derived(const region_map& region, const layout::thread_record& t);
// The work flags (layout::kWork*) of one thread from the current settings.
std::uint32_t work_derived(const region_map& region, const layout::thread_record& t);
// The derived flags of one class from the current settings.
std::uint8_t class_derived(const layout::region_header& h, std::uint8_t flags);

// Sets setup_instruments ENABLED / TIMED / TRACE_ENABLED of one class (1-based
// index); -1 leaves a value alone. False, and nothing changes, when the result
// would have TRACE_ENABLED 'YES' with ENABLED 'NO' (the trace worklog's rule).
bool set_instrument(const region_map& region, std::uint32_t class_index, int enabled, int timed,
                    int trace = -1);
void set_consumer(const region_map& region, std::uint32_t consumer, bool enabled);
// setup_timers rows (MySQL 5.7's order).
enum timer_row : std::uint32_t {
  kTimerIdle,
  kTimerWait,
  kTimerStage,
  kTimerStatement,
  kTimerTransaction,
  kTimerRows
};
std::string_view timer_row_name(timer_row row);
int timer_row_from_name(std::string_view name);  // -1 if unknown
// The header field of a row's timer.
std::uint8_t* timer_field(layout::region_header& h, timer_row row);
// False (and nothing changes) when the timer is unavailable on this machine.
bool set_timer(const region_map& region, timer_row row, timers::timer_kind kind);
bool set_wait_timer(const region_map& region, timers::timer_kind kind);
// threads.INSTRUMENTED / HISTORY of the live thread with this THREAD_ID; -1 leaves
// a value alone. False if no such live thread.
bool set_thread(const region_map& region, std::uint64_t thread_id, int instrumented, int history);

// setup_actors. Matching follows MySQL: a row matches when its USER, HOST and ROLE
// each equal the thread's or are '%'; the most specific row wins (exact USER over
// '%', then exact HOST, then exact ROLE).
struct actor_match {
  bool found = false;
  bool enabled = false;
  bool history = false;
  bool trace = false;
  std::int64_t row = -1;  // index of the matching row in setup_actors
};
actor_match match_actor(const region_map& region, std::string_view user, std::string_view host,
                        std::string_view role);

enum class actor_result { ok, duplicate, full, not_found, too_long };
actor_result insert_actor(const region_map& region, std::string_view host, std::string_view user,
                          std::string_view role, bool enabled, bool history, bool trace = false);
actor_result delete_actor(const region_map& region, std::string_view host, std::string_view user,
                          std::string_view role);
actor_result update_actor(const region_map& region, std::string_view host, std::string_view user,
                          std::string_view role, int enabled, int history, int trace = -1);
void truncate_actors(const region_map& region);

// setup_objects (OBJECT_TYPE 'TABLE' only). A row matches a table when its
// OBJECT_SCHEMA and OBJECT_NAME each equal the table's or are '%'; the most
// specific row wins (exact schema, then exact name). Temporary tables match
// 'TABLE' rows, as in MySQL. No match: not instrumented.
struct object_match {
  bool found = false;
  bool enabled = false;
  bool timed = false;
};
object_match match_object(const region_map& region, std::string_view schema, std::string_view name);
// The derived flags (kFlagEnabled | kFlagTimed) of a table from setup_objects.
std::uint8_t table_derived(const region_map& region, std::string_view schema, std::string_view name);
actor_result insert_object(const region_map& region, std::string_view schema, std::string_view name,
                           bool enabled, bool timed);
actor_result delete_object(const region_map& region, std::string_view schema, std::string_view name);
actor_result update_object(const region_map& region, std::string_view schema, std::string_view name,
                           int enabled, int timed);
void truncate_objects(const region_map& region);
// MySQL's default rows: mysql, performance_schema and information_schema off,
// everything else on and timed.
void insert_default_objects(const region_map& region);

// TRUNCATE of events_waits_current / _history / _history_long: moves the table's
// horizon (see layout::truncate_table) past every event recorded so far; readers
// hide what lies behind it. Nothing a provider writes is touched.
void truncate_events(const region_map& region, layout::truncate_table table);

// TRUNCATE of the summaries: zeroes the statistics. Providers update them without
// locks, so an event ending at the same moment may survive the reset or be lost
// from it (MySQL's reset has the same race).
void reset_wait_summaries(const region_map& region);        // by instance, by event name (+ file classes)
void reset_thread_summaries(const region_map& region);      // by thread by event name
void reset_file_summaries(const region_map& region);        // file_summary_* (instances and classes)
void reset_socket_summaries(const region_map& region);      // socket_summary_* (instances and classes)
void reset_table_summaries(const region_map& region);       // table_io_waits_summary_*
void reset_table_lock_summaries(const region_map& region);  // table_lock_waits_summary_by_table
// Units of work: by_thread true resets the per-thread summaries only, after moving
// them into the global ones (MySQL: TRUNCATE of a by-thread table keeps the global
// totals); false resets both.
void reset_stage_summaries(const region_map& region, bool by_thread);
void reset_statement_summaries(const region_map& region, bool by_thread);
void reset_transaction_summaries(const region_map& region, bool by_thread);
// memory_summary_by_thread_by_event_name (by_thread) or ..._global_by_event_name:
// the counts rebased, the low and high marks set to what is in use (setup_memory.cpp).
void reset_memory_summaries(const region_map& region, bool by_thread);
// events_errors_summary_by_thread_by_error (by_thread: the rows move into the global
// part first, so the global table keeps its totals) or ..._global_by_error (every
// row zeroed, FIRST_SEEN and LAST_SEEN back to NULL) (setup_errors.cpp).
void reset_error_summaries(const region_map& region, bool by_thread);
// Adds one error row into a row others write too (atomic adds; FIRST_SEEN the
// earliest, LAST_SEEN the latest): a thread's rows when it exits or is truncated.
void fold_error_stat(layout::error_stat& into, const layout::error_stat& from);

// Accounts, users and hosts (setup_accounts.cpp, account_layout.h). The summary
// families a thread's rows move in, as bits.
enum account_family : unsigned {
  kFamilyWaits = 1,
  kFamilyStages = 2,
  kFamilyStatements = 4,
  kFamilyTransactions = 8,
  kFamilyMemory = 16,
  kFamilyErrors = 32,
};
inline constexpr unsigned kFamilyAll = 63;
// A holder's rows of every family zeroed (MIN at its start value): a new holder.
void clear_holder(const region_map& region, std::uint32_t holder);
// Adds thread slot's rows of the families into its account (or, without one, its
// user and host): a thread that ends (MySQL's aggregate_thread).
void fold_thread_into_holders(const region_map& region, std::uint64_t slot, unsigned families);
// The same, then the rows join the global buckets too and are zeroed: a thread that
// changes account, or TRUNCATE flushing the threads.
void move_thread_rows(const region_map& region, std::uint64_t slot, unsigned families);
// Every live thread's rows added to its holders (TRUNCATE of a by-thread summary,
// which then zeroes them).
void fold_threads_into_holders(const region_map& region, unsigned families);
// Every holder's rows of the families zeroed (TRUNCATE of a global summary).
void zero_holder_summaries(const region_map& region, unsigned families);
// TRUNCATE of a summary by account (user, host): the live threads flushed into
// their accounts, the accounts into their users and hosts, then the rows of that
// kind zeroed (memory: rebased, as reset_memory_summaries).
void reset_holder_summaries(const region_map& region, account_family family, layout::holder_kind kind);
void reset_holder_memory(const region_map& region, layout::holder_kind kind);  // setup_memory.cpp
// TRUNCATE of accounts, users or hosts: TOTAL_CONNECTIONS restarts from the
// current connections.
void reset_connections(const region_map& region, layout::holder_kind kind);
void reset_digest_histograms(const region_map& region);    // events_statements_histogram_by_digest
void reset_statement_histogram(const region_map& region);  // events_statements_histogram_global
void reset_wait_histograms(const region_map& region);      // events_waits_histogram_global_by_event_name
void reset_lock_contention(const region_map& region);      // lock_contention_by_instance
void reset_digests(const region_map& region);  // events_statements_summary_by_digest (+ its histograms)

// setup_meters (setup_meters.cpp): the 1-based index of a meter by NAME (0: none),
// and its ENABLED / FREQUENCY (-1 leaves a value alone). False, and nothing
// changes, when there is no such meter or the frequency is outside
// [kMinMeterFrequency, kMaxMeterFrequency].
std::uint32_t find_meter(const region_map& region, std::string_view name);
bool set_meter(const region_map& region, std::uint32_t meter_index, int enabled, std::int64_t frequency);

}  // namespace pfs::setup
