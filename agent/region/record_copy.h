// Word-wise copies of region records with relaxed atomic loads and stores: how the
// provider copies a finished stage, statement or transaction record into a
// history (a concurrent reader sees whole words, and its seqlock tells it whether
// the copy is complete), and how readers copy such records out. Records and their
// trailing text are 8-byte multiples at 8-byte aligned addresses.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "agent/region/region_layout.h"

namespace pfs::layout {

using region_word = std::uint64_t __attribute__((may_alias));
using region_half = std::uint32_t __attribute__((may_alias));

// Copies bytes (a multiple of 8) from src to dst, one relaxed 64-bit word at a time.
inline void copy_words(void* dst, const void* src, std::size_t bytes) {
  auto* d = static_cast<region_word*>(dst);
  const auto* s = static_cast<const region_word*>(src);
  for (std::size_t i = 0; i < bytes / 8; ++i)
    __atomic_store_n(d + i, __atomic_load_n(s + i, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
}

// Seqlock write bracket of any event record (its first field is the seq word).
template <class R>
inline std::uint32_t begin_record_write(R& r) {
  const std::uint32_t seq = load_relaxed(r.seq) | 1u;
  store_relaxed(r.seq, seq);
  std::atomic_thread_fence(std::memory_order_release);
  return seq;
}
template <class R>
inline void end_record_write(R& r, std::uint32_t seq) {
  store_release(r.seq, seq + 1);
}

// Publishes a copy of a seqlocked record (bytes: the record and the part of its
// trailing text in use, rounded up to 8) into dst under dst's own seqlock.
template <class R>
inline void publish_record(R& dst, const R& src, std::size_t bytes) {
  const std::uint32_t seq = begin_record_write(dst);
  auto* d = reinterpret_cast<char*>(&dst);
  const auto* s = reinterpret_cast<const char*>(&src);
  // The word after seq (state, timer, ...), then every word after it.
  __atomic_store_n(reinterpret_cast<region_half*>(d + 4),
                   __atomic_load_n(reinterpret_cast<const region_half*>(s + 4), __ATOMIC_RELAXED),
                   __ATOMIC_RELAXED);
  copy_words(d + 8, s + 8, bytes - 8);
  end_record_write(dst, seq);
}

}  // namespace pfs::layout
