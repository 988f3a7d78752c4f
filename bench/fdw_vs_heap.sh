#!/usr/bin/env bash
# Scan speed of the FDW against an ordinary heap table holding the same rows, in
# one database of one throwaway cluster: events_waits_history_long with ROWS rows
# (a fixture region: 3 threads, 5 instruments, one wait in five file io) and the
# table made by CREATE TABLE ... AS SELECT from it; "join" joins it with a 20-row
# application table on event_name. Then the memory one backend needs to read every
# column of every row, and to read the table under a condition no row passes.
# Each query runs RUNS times on each side, warm (one backend running the two sides
# in turn, after one run of each) and cold (each run the first query of a new
# backend, the two sides in turn); the figures are the medians of the "Execution
# Time" of EXPLAIN (ANALYZE, TIMING OFF), in ms, and fdw/heap is the median of the
# ratios of the pairs (FDW run / the heap run next to it): on a noisy machine a
# slow moment then weighs on both sides of a pair instead of on one side's runs.
#
# Usage (as root): bash bench/fdw_vs_heap.sh
#   ROWS=1000000 RUNS=7 PARALLEL=on|off (off: max_parallel_workers_per_gather = 0)
#   AGGREGATES=on|off (off: perfschema_fdw.pushdown_aggregates = off)
set -euo pipefail
cd "$(dirname "$0")/.."
rows=${ROWS:-1000000}
runs=${RUNS:-7}

queries=(
  "count|SELECT count(*) FROM %s"
  "sum|SELECT sum(timer_wait) FROM %s"
  "where|SELECT event_id, event_name, timer_wait FROM %s WHERE thread_id = 2"
  "like|SELECT event_id, event_name, timer_wait FROM %s WHERE event_name LIKE 'wait/io/%%'"
  "join|SELECT a.team, count(*), sum(h.timer_wait) FROM %s h JOIN app a ON a.event_name = h.event_name GROUP BY a.team"
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
-- an application table of 20 instruments and their owners, 5 of them in the region
CREATE TABLE app (event_name text PRIMARY KEY, team text NOT NULL);
INSERT INTO app
  SELECT DISTINCT event_name, 'team ' || (row_number() OVER ()) FROM (
    SELECT DISTINCT event_name FROM ps.events_waits_history_long) n;
INSERT INTO app SELECT 'wait/synch/mutex/other/lock_' || i, 'team ' || i FROM generate_series(1, 20) i
  LIMIT 20 - (SELECT count(*) FROM app);
ANALYZE app;
SQL
  settings=""
  [ "${PARALLEL:-on}" = "off" ] && settings="SET max_parallel_workers_per_gather = 0;"
  # AGGREGATES=off: count and sum go through every row to an Agg node (the scan
  # computes them itself by default: perfschema_fdw.pushdown_aggregates).
  settings="$settings SET perfschema_fdw.pushdown_aggregates = ${AGGREGATES:-on};"
  echo "rows: fdw $(psql_q -c 'SELECT count(*) FROM ps.events_waits_history_long'), heap $(psql_q -c 'SELECT count(*) FROM heap')" \
       "($(psql_q -c "SELECT pg_size_pretty(pg_table_size('heap'))") on disk), parallel workers: ${PARALLEL:-on}," \
       "aggregates computed by the scan: ${AGGREGATES:-on}"
  # Execution Time of EXPLAIN (ANALYZE, TIMING OFF) in ms, one line per run.
  # warm: RUNS runs in one backend after one run to warm it (a monitoring
  # connection that polls); cold: the first query of a new backend, which also pays
  # for mapping the pages it reads (the region's, or the shared buffers').
  # Warm: one backend (a monitoring connection that polls) runs the FDW's query and
  # the heap's in turn, RUNS pairs after one of each: both sides meet the same
  # moments of a noisy machine. One "fdw_ms heap_ms" line per pair.
  warm_pairs() {  # fdw_query heap_query
    for _ in $(seq $((runs + 1))); do
      echo "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $1;"
      echo "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $2;"
    done | psql_q -c "$settings" -f - | sed -n 's/.*"Execution Time": \([0-9.]*\).*/\1/p' | paste -d ' ' - - |
      tail -n +2
  }
  cold_ms() {  # query
    psql_q -c "$settings EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $1" |
      sed -n 's/.*"Execution Time": \([0-9.]*\).*/\1/p'
  }
  # Cold: each run the first query of a new backend, the two sides in turn.
  cold_pairs() {  # fdw_query heap_query
    for _ in $(seq "$runs"); do echo "$(cold_ms "$1") $(cold_ms "$2")"; done
  }
  median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  # "fdw heap" lines -> "fdw_median heap_median ratio": the ratio is the median of
  # the pairs' ratios (a slow moment hits both queries of a pair).
  summarize() {
    local pairs
    pairs=$(cat)
    echo "$(awk '{ print $1 }' <<<"$pairs" | median) $(awk '{ print $2 }' <<<"$pairs" | median)" \
      "$(awk '{ print $1 / $2 }' <<<"$pairs" | median)"
  }

  printf '%-6s %12s %12s %8s   %12s %12s %8s\n' query warm_fdw_ms warm_heap_ms fdw/heap cold_fdw_ms cold_heap_ms fdw/heap
  for entry in "${queries[@]}"; do
    name=${entry%%|*}
    template=${entry#*|}
    fdw_query=$(printf "$template" ps.events_waits_history_long)
    heap_query=$(printf "$template" heap)
    read -r fdw heap warm_ratio <<<"$(warm_pairs "$fdw_query" "$heap_query" | summarize)"
    read -r fdw_cold heap_cold cold_ratio <<<"$(cold_pairs "$fdw_query" "$heap_query" | summarize)"
    printf '%-6s %12.1f %12.1f %8.2f   %12.1f %12.1f %8.2f\n' "$name" "$fdw" "$heap" "$warm_ratio" \
      "$fdw_cold" "$heap_cold" "$cold_ratio"
  done

  # Memory of one backend reading every column of every row ("rows"), and reading
  # the table under a condition no row passes ("none"): the peak resident set
  # (VmHWM, which counts the region's file pages and shared buffers the scan
  # touches) and the peak anonymous memory (RssAnon, sampled every 5 ms: the
  # backend's own copies), above the idle backend's.
  memory_of() {  # query -> "vmhwm_delta_mib anon_delta_mib"
    local fifo pid idle_hwm idle_anon peak_anon=0 anon
    fifo=$(mktemp -u /tmp/pfs_bench_fifo.XXXXXX)
    mkfifo "$fifo"
    psql -X -q -At -v ON_ERROR_STOP=1 <"$fifo" >"$fifo.out" 2>&1 &
    local psql_pid=$!
    exec 3>"$fifo"
    echo "SELECT pg_backend_pid();" >&3
    until [ -s "$fifo.out" ]; do sleep 0.05; done
    pid=$(head -1 "$fifo.out")
    idle_hwm=$(awk '/^VmHWM/ { print $2 }' /proc/"$pid"/status)
    idle_anon=$(awk '/^RssAnon/ { print $2 }' /proc/"$pid"/status)
    echo "$1; SELECT 'done';" >&3
    while ! grep -q '^done$' "$fifo.out" && kill -0 "$psql_pid" 2>/dev/null; do
      anon=$(awk '/^RssAnon/ { print $2 }' /proc/"$pid"/status 2>/dev/null || echo 0)
      [ "${anon:-0}" -gt "$peak_anon" ] && peak_anon=$anon
      sleep 0.005
    done
    hwm=$(awk '/^VmHWM/ { print $2 }' /proc/"$pid"/status)
    exec 3>&-
    wait
    rm -f "$fifo" "$fifo.out"
    echo "$(((hwm - idle_hwm) / 1024)) $(((peak_anon - idle_anon) / 1024))"
  }
  printf '%-6s %12s %12s\n' memory fdw_MiB heap_MiB
  for entry in "rows|SELECT sum(length(t::text)) FROM %s t" "none|SELECT event_id FROM %s WHERE thread_id = -1"; do
    name=${entry%%|*}
    template=${entry#*|}
    read -r fdw_hwm fdw_anon <<<"$(memory_of "$settings $(printf "$template" ps.events_waits_history_long)")"
    read -r heap_hwm heap_anon <<<"$(memory_of "$settings $(printf "$template" heap)")"
    printf '%-6s %12s %12s\n' "$name" "vmhwm $fdw_hwm" "vmhwm $heap_hwm"
    printf '%-6s %12s %12s\n' "$name" "anon $fdw_anon" "anon $heap_anon"
  done
  exit 0
fi

# --- outside: build, install, write the region, run the session above
source scripts/build_fdw.sh
build_and_install_fdw pfs_fixture

workdir=$(mktemp -d /tmp/perfschema_bench.XXXXXX)
trap 'rm -rf "$workdir"' EXIT
chmod 755 "$workdir"
build/tools/pfs_fixture --history-long-rows="$rows" "$workdir/bench.region"
echo "perfschema_fdw vs heap: events_waits_history_long, $rows rows, median of $runs runs"
pg_virtualenv -t bash "$0" --session "$workdir/bench.region"
