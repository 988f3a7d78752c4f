// Transactions (MySQL 5.7): events_transactions_*; one running per thread.
#include "agent/provider/internal/work_api.h"
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail {

void end_transaction(thread_context& t, work_state& w, bool committed) {
  transaction_record& r = *w.transaction;
  const std::uint8_t timer = timer_kind_of(event_clock(load_relaxed(r.timer)));  // the clock
  const std::uint64_t end = timer != 0 ? read_timer(timer) : 0;
  const std::uint64_t ps = elapsed_ps(timer, load_relaxed(r.timer_start), end);
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(w.transaction_flags & kWorkTransactionsCurrent, false));
  store_relaxed(r.trx_state, static_cast<std::uint8_t>(committed ? kTrxCommitted : kTrxRolledBack));
  store_relaxed(r.end_event_id, t.next_event_id);
  store_relaxed(r.timer_end, end);
  end_record_write(r, seq);
  transaction_stat& s = *w.transaction_stats;
  aggregate_single(s.all, timer != 0, ps);
  aggregate_single(load_relaxed(r.access_mode) == kAccessReadOnly ? s.read_only : s.read_write, timer != 0,
                   ps);
  if ((w.transaction_flags & kWorkTransactionsHistory) && w.transaction_history_size != 0) {
    publish_record(w.transaction_history[w.transaction_history_index % w.transaction_history_size], r,
                   sizeof(transaction_record));
    store_relaxed(t.rec->transaction_history_index, ++w.transaction_history_index);
  }
  if ((w.transaction_flags & kWorkTransactionsHistoryLong) && g_work.transaction_long_size != 0) {
    const std::uint64_t i = next_long_slot(g_work.header->transactions_long_next);
    publish_record(g_work.transaction_long[i % g_work.transaction_long_size], r, sizeof(transaction_record));
  }
  w.transaction_running = false;
}

}  // namespace pfs::detail

namespace pfs::detail::work_c {

using namespace pfs;
using namespace pfs::detail;

int transaction_start(int read_only, int isolation, int autocommit, const char* file, unsigned line) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  agent_state* a = g_agent;
  if (w == nullptr || a == nullptr) return 0;
  if (w->transaction_running) {
    call_error();  // one transaction at a time per thread
    return 0;
  }
  const pfs_key trx_class = load_acquire(a->transaction_class);
  const class_record* c = class_of(trx_class, kKindTransaction);
  if (c == nullptr) return 0;
  const std::uint8_t cflags = load_relaxed(c->derived);
  const std::uint32_t flags = load_relaxed(t->rec->work_derived);
  if ((cflags & kFlagEnabled) == 0 || (flags & kWorkEnabled) == 0) return 0;
  const std::uint8_t timer = (cflags & kFlagTimed)
                                 ? work_timer(timer_kind_of(load_relaxed(g_work.header->transaction_timer)))
                                 : std::uint8_t{0};
  const std::uint64_t start = timer != 0 ? read_timer(event_clock(timer)) : 0;
  const std::uint64_t event_id = t->next_event_id++;
  transaction_record& r = *w->transaction;
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(flags & kWorkTransactionsCurrent, true));
  store_relaxed(r.timer, timer);
  store_relaxed(r.nesting_type, w->depth > 0 ? kNestingStatement : kNestingNone);
  store_relaxed(r.trx_state, static_cast<std::uint8_t>(kTrxActive));
  store_relaxed(r.class_index, trx_class);
  store_relaxed(r.source_index, intern_source(*t, file, line));
  store_relaxed(r.thread_id, t->thread_id);
  store_relaxed(r.event_id, event_id);
  store_relaxed(r.end_event_id, std::uint64_t{0});
  store_relaxed(r.nesting_event_id, w->depth > 0 ? load_relaxed(w->statement_at(w->depth - 1).event_id) : 0);
  store_relaxed(r.timer_start, start);
  store_relaxed(r.timer_end, std::uint64_t{0});
  for (std::uint64_t* f : {&r.trx_id, &r.savepoints, &r.rollback_to_savepoint, &r.release_savepoint})
    store_relaxed(*f, std::uint64_t{0});
  store_relaxed(r.xid_format_id, std::int64_t{0});
  store_relaxed(r.has_xid, std::uint8_t{0});
  store_relaxed(r.access_mode, static_cast<std::uint8_t>(read_only ? kAccessReadOnly : kAccessReadWrite));
  store_relaxed(r.isolation, static_cast<std::uint8_t>(isolation >= 1 && isolation <= 4 ? isolation : 0));
  store_relaxed(r.autocommit, static_cast<std::uint8_t>(autocommit ? 1 : 0));
  store_relaxed(r.xa_state, static_cast<std::uint8_t>(kXaNone));
  store_relaxed(r.gtid[0], '\0');
  store_relaxed(r.xid_gtrid[0], '\0');
  store_relaxed(r.xid_bqual[0], '\0');
  store_trace_context(r.trace, trace_context{});
  end_record_write(r, seq);
  w->transaction_running = true;
  w->transaction_flags = flags;
  store_relaxed(t->rec->event_id, t->next_event_id);
  return 1;
}

void transaction_set_gtid(const char* gtid) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->transaction_running) return;
  transaction_record& r = *w->transaction;
  const std::uint32_t seq = begin_record_write(r);
  store_cstr(r.gtid, kGtidLen, gtid);
  end_record_write(r, seq);
}

void transaction_set_traceparent(const char* traceparent) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  trace_context parsed{};
  if (w == nullptr || !w->transaction_running || !parse_traceparent(traceparent, parsed)) return;
  transaction_record& r = *w->transaction;
  const std::uint32_t seq = begin_record_write(r);
  store_trace_context(r.trace, parsed);
  end_record_write(r, seq);
}

void transaction_set_trx_id(uint64_t trx_id) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->transaction_running) return;
  transaction_record& r = *w->transaction;
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.trx_id, trx_id);
  end_record_write(r, seq);
}

void transaction_set_xid(long format_id, const char* gtrid, const char* bqual) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->transaction_running) return;
  transaction_record& r = *w->transaction;
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.xid_format_id, static_cast<std::int64_t>(format_id));
  store_relaxed(r.has_xid, std::uint8_t{1});
  store_relaxed(r.xa_state, static_cast<std::uint8_t>(kXaActive));
  store_cstr(r.xid_gtrid, kXidPartLen, gtrid);
  store_cstr(r.xid_bqual, kXidPartLen, bqual);
  end_record_write(r, seq);
}

void transaction_savepoint(int kind) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->transaction_running) return;
  transaction_record& r = *w->transaction;
  std::uint64_t* f = kind == PFS_SAVEPOINT               ? &r.savepoints
                     : kind == PFS_ROLLBACK_TO_SAVEPOINT ? &r.rollback_to_savepoint
                     : kind == PFS_RELEASE_SAVEPOINT     ? &r.release_savepoint
                                                         : nullptr;
  if (f == nullptr) {
    call_error();
    return;
  }
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(*f, load_relaxed(*f) + 1);
  end_record_write(r, seq);
}

void transaction_end(int committed) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return;
  if (!w->transaction_running) {
    call_error();
    return;
  }
  end_transaction(*t, *w, committed != 0);
  store_relaxed(t->rec->event_id, t->next_event_id);
}

}  // namespace pfs::detail::work_c
