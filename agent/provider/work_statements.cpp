// Statements (MySQL 5.6): events_statements_*, nested up to the statement stack
// depth; SQL_TEXT, DIGEST and DIGEST_TEXT, rows, errors.
#include "agent/provider/internal/work_api.h"
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail {

namespace {

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

}  // namespace

void end_top_statement(thread_context& t, work_state& w) {
  const std::uint32_t i = w.depth - 1;
  statement_record& r = w.statement_at(i);
  const statement_level& level = w.levels[i];
  const std::uint64_t event_id = load_relaxed(r.event_id);
  if (w.stage_running && load_relaxed(w.stage->nesting_event_id) == event_id) end_stage(t, w);
  const std::uint8_t timer = timer_kind_of(event_clock(load_relaxed(r.timer)));  // the clock
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
  if (max_controlled > load_relaxed(s.max_controlled_memory))
    store_relaxed(s.max_controlled_memory, max_controlled);
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

}  // namespace pfs::detail

namespace pfs::detail::work_c {

using namespace pfs;
using namespace pfs::detail;

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
  const std::uint8_t timer = (cflags & kFlagTimed)
                                 ? work_timer(timer_kind_of(load_relaxed(g_work.header->statement_timer)))
                                 : std::uint8_t{0};
  const std::uint64_t start = timer != 0 ? read_timer(event_clock(timer)) : 0;
  statement_level& level = w->levels[depth];
  level.lock_base = t->lock_time;
  level.cpu_start = (flags & kWorkStatementsCpu) ? timers::read(timers::timer_kind::thread_cpu) : 0;
  level.kind_index = c->kind_index < g_work.max_statement_classes ? c->kind_index : 0;
  level.work_flags = flags;
  level.digest_key = 0;
  const std::uint64_t event_id = t->next_event_id++;
  std::uint64_t nest_id = 0;
  std::uint8_t nest_type = kNestingNone;
  // MySQL's rule (pfs.cc, start statement): the later-started of the running
  // statement and the running transaction, so a statement that starts inside a
  // transaction its parent statement began nests in that transaction.
  if (depth > 0) {
    nest_id = load_relaxed(w->statement_at(depth - 1).event_id);
    nest_type = kNestingStatement;
  }
  if (w->transaction_running) {
    const std::uint64_t trx_id = load_relaxed(w->transaction->event_id);
    if (depth == 0 || trx_id > nest_id) {
      nest_id = trx_id;
      nest_type = kNestingTransaction;
    }
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
  store_trace_context(r.trace, trace_context{});
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

void statement_set_traceparent(const char* traceparent) {
  thread_context* t = nullptr;
  work_state* w = working_thread(t);
  if (w == nullptr) return;
  statement_record* r = top_statement(*w);
  trace_context parsed{};
  if (r == nullptr || !parse_traceparent(traceparent, parsed)) return;
  const std::uint32_t seq = begin_record_write(*r);
  store_trace_context(r->trace, parsed);
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
  count_statement_error(mysql_errno);
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

}  // namespace pfs::detail::work_c
