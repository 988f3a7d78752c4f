// The rows of the summaries by account, user and host (account_layout.h): per
// holder of one kind, its own rows + (a user or host) its accounts' rows + its
// live threads' rows, as MySQL's PFS_connection_iterator visits them.
#pragma once

#include <string>
#include <vector>

#include "agent/reader/internal/reader_internal.h"
#include "agent/region/account_layout.h"

namespace pfs::reader::detail {

// An account, user or host as a scan copied it; kind 0: not in use.
struct holder_copy {
  std::uint8_t kind = 0;
  std::uint32_t user_slot = 0, host_slot = 0;  // an account's user and host
  std::string user, host;                      // empty: NULL
  std::int64_t current_connections = 0;
  std::uint64_t total_connections = 0;
  std::int64_t max_controlled_memory = 0, max_total_memory = 0;
};

// Every holder record, index = slot - 1 (rows_accounts.cpp).
std::vector<holder_copy> load_holders(scan_state& s);
// USER and HOST (an account), USER (a user) or HOST (a host): NULL when empty.
void append_holder_key(scan_state& s, row_builder& x, const holder_copy& h);

// Per holder (index slot - 1), per rows of it: the sums of the holders of kind.
// load(p) copies one row; add(into, row) adds one into a sum. thread_rows and
// holder_rows hold per rows for each thread slot and holder.
template <class S, class Load, class Add>
std::vector<std::vector<S>> holder_sums(scan_state& s, const std::vector<holder_copy>& holders,
                                        holder_kind kind, array_id thread_rows, array_id holder_rows,
                                        std::uint64_t per, const S& zero, Load&& load, Add&& add) {
  std::vector<std::vector<S>> sums(holders.size());
  if (per == 0) return sums;
  const auto add_rows = [&](std::vector<S>& into, array_id id, std::uint64_t first) {
    if (s.r.count(id) < first + per) return;
    for (std::uint64_t i = 0; i < per; ++i) add(into[i], load(*s.r.at<S>(id, first + i)));
  };
  const auto target = [&](std::uint32_t slot) -> std::vector<S>* {
    if (slot == 0 || slot > holders.size() || holders[slot - 1].kind != kind) return nullptr;
    std::vector<S>& v = sums[slot - 1];
    if (v.empty()) v.assign(per, zero);
    return &v;
  };
  for (std::uint32_t slot = 1; slot <= holders.size(); ++slot) {
    const holder_copy& h = holders[slot - 1];
    if (h.kind == 0) continue;
    if (h.kind == kind) add_rows(*target(slot), holder_rows, (slot - 1) * per);
    if (kind == kHolderAccount || h.kind != kHolderAccount) continue;
    // A user's (host's) accounts.
    if (std::vector<S>* into = target(kind == kHolderUser ? h.user_slot : h.host_slot))
      add_rows(*into, holder_rows, (slot - 1) * per);
  }
  for (const live_thread& t : live_threads(s)) {
    const std::uint32_t slot = t.holder[kind == kHolderAccount ? 0 : kind == kHolderUser ? 1 : 2];
    if (std::vector<S>* into = target(slot)) add_rows(*into, thread_rows, t.slot * per);
  }
  return sums;
}

}  // namespace pfs::reader::detail
