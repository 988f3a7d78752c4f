// Accounts, users and hosts (account_layout.h): a thread's statistics moved into
// its holders (MySQL's aggregate_thread: into its account, or without one into its
// user and host), and TRUNCATE of the summaries by account, user and host and of
// the accounts, users and hosts tables, as MySQL 8.0 does them.
#include "agent/region/account_layout.h"
#include "agent/region/internal/stat_fold.h"
#include "agent/region/setup.h"

namespace pfs::setup {
namespace {

using namespace pfs::layout;

// The arrays of one family: the threads' rows, the holders' rows and the global
// bucket (none for waits: events_waits_summary_global_by_event_name keeps its own
// per-thread rows). Rows per thread (holder): the global bucket's count.
struct family_arrays {
  array_id thread_rows;
  array_id holder_rows;
  array_id global_rows;  // kArrayCount: none
  array_id per_count;    // the array whose count is the rows per thread
};

family_arrays arrays_of(account_family f) {
  switch (f) {
    case kFamilyWaits:
      return {kArrayThreadClassStats, kArrayAccountWaitStats, kArrayCount, kArrayClasses};
    case kFamilyStages:
      return {kArrayThreadStageStats, kArrayAccountStageStats, kArrayClassStageStats, kArrayClassStageStats};
    case kFamilyStatements:
      return {kArrayThreadStatementStats, kArrayAccountStatementStats, kArrayClassStatementStats,
              kArrayClassStatementStats};
    case kFamilyTransactions:
      return {kArrayThreadTransactionStats, kArrayAccountTransactionStats, kArrayClassTransactionStats,
              kArrayClassTransactionStats};
    case kFamilyMemory:
      return {kArrayThreadMemoryStats, kArrayAccountMemoryStats, kArrayCount, kArrayClassMemoryStats};
    case kFamilyErrors:
    default:
      return {kArrayThreadErrorStats, kArrayAccountErrorStats, kArrayClassErrorStats, kArrayClassErrorStats};
  }
}

bool allocated(const region_map& region, std::uint32_t holder) {
  const auto* h = region.array<account_record>(kArrayAccounts);
  return holder != 0 && h != nullptr && holder <= region.count(kArrayAccounts) &&
         (load_acquire(h[holder - 1].lock) & kStateMask) == kStateAllocated;
}

// The rows of holder (1-based) of a family, or nullptr.
template <class S>
S* holder_rows(const region_map& region, const family_arrays& f, std::uint32_t holder) {
  const std::uint64_t per = region.count(f.per_count);
  S* rows = region.array<S>(f.holder_rows);
  if (rows == nullptr || per == 0 || !allocated(region, holder)) return nullptr;
  return rows + (holder - 1) * per;
}

template <class S>
void add_rows(S* into, const S* from, std::uint64_t per) {
  if (into == nullptr || from == nullptr) return;
  for (std::uint64_t i = 0; i < per; ++i) add_atomic_stat(into[i], from[i]);
}

template <class S>
void zero_rows(S* rows, std::uint64_t per) {
  for (std::uint64_t i = 0; rows != nullptr && i < per; ++i) zero_record(rows[i]);
}

// Adds thread slot's rows of a family into its account, or without one into its
// user and host (MySQL's rule); when moving, into the family's global bucket
// too, and zeroes them (a move: the global tables keep their totals).
template <class S>
void fold_thread(const region_map& region, account_family family, std::uint64_t slot, bool move) {
  const family_arrays f = arrays_of(family);
  const std::uint64_t per = region.count(f.per_count);
  S* rows = region.array<S>(f.thread_rows);
  const auto* threads = region.array<thread_record>(kArrayThreads);
  if (rows == nullptr || threads == nullptr || per == 0 || slot >= region.count(kArrayThreads) ||
      region.count(f.thread_rows) < (slot + 1) * per)
    return;
  S* mine = rows + slot * per;
  const thread_record& t = threads[slot];
  const std::uint32_t account = load_relaxed(t.account_slot);
  if (allocated(region, account)) {
    add_rows(holder_rows<S>(region, f, account), mine, per);
  } else {
    add_rows(holder_rows<S>(region, f, load_relaxed(t.user_slot)), mine, per);
    add_rows(holder_rows<S>(region, f, load_relaxed(t.host_slot)), mine, per);
  }
  if (!move) return;
  if (f.global_rows != kArrayCount) add_rows(region.array<S>(f.global_rows), mine, per);
  zero_rows(mine, per);
}

template <class F>
void each_family(unsigned families, F&& f) {
  for (account_family k :
       {kFamilyWaits, kFamilyStages, kFamilyStatements, kFamilyTransactions, kFamilyMemory, kFamilyErrors})
    if ((families & k) != 0) f(k);
}

// Calls f.template operator()<S>() with the family's record type S.
template <class F>
void with_record(account_family k, F&& f) {
  switch (k) {
    case kFamilyWaits:
    case kFamilyStages:
      return f.template operator()<wait_stat>();
    case kFamilyStatements:
      return f.template operator()<statement_stat>();
    case kFamilyTransactions:
      return f.template operator()<transaction_stat>();
    case kFamilyMemory:
      return f.template operator()<memory_stat>();
    case kFamilyErrors:
      return f.template operator()<error_stat>();
  }
}

void fold_family(const region_map& region, account_family k, std::uint64_t slot, bool move) {
  with_record(k, [&]<class S>() { fold_thread<S>(region, k, slot, move); });
}

// Every live thread's rows of a family moved into its holders.
void flush_threads(const region_map& region, account_family k) {
  const auto* threads = region.array<thread_record>(kArrayThreads);
  for (std::uint64_t slot = 0; threads != nullptr && slot < region.count(kArrayThreads); ++slot)
    if ((load_acquire(threads[slot].lock) & kStateMask) == kStateAllocated)
      fold_family(region, k, slot, true);
}

// Moves every account's rows into its user's and host's, then zeroes them.
template <class S>
void flush_accounts(const region_map& region, account_family k) {
  const family_arrays f = arrays_of(k);
  const std::uint64_t per = region.count(f.per_count);
  const auto* holders = region.array<account_record>(kArrayAccounts);
  for (std::uint32_t i = 1; holders != nullptr && i <= region.count(kArrayAccounts); ++i) {
    const account_record& a = holders[i - 1];
    S* rows = holder_rows<S>(region, f, i);
    if (rows == nullptr || load_relaxed(a.kind) != kHolderAccount) continue;
    add_rows(holder_rows<S>(region, f, load_relaxed(a.user_slot)), rows, per);
    add_rows(holder_rows<S>(region, f, load_relaxed(a.host_slot)), rows, per);
    zero_rows(rows, per);
  }
}

template <class S>
void zero_holders(const region_map& region, account_family k, holder_kind kind) {
  const family_arrays f = arrays_of(k);
  const std::uint64_t per = region.count(f.per_count);
  const auto* holders = region.array<account_record>(kArrayAccounts);
  for (std::uint32_t i = 1; holders != nullptr && i <= region.count(kArrayAccounts); ++i)
    if (load_relaxed(holders[i - 1].kind) == kind) zero_rows(holder_rows<S>(region, f, i), per);
}

template <class S>
void reset_family(const region_map& region, account_family k, holder_kind kind) {
  flush_threads(region, k);
  flush_accounts<S>(region, k);
  if (kind != kHolderAccount) zero_holders<S>(region, k, kind);
}

}  // namespace

void clear_holder(const region_map& region, std::uint32_t holder) {
  each_family(kFamilyAll, [&](account_family k) {
    with_record(k, [&]<class S>() {
      const family_arrays f = arrays_of(k);
      const std::uint64_t per = region.count(f.per_count);
      S* rows = region.array<S>(f.holder_rows);
      if (rows != nullptr && holder != 0 && region.count(f.holder_rows) >= holder * per)
        zero_rows(rows + (holder - 1) * per, per);
    });
  });
}

void fold_thread_into_holders(const region_map& region, std::uint64_t slot, unsigned families) {
  each_family(families, [&](account_family k) { fold_family(region, k, slot, false); });
}

void move_thread_rows(const region_map& region, std::uint64_t slot, unsigned families) {
  each_family(families, [&](account_family k) { fold_family(region, k, slot, true); });
}

void fold_threads_into_holders(const region_map& region, unsigned families) {
  const auto* threads = region.array<thread_record>(kArrayThreads);
  for (std::uint64_t slot = 0; threads != nullptr && slot < region.count(kArrayThreads); ++slot)
    if ((load_acquire(threads[slot].lock) & kStateMask) == kStateAllocated)
      fold_thread_into_holders(region, slot, families);
}

void zero_holder_summaries(const region_map& region, unsigned families) {
  each_family(families, [&](account_family k) {
    with_record(k, [&]<class S>() {
      for (holder_kind kind : {kHolderAccount, kHolderUser, kHolderHost}) zero_holders<S>(region, k, kind);
    });
  });
}

void reset_holder_summaries(const region_map& region, account_family family, holder_kind kind) {
  if (family == kFamilyMemory)
    reset_holder_memory(region, kind);
  else
    with_record(family, [&]<class S>() { reset_family<S>(region, family, kind); });
  __atomic_fetch_add(&region.header().setup_generation, 1, __ATOMIC_RELEASE);
}

void reset_connections(const region_map& region, holder_kind kind) {
  auto* holders = region.array<account_record>(kArrayAccounts);
  for (std::uint64_t i = 0; holders != nullptr && i < region.count(kArrayAccounts); ++i) {
    account_record& a = holders[i];
    if ((load_acquire(a.lock) & kStateMask) != kStateAllocated || load_relaxed(a.kind) != kind) continue;
    const std::int64_t now = load_relaxed(a.current_connections);
    store_relaxed(a.total_connections, static_cast<std::uint64_t>(now > 0 ? now : 0));
  }
  __atomic_fetch_add(&region.header().setup_generation, 1, __ATOMIC_RELEASE);
}

}  // namespace pfs::setup
