#!/usr/bin/env bash
# Builds and tests the perfschema_fdw extension: the CMake build (for the fixture
# tool the tests use; build/ is reused if configured), the extension with PGXS,
# its installation, the pg_regress suite and the isolation specs on a throwaway
# PostgreSQL cluster (pg_virtualenv), then the tests with a live instrumented
# process: setup changes end to end (tests/live/fdw_live_test.sh), trace files
# (tests/live/fdw_trace_test.sh), pfs_top in tmux (tests/live/fdw_top_test.sh), lock waits, deadlocks and contention
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
# Usage (as root): bash scripts/fdw_check.sh
set -euo pipefail
cd "$(dirname "$0")/.."

source scripts/build_fdw.sh
build_and_install_fdw pfs_fixture

rm -rf build/pgxs/regress build/pgxs/isolation
if ! pg_virtualenv -t make -f Makefile.pgxs installcheck; then
  for diffs in build/pgxs/regress/regression.diffs build/pgxs/isolation/regression.diffs; do
    [ -f "$diffs" ] || continue
    echo "=== perfschema_fdw regression failed; $diffs:" >&2
    cat "$diffs" >&2
  done
  exit 1
fi
echo "=== perfschema_fdw: all regression and isolation tests passed"

bash tests/live/fdw_live_test.sh
bash tests/live/fdw_trace_test.sh
bash tests/live/fdw_top_test.sh
bash tests/live/fdw_blocking_test.sh
bash tests/live/fdw_work_test.sh
bash tests/live/fdw_snapshot_test.sh
bash tests/live/fdw_hosts_test.sh
bash tests/live/fdw_directory_test.sh
bash tests/live/prometheus_test.sh
bash tests/live/install_test.sh
bash tests/live/fdw_fault_test.sh
LOAD_SECONDS=${LOAD_SECONDS:-10} bash tests/live/fdw_load_test.sh
echo "=== perfschema_fdw: all tests passed"
