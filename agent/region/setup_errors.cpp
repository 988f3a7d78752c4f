// TRUNCATE of the error summaries, as MySQL 8.0 does it: truncating
// events_errors_summary_by_thread_by_error moves each live thread's rows into the
// errors' global part (MySQL's aggregate_thread_errors), so the global table keeps
// its totals; truncating events_errors_summary_global_by_error resets the threads'
// rows and the global part alike. A reset row counts nothing and has not been
// seen (FIRST_SEEN and LAST_SEEN NULL).
#include "agent/region/error_layout.h"
#include "agent/region/setup.h"

namespace pfs::setup {
namespace {

using namespace pfs::layout;

void zero(error_stat& s) {
  store_relaxed(s.raised, std::int64_t{0});
  store_relaxed(s.handled, std::uint64_t{0});
  store_relaxed(s.first_seen, std::uint64_t{0});
  store_relaxed(s.last_seen, std::uint64_t{0});
}

// 0 means "never": the first non-zero time is the minimum.
void atomic_min_nonzero(std::uint64_t& field, std::uint64_t v) {
  if (v == 0) return;
  std::uint64_t seen = load_relaxed(field);
  while ((seen == 0 || v < seen) &&
         !__atomic_compare_exchange_n(&field, &seen, v, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
}

}  // namespace

void fold_error_stat(error_stat& into, const error_stat& from) {
  if (from.raised == 0 && from.handled == 0 && from.first_seen == 0) return;
  __atomic_fetch_add(&into.raised, from.raised, __ATOMIC_RELAXED);
  __atomic_fetch_add(&into.handled, from.handled, __ATOMIC_RELAXED);
  atomic_min_nonzero(into.first_seen, from.first_seen);
  atomic_max(into.last_seen, from.last_seen);
}

void reset_error_summaries(const region_map& region, bool by_thread) {
  auto* rows = region.array<error_stat>(kArrayThreadErrorStats);
  auto* global = region.array<error_stat>(kArrayClassErrorStats);
  const auto* threads = region.array<thread_record>(kArrayThreads);
  const std::uint64_t per = region.count(kArrayClassErrorStats);
  if (global == nullptr || per == 0) return;
  if (by_thread) fold_threads_into_holders(region, kFamilyErrors);  // MySQL moves them into the accounts
  for (std::uint64_t i = 0; rows != nullptr && threads != nullptr && i < region.count(kArrayThreadErrorStats);
       ++i) {
    const std::uint64_t slot = i / per;
    if (slot >= region.count(kArrayThreads) ||
        (load_acquire(threads[slot].lock) & kStateMask) != kStateAllocated)
      continue;
    if (by_thread) fold_error_stat(global[i % per], load_error_stat(rows[i]));
    zero(rows[i]);
  }
  if (!by_thread) {
    for (std::uint64_t e = 0; e < per; ++e) zero(global[e]);
    zero_holder_summaries(region, kFamilyErrors);
  }
  __atomic_fetch_add(&region.header().setup_generation, 1, __ATOMIC_RELEASE);
}

}  // namespace pfs::setup
