// Accounts, users and hosts (layout 6): the records of MySQL 8.0's accounts,
// users and hosts tables and of the summaries by account, user and host
// (events_{waits,stages,statements,transactions}_summary_by_{account,user,host}_by_event_name,
// memory_summary_by_{account,user,host}_by_event_name,
// events_errors_summary_by_{account,user,host}_by_error).
//
// One array of holders: accounts (user, host) first, then users, then hosts
// (max_accounts + max_users + max_hosts records). A thread belongs to one
// account, user and host from its registration on: a thread that never declared
// an actor belongs to the holders whose USER and HOST are NULL (MySQL's rows of
// internal threads); set_thread_actor moves it. Each holder has its rows in the
// holder stat arrays (index holder * per + class): what threads that left it
// moved there, as MySQL's aggregate_thread moves a thread's statistics into its
// account when the thread ends or changes account. A user's or host's own rows
// receive an account's when TRUNCATE of a by_account summary moves them (and
// a thread's when its account was lost). Readers add the live threads:
//   account row = the account's rows + its live threads';
//   user (host) row = its own rows + its accounts' rows + its live threads'.
#pragma once

#include <cstdint>
#include <type_traits>

#include "agent/region/region_layout.h"

namespace pfs::layout {

// account_record::kind.
enum holder_kind : std::uint8_t { kHolderAccount = 1, kHolderUser = 2, kHolderHost = 3 };

// One account, user or host. lock: version+state; claimed (dirty) by the
// provider under its registry mutex, allocated once user and host are written,
// never freed (MySQL keeps an account while the tables show it; TRUNCATE of
// accounts, users and hosts removes rows without connections there, here it
// resets their counts). An empty user or host is NULL.
struct account_record {
  std::uint32_t lock;
  std::uint8_t kind;  // holder_kind
  std::uint8_t pad0[3];
  std::uint32_t user_slot;  // an account's user and host holders, 1-based; 0 = none (lost)
  std::uint32_t host_slot;
  std::int64_t current_connections;    // CURRENT_CONNECTIONS: threads in it now (atomic)
  std::uint64_t total_connections;     // TOTAL_CONNECTIONS: threads that joined it (atomic)
  std::int64_t max_controlled_memory;  // MAX_SESSION_CONTROLLED_MEMORY: most a thread of it held
  std::int64_t max_total_memory;       // MAX_SESSION_TOTAL_MEMORY
  char user[kUserLen];
  char host[kHostLen];
  std::uint64_t pad1[6];
};

static_assert(sizeof(account_record) % 64 == 0);
static_assert(std::is_trivially_copyable_v<account_record> && std::is_standard_layout_v<account_record>);

}  // namespace pfs::layout
