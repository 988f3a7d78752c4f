#!/usr/bin/env bash
# Builds and tests the perfschema_fdw extension: the CMake build (for the fixture
# tool the tests use; build/ is reused if configured), the extension with PGXS,
# its installation, the pg_regress suite and the isolation specs on a throwaway
# PostgreSQL cluster (pg_virtualenv), then the tests with a live instrumented
# process: setup changes end to end (tests/live/fdw_live_test.sh), trace files
# (tests/live/fdw_trace_test.sh), pfs_top in tmux (tests/live/fdw_top_test.sh, every key and view:
# fdw_top_keys_test.sh), lock waits, deadlocks and contention
# (tests/live/fdw_blocking_test.sh), statements, stages and transactions of a real
# program checked against its own counts (tests/live/fdw_work_test.sh), snapshots on a pg_cron
# schedule and flame graphs (tests/live/fdw_snapshot_test.sh), three hosts read by a central
# cluster through postgres_fdw (tests/live/fdw_hosts_test.sh), a pre-forking program's
# regions read as one through region_directory (tests/live/fdw_directory_test.sh), Debian's Prometheus exporter
# with tools/prometheus/queries.yaml (tests/live/prometheus_test.sh), a program outside the
# tree built against the installed library (tests/live/install_test.sh), region files truncated under running scans, FIFOs
# and lock waits (tests/live/fdw_fault_test.sh) and a short pgbench load test
# (tests/live/fdw_load_test.sh, LOAD_SECONDS=10 here). Prints the diffs and exits
# non-zero on failure.
# Ends with one line: the server's version and the counts of tests passed on it.
# Usage (as root): bash scripts/fdw_check.sh          (the machine's PostgreSQL 15)
#   PFS_PREBUILT=1 bash scripts/fdw_check.sh --tree   (in a tree of scripts/pg_trees.sh,
#       by scripts/pg_tree_check.sh: the CMake programs prebuilt, and only the tests
#       whose result can depend on the server's version)
set -euo pipefail
cd "$(dirname "$0")/.."
in_tree=
[ "${1:-}" = --tree ] && in_tree=1

source scripts/build_fdw.sh
build_and_install_fdw pfs_fixture

rm -rf build/pgxs/regress build/pgxs/isolation
if ! pg_virtualenv -t make -f Makefile.pgxs installcheck | tee build/pgxs/installcheck.log; then
  for diffs in build/pgxs/regress/regression.diffs build/pgxs/isolation/regression.diffs; do
    [ -f "$diffs" ] || continue
    echo "=== perfschema_fdw regression failed; $diffs:" >&2
    cat "$diffs" >&2
  done
  exit 1
fi
# pg_regress's closing lines, the regression suite's then the isolation specs' (15
# prints " All 24 tests passed. ", 16 and later "# All 24 tests passed.").
mapfile -t suites < <(sed -n 's/.*All \([0-9]*\) tests passed.*/\1/p' build/pgxs/installcheck.log)
[ "${#suites[@]}" = 2 ] || { echo "fdw_check: no pg_regress counts in build/pgxs/installcheck.log" >&2; exit 1; }
echo "=== perfschema_fdw: all regression and isolation tests passed"

# The live tests, each a process of its own that exits non-zero on failure.
live_tests=(fdw_live fdw_trace fdw_top fdw_top_keys fdw_blocking fdw_work fdw_snapshot fdw_hosts fdw_directory
  prometheus fdw_fault fdw_load)
# Builds a program outside the tree against the installed library: the same on
# every server version, so run once, on the machine.
# Headless chromium's check of the timelines, the same.
if [ -n "$in_tree" ]; then export PFS_SKIP_BROWSER=1; else live_tests+=(install); fi
# PFS_LIVE_TESTS="fdw_live fdw_fault ...": these only (names as above), e.g. to keep
# the trees' runs short.
[ -z "${PFS_LIVE_TESTS:-}" ] || read -ra live_tests <<<"$PFS_LIVE_TESTS"
export LOAD_SECONDS=${LOAD_SECONDS:-10}
for test in "${live_tests[@]}"; do
  start=$SECONDS
  bash "tests/live/${test}_test.sh"
  echo "=== tests/live/${test}_test.sh: $((SECONDS - start)) s"
done
echo "=== perfschema_fdw: all tests passed"
echo "PostgreSQL $(pg_config --version | awk '{print $2}'): ${suites[0]} regression," \
  "${suites[1]} isolation, ${#live_tests[@]} live tests passed"
