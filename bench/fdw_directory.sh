#!/usr/bin/env bash
# Scan speed of a server reading a directory of regions against one reading one
# region with as many rows, in one database of one throwaway cluster:
# events_waits_history_long of REGIONS fixture regions of ROWS_EACH rows each
# (option region_directory) against one fixture region of REGIONS * ROWS_EACH rows
# (option region). Each query runs RUNS times on each side, the two sides
# alternating in one backend after a warm-up run; the figure is the median of the
# "Execution Time" of EXPLAIN (ANALYZE, TIMING OFF), in ms. Ratio = directory / one.
#
# Usage (as root): bash bench/fdw_directory.sh
#   REGIONS=100 ROWS_EACH=10000 RUNS=7
set -euo pipefail
cd "$(dirname "$0")/.."
regions=${REGIONS:-100}
rows_each=${ROWS_EACH:-10000}
runs=${RUNS:-7}

queries=(
  "count|SELECT count(*) FROM %s"
  "sum|SELECT sum(timer_wait) FROM %s"
  "where|SELECT event_id, event_name, timer_wait FROM %s WHERE thread_id = 2"
  "by_process|SELECT process_id, count(*), sum(timer_wait) FROM %s GROUP BY process_id"
)

# --- inside the throwaway cluster
if [ "${1:-}" = "--session" ]; then
  dir=$2 one=$3
  psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
  psql_q -v dir="$dir" -v one="$one" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER many FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region_directory :'dir');
CREATE SERVER one FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'one');
CREATE SCHEMA many;
CREATE SCHEMA one;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_history_long) FROM SERVER many INTO many;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO (events_waits_history_long) FROM SERVER one INTO one;
-- the same columns: a one-file server fills process_id and program too when declared
ALTER FOREIGN TABLE one.events_waits_history_long ADD COLUMN process_id bigint, ADD COLUMN program text;
SQL
  echo "rows: directory $(psql_q -c 'SELECT count(*) FROM many.events_waits_history_long')" \
       "in $(psql_q -c 'SELECT count(DISTINCT process_id) FROM many.events_waits_history_long') regions," \
       "one region $(psql_q -c 'SELECT count(*) FROM one.events_waits_history_long')"
  printf '%-11s %12s %12s %8s\n' query directory_ms one_ms ratio
  for q in "${queries[@]}"; do
    name=${q%%|*} sql=${q#*|}
    many_sql=$(printf "$sql" many.events_waits_history_long)
    one_sql=$(printf "$sql" one.events_waits_history_long)
    # warm-up of each, then alternating runs in one backend
    {
      echo "SET max_parallel_workers_per_gather = 0;"
      echo "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $many_sql;"
      echo "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $one_sql;"
      for _ in $(seq "$runs"); do
        echo "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $many_sql;"
        echo "EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $one_sql;"
      done
    } | psql_q -f - | sed -n 's/.*"Execution Time": \([0-9.]*\).*/\1/p' | tail -n +3 >/tmp/fdw_directory.$$
    many_ms=$(awk 'NR % 2 == 1' /tmp/fdw_directory.$$ | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    one_ms=$(awk 'NR % 2 == 0' /tmp/fdw_directory.$$ | sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }')
    rm -f /tmp/fdw_directory.$$
    printf '%-11s %12.1f %12.1f %8.2f\n' "$name" "$many_ms" "$one_ms" "$(echo "$many_ms / $one_ms" | bc -l)"
  done
  exit 0
fi

# --- outside: build, install, write the regions, run the session above
source scripts/build_fdw.sh
build_and_install_fdw pfs_fixture

workdir=$(mktemp -d /tmp/perfschema_bench.XXXXXX)
trap 'rm -rf "$workdir"' EXIT
chmod 755 "$workdir"
mkdir -m 755 "$workdir/regions"
for i in $(seq "$regions"); do
  build/tools/pfs_fixture --pid=$((1000 + i)) --history-long-rows="$rows_each" "$workdir/regions/app.$((1000 + i)).pfs"
done
build/tools/pfs_fixture --history-long-rows=$((regions * rows_each)) "$workdir/one.pfs"
echo "perfschema_fdw: $regions regions of $rows_each rows vs one region of $((regions * rows_each)) rows," \
     "events_waits_history_long, median of $runs runs"
echo "cpu: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), clock source:" \
     "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
pg_virtualenv -t bash "$0" --session "$workdir/regions" "$workdir/one.pfs"
