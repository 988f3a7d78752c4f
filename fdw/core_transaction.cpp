// What the core keeps between a backend's calls:
// - the SIGBUS guard: installed by the first core call that touches a mapping and
//   kept for the backend's life. It chains every fault outside a region mapping to
//   the handler found (PostgreSQL's default action: the backend ends as it would
//   without us), so keeping it changes nothing for other faults, and a monitoring
//   query, which is its own transaction, pays no system call to install and
//   restore it. It is looked at again (one sigaction call) at the first call of a
//   transaction once the recheck interval has passed: an extension that installed
//   its own handler since is chained to, and ours put back in front;
// - the transaction's number, by which a server's region files are checked (and a
//   directory listed) once per transaction rather than at every scan
//   (core_region.cpp), and the transaction's time, by which a one-file server's
//   file is checked at most once per recheck interval: the time PostgreSQL read
//   when the transaction started (pfs_core_transaction_clock; reading the clock
//   again was a tenth of a microsecond or more on a virtual machine), else the
//   clock at the transaction's first call. Both are the wall clock: a time before
//   the last check (the clock set back) counts as the interval passed.
#include <time.h>

#include "fdw/core_internal.h"

namespace pfs::fdw {
namespace {

// Backends are single-threaded: no locking.
std::uint64_t g_transaction = 1;
std::uint64_t g_clock_read_in = 0;  // the transaction whose clock g_clock_ns is
std::int64_t g_clock_ns = 0;
std::uint64_t g_guard_looked_at_in = 0;  // the transaction that last came to the guard
bool g_guard_installed = false;
std::int64_t g_guard_checked_ns = 0;

std::int64_t realtime_ns() noexcept {
  timespec t{};
  clock_gettime(CLOCK_REALTIME, &t);  // the vDSO: no system call
  return static_cast<std::int64_t>(t.tv_sec) * 1'000'000'000 + t.tv_nsec;
}

}  // namespace

void keep_fault_guard_installed() noexcept {
  if (g_guard_looked_at_in == g_transaction) return;
  g_guard_looked_at_in = g_transaction;
  const std::int64_t now = transaction_clock_ns();
  if (g_guard_installed && checked_within_interval(now, g_guard_checked_ns)) return;
  fault_guard::install_permanently();  // one sigaction call when ours is in place
  g_guard_installed = true;
  g_guard_checked_ns = now;
}

std::uint64_t transaction_number() noexcept { return g_transaction; }

std::int64_t transaction_clock_ns() noexcept {
  if (g_clock_read_in != g_transaction) {
    g_clock_ns = realtime_ns();
    g_clock_read_in = g_transaction;
  }
  return g_clock_ns;
}

}  // namespace pfs::fdw

extern "C" void pfs_core_transaction_end(void) noexcept { ++pfs::fdw::g_transaction; }

extern "C" void pfs_core_transaction_clock(int64_t unix_us) noexcept {
  pfs::fdw::g_clock_read_in = pfs::fdw::g_transaction;
  pfs::fdw::g_clock_ns = unix_us * 1000;
}
