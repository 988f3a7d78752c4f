// The event path: start and end of mutex, rwlock and condition waits.
//
// Rules (MySQL's pfs.cc design principles): no lock, no allocation, no system call
// but the timer; every record written here has one writer (this thread, or the
// thread that holds the instrumented lock); readers are never waited for.
// Settings are read once at the start of a wait and kept in the locker, so a wait
// in flight finishes under the settings it started with.
#include <atomic>

#include "agent/agent_internal.h"

namespace pfs::detail {

void stop_in_forked_child();

namespace {

static_assert(sizeof(wait_locker) <= sizeof(pfs_wait_locker), "pfs_wait_locker is too small");
static_assert(alignof(wait_locker) <= alignof(pfs_wait_locker));

wait_locker& as_locker(pfs_wait_locker* l) { return *reinterpret_cast<wait_locker*>(l); }

// Seqlock write of a whole event record: odd, fields, even.
void publish(wait_record& dst, const wait_record& e) {
  const std::uint32_t seq = load_relaxed(dst.seq) | 1u;
  store_relaxed(dst.seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  store_relaxed(dst.state, e.state);
  store_relaxed(dst.timer, e.timer);
  store_relaxed(dst.operation, e.operation);
  store_relaxed(dst.nesting_type, e.nesting_type);
  store_relaxed(dst.class_index, e.class_index);
  store_relaxed(dst.source_index, e.source_index);
  store_relaxed(dst.thread_id, e.thread_id);
  store_relaxed(dst.event_id, e.event_id);
  store_relaxed(dst.end_event_id, e.end_event_id);
  store_relaxed(dst.nesting_event_id, e.nesting_event_id);
  store_relaxed(dst.timer_start, e.timer_start);
  store_relaxed(dst.timer_end, e.timer_end);
  store_relaxed(dst.object_instance_begin, e.object_instance_begin);
  store_relaxed(dst.number_of_bytes, e.number_of_bytes);
  store_relaxed(dst.object_kind, e.object_kind);
  store_relaxed(dst.object_index, e.object_index);
  store_relaxed(dst.object_version, e.object_version);
  store_relaxed(dst.index_number, e.index_number);
  store_relaxed(dst.flags, e.flags);
  store_release(dst.seq, seq + 1);
}

// The end of an event already published at its start: only these fields change.
void publish_end(wait_record& dst, const wait_record& e) {
  const std::uint32_t seq = load_relaxed(dst.seq) | 1u;
  store_relaxed(dst.seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  store_relaxed(dst.state, e.state);
  store_relaxed(dst.end_event_id, e.end_event_id);
  store_relaxed(dst.timer_end, e.timer_end);
  store_relaxed(dst.number_of_bytes, e.number_of_bytes);
  store_release(dst.seq, seq + 1);
}

void clear(wait_record& dst) {
  const std::uint32_t seq = load_relaxed(dst.seq) | 1u;
  store_relaxed(dst.seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  store_relaxed(dst.state, kWaitEmpty);
  store_release(dst.seq, seq + 1);
}

// Statistics with a single writer: plain load and store (atomic, so readers in
// other threads or processes see whole values).
inline void aggregate_single(wait_stat& s, bool timed, std::uint64_t ps) {
  store_relaxed(s.count, load_relaxed(s.count) + 1);
  if (!timed) return;
  store_relaxed(s.sum, load_relaxed(s.sum) + ps);
  if (ps < load_relaxed(s.min)) store_relaxed(s.min, ps);
  if (ps > load_relaxed(s.max)) store_relaxed(s.max, ps);
}

// Statistics that concurrent holders update (rwlock read locks, conditions).
inline void aggregate_shared(wait_stat& s, bool timed, std::uint64_t ps) {
  __atomic_fetch_add(&s.count, 1, __ATOMIC_RELAXED);
  if (!timed) return;
  __atomic_fetch_add(&s.sum, ps, __ATOMIC_RELAXED);
  atomic_min(s.min, ps);
  atomic_max(s.max, ps);
}

bool claim_batch(agent_state& a, thread_context& t) {
  if (t.has_batch) store_release(a.batches[t.batch].owner, std::uint64_t{0});
  t.has_batch = false;
  // A few tries: a batch still being filled by a slow thread is skipped.
  for (int attempt = 0; attempt < 4; ++attempt) {
    const std::uint64_t b = __atomic_fetch_add(&a.header->history_long_next_batch, 1, __ATOMIC_RELAXED) % a.batch_count;
    std::uint64_t expected = 0;
    if (__atomic_compare_exchange_n(&a.batches[b].owner, &expected, t.thread_id, false, __ATOMIC_ACQUIRE,
                                    __ATOMIC_RELAXED)) {
      t.batch = b;
      t.batch_next = static_cast<std::uint32_t>(b * a.history_long_batch);
      const std::uint64_t end = (b + 1) * a.history_long_batch;
      t.batch_end = static_cast<std::uint32_t>(end < a.history_long_size ? end : a.history_long_size);
      t.has_batch = true;
      return true;
    }
  }
  return false;
}

inline void append_history_long(agent_state& a, thread_context& t, const wait_record& e) {
  if (a.history_long_size == 0) return;
  if ((!t.has_batch || t.batch_next == t.batch_end) && !claim_batch(a, t)) return;
  publish(a.history_long[t.batch_next++], e);
}

// Common start of every wait. Returns 1 when the end must be called.
int start_wait(wait_locker& l, sync_instance* s, instrument_kind kind, int op, const char* file, unsigned line) {
  agent_state* a = g_agent;
  if (s == nullptr || a == nullptr || !agent_running()) return 0;
  const std::uint32_t key = load_relaxed(s->class_index);
  const std::uint8_t cflags = load_relaxed(a->classes[key - 1].derived);
  if ((cflags & kFlagEnabled) == 0) return 0;
  thread_context* t = current_thread();
  const std::uint8_t tflags = load_relaxed(t->rec->derived);
  l.thread = t;
  l.instance = s;
  l.cond_mutex = nullptr;
  l.class_flags = cflags;
  l.thread_flags = tflags;
  l.kind = kind;
  l.recorded = 0;
  wait_record& e = l.event;
  e.timer = 0;
  e.timer_start = 0;
  if (cflags & kFlagTimed) {
    e.timer = load_relaxed(a->header->wait_timer);
    e.timer_start = timers::read(static_cast<timers::timer_kind>(e.timer));
  }
  e.class_index = key;
  if (tflags & kThreadCurrent) {
    if (t->depth >= a->stack_depth) {
      bump_lost(kLostLocker);
      return 1;
    }
    e.state = kWaitRunning;
    e.operation = static_cast<std::uint8_t>(op);
    e.source_index = intern_source(file, line);
    e.thread_id = t->thread_id;
    e.event_id = t->next_event_id++;
    e.end_event_id = 0;
    if (t->depth > 0) {
      e.nesting_event_id = load_relaxed(t->stack[t->depth - 1].event_id);
      e.nesting_type = kNestingWait;
    } else {
      e.nesting_event_id = 0;
      e.nesting_type = kNestingNone;
    }
    e.timer_end = 0;
    e.object_instance_begin = load_relaxed(s->identity);
    e.number_of_bytes = -1;
    e.object_kind = kObjectNone;
    e.object_index = 0;
    e.object_version = 0;
    e.index_number = 0;
    e.flags = 0;
    publish(t->stack[t->depth], e);
    ++t->depth;
    store_relaxed(t->rec->stack_depth, t->depth);
    store_relaxed(t->rec->event_id, t->next_event_id);
    l.recorded = 1;
  }
  return 1;
}

void end_wait(wait_locker& l, bool shared_stats) {
  agent_state& a = *g_agent;
  thread_context& t = *l.thread;
  wait_record& e = l.event;
  std::uint64_t ps = 0;
  const bool timed = e.timer != 0;
  if (timed) {
    e.timer_end = timers::read(static_cast<timers::timer_kind>(e.timer));
    // A timer that went backwards (THREAD_CPU after migration, a bad TSC) gives 0,
    // never a huge unsigned difference.
    if (e.timer_end > e.timer_start) ps = a.converters[e.timer].delta_to_pico(e.timer_end - e.timer_start);
  }
  if (l.class_flags & kFlagInstanceStats) {
    if (shared_stats)
      aggregate_shared(l.instance->stat, timed, ps);
    else
      aggregate_single(l.instance->stat, timed, ps);
  }
  if (l.thread_flags & kThreadSummary) aggregate_single(t.class_stats[e.class_index - 1], timed, ps);
  if (!l.recorded) return;

  const std::uint32_t depth = t.depth - 1;
  e.state = kWaitCompleted;
  e.end_event_id = t.next_event_id;
  publish_end(t.stack[depth], e);
  // Only the latest completed wait stays visible above the running ones.
  if (depth + 1 < a.stack_depth && load_relaxed(t.stack[depth + 1].state) != kWaitEmpty) clear(t.stack[depth + 1]);
  t.depth = depth;
  store_relaxed(t.rec->stack_depth, depth);
  if ((l.thread_flags & kThreadHistory) && a.history_size != 0) {
    publish(t.history[t.history_index % a.history_size], e);
    ++t.history_index;
    store_relaxed(t.rec->history_index, t.history_index);
  }
  if (l.thread_flags & kThreadHistoryLong) append_history_long(a, t, e);
}

}  // namespace
}  // namespace pfs::detail

using namespace pfs::detail;
using pfs::layout::store_relaxed;

extern "C" {

int pfs_start_mutex_wait(pfs_wait_locker* locker, pfs_sync* m, int op, const char* file, unsigned line) {
  return start_wait(as_locker(locker), reinterpret_cast<sync_instance*>(m), kKindMutex, op, file, line);
}

void pfs_end_mutex_wait(pfs_wait_locker* locker, int rc) {
  wait_locker& l = as_locker(locker);
  // The thread holds the mutex now: it is the only writer of its statistics.
  if (rc == 0) store_relaxed(l.instance->owner_thread_id, l.thread->thread_id);
  end_wait(l, false);
}

void pfs_unlock_mutex(pfs_sync* m) {
  if (m != nullptr) store_relaxed(reinterpret_cast<sync_instance*>(m)->owner_thread_id, std::uint64_t{0});
}

int pfs_start_rwlock_wait(pfs_wait_locker* locker, pfs_sync* rw, int op, const char* file, unsigned line) {
  return start_wait(as_locker(locker), reinterpret_cast<sync_instance*>(rw), kKindRwlock, op, file, line);
}

void pfs_end_rwlock_wait(pfs_wait_locker* locker, int rc) {
  wait_locker& l = as_locker(locker);
  const bool read = l.event.operation == kOpReadLock || l.event.operation == kOpTryReadLock;
  if (rc == 0) {
    if (read)
      __atomic_fetch_add(&l.instance->readers, 1u, __ATOMIC_RELAXED);
    else
      store_relaxed(l.instance->owner_thread_id, l.thread->thread_id);
  }
  // Readers hold the lock together, so their statistics need atomic updates.
  end_wait(l, read);
}

void pfs_unlock_rwlock(pfs_sync* rw) {
  auto* s = reinterpret_cast<sync_instance*>(rw);
  if (s == nullptr) return;
  if (pfs::layout::load_relaxed(s->owner_thread_id) != 0) {
    store_relaxed(s->owner_thread_id, std::uint64_t{0});
    return;
  }
  std::uint32_t n = pfs::layout::load_relaxed(s->readers);
  while (n > 0 && !__atomic_compare_exchange_n(&s->readers, &n, n - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

int pfs_start_cond_wait(pfs_wait_locker* locker, pfs_sync* cond, pfs_sync* m, int op, const char* file,
                        unsigned line) {
  wait_locker& l = as_locker(locker);
  int rec = start_wait(l, reinterpret_cast<sync_instance*>(cond), kKindCond, op, file, line);
  if (rec) {
    l.cond_mutex = reinterpret_cast<sync_instance*>(m);
    // The mutex is released while the thread waits.
    if (l.cond_mutex != nullptr) store_relaxed(l.cond_mutex->owner_thread_id, std::uint64_t{0});
  }
  return rec;
}

void pfs_end_cond_wait(pfs_wait_locker* locker, int rc) {
  (void)rc;  // a timed-out wait is a wait too; the mutex is held again either way
  wait_locker& l = as_locker(locker);
  if (l.cond_mutex != nullptr) store_relaxed(l.cond_mutex->owner_thread_id, l.thread->thread_id);
  end_wait(l, true);
}

}  // extern "C"
