// Units of work: stages, statements and transactions (MySQL 5.6 and 5.7), the
// idle wait, the statement digest table, and the wait histogram pool.
//
// A unit of work is far rarer than a wait, so its path is out of line; it keeps
// the event path's rules all the same: no lock, no allocation, no system call but
// the timer, and each record written by its own thread (the digest table, shared
// by every thread, takes atomic adds). Every thread has one working record of each
// kind in the region (its events_*_current slots): a record is written there as it
// happens, and copied whole to the histories when it ends. When the _current
// consumer is off the working record is still kept (threads.PROCESSLIST_INFO,
// nesting) but marked hidden (kWorkHidden*), and readers do not show it.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>

#include "agent/provider/internal/work_api.h"
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail {

work_arrays g_work;

// ---------------------------------------------------------------------------
// Set-up, thread start and exit

void init_work(agent_state& a) {
  region_map& m = a.region;
  region_header& h = *a.header;
  g_work.header = &h;
  g_work.creation_time_ns = h.creation_time_ns;
  g_work.max_sql_text_length = h.max_sql_text_length;
  g_work.max_stage_classes = h.max_stage_classes;
  g_work.max_statement_classes = h.max_statement_classes;
  g_work.stages_history_size = h.stages_history_size;
  g_work.statement_stack_depth = std::min(h.statement_stack_depth, kMaxStatementStack);
  g_work.statements_history_size = h.statements_history_size;
  g_work.transactions_history_size = h.transactions_history_size;
  a.max_stage_classes = h.max_stage_classes;
  a.max_statement_classes = h.max_statement_classes;
  g_work.stage_long = m.array<stage_record>(kArrayStageHistoryLong);
  g_work.stage_long_size = m.count(kArrayStageHistoryLong);
  g_work.statement_long = m.array<char>(kArrayStatementHistoryLong);
  g_work.statement_long_size = m.count(kArrayStatementHistoryLong);
  g_work.transaction_long = m.array<transaction_record>(kArrayTransactionHistoryLong);
  g_work.transaction_long_size = m.count(kArrayTransactionHistoryLong);
  g_work.statement_stride = h.statement_stride;
  g_work.class_stage_stats = m.array<wait_stat>(kArrayClassStageStats);
  g_work.class_statement_stats = m.array<statement_stat>(kArrayClassStatementStats);
  g_work.class_transaction_stats = m.array<transaction_stat>(kArrayClassTransactionStats);
  g_work.digests = m.array<digest_record>(kArrayDigests);
  g_work.digest_rows = m.count(kArrayDigests);
  g_work.statement_histogram = m.array<latency_histogram>(kArrayStatementHistogram);
  g_work.wait_pool = m.array<thread_histogram>(kArrayWaitHistograms);
  g_work.wait_pool_size = m.count(kArrayWaitHistograms);
  g_work.class_wait_histograms = m.array<wait_histogram>(kArrayClassWaitHistograms);
  g_hot.wait_histograms = g_work.wait_pool;
  for (std::uint64_t i = 0; i < m.count(kArrayClassStageStats); ++i) zero_stat(g_work.class_stage_stats[i]);
  for (std::uint64_t i = 0; i < m.count(kArrayClassStatementStats); ++i)
    zero_stat(g_work.class_statement_stats[i]);
  for (std::uint64_t i = 0; i < m.count(kArrayClassTransactionStats); ++i)
    zero_stat(g_work.class_transaction_stats[i]);
  a.histogram_of.assign(std::uint64_t{a.contexts.size()} * a.max_classes, 0);
  a.work_states =
      decltype(a.work_states)(new work_state[a.contexts.size()], [](work_state* w) { delete[] w; });
}

void register_work_classes(agent_state& a) {
  // MySQL's two classes of their own kind: 'transaction' and 'idle'.
  store_release(a.transaction_class, register_named_class(kKindTransaction, "transaction"));
  store_release(a.idle_class, register_named_class(kKindIdle, "idle"));
}

void attach_work(agent_state& a, thread_context& t) {
  region_map& m = a.region;
  const std::uint64_t slot = t.slot;
  work_state* w = &a.work_states[slot];
  *w = work_state{};
  w->stage = m.array<stage_record>(kArrayStageCurrent) + slot;
  w->stage_history_size = g_work.stages_history_size;
  w->stage_history = w->stage_history_size == 0
                         ? nullptr
                         : m.array<stage_record>(kArrayStageHistory) + slot * g_work.stages_history_size;
  w->stack_depth = g_work.statement_stack_depth;
  w->statements = w->stack_depth == 0 ? nullptr
                                      : m.array<char>(kArrayStatementCurrent) +
                                            slot * g_work.statement_stack_depth * g_work.statement_stride;
  w->statement_history_size = g_work.statements_history_size;
  w->statement_history = w->statement_history_size == 0
                             ? nullptr
                             : m.array<char>(kArrayStatementHistory) +
                                   slot * g_work.statements_history_size * g_work.statement_stride;
  w->transaction = m.array<transaction_record>(kArrayTransactionCurrent) + slot;
  w->transaction_history_size = g_work.transactions_history_size;
  w->transaction_history =
      w->transaction_history_size == 0
          ? nullptr
          : m.array<transaction_record>(kArrayTransactionHistory) + slot * g_work.transactions_history_size;
  w->stage_stats = g_work.max_stage_classes == 0
                       ? nullptr
                       : m.array<wait_stat>(kArrayThreadStageStats) + slot * g_work.max_stage_classes;
  w->statement_stats =
      g_work.max_statement_classes == 0
          ? nullptr
          : m.array<statement_stat>(kArrayThreadStatementStats) + slot * g_work.max_statement_classes;
  w->transaction_stats = m.array<transaction_stat>(kArrayThreadTransactionStats) + slot;
  clear_record(*w->stage);
  for (std::uint32_t i = 0; i < w->stage_history_size; ++i) clear_record(w->stage_history[i]);
  for (std::uint32_t i = 0; i < w->stack_depth; ++i) clear_record(w->statement_at(i));
  for (std::uint32_t i = 0; i < w->statement_history_size; ++i)
    clear_record(*reinterpret_cast<statement_record*>(w->statement_history + i * g_work.statement_stride));
  clear_record(*w->transaction);
  for (std::uint32_t i = 0; i < w->transaction_history_size; ++i) clear_record(w->transaction_history[i]);
  for (std::uint32_t i = 0; i < g_work.max_stage_classes; ++i) zero_stat(w->stage_stats[i]);
  for (std::uint32_t i = 0; i < g_work.max_statement_classes; ++i) zero_stat(w->statement_stats[i]);
  zero_stat(*w->transaction_stats);
  thread_record& r = *t.rec;
  store_relaxed(r.statement_depth, 0u);
  store_relaxed(r.stage_history_index, std::uint64_t{0});
  store_relaxed(r.statement_history_index, std::uint64_t{0});
  store_relaxed(r.transaction_history_index, std::uint64_t{0});
  store_relaxed(r.processlist_id, std::uint64_t{0});
  store_relaxed(r.connection_type, std::uint8_t{0});
  store_relaxed(r.idle, std::uint8_t{0});
  store_relaxed(r.last_end_timer, std::uint8_t{0});
  store_relaxed(r.last_statement_end, std::uint64_t{0});
  t.wait_histogram_of = a.histogram_of.data() + slot * a.max_classes;
  std::fill(t.wait_histogram_of, t.wait_histogram_of + a.max_classes, 0u);
  t.work = w;
}

// At thread exit (its record is dirty: readers skip it): what the thread counted
// moves to its classes, so the global summaries keep it.
void release_work(agent_state& a, thread_context& t) {
  if (work_state* w = t.work) {
    for (std::uint32_t i = 0; i < g_work.max_stage_classes; ++i)
      aggregate_atomic(g_work.class_stage_stats[i], load_wait_stat(w->stage_stats[i]));
    for (std::uint32_t i = 0; i < g_work.max_statement_classes; ++i)
      fold_stat(g_work.class_statement_stats[i], w->statement_stats[i]);
    aggregate_atomic(g_work.class_transaction_stats[0].all, load_wait_stat(w->transaction_stats->all));
    aggregate_atomic(g_work.class_transaction_stats[0].read_write,
                     load_wait_stat(w->transaction_stats->read_write));
    aggregate_atomic(g_work.class_transaction_stats[0].read_only,
                     load_wait_stat(w->transaction_stats->read_only));
  }
  if (t.wait_histogram_of != nullptr) {
    for (std::uint32_t c = 0; c < a.max_classes; ++c) {
      const std::uint32_t e = t.wait_histogram_of[c];
      if (e == 0 || e == kSharedHistogram) continue;
      release_pool_histogram(g_work.wait_pool[e - 1], g_work.class_wait_histograms[c]);
    }
    t.wait_histogram_of = nullptr;
  }
  t.work = nullptr;
  t.nest_event_id = 0;
  t.nest_type = kNestingNone;
}

}  // namespace pfs::detail

// ---------------------------------------------------------------------------
// C ABI
// The C ABI's implementations (work_c_abi.inc wraps them as pfs_* functions; the
// rest are in the work_*.cpp files of each kind).
namespace pfs::detail::work_c {

using namespace pfs;
using namespace pfs::detail;

pfs_key register_stage(const char* category, const char* name) {
  if (g_agent == nullptr) pfs_init_from_env();
  return register_class(kKindStage, category, name);
}

pfs_key register_statement(const char* category, const char* name) {
  if (g_agent == nullptr) pfs_init_from_env();
  return register_class(kKindStatement, category, name);
}

void set_thread_connection(uint64_t processlist_id, int connection_type) {
  if (!agent_running()) return;
  thread_context* t = current_thread();
  if (t->thread_id == 0) return;
  store_relaxed(t->rec->processlist_id, processlist_id);
  store_relaxed(t->rec->connection_type,
                static_cast<std::uint8_t>(
                    connection_type > 0 && connection_type < kConnectionCount ? connection_type : 0));
  store_relaxed(t->rec->foreground, std::uint8_t{1});
}

}  // namespace pfs::detail::work_c
