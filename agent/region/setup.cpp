#include "agent/region/setup.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "agent/region/internal/stat_fold.h"
#include "agent/region/io_layout.h"
#include "agent/region/lock_layout.h"
#include "agent/region/wide_sum.h"
#include "agent/region/work_layout.h"

namespace pfs::setup {
namespace {

using namespace layout;

constexpr std::string_view kConsumerNames[kConsumerCount] = {
    "global_instrumentation",
    "thread_instrumentation",
    "events_waits_current",
    "events_waits_history",
    "events_waits_history_long",
    "events_waits_summary_by_thread_by_event_name",
    "events_waits_summary_global_by_event_name",
    "events_waits_summary_by_instance",
    "events_stages_current",
    "events_stages_history",
    "events_stages_history_long",
    "events_statements_cpu",
    "events_statements_current",
    "events_statements_history",
    "events_statements_history_long",
    "events_transactions_current",
    "events_transactions_history",
    "events_transactions_history_long",
    "statements_digest",
};

bool consumer_on(const region_header& h, std::uint32_t id) { return load_relaxed(h.consumers[id]) != 0; }

void bump_generation(const region_map& region) {
  __atomic_fetch_add(&region.header().setup_generation, 1, __ATOMIC_RELEASE);
}

// A bounded copy of a fixed-size string field, for comparisons.
std::string_view field_view(const char* field, std::size_t cap) {
  std::size_t n = 0;
  while (n < cap && field[n] != '\0') ++n;
  return {field, n};
}

void set_field(char* field, std::size_t cap, std::string_view value) {
  std::size_t n = value.size() < cap ? value.size() : cap - 1;
  std::memcpy(field, value.data(), n);
  std::memset(field + n, 0, cap - n);
}

// Actor rows change under the setup lock only; the version+state word lets readers
// skip a row being changed.
void begin_change(std::uint32_t& lock) {
  std::uint32_t v = load_relaxed(lock);
  store_relaxed(lock, (v & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
}
void end_change(std::uint32_t& lock, std::uint32_t state) {
  std::uint32_t v = load_relaxed(lock);
  store_release(lock, ((v & ~kStateMask) + kVersionInc) | state);
}

bool actor_matches(const actor_record& a, std::string_view user, std::string_view host, std::string_view role,
                   int& score) {
  auto u = field_view(a.user, kUserLen), h = field_view(a.host, kHostLen), r = field_view(a.role, kUserLen);
  if (u != "%" && u != user) return false;
  if (h != "%" && h != host) return false;
  if (r != "%" && r != role) return false;
  score = (u != "%" ? 4 : 0) + (h != "%" ? 2 : 0) + (r != "%" ? 1 : 0);
  return true;
}

actor_record* find_actor(const region_map& region, std::string_view host, std::string_view user,
                         std::string_view role) {
  auto* actors = region.array<actor_record>(kArraySetupActors);
  for (std::uint64_t i = 0; i < region.count(kArraySetupActors); ++i) {
    actor_record& a = actors[i];
    if ((load_relaxed(a.lock) & kStateMask) != kStateAllocated) continue;
    if (field_view(a.host, kHostLen) == host && field_view(a.user, kUserLen) == user &&
        field_view(a.role, kUserLen) == role)
      return &a;
  }
  return nullptr;
}

object_record* find_object(const region_map& region, std::string_view schema, std::string_view name) {
  auto* objects = region.array<object_record>(kArraySetupObjects);
  for (std::uint64_t i = 0; i < region.count(kArraySetupObjects); ++i) {
    object_record& o = objects[i];
    if ((load_relaxed(o.lock) & kStateMask) != kStateAllocated) continue;
    if (field_view(o.schema, kObjectSchemaLen) == schema && field_view(o.name, kTableNameLen) == name)
      return &o;
  }
  return nullptr;
}

// Table names are immutable once a share is allocated; only the flags change.
void recompute_tables(const region_map& region) {
  auto* tables = region.array<table_share>(kArrayTables);
  for (std::uint64_t i = 0; i < region.count(kArrayTables); ++i) {
    table_share& t = tables[i];
    if ((load_acquire(t.lock) & kStateMask) != kStateAllocated) continue;
    store_relaxed(t.derived, table_derived(region, field_view(t.schema, kObjectSchemaLen),
                                           field_view(t.name, kTableNameLen)));
  }
}

}  // namespace

std::string_view consumer_name(std::uint32_t id) { return id < kConsumerCount ? kConsumerNames[id] : ""; }

int consumer_from_name(std::string_view name) {
  for (std::uint32_t i = 0; i < kConsumerCount; ++i)
    if (kConsumerNames[i] == name) return static_cast<int>(i);
  return -1;
}

std::uint8_t class_derived(const region_header& h, std::uint8_t flags) {
  if (!consumer_on(h, kConsumerGlobalInstrumentation) || (flags & kFlagEnabled) == 0) return 0;
  std::uint8_t d = flags & (kFlagEnabled | kFlagTimed | kFlagTraced);
  // Each summary consumer feeds its own table (WL#2360: a consumer turned off
  // freezes its table): the instances, and the threads' global statistics.
  if (consumer_on(h, kConsumerWaitsSummaryByInstance)) d |= kFlagInstanceStats;
  if (consumer_on(h, kConsumerWaitsSummaryByEventName)) d |= kFlagEventNameStats;
  return d;
}

std::uint8_t thread_derived(const region_map& region, const thread_record& t) {
  const region_header& h = region.header();
  if (!consumer_on(h, kConsumerGlobalInstrumentation) || !consumer_on(h, kConsumerThreadInstrumentation) ||
      load_relaxed(t.instrumented) == 0)
    return 0;
  std::uint8_t d = kThreadEnabled;
  if (consumer_on(h, kConsumerWaitsSummaryByThreadByEventName)) d |= kThreadSummary;
  // Background threads have no actor: the rows matching any user and host apply.
  char user[kUserLen], host[kHostLen], role[kUserLen];
  for (std::size_t i = 0; i < kUserLen; ++i)
    user[i] = load_relaxed(t.user[i]), role[i] = load_relaxed(t.role[i]);
  for (std::size_t i = 0; i < kHostLen; ++i) host[i] = load_relaxed(t.host[i]);
  user[kUserLen - 1] = role[kUserLen - 1] = host[kHostLen - 1] = '\0';
  if (match_actor(region, user, host, role).trace) d |= kThreadTraced;
  if (consumer_on(h, kConsumerWaitsCurrent)) {
    d |= kThreadCurrent;
    if (load_relaxed(t.history) != 0) {
      if (consumer_on(h, kConsumerWaitsHistory)) d |= kThreadHistory;
      if (consumer_on(h, kConsumerWaitsHistoryLong)) d |= kThreadHistoryLong;
    }
  }
  return d;
}

std::uint32_t work_derived(const region_map& region, const thread_record& t) {
  const region_header& h = region.header();
  std::uint32_t d =
      consumer_on(h, kConsumerGlobalInstrumentation) && consumer_on(h, kConsumerStatementsDigest)
          ? kWorkDigest
          : 0;
  if (!consumer_on(h, kConsumerGlobalInstrumentation) || !consumer_on(h, kConsumerThreadInstrumentation) ||
      load_relaxed(t.instrumented) == 0)
    return d;
  d |= kWorkEnabled;
  const bool history = load_relaxed(t.history) != 0;
  // MySQL's hierarchy: _history and _history_long need _current; both need the
  // thread's HISTORY.
  const struct {
    consumer_id current, hist, hist_long;
    std::uint32_t flag_current, flag_hist, flag_long;
  } kinds[] = {
      {kConsumerStagesCurrent, kConsumerStagesHistory, kConsumerStagesHistoryLong, kWorkStagesCurrent,
       kWorkStagesHistory, kWorkStagesHistoryLong},
      {kConsumerStatementsCurrent, kConsumerStatementsHistory, kConsumerStatementsHistoryLong,
       kWorkStatementsCurrent, kWorkStatementsHistory, kWorkStatementsHistoryLong},
      {kConsumerTransactionsCurrent, kConsumerTransactionsHistory, kConsumerTransactionsHistoryLong,
       kWorkTransactionsCurrent, kWorkTransactionsHistory, kWorkTransactionsHistoryLong},
  };
  for (const auto& k : kinds) {
    if (!consumer_on(h, k.current)) continue;
    d |= k.flag_current;
    if (history && consumer_on(h, k.hist)) d |= k.flag_hist;
    if (history && consumer_on(h, k.hist_long)) d |= k.flag_long;
  }
  if (consumer_on(h, kConsumerStatementsCpu)) d |= kWorkStatementsCpu;
  return d;
}

void recompute_derived(const region_map& region) {
  region_header& h = region.header();
  auto* classes = region.array<class_record>(kArrayClasses);
  for (std::uint64_t i = 0; i < region.count(kArrayClasses); ++i) {
    class_record& c = classes[i];
    if ((load_acquire(c.lock) & kStateMask) != kStateAllocated) continue;
    store_relaxed(c.derived, class_derived(h, load_relaxed(c.flags)));
  }
  auto* threads = region.array<thread_record>(kArrayThreads);
  for (std::uint64_t i = 0; i < region.count(kArrayThreads); ++i) {
    thread_record& t = threads[i];
    if ((load_acquire(t.lock) & kStateMask) != kStateAllocated) continue;
    store_relaxed(t.derived, thread_derived(region, t));
    store_relaxed(t.work_derived, work_derived(region, t));
  }
  recompute_tables(region);
  bump_generation(region);
}

bool set_instrument(const region_map& region, std::uint32_t class_index, int enabled, int timed, int trace) {
  if (class_index == 0 || class_index > region.count(kArrayClasses)) return false;
  class_record& c = region.array<class_record>(kArrayClasses)[class_index - 1];
  std::uint8_t flags = load_relaxed(c.flags);
  if (enabled >= 0) flags = static_cast<std::uint8_t>(enabled ? flags | kFlagEnabled : flags & ~kFlagEnabled);
  if (timed >= 0) flags = static_cast<std::uint8_t>(timed ? flags | kFlagTimed : flags & ~kFlagTimed);
  if (trace >= 0) flags = static_cast<std::uint8_t>(trace ? flags | kFlagTraced : flags & ~kFlagTraced);
  if (never_timed(load_relaxed(c.kind)))
    flags = static_cast<std::uint8_t>(flags & ~kFlagTimed);  // never timed
  // Disabling an instrument also ends its tracing; tracing needs it enabled.
  if (enabled == 0) flags = static_cast<std::uint8_t>(flags & ~kFlagTraced);
  if ((flags & kFlagTraced) && !(flags & kFlagEnabled)) return false;
  store_relaxed(c.flags, flags);
  store_relaxed(c.derived, class_derived(region.header(), flags));
  bump_generation(region);
  return true;
}

void set_consumer(const region_map& region, std::uint32_t consumer, bool enabled) {
  if (consumer >= kConsumerCount) return;
  store_relaxed(region.header().consumers[consumer], static_cast<std::uint8_t>(enabled ? 1 : 0));
  recompute_derived(region);
}

bool set_wait_timer(const region_map& region, timers::timer_kind kind) {
  return set_timer(region, kTimerWait, kind);
}

std::uint8_t* timer_field(region_header& h, timer_row row) {
  switch (row) {
    case kTimerIdle:
      return &h.idle_timer;
    case kTimerWait:
      return &h.wait_timer;
    case kTimerStage:
      return &h.stage_timer;
    case kTimerStatement:
      return &h.statement_timer;
    case kTimerTransaction:
      return &h.transaction_timer;
    default:
      return nullptr;
  }
}

std::string_view timer_row_name(timer_row row) {
  constexpr std::string_view kNames[kTimerRows] = {"idle", "wait", "stage", "statement", "transaction"};
  return row < kTimerRows ? kNames[row] : "";
}

int timer_row_from_name(std::string_view name) {
  for (std::uint32_t r = 0; r < kTimerRows; ++r)
    if (timer_row_name(static_cast<timer_row>(r)) == name) return static_cast<int>(r);
  return -1;
}

bool set_timer(const region_map& region, timer_row row, timers::timer_kind kind) {
  const auto k = static_cast<std::uint32_t>(kind);
  region_header& h = region.header();
  std::uint8_t* field = timer_field(h, row);
  if (field == nullptr || k == 0 || k >= 8 || load_relaxed(h.timers[k].available) == 0) return false;
  store_relaxed(*field, static_cast<std::uint8_t>(k));
  bump_generation(region);
  return true;
}

bool set_thread(const region_map& region, std::uint64_t thread_id, int instrumented, int history) {
  auto* threads = region.array<thread_record>(kArrayThreads);
  for (std::uint64_t i = 0; i < region.count(kArrayThreads); ++i) {
    thread_record& t = threads[i];
    if ((load_acquire(t.lock) & kStateMask) != kStateAllocated || load_relaxed(t.thread_id) != thread_id)
      continue;
    if (instrumented >= 0) store_relaxed(t.instrumented, static_cast<std::uint8_t>(instrumented ? 1 : 0));
    if (history >= 0) store_relaxed(t.history, static_cast<std::uint8_t>(history ? 1 : 0));
    store_relaxed(t.derived, thread_derived(region, t));
    store_relaxed(t.work_derived, work_derived(region, t));
    bump_generation(region);
    return true;
  }
  return false;
}

actor_match match_actor(const region_map& region, std::string_view user, std::string_view host,
                        std::string_view role) {
  actor_match best;
  int best_score = -1;
  const auto* actors = region.array<actor_record>(kArraySetupActors);
  for (std::uint64_t i = 0; i < region.count(kArraySetupActors); ++i) {
    const actor_record& a = actors[i];
    if ((load_acquire(a.lock) & kStateMask) != kStateAllocated) continue;
    int score = 0;
    if (actor_matches(a, user, host, role, score) && score > best_score) {
      best_score = score;
      best = {true, load_relaxed(a.enabled) != 0, load_relaxed(a.history) != 0,
              load_relaxed(a.trace_enabled) != 0, static_cast<std::int64_t>(i)};
    }
  }
  return best;
}

actor_result insert_actor(const region_map& region, std::string_view host, std::string_view user,
                          std::string_view role, bool enabled, bool history, bool trace) {
  if (host.empty() || user.empty() || role.empty() || host.size() >= kHostLen || user.size() >= kUserLen ||
      role.size() >= kUserLen)
    return actor_result::too_long;
  if (find_actor(region, host, user, role) != nullptr) return actor_result::duplicate;
  auto* actors = region.array<actor_record>(kArraySetupActors);
  for (std::uint64_t i = 0; i < region.count(kArraySetupActors); ++i) {
    actor_record& a = actors[i];
    if ((load_relaxed(a.lock) & kStateMask) != kStateFree) continue;
    begin_change(a.lock);
    set_field(a.host, kHostLen, host);
    set_field(a.user, kUserLen, user);
    set_field(a.role, kUserLen, role);
    store_relaxed(a.enabled, static_cast<std::uint8_t>(enabled));
    store_relaxed(a.history, static_cast<std::uint8_t>(history));
    store_relaxed(a.trace_enabled, static_cast<std::uint8_t>(trace));
    end_change(a.lock, kStateAllocated);
    recompute_derived(region);  // tracing follows actor rows for running threads
    return actor_result::ok;
  }
  return actor_result::full;
}

actor_result delete_actor(const region_map& region, std::string_view host, std::string_view user,
                          std::string_view role) {
  actor_record* a = find_actor(region, host, user, role);
  if (a == nullptr) return actor_result::not_found;
  begin_change(a->lock);
  end_change(a->lock, kStateFree);
  recompute_derived(region);
  return actor_result::ok;
}

actor_result update_actor(const region_map& region, std::string_view host, std::string_view user,
                          std::string_view role, int enabled, int history, int trace) {
  actor_record* a = find_actor(region, host, user, role);
  if (a == nullptr) return actor_result::not_found;
  begin_change(a->lock);
  if (enabled >= 0) store_relaxed(a->enabled, static_cast<std::uint8_t>(enabled ? 1 : 0));
  if (history >= 0) store_relaxed(a->history, static_cast<std::uint8_t>(history ? 1 : 0));
  if (trace >= 0) store_relaxed(a->trace_enabled, static_cast<std::uint8_t>(trace ? 1 : 0));
  end_change(a->lock, kStateAllocated);
  recompute_derived(region);
  return actor_result::ok;
}

// Frees every allocated row of a setup array (TRUNCATE of setup_actors/_objects).
template <class Rec>
void free_all(const region_map& region, array_id id) {
  Rec* rows = region.array<Rec>(id);
  for (std::uint64_t i = 0; i < region.count(id); ++i) {
    Rec& r = rows[i];
    if ((load_relaxed(r.lock) & kStateMask) == kStateFree) continue;
    begin_change(r.lock);
    end_change(r.lock, kStateFree);
  }
}

void truncate_actors(const region_map& region) {
  free_all<actor_record>(region, kArraySetupActors);
  recompute_derived(region);
}

object_match match_object(const region_map& region, std::string_view schema, std::string_view name) {
  object_match best;
  int best_score = -1;
  const auto* objects = region.array<object_record>(kArraySetupObjects);
  for (std::uint64_t i = 0; i < region.count(kArraySetupObjects); ++i) {
    const object_record& o = objects[i];
    if ((load_acquire(o.lock) & kStateMask) != kStateAllocated) continue;
    auto os = field_view(o.schema, kObjectSchemaLen), on = field_view(o.name, kTableNameLen);
    if ((os != "%" && os != schema) || (on != "%" && on != name)) continue;
    const int score = (os != "%" ? 2 : 0) + (on != "%" ? 1 : 0);
    if (score > best_score) {
      best_score = score;
      best = {true, load_relaxed(o.enabled) != 0, load_relaxed(o.timed) != 0};
    }
  }
  return best;
}

std::uint8_t table_derived(const region_map& region, std::string_view schema, std::string_view name) {
  const object_match m = match_object(region, schema, name);
  if (!m.found || !m.enabled) return 0;
  return static_cast<std::uint8_t>(kFlagEnabled | (m.timed ? kFlagTimed : 0));
}

actor_result insert_object(const region_map& region, std::string_view schema, std::string_view name,
                           bool enabled, bool timed) {
  if (schema.empty() || name.empty() || schema.size() >= kObjectSchemaLen || name.size() >= kTableNameLen)
    return actor_result::too_long;
  if (find_object(region, schema, name) != nullptr) return actor_result::duplicate;
  auto* objects = region.array<object_record>(kArraySetupObjects);
  for (std::uint64_t i = 0; i < region.count(kArraySetupObjects); ++i) {
    object_record& o = objects[i];
    if ((load_relaxed(o.lock) & kStateMask) != kStateFree) continue;
    begin_change(o.lock);
    store_relaxed(o.object_type, kSetupObjectTable);
    set_field(o.schema, kObjectSchemaLen, schema);
    set_field(o.name, kTableNameLen, name);
    store_relaxed(o.enabled, static_cast<std::uint8_t>(enabled));
    store_relaxed(o.timed, static_cast<std::uint8_t>(timed));
    end_change(o.lock, kStateAllocated);
    recompute_tables(region);
    bump_generation(region);
    return actor_result::ok;
  }
  return actor_result::full;
}

actor_result delete_object(const region_map& region, std::string_view schema, std::string_view name) {
  object_record* o = find_object(region, schema, name);
  if (o == nullptr) return actor_result::not_found;
  begin_change(o->lock);
  end_change(o->lock, kStateFree);
  recompute_tables(region);
  bump_generation(region);
  return actor_result::ok;
}

actor_result update_object(const region_map& region, std::string_view schema, std::string_view name,
                           int enabled, int timed) {
  object_record* o = find_object(region, schema, name);
  if (o == nullptr) return actor_result::not_found;
  begin_change(o->lock);
  if (enabled >= 0) store_relaxed(o->enabled, static_cast<std::uint8_t>(enabled ? 1 : 0));
  if (timed >= 0) store_relaxed(o->timed, static_cast<std::uint8_t>(timed ? 1 : 0));
  end_change(o->lock, kStateAllocated);
  recompute_tables(region);
  bump_generation(region);
  return actor_result::ok;
}

void truncate_objects(const region_map& region) {
  free_all<object_record>(region, kArraySetupObjects);
  recompute_tables(region);
  bump_generation(region);
}

void insert_default_objects(const region_map& region) {
  for (const char* schema : {"mysql", "performance_schema", "information_schema"})
    insert_object(region, schema, "%", false, false);
  insert_object(region, "%", "%", true, true);
}

void truncate_events(const region_map& region, truncate_table table) {
  region_header& h = region.header();
  store_release(h.horizon_thread_id[table], load_relaxed(h.next_thread_id));
  auto* threads = region.array<thread_record>(kArrayThreads);
  for (std::uint64_t i = 0; i < region.count(kArrayThreads); ++i) {
    thread_record& t = threads[i];
    if ((load_acquire(t.lock) & kStateMask) != kStateAllocated) continue;
    // The thread's next EVENT_ID: everything it recorded so far is behind.
    store_release(t.horizon[table], load_relaxed(t.event_id));
  }
  bump_generation(region);
}

namespace {

void zero(wait_stat& s) { zero_record(s); }

void zero(io_stat& s) {
  store_relaxed(s.count, std::uint64_t{0});
  zero_sum(s.sum, s.sum_hi);
  store_relaxed(s.min, UINT64_MAX);
  store_relaxed(s.max, std::uint64_t{0});
  store_relaxed(s.bytes, std::uint64_t{0});
}

void zero(table_io_stat& s) {
  zero(s.fetch);
  zero(s.insert);
  zero(s.update);
  zero(s.del);
}

template <class F>
void each_allocated_sync(const region_map& region, F&& f) {
  for (array_id id : {kArrayMutexes, kArrayRwlocks, kArrayConds, kArraySems}) {
    auto* s = region.array<sync_instance>(id);
    for (std::uint64_t i = 0; i < region.count(id); ++i)
      if ((load_acquire(s[i].lock) & kStateMask) == kStateAllocated) f(s[i]);
  }
}

}  // namespace

void reset_file_summaries(const region_map& region) {
  auto* files = region.array<file_instance>(kArrayFiles);
  for (std::uint64_t i = 0; i < region.count(kArrayFiles); ++i) {
    zero(files[i].stats.read);
    zero(files[i].stats.write);
    zero(files[i].stats.misc);
  }
  auto* buckets = region.array<io_stats>(kArrayClassIo);
  auto* classes = region.array<class_record>(kArrayClasses);
  for (std::uint64_t i = 0; i < region.count(kArrayClassIo); ++i) {
    // Socket classes keep their bucket (same array, reset_socket_summaries).
    if (i < region.count(kArrayClasses) && load_relaxed(classes[i].kind) == kKindSocket) continue;
    zero(buckets[i].read);
    zero(buckets[i].write);
    zero(buckets[i].misc);
  }
  bump_generation(region);
}

// The class buckets of closed sockets share kArrayClassIo with the file classes:
// only the socket classes' entries are zeroed here.
void reset_socket_summaries(const region_map& region) {
  auto* sockets = region.array<socket_instance>(kArraySockets);
  for (std::uint64_t i = 0; i < region.count(kArraySockets); ++i) {
    zero(sockets[i].stats.read);
    zero(sockets[i].stats.write);
    zero(sockets[i].stats.misc);
  }
  auto* buckets = region.array<io_stats>(kArrayClassIo);
  auto* classes = region.array<class_record>(kArrayClasses);
  const std::uint64_t n = std::min(region.count(kArrayClassIo), region.count(kArrayClasses));
  for (std::uint64_t i = 0; i < n; ++i) {
    if (load_relaxed(classes[i].kind) != kKindSocket) continue;
    zero(buckets[i].read);
    zero(buckets[i].write);
    zero(buckets[i].misc);
  }
  bump_generation(region);
}

void reset_wait_summaries(const region_map& region) {
  each_allocated_sync(region, [](sync_instance& s) { zero(s.stat); });
  auto* classes = region.array<class_record>(kArrayClasses);
  for (std::uint64_t i = 0; i < region.count(kArrayClasses); ++i) zero(classes[i].stat);
  // The global rows' own statistics (per thread), and the files' rows by instance.
  for (array_id id : {kArrayThreadGlobalStats, kArrayFileWaitStats, kArraySocketWaitStats}) {
    auto* stats = region.array<wait_stat>(id);
    for (std::uint64_t i = 0; i < region.count(id); ++i) zero(stats[i]);
  }
  // And the latency distributions its quantile columns come from.
  reset_wait_histograms(region);
  // As MySQL: the global summary also resets what feeds its file and table rows.
  reset_file_summaries(region);
  reset_socket_summaries(region);
  reset_table_summaries(region);
  reset_table_lock_summaries(region);
}

void reset_thread_summaries(const region_map& region) {
  // The global rows keep their own statistics: nothing to fold into them; the
  // accounts, users and hosts get what the threads had (MySQL moves it there).
  fold_threads_into_holders(region, kFamilyWaits);
  auto* stats = region.array<wait_stat>(kArrayThreadClassStats);
  for (std::uint64_t i = 0; i < region.count(kArrayThreadClassStats); ++i) zero(stats[i]);
  bump_generation(region);
}

namespace {
void zero(statement_stat& s) { zero_record(s); }
void zero(transaction_stat& s) { zero_record(s); }
void zero(latency_histogram& h) {
  for (std::uint64_t& c : h.counts) store_relaxed(c, std::uint64_t{0});
}
void zero(wait_histogram& h) {
  for (std::uint64_t& c : h.counts) store_relaxed(c, std::uint64_t{0});
}
template <class T>
void zero_array(const region_map& region, array_id id) {
  auto* a = region.array<T>(id);
  for (std::uint64_t i = 0; i < region.count(id); ++i) zero(a[i]);
}
}  // namespace

namespace {
template <class S>
void fold(S& into, const S& s) {
  add_atomic_stat(into, s);
}
// Folds every thread's statistics (per_thread of them per thread slot) into the
// class buckets, then zeroes the threads'.
template <class S>
void fold_threads(const region_map& region, array_id threads_id, array_id classes_id) {
  auto* t = region.array<S>(threads_id);
  auto* c = region.array<S>(classes_id);
  const std::uint64_t per = region.count(classes_id);
  const auto* threads = region.array<thread_record>(kArrayThreads);
  if (t == nullptr || c == nullptr || per == 0 || threads == nullptr) return;
  for (std::uint64_t i = 0; i < region.count(threads_id); ++i) {
    // Free slots hold nothing: an exiting thread moved its statistics already.
    const std::uint64_t slot = i / per;
    if (slot >= region.count(kArrayThreads) ||
        (load_acquire(threads[slot].lock) & kStateMask) != kStateAllocated)
      continue;
    fold(c[i % per], t[i]);
    zero(t[i]);
  }
}
}  // namespace

void reset_stage_summaries(const region_map& region, bool by_thread) {
  if (by_thread) {
    fold_threads_into_holders(region, kFamilyStages);
    fold_threads<wait_stat>(region, kArrayThreadStageStats, kArrayClassStageStats);
  } else {
    zero_array<wait_stat>(region, kArrayThreadStageStats);
    zero_array<wait_stat>(region, kArrayClassStageStats);
    zero_holder_summaries(region, kFamilyStages);
  }
  bump_generation(region);
}

void reset_statement_summaries(const region_map& region, bool by_thread) {
  if (by_thread) {
    fold_threads_into_holders(region, kFamilyStatements);
    fold_threads<statement_stat>(region, kArrayThreadStatementStats, kArrayClassStatementStats);
  } else {
    zero_array<statement_stat>(region, kArrayThreadStatementStats);
    zero_array<statement_stat>(region, kArrayClassStatementStats);
    zero_holder_summaries(region, kFamilyStatements);
  }
  bump_generation(region);
}

void reset_transaction_summaries(const region_map& region, bool by_thread) {
  if (by_thread) {
    fold_threads_into_holders(region, kFamilyTransactions);
    fold_threads<transaction_stat>(region, kArrayThreadTransactionStats, kArrayClassTransactionStats);
  } else {
    zero_array<transaction_stat>(region, kArrayThreadTransactionStats);
    zero_array<transaction_stat>(region, kArrayClassTransactionStats);
    zero_holder_summaries(region, kFamilyTransactions);
  }
  bump_generation(region);
}

void reset_digest_histograms(const region_map& region) {
  auto* d = region.array<digest_record>(kArrayDigests);
  for (std::uint64_t i = 0; i < region.count(kArrayDigests); ++i) zero(d[i].h);
  bump_generation(region);
}

// The pool holds the threads' wait histograms and their statement histograms.
static void zero_pool(const region_map& region, bool statements) {
  auto* pool = region.array<thread_histogram>(kArrayWaitHistograms);
  for (std::uint64_t i = 0; i < region.count(kArrayWaitHistograms); ++i)
    if ((load_relaxed(pool[i].class_index) == kStatementHistogramClass) == statements) zero(pool[i].h);
}

void reset_statement_histogram(const region_map& region) {
  zero_array<latency_histogram>(region, kArrayStatementHistogram);
  zero_pool(region, true);
  bump_generation(region);
}

void reset_wait_histograms(const region_map& region) {
  zero_pool(region, false);
  zero_array<wait_histogram>(region, kArrayClassWaitHistograms);
  bump_generation(region);
}

void reset_lock_contention(const region_map& region) {
  // Every entry freed: hidden first (a waiter compares the incarnation before it
  // adds), then free for the next contended wait to claim (a claim starts its
  // counts). A waiter adding to an entry as it is freed loses that wait (the usual
  // reset race).
  auto* e = region.array<contention_record>(kArrayLockContention);
  for (std::uint64_t i = 0; i < region.count(kArrayLockContention); ++i) {
    store_release(e[i].incarnation, 0u);
    store_release(e[i].key, std::uint64_t{0});
  }
  bump_generation(region);
}

void reset_digests(const region_map& region) {
  // MySQL's TRUNCATE of the digest table empties it: the rows are freed and
  // claimed again by the next statements. A provider updating a row while it is
  // freed adds to a row that no longer shows (the usual reset race).
  auto* d = region.array<digest_record>(kArrayDigests);
  for (std::uint64_t i = 0; i < region.count(kArrayDigests); ++i) {
    digest_record& r = d[i];
    begin_change(r.lock);
    zero(r.stat);
    zero(r.h);
    store_relaxed(r.first_seen_ns, std::uint64_t{0});
    store_relaxed(r.last_seen_ns, std::uint64_t{0});
    store_relaxed(r.sample_timer_wait, std::uint64_t{0});
    store_relaxed(r.sample_seen_ns, std::uint64_t{0});
    end_change(r.lock, kStateFree);
    // Only now may a provider claim the row again (a claim re-initializes it).
    store_release(r.key, std::uint64_t{0});
  }
  __atomic_fetch_add(&region.header().digest_generation, 1, __ATOMIC_RELEASE);
  bump_generation(region);
}

void reset_table_summaries(const region_map& region) {
  auto* tables = region.array<table_share>(kArrayTables);
  for (std::uint64_t i = 0; i < region.count(kArrayTables); ++i) zero(tables[i].no_index);
  auto* indexes = region.array<index_stat>(kArrayTableIndexes);
  for (std::uint64_t i = 0; i < region.count(kArrayTableIndexes); ++i) zero(indexes[i].stat);
  bump_generation(region);
}

// The lock waits of every share by kind; each share keeps its lock class.
void reset_table_lock_summaries(const region_map& region) {
  auto* locks = region.array<table_lock_stat>(kArrayTableLockStats);
  for (std::uint64_t i = 0; i < region.count(kArrayTableLockStats); ++i)
    for (wait_stat& s : locks[i].kinds) zero(s);
  bump_generation(region);
}

}  // namespace pfs::setup
