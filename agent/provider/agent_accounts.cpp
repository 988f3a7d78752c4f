// Accounts, users and hosts on the provider side (account_layout.h): a thread
// joins the holders of its actor when it registers (NULL user and host: MySQL's
// internal threads) and when it declares an actor, and leaves them when it
// changes actor (its statistics moved into the old account, as MySQL's
// set_thread_account does) or ends (folded into its account, MySQL's
// aggregate_thread). Not on the event path.
#include <string_view>

#include "agent/provider/internal/agent_internal.h"
#include "agent/region/account_layout.h"
#include "agent/region/setup.h"

namespace pfs::detail {
namespace {

std::string_view field(const char* f, std::size_t cap) {
  std::size_t n = 0;
  while (n < cap && load_relaxed(f[n]) != '\0') ++n;
  return {f, n};
}

// A fixed field set to v (no allocation: a fork child handler joins too).
void store_view(char* dst, std::size_t cap, std::string_view v) {
  for (std::size_t i = 0; i < cap; ++i) store_relaxed(dst[i], i < v.size() && i + 1 < cap ? v[i] : '\0');
}

// The holder of kind for (user, host) among [first, first + count) of the
// holders, claimed if there is none: its 1-based slot, 0 when the array is full
// (counted as lost). Under accounts_mutex: one claimer at a time.
std::uint32_t find_or_claim(agent_state& a, holder_kind kind, std::uint64_t first, std::uint64_t count,
                            std::string_view user, std::string_view host, bool rows_are_zero) {
  auto* holders = a.region.array<account_record>(kArrayAccounts);
  if (holders == nullptr || first + count > a.region.count(kArrayAccounts)) return 0;
  for (std::uint64_t i = first; i < first + count; ++i) {
    account_record& h = holders[i];
    const std::uint32_t word = load_relaxed(h.lock);
    if ((word & kStateMask) == kStateAllocated) {
      if (field(h.user, kUserLen) == user && field(h.host, kHostLen) == host)
        return static_cast<std::uint32_t>(i + 1);
      continue;
    }
    store_relaxed(h.lock, (word & ~kStateMask) | kStateDirty);
    store_relaxed(h.kind, static_cast<std::uint8_t>(kind));
    store_view(h.user, kUserLen, user);
    store_view(h.host, kHostLen, host);
    store_relaxed(h.current_connections, std::int64_t{0});
    store_relaxed(h.total_connections, std::uint64_t{0});
    store_relaxed(h.max_controlled_memory, std::int64_t{0});
    store_relaxed(h.max_total_memory, std::int64_t{0});
    store_relaxed(h.user_slot, 0u);
    store_relaxed(h.host_slot, 0u);
    if (!rows_are_zero) setup::clear_holder(a.region, static_cast<std::uint32_t>(i + 1));
    store_release(h.lock, ((word & ~kStateMask) + kVersionInc) | kStateAllocated);
    return static_cast<std::uint32_t>(i + 1);
  }
  bump_lost(kind == kHolderAccount ? kLostAccounts : kind == kHolderUser ? kLostUsers : kLostHosts);
  return 0;
}

account_record* holder(agent_state& a, std::uint32_t slot) {
  auto* holders = a.region.array<account_record>(kArrayAccounts);
  if (slot == 0 || holders == nullptr || slot > a.region.count(kArrayAccounts)) return nullptr;
  account_record& h = holders[slot - 1];
  return (load_acquire(h.lock) & kStateMask) == kStateAllocated ? &h : nullptr;
}

}  // namespace

void join_holders(agent_state& a, thread_context& t, const char* user, const char* host, bool rows_are_zero) {
  const std::string_view u = user != nullptr ? field(user, kUserLen - 1) : std::string_view{};
  const std::string_view h = host != nullptr ? field(host, kHostLen - 1) : std::string_view{};
  std::uint32_t slots[3] = {};
  {
    std::lock_guard<std::mutex> guard(a.accounts_mutex);
    const std::uint64_t accounts = a.max_accounts, users = a.max_users, hosts = a.max_hosts;
    slots[1] = find_or_claim(a, kHolderUser, accounts, users, u, {}, rows_are_zero);
    slots[2] = find_or_claim(a, kHolderHost, accounts + users, hosts, {}, h, rows_are_zero);
    slots[0] = find_or_claim(a, kHolderAccount, 0, accounts, u, h, rows_are_zero);
    if (account_record* acc = holder(a, slots[0])) {
      store_relaxed(acc->user_slot, slots[1]);
      store_relaxed(acc->host_slot, slots[2]);
    }
  }
  for (std::uint32_t s : slots)
    if (account_record* r = holder(a, s)) {
      __atomic_fetch_add(&r->current_connections, 1, __ATOMIC_RELAXED);
      __atomic_fetch_add(&r->total_connections, 1, __ATOMIC_RELAXED);
    }
  thread_record& r = *t.rec;
  store_relaxed(r.account_slot, slots[0]);
  store_relaxed(r.user_slot, slots[1]);
  store_relaxed(r.host_slot, slots[2]);
}

void leave_holders(agent_state& a, thread_context& t, bool moving) {
  thread_record& r = *t.rec;
  // A thread that changes actor keeps its memory rows (what it holds stays its own
  // until it ends); every other family moves into the account it leaves.
  if (moving)
    setup::move_thread_rows(a.region, t.slot, setup::kFamilyAll & ~setup::kFamilyMemory);
  else
    setup::fold_thread_into_holders(a.region, t.slot, setup::kFamilyAll);
  for (std::uint32_t s : {load_relaxed(r.account_slot), load_relaxed(r.user_slot), load_relaxed(r.host_slot)})
    if (account_record* h = holder(a, s)) {
      __atomic_fetch_sub(&h->current_connections, 1, __ATOMIC_RELAXED);
      atomic_max(h->max_controlled_memory, load_relaxed(r.max_controlled_memory));
      atomic_max(h->max_total_memory, load_relaxed(r.max_total_memory));
    }
  store_relaxed(r.account_slot, 0u);
  store_relaxed(r.user_slot, 0u);
  store_relaxed(r.host_slot, 0u);
}

}  // namespace pfs::detail
