// lock_contention_by_instance: a contended mutex or rwlock wait, added to the
// entry of (its lock instance, the SOURCE of the holder's acquisition). Only the
// contended path comes here; the waiter has just waited, so a few atomic
// operations on a shared entry cost nothing it would notice.
#include "agent/provider/agent_internal.h"

namespace pfs::detail {

namespace {

// The entry of key (and incarnation): found, or claimed in one of the
// kContentionProbes slots from the key's hash; nullptr when they are all taken.
contention_record* find_or_claim(contention_record* table, std::uint64_t n, std::uint64_t key,
                                 std::uint32_t incarnation) {
  const std::uint64_t hash = (key ^ (std::uint64_t{incarnation} << 17)) * 0x9E3779B97F4A7C15ull;
  const std::uint64_t start = (hash >> 32) % n;
  for (std::uint32_t probe = 0; probe < kContentionProbes && probe < n; ++probe) {
    contention_record& r = table[(start + probe) % n];
    std::uint64_t k = load_acquire(r.key);
    if (k == 0) {
      if (__atomic_compare_exchange_n(&r.key, &k, key, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
        // Nobody adds to it before the incarnation is published (lookups
        // compare it), so plain stores start its counts; readers show it once
        // the incarnation matches its instance's.
        store_relaxed(r.stat.count, std::uint64_t{0});
        store_relaxed(r.stat.sum, std::uint64_t{0});
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

void add_contention(const wait_locker& l, std::uint64_t ps) {
  agent_state* a = g_agent;
  if (a == nullptr || (l.class_flags & kFlagInstanceStats) == 0) return;
  const sync_instance* s = l.instance;
  const std::uint32_t key_class = l.event.class_index;
  if (s == nullptr || key_class == 0 || key_class > a->max_classes) return;
  const std::uint8_t kind = a->classes[key_class - 1].kind;
  if (kind != kKindMutex && kind != kKindRwlock) return;
  const array_id id = kind == kKindMutex ? kArrayMutexes : kArrayRwlocks;
  const sync_instance* base = a->region.array<sync_instance>(id);
  auto* table = a->region.array<contention_record>(kArrayLockContention);
  const std::uint64_t n = a->region.count(kArrayLockContention);
  if (base == nullptr || table == nullptr) return;
  const auto index = static_cast<std::uint64_t>(s - base) + 1;
  const std::uint64_t key =
      contention_key(kind == kKindMutex ? kContentionMutex : kContentionRwlock, index, l.blocking_source);
  contention_record* r = find_or_claim(table, n, key, load_relaxed(s->lock));
  if (r == nullptr) {
    bump_lost(kLostLockContention);
    return;
  }
  aggregate_shared(r->stat, l.event.timer != 0, ps);
}

}  // namespace pfs::detail
