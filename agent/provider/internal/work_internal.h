// The units of work's shared state and helpers (agent_work.cpp and the work_*.cpp
// files, one per event kind): the region's work arrays, a thread's work_state, and
// the steps one kind takes of another (a statement ends its stage, a transaction
// its statements).
#pragma once

#include <cstddef>
#include <cstring>
#include <utility>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/digest.h"
#include "agent/region/record_copy.h"
#include "agent/region/wide_sum.h"

namespace pfs::detail {

// Readers show working records in these states as rows of the _current tables.
inline constexpr std::uint8_t kRunning = kWaitRunning;
inline constexpr std::uint8_t kCompleted = kWaitCompleted;

struct statement_level {
  std::uint64_t digest_key = 0;  // the key of its digest row (0: none)
  std::uint64_t lock_base = 0;   // t.lock_time at the start
  std::uint64_t cpu_start = 0;   // THREAD_CPU raw at the start; 0 = not measured
  std::uint32_t kind_index = 0;
  std::uint32_t work_flags = 0;  // thread_record::work_derived at the start
};

// Where the region's shared parts of the work path are (set once by init_work).
struct work_arrays {
  region_header* header = nullptr;
  // Sizes copied at start-up: the shared header is writable by other processes,
  // so the work path never indexes with what it holds now.
  std::uint64_t creation_time_ns = 0;
  std::uint32_t max_sql_text_length = 0;
  std::uint32_t max_stage_classes = 0;
  std::uint32_t max_statement_classes = 0;
  std::uint32_t stages_history_size = 0;
  std::uint32_t statement_stack_depth = 0;
  std::uint32_t statements_history_size = 0;
  std::uint32_t transactions_history_size = 0;
  stage_record* stage_long = nullptr;
  std::uint64_t stage_long_size = 0;
  char* statement_long = nullptr;
  std::uint64_t statement_long_size = 0;
  transaction_record* transaction_long = nullptr;
  std::uint64_t transaction_long_size = 0;
  std::uint64_t statement_stride = 0;
  wait_stat* class_stage_stats = nullptr;
  statement_stat* class_statement_stats = nullptr;
  transaction_stat* class_transaction_stats = nullptr;
  digest_record* digests = nullptr;
  std::uint64_t digest_rows = 0;
  latency_histogram* statement_histogram = nullptr;
  thread_histogram* wait_pool = nullptr;
  std::uint64_t wait_pool_size = 0;
  wait_histogram* class_wait_histograms = nullptr;
};
extern work_arrays g_work;

inline constexpr std::uint64_t kNullDigestKey = 1;  // the key of row 1, the NULL digest row

// A thread's units of work in progress. Private to the thread, and on lines of
// its own (an array of them, written on every stage and statement).
struct alignas(64) work_state {
  // Its slots in the region.
  stage_record* stage = nullptr;
  stage_record* stage_history = nullptr;
  std::uint32_t stage_history_size = 0;
  std::uint64_t stage_history_index = 0;
  char* statements = nullptr;  // statement_stack_depth working records (stride apart)
  char* statement_history = nullptr;
  std::uint32_t statement_history_size = 0;
  std::uint64_t statement_history_index = 0;
  std::uint32_t stack_depth = 0;
  transaction_record* transaction = nullptr;
  transaction_record* transaction_history = nullptr;
  std::uint32_t transaction_history_size = 0;
  std::uint64_t transaction_history_index = 0;
  wait_stat* stage_stats = nullptr;
  statement_stat* statement_stats = nullptr;
  transaction_stat* transaction_stats = nullptr;

  // What is running.
  bool stage_running = false;
  std::uint32_t stage_kind_index = 0;
  std::uint32_t stage_flags = 0;
  std::uint32_t depth = 0;  // running statements
  statement_level levels[kMaxStatementStack];
  bool transaction_running = false;
  std::uint32_t transaction_flags = 0;

  // The thread's share of events_statements_histogram_global: a pool entry
  // written with plain stores (nullptr: none left, atomic adds to the global one).
  thread_histogram* statement_histogram = nullptr;
  bool statement_histogram_claimed = false;

  // STATEMENT_IDs are taken from the header's counter in blocks, so that a
  // statement does not pay a shared atomic for its id.
  std::uint64_t next_statement_id = 0, statement_id_end = 0;

  // Scratch for the digest (normalized text) and SQL_TEXT before it is published.
  char digest_text[kDigestTextLen];
  char digest_hex[65];

  statement_record& statement_at(std::uint32_t level) const {
    return *reinterpret_cast<statement_record*>(statements + std::uint64_t{level} * g_work.statement_stride);
  }
};

// A timed statement counted in its thread's statement histogram (below).
void add_statement_to_histogram(work_state& w, std::uint64_t thread_id, std::uint64_t ps);

inline constexpr std::uint64_t kIdBlock = 64;  // STATEMENT_IDs reserved at a time

// The next history_long slot of a kind: one shared counter per kind, one slot per
// event (a reserved block could be overtaken by the ring and written over a newer
// event by a second writer).
inline std::uint64_t next_long_slot(std::uint64_t& counter) {
  return __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}

// The timer byte (event_timer) of a unit of work whose setup_timers row is
// row_timer: the wait timer's clock when it is finer than the row's unit (CYCLE
// under NANOSECOND, ...), so that its waits lie inside it on one axis; the row's
// own timer otherwise (TICK, THREAD_CPU, or a wait timer as coarse).
inline std::uint8_t work_timer(std::uint8_t row_timer) {
  constexpr auto rank = [](std::uint8_t k) {  // finer first; 0 = not on the axis
    switch (static_cast<timers::timer_kind>(k)) {
      case timers::timer_kind::cycle:
        return 1;
      case timers::timer_kind::nanosecond:
        return 2;
      case timers::timer_kind::microsecond:
        return 3;
      case timers::timer_kind::millisecond:
        return 4;
      default:
        return 0;
    }
  };
  const std::uint8_t axis = timer_kind_of(load_relaxed(g_work.header->wait_timer));
  if (rank(row_timer) == 0 || rank(axis) == 0 || rank(axis) >= rank(row_timer)) return row_timer;
  return event_timer(axis, row_timer);
}

inline std::uint64_t elapsed_ps(std::uint8_t timer, std::uint64_t start, std::uint64_t end) {
  if (timer == 0 || end <= start) return 0;
  return g_hot.converters[timer].delta_to_pico(end - start);
}

inline void zero_stat(statement_stat& s) {
  zero_stat(s.time);
  for (std::uint64_t* f : {&s.lock_time, &s.errors, &s.warnings, &s.rows_affected, &s.rows_sent,
                           &s.rows_examined, &s.cpu_time, &s.lock_time_hi, &s.cpu_time_hi})
    store_relaxed(*f, std::uint64_t{0});
  store_relaxed(s.max_controlled_memory, std::int64_t{0});
  store_relaxed(s.max_total_memory, std::int64_t{0});
}
inline void zero_stat(transaction_stat& s) {
  zero_stat(s.all);
  zero_stat(s.read_write);
  zero_stat(s.read_only);
}

inline void add_atomic(std::uint64_t& field, std::uint64_t v) {
  if (v != 0) __atomic_fetch_add(&field, v, __ATOMIC_RELAXED);
}

// MAX_CONTROLLED_MEMORY and MAX_TOTAL_MEMORY of a summary: the largest statement's.
inline void max_memory_atomic(statement_stat& into, std::int64_t controlled, std::int64_t total) {
  for (auto [field, v] :
       {std::pair{&into.max_controlled_memory, controlled}, std::pair{&into.max_total_memory, total}}) {
    std::int64_t seen = load_relaxed(*field);
    while (v > seen &&
           !__atomic_compare_exchange_n(field, &seen, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
}

inline void fold_stat(statement_stat& into, const statement_stat& from) {
  aggregate_atomic(into.time, load_wait_stat(from.time));
  add_wide_atomic(into.lock_time, into.lock_time_hi, load_sum(from.lock_time, from.lock_time_hi));
  add_atomic(into.errors, load_relaxed(from.errors));
  add_atomic(into.warnings, load_relaxed(from.warnings));
  add_atomic(into.rows_affected, load_relaxed(from.rows_affected));
  add_atomic(into.rows_sent, load_relaxed(from.rows_sent));
  add_atomic(into.rows_examined, load_relaxed(from.rows_examined));
  add_wide_atomic(into.cpu_time, into.cpu_time_hi, load_sum(from.cpu_time, from.cpu_time_hi));
  max_memory_atomic(into, load_relaxed(from.max_controlled_memory), load_relaxed(from.max_total_memory));
}

// Copies a NUL-terminated string into a fixed field with relaxed byte stores.
inline void store_text(char* field, std::size_t cap, const char* text, std::size_t n) {
  if (text == nullptr) n = 0;
  if (n >= cap) n = cap - 1;
  for (std::size_t i = 0; i < n; ++i) store_relaxed(field[i], text[i]);
  for (std::size_t i = n; i < cap; ++i) {
    if (load_relaxed(field[i]) == '\0' && i > n) break;  // the rest is already clear
    store_relaxed(field[i], '\0');
  }
}
inline void store_cstr(char* field, std::size_t cap, const char* text) {
  store_text(field, cap, text, text == nullptr ? 0 : std::strlen(text));
}

inline const class_record* class_of(pfs_key key, instrument_kind kind) {
  agent_state* a = g_agent;
  if (a == nullptr || key == 0 || key > a->max_classes) return nullptr;
  const class_record& c = a->classes[key - 1];
  if ((load_acquire(c.lock) & kStateMask) != kStateAllocated || c.kind != kind) return nullptr;
  return &c;
}

// The working thread's state, or nullptr when it records nothing.
inline work_state* working_thread(thread_context*& t) {
  if (!agent_running()) return nullptr;
  t = current_thread();
  return t->work;
}

inline void call_error() { bump_lost(kWorkCallErrors); }

// What waits nest in now: the running stage, else the innermost statement.
inline void restore_nest(thread_context& t, work_state& w) {
  if (w.stage_running) {
    t.nest_event_id = load_relaxed(w.stage->event_id);
    t.nest_type = kNestingStage;
  } else if (w.depth > 0) {
    t.nest_event_id = load_relaxed(w.statement_at(w.depth - 1).event_id);
    t.nest_type = kNestingStatement;
  } else {
    t.nest_event_id = 0;
    t.nest_type = kNestingNone;
  }
}

inline std::uint8_t shown(bool visible, bool running) {
  if (visible) return running ? kRunning : kCompleted;
  return running ? kWorkHiddenRunning : kWorkHiddenCompleted;
}

inline std::uint64_t now_realtime_ns(std::uint8_t timer, std::uint64_t raw) {
  // The statement's own end time, on the wall clock: the converters' base was
  // taken when the region was created.
  if (timer != 0) return load_relaxed(g_work.header->creation_time_ns) + absolute_pico(timer, raw) / 1000;
  return timers::read_clock(CLOCK_REALTIME);
}

template <class R>
inline void clear_record(R& r) {
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, kWaitEmpty);
  end_record_write(r, seq);
}

// Digests (work_digests.cpp): the 1-based row of (schema, digest), claimed if new;
// the NULL digest row (1) when the table is full; 0 when there is no digest table.
std::uint32_t find_digest(const std::uint8_t (&digest)[kDigestLen], const char* schema, const char* text,
                          std::size_t text_len, std::uint64_t& key_out);
void add_to_digest(std::uint32_t row, std::uint64_t key, const statement_record& r, std::uint64_t ps,
                   bool timed, std::uint64_t seen_ns);
// Stages (work_stages.cpp): ends the running stage, if any.
void end_stage(thread_context& t, work_state& w);
// Statements (work_statements.cpp).
void end_top_statement(thread_context& t, work_state& w);
statement_record* top_statement(work_state& w);
// Transactions (work_transactions.cpp).
void end_transaction(thread_context& t, work_state& w, bool committed);
// A W3C traceparent into a trace_context (work_trace_context.cpp); false (out
// unchanged) when it is not a valid one.
bool parse_traceparent(const char* text, trace_context& out);
void store_trace_context(trace_context& field, const trace_context& value);
// The wait histogram pool (work_histograms.cpp).
std::uint32_t claim_pool_histogram(std::uint64_t thread_id, std::uint32_t class_index);
void release_pool_histogram(thread_histogram& th, wait_histogram& into);
void release_pool_histogram(thread_histogram& th, latency_histogram& into);

}  // namespace pfs::detail
