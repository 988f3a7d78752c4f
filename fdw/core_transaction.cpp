// What the core keeps for the length of a transaction:
// - the SIGBUS guard: installed by the first core call that touches a mapping,
//   restored when the transaction ends. Between transactions the backend runs
//   with the handler it had before (PostgreSQL's, or another extension's);
// - the transaction's number, by which a server's region files are checked (and a
//   directory listed) once per transaction rather than at every scan
//   (core_region.cpp).
#include <optional>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

// Backends are single-threaded: no locking.
std::optional<fault_guard::scope>& transaction_scope() noexcept {
  static std::optional<fault_guard::scope> held;
  return held;
}

std::uint64_t g_transaction = 1;

}  // namespace

void hold_fault_guard_for_transaction() noexcept {
  if (!transaction_scope().has_value()) transaction_scope().emplace();
}

std::uint64_t transaction_number() noexcept { return g_transaction; }

}  // namespace pfs::fdw

extern "C" void pfs_core_transaction_end(void) noexcept {
  pfs::fdw::transaction_scope().reset();
  ++pfs::fdw::g_transaction;
}
