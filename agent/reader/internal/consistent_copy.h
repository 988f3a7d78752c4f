// Consistent copies of region records (internal): every record a writer may change
// while it is read is copied field by field with atomic loads and accepted only if
// its seqlock or version+state word did not move (see region_layout.h).
#pragma once

#include "agent/reader/internal/cells.h"
#include "agent/region/cycle_epochs.h"
#include "agent/region/io_layout.h"
#include "agent/region/record_copy.h"
#include "agent/region/work_layout.h"

namespace pfs::reader::detail {

// ---------------------------------------------------------------------------
// Consistent copies of records

enum class rd { ok, absent, torn };

// Version+state records: the lock word must say allocated and be unchanged around
// the copy. *lock_out receives the word of the accepted copy. A record still dirty
// after the last attempt is absent (not counted as torn).
template <class Rec, class Copy>
rd read_versioned(const Rec& r, Copy&& copy, std::uint32_t* lock_out = nullptr) {
  bool dirty = false;
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t l1 = load_acquire(r.lock);
    if ((l1 & kStateMask) != kStateAllocated) {
      // Free: not a row. Dirty: being allocated, changed (setup_actors updates) or
      // freed; such a change is short, so look again before giving up.
      if ((l1 & kStateMask) != kStateDirty) return rd::absent;
      dirty = true;
      cpu_relax();
      continue;
    }
    dirty = false;
    copy(r);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.lock) == l1) {
      if (lock_out != nullptr) *lock_out = l1;
      return rd::ok;
    }
    cpu_relax();
  }
  return dirty ? rd::absent : rd::torn;
}

struct class_copy {
  std::uint32_t kind_index = 0;
  std::uint8_t kind = 0;
  std::uint8_t flags = 0;
  std::uint8_t traits = 0;
  wait_stat stat{};
  fixed_str<kNameLen> name;
};

struct thread_copy {
  std::uint32_t class_index = 0;
  std::uint64_t thread_id = 0;
  std::uint64_t os_thread_id = 0;
  std::uint64_t parent_thread_id = 0;
  std::uint8_t instrumented = 0;
  std::uint8_t history = 0;
  std::uint8_t foreground = 0;
  std::uint64_t history_index = 0;
  fixed_str<kUserLen> user;
  fixed_str<kHostLen> host;
  fixed_str<kUserLen> role;
  fixed_str<kThreadNameLen> name;      // the name the thread gave itself (threads.THREAD_NAME)
  std::int64_t controlled_memory = 0;  // threads.CONTROLLED_MEMORY ... MAX_TOTAL_MEMORY
  std::int64_t max_controlled_memory = 0;
  std::int64_t total_memory = 0;
  std::int64_t max_total_memory = 0;
};

struct sync_copy {
  std::uint32_t class_index = 0;
  std::uint64_t identity = 0;
  std::uint64_t owner_thread_id = 0;
  std::uint32_t readers = 0;
  wait_stat stat{};
};

struct actor_copy {
  std::uint8_t enabled = 0;
  std::uint8_t history = 0;
  std::uint8_t trace_enabled = 0;
  fixed_str<kHostLen> host;
  fixed_str<kUserLen> user;
  fixed_str<kUserLen> role;
};

// with_name false: c.name is left empty (a class's name never changes once it is
// registered, so a reader that has it does not copy it again).
inline rd read_class(const class_record& r, class_copy& c, bool with_name = true) {
  return read_versioned(r, [&c, with_name](const class_record& s) {
    c.kind = load_relaxed(s.kind);
    c.kind_index = load_relaxed(s.kind_index);
    c.flags = load_relaxed(s.flags);
    c.traits = load_relaxed(s.traits);
    c.stat = load_stat(s.stat);
    if (with_name) c.name.load(s.name);
  });
}

inline rd read_thread(const thread_record& r, thread_copy& c, std::uint32_t* lock_out = nullptr) {
  return read_versioned(
      r,
      [&c](const thread_record& s) {
        c.class_index = load_relaxed(s.class_index);
        c.thread_id = load_relaxed(s.thread_id);
        c.os_thread_id = load_relaxed(s.os_thread_id);
        c.parent_thread_id = load_relaxed(s.parent_thread_id);
        c.instrumented = load_relaxed(s.instrumented);
        c.history = load_relaxed(s.history);
        c.foreground = load_relaxed(s.foreground);
        c.history_index = load_relaxed(s.history_index);
        c.user.load(s.user);
        c.host.load(s.host);
        c.role.load(s.role);
        c.controlled_memory = load_relaxed(s.controlled_memory);
        c.max_controlled_memory = load_relaxed(s.max_controlled_memory);
        c.total_memory = load_relaxed(s.total_memory);
        c.max_total_memory = load_relaxed(s.max_total_memory);
        c.name.load(s.name);
      },
      lock_out);
}

inline rd read_sync(const sync_instance& r, sync_copy& c, std::uint32_t* lock_out = nullptr) {
  return read_versioned(
      r,
      [&c](const sync_instance& s) {
        c.class_index = load_relaxed(s.class_index);
        c.identity = load_relaxed(s.identity);
        c.owner_thread_id = load_relaxed(s.owner_thread_id);
        c.readers = load_relaxed(s.readers);
        c.stat = load_stat(s.stat);
      },
      lock_out);
}

inline rd read_actor(const actor_record& r, actor_copy& c) {
  return read_versioned(r, [&c](const actor_record& s) {
    c.enabled = load_relaxed(s.enabled);
    c.history = load_relaxed(s.history);
    c.trace_enabled = load_relaxed(s.trace_enabled);
    c.host.load(s.host);
    c.user.load(s.user);
    c.role.load(s.role);
  });
}

struct file_copy {
  std::uint32_t class_index = 0;
  std::uint32_t open_count = 0;
  std::uint64_t identity = 0;
  io_stats stats = kZeroIoStats;
  wait_stat waits = kZeroStat;  // its row of events_waits_summary_by_instance (kArrayFileWaitStats)
  fixed_str<kObjectNameLen> name;
  bool name_ok = false;
};

struct object_copy {
  std::uint8_t object_type = 0;
  std::uint8_t enabled = 0;
  std::uint8_t timed = 0;
  fixed_str<kObjectSchemaLen> schema;
  fixed_str<kTableNameLen> name;
};

inline void copy_file(const file_instance& s, file_copy& c) {
  c.class_index = load_relaxed(s.class_index);
  c.open_count = load_relaxed(s.open_count);
  c.identity = load_relaxed(s.identity);
  c.stats = load_io_stats(s.stats);
  c.name_ok = load_file_name(s, c.name);
}

inline rd read_file(const file_instance& r, file_copy& c) {
  const rd result = read_versioned(r, [&c](const file_instance& s) { copy_file(s, c); });
  return result == rd::ok && !c.name_ok ? rd::torn : result;
}

struct socket_copy {
  std::uint32_t class_index = 0;
  std::int32_t fd = 0;
  std::uint64_t identity = 0;
  std::uint64_t thread_id = 0;
  std::uint8_t state = 0;
  std::uint32_t port = 0;
  io_stats stats = kZeroIoStats;
  wait_stat waits = kZeroStat;  // its row of events_waits_summary_by_instance (kArraySocketWaitStats)
  fixed_str<kSocketIpLen> ip;
  bool address_ok = false;
};

inline rd read_socket(const socket_instance& r, socket_copy& c) {
  const rd result = read_versioned(r, [&c](const socket_instance& s) {
    c.class_index = load_relaxed(s.class_index);
    c.fd = load_relaxed(s.fd);
    c.identity = load_relaxed(s.identity);
    c.thread_id = load_relaxed(s.thread_id);
    c.state = load_relaxed(s.state);
    c.stats = load_io_stats(s.stats);
    c.address_ok = load_socket_address(s, c.ip, c.port);
  });
  return result == rd::ok && !c.address_ok ? rd::torn : result;
}

inline rd read_object(const object_record& r, object_copy& c) {
  return read_versioned(r, [&c](const object_record& s) {
    c.object_type = load_relaxed(s.object_type);
    c.enabled = load_relaxed(s.enabled);
    c.timed = load_relaxed(s.timed);
    c.schema.load(s.schema);
    c.name.load(s.name);
  });
}

// A record a wait event names by (index, version): a file instance or a table share.
// It still is the event's object while its version is the event's, allocated or freed
// since (a freed record keeps its name until reused). Dirty: being reused (the old
// version is still in the word then) or renamed; looked at again, then given up.
// Version 0 is never the version of an allocated record (allocation adds
// kVersionInc to it), so it names nothing. True when copy ran on a stable record.
template <class Rec, class Copy>
inline bool read_referenced(const Rec& r, std::uint32_t version, Copy&& copy) {
  if (version == 0 || (version & kStateMask) != 0) return false;
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t l1 = load_acquire(r.lock);
    const std::uint32_t state = l1 & kStateMask;
    if (state == kStateDirty) {
      cpu_relax();
      continue;
    }
    if ((state != kStateAllocated && state != kStateFree) || (l1 & ~kStateMask) != version) return false;
    copy(r);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.lock) == l1) return true;
    cpu_relax();
  }
  return false;
}

struct wait_copy {
  std::uint8_t state = 0;
  std::uint8_t timer = 0;
  std::uint8_t operation = 0;
  std::uint8_t nesting_type = 0;
  std::uint32_t class_index = 0;
  std::uint32_t source_index = 0;
  std::uint64_t thread_id = 0;
  std::uint64_t event_id = 0;
  std::uint64_t end_event_id = 0;
  std::uint64_t nesting_event_id = 0;
  std::uint64_t timer_start = 0;
  std::uint64_t timer_end = 0;
  std::uint64_t object_instance_begin = 0;
  std::int64_t number_of_bytes = 0;
  std::uint8_t object_kind = 0;
  std::uint32_t object_index = 0;
  std::uint32_t object_version = 0;
  std::uint32_t index_number = 0;
  std::uint32_t flags = 0;
  std::uint64_t blocking_thread_id = 0;
  std::uint64_t blocking_event_id = 0;
};

// Seqlock copy: an even sequence unchanged around the copy.
inline rd read_wait(const wait_record& r, wait_copy& c) {
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t s1 = load_acquire(r.seq);
    if ((s1 & 1u) != 0) {
      cpu_relax();
      continue;
    }
    c.state = load_relaxed(r.state);
    c.timer = load_relaxed(r.timer);
    c.operation = load_relaxed(r.operation);
    c.nesting_type = load_relaxed(r.nesting_type);
    c.class_index = load_relaxed(r.class_index);
    c.source_index = load_relaxed(r.source_index);
    c.thread_id = load_relaxed(r.thread_id);
    c.event_id = load_relaxed(r.event_id);
    c.end_event_id = load_relaxed(r.end_event_id);
    c.nesting_event_id = load_relaxed(r.nesting_event_id);
    c.timer_start = load_relaxed(r.timer_start);
    c.timer_end = load_relaxed(r.timer_end);
    c.object_instance_begin = load_relaxed(r.object_instance_begin);
    c.number_of_bytes = load_relaxed(r.number_of_bytes);
    c.object_kind = load_relaxed(r.object_kind);
    c.object_index = load_relaxed(r.object_index);
    c.object_version = load_relaxed(r.object_version);
    c.index_number = load_relaxed(r.index_number);
    c.flags = load_relaxed(r.flags);
    c.blocking_thread_id = load_relaxed(r.blocking_thread_id);
    c.blocking_event_id = load_relaxed(r.blocking_event_id);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.seq) == s1) return rd::ok;
    cpu_relax();
  }
  return rd::torn;
}

// Seqlock copy of a stage or transaction record: word by word, accepted when an
// even sequence did not move around the copy.
template <class R>
inline rd read_seq_record(const R& r, R& out) {
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t s1 = load_acquire(r.seq);
    if ((s1 & 1u) != 0) {
      cpu_relax();
      continue;
    }
    copy_words(&out, &r, sizeof(R));
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.seq) == s1) return rd::ok;
    cpu_relax();
  }
  return rd::torn;
}

// A statement record and its SQL_TEXT (at most max_text bytes, as UTF-8).
inline rd read_statement(const statement_record& r, statement_record& out, std::string& text,
                         std::uint64_t max_text) {
  std::string raw;
  for (int a = 0; a < kAttempts; ++a) {
    const std::uint32_t s1 = load_acquire(r.seq);
    if ((s1 & 1u) != 0) {
      cpu_relax();
      continue;
    }
    copy_words(&out, &r, sizeof(statement_record));
    std::uint64_t len = out.sql_text_length;
    if (len > max_text) len = max_text;
    text.clear();
    raw.resize(len);
    const char* src = statement_text(r);
    for (std::uint64_t k = 0; k < len; ++k) raw[k] = load_relaxed(src[k]);
    append_utf8(text, raw.data(), len);
    std::atomic_thread_fence(std::memory_order_acquire);
    if (load_relaxed(r.seq) == s1) return rd::ok;
    cpu_relax();
  }
  return rd::torn;
}

// ---------------------------------------------------------------------------
// Timer conversion with the header's converters.

struct converter {
  std::uint64_t base = 0;
  std::uint64_t mult = 0;  // 0: unavailable
  std::uint32_t shift = 0;
  // CYCLE's recalibrations (cycle_epochs.h), oldest first; none for other timers.
  std::uint32_t epoch_count = 0;
  const epoch_copy* epochs = nullptr;
};

// ps = ((raw - base) * mult) >> shift, saturated to INT64_MAX; raw < base gives 0.
// A value taken in a later calibration epoch is converted with that epoch.
inline std::uint64_t to_pico(const converter& c, std::uint64_t raw) {
  if (c.epoch_count != 0 && raw >= c.epochs[0].raw_start) {
    const std::uint64_t ps = epoch_to_pico(*epoch_of(c.epochs, c.epoch_count, raw), c.shift, raw);
    return ps > kInt64Max ? kInt64Max : ps;
  }
  if (raw < c.base) return 0;
  const u128 p = (static_cast<u128>(raw - c.base) * c.mult) >> c.shift;
  return p > kInt64Max ? kInt64Max : static_cast<std::uint64_t>(p);
}

inline bool is_wait_kind(std::uint8_t kind) {
  return (kind >= kKindMutex && kind <= kKindTable) || kind == kKindIdle || kind == kKindSocket ||
         kind == kKindMetadata || kind == kKindTableLock || kind == kKindSem;
}
inline bool is_sync_kind(std::uint8_t kind) {
  return (kind >= kKindMutex && kind <= kKindCond) || kind == kKindSem;
}

}  // namespace pfs::reader::detail
