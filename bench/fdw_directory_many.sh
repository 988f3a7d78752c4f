#!/usr/bin/env bash
# Scans of a directory of many regions against a directory of few holding the same
# rows (issue 41 item 4: 10,000 region files scan within 2x of 100), in one database
# of one throwaway cluster: FEW regions of ROWS rows of events_waits_history_long each
# against MANY regions of FEW * ROWS / MANY rows each, every region an exited
# process's (pfs_fixture's). Two servers, one per directory.
#
# Each query runs RUNS times per side, the sides alternating in one backend after a
# warm-up run of each (warm: the regions are mapped); the figure is the median of
# "Planning Time" + "Execution Time" of EXPLAIN (ANALYZE, TIMING OFF) in ms (the
# directory is listed and its files checked when the plan asks for the region).
# "cold" is the same for a query in a new backend (a new psql each run, alternating):
# listing, opening and mapping every file. Ratio = many / few.
#
# The fixtures are made fast: pfs_fixture writes one region per side, and each
# region of a side is a sparse copy of it (holes where it holds zeros) with its own
# pid in the header; the time it took is printed.
#
# Usage (as root): bash bench/fdw_directory_many.sh
#   FEW=100 MANY=10000 ROWS=10000 RUNS=7 COLD_RUNS=5
#   PROFILE=count|sum|where|by_process|threads|global_waits: instead, where that
#   query's backend spends its time over the MANY directory, warm (perf record -g of
#   the backend for 8 s while pgbench runs it; Debian's linux-perf), and its system
#   calls (strace -c, 3 s)
#   MAX_MAPPED=N: SET perfschema_fdw.max_mapped_regions = N in every session
set -euo pipefail
cd "$(dirname "$0")/.."
few=${FEW:-100}
many=${MANY:-10000}
rows=${ROWS:-10000}
runs=${RUNS:-7}
cold_runs=${COLD_RUNS:-5}
rows_many=$((few * rows / many))
[ "$rows_many" -ge 1 ] || { echo "FEW * ROWS / MANY must be at least 1" >&2; exit 2; }

queries=(
  "count|SELECT count(*) FROM %s.events_waits_history_long"
  "sum|SELECT sum(timer_wait) FROM %s.events_waits_history_long"
  "where|SELECT event_id, event_name, timer_wait FROM %s.events_waits_history_long WHERE thread_id = 2"
  "by_process|SELECT process_id, count(*), sum(timer_wait) FROM %s.events_waits_history_long GROUP BY process_id"
  "threads|SELECT * FROM %s.threads"
  "global_waits|SELECT event_name, sum(count_star), sum(sum_timer_wait) FROM %s.events_waits_summary_global_by_event_name GROUP BY event_name"
)
tables=events_waits_history_long,threads,events_waits_summary_global_by_event_name

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
ratio() { echo "$1 / $2" | bc -l; }

# --- inside the throwaway cluster
if [ "${1:-}" = "--session" ]; then
  few_dir=$2 many_dir=$3
  psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
  psql_q -v few="$few_dir" -v many="$many_dir" <<SQL
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER few FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region_directory :'few');
CREATE SERVER many FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region_directory :'many');
CREATE SCHEMA few;
CREATE SCHEMA many;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO ($tables) FROM SERVER few INTO few;
IMPORT FOREIGN SCHEMA performance_schema LIMIT TO ($tables) FROM SERVER many INTO many;
SQL
  for side in few many; do
    echo "rows: $side $(psql_q -c "SELECT count(*) FROM $side.events_waits_history_long")" \
         "in $(psql_q -c "SELECT count(DISTINCT process_id) FROM $side.events_waits_history_long") regions"
  done
  set_max=""
  [ -n "${MAX_MAPPED:-}" ] && set_max="SET perfschema_fdw.max_mapped_regions = $MAX_MAPPED;"
  if [ -n "${PROFILE:-}" ]; then
    for entry in "${queries[@]}"; do
      [ "${entry%%|*}" = "$PROFILE" ] && printf "${entry#*|};\n" many >/tmp/fdw_many_profile.$$.sql
    done
    [ -f /tmp/fdw_many_profile.$$.sql ] || { echo "PROFILE: no query $PROFILE" >&2; exit 2; }
    PGOPTIONS="${MAX_MAPPED:+-c perfschema_fdw.max_mapped_regions=$MAX_MAPPED}" \
      pgbench -n -M prepared -c 1 -T 16 -f /tmp/fdw_many_profile.$$.sql >/tmp/fdw_many_profile.$$.out 2>&1 &
    bench=$!
    sleep 4  # past the first (cold) transaction
    backend=$(psql_q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'")
    perf record -q -F 2000 --call-graph dwarf,16384 -o /tmp/fdw_many_profile.$$.data -p "$backend" -- sleep 8 2>/dev/null
    timeout -s INT 3 strace -c -p "$backend" -o /tmp/fdw_many_profile.$$.strace 2>/dev/null || true
    wait "$bench"
    echo "system calls in 3 s under strace:"
    head -25 /tmp/fdw_many_profile.$$.strace
    sed -n 's/^tps = \([0-9.]*\) .*/tps (profiled) \1/p' /tmp/fdw_many_profile.$$.out
    perf report -i /tmp/fdw_many_profile.$$.data --no-children --sort dso,symbol --percent-limit 0.7 --stdio -g none \
      2>/dev/null | grep -v '^#' | grep -v '^$' | head -60
    echo "with callees (perf report --children):"
    perf report -i /tmp/fdw_many_profile.$$.data --children --sort symbol --stdio -g none 2>/dev/null |
      grep -E 'pfs[A-Z]|pfs_|pfs::|Exec|planner|PortalRun|Transaction|mmap|munmap|open|close' | cut -c1-130 | head -40
    rm -f /tmp/fdw_many_profile.$$.*
    exit 0
  fi
  times() { sed -n 's/.*"\(Planning\|Execution\) Time": \([0-9.]*\).*/\2/p' | paste -d+ - - | bc -l; }
  printf '%-13s %-5s %10s %10s %8s\n' query scan few_ms many_ms ratio
  for q in "${queries[@]}"; do
    name=${q%%|*} sql=${q#*|}
    few_sql="EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $(printf "$sql" few);"
    many_sql="EXPLAIN (ANALYZE, TIMING OFF, FORMAT JSON) $(printf "$sql" many);"
    # cold: a new backend per run, alternating
    : >/tmp/fdw_many.$$
    for _ in $(seq "$cold_runs"); do
      for s in "$few_sql" "$many_sql"; do
        printf '%s\n' "SET max_parallel_workers_per_gather = 0;" "$set_max" "$s" | psql_q -f - | times >>/tmp/fdw_many.$$
      done
    done
    few_ms=$(awk 'NR % 2 == 1' /tmp/fdw_many.$$ | median)
    many_ms=$(awk 'NR % 2 == 0' /tmp/fdw_many.$$ | median)
    printf '%-13s %-5s %10.2f %10.2f %8.2f\n' "$name" cold "$few_ms" "$many_ms" "$(ratio "$many_ms" "$few_ms")"
    # warm: one backend, a warm-up of each, then alternating
    {
      echo "SET max_parallel_workers_per_gather = 0;"
      echo "$set_max"
      for _ in $(seq $((runs + 1))); do echo "$few_sql"; echo "$many_sql"; done
    } | psql_q -f - | times | tail -n +3 >/tmp/fdw_many.$$
    few_ms=$(awk 'NR % 2 == 1' /tmp/fdw_many.$$ | median)
    many_ms=$(awk 'NR % 2 == 0' /tmp/fdw_many.$$ | median)
    rm -f /tmp/fdw_many.$$
    printf '%-13s %-5s %10.2f %10.2f %8.2f\n' "$name" warm "$few_ms" "$many_ms" "$(ratio "$many_ms" "$few_ms")"
  done
  exit 0
fi

# --- outside: build, install, write the regions, run the session above
source scripts/build_fdw.sh
build_and_install_fdw pfs_fixture

workdir=$(mktemp -d /tmp/perfschema_bench.XXXXXX)
trap 'rm -rf "$workdir"' EXIT
chmod 755 "$workdir"
mkdir -m 755 "$workdir/few" "$workdir/many"
start=$(date +%s.%N)
build/tools/pfs_fixture --history-long-rows="$rows" "$workdir/few.template"
build/tools/pfs_fixture --history-long-rows="$rows_many" "$workdir/many.template"
# Sparse copies with the header's pid (offset 24, little-endian u64) set per copy.
python3 - "$workdir" "$few" "$many" <<'PY'
import os, struct, sys
work, counts = sys.argv[1], {"few": int(sys.argv[2]), "many": int(sys.argv[3])}
for side, n in counts.items():
    data = bytearray(open(f"{work}/{side}.template", "rb").read())
    zero = bytes(4096)
    blocks = [(o, bytes(data[o:o + 4096])) for o in range(0, len(data), 4096) if data[o:o + 4096] != zero[:len(data[o:o + 4096])]]
    for i in range(n):
        pid = 100000 + i
        path = f"{work}/{side}/app.{pid}.pfs"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        for o, b in blocks:
            if o == 0:
                b = b[:24] + struct.pack("<Q", pid) + b[32:]
            os.pwrite(fd, b, o)
        os.ftruncate(fd, len(data))
        os.close(fd)
PY
end=$(date +%s.%N)
echo "perfschema_fdw: a directory of $few regions of $rows rows vs one of $many regions of $rows_many rows," \
     "median of $runs warm runs (one backend) and $cold_runs cold runs (a new backend each)"
printf 'fixtures: %.1f s for %d files (%s on disk)\n' "$(echo "$end - $start" | bc -l)" $((few + many)) \
  "$(du -sh "$workdir" | cut -f1)"
echo "cpu: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), clock source:" \
     "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
pg_virtualenv -t bash "$0" --session "$workdir/few" "$workdir/many"
