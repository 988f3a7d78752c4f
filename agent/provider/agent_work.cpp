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
#include <utility>

#include "agent/provider/internal/agent_internal.h"
#include "agent/provider/internal/digest.h"
#include "agent/provider/internal/work_api.h"
#include "agent/region/record_copy.h"
#include "agent/region/wide_sum.h"

namespace pfs::detail {

namespace {

// Readers show working records in these states as rows of the _current tables.
constexpr std::uint8_t kRunning = kWaitRunning;
constexpr std::uint8_t kCompleted = kWaitCompleted;

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
  latency_histogram* class_wait_histograms = nullptr;
};
work_arrays g_work;

constexpr std::uint64_t kNullDigestKey = 1;  // the key of row 1, the NULL digest row

}  // namespace

// A thread's units of work in progress. Private to the thread.
struct work_state {
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

namespace {

constexpr std::uint64_t kIdBlock = 64;  // STATEMENT_IDs reserved at a time

// The next history_long slot of a kind: one shared counter per kind, one slot per
// event (a reserved block could be overtaken by the ring and written over a newer
// event by a second writer).
std::uint64_t next_long_slot(std::uint64_t& counter) {
  return __atomic_fetch_add(&counter, 1, __ATOMIC_RELAXED);
}

std::uint64_t elapsed_ps(std::uint8_t timer, std::uint64_t start, std::uint64_t end) {
  if (timer == 0 || end <= start) return 0;
  return g_hot.converters[timer].delta_to_pico(end - start);
}

using detail::zero_stat;  // wait_stat's, from agent_internal.h
void zero_stat(statement_stat& s) {
  zero_stat(s.time);
  for (std::uint64_t* f : {&s.lock_time, &s.errors, &s.warnings, &s.rows_affected, &s.rows_sent,
                           &s.rows_examined, &s.cpu_time, &s.lock_time_hi, &s.cpu_time_hi})
    store_relaxed(*f, std::uint64_t{0});
  store_relaxed(s.max_controlled_memory, std::int64_t{0});
  store_relaxed(s.max_total_memory, std::int64_t{0});
}
// MAX_CONTROLLED_MEMORY and MAX_TOTAL_MEMORY of a summary: the largest statement's.
void max_memory_atomic(statement_stat& into, std::int64_t controlled, std::int64_t total) {
  for (auto [field, v] : {std::pair{&into.max_controlled_memory, controlled}, std::pair{&into.max_total_memory, total}}) {
    std::int64_t seen = load_relaxed(*field);
    while (v > seen && !__atomic_compare_exchange_n(field, &seen, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
    }
  }
}
void zero_stat(transaction_stat& s) {
  zero_stat(s.all);
  zero_stat(s.read_write);
  zero_stat(s.read_only);
}

void add_atomic(std::uint64_t& field, std::uint64_t v) {
  if (v != 0) __atomic_fetch_add(&field, v, __ATOMIC_RELAXED);
}

void fold_stat(statement_stat& into, const statement_stat& from) {
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
void store_text(char* field, std::size_t cap, const char* text, std::size_t n) {
  if (text == nullptr) n = 0;
  if (n >= cap) n = cap - 1;
  for (std::size_t i = 0; i < n; ++i) store_relaxed(field[i], text[i]);
  for (std::size_t i = n; i < cap; ++i) {
    if (load_relaxed(field[i]) == '\0' && i > n) break;  // the rest is already clear
    store_relaxed(field[i], '\0');
  }
}
void store_cstr(char* field, std::size_t cap, const char* text) {
  store_text(field, cap, text, text == nullptr ? 0 : std::strlen(text));
}

const class_record* class_of(pfs_key key, instrument_kind kind) {
  agent_state* a = g_agent;
  if (a == nullptr || key == 0 || key > a->max_classes) return nullptr;
  const class_record& c = a->classes[key - 1];
  if ((load_acquire(c.lock) & kStateMask) != kStateAllocated || c.kind != kind) return nullptr;
  return &c;
}

// The working thread's state, or nullptr when it records nothing.
work_state* working_thread(thread_context*& t) {
  if (!agent_running()) return nullptr;
  t = current_thread();
  return t->work;
}

void call_error() { bump_lost(kWorkCallErrors); }

// What waits nest in now: the running stage, else the innermost statement.
void restore_nest(thread_context& t, work_state& w) {
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

std::uint8_t shown(bool visible, bool running) {
  if (visible) return running ? kRunning : kCompleted;
  return running ? kWorkHiddenRunning : kWorkHiddenCompleted;
}

std::uint64_t now_realtime_ns(std::uint8_t timer, std::uint64_t raw) {
  // The statement's own end time, on the wall clock: the converters' base was
  // taken when the region was created.
  if (timer != 0) return load_relaxed(g_work.header->creation_time_ns) + absolute_pico(timer, raw) / 1000;
  return timers::read_clock(CLOCK_REALTIME);
}

// ---------------------------------------------------------------------------
// Digests

std::uint64_t digest_key(const std::uint8_t (&digest)[kDigestLen], const char* schema) {
  std::uint64_t k = 0;
  std::memcpy(&k, digest, sizeof(k));
  std::uint64_t h = 1469598103934665603ull;  // FNV-1a of the schema
  for (const char* p = schema; p != nullptr && *p != '\0'; ++p)
    h = (h ^ static_cast<unsigned char>(*p)) * 1099511628211ull;
  k ^= h;
  return k <= kNullDigestKey ? k + 2 : k;
}

void init_digest_row(digest_record& d, std::uint64_t key, const std::uint8_t* digest, const char* schema,
                     const char* text, std::size_t text_len) {
  const std::uint32_t word = load_relaxed(d.lock);
  store_relaxed(d.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  for (std::size_t i = 0; i < kDigestLen; ++i)
    store_relaxed(d.digest[i], digest != nullptr ? digest[i] : std::uint8_t{0});
  store_cstr(d.schema, kObjectSchemaLen, schema);
  store_text(d.digest_text, kDigestTextLen, text, text_len);
  zero_stat(d.stat);
  for (std::uint64_t& c : d.h.counts) store_relaxed(c, std::uint64_t{0});
  store_relaxed(d.first_seen_ns, std::uint64_t{0});
  store_relaxed(d.last_seen_ns, std::uint64_t{0});
  store_relaxed(d.sample_timer_wait, std::uint64_t{0});
  store_relaxed(d.sample_seen_ns, std::uint64_t{0});
  (void)key;
  store_release(d.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
}

// The 1-based row of (schema, digest), claimed if new; the NULL digest row (1)
// when the table is full; 0 when there is no digest table.
std::uint32_t find_digest(const std::uint8_t (&digest)[kDigestLen], const char* schema, const char* text,
                          std::size_t text_len, std::uint64_t& key_out) {
  const std::uint64_t rows = g_work.digest_rows;
  if (rows < 2) return 0;
  const std::uint64_t key = digest_key(digest, schema);
  key_out = key;
  const std::uint64_t n = rows - 1;  // rows 2..rows hold digests
  std::uint64_t idx = 1 + key % n;
  for (std::uint64_t probe = 0; probe < n; ++probe) {
    digest_record& d = g_work.digests[idx];
    std::uint64_t k = load_acquire(d.key);
    if (k == key) return static_cast<std::uint32_t>(idx + 1);
    if (k == 0) {
      if (__atomic_compare_exchange_n(&d.key, &k, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        init_digest_row(d, key, digest, schema, text, text_len);
        return static_cast<std::uint32_t>(idx + 1);
      }
      if (k == key) return static_cast<std::uint32_t>(idx + 1);
    }
    idx = idx + 1 == rows ? 1 : idx + 1;
  }
  bump_lost(kLostDigests);
  key_out = kNullDigestKey;
  digest_record& null_row = g_work.digests[0];
  std::uint64_t k = 0;
  if (__atomic_compare_exchange_n(&null_row.key, &k, kNullDigestKey, false, __ATOMIC_ACQ_REL,
                                  __ATOMIC_ACQUIRE))
    init_digest_row(null_row, kNullDigestKey, nullptr, nullptr, nullptr, 0);
  return 1;
}

// MySQL's query sample: the slowest recent statement of the digest (replaced by
// a slower one, or when older than 60 seconds).
void update_sample(digest_record& d, const statement_record& r, std::uint64_t ps, std::uint64_t seen_ns) {
  constexpr std::uint64_t kMaxSampleAgeNs = 60ull * 1000000000ull;
  const std::uint64_t old_seen = load_relaxed(d.sample_seen_ns);
  if (old_seen != 0 && ps <= load_relaxed(d.sample_timer_wait) && seen_ns < old_seen + kMaxSampleAgeNs)
    return;
  // One writer at a time; a thread that finds the sample being written skips it.
  std::uint32_t seq = load_relaxed(d.sample_seq);
  if ((seq & 1u) != 0 ||
      !__atomic_compare_exchange_n(&d.sample_seq, &seq, seq | 1u, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
    return;
  std::atomic_thread_fence(std::memory_order_release);
  const std::uint32_t len = load_relaxed(r.sql_text_length);
  const char* text = statement_text(r);
  std::size_t n = len < kSampleTextLen ? len : kSampleTextLen - 1;
  for (std::size_t i = 0; i < n; ++i) store_relaxed(d.sample_text[i], load_relaxed(text[i]));
  store_relaxed(d.sample_text[n], '\0');
  store_relaxed(d.sample_seen_ns, seen_ns);
  store_relaxed(d.sample_timer_wait, ps);
  store_release(d.sample_seq, (seq | 1u) + 1);
}

void add_to_digest(std::uint32_t row, std::uint64_t key, const statement_record& r, std::uint64_t ps,
                   bool timed, std::uint64_t seen_ns) {
  if (row == 0 || row > g_work.digest_rows) return;
  digest_record& d = g_work.digests[row - 1];
  // The row must still be this digest's and initialized: a TRUNCATE may have
  // emptied it (and another digest claimed it) since the statement began, and a
  // row just claimed by another thread may not be initialized yet (then this
  // statement is not counted in it).
  if (load_acquire(d.key) != key || (load_acquire(d.lock) & kStateMask) != kStateAllocated) return;
  statement_stat& s = d.stat;
  __atomic_fetch_add(&s.time.count, 1, __ATOMIC_RELAXED);
  if (timed) {
    if (ps != 0) add_sum_atomic(s.time.sum, s.time.sum_hi, ps);
    atomic_min(s.time.min, ps);
    atomic_max(s.time.max, ps);
    __atomic_fetch_add(&d.h.counts[histogram::bucket_of(ps)], 1, __ATOMIC_RELAXED);
  }
  if (const std::uint64_t lock = load_relaxed(r.lock_time); lock != 0)
    add_sum_atomic(s.lock_time, s.lock_time_hi, lock);
  add_atomic(s.errors, load_relaxed(r.errors));
  add_atomic(s.warnings, load_relaxed(r.warnings));
  add_atomic(s.rows_affected, load_relaxed(r.rows_affected));
  add_atomic(s.rows_sent, load_relaxed(r.rows_sent));
  add_atomic(s.rows_examined, load_relaxed(r.rows_examined));
  if (const std::uint64_t cpu = load_relaxed(r.cpu_time); cpu != 0)
    add_sum_atomic(s.cpu_time, s.cpu_time_hi, cpu);
  max_memory_atomic(s, load_relaxed(r.max_controlled_memory), load_relaxed(r.max_total_memory));
  std::uint64_t first = 0;
  __atomic_compare_exchange_n(&d.first_seen_ns, &first, seen_ns, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  atomic_max(d.last_seen_ns, seen_ns);
  if (row != 1 && load_relaxed(r.has_text) != 0) update_sample(d, r, ps, seen_ns);
}

// ---------------------------------------------------------------------------
// Stages

void end_stage(thread_context& t, work_state& w) {
  if (!w.stage_running) return;
  stage_record& r = *w.stage;
  const std::uint8_t timer = timer_kind_of(load_relaxed(r.timer));
  const std::uint64_t end = timer != 0 ? read_timer(timer) : 0;
  const std::uint64_t ps = elapsed_ps(timer, load_relaxed(r.timer_start), end);
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(w.stage_flags & kWorkStagesCurrent, false));
  store_relaxed(r.end_event_id, t.next_event_id);
  store_relaxed(r.timer_end, end);
  end_record_write(r, seq);
  aggregate_single(w.stage_stats[w.stage_kind_index], timer != 0, ps);
  if ((w.stage_flags & kWorkStagesHistory) && w.stage_history_size != 0) {
    publish_record(w.stage_history[w.stage_history_index % w.stage_history_size], r, sizeof(stage_record));
    store_relaxed(t.rec->stage_history_index, ++w.stage_history_index);
  }
  if ((w.stage_flags & kWorkStagesHistoryLong) && g_work.stage_long_size != 0) {
    const std::uint64_t i = next_long_slot(g_work.header->stages_long_next);
    publish_record(g_work.stage_long[i % g_work.stage_long_size], r, sizeof(stage_record));
  }
  w.stage_running = false;
  restore_nest(t, w);
}

// ---------------------------------------------------------------------------
// Statements

static_assert(offsetof(statement_record, digest) % 8 == 0 &&
              offsetof(statement_record, current_schema) % 8 == 0 &&
              offsetof(statement_record, message_text) % 8 == 0 && sizeof(statement_record) % 8 == 0);

// Copies a string field word by word up to the word holding its NUL: readers stop
// at the NUL, so what lies after it in the destination does not matter.
void copy_string_words(char* dst, const char* src, std::size_t cap) {
  for (std::size_t off = 0; off < cap; off += 8) {
    const std::uint64_t w =
        __atomic_load_n(reinterpret_cast<const region_word*>(src + off), __ATOMIC_RELAXED);
    __atomic_store_n(reinterpret_cast<region_word*>(dst + off), w, __ATOMIC_RELAXED);
    if (((w - 0x0101010101010101ull) & ~w & 0x8080808080808080ull) != 0) return;  // a zero byte
  }
}

// Publishes a finished statement into a history slot: its numbers, the digest
// when it has one, and of each text only the words in use.
void publish_statement(statement_record& dst, const statement_record& src) {
  char* d = reinterpret_cast<char*>(&dst);
  const char* s = reinterpret_cast<const char*>(&src);
  const std::uint32_t seq = begin_record_write(dst);
  __atomic_store_n(reinterpret_cast<region_half*>(d + 4),
                   __atomic_load_n(reinterpret_cast<const region_half*>(s + 4), __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
  copy_words(d + 8, s + 8, offsetof(statement_record, digest) - 8);
  if (load_relaxed(src.has_digest) != 0)
    copy_words(d + offsetof(statement_record, digest), s + offsetof(statement_record, digest), kDigestLen);
  copy_string_words(d + offsetof(statement_record, current_schema),
                    s + offsetof(statement_record, current_schema), kObjectSchemaLen);
  copy_string_words(d + offsetof(statement_record, message_text),
                    s + offsetof(statement_record, message_text), kMessageTextLen);
  const std::uint64_t room = g_work.statement_stride - sizeof(statement_record);
  std::uint64_t text = (std::uint64_t{load_relaxed(src.sql_text_length)} + 1 + 7) & ~std::uint64_t{7};
  copy_words(d + sizeof(statement_record), s + sizeof(statement_record), text < room ? text : room);
  end_record_write(dst, seq);
}

void end_top_statement(thread_context& t, work_state& w) {
  const std::uint32_t i = w.depth - 1;
  statement_record& r = w.statement_at(i);
  const statement_level& level = w.levels[i];
  const std::uint64_t event_id = load_relaxed(r.event_id);
  if (w.stage_running && load_relaxed(w.stage->nesting_event_id) == event_id) end_stage(t, w);
  const std::uint8_t timer = timer_kind_of(load_relaxed(r.timer));
  const std::uint64_t end = timer != 0 ? read_timer(timer) : 0;
  const std::uint64_t ps = elapsed_ps(timer, load_relaxed(r.timer_start), end);
  std::uint64_t cpu = 0;
  if (level.cpu_start != 0) {
    const std::uint64_t now = timers::read(timers::timer_kind::thread_cpu);
    cpu = elapsed_ps(static_cast<std::uint8_t>(timers::timer_kind::thread_cpu), level.cpu_start, now);
  }
  const std::uint64_t lock_time = t.lock_time - level.lock_base;
  std::int64_t max_controlled = 0, max_total = 0;
  statement_memory_end(t, i + 1, max_controlled, max_total);
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(level.work_flags & kWorkStatementsCurrent, false));
  store_relaxed(r.end_event_id, t.next_event_id);
  store_relaxed(r.timer_end, end);
  store_relaxed(r.lock_time, lock_time);
  store_relaxed(r.cpu_time, cpu);
  store_relaxed(r.max_controlled_memory, max_controlled);
  store_relaxed(r.max_total_memory, max_total);
  end_record_write(r, seq);

  statement_stat& s = w.statement_stats[level.kind_index];
  aggregate_single(s.time, timer != 0, ps);
  const auto add = [](std::uint64_t& f, std::uint64_t v) { store_relaxed(f, load_relaxed(f) + v); };
  add_sum(s.lock_time, s.lock_time_hi, lock_time);
  add(s.errors, load_relaxed(r.errors));
  add(s.warnings, load_relaxed(r.warnings));
  add(s.rows_affected, load_relaxed(r.rows_affected));
  add(s.rows_sent, load_relaxed(r.rows_sent));
  add(s.rows_examined, load_relaxed(r.rows_examined));
  add_sum(s.cpu_time, s.cpu_time_hi, cpu);
  if (max_controlled > load_relaxed(s.max_controlled_memory)) store_relaxed(s.max_controlled_memory, max_controlled);
  if (max_total > load_relaxed(s.max_total_memory)) store_relaxed(s.max_total_memory, max_total);
  if (timer != 0) add_statement_to_histogram(w, t.thread_id, ps);
  if (load_relaxed(r.digest_index) != 0)
    add_to_digest(load_relaxed(r.digest_index), level.digest_key, r, ps, timer != 0,
                  now_realtime_ns(timer, end));

  if ((level.work_flags & kWorkStatementsHistory) && w.statement_history_size != 0) {
    char* slot = w.statement_history +
                 (w.statement_history_index % w.statement_history_size) * g_work.statement_stride;
    publish_statement(*reinterpret_cast<statement_record*>(slot), r);
    store_relaxed(t.rec->statement_history_index, ++w.statement_history_index);
  }
  if ((level.work_flags & kWorkStatementsHistoryLong) && g_work.statement_long_size != 0) {
    const std::uint64_t n = next_long_slot(g_work.header->statements_long_next);
    char* slot = g_work.statement_long + (n % g_work.statement_long_size) * g_work.statement_stride;
    publish_statement(*reinterpret_cast<statement_record*>(slot), r);
  }
  w.depth = i;
  store_relaxed(t.rec->statement_depth, i);
  if (i == 0 && timer != 0) {
    store_relaxed(t.rec->last_statement_end, end);
    store_relaxed(t.rec->last_end_timer, timer);
  }
  restore_nest(t, w);
}

statement_record* top_statement(work_state& w) {
  if (w.depth == 0) {
    call_error();
    return nullptr;
  }
  return &w.statement_at(w.depth - 1);
}

// ---------------------------------------------------------------------------
// Transactions

void end_transaction(thread_context& t, work_state& w, bool committed) {
  transaction_record& r = *w.transaction;
  const std::uint8_t timer = timer_kind_of(load_relaxed(r.timer));
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

template <class R>
void clear_record(R& r) {
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, kWaitEmpty);
  end_record_write(r, seq);
}

}  // namespace

// ---------------------------------------------------------------------------
// Set-up, thread start and exit

std::uint32_t claim_pool_histogram(std::uint64_t thread_id, std::uint32_t class_index);
void release_pool_histogram(thread_histogram& th, latency_histogram& into);

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
  g_work.class_wait_histograms = m.array<latency_histogram>(kArrayClassWaitHistograms);
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

// A histogram of the pool for (thread, class_index); 0 when the pool is used up.
std::uint32_t claim_pool_histogram(std::uint64_t thread_id, std::uint32_t class_index) {
  for (std::uint64_t i = 0; i < g_work.wait_pool_size; ++i) {
    thread_histogram& th = g_work.wait_pool[i];
    std::uint32_t word = load_relaxed(th.lock);
    if ((word & kStateMask) != kStateFree) continue;
    if (!__atomic_compare_exchange_n(&th.lock, &word, (word & ~kStateMask) | kStateDirty, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      continue;
    store_relaxed(th.class_index, class_index);
    store_relaxed(th.thread_id, thread_id);
    for (std::uint64_t& c : th.h.counts) store_relaxed(c, std::uint64_t{0});
    store_release(th.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
    return static_cast<std::uint32_t>(i + 1);
  }
  bump_lost(kWaitHistogramsShared);
  return 0;
}

// Folds a pool histogram into a shared one (atomic adds) and frees it.
void release_pool_histogram(thread_histogram& th, latency_histogram& into) {
  const std::uint32_t word = load_relaxed(th.lock);
  store_relaxed(th.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  for (std::uint32_t b = 0; b < kHistogramBuckets; ++b)
    add_atomic(into.counts[b], load_relaxed(th.h.counts[b]));
  store_release(th.lock, ((word & ~kStateMask) + kVersionInc) | kStateFree);
}

// A timed statement's bucket in events_statements_histogram_global.
void add_statement_to_histogram(work_state& w, std::uint64_t thread_id, std::uint64_t ps) {
  if (g_work.statement_histogram == nullptr) return;
  if (!w.statement_histogram_claimed) [[unlikely]] {
    w.statement_histogram_claimed = true;
    const std::uint32_t e = claim_pool_histogram(thread_id, kStatementHistogramClass);
    w.statement_histogram = e != 0 ? &g_work.wait_pool[e - 1] : nullptr;
  }
  const std::uint32_t b = histogram::bucket_of(ps);
  if (w.statement_histogram != nullptr) {
    std::uint64_t& c = w.statement_histogram->h.counts[b];
    store_relaxed(c, load_relaxed(c) + 1);
  } else {
    __atomic_fetch_add(&g_work.statement_histogram->counts[b], 1, __ATOMIC_RELAXED);
  }
}

// The first timed wait of a (thread, class): claim a histogram of its own from the
// pool, or share the class's (atomic adds) when the pool is used up.
void add_to_histogram_slow(thread_context& t, std::uint32_t class_index, std::uint64_t ps) {
  std::uint32_t& entry = t.wait_histogram_of[class_index - 1];
  if (entry == 0) {
    const std::uint32_t e = claim_pool_histogram(t.thread_id, class_index);
    entry = e != 0 ? e : kSharedHistogram;
  }
  if (entry == kSharedHistogram) {
    __atomic_fetch_add(&g_work.class_wait_histograms[class_index - 1].counts[histogram::bucket_of(ps)], 1,
                       __ATOMIC_RELAXED);
    return;
  }
  add_to_histogram(t, class_index, ps);
}

}  // namespace pfs::detail

// ---------------------------------------------------------------------------
// C ABI
// The C ABI's implementations (work_c_abi.inc wraps them as pfs_* functions).
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

int statement_start(pfs_key key, const char* schema, const char* file, unsigned line) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return 0;
  const class_record* c = class_of(key, kKindStatement);
  if (c == nullptr) {
    if (key != 0) call_error();
    return 0;
  }
  const std::uint8_t cflags = load_relaxed(c->derived);
  if ((cflags & kFlagEnabled) == 0) return 0;
  const std::uint32_t depth = w->depth;
  if (depth >= w->stack_depth) {
    bump_lost(kLostNestedStatements);
    return 0;
  }
  const std::uint32_t flags = load_relaxed(t->rec->work_derived);
  if ((flags & kWorkEnabled) == 0) return 0;
  const std::uint8_t timer =
      (cflags & kFlagTimed) ? timer_kind_of(load_relaxed(g_work.header->statement_timer)) : std::uint8_t{0};
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
  statement_level& level = w->levels[depth];
  level.lock_base = t->lock_time;
  level.cpu_start = (flags & kWorkStatementsCpu) ? timers::read(timers::timer_kind::thread_cpu) : 0;
  level.kind_index = c->kind_index < g_work.max_statement_classes ? c->kind_index : 0;
  level.work_flags = flags;
  level.digest_key = 0;
  const std::uint64_t event_id = t->next_event_id++;
  std::uint64_t nest_id = 0;
  std::uint8_t nest_type = kNestingNone;
  if (depth > 0) {
    nest_id = load_relaxed(w->statement_at(depth - 1).event_id);
    nest_type = kNestingStatement;
  } else if (w->transaction_running) {
    nest_id = load_relaxed(w->transaction->event_id);
    nest_type = kNestingTransaction;
  }
  statement_record& r = w->statement_at(depth);
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(flags & kWorkStatementsCurrent, true));
  store_relaxed(r.timer, timer);
  store_relaxed(r.nesting_type, nest_type);
  store_relaxed(r.nesting_level, static_cast<std::uint8_t>(depth));
  store_relaxed(r.class_index, key);
  store_relaxed(r.source_index, intern_source(*t, file, line));
  store_relaxed(r.thread_id, t->thread_id);
  store_relaxed(r.event_id, event_id);
  store_relaxed(r.end_event_id, std::uint64_t{0});
  store_relaxed(r.nesting_event_id, nest_id);
  store_relaxed(r.timer_start, start);
  store_relaxed(r.timer_end, std::uint64_t{0});
  for (std::uint64_t* f : {&r.lock_time, &r.cpu_time, &r.rows_affected, &r.rows_sent, &r.rows_examined})
    store_relaxed(*f, std::uint64_t{0});
  if (w->next_statement_id == w->statement_id_end) {
    w->next_statement_id =
        __atomic_fetch_add(&g_work.header->next_statement_id, kIdBlock, __ATOMIC_RELAXED) + 1;
    w->statement_id_end = w->next_statement_id + kIdBlock;
  }
  store_relaxed(r.statement_id, w->next_statement_id++);
  store_relaxed(r.max_controlled_memory, std::int64_t{0});
  store_relaxed(r.max_total_memory, std::int64_t{0});
  for (std::uint32_t* f : {&r.errors, &r.warnings, &r.mysql_errno, &r.digest_index, &r.sql_text_length})
    store_relaxed(*f, 0u);
  store_relaxed(r.has_digest, std::uint8_t{0});
  store_relaxed(r.has_text, std::uint8_t{0});
  store_relaxed(statement_text(r)[0], '\0');
  store_relaxed(r.returned_sqlstate[0], '\0');
  store_relaxed(r.message_text[0], '\0');
  store_cstr(r.current_schema, kObjectSchemaLen, schema);
  end_record_write(r, seq);
  w->depth = depth + 1;
  statement_memory_begin(*t, depth + 1);
  store_relaxed(t->rec->statement_depth, depth + 1);
  store_relaxed(t->rec->event_id, t->next_event_id);
  t->nest_event_id = event_id;
  t->nest_type = kNestingStatement;
  return static_cast<int>(depth + 1);
}

static void set_statement_digest(work_state& w, statement_record& r, const char* normalized, std::size_t len,
                                 const char* hex) {
  std::uint8_t bytes[kDigestLen];
  for (std::size_t i = 0; i < kDigestLen; ++i) {
    auto nib = [](char ch) -> std::uint8_t {
      return static_cast<std::uint8_t>(ch >= 'a' ? ch - 'a' + 10 : ch >= 'A' ? ch - 'A' + 10 : ch - '0');
    };
    bytes[i] = static_cast<std::uint8_t>(nib(hex[2 * i]) << 4 | nib(hex[2 * i + 1]));
  }
  char schema[kObjectSchemaLen];
  for (std::size_t i = 0; i < kObjectSchemaLen; ++i) schema[i] = load_relaxed(r.current_schema[i]);
  schema[kObjectSchemaLen - 1] = '\0';
  std::uint64_t key = 0;
  const std::uint32_t row = find_digest(bytes, schema, normalized, len, key);
  w.levels[w.depth - 1].digest_key = key;
  const std::uint32_t seq = begin_record_write(r);
  for (std::size_t i = 0; i < kDigestLen; ++i) store_relaxed(r.digest[i], bytes[i]);
  store_relaxed(r.has_digest, std::uint8_t{1});
  store_relaxed(r.digest_index, row);
  end_record_write(r, seq);
}

void statement_set_text(const char* text, size_t length) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || w->depth == 0) {
    if (w != nullptr) call_error();
    return;
  }
  statement_record& r = *top_statement(*w);
  if (text == nullptr) length = 0;
  const std::uint32_t max = g_work.max_sql_text_length;
  const bool truncated = length > max;
  const std::size_t n = truncated ? max : length;
  if (truncated) bump_lost(kSqlTextTruncated);
  char* dst = statement_text(r);
  const std::uint32_t seq = begin_record_write(r);
  for (std::size_t i = 0; i < n; ++i) store_relaxed(dst[i], text[i]);
  // A cut text ends with "..." (as MySQL's truncated DIGEST_TEXT).
  if (truncated && n >= 3)
    for (std::size_t i = n - 3; i < n; ++i) store_relaxed(dst[i], '.');
  store_relaxed(dst[n], '\0');
  store_relaxed(r.sql_text_length, static_cast<std::uint32_t>(n));
  store_relaxed(r.has_text, std::uint8_t{1});
  end_record_write(r, seq);
  if ((load_relaxed(t->rec->work_derived) & kWorkDigest) && g_work.digest_rows >= 2 && text != nullptr) {
    bool cut = false;
    digest::compute(text, length, w->digest_text, sizeof(w->digest_text), w->digest_hex, &cut);
    set_statement_digest(*w, r, w->digest_text, std::strlen(w->digest_text), w->digest_hex);
  }
}

void statement_set_digest_text(const char* normalized, size_t length) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || w->depth == 0 || normalized == nullptr) {
    if (w != nullptr) call_error();
    return;
  }
  if (!(load_relaxed(t->rec->work_derived) & kWorkDigest) || g_work.digest_rows < 2) return;
  digest::sha256_hex(normalized, length, w->digest_hex);
  const std::size_t n = length < kDigestTextLen ? length : kDigestTextLen - 1;
  set_statement_digest(*w, *top_statement(*w), normalized, n, w->digest_hex);
}

void statement_set_rows(uint64_t affected, uint64_t sent, uint64_t examined) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return;
  statement_record* r = top_statement(*w);
  if (r == nullptr) return;
  const std::uint32_t seq = begin_record_write(*r);
  store_relaxed(r->rows_affected, affected);
  store_relaxed(r->rows_sent, sent);
  store_relaxed(r->rows_examined, examined);
  end_record_write(*r, seq);
}

void statement_set_error(unsigned mysql_errno, const char* sqlstate, const char* message) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return;
  statement_record* r = top_statement(*w);
  if (r == nullptr) return;
  const std::uint32_t seq = begin_record_write(*r);
  store_relaxed(r->errors, load_relaxed(r->errors) + 1);
  store_relaxed(r->mysql_errno, static_cast<std::uint32_t>(mysql_errno));
  store_text(r->returned_sqlstate, kSqlStateLen, sqlstate, sqlstate == nullptr ? 0 : strnlen(sqlstate, 5));
  store_cstr(r->message_text, kMessageTextLen, message);
  end_record_write(*r, seq);
}

void statement_add_warnings(unsigned count) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return;
  statement_record* r = top_statement(*w);
  if (r == nullptr) return;
  const std::uint32_t seq = begin_record_write(*r);
  store_relaxed(r->warnings, load_relaxed(r->warnings) + count);
  end_record_write(*r, seq);
}

void statement_end(int level) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || level <= 0) return;
  if (static_cast<std::uint32_t>(level) > w->depth) {
    call_error();  // an end without its start (or ended already)
    return;
  }
  // Statements left running inside this one end with it (unbalanced nesting).
  while (w->depth > static_cast<std::uint32_t>(level)) {
    call_error();
    end_top_statement(*t, *w);
  }
  end_top_statement(*t, *w);
  store_relaxed(t->rec->event_id, t->next_event_id);
}

uint64_t stage_start(pfs_key key, const char* file, unsigned line) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return 0;
  end_stage(*t, *w);  // MySQL: a new stage ends the running one
  const class_record* c = class_of(key, kKindStage);
  if (c == nullptr) {
    if (key != 0) call_error();
    return 0;
  }
  const std::uint8_t cflags = load_relaxed(c->derived);
  const std::uint32_t flags = load_relaxed(t->rec->work_derived);
  if ((cflags & kFlagEnabled) == 0 || (flags & kWorkEnabled) == 0 || w->stage_stats == nullptr) return 0;
  const std::uint8_t timer =
      (cflags & kFlagTimed) ? timer_kind_of(load_relaxed(g_work.header->stage_timer)) : std::uint8_t{0};
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
  const std::uint64_t event_id = t->next_event_id++;
  stage_record& r = *w->stage;
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.state, shown(flags & kWorkStagesCurrent, true));
  store_relaxed(r.timer, timer);
  store_relaxed(r.nesting_type, w->depth > 0 ? kNestingStatement : kNestingNone);
  store_relaxed(r.class_index, key);
  store_relaxed(r.source_index, intern_source(*t, file, line));
  store_relaxed(r.thread_id, t->thread_id);
  store_relaxed(r.event_id, event_id);
  store_relaxed(r.end_event_id, std::uint64_t{0});
  store_relaxed(r.nesting_event_id, w->depth > 0 ? load_relaxed(w->statement_at(w->depth - 1).event_id) : 0);
  store_relaxed(r.timer_start, start);
  store_relaxed(r.timer_end, std::uint64_t{0});
  store_relaxed(r.work_completed, kNoWork);
  store_relaxed(r.work_estimated, kNoWork);
  end_record_write(r, seq);
  w->stage_running = true;
  w->stage_kind_index = c->kind_index < g_work.max_stage_classes ? c->kind_index : 0;
  w->stage_flags = flags;
  store_relaxed(t->rec->event_id, t->next_event_id);
  t->nest_event_id = event_id;
  t->nest_type = kNestingStage;
  return event_id;
}

void stage_set_progress(uint64_t completed, uint64_t estimated) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->stage_running) return;
  stage_record& r = *w->stage;
  const std::uint32_t seq = begin_record_write(r);
  store_relaxed(r.work_completed, completed);
  store_relaxed(r.work_estimated, estimated);
  end_record_write(r, seq);
}

void stage_end(void) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return;
  end_stage(*t, *w);
  store_relaxed(t->rec->event_id, t->next_event_id);
}

void stage_end_event(uint64_t event_id) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr || !w->stage_running || event_id == 0 || load_relaxed(w->stage->event_id) != event_id)
    return;
  end_stage(*t, *w);
  store_relaxed(t->rec->event_id, t->next_event_id);
}

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
  const std::uint8_t timer =
      (cflags & kFlagTimed) ? timer_kind_of(load_relaxed(g_work.header->transaction_timer)) : std::uint8_t{0};
  const std::uint64_t start = timer != 0 ? read_timer(timer) : 0;
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

int start_idle_wait(pfs_wait_locker* locker, const char* file, unsigned line) {
  agent_state* a = g_agent;
  if (a == nullptr || !load_relaxed(g_hot.recording)) return 0;
  const pfs_key idle = load_acquire(a->idle_class);
  if (idle == 0) return 0;
  wait_locker& l = *reinterpret_cast<wait_locker*>(locker);
  // No instance: the idle class has per-thread and global statistics only.
  const auto cflags =
      static_cast<std::uint8_t>(load_relaxed(a->classes[idle - 1].derived) & ~kFlagInstanceStats);
  if (!begin_wait_flags(l, idle, cflags, 0, kOpIdle)) return 0;
  if (l.event.timer != 0) l.event.timer = timer_kind_of(load_relaxed(a->header->idle_timer));
  start_running(l, file, line);
  store_relaxed(l.thread->rec->idle, std::uint8_t{1});
  return 1;
}

void end_idle_wait(pfs_wait_locker* locker) {
  wait_locker& l = *reinterpret_cast<wait_locker*>(locker);
  end_wait(l, false);
  store_relaxed(l.thread->rec->idle, std::uint8_t{0});
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
