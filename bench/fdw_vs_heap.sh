#!/usr/bin/env bash
# Scan speed of the FDW against an ordinary heap table holding the same rows, in
# one database of one throwaway cluster: events_waits_history_long with ROWS rows
# (a fixture region) and the table made by CREATE TABLE ... AS SELECT from it.
# Each query runs RUNS times on each side, interleaved; the figure is the median of
# the "Execution Time" of EXPLAIN (ANALYZE, TIMING OFF), in ms. Ratio = FDW / heap.
#
# Usage (as root): bash bench/fdw_vs_heap.sh
#   ROWS=1000000 RUNS=7 PARALLEL=on|off (off: max_parallel_workers_per_gather = 0)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-1000000}
runs=${RUNS:-7}

queries=(
  "count|SELECT count(*) FROM %s"
  "sum|SELECT sum(timer_wait) FROM %s"
  "where|SELECT event_id, event_name, timer_wait FROM %s WHERE thread_id = 2"
)

# --- inside the throwaway cluster
if [ "${1:-}" = "--session" ]; then
  region=$2
  psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
  psql_q -v region="$region" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER bench FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'region');
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_history_long) FROM SERVER bench INTO ps;
CREATE TABLE heap AS SELECT * FROM ps.events_waits_history_long;
VACUUM ANALYZE heap;
SQL
  settings=""
  [ "${PARALLEL:-on}" = "off" ] && settings="SET max_parallel_workers_per_gather = 0;"
  echo "rows: fdw $(psql_q -c 'SELECT count(*) FROM ps.events_waits_history_long'), heap $(psql_q -c 'SELECT count(*) FROM heap')" \
       "($(psql_q -c "SELECT pg_size_pretty(pg_table_size('heap'))") on disk), parallel workers: ${PARALLEL:-on}"
  execution_ms() {  # query -> Execution Time in ms
    psql_q -c "$settings EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $1" |
      sed -n 's/.*"Execution Time": \([0-9.]*\).*/\1/p'
  }
  median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

  printf '%-6s %12s %12s %8s\n' query fdw_ms heap_ms fdw/heap
  for entry in "${queries[@]}"; do
    name=${entry%%|*}
    template=${entry#*|}
    fdw_query=$(printf "$template" ps.events_waits_history_long)
    heap_query=$(printf "$template" heap)
    execution_ms "$fdw_query" >/dev/null  # warm both sides once
    execution_ms "$heap_query" >/dev/null
    fdw_times=() heap_times=()
    for _ in $(seq "$runs"); do
      fdw_times+=("$(execution_ms "$fdw_query")")
      heap_times+=("$(execution_ms "$heap_query")")
    done
    fdw=$(printf '%s\n' "${fdw_times[@]}" | median)
    heap=$(printf '%s\n' "${heap_times[@]}" | median)
    printf '%-6s %12.1f %12.1f %8.2f\n' "$name" "$fdw" "$heap" "$(awk -v a="$fdw" -v b="$heap" 'BEGIN { print a / b }')"
  done
  exit 0
fi

# --- outside: build, install, write the region, run the session above
bash scripts/setup.sh
if [ ! -f build/CMakeCache.txt ]; then
  generator=()
  command -v ninja >/dev/null && generator=(-G Ninja)
  cmake -S . -B build "${generator[@]}" -DCMAKE_BUILD_TYPE=Release >/dev/null
fi
cmake --build build -j"$(nproc)" --target pfs_fixture >/dev/null
make -f Makefile.pgxs -j"$(nproc)" >/dev/null
make -f Makefile.pgxs install >/dev/null

workdir=$(mktemp -d /tmp/perfschema_bench.XXXXXX)
trap 'rm -rf "$workdir"' EXIT
chmod 755 "$workdir"
build/tools/pfs_fixture --history-long-rows="$rows" "$workdir/bench.region"
echo "perfschema_fdw vs heap: events_waits_history_long, $rows rows, median of $runs runs"
pg_virtualenv -t bash "$0" --session "$workdir/bench.region"
