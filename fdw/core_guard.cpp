// The SIGBUS guard of a backend, held for a transaction: installed by the first
// core call that touches a mapping, restored when the transaction ends. Between
// transactions the backend runs with the handler it had before (PostgreSQL's,
// or another extension's).
#include <optional>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

// Backends are single-threaded: no locking.
std::optional<fault_guard::scope>& transaction_scope() noexcept {
  static std::optional<fault_guard::scope> held;
  return held;
}

}  // namespace

void hold_fault_guard_for_transaction() noexcept {
  if (!transaction_scope().has_value()) transaction_scope().emplace();
}

}  // namespace pfs::fdw

extern "C" void pfs_core_transaction_end(void) noexcept { pfs::fdw::transaction_scope().reset(); }
