// The memory path, inline: a block counted in the calling thread's row of its
// class (memory_summary_by_thread_by_event_name), the thread's totals
// (threads.*_MEMORY) and its running statement's peaks. agent_memory.cpp's C ABI
// and the interposer's malloc family (preload_memory.cpp) run it, so that a
// counted malloc+free costs a few loads and stores besides the allocator.
//
// Same rules as the event path: no lock, no allocation, no system call; the
// thread's row has one writer (the thread), so it is counted with relaxed loads
// and stores. What has no thread row goes out of line to the class row.
#pragma once

#include <cstddef>
#include <cstdint>

#include "agent/provider/event_path.h"
#include "agent/region/memory_layout.h"

namespace pfs::detail {

// A running statement's peaks: MAX_CONTROLLED_MEMORY and MAX_TOTAL_MEMORY.
struct statement_peaks {
  std::int64_t controlled = 0;
  std::int64_t total = 0;
};

// Per thread slot, process-local: the peaks of its running statements by level.
struct memory_thread_state {
  std::uint32_t depth = 0;
  statement_peaks peaks[kMaxStatementStack];
};

// Process-local view of the memory arrays, filled by init_memory.
struct memory_hot_state {
  memory_stat* thread_rows = nullptr;       // thread_count * per_thread
  memory_class_stat* class_rows = nullptr;  // per_thread
  std::uint32_t per_thread = 0;             // max_memory_classes
  thread_record* threads = nullptr;
  std::uint32_t thread_count = 0;
  memory_thread_state* states = nullptr;  // one per thread slot (new[] at init, kept)
};
extern memory_hot_state g_memory;

// The class of a key when it is a memory class with rows; nullptr otherwise.
inline const class_record* memory_class_of(pfs_key key) {
  if (key == 0 || key > g_hot.class_count || g_hot.classes == nullptr) return nullptr;
  const class_record& c = g_hot.classes[key - 1];
  if ((load_acquire(c.lock) & kStateMask) != kStateAllocated || c.kind != kKindMemory ||
      c.kind_index >= g_memory.per_thread)
    return nullptr;
  return &c;
}

// The calling thread's context when the thread has a row for class c; nullptr when
// the block is counted in the class row (a global-only class, a thread without a
// slot or without rows, or one not registered yet: the caller may register it
// first). A thread without a slot (array full, agent stopping, thread exiting) has
// a context of its own with no rows.
inline thread_context* memory_thread() {
  thread_context* t = tls_context;
  if (t == nullptr || t->memory_rows == nullptr) return nullptr;
  return t;
}
inline thread_context* memory_thread_of(const class_record& c) {
  if (c.traits & kMemoryGlobalOnly) return nullptr;
  return memory_thread();
}

inline memory_stat& memory_row_of(const thread_context& t, const class_record& c) {
  return t.memory_rows[c.kind_index];
}

// The thread's own row: one writer, relaxed loads and stores; the marks follow the
// current values (allocations minus frees, claimed blocks included).
inline void count_in_thread_row(memory_stat& s, std::uint64_t allocs, std::uint64_t alloc_bytes,
                                std::uint64_t frees, std::uint64_t free_bytes) {
  const std::uint64_t ca = load_relaxed(s.count_alloc) + allocs;
  const std::uint64_t cf = load_relaxed(s.count_free) + frees;
  const std::uint64_t ba = load_relaxed(s.bytes_alloc) + alloc_bytes;
  const std::uint64_t bf = load_relaxed(s.bytes_free) + free_bytes;
  store_relaxed(s.count_alloc, ca);
  store_relaxed(s.count_free, cf);
  store_relaxed(s.bytes_alloc, ba);
  store_relaxed(s.bytes_free, bf);
  const auto used_count = static_cast<std::int64_t>(ca - cf - load_relaxed(s.claimed_count));
  const auto used_bytes = static_cast<std::int64_t>(ba - bf - load_relaxed(s.claimed_bytes));
  if (used_count > load_relaxed(s.high_count)) store_relaxed(s.high_count, used_count);
  if (used_count < load_relaxed(s.low_count)) store_relaxed(s.low_count, used_count);
  if (used_bytes > load_relaxed(s.high_bytes)) store_relaxed(s.high_bytes, used_bytes);
  if (used_bytes < load_relaxed(s.low_bytes)) store_relaxed(s.low_bytes, used_bytes);
}

// threads.CONTROLLED_MEMORY / TOTAL_MEMORY and their maxima, and the running
// statement's peaks (they only rise when the thread holds more).
inline void account_thread_memory(thread_context& t, const class_record& c, std::int64_t delta) {
  thread_record& r = *t.rec;
  const std::int64_t total = load_relaxed(r.total_memory) + delta;
  store_relaxed(r.total_memory, total);
  std::int64_t controlled = load_relaxed(r.controlled_memory);
  if (c.traits & kMemoryControlled) {
    controlled += delta;
    store_relaxed(r.controlled_memory, controlled);
  }
  if (delta <= 0) return;
  if (total > load_relaxed(r.max_total_memory)) store_relaxed(r.max_total_memory, total);
  if (controlled > load_relaxed(r.max_controlled_memory)) store_relaxed(r.max_controlled_memory, controlled);
  memory_thread_state& m = *t.memory_state;
  if (m.depth == 0) return;
  statement_peaks& p = m.peaks[m.depth - 1];
  if (total > p.total) p.total = total;
  if (controlled > p.controlled) p.controlled = controlled;
}

// A block of size bytes allocated (or freed) by thread t in class c, t holding a row
// (memory_thread_of). An allocation is counted only while the thread is enabled (the
// caller looked at the class); a free always (a block counted at allocation is
// counted at free). Each stores only what it changes: an allocation cannot lower
// the current values, nor a free raise them. traits: c's, or a constant where the
// caller knows them (the interposer's heap class), so that its tests fold away.
inline bool count_thread_alloc(thread_context& t, const class_record& c, std::size_t size,
                               std::uint8_t traits) {
  thread_record& r = *t.rec;
  if (!(load_relaxed(r.derived) & kThreadEnabled)) return false;
  memory_stat& s = memory_row_of(t, c);
  const std::uint64_t ca = load_relaxed(s.count_alloc) + 1;
  const std::uint64_t ba = load_relaxed(s.bytes_alloc) + size;
  store_relaxed(s.count_alloc, ca);
  store_relaxed(s.bytes_alloc, ba);
  const auto used_count =
      static_cast<std::int64_t>(ca - load_relaxed(s.count_free) - load_relaxed(s.claimed_count));
  const auto used_bytes =
      static_cast<std::int64_t>(ba - load_relaxed(s.bytes_free) - load_relaxed(s.claimed_bytes));
  if (used_count > load_relaxed(s.high_count)) store_relaxed(s.high_count, used_count);
  if (used_bytes > load_relaxed(s.high_bytes)) store_relaxed(s.high_bytes, used_bytes);
  const auto delta = static_cast<std::int64_t>(size);
  const std::int64_t total = load_relaxed(r.total_memory) + delta;
  store_relaxed(r.total_memory, total);
  if (total > load_relaxed(r.max_total_memory)) store_relaxed(r.max_total_memory, total);
  std::int64_t controlled = 0;
  if (traits & kMemoryControlled) {
    controlled = load_relaxed(r.controlled_memory) + delta;
    store_relaxed(r.controlled_memory, controlled);
    if (controlled > load_relaxed(r.max_controlled_memory))
      store_relaxed(r.max_controlled_memory, controlled);
  }
  memory_thread_state& m = *t.memory_state;
  if (m.depth != 0) [[unlikely]] {
    statement_peaks& p = m.peaks[m.depth - 1];
    if (total > p.total) p.total = total;
    if (!(traits & kMemoryControlled)) controlled = load_relaxed(r.controlled_memory);
    if (controlled > p.controlled) p.controlled = controlled;
  }
  return true;
}

inline void count_thread_free(thread_context& t, const class_record& c, std::size_t size,
                              std::uint8_t traits) {
  thread_record& r = *t.rec;
  memory_stat& s = memory_row_of(t, c);
  const std::uint64_t cf = load_relaxed(s.count_free) + 1;
  const std::uint64_t bf = load_relaxed(s.bytes_free) + size;
  store_relaxed(s.count_free, cf);
  store_relaxed(s.bytes_free, bf);
  const auto used_count =
      static_cast<std::int64_t>(load_relaxed(s.count_alloc) - cf - load_relaxed(s.claimed_count));
  const auto used_bytes =
      static_cast<std::int64_t>(load_relaxed(s.bytes_alloc) - bf - load_relaxed(s.claimed_bytes));
  if (used_count < load_relaxed(s.low_count)) store_relaxed(s.low_count, used_count);
  if (used_bytes < load_relaxed(s.low_bytes)) store_relaxed(s.low_bytes, used_bytes);
  const auto delta = static_cast<std::int64_t>(size);
  store_relaxed(r.total_memory, load_relaxed(r.total_memory) - delta);
  if (traits & kMemoryControlled)
    store_relaxed(r.controlled_memory, load_relaxed(r.controlled_memory) - delta);
}

inline bool count_thread_alloc(thread_context& t, const class_record& c, std::size_t size) {
  return count_thread_alloc(t, c, size, c.traits);
}
inline void count_thread_free(thread_context& t, const class_record& c, std::size_t size) {
  count_thread_free(t, c, size, c.traits);
}

}  // namespace pfs::detail
