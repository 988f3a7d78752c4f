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
#include <cstddef>
#include <cstdint>
#include <memory>

#include "agent/provider/pfs_c.h"
#include "agent/region/histogram.h"
#include "agent/region/io_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/region_layout.h"
#include "agent/region/wide_sum.h"
#include "agent/region/work_layout.h"
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
  std::uint32_t class_count = 0;  // classes' size (process-local: the region's copy can be anything)
  std::uint32_t stack_depth = 0;
  std::uint32_t history_size = 0;
  wait_record* history_long = nullptr;
  std::uint32_t history_long_size = 0;
  thread_histogram* wait_histograms = nullptr;  // the (thread, class) histogram pool
  timers::pico_converter converters[8] = {};
};
extern hot_state g_hot;

// A thread's trace file (trace worklog): opened on its first traced event.
struct trace_file {
  int fd = -1;
  bool failed = false;  // an error ended tracing for this thread
  // new[] at open, delete[] at trace_close: a raw pointer keeps thread_context
  // trivially destructible, so the agent's globals need no destructor.
  char* buffer = nullptr;
  std::size_t used = 0;
};

struct work_state;           // stages, statements, transactions in progress (agent_work.cpp)
struct memory_thread_state;  // its running statements' memory peaks (memory_path.h)

// wait_histogram_of entries: 0 = none claimed yet; this = none left in the pool,
// the class's shared histogram takes the thread's waits (atomic adds).
inline constexpr std::uint32_t kSharedHistogram = UINT32_MAX;

// One per thread slot of the region; only its thread writes it, on every event:
// a cache line of its own (contexts are a vector; neighbours shared lines).
struct alignas(64) thread_context {
  thread_record* rec = nullptr;
  // The memory path's (memory_path.h), next to rec so that a counted malloc reads
  // one line of the context: the thread's rows of memory_summary_by_thread_by_event_name
  // (max_memory_classes of them) and its statements' peaks; nullptr for threads
  // without a slot or without memory rows (attach_memory, release_memory).
  memory_stat* memory_rows = nullptr;
  memory_thread_state* memory_state = nullptr;
  // events_waits_current: the thread's wait_stack_depth slots start at stack_base;
  // running waits nest from stack on, with room for stack_room of them. stack is
  // stack_base + 1 while the latest completed table io is kept in slot 0 (WL#4895's
  // row #2), until the next table io.
  wait_record* stack = nullptr;
  wait_record* stack_base = nullptr;
  std::uint32_t stack_room = 0;
  wait_record* history = nullptr;     // history_per_thread slots
  wait_stat* class_stats = nullptr;   // max_classes entries: events_waits_summary_by_thread_by_event_name
  wait_stat* global_stats = nullptr;  // max_classes entries: its part of ..._global_by_event_name
  std::uint64_t thread_id = 0;
  std::uint32_t slot = 0;
  std::uint32_t depth = 0;  // running waits
  std::uint64_t next_event_id = 1;
  std::uint64_t history_index = 0;  // monotonic, published for readers
  std::uint32_t history_pos = 0;    // history_index % history_size, kept without a division
  // history_long batch this thread fills
  std::uint64_t batch = 0;
  std::uint32_t batch_next = 0;  // next slot in history_long
  std::uint32_t batch_end = 0;   // one past the batch's last slot
  bool has_batch = false;
  // The last SOURCE interned by this thread (a loop hits it every time).
  const char* last_file = nullptr;
  std::uint32_t last_line = 0;
  std::uint32_t last_source = 0;
  trace_file trace;
  // Units of work: what a wait with no wait around it nests in (the running
  // stage, else the innermost statement), and the picoseconds this thread spent
  // in mutex and rwlock waits (LOCK_TIME is its growth during a statement).
  std::uint64_t nest_event_id = 0;
  std::uint8_t nest_type = kNestingNone;
  std::uint64_t lock_time = 0;
  // Per wait class (index = class index - 1): its latency histogram in the pool
  // (1-based), kSharedHistogram, or 0. nullptr for threads without a slot.
  std::uint32_t* wait_histogram_of = nullptr;
  work_state* work = nullptr;  // one per thread slot, allocated at start-up (agent_work.cpp)
  // The lock acquisition whose thread-private statistics (its part of the global
  // summary, its by-thread summary, its histogram) and history copies wait for
  // the lock's release, so that the critical section does not pay for them
  // (complete_deferred). 0: none.
  std::uint32_t deferred_class = 0;
  std::uint8_t deferred_flags = 0;    // kDeferred* below: its statistics (0: added already)
  std::uint8_t deferred_history = 0;  // kThreadHistory / kThreadHistoryLong at the acquisition
  std::uint64_t deferred_ps = 0;
  // Its completed event in events_waits_current, copied to the histories at the
  // completion. Nothing writes the slot before: every slot write (claim_slot,
  // finish_slot, a table io's reset_wait_frame) completes the deferred first.
  const wait_record* deferred_slot = nullptr;
  // The program's metrics (agent_meters.cpp): the thread's cells of counters and
  // up-down counters, metric_count of them; nullptr for threads without a slot.
  std::uint64_t* metric_cells = nullptr;
  std::uint32_t metric_count = 0;
};
inline constexpr std::uint8_t kDeferredTimed = 1;
inline constexpr std::uint8_t kDeferredEventNameStats = 2;
inline constexpr std::uint8_t kDeferredThreadSummary = 4;

// constinit: no dynamic initialization, so reading it is one %fs load (no TLS
// wrapper call); initial-exec: no __tls_get_addr in a shared library.
extern __attribute__((tls_model("initial-exec"))) constinit thread_local thread_context* tls_context;

// Out of line, rare.
thread_context* register_thread_slot(std::uint32_t thread_class, const char* name);
std::uint32_t intern_source_slow(thread_context& t, const char* file, unsigned line);
bool claim_batch(thread_context& t);
void bump_lost(lost_id id);
void trace_event(thread_context& t, const wait_record& e);  // one line of the thread's trace file
// The first timed wait of a (thread, class), or one whose histogram is shared.
void add_to_histogram_slow(thread_context& t, std::uint32_t class_index, std::uint64_t ps);
struct wait_locker;
// A contended lock wait ended: lock_contention_by_instance (agent_contention.cpp).
// exclusive: the waiter now holds the lock alone (a mutex, or a rwlock for
// writing), so no other waiter of it updates its entries meanwhile.
void add_contention(const wait_locker& l, std::uint64_t ps, bool exclusive);

// The state of one wait in progress, on the caller's stack (pfs_wait_locker in C).
struct wait_locker {
  thread_context* thread;
  sync_instance* instance;
  sync_instance* cond_mutex;      // condition waits: the mutex waited with
  wait_record* slot;              // its events_waits_current slot, or nullptr
  void* object;                   // file io: file_instance*; table io: table_share*
  std::uint8_t class_flags;       // class derived flags at start
  std::uint8_t thread_flags;      // thread derived flags at start
  std::uint8_t created;           // file name waits: the start created the file instance
  std::uint8_t contended;         // a lock wait that had to queue (lock_contention_by_instance)
  std::uint32_t blocking_source;  // contended: SOURCE of the holder's acquisition (0 = unknown)
  wait_record event;              // the event as it is written (kept local, stored with no reloads)
};

// Traced: the class has TRACE_ENABLED and the thread's actor too (trace worklog).
inline bool traced(const wait_locker& l) {
  return (l.thread_flags & kThreadTraced) && (l.class_flags & kFlagTraced);
}

// An instant wait has a start line and an end line, like every traced wait.
inline void trace_instant(thread_context& t, const wait_record& e) {
  wait_record start = e;
  start.state = kWaitRunning;
  start.end_event_id = 0;
  start.number_of_bytes = -1;
  trace_event(t, start);
  trace_event(t, e);
}

inline thread_context* current_thread() {
  thread_context* t = tls_context;
  if (t == nullptr) [[unlikely]]
    t = register_thread_slot(0, "");
  return t;
}

// A timer kind read from the region (setup_timers, which SQL may change, or a
// record): anything but a known kind is none, never an index past the converters.
inline std::uint8_t timer_kind_of(std::uint8_t v) {
  return v < timers::timer_kind_count ? v : std::uint8_t{0};
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

// Writes a whole event record under its seqlock. Called with the locker's local
// copy, so every value comes from a register or a constant. Neighbouring small
// fields are stored together as one aligned word (15 stores instead of 21); the
// layout static_asserts below pin the offsets this relies on. Readers load the
// fields one by one, atomically, inside the same seqlock.
using word32 = std::uint32_t __attribute__((may_alias));
using word64 = std::uint64_t __attribute__((may_alias));
static_assert(offsetof(wait_record, state) == 4 && offsetof(wait_record, timer) == 5 &&
              offsetof(wait_record, operation) == 6 && offsetof(wait_record, nesting_type) == 7);
static_assert(offsetof(wait_record, class_index) == 8 && offsetof(wait_record, source_index) == 12);
static_assert(offsetof(wait_record, object_kind) == 80 && offsetof(wait_record, object_index) == 84 &&
              offsetof(wait_record, object_version) == 88 && offsetof(wait_record, index_number) == 92 &&
              offsetof(wait_record, flags) == 96 && offsetof(wait_record, blocking_thread_id) == 104 &&
              offsetof(wait_record, blocking_event_id) == 112 && sizeof(wait_record) == 128);

inline void store_word32(void* at, std::uint32_t v) {
  __atomic_store_n(static_cast<word32*>(at), v, __ATOMIC_RELAXED);
}
inline void store_word64(void* at, std::uint64_t v) {
  __atomic_store_n(static_cast<word64*>(at), v, __ATOMIC_RELAXED);
}

[[gnu::always_inline]] inline void write_event(wait_record& dst, const wait_record& e) {
  char* base = reinterpret_cast<char*>(&dst);
  const std::uint32_t seq = begin_write(dst);
  // The small fields are read one by one (load_relaxed: never merged by the
  // compiler): e was just written field by field, and one wide load over several
  // narrower pending stores fails store-to-load forwarding (a stall of ~5 ns,
  // three times per event with the history consumers on).
  store_word32(base + 4, std::uint32_t{load_relaxed(e.state)} | std::uint32_t{load_relaxed(e.timer)} << 8 |
                             std::uint32_t{load_relaxed(e.operation)} << 16 |
                             std::uint32_t{load_relaxed(e.nesting_type)} << 24);
  const auto pair = [](std::uint64_t low, std::uint64_t high) { return low | high << 32; };
  store_word64(base + 8, pair(load_relaxed(e.class_index), load_relaxed(e.source_index)));
  store_relaxed(dst.thread_id, e.thread_id);
  store_relaxed(dst.event_id, e.event_id);
  store_relaxed(dst.end_event_id, e.end_event_id);
  store_relaxed(dst.nesting_event_id, e.nesting_event_id);
  store_relaxed(dst.timer_start, e.timer_start);
  store_relaxed(dst.timer_end, e.timer_end);
  store_relaxed(dst.object_instance_begin, e.object_instance_begin);
  store_relaxed(dst.number_of_bytes, e.number_of_bytes);
  store_word64(base + 80, pair(load_relaxed(e.object_kind), load_relaxed(e.object_index)));
  store_word64(base + 88, pair(load_relaxed(e.object_version), load_relaxed(e.index_number)));
  store_word64(base + 96, std::uint64_t{load_relaxed(e.flags)});
  store_relaxed(dst.blocking_thread_id, e.blocking_thread_id);
  store_relaxed(dst.blocking_event_id, e.blocking_event_id);
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
  add_sum(s.sum, s.sum_hi, ps);
  if (ps < load_relaxed(s.min)) store_relaxed(s.min, ps);
  if (ps > load_relaxed(s.max)) store_relaxed(s.max, ps);
}

// Statistics that several holders update at once (rwlock read locks, conditions).
inline void aggregate_shared(wait_stat& s, bool timed, std::uint64_t ps) {
  __atomic_fetch_add(&s.count, 1, __ATOMIC_RELAXED);
  if (!timed) return;
  add_sum_atomic(s.sum, s.sum_hi, ps);
  atomic_min(s.min, ps);
  atomic_max(s.max, ps);
}

// First step of every wait: settings and thread, no writes. cflags: the class's
// derived flags (for table io already combined with the table's setup_objects
// flags). False: the instrument is off (or the agent stopped); nothing is
// recorded and nothing more is called.
inline bool begin_wait_flags(wait_locker& l, std::uint32_t key, std::uint8_t cflags, std::uint64_t identity,
                             int op) {
  if ((cflags & kFlagEnabled) == 0) return false;
  thread_context& t = *current_thread();
  l.thread = &t;
  l.instance = nullptr;
  l.cond_mutex = nullptr;
  l.slot = nullptr;
  l.object = nullptr;
  l.class_flags = cflags;
  l.thread_flags = load_relaxed(t.rec->derived);
  l.created = 0;
  l.contended = 0;
  wait_record& e = l.event;
  e.timer = (cflags & kFlagTimed) ? timer_kind_of(load_relaxed(g_hot.header->wait_timer)) : std::uint8_t{0};
  e.operation = static_cast<std::uint8_t>(op);
  e.class_index = key;
  e.source_index = 0;  // set when a slot numbers the event (set_owner keeps it)
  e.timer_start = 0;
  e.timer_end = 0;
  e.object_instance_begin = identity;
  e.number_of_bytes = -1;
  e.object_kind = kObjectNone;
  e.object_index = 0;
  e.object_version = 0;
  e.index_number = 0;
  e.flags = 0;
  e.event_id = 0;  // stays 0 when no events_waits_current slot numbers the event
  e.blocking_thread_id = 0;
  e.blocking_event_id = 0;
  return true;
}

// The derived flags of class `key`, a 1-based index read from an instance's record
// in the region. The file is shared: truncated, its pages read as zeros (the fault
// guard's replacement); damaged, as anything. An index outside the class array is
// no class (flags 0: not enabled), never a read past the array (a truncation
// between the class's enabled flag and this read crashed the program at index -1).
inline std::uint8_t class_flags_of(std::uint32_t key) {
  return key - 1 < g_hot.class_count ? load_relaxed(g_hot.classes[key - 1].derived) : std::uint8_t{0};
}

// PREFETCHW: a line fetched for writing (x86-64 processors without the
// instruction run it as a NOP). The line of a lock's instance that the
// acquisition writes while the lock is held (its owner, its statistics) was most
// likely written last by the thread that held the lock before: asked for before
// the try, its trip overlaps with the lock's own instead of lengthening the
// critical section.
[[gnu::always_inline]] inline void prefetch_for_write(const void* p) {
#if defined(__x86_64__)
  asm volatile("prefetchw %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 1, 3);
#endif
}

inline bool begin_wait(wait_locker& l, sync_instance* s, int op) {
  if (s == nullptr || !load_relaxed(g_hot.recording)) return false;
  prefetch_for_write(&s->owner_thread_id);  // the line of the owner and the statistics
  const std::uint32_t key = load_relaxed(s->class_index);
  if (!begin_wait_flags(l, key, class_flags_of(key), load_relaxed(s->identity), op)) return false;
  l.instance = s;
  return true;
}

inline std::uint64_t read_timer(std::uint8_t timer) {
  return timers::read(static_cast<timers::timer_kind>(timer));
}

// The thread's deferred lock acquisition, if any, completed (defined below).
void complete_deferred_now(thread_context& t);
inline void complete_deferred(thread_context* t) {
  if (t != nullptr && t->deferred_class != 0) [[unlikely]]
    complete_deferred_now(*t);
}

// Fills the event's identity; returns its events_waits_current slot, or nullptr
// when the thread does not record current events (or its wait stack is full).
inline wait_record* claim_slot(wait_locker& l, const char* file, unsigned line) {
  thread_context& t = *l.thread;
  complete_deferred(&t);  // its slot may be the one claimed now
  if ((l.thread_flags & kThreadCurrent) == 0) return nullptr;
  if (t.depth >= t.stack_room) [[unlikely]] {
    bump_lost(kLostLocker);
    return nullptr;
  }
  wait_record& e = l.event;
  e.source_index = intern_source(t, file, line);
  e.thread_id = t.thread_id;
  e.event_id = t.next_event_id++;
  e.end_event_id = 0;
  if (t.depth > 0) {
    e.nesting_event_id = load_relaxed(t.stack[t.depth - 1].event_id);
    e.nesting_type = kNestingWait;
  } else {
    e.nesting_event_id = t.nest_event_id;
    e.nesting_type = t.nest_type;
  }
  return &t.stack[t.depth];
}

// A wait that can block: the running event is visible in events_waits_current
// until end_wait.
inline void start_running(wait_locker& l, const char* file, unsigned line) {
  wait_record& e = l.event;
  // (A lock's wait was started before its first attempt: start_timer.)
  if (e.timer != 0 && e.timer_start == 0) e.timer_start = read_timer(e.timer);
  wait_record* slot = claim_slot(l, file, line);
  if (slot == nullptr) return;
  thread_context& t = *l.thread;
  e.state = kWaitRunning;
  write_event(*slot, e);
  if (traced(l)) [[unlikely]]
    trace_event(t, e);
  ++t.depth;
  store_relaxed(t.rec->stack_depth, t.depth);
  store_relaxed(t.rec->event_id, t.next_event_id);
  l.slot = slot;
}

// Who holds the lock the thread is about to wait for: its THREAD_ID, the EVENT_ID
// and SOURCE of its acquisition, read as what one acquisition wrote (the owner may
// change meanwhile: then, or when nobody holds it, unknown). True if a holder is
// known.
inline bool note_blocker(wait_locker& l) {
  const sync_instance& s = *l.instance;
  const std::uint64_t event = load_relaxed(s.owner_event_id);
  const std::uint32_t source = load_relaxed(s.owner_source);
  const std::uint64_t thread = load_relaxed(s.owner_thread_id);
  std::atomic_thread_fence(std::memory_order_acquire);
  if (thread == 0 || load_relaxed(s.owner_event_id) != event) return false;
  l.event.blocking_thread_id = thread;
  l.event.blocking_event_id = event;
  l.blocking_source = source;
  return true;
}

// A lock acquisition that must wait (its try-lock failed): who blocks it, then
// the running event.
inline void start_contended(wait_locker& l, const char* file, unsigned line) {
  l.contended = 1;
  l.blocking_source = 0;
  note_blocker(l);
  start_running(l, file, line);
}

// The thread now owns the mutex (or the rwlock for writing): the columns of
// mutex_instances and rwlock_instances, and what note_blocker reads.
inline void set_owner(wait_locker& l, sync_instance& s) {
  store_relaxed(s.owner_event_id, l.event.event_id);
  store_relaxed(s.owner_source, l.event.source_index);
  store_relaxed(s.owner_thread_id, l.thread->thread_id);
}

// The latency histogram of the wait's class (events_waits_histogram_global_by_event_name):
// the thread's own histogram of the class, written with plain stores.
[[gnu::always_inline]] inline void add_to_histogram(thread_context& t, std::uint32_t class_index,
                                                    std::uint64_t ps) {
  const std::uint32_t entry = t.wait_histogram_of[class_index - 1];
  if (entry == 0 || entry == kSharedHistogram) [[unlikely]] {
    add_to_histogram_slow(t, class_index, ps);
    return;
  }
  std::uint64_t& count = g_hot.wait_histograms[entry - 1].h.counts[histogram::wait_scale::bucket_of(ps)];
  store_relaxed(count, load_relaxed(count) + 1);
}

// events_waits_summary_global_by_event_name: the thread's own statistics of the
// class, written with plain stores (readers add up the threads and the class's
// bucket of exited threads); a thread without a slot adds to that bucket.
[[gnu::always_inline]] inline void aggregate_global(wait_locker& l, bool timed, std::uint64_t ps) {
  if ((l.class_flags & kFlagEventNameStats) == 0) return;
  if (wait_stat* g = l.thread->global_stats) [[likely]]
    aggregate_single(g[l.event.class_index - 1], timed, ps);
  else
    aggregate_shared(g_hot.classes[l.event.class_index - 1].stat, timed, ps);
}

// The statistics only the thread writes: its part of the global summary, its
// by-thread summary, its histogram.
[[gnu::always_inline]] inline void aggregate_private(thread_context& t, std::uint32_t class_index,
                                                     std::uint8_t deferred_flags, std::uint64_t ps) {
  const bool timed = deferred_flags & kDeferredTimed;
  if (deferred_flags & kDeferredEventNameStats) {
    if (wait_stat* g = t.global_stats) [[likely]]
      aggregate_single(g[class_index - 1], timed, ps);
    else
      aggregate_shared(g_hot.classes[class_index - 1].stat, timed, ps);
  }
  if (deferred_flags & kDeferredThreadSummary) aggregate_single(t.class_stats[class_index - 1], timed, ps);
  if (timed && t.wait_histogram_of != nullptr) add_to_histogram(t, class_index, ps);
}

// Which thread-private statistics a wait adds to, from its class's and thread's flags.
inline std::uint8_t private_flags(bool timed, std::uint8_t class_flags, std::uint8_t thread_flags) {
  return static_cast<std::uint8_t>((timed ? kDeferredTimed : 0) |
                                   (class_flags & kFlagEventNameStats ? kDeferredEventNameStats : 0) |
                                   (thread_flags & kThreadSummary ? kDeferredThreadSummary : 0));
}
inline std::uint8_t private_flags(const wait_locker& l) {
  return private_flags(l.event.timer != 0, l.class_flags, l.thread_flags);
}

// The instance's statistics: written while the lock is held, by its holder (or
// atomically, by the holders of a read lock together).
[[gnu::always_inline]] inline void aggregate_instance(wait_locker& l, bool shared_stats, std::uint64_t ps) {
  if ((l.class_flags & kFlagInstanceStats) == 0) return;
  const bool timed = l.event.timer != 0;
  if (shared_stats)
    aggregate_shared(l.instance->stat, timed, ps);
  else
    aggregate_single(l.instance->stat, timed, ps);
}

[[gnu::always_inline]] inline void aggregate(wait_locker& l, bool shared_stats, std::uint64_t ps) {
  aggregate_private(*l.thread, l.event.class_index, private_flags(l), ps);
  aggregate_instance(l, shared_stats, ps);
}

// A completed event goes to the thread's history and to history_long.
inline void to_history(thread_context& t, std::uint8_t thread_flags, const wait_record& e) {
  if ((thread_flags & kThreadHistory) && g_hot.history_size != 0) {
    write_event(t.history[t.history_pos], e);
    if (++t.history_pos == g_hot.history_size) t.history_pos = 0;
    ++t.history_index;
    store_relaxed(t.rec->history_index, t.history_index);
  }
  if ((thread_flags & kThreadHistoryLong) && g_hot.history_long_size != 0) {
    if ((t.has_batch && t.batch_next != t.batch_end) || claim_batch(t))
      write_event(g_hot.history_long[t.batch_next++], e);
  }
}
inline void to_history(wait_locker& l) { to_history(*l.thread, l.thread_flags, l.event); }

// Completes the deferred acquisition of the thread: called after a lock's
// release, and before anything that writes an events_waits_current slot or
// defers another acquisition. The event is read from its slot before the mark
// is cleared, and the mark cleared before anything is added, so a signal
// handler that takes a lock in between neither reads a slot it overwrote nor
// counts the acquisition twice.
[[gnu::noinline]] inline void complete_deferred_now(thread_context& t) {
  const std::uint32_t class_index = t.deferred_class;
  wait_record e;
  const std::uint8_t history = t.deferred_slot != nullptr ? t.deferred_history : std::uint8_t{0};
  if (history != 0) e = *t.deferred_slot;  // this thread is its only writer
  t.deferred_class = 0;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  if (!load_relaxed(g_hot.recording)) return;
  aggregate_private(t, class_index, t.deferred_flags, t.deferred_ps);
  // (A slot emptied meanwhile by the reader side, as a consumer turned off: nothing.)
  if (history != 0 && e.state == kWaitCompleted) to_history(t, history, e);
}

// Only the latest completed wait stays visible above the running ones.
inline void clear_above(thread_context& t, std::uint32_t depth) {
  if (depth + 1 < t.stack_room && load_relaxed(t.stack[depth + 1].state) != kWaitEmpty)
    clear_event(t.stack[depth + 1]);
}

// Times the end of a wait; returns its duration in picoseconds (0 if untimed).
inline std::uint64_t stop_timer(wait_locker& l) {
  wait_record& e = l.event;
  if (e.timer == 0) return 0;
  e.timer_end = read_timer(e.timer);
  // A timer that went backwards (THREAD_CPU, a bad TSC) gives 0, never a huge
  // unsigned difference.
  if (e.timer_end <= e.timer_start) return 0;
  return g_hot.converters[e.timer].delta_to_pico(e.timer_end - e.timer_start);
}

// Completes the event in its events_waits_current slot (if it has one) and
// copies it to the histories.
inline void finish_slot(wait_locker& l) {
  wait_record* slot = l.slot;
  if (slot == nullptr) return;
  thread_context& t = *l.thread;
  complete_deferred(&t);  // an acquisition above this wait: clear_above clears its slot
  wait_record& e = l.event;
  e.state = kWaitCompleted;
  e.end_event_id = t.next_event_id;
  const std::uint32_t seq = begin_write(*slot);
  store_relaxed(slot->state, e.state);
  store_relaxed(slot->end_event_id, e.end_event_id);
  store_relaxed(slot->timer_end, e.timer_end);
  store_relaxed(slot->number_of_bytes, e.number_of_bytes);
  end_write(*slot, seq);
  const std::uint32_t depth = t.depth - 1;
  clear_above(t, depth);
  t.depth = depth;
  store_relaxed(t.rec->stack_depth, depth);
  to_history(l);
  if (traced(l)) [[unlikely]]
    trace_event(t, e);
}

// End of a synchronization wait started with start_running; returns its duration.
inline std::uint64_t end_wait(wait_locker& l, bool shared_stats) {
  const std::uint64_t ps = stop_timer(l);
  aggregate(l, shared_stats, ps);
  finish_slot(l);
  return ps;
}

// A lock acquisition is timed from before its first attempt (WL#2360: "about to
// acquire" to "finished acquiring"), whether or not it then has to wait: the
// start read, taken before begin_wait knows the event's timer (the interposer
// tries the lock first), or now.
inline void start_timer(wait_locker& l) {
  if (l.event.timer != 0) l.event.timer_start = read_timer(l.event.timer);
}
inline void start_timer(wait_locker& l, std::uint8_t timer, std::uint64_t start) {
  if (l.event.timer != 0) l.event.timer_start = l.event.timer == timer ? start : read_timer(l.event.timer);
}
// The timer a wait on s would use now (0: its class is not timed), for a start
// read taken before begin_wait.
inline std::uint8_t wait_timer_of(const sync_instance* s) {
  const std::uint32_t key = load_relaxed(s->class_index);
  if ((class_flags_of(key) & kFlagTimed) == 0) return 0;
  return timer_kind_of(load_relaxed(g_hot.header->wait_timer));
}

// The completed event of a wait that did not block, in its events_waits_current
// slot (nullptr: none).
inline wait_record* write_instant(wait_locker& l, const char* file, unsigned line) {
  wait_record* slot = claim_slot(l, file, line);
  if (slot == nullptr) return nullptr;
  thread_context& t = *l.thread;
  wait_record& e = l.event;
  e.state = kWaitCompleted;
  e.end_event_id = t.next_event_id;
  write_event(*slot, e);
  if (traced(l)) [[unlikely]]
    trace_instant(t, e);
  clear_above(t, t.depth);
  store_relaxed(t.rec->event_id, t.next_event_id);
  return slot;
}

// A lock acquisition whose thread-private statistics (a timed one's) and history
// copies wait for the release: the values are the same, only the moment they
// reach the summaries, the histogram and the histories moves by the hold time.
// The instance's statistics and events_waits_current are written now. A counted
// acquisition adds its two counts now: saving them for later costs more.
[[gnu::always_inline]] inline void record_deferred(wait_locker& l, const char* file, unsigned line,
                                                   bool shared_stats, std::uint64_t ps) {
  thread_context& t = *l.thread;
  complete_deferred(&t);  // a lock taken while holding another
  aggregate_instance(l, shared_stats, ps);
  const bool timed = l.event.timer != 0;
  if (!timed) aggregate_private(t, l.event.class_index, private_flags(l), ps);
  const wait_record* slot = write_instant(l, file, line);
  const std::uint8_t history =
      slot != nullptr ? l.thread_flags & (kThreadHistory | kThreadHistoryLong) : std::uint8_t{0};
  if (!timed && history == 0) return;
  t.deferred_ps = ps;
  t.deferred_flags = timed ? private_flags(l) : std::uint8_t{0};
  t.deferred_history = history;
  t.deferred_slot = slot;
  std::atomic_signal_fence(std::memory_order_seq_cst);
  t.deferred_class = l.event.class_index;
}

// A wait that did not block (a try-lock, or a lock taken at the first try): its
// end read, and the completed event written once.
// defer: the thread-private statistics and the history copies wait for the
// lock's release (the caller calls complete_deferred after it).
inline void record_instant(wait_locker& l, const char* file, unsigned line, bool shared_stats,
                           bool defer = false) {
  const std::uint64_t ps = stop_timer(l);
  l.thread->lock_time += ps;
  if (defer) {
    record_deferred(l, file, line, shared_stats, ps);
    return;
  }
  aggregate(l, shared_stats, ps);
  if (write_instant(l, file, line) != nullptr) to_history(l);
}

// begin_wait + start_running: the C ABI's start.
inline bool start_wait(wait_locker& l, sync_instance* s, int op, const char* file, unsigned line) {
  if (!begin_wait(l, s, op)) return false;
  start_running(l, file, line);
  return true;
}

inline void end_mutex_wait(wait_locker& l, int rc) {
  // The thread holds the mutex now: it is the only writer of its statistics.
  if (rc == 0) set_owner(l, *l.instance);
  const std::uint64_t ps = end_wait(l, false);
  l.thread->lock_time += ps;
  if (l.contended) [[unlikely]]
    add_contention(l, ps, rc == 0);
}

inline bool is_read_lock(const wait_locker& l) {
  return l.event.operation == kOpReadLock || l.event.operation == kOpTryReadLock;
}

inline void end_rwlock_wait(wait_locker& l, int rc) {
  const bool read = is_read_lock(l);
  if (rc == 0) {
    if (read)
      __atomic_fetch_add(&l.instance->readers, 1u, __ATOMIC_RELAXED);
    else
      set_owner(l, *l.instance);
  }
  // Readers hold the lock together, so their statistics need atomic updates.
  const std::uint64_t ps = end_wait(l, read);
  l.thread->lock_time += ps;
  if (l.contended) [[unlikely]]
    add_contention(l, ps, rc == 0 && !read);
}

// A mutex (or a rwlock for writing) taken, or a try-lock tried, without blocking.
// (The owner is set after the event is numbered: its EVENT_ID is the acquisition's.)
// defer: see record_instant (only for an acquisition whose release will call
// complete_deferred: a failed try-lock has none).
inline void mutex_instant(wait_locker& l, bool acquired, const char* file, unsigned line,
                          bool defer = false) {
  record_instant(l, file, line, false, defer && acquired);
  if (acquired) set_owner(l, *l.instance);
}

inline void rwlock_instant(wait_locker& l, bool acquired, const char* file, unsigned line,
                           bool defer = false) {
  const bool read = is_read_lock(l);
  record_instant(l, file, line, read, defer && acquired);
  if (acquired) {
    if (read)
      __atomic_fetch_add(&l.instance->readers, 1u, __ATOMIC_RELAXED);
    else
      set_owner(l, *l.instance);
  }
}

// A mutex taken at the first try, for a class that is not timed, by a thread that
// does not record events_waits_current: no event is numbered, nothing is timed,
// so the acquisition is its counts and its owner, written here without a locker
// (the full path writes the same values: the owner's EVENT_ID and SOURCE stay
// unknown). False when the full path is needed (the thread records current
// events, or the class is timed now); nothing was written then. Call with the
// mutex held.
[[gnu::always_inline]] inline bool count_mutex_acquired(sync_instance* s) {
  if (s == nullptr || !load_relaxed(g_hot.recording)) return false;
  const std::uint32_t key = load_relaxed(s->class_index);
  const std::uint8_t cflags = class_flags_of(key);
  if ((cflags & (kFlagEnabled | kFlagTimed)) != kFlagEnabled) return false;
  thread_context& t = *current_thread();
  const std::uint8_t tflags = load_relaxed(t.rec->derived);
  if (tflags & kThreadCurrent) return false;
  complete_deferred(&t);  // a lock taken while holding another
  if (cflags & kFlagInstanceStats) store_relaxed(s->stat.count, load_relaxed(s->stat.count) + 1);
  aggregate_private(t, key, private_flags(false, cflags, tflags), 0);
  store_relaxed(s->owner_event_id, std::uint64_t{0});
  store_relaxed(s->owner_source, std::uint32_t{0});
  store_relaxed(s->owner_thread_id, t.thread_id);
  return true;
}

inline void unlock_mutex(sync_instance* s) { store_relaxed(s->owner_thread_id, std::uint64_t{0}); }

// A condition signalled or broadcast: the signaller, for SIGNALLING_THREAD_ID of
// the waits it ends.
inline void note_signal(sync_instance* cond) {
  if (cond == nullptr || !load_relaxed(g_hot.recording)) return;
  store_relaxed(cond->owner_thread_id, current_thread()->thread_id);
}

inline void unlock_rwlock(sync_instance* s) {
  if (load_relaxed(s->owner_thread_id) != 0) {
    store_relaxed(s->owner_thread_id, std::uint64_t{0});
    return;
  }
  std::uint32_t n = load_relaxed(s->readers);
  while (n > 0 &&
         !__atomic_compare_exchange_n(&s->readers, &n, n - 1, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

inline sync_instance* as_instance(pfs_sync* s) { return reinterpret_cast<sync_instance*>(s); }

}  // namespace pfs::detail
