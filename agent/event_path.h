// The event path, inline: start and end of a wait, written straight into the
// thread's records in the region. Included by pfs.h so that the C++ API compiles
// each instrumented call into the caller (no call, the locker in registers); the C
// ABI (pfs_c.h) wraps the same functions.
//
// Rules (MySQL's pfs.cc design principles): no lock, no allocation, no system call
// but the timer; every record written here has one writer (this thread, or the
// thread that holds the instrumented lock); readers are never waited for. Settings
// are read once at the start of a wait and kept in the locker, so a wait in flight
// finishes under the settings it started with. Rare work (first event of a thread,
// a new SOURCE, a new history_long batch, a lost counter) is out of line.
#pragma once

#include <atomic>
#include <cstdint>

#include "agent/pfs_c.h"
#include "agent/region_layout.h"
#include "timers/timer.h"

namespace pfs::detail {

using namespace pfs::layout;

// What the event path needs, copied out of the region's header at start-up so
// that it costs no pointer chase. Written once by init, before any object can
// see an enabled class.
struct hot_state {
  bool recording = false;  // false after shutdown and in a forked child
  region_header* header = nullptr;
  class_record* classes = nullptr;
  std::uint32_t stack_depth = 0;
  std::uint32_t history_size = 0;
  wait_record* history_long = nullptr;
  std::uint32_t history_long_size = 0;
  timers::pico_converter converters[8] = {};
};
extern hot_state g_hot;

// One per thread slot of the region; only its thread writes it.
struct thread_context {
  thread_record* rec = nullptr;
  wait_record* stack = nullptr;      // wait_stack_depth slots
  wait_record* history = nullptr;    // history_per_thread slots
  wait_stat* class_stats = nullptr;  // max_classes entries
  std::uint64_t thread_id = 0;
  std::uint32_t slot = 0;
  std::uint32_t depth = 0;  // running waits
  std::uint64_t next_event_id = 1;
  std::uint64_t history_index = 0;
  // history_long batch this thread fills
  std::uint64_t batch = 0;
  std::uint32_t batch_next = 0;  // next slot in history_long
  std::uint32_t batch_end = 0;   // one past the batch's last slot
  bool has_batch = false;
  // The last SOURCE interned by this thread (a loop hits it every time).
  const char* last_file = nullptr;
  std::uint32_t last_line = 0;
  std::uint32_t last_source = 0;
};

extern __attribute__((tls_model("initial-exec"))) thread_local thread_context* tls_context;

// Out of line, rare.
thread_context* register_thread_slot(std::uint32_t thread_class, const char* name);
std::uint32_t intern_source_slow(thread_context& t, const char* file, unsigned line);
bool claim_batch(thread_context& t);
void bump_lost(lost_id id);

// The state of one wait in progress, on the caller's stack (pfs_wait_locker in C).
struct wait_locker {
  thread_context* thread;
  sync_instance* instance;
  sync_instance* cond_mutex;  // condition waits: the mutex waited with
  wait_record* slot;          // its events_waits_current slot, or nullptr
  std::uint64_t start;
  std::uint32_t class_index;
  std::uint8_t class_flags;   // class derived flags at start
  std::uint8_t thread_flags;  // thread derived flags at start
  std::uint8_t timer;         // 0 = not timed
  std::uint8_t operation;
};

inline thread_context* current_thread() {
  thread_context* t = tls_context;
  if (t == nullptr) [[unlikely]]
    t = register_thread_slot(0, "");
  return t;
}

inline std::uint32_t intern_source(thread_context& t, const char* file, unsigned line) {
  if (file == t.last_file && line == t.last_line) [[likely]]
    return t.last_source;
  return intern_source_slow(t, file, line);
}

// Seqlock write bracket: odd while the fields change.
inline std::uint32_t begin_write(wait_record& r) {
  const std::uint32_t seq = load_relaxed(r.seq) | 1u;
  store_relaxed(r.seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  return seq;
}
inline void end_write(wait_record& r, std::uint32_t seq) { store_release(r.seq, seq + 1); }

// Copies a completed event (our own slot, so plain loads would do; relaxed atomic
// loads keep the sanitizers quiet) into a history slot.
inline void copy_event(wait_record& dst, const wait_record& src) {
  const std::uint32_t seq = begin_write(dst);
  store_relaxed(dst.state, load_relaxed(src.state));
  store_relaxed(dst.timer, load_relaxed(src.timer));
  store_relaxed(dst.operation, load_relaxed(src.operation));
  store_relaxed(dst.nesting_type, load_relaxed(src.nesting_type));
  store_relaxed(dst.class_index, load_relaxed(src.class_index));
  store_relaxed(dst.source_index, load_relaxed(src.source_index));
  store_relaxed(dst.thread_id, load_relaxed(src.thread_id));
  store_relaxed(dst.event_id, load_relaxed(src.event_id));
  store_relaxed(dst.end_event_id, load_relaxed(src.end_event_id));
  store_relaxed(dst.nesting_event_id, load_relaxed(src.nesting_event_id));
  store_relaxed(dst.timer_start, load_relaxed(src.timer_start));
  store_relaxed(dst.timer_end, load_relaxed(src.timer_end));
  store_relaxed(dst.object_instance_begin, load_relaxed(src.object_instance_begin));
  store_relaxed(dst.number_of_bytes, load_relaxed(src.number_of_bytes));
  store_relaxed(dst.object_kind, load_relaxed(src.object_kind));
  store_relaxed(dst.object_index, load_relaxed(src.object_index));
  store_relaxed(dst.object_version, load_relaxed(src.object_version));
  store_relaxed(dst.index_number, load_relaxed(src.index_number));
  store_relaxed(dst.flags, load_relaxed(src.flags));
  end_write(dst, seq);
}

inline void clear_event(wait_record& r) {
  const std::uint32_t seq = begin_write(r);
  store_relaxed(r.state, kWaitEmpty);
  end_write(r, seq);
}

// Statistics with a single writer: load and store (atomic, so readers elsewhere
// see whole values), no read-modify-write.
inline void aggregate_single(wait_stat& s, bool timed, std::uint64_t ps) {
  store_relaxed(s.count, load_relaxed(s.count) + 1);
  if (!timed) return;
  store_relaxed(s.sum, load_relaxed(s.sum) + ps);
  if (ps < load_relaxed(s.min)) store_relaxed(s.min, ps);
  if (ps > load_relaxed(s.max)) store_relaxed(s.max, ps);
}

inline void atomic_min(std::uint64_t& field, std::uint64_t v) {
  std::uint64_t cur = load_relaxed(field);
  while (v < cur && !__atomic_compare_exchange_n(&field, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}
inline void atomic_max(std::uint64_t& field, std::uint64_t v) {
  std::uint64_t cur = load_relaxed(field);
  while (v > cur && !__atomic_compare_exchange_n(&field, &cur, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

// Statistics that several holders update at once (rwlock read locks, conditions).
inline void aggregate_shared(wait_stat& s, bool timed, std::uint64_t ps) {
  __atomic_fetch_add(&s.count, 1, __ATOMIC_RELAXED);
  if (!timed) return;
  __atomic_fetch_add(&s.sum, ps, __ATOMIC_RELAXED);
  atomic_min(s.min, ps);
  atomic_max(s.max, ps);
}

// Start of every wait. False: nothing recorded, do not call the end.
inline bool start_wait(wait_locker& l, sync_instance* s, int op, const char* file, unsigned line) {
  if (s == nullptr || !load_relaxed(g_hot.recording)) return false;
  const std::uint32_t key = load_relaxed(s->class_index);
  const std::uint8_t cflags = load_relaxed(g_hot.classes[key - 1].derived);
  if ((cflags & kFlagEnabled) == 0) return false;
  thread_context& t = *current_thread();
  const std::uint8_t tflags = load_relaxed(t.rec->derived);
  l.thread = &t;
  l.instance = s;
  l.cond_mutex = nullptr;
  l.slot = nullptr;
  l.class_index = key;
  l.class_flags = cflags;
  l.thread_flags = tflags;
  l.operation = static_cast<std::uint8_t>(op);
  l.timer = 0;
  l.start = 0;
  if (cflags & kFlagTimed) {
    l.timer = load_relaxed(g_hot.header->wait_timer);
    l.start = timers::read(static_cast<timers::timer_kind>(l.timer));
  }
  if (tflags & kThreadCurrent) {
    if (t.depth >= g_hot.stack_depth) [[unlikely]] {
      bump_lost(kLostLocker);
      return true;
    }
    wait_record& e = t.stack[t.depth];
    const std::uint32_t source = intern_source(t, file, line);
    const std::uint64_t event_id = t.next_event_id++;
    const std::uint32_t seq = begin_write(e);
    store_relaxed(e.state, kWaitRunning);
    store_relaxed(e.timer, l.timer);
    store_relaxed(e.operation, l.operation);
    store_relaxed(e.class_index, key);
    store_relaxed(e.source_index, source);
    store_relaxed(e.thread_id, t.thread_id);
    store_relaxed(e.event_id, event_id);
    store_relaxed(e.end_event_id, std::uint64_t{0});
    if (t.depth > 0) {
      store_relaxed(e.nesting_event_id, load_relaxed(t.stack[t.depth - 1].event_id));
      store_relaxed(e.nesting_type, kNestingWait);
    } else {
      store_relaxed(e.nesting_event_id, std::uint64_t{0});
      store_relaxed(e.nesting_type, kNestingNone);
    }
    store_relaxed(e.timer_start, l.start);
    store_relaxed(e.timer_end, std::uint64_t{0});
    store_relaxed(e.object_instance_begin, load_relaxed(s->identity));
    store_relaxed(e.number_of_bytes, std::int64_t{-1});
    store_relaxed(e.object_kind, kObjectNone);
    store_relaxed(e.object_index, 0u);
    store_relaxed(e.object_version, 0u);
    store_relaxed(e.index_number, 0u);
    store_relaxed(e.flags, 0u);
    end_write(e, seq);
    ++t.depth;
    store_relaxed(t.rec->stack_depth, t.depth);
    store_relaxed(t.rec->event_id, t.next_event_id);
    l.slot = &e;
  }
  return true;
}

inline void append_history_long(thread_context& t, const wait_record& e) {
  if (g_hot.history_long_size == 0) return;
  if ((!t.has_batch || t.batch_next == t.batch_end) && !claim_batch(t)) return;
  copy_event(g_hot.history_long[t.batch_next++], e);
}

// End of a wait. shared_stats: the instance's statistics may have other writers.
inline void end_wait(wait_locker& l, bool shared_stats) {
  thread_context& t = *l.thread;
  std::uint64_t ps = 0;
  std::uint64_t end = 0;
  const bool timed = l.timer != 0;
  if (timed) {
    end = timers::read(static_cast<timers::timer_kind>(l.timer));
    // A timer that went backwards (THREAD_CPU, a bad TSC) gives 0, never a huge
    // unsigned difference.
    if (end > l.start) ps = g_hot.converters[l.timer].delta_to_pico(end - l.start);
  }
  if (l.class_flags & kFlagInstanceStats) {
    if (shared_stats)
      aggregate_shared(l.instance->stat, timed, ps);
    else
      aggregate_single(l.instance->stat, timed, ps);
  }
  if (l.thread_flags & kThreadSummary) aggregate_single(t.class_stats[l.class_index - 1], timed, ps);
  wait_record* e = l.slot;
  if (e == nullptr) return;

  const std::uint32_t seq = begin_write(*e);
  store_relaxed(e->state, kWaitCompleted);
  store_relaxed(e->end_event_id, t.next_event_id);
  store_relaxed(e->timer_end, end);
  end_write(*e, seq);
  const std::uint32_t depth = t.depth - 1;
  // Only the latest completed wait stays visible above the running ones.
  if (depth + 1 < g_hot.stack_depth && load_relaxed(t.stack[depth + 1].state) != kWaitEmpty)
    clear_event(t.stack[depth + 1]);
  t.depth = depth;
  store_relaxed(t.rec->stack_depth, depth);
  if ((l.thread_flags & kThreadHistory) && g_hot.history_size != 0) {
    copy_event(t.history[t.history_index % g_hot.history_size], *e);
    ++t.history_index;
    store_relaxed(t.rec->history_index, t.history_index);
  }
  if (l.thread_flags & kThreadHistoryLong) append_history_long(t, *e);
}

inline void end_mutex_wait(wait_locker& l, int rc) {
  // The thread holds the mutex now: it is the only writer of its statistics.
  if (rc == 0) store_relaxed(l.instance->owner_thread_id, l.thread->thread_id);
  end_wait(l, false);
}

inline void end_rwlock_wait(wait_locker& l, int rc) {
  const bool read = l.operation == kOpReadLock || l.operation == kOpTryReadLock;
  if (rc == 0) {
    if (read)
      __atomic_fetch_add(&l.instance->readers, 1u, __ATOMIC_RELAXED);
    else
      store_relaxed(l.instance->owner_thread_id, l.thread->thread_id);
  }
  // Readers hold the lock together, so their statistics need atomic updates.
  end_wait(l, read);
}

inline void unlock_mutex(sync_instance* s) { store_relaxed(s->owner_thread_id, std::uint64_t{0}); }

inline void unlock_rwlock(sync_instance* s) {
  if (load_relaxed(s->owner_thread_id) != 0) {
    store_relaxed(s->owner_thread_id, std::uint64_t{0});
    return;
  }
  std::uint32_t n = load_relaxed(s->readers);
  while (n > 0 && !__atomic_compare_exchange_n(&s->readers, &n, n - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

inline sync_instance* as_instance(pfs_sync* s) { return reinterpret_cast<sync_instance*>(s); }

}  // namespace pfs::detail
