// The wait histogram pool: per (thread, class) histograms written with plain stores,
// folded into the class's shared one when the thread goes; the statement histogram.
#include "agent/provider/internal/work_internal.h"

namespace pfs::detail {

// A histogram of the pool for (thread, class_index); 0 when the pool is used up.
std::uint32_t claim_pool_histogram(std::uint64_t thread_id, std::uint32_t class_index) {
  for (std::uint64_t i = 0; i < g_work.wait_pool_size; ++i) {
    thread_histogram& th = g_work.wait_pool[i];
    std::uint32_t word = load_relaxed(th.lock);
    if ((word & kStateMask) != kStateFree) continue;
    if (!__atomic_compare_exchange_n(&th.lock, &word, (word & ~kStateMask) | kStateDirty, false,
                                     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
      continue;
    store_relaxed(th.class_index, class_index);
    store_relaxed(th.thread_id, thread_id);
    for (std::uint64_t& c : th.h.counts) store_relaxed(c, std::uint64_t{0});
    store_release(th.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
    return static_cast<std::uint32_t>(i + 1);
  }
  bump_lost(kWaitHistogramsShared);
  return 0;
}

namespace {
// Folds a pool histogram's first n counts into a shared one (atomic adds) and frees it.
void release_pool_counts(thread_histogram& th, std::uint64_t* into, std::uint32_t n) {
  const std::uint32_t word = load_relaxed(th.lock);
  store_relaxed(th.lock, (word & ~kStateMask) | kStateDirty);
  std::atomic_thread_fence(std::memory_order_release);
  for (std::uint32_t b = 0; b < n; ++b) add_atomic(into[b], load_relaxed(th.h.counts[b]));
  store_release(th.lock, ((word & ~kStateMask) + kVersionInc) | kStateFree);
}
}  // namespace

// A thread's wait histogram of a class into the class's; its statement histogram
// into events_statements_histogram_global's.
void release_pool_histogram(thread_histogram& th, wait_histogram& into) {
  release_pool_counts(th, into.counts, kWaitHistogramBuckets);
}
void release_pool_histogram(thread_histogram& th, latency_histogram& into) {
  release_pool_counts(th, into.counts, kHistogramBuckets);
}

// A timed statement's bucket in events_statements_histogram_global.
void add_statement_to_histogram(work_state& w, std::uint64_t thread_id, std::uint64_t ps) {
  if (g_work.statement_histogram == nullptr) return;
  if (!w.statement_histogram_claimed) [[unlikely]] {
    w.statement_histogram_claimed = true;
    const std::uint32_t e = claim_pool_histogram(thread_id, kStatementHistogramClass);
    w.statement_histogram = e != 0 ? &g_work.wait_pool[e - 1] : nullptr;
  }
  const std::uint32_t b = histogram::bucket_of(ps);
  if (w.statement_histogram != nullptr) {
    std::uint64_t& c = w.statement_histogram->h.counts[b];
    store_relaxed(c, load_relaxed(c) + 1);
  } else {
    __atomic_fetch_add(&g_work.statement_histogram->counts[b], 1, __ATOMIC_RELAXED);
  }
}

}  // namespace pfs::detail
