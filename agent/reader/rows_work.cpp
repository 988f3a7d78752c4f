// Row builders of events_stages_*, events_statements_* and events_transactions_*
// (current, history, history_long). Rules as MySQL's (reference/mysql_ref): END_EVENT_ID
// is the last event id inside the event (NULL while it runs), a running event's
// TIMER_END is now, NESTING_EVENT_ID/TYPE NULL at the top.
#include <cstdio>
#include <unordered_map>

#include "agent/reader/internal/reader_internal.h"

namespace pfs::reader::detail {

namespace {

constexpr std::uint32_t kStages = 0, kStatements = 1, kTransactions = 2;

bool shown_current(std::uint8_t state) { return state == kWaitRunning || state == kWaitCompleted; }

cell end_event_cell(std::uint64_t end_event_id) {
  return end_event_id == 0 ? null_cell() : int_cell(end_event_id - 1);
}

const char* isolation_name(std::uint8_t v) {
  constexpr const char* kNames[] = {nullptr, "READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ",
                                    "SERIALIZABLE"};
  return v < 5 ? kNames[v] : nullptr;
}

const char* xa_state_name(std::uint8_t v) {
  constexpr const char* kNames[] = {nullptr, "ACTIVE", "IDLE", "PREPARED", "ROLLED BACK", "COMMITTED"};
  return v < 6 ? kNames[v] : nullptr;
}

// thread_id, event_id, end_event_id, event_name: the first columns of every event table.
template <class R>
void append_event_head(row_builder& x, const R& c, std::string_view event_name) {
  x.push_back(int_cell(c.thread_id));
  x.push_back(int_cell(c.event_id));
  x.push_back(end_event_cell(c.end_event_id));
  x.push_back(stable_text(event_name));
}

// nesting_event_id, nesting_event_type (both NULL at the top).
template <class R>
void append_nesting(row_builder& x, const R& c) {
  x.push_back(nullable_int(c.nesting_event_id));
  const char* nest = c.nesting_event_id != 0 ? nesting_type_name(c.nesting_type) : nullptr;
  x.push_back(nest != nullptr ? stable_text(std::string_view(nest)) : null_cell());
}

// The class of an event of the given kind; nullptr (counted invalid) if it is not one.
const class_entry* event_class(scan_state& s, std::uint32_t index, std::uint8_t kind) {
  const class_entry* cls = s.class_at(index);
  if (cls == nullptr || cls->kind != kind) {
    ++s.invalid;
    return nullptr;
  }
  return cls;
}

cell source_cell(scan_state& s, std::uint32_t index) {
  const std::string* src = s.source_ref(index);
  return src != nullptr ? stable_text(std::string_view(*src)) : null_cell();
}

// Visits the events of one kind in the order MySQL shows them: current (per thread,
// its working records), history (per thread, oldest first), history_long (array
// order). fn(const char* record) gets each record that may be a row; the caller
// copies and checks it.
template <class Record, class Fn>
void for_each_event(scan_state& s, const std::vector<live_thread>& threads, std::uint32_t kind,
                    history_kind which, Fn&& fn) {
  static constexpr array_id kArrays[3][3] = {
      {kArrayStageCurrent, kArrayStageHistory, kArrayStageHistoryLong},
      {kArrayStatementCurrent, kArrayStatementHistory, kArrayStatementHistoryLong},
      {kArrayTransactionCurrent, kArrayTransactionHistory, kArrayTransactionHistoryLong}};
  const array_id arr = kArrays[kind][static_cast<int>(which)];
  if (which == history_kind::history_long) {
    const region_header& h = s.r.header();
    const std::uint64_t gone_below = load_acquire(h.horizon_thread_id[kTruncateStagesHistoryLong + 3 * kind]);
    const bool prefilter = s.prefilters();
    for (std::uint64_t i = s.start_position(); i < s.r.count(arr); ++i) {
      if (s.pause_before(i, s.r.stride(arr))) return;
      const char* p = s.r.at_stride(arr, i);
      const Record& rec = *reinterpret_cast<const Record*>(p);
      if (prefilter && s.head_prefiltered(load_relaxed(rec.thread_id), load_relaxed(rec.event_id),
                                          load_relaxed(rec.class_index)))
        continue;
      fn(p, nullptr, gone_below);
    }
    return;
  }
  const std::uint64_t per = which == history_kind::current
                                ? (kind == kStatements ? s.r.statement_stack : 1)
                                : (kind == kStages       ? s.r.stage_history
                                   : kind == kStatements ? s.r.statement_history
                                                         : s.r.transaction_history);
  for (const live_thread& t : threads) {
    const std::uint64_t next = t.history_index[kind];
    const std::uint64_t start = which == history_kind::history && per != 0 && next >= per ? next % per : 0;
    for (std::uint64_t k = 0; k < per; ++k) {
      const char* p = s.r.at_stride(arr, t.slot * per + (start + k) % per);
      if (p == nullptr) break;
      fn(p, &t, k);
    }
  }
}

// Whether a copied event is a row: its thread's, not truncated away, in a state
// the table shows. slot_or_horizon: the slot's position (current, history) or the
// gone-threads horizon (history_long).
using thread_index = std::unordered_map<std::uint64_t, const live_thread*>;  // by THREAD_ID

thread_index index_threads(const std::vector<live_thread>& threads) {
  thread_index by_id;
  for (const live_thread& l : threads) by_id.emplace(l.thread_id, &l);
  return by_id;
}

template <class R>
bool event_visible(const R& c, const live_thread* t, std::uint64_t slot_or_horizon,
                   const thread_index& threads, std::uint32_t kind, history_kind which) {
  const std::uint32_t table = kTruncateStagesCurrent + 3 * kind + static_cast<std::uint32_t>(which);
  if (which == history_kind::history_long) {
    if (c.state != kWaitCompleted) return false;
    const auto it = threads.find(c.thread_id);
    if (it != threads.end()) return c.event_id >= it->second->horizon[table];
    return c.thread_id >= slot_or_horizon;
  }
  if (c.thread_id != t->thread_id || c.event_id < t->horizon[table]) return false;
  if (which == history_kind::history) return c.state == kWaitCompleted;
  return shown_current(c.state);
}

void emit_stage(scan_state& s, const stage_record& c) {
  const class_entry* cls = event_class(s, c.class_index, kKindStage);
  if (cls == nullptr || s.head_rejected(c.thread_id, c.event_id, cls->name)) return;
  auto& x = s.add_row();
  append_event_head(x, c, cls->name);
  x.push_back(source_cell(s, c.source_index));
  append_event_times(s, x, c.timer, c.state == kWaitRunning, c.timer_start, c.timer_end);
  x.push_back(c.work_completed == kNoWork ? null_cell() : int_cell(c.work_completed));
  x.push_back(c.work_estimated == kNoWork ? null_cell() : int_cell(c.work_estimated));
  append_nesting(x, c);
}

// DIGEST_TEXT of a digest row if it still holds this digest.
bool digest_text_of(const region_reader::impl& r, std::uint32_t row, const std::uint8_t* digest,
                    std::string& digest_text) {
  if (row == 0 || row > r.count(kArrayDigests)) return false;
  const digest_record& d = *r.at<digest_record>(kArrayDigests, row - 1);
  fixed_str<kDigestTextLen> text;
  bool same = false;
  const rd res = read_versioned(d, [&](const digest_record& s) {
    same = true;
    for (std::size_t i = 0; i < kDigestLen; ++i) same = same && load_relaxed(s.digest[i]) == digest[i];
    text.load(s.digest_text);
  });
  if (res != rd::ok || !same) return false;
  digest_text = text.str();
  return true;
}

// TRACE_ID (32 hex digits) and PARENT_SPAN_ID (16), lower case as W3C writes them;
// both NULL when the program gave no trace context.
template <class Row>
void append_trace_context(scan_state& s, Row& x, const trace_context& t) {
  if ((t.trace_id_high == 0 && t.trace_id_low == 0) || t.parent_span_id == 0) {
    x.push_back(null_cell());
    x.push_back(null_cell());
    return;
  }
  char hex[33];
  std::snprintf(hex, sizeof hex, "%016llx%016llx", static_cast<unsigned long long>(t.trace_id_high),
                static_cast<unsigned long long>(t.trace_id_low));
  x.push_back(s.text_cell(std::string(hex, 32)));
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(t.parent_span_id));
  x.push_back(s.text_cell(std::string(hex, 16)));
}

void emit_statement(scan_state& s, const statement_record& c, std::string_view text) {
  const class_entry* cls = event_class(s, c.class_index, kKindStatement);
  if (cls == nullptr || s.head_rejected(c.thread_id, c.event_id, cls->name)) return;
  auto& x = s.add_row();
  append_event_head(x, c, cls->name);
  x.push_back(source_cell(s, c.source_index));
  const bool running = c.state == kWaitRunning;
  append_event_times(s, x, c.timer, running, c.timer_start, c.timer_end);
  x.push_back(int_cell(running ? 0 : c.lock_time));  // lock_time: known when the statement ends
  x.push_back(c.has_text != 0 ? s.text_cell(text) : null_cell());
  std::string digest_text;
  if (c.has_digest != 0) {
    x.push_back(s.text_cell(digest_hex(c.digest)));
    x.push_back(digest_text_of(s.r, c.digest_index, c.digest, digest_text)
                    ? s.text_cell(std::move(digest_text))
                    : null_cell());
  } else {
    x.push_back(null_cell());
    x.push_back(null_cell());
  }
  fixed_str<kObjectSchemaLen> schema;
  schema.load(c.current_schema);
  x.push_back(schema.empty() ? null_cell() : s.text_cell(schema.str()));
  for (int k = 0; k < 4; ++k) x.push_back(null_cell());  // object_type, _schema, _name, _instance_begin
  x.push_back(int_cell(c.mysql_errno));
  fixed_str<kSqlStateLen> state;
  state.load(c.returned_sqlstate);
  x.push_back(state.empty() ? null_cell() : s.text_cell(state.str()));
  fixed_str<kMessageTextLen> message;
  message.load(c.message_text);
  x.push_back(message.empty() ? null_cell() : s.text_cell(message.str()));
  x.push_back(int_cell(c.errors));
  x.push_back(int_cell(c.warnings));
  x.push_back(int_cell(c.rows_affected));
  x.push_back(int_cell(c.rows_sent));
  x.push_back(int_cell(c.rows_examined));
  for (int k = 0; k < 13; ++k) x.push_back(int_cell(0));  // created_tmp_disk_tables ... no_good_index_used
  append_nesting(x, c);
  x.push_back(int_cell(c.nesting_level));
  x.push_back(nullable_int(c.statement_id));
  x.push_back(int_cell(c.cpu_time));
  x.push_back(int_cell_signed(c.max_controlled_memory));
  x.push_back(int_cell_signed(c.max_total_memory));
  x.push_back(stable_text(std::string_view("PRIMARY")));
  append_trace_context(s, x, c.trace);
}

void emit_transaction(scan_state& s, const transaction_record& c) {
  const class_entry* cls = event_class(s, c.class_index, kKindTransaction);
  if (cls == nullptr || s.head_rejected(c.thread_id, c.event_id, cls->name)) return;
  auto& x = s.add_row();
  append_event_head(x, c, cls->name);
  constexpr const char* kStates[] = {nullptr, "ACTIVE", "COMMITTED", "ROLLED BACK"};
  x.push_back(c.trx_state >= 1 && c.trx_state <= 3 ? stable_text(std::string_view(kStates[c.trx_state]))
                                                   : null_cell());
  x.push_back(nullable_int(c.trx_id));
  fixed_str<kGtidLen> gtid;
  gtid.load(c.gtid);
  x.push_back(gtid.empty() ? stable_text(std::string_view("AUTOMATIC")) : s.text_cell(gtid.str()));
  const bool xa = c.has_xid != 0;
  x.push_back(xa ? int_cell_signed(c.xid_format_id) : null_cell());
  fixed_str<kXidPartLen> gtrid, bqual;
  gtrid.load(c.xid_gtrid);
  bqual.load(c.xid_bqual);
  x.push_back(xa && !gtrid.empty() ? s.text_cell(gtrid.str()) : null_cell());
  x.push_back(xa && !bqual.empty() ? s.text_cell(bqual.str()) : null_cell());
  const char* xs = xa ? xa_state_name(c.xa_state) : nullptr;
  x.push_back(xs != nullptr ? stable_text(std::string_view(xs)) : null_cell());
  x.push_back(source_cell(s, c.source_index));
  append_event_times(s, x, c.timer, c.state == kWaitRunning, c.timer_start, c.timer_end);
  x.push_back(c.access_mode == kAccessReadOnly    ? stable_text(std::string_view("READ ONLY"))
              : c.access_mode == kAccessReadWrite ? stable_text(std::string_view("READ WRITE"))
                                                  : null_cell());
  const char* iso = isolation_name(c.isolation);
  x.push_back(iso != nullptr ? stable_text(std::string_view(iso)) : null_cell());
  x.push_back(yes_no(c.autocommit != 0));
  x.push_back(int_cell(c.savepoints));
  x.push_back(int_cell(c.rollback_to_savepoint));
  x.push_back(int_cell(c.release_savepoint));
  x.push_back(null_cell());  // object_instance_begin
  append_nesting(x, c);
  append_trace_context(s, x, c.trace);
}

}  // namespace

std::vector<live_thread> live_threads(scan_state& s) {
  std::vector<live_thread> live;
  const std::uint64_t n = s.r.used_threads();
  live.reserve(n);
  for (std::uint64_t i = 0; i < n; ++i) {
    const thread_record& tr = *s.r.at<thread_record>(kArrayThreads, i);
    live_thread l;
    l.slot = i;
    const rd res = read_versioned(tr, [&l](const thread_record& t) {
      l.thread_id = load_relaxed(t.thread_id);
      for (std::uint32_t k = 0; k < kTruncateTables; ++k) l.horizon[k] = load_acquire(t.horizon[k]);
      l.history_index[kStages] = load_relaxed(t.stage_history_index);
      l.history_index[kStatements] = load_relaxed(t.statement_history_index);
      l.history_index[kTransactions] = load_relaxed(t.transaction_history_index);
      l.holder[0] = load_relaxed(t.account_slot);
      l.holder[1] = load_relaxed(t.user_slot);
      l.holder[2] = load_relaxed(t.host_slot);
    });
    if (s.accept(res)) live.push_back(l);
  }
  return live;
}

void rows_stages(scan_state& s, history_kind which) {
  s.load_classes();
  s.load_timers();
  const std::vector<live_thread> threads = live_threads(s);
  const thread_index by_id = index_threads(threads);
  for_each_event<stage_record>(s, threads, kStages, which,
                               [&](const char* p, const live_thread* t, std::uint64_t k) {
                                 stage_record c;
                                 if (!s.accept(read_seq_record(*reinterpret_cast<const stage_record*>(p), c)))
                                   return;
                                 if (!event_visible(c, t, k, by_id, kStages, which)) return;
                                 emit_stage(s, c);
                               });
}

void rows_statements(scan_state& s, history_kind which) {
  s.load_classes();
  s.load_timers();
  const std::vector<live_thread> threads = live_threads(s);
  const thread_index by_id = index_threads(threads);
  std::string text;
  for_each_event<statement_record>(
      s, threads, kStatements, which, [&](const char* p, const live_thread* t, std::uint64_t k) {
        statement_record c;
        if (!s.accept(read_statement(*reinterpret_cast<const statement_record*>(p), c, text,
                                     s.r.max_sql_text_length)))
          return;
        if (!event_visible(c, t, k, by_id, kStatements, which)) return;
        // MySQL shows the running statements of the stack, or the last completed
        // outermost one when none runs: a nested statement that ended is not a row.
        if (which == history_kind::current && k > 0 && c.state != kWaitRunning) return;
        emit_statement(s, c, text);
      });
}

void rows_transactions(scan_state& s, history_kind which) {
  s.load_classes();
  s.load_timers();
  const std::vector<live_thread> threads = live_threads(s);
  const thread_index by_id = index_threads(threads);
  for_each_event<transaction_record>(
      s, threads, kTransactions, which, [&](const char* p, const live_thread* t, std::uint64_t k) {
        transaction_record c;
        if (!s.accept(read_seq_record(*reinterpret_cast<const transaction_record*>(p), c))) return;
        if (!event_visible(c, t, k, by_id, kTransactions, which)) return;
        emit_transaction(s, c);
      });
}

}  // namespace pfs::reader::detail
