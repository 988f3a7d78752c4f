// Memory statistics (layout 5): the records of memory_summary_by_thread_by_event_name
// and memory_summary_global_by_event_name, as MySQL 8.0's memory instrumentation
// (psi_memory.h) keeps them.
//
// Each memory class (kind memory, class_record::kind_index = its rank among memory
// classes) has one memory_stat per thread slot, written by that thread only (relaxed
// loads and stores, no read-modify-write on the path), and one memory_class_stat
// written with atomic adds: what threads that exited held and did, what was counted
// on threads without a slot, and classes counted globally only.
#pragma once

#include <cstdint>
#include <type_traits>

#include "agent/region/region_layout.h"

namespace pfs::layout {

// class_record::traits of a memory class (PSI_FLAG_ONLY_GLOBAL_STAT and
// PSI_FLAG_MEM_COLLECT in MySQL's psi_memory.h).
inline constexpr std::uint8_t kMemoryGlobalOnly = 1;  // no per-thread rows: counted in the class row
inline constexpr std::uint8_t kMemoryControlled = 2;  // counts towards threads.CONTROLLED_MEMORY

// One (thread, class) pair. The counts since the row was started or truncated:
// CURRENT_COUNT_USED is count_alloc - count_free. low_* and high_* are the lowest
// and highest CURRENT values seen. claimed_* are frees another thread counted for
// this row (memory_claim moved a block away from this thread): atomic adds, read
// as part of the frees.
struct memory_stat {
  std::uint64_t count_alloc;
  std::uint64_t count_free;
  std::uint64_t bytes_alloc;
  std::uint64_t bytes_free;
  std::int64_t low_count;
  std::int64_t high_count;
  std::int64_t low_bytes;
  std::int64_t high_bytes;
  std::uint64_t claimed_count;
  std::uint64_t claimed_bytes;
};

// A class's global part: exited threads' rows folded in, and what was counted
// without a thread row (global-only classes, threads without a slot). Every field
// is changed with atomic operations.
struct memory_class_stat {
  memory_stat stat;
};

static_assert(sizeof(memory_stat) == 80);
static_assert(std::is_trivially_copyable_v<memory_stat> && std::is_standard_layout_v<memory_stat>);

// CURRENT_COUNT_USED and CURRENT_NUMBER_OF_BYTES_USED of a copied row.
inline std::int64_t memory_current_count(const memory_stat& s) {
  return static_cast<std::int64_t>(s.count_alloc - s.count_free - s.claimed_count);
}
inline std::int64_t memory_current_bytes(const memory_stat& s) {
  return static_cast<std::int64_t>(s.bytes_alloc - s.bytes_free - s.claimed_bytes);
}

// A consistent-enough copy of a row another thread writes (each field atomically).
inline memory_stat load_memory_stat(const memory_stat& s) {
  memory_stat c;
  c.count_alloc = load_relaxed(s.count_alloc);
  c.count_free = load_relaxed(s.count_free);
  c.bytes_alloc = load_relaxed(s.bytes_alloc);
  c.bytes_free = load_relaxed(s.bytes_free);
  c.low_count = load_relaxed(s.low_count);
  c.high_count = load_relaxed(s.high_count);
  c.low_bytes = load_relaxed(s.low_bytes);
  c.high_bytes = load_relaxed(s.high_bytes);
  c.claimed_count = load_relaxed(s.claimed_count);
  c.claimed_bytes = load_relaxed(s.claimed_bytes);
  return c;
}

// Adds one source row to an aggregate, as MySQL's memory_monitoring_aggregate: the
// counts add, and so do the low and high marks (the aggregate's marks bound the
// true ones: the sources did not all peak at the same moment).
inline void add_memory(memory_stat& into, const memory_stat& from) {
  into.count_alloc += from.count_alloc;
  into.count_free += from.count_free + from.claimed_count;
  into.bytes_alloc += from.bytes_alloc;
  into.bytes_free += from.bytes_free + from.claimed_bytes;
  into.low_count += from.low_count;
  into.high_count += from.high_count;
  into.low_bytes += from.low_bytes;
  into.high_bytes += from.high_bytes;
}

}  // namespace pfs::layout
