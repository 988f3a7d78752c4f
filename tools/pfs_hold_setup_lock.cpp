// pfs_hold_setup_lock: holds a region's setup lock for a while, as a provider or a
// committing backend does for microseconds, so that tests can check that a
// PostgreSQL backend waiting for it honours statement_timeout and
// pg_cancel_backend (tests/live/fdw_fault_test.sh).
//
//   pfs_hold_setup_lock REGION SECONDS
//
// Prints "locked" once it holds the lock, then sleeps and exits.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "agent/region/region.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pfs_hold_setup_lock REGION SECONDS\n");
    return 2;
  }
  pfs::region_error err;
  pfs::region_map region = pfs::region_map::open(argv[1], true, err);
  if (!region.valid()) {
    std::fprintf(stderr, "pfs_hold_setup_lock: %s\n", err.message.c_str());
    return 1;
  }
  pfs::setup_lock_guard lock(region);
  if (!lock.locked()) {
    std::fprintf(stderr, "pfs_hold_setup_lock: could not lock the setup of %s\n", argv[1]);
    return 1;
  }
  std::printf("locked\n");
  std::fflush(stdout);
  sleep(static_cast<unsigned>(std::atoi(argv[2])));
  return 0;
}
