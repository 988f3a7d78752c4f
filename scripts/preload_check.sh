#!/usr/bin/env bash
# The LD_PRELOAD interposer on real, unmodified programs: builds
# build/agent/libpfs_preload.so, runs the preload test suite (edge-case programs:
# every interposed call, static initializers, fork + exec, a thread exiting while
# it holds a lock, many short-lived threads, pre-forked workers; then Debian's
# sysbench mutex, threads and fileio tests, whose reports are compared with the
# tables read back from the region, and coreutils' sort, cat and cp of a generated
# file, whose bytes must equal its size; Debian's nginx, a master and two workers
# serving curl on loopback, whose workers' socket bytes must add up to curl's counts),
# prints one sysbench run's report next to the tables it produced, and runs
# PostgreSQL's postmaster under the interposer with a region per process
# (tests/live/postmaster_preload_test.sh), and (as root) plants
# links, FIFOs and hard links at every name the agent creates as another user
# (tests/live/symlink_attack_test.sh).
# If the perfschema_fdw extension is installed and pg_virtualenv is there, the
# same region is also queried through PostgreSQL (PFS_PRELOAD_PSQL=0 skips that;
# as root, this tree's extension is built and installed first).
# Usage: bash scripts/preload_check.sh [build-dir]    (default build; about 30 s)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
case "$build" in /*) ;; *) build="$PWD/$build" ;; esac

if ! command -v sysbench >/dev/null; then
  echo "preload_check: sysbench is not installed (bash scripts/setup.sh installs it)" >&2
  exit 1
fi
if [ ! -f "$build/CMakeCache.txt" ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B "$build" "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build "$build" -j"$(nproc)" --target pfs_preload test_preload pl_calls pl_static_init pl_fork_exec \
  pl_exit_holding pl_many_threads pl_lockloop pl_inspect pl_prefork pl_memory pl_stdio pl_spin pl_sem pl_inherit test_preload_memory test_preload_nginx

echo "=== preload tests (edge-case programs and sysbench under $build/agent/libpfs_preload.so)"
PFS_PRELOAD_REQUIRE_SYSBENCH=1 "$build/tests/test_preload"
PFS_PRELOAD_REQUIRE_ALLOCATORS=1 "$build/tests/test_preload_memory"
echo "=== Debian's nginx under the interposer: a region per worker, their socket bytes against curl's"
PFS_PRELOAD_REQUIRE_NGINX=1 "$build/tests/test_preload_nginx"

# One sysbench run, its report and the tables, side by side.
work=$(mktemp -d /tmp/pfs_preload_check.XXXXXX)
trap 'rm -rf "$work"' EXIT
region="$work/sysbench.pfs"
inspect="$build/tests/preload_programs/pl_inspect"
echo "=== sysbench threads under the interposer (region $region)"
LD_PRELOAD="$build/agent/libpfs_preload.so" PFS_REGION="$region" PFS_INSTRUMENT='%=ON' \
  sysbench threads --threads=2 --thread-yields=100 --thread-locks=1 --events=2000 --time=0 run |
  grep -E "total time|total number of events"
echo "--- expected: events x thread-yields = 200000 lock waits on the mutex array's class"
"$inspect" "$region" events_waits_summary_global_by_event_name | awk -F'\t' 'NR == 1 || $2 > 0' | cut -f1-3,6
echo "--- events_waits_history_long, by event and SOURCE"
"$inspect" "$region" events_waits_history_long | awk -F'\t' 'NR > 1 {n[$4 "\t" $5]++} END {for (k in n) print n[k] "\t" k}' |
  sort -rn | sed -n 1,5p

# A real program's heap: Debian's python3 holding a 100 MB bytearray, then letting it go.
echo "=== python3's heap under the interposer: a 100 MB bytearray, then del"
py_region="$work/python3.pfs"
LD_PRELOAD="$build/agent/libpfs_preload.so" PFS_REGION="$py_region" PFS_INSTRUMENT='%=ON' \
  /usr/bin/python3 -c 'b = bytearray(100 * 1024 * 1024); b[-1] = 1; del b'
"$inspect" "$py_region" memory_summary_global_by_event_name memory/python3/malloc | cut -f1-4,9-11
read -r current high < <("$inspect" "$py_region" memory_summary_global_by_event_name memory/python3/malloc |
  awk -F'\t' 'NR == 2 {print $10, $11}')
if [ -z "$high" ] || [ "$high" -lt $((100 * 1024 * 1024)) ] || [ "$current" -ge $((100 * 1024 * 1024)) ]; then
  echo "preload_check: python3's heap: high-water mark ${high:-none} (>= 100 MiB expected), in use at exit ${current:-none} (< 100 MiB expected)" >&2
  exit 1
fi
echo "--- high-water mark $high bytes >= 100 MiB, in use at exit $current bytes"

# The extension of this tree, not whatever another tree (of another region
# layout) installed last: built and installed first when this user can.
if [ "${PFS_PRELOAD_PSQL:-1}" != 0 ] && [ "$(id -u)" = 0 ] && [ -f Makefile.pgxs ] && command -v pg_config >/dev/null; then
  # shellcheck source=scripts/build_fdw.sh
  source scripts/build_fdw.sh
  build_and_install_fdw
fi
if [ "${PFS_PRELOAD_PSQL:-1}" != 0 ] && command -v pg_virtualenv >/dev/null && command -v pg_config >/dev/null &&
  [ -f "$(pg_config --sharedir)/extension/perfschema_fdw.control" ]; then
  echo "=== the same region through PostgreSQL (perfschema_fdw)"
  chmod 755 "$work"
  chmod 644 "$region"
  sql="CREATE EXTENSION perfschema_fdw;
CREATE SERVER app FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region '$region');
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER app INTO ps;
SELECT event_name, count_star FROM ps.events_waits_summary_global_by_event_name
 WHERE count_star > 0 ORDER BY count_star DESC LIMIT 3;"
  if ! pg_virtualenv -t psql -X -v ON_ERROR_STOP=1 -c "$sql" 2>&1; then
    echo "preload_check: the psql check failed (the region itself checked out above)" >&2
    exit 1
  fi
fi
echo "=== PostgreSQL's postmaster under the interposer: a region per forked process"
bash tests/live/postmaster_preload_test.sh "$build"
echo "=== files the agent creates, planted by another user (issue 42)"
bash tests/live/symlink_attack_test.sh "$build"
echo "=== preload check passed"
