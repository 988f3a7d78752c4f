// TRUNCATE of the memory summaries, as MySQL 8.0 does it ("Memory Summary Tables"):
// truncation frees nothing and keeps what is in use. COUNT_ALLOC and COUNT_FREE are
// both reduced by the same value (the pairs that cancel out), so are the bytes, and
// the low and high marks become the current values. Truncating the by-thread table
// moves those pairs into the classes' global part, so the global table is unchanged
// (MySQL's memory_partial_aggregate); truncating the global table rebases every row.
#include "agent/region/account_layout.h"
#include "agent/region/memory_layout.h"
#include "agent/region/setup.h"

namespace pfs::setup {
namespace {

using namespace pfs::layout;

// Rebases one row; what was taken from it goes to into (may be nullptr).
void rebase(memory_stat& s, memory_stat* into) {
  // Frees other threads counted for this row (memory_claim) join its own frees.
  const std::uint64_t claimed_count = __atomic_exchange_n(&s.claimed_count, 0, __ATOMIC_RELAXED);
  const std::uint64_t claimed_bytes = __atomic_exchange_n(&s.claimed_bytes, 0, __ATOMIC_RELAXED);
  std::uint64_t count_alloc = load_relaxed(s.count_alloc);
  std::uint64_t count_free = load_relaxed(s.count_free) + claimed_count;
  std::uint64_t bytes_alloc = load_relaxed(s.bytes_alloc);
  std::uint64_t bytes_free = load_relaxed(s.bytes_free) + claimed_bytes;
  const std::uint64_t count_base = count_alloc < count_free ? count_alloc : count_free;
  const std::uint64_t bytes_base = bytes_alloc < bytes_free ? bytes_alloc : bytes_free;
  count_alloc -= count_base;
  count_free -= count_base;
  bytes_alloc -= bytes_base;
  bytes_free -= bytes_base;
  store_relaxed(s.count_alloc, count_alloc);
  store_relaxed(s.count_free, count_free);
  store_relaxed(s.bytes_alloc, bytes_alloc);
  store_relaxed(s.bytes_free, bytes_free);
  const auto count_used = static_cast<std::int64_t>(count_alloc - count_free);
  const auto bytes_used = static_cast<std::int64_t>(bytes_alloc - bytes_free);
  store_relaxed(s.low_count, count_used);
  store_relaxed(s.high_count, count_used);
  store_relaxed(s.low_bytes, bytes_used);
  store_relaxed(s.high_bytes, bytes_used);
  if (into == nullptr) return;
  __atomic_fetch_add(&into->count_alloc, count_base, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into->count_free, count_base, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into->bytes_alloc, bytes_base, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into->bytes_free, bytes_base, __ATOMIC_RELAXED);
}

}  // namespace

void reset_memory_summaries(const region_map& region, bool by_thread) {
  auto* rows = region.array<memory_stat>(kArrayThreadMemoryStats);
  auto* classes = region.array<memory_class_stat>(kArrayClassMemoryStats);
  const auto* threads = region.array<thread_record>(kArrayThreads);
  const std::uint64_t per = region.count(kArrayClassMemoryStats);
  if (classes == nullptr || per == 0) return;
  for (std::uint64_t i = 0;
       rows != nullptr && threads != nullptr && i < region.count(kArrayThreadMemoryStats); ++i) {
    const std::uint64_t slot = i / per;
    if (slot >= region.count(kArrayThreads) ||
        (load_acquire(threads[slot].lock) & kStateMask) != kStateAllocated)
      continue;
    rebase(rows[i], by_thread ? &classes[i % per].stat : nullptr);
  }
  if (!by_thread)
    for (std::uint64_t c = 0; c < per; ++c) rebase(classes[c].stat, nullptr);
  __atomic_fetch_add(&region.header().setup_generation, 1, __ATOMIC_RELEASE);
}

void reset_holder_memory(const region_map& region, holder_kind kind) {
  // The live threads' rows first (their pairs into the global part, as TRUNCATE of
  // the by-thread table), then the holders' of that kind, and the accounts' too
  // when a user or host table is truncated (MySQL flushes accounts into them).
  reset_memory_summaries(region, true);
  auto* rows = region.array<memory_stat>(kArrayAccountMemoryStats);
  const auto* holders = region.array<account_record>(kArrayAccounts);
  const std::uint64_t per = region.count(kArrayClassMemoryStats);
  for (std::uint64_t i = 0;
       rows != nullptr && holders != nullptr && per != 0 && i < region.count(kArrayAccountMemoryStats); ++i) {
    const account_record& h = holders[i / per];
    const std::uint8_t k = load_relaxed(h.kind);
    if ((load_acquire(h.lock) & kStateMask) == kStateAllocated && (k == kind || k == kHolderAccount))
      rebase(rows[i], nullptr);
  }
}

}  // namespace pfs::setup
