// lock_contention_by_instance: a contended mutex or rwlock wait, added to the
// entry of (its lock instance, the SOURCE of the holder's acquisition). Only the
// contended path comes here, and it pays a hash lookup and four stores (the
// waiter now holds the lock, so nobody else writes the lock's entries).
#include "agent/provider/internal/agent_internal.h"
#include "agent/region/wide_sum.h"

namespace pfs::detail {

namespace {

// The entry of key (and incarnation): found, or claimed in one of the
// kContentionProbes slots from the key's hash; nullptr when they are all taken.
contention_record* find_or_claim(contention_record* table, std::uint64_t n, std::uint64_t key,
                                 std::uint32_t incarnation) {
  const std::uint64_t hash = (key ^ (std::uint64_t{incarnation} << 17)) * 0x9E3779B97F4A7C15ull;
  // The high 32 bits of the hash scaled to [0, n) with a multiply, not a division
  // (a 64-bit division is the slowest instruction of this path).
  std::uint64_t slot = ((hash >> 32) * n) >> 32;
  for (std::uint32_t probe = 0; probe < kContentionProbes && probe < n; ++probe, ++slot) {
    if (slot == n) slot = 0;
    contention_record& r = table[slot];
    std::uint64_t k = load_acquire(r.key);
    if (k == 0) {
      if (__atomic_compare_exchange_n(&r.key, &k, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        // Nobody adds to it before the incarnation is published (lookups
        // compare it), so plain stores start its counts; readers show it once
        // the incarnation matches its instance's.
        store_relaxed(r.stat.count, std::uint64_t{0});
        zero_sum(r.stat.sum, r.stat.sum_hi);
        store_relaxed(r.stat.min, UINT64_MAX);
        store_relaxed(r.stat.max, std::uint64_t{0});
        store_release(r.incarnation, incarnation);
        return &r;
      }
      // Another waiter claimed it first: perhaps for this very key.
    }
    if (k == key && load_acquire(r.incarnation) == incarnation) return &r;
  }
  return nullptr;
}

}  // namespace

void add_contention(const wait_locker& l, std::uint64_t ps, bool exclusive) {
  const agent_state* a = g_agent;
  if (a == nullptr || a->contention == nullptr || (l.class_flags & kFlagInstanceStats) == 0) return;
  // The instance's kind and index from its address: no class lookup.
  const sync_instance* s = l.instance;
  const auto at = reinterpret_cast<std::uintptr_t>(s);
  const auto in = [at](const sync_instance* base, std::uint64_t count) {
    const auto first = reinterpret_cast<std::uintptr_t>(base);
    return base != nullptr && at >= first && (at - first) / sizeof(sync_instance) < count;
  };
  std::uint64_t kind = 0, index = 0;
  if (in(a->mutexes, a->mutex_count)) {
    kind = kContentionMutex;
    index = static_cast<std::uint64_t>(s - a->mutexes) + 1;
  } else if (in(a->rwlocks, a->rwlock_count)) {
    kind = kContentionRwlock;
    index = static_cast<std::uint64_t>(s - a->rwlocks) + 1;
  } else {
    return;  // a condition: not a lock
  }
  contention_record* r = find_or_claim(a->contention, a->contention_count,
                                       contention_key(kind, index, l.blocking_source), load_relaxed(s->lock));
  if (r == nullptr) {
    bump_lost(kLostLockContention);
    return;
  }
  // A waiter that now holds the lock alone is the only writer of the lock's
  // entries (as of its instance statistics): plain stores. Readers, and a wait
  // that failed, share them: atomic adds.
  if (exclusive)
    aggregate_single(r->stat, l.event.timer != 0, ps);
  else
    aggregate_shared(r->stat, l.event.timer != 0, ps);
}

}  // namespace pfs::detail
