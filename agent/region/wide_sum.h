// Picosecond sums wider than 64 bits: a 64-bit low word (the old `sum` field) and
// a high word that counts its carries (`sum_hi`), so a sum wraps after 2^128 ps
// instead of 2^64 ps (213 days). Writers add to the low word as before and touch
// the high word only when the low word wraps (once per 213 cumulative days).
#pragma once

#include <cstdint>

#include "agent/region/io_layout.h"
#include "agent/region/region_layout.h"

namespace pfs::layout {

__extension__ typedef unsigned __int128 wide_sum;

inline constexpr wide_sum make_wide(std::uint64_t lo, std::uint64_t hi) {
  return static_cast<wide_sum>(hi) << 64 | lo;
}

// Single writer: plain relaxed stores, the carry after the low word.
inline void add_sum(std::uint64_t& lo, std::uint64_t& hi, std::uint64_t x) {
  const std::uint64_t n = load_relaxed(lo) + x;
  store_relaxed(lo, n);
  if (n < x) store_relaxed(hi, load_relaxed(hi) + 1);
}

// Several writers: the add whose old value wraps carries (exactly one per wrap).
inline void add_sum_atomic(std::uint64_t& lo, std::uint64_t& hi, std::uint64_t x) {
  const std::uint64_t old = __atomic_fetch_add(&lo, x, __ATOMIC_RELAXED);
  if (old + x < old) __atomic_fetch_add(&hi, std::uint64_t{1}, __ATOMIC_RELAXED);
}

// Folds a whole wide sum into a shared one (a thread's statistics at its exit).
inline void add_wide_atomic(std::uint64_t& lo, std::uint64_t& hi, wide_sum x) {
  add_sum_atomic(lo, hi, static_cast<std::uint64_t>(x));
  const auto x_hi = static_cast<std::uint64_t>(x >> 64);
  if (x_hi != 0) __atomic_fetch_add(&hi, x_hi, __ATOMIC_RELAXED);
}

// A reader's copy: high word, low word, high word again until both high reads
// agree. What remains is the writer's window between its two stores: a read that
// lands there sees the new low word with the old high word (2^64 ps short), once
// per wrap of the low word; the next read is right (docs/design.md, "Overflow").
inline wide_sum load_sum(const std::uint64_t& lo, const std::uint64_t& hi) {
  std::uint64_t h1 = load_acquire(hi);
  for (;;) {
    const std::uint64_t l = load_acquire(lo);
    const std::uint64_t h2 = load_acquire(hi);
    if (h1 == h2) return make_wide(l, h1);
    h1 = h2;
  }
}

inline wide_sum load_sum(const wait_stat& s) { return load_sum(s.sum, s.sum_hi); }
inline wide_sum load_sum(const io_stat& s) { return load_sum(s.sum, s.sum_hi); }

// A whole statistic, its sum read as above.
inline wait_stat load_wait_stat(const wait_stat& s) {
  const wide_sum sum = load_sum(s);
  return wait_stat{load_relaxed(s.count), static_cast<std::uint64_t>(sum), load_relaxed(s.min),
                   load_relaxed(s.max), static_cast<std::uint64_t>(sum >> 64)};
}

inline void zero_sum(std::uint64_t& lo, std::uint64_t& hi) {
  store_relaxed(lo, std::uint64_t{0});
  store_relaxed(hi, std::uint64_t{0});
}

}  // namespace pfs::layout
