// Folding one statistics record into another that others update too (atomic adds,
// atomic MIN and MAX), and zeroing one: what a thread's rows do when they move into
// a global bucket or an account (the provider at thread exit, setup writers at
// TRUNCATE).
#pragma once

#include <cstdint>

#include "agent/region/error_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/region_layout.h"
#include "agent/region/setup.h"
#include "agent/region/wide_sum.h"
#include "agent/region/work_layout.h"

namespace pfs::layout {

inline void zero_record(wait_stat& s) {
  store_relaxed(s.count, std::uint64_t{0});
  zero_sum(s.sum, s.sum_hi);
  store_relaxed(s.min, UINT64_MAX);
  store_relaxed(s.max, std::uint64_t{0});
}
inline void zero_record(statement_stat& s) {
  zero_record(s.time);
  for (std::uint64_t* f : {&s.lock_time, &s.errors, &s.warnings, &s.rows_affected, &s.rows_sent,
                           &s.rows_examined, &s.cpu_time, &s.lock_time_hi, &s.cpu_time_hi})
    store_relaxed(*f, std::uint64_t{0});
}
inline void zero_record(transaction_stat& s) {
  zero_record(s.all);
  zero_record(s.read_write);
  zero_record(s.read_only);
}
inline void zero_record(error_stat& s) {
  store_relaxed(s.raised, std::int64_t{0});
  store_relaxed(s.handled, std::uint64_t{0});
  store_relaxed(s.first_seen, std::uint64_t{0});
  store_relaxed(s.last_seen, std::uint64_t{0});
}
inline void zero_record(memory_stat& s) {
  for (std::uint64_t* f :
       {&s.count_alloc, &s.count_free, &s.bytes_alloc, &s.bytes_free, &s.claimed_count, &s.claimed_bytes})
    store_relaxed(*f, std::uint64_t{0});
  for (std::int64_t* m : {&s.low_count, &s.high_count, &s.low_bytes, &s.high_bytes})
    store_relaxed(*m, std::int64_t{0});
}

inline void add_atomic_stat(wait_stat& into, const wait_stat& s) {
  const std::uint64_t n = load_relaxed(s.count);
  if (n == 0) return;
  __atomic_fetch_add(&into.count, n, __ATOMIC_RELAXED);
  add_wide_atomic(into.sum, into.sum_hi, load_sum(s));
  atomic_min(into.min, load_relaxed(s.min));
  atomic_max(into.max, load_relaxed(s.max));
}
inline void add_atomic_stat(statement_stat& into, const statement_stat& s) {
  add_atomic_stat(into.time, s.time);
  add_wide_atomic(into.lock_time, into.lock_time_hi, load_sum(s.lock_time, s.lock_time_hi));
  add_wide_atomic(into.cpu_time, into.cpu_time_hi, load_sum(s.cpu_time, s.cpu_time_hi));
  std::uint64_t statement_stat::*const fields[] = {&statement_stat::errors, &statement_stat::warnings,
                                                   &statement_stat::rows_affected, &statement_stat::rows_sent,
                                                   &statement_stat::rows_examined};
  for (auto f : fields) __atomic_fetch_add(&(into.*f), load_relaxed(s.*f), __ATOMIC_RELAXED);
  atomic_max(into.max_controlled_memory, load_relaxed(s.max_controlled_memory));
  atomic_max(into.max_total_memory, load_relaxed(s.max_total_memory));
}
inline void add_atomic_stat(transaction_stat& into, const transaction_stat& s) {
  add_atomic_stat(into.all, s.all);
  add_atomic_stat(into.read_write, s.read_write);
  add_atomic_stat(into.read_only, s.read_only);
}
// A memory row joins another as an exiting thread's joins its class's global part:
// the frees others counted for it (claims) are frees, the marks add up.
inline void add_atomic_stat(memory_stat& into, const memory_stat& from) {
  const memory_stat s = load_memory_stat(from);
  if (s.count_alloc == 0 && s.count_free == 0 && s.claimed_count == 0) return;
  __atomic_fetch_add(&into.count_alloc, s.count_alloc, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.count_free, s.count_free + s.claimed_count, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.bytes_alloc, s.bytes_alloc, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.bytes_free, s.bytes_free + s.claimed_bytes, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.high_count, s.high_count, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.low_count, s.low_count, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.high_bytes, s.high_bytes, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.low_bytes, s.low_bytes, __ATOMIC_RELAXED);
}
inline void add_atomic_stat(error_stat& into, const error_stat& from) {
  setup::fold_error_stat(into, load_error_stat(from));
}

}  // namespace pfs::layout
