#!/usr/bin/env bash
# The small, frequent queries a monitoring system sends (a dashboard, an exporter,
# pfs_top), against heap tables holding the same rows, in one database of one
# throwaway cluster. A live program (tools/pfs_live: two hot threads and a slow
# pair) records into a region; the heap tables are made with CREATE TABLE ... AS
# SELECT * from the foreign tables. Each query runs as `pgbench -n -M prepared -c 1
# -T SECONDS`, the FDW's side and the heap's in turn, ROUNDS rounds; the figures are
# the medians of the transactions per second, and fdw/heap is the median of the
# rounds' ratios (a slow moment of a noisy machine hits both sides of a round; the
# sides' order is reversed every other round).
# A third side is the floor of any foreign scan: the same queries over foreign tables
# of bench/null_fdw, which return as many rows as the heap tables, every column NULL,
# and do nothing else (null/heap: what no foreign-data wrapper can beat; fdw/null:
# how far perfschema_fdw is from that floor).
#
# Then pfs_top's refresh of each of its views (the queries tools/top/ sends every
# interval, over the live region, with the sys views; view 6 over the fleet below),
# and a Prometheus scrape over a fleet: the six queries of
# tools/prometheus/queries_by_process.yaml (what prometheus-postgres-exporter sends
# per scrape with that file) over a region_directory server of REGIONS fixture
# regions of 10,000 waits each, as one pgbench transaction (-M simple, as the
# exporter sends them): the median over the rounds of the milliseconds per scrape.
#
# Usage (as root): bash bench/fdw_small_queries.sh
#   ROUNDS=3 SECONDS_EACH=4 REGIONS=100
#   PROFILE=current|top10|thread: instead, where that query's backend spends its time
#   (perf record -g of the backend while pgbench runs the FDW's side for 8 s; perf
#   report by symbol, callers folded; Debian's linux-perf), and its system calls
#   (strace -c, 3 s); PROFILE_SIDE=heap (or floor) profiles the heap's (the floor's) side of it instead;
#   PROFILE_CALLERS=sym,... adds who calls those symbols, PROFILE_ANNOTATE=sym its hot
#   lines (perf annotate)
#   BUILDS="a.so b.so": instead of the installed build alone, the FDW's side of each
#   round once per build (perfschema_fdw.so files of `make -f Makefile.pgxs`, of two
#   commits: each pgbench run is a new backend, which loads the file installed at its
#   start), then the heap's; prints each build's tps and FDW/heap, and the last
#   build's ratio over the first's. Hold /tmp/pfs-install.lock meanwhile.
#   QUERIES_ONLY=1: the three queries only (no pfs_top views, no scrape)
#   EXEC_TIMES=1: also each side's executor time per call (pg_stat_statements, loaded
#   for it: its hooks cost every side the same few microseconds, which moves the tps
#   ratios towards 1, so the figures of record are taken without it)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${ROUNDS:-3}
seconds=${SECONDS_EACH:-4}
regions=${REGIONS:-100}

queries=(
  "current|SELECT * FROM %s.events_waits_current"
  "top10|SELECT event_name, count_star, sum_timer_wait FROM %s.events_waits_summary_global_by_event_name WHERE count_star > 0 ORDER BY sum_timer_wait DESC LIMIT 10"
  "thread|SELECT * FROM %s.threads WHERE thread_id = 1"
)

# --- inside the throwaway cluster
if [ "${1:-}" = "--session" ]; then
  region=$2 workdir=$3 fleet=$4
  psql_q() { psql -X -q -At -v ON_ERROR_STOP=1 "$@"; }
  psql_q -v region="$region" -v fleet="$fleet" <<'SQL'
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER live FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'region');
CREATE SERVER fleet FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region_directory :'fleet');
CREATE SCHEMA fleet;
IMPORT FOREIGN SCHEMA performance_schema
  LIMIT TO (events_waits_summary_global_by_event_name, events_statements_summary_global_by_event_name,
            events_waits_histogram_global_by_event_name, file_summary_by_event_name, status)
  FROM SERVER fleet INTO fleet;
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER live INTO ps;
CREATE SCHEMA sys;
SELECT count(*) FROM perfschema_create_views('sys', 'ps');
CREATE SCHEMA heap;
CREATE TABLE heap.events_waits_current AS SELECT * FROM ps.events_waits_current;
CREATE TABLE heap.events_waits_summary_global_by_event_name AS
  SELECT * FROM ps.events_waits_summary_global_by_event_name;
CREATE TABLE heap.threads AS SELECT * FROM ps.threads;
VACUUM ANALYZE heap.events_waits_current, heap.events_waits_summary_global_by_event_name, heap.threads;
CREATE EXTENSION null_fdw;
CREATE SERVER nothing FOREIGN DATA WRAPPER null_fdw;
CREATE SCHEMA floor;
DO $$
DECLARE
  t text;
  columns text;
  n bigint;
BEGIN
  FOREACH t IN ARRAY ARRAY['events_waits_current', 'events_waits_summary_global_by_event_name', 'threads'] LOOP
    SELECT string_agg(format('%I %s', attname, format_type(atttypid, atttypmod)), ', ' ORDER BY attnum)
      INTO columns FROM pg_attribute WHERE attrelid = format('heap.%I', t)::regclass AND attnum > 0;
    EXECUTE format('SELECT count(*) FROM heap.%I', t) INTO n;
    EXECUTE format('CREATE FOREIGN TABLE floor.%I (%s) SERVER nothing OPTIONS (rows %L)', t, columns, n);
  END LOOP;
END $$;
SQL
  [ -n "${EXEC_TIMES:-}" ] && psql_q -c 'CREATE EXTENSION pg_stat_statements'
  echo "rows: events_waits_current $(psql_q -c 'SELECT count(*) FROM heap.events_waits_current')," \
    "summary $(psql_q -c 'SELECT count(*) FROM heap.events_waits_summary_global_by_event_name')" \
    "($(psql_q -c 'SELECT count(*) FROM heap.events_waits_summary_global_by_event_name WHERE count_star > 0') with counts)," \
    "threads $(psql_q -c 'SELECT count(*) FROM heap.threads')"
  tps() {  # file -> transactions per second
    pgbench -n -M prepared -c 1 -T "$seconds" -f "$1" 2>/dev/null |
      sed -n 's/^tps = \([0-9.]*\) .*/\1/p'
  }
  median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
  if [ -n "${PROFILE:-}" ]; then
    for entry in "${queries[@]}"; do
      [ "${entry%%|*}" = "$PROFILE" ] && printf "${entry#*|};\n" "${PROFILE_SIDE:-ps}" >"$workdir/profile.sql"
    done
    [ -f "$workdir/profile.sql" ] || { echo "PROFILE: no query $PROFILE" >&2; exit 2; }
    pgbench -n -M prepared -c 1 -T 14 -f "$workdir/profile.sql" >"$workdir/profile.pgbench" 2>&1 &
    bench=$!
    sleep 1
    backend=$(psql_q -c "SELECT pid FROM pg_stat_activity WHERE application_name = 'pgbench'")
    perf record -q -F 4000 --call-graph dwarf,16384 -o "$workdir/perf.data" -p "$backend" -- sleep 8 2>/dev/null
    cp "$workdir/perf.data" /tmp/pfs_small_queries.perf.data 2>/dev/null || true
    # the system calls of 3 s of it, per transaction (pgbench's tps of the unprofiled
    # second after: strace slows the backend)
    timeout -s INT 3 strace -c -p "$backend" -o "$workdir/strace.txt" 2>/dev/null || true
    wait "$bench"
    echo "system calls in 3 s under strace:"
    head -25 "$workdir/strace.txt"
    sed -n 's/^tps = \([0-9.]*\) .*/tps (profiled) \1/p' "$workdir/profile.pgbench"
    perf report -i "$workdir/perf.data" --no-children --sort dso,symbol --percent-limit 0.7 --stdio -g none 2>/dev/null |
      grep -v '^#' | grep -v '^$' | head -70
    echo "with callees (perf report --children), the FDW's and the executor's entry points:"
    perf report -i "$workdir/perf.data" --children --sort symbol --stdio -g none 2>/dev/null |
      grep -E 'pfs[A-Z]|pfs_|exec_|Exec|planner|GetCachedPlan|PortalRun|pg_plan|standard_|Transaction|pfs::' |
      head -40
    if [ -n "${PROFILE_CALLERS:-}" ]; then  # e.g. PROFILE_CALLERS=__strlen_evex,malloc
      perf report -i "$workdir/perf.data" --no-children --symbols "$PROFILE_CALLERS" --stdio -G \
        --percent-limit 0.2 2>/dev/null | grep -v '^#' | grep -v '^$' | head -120
    fi
    if [ -n "${PROFILE_ANNOTATE:-}" ]; then  # e.g. PROFILE_ANNOTATE=pfsBeginForeignScan: its hot lines
      perf annotate -i "$workdir/perf.data" --stdio "$PROFILE_ANNOTATE" 2>/dev/null |
        grep -E '^\s+[0-9]+\.[0-9]+' | sort -rn | head -40
    fi
    exit 0
  fi
  query_files() {  # name template: the query against the foreign tables, the heap copies, the floor
    printf "$2;\n" ps >"$workdir/$1.fdw.sql"
    printf "$2;\n" heap >"$workdir/$1.heap.sql"
    printf "$2;\n" floor >"$workdir/$1.null.sql"
  }
  if [ -n "${BUILDS:-}" ]; then
    read -r -a builds <<<"$BUILDS"
    libdir=$(pg_config --pkglibdir)
    use_build() {  # so file: installed for the next backend (a rename: never half a file)
      cp "$1" "$libdir/perfschema_fdw.so.bench" && mv -f "$libdir/perfschema_fdw.so.bench" "$libdir/perfschema_fdw.so"
    }
    printf '%-8s' query
    for b in "${builds[@]}"; do printf ' %12s %9s' "fdw_tps:$(basename "$b" .so)" fdw/heap; done
    printf ' %10s %9s %9s %9s\n' heap_tps last/first null/heap last/null
    for entry in "${queries[@]}"; do
      name=${entry%%|*}
      query_files "$name" "${entry#*|}"
      rows=""
      for _ in $(seq "$rounds"); do
        line=""
        for b in "${builds[@]}"; do use_build "$b"; line+="$(tps "$workdir/$name.fdw.sql") "; done
        rows+="$line$(tps "$workdir/$name.null.sql") $(tps "$workdir/$name.heap.sql")"$'\n'
      done
      rows=${rows%$'\n'}
      n=${#builds[@]}
      printf '%-8s' "$name"
      for i in $(seq "$n"); do
        printf ' %12.0f %9.2f' "$(awk -v c="$i" '{ print $c }' <<<"$rows" | median)" \
          "$(awk -v c="$i" '{ print $c / $NF }' <<<"$rows" | median)"
      done
      printf ' %10.0f %9.2f %9.2f %9.2f\n' "$(awk '{ print $NF }' <<<"$rows" | median)" \
        "$(awk -v n="$n" '{ print $n / $1 }' <<<"$rows" | median)" \
        "$(awk '{ print $(NF - 1) / $NF }' <<<"$rows" | median)" \
        "$(awk -v n="$n" '{ print $n / $(NF - 1) }' <<<"$rows" | median)"
    done
    exit 0
  fi
  printf '%-8s %10s %10s %10s %9s %9s %9s' query fdw_tps heap_tps null_tps fdw/heap null/heap fdw/null
  if [ -n "${EXEC_TIMES:-}" ]; then printf ' %8s %8s %8s\n' fdw_us heap_us null_us; else echo; fi
  # (EXEC_TIMES: the executor's microseconds per call, pg_stat_statements' mean
  # over the rounds: what each side spends apart from the protocol and the network)
  exec_us() {  # schema
    psql_q -c "SELECT round((sum(total_exec_time) / sum(calls) * 1000)::numeric, 1) FROM pg_stat_statements
               WHERE query LIKE '%FROM $1.%' AND query NOT LIKE '%pg_stat_statements%'"
  }
  for entry in "${queries[@]}"; do
    name=${entry%%|*}
    query_files "$name" "${entry#*|}"
    [ -n "${EXEC_TIMES:-}" ] && psql_q -c 'SELECT pg_stat_statements_reset()' >/dev/null
    pairs=""
    for round in $(seq "$rounds"); do
      # the order reversed every other round: a side that runs first (or last) in a
      # round gains or loses nothing over the rounds
      if ((round % 2)); then
        f=$(tps "$workdir/$name.fdw.sql") h=$(tps "$workdir/$name.heap.sql") z=$(tps "$workdir/$name.null.sql")
      else
        z=$(tps "$workdir/$name.null.sql") h=$(tps "$workdir/$name.heap.sql") f=$(tps "$workdir/$name.fdw.sql")
      fi
      pairs+="$f $h $z"$'\n'
    done
    pairs=${pairs%$'\n'}
    printf '%-8s %10.0f %10.0f %10.0f %9.2f %9.2f %9.2f\n' "$name" "$(awk '{ print $1 }' <<<"$pairs" | median)" \
      "$(awk '{ print $2 }' <<<"$pairs" | median)" "$(awk '{ print $3 }' <<<"$pairs" | median)" \
      "$(awk '{ print $1 / $2 }' <<<"$pairs" | median)" "$(awk '{ print $3 / $2 }' <<<"$pairs" | median)" \
      "$(awk '{ print $1 / $3 }' <<<"$pairs" | median)" | tr -d '\n'
    if [ -n "${EXEC_TIMES:-}" ]; then printf ' %8s %8s %8s\n' "$(exec_us ps)" "$(exec_us heap)" "$(exec_us floor)"; else echo; fi
  done

  [ -n "${QUERIES_ONLY:-}" ] && exit 0
  # ms per transaction: the median over the rounds of pgbench's latency average.
  ms_per() {  # file
    for _ in $(seq "$rounds"); do
      pgbench -n -M simple -c 1 -T "$seconds" -f "$1" 2>/dev/null |
        sed -n 's/^latency average = \([0-9.]*\) ms/\1/p'
    done | median
  }
  # pfs_top's refresh of each view: the view's query (pfs_top --sql prints it) and
  # the status query every refresh sends (the program exited?); view 2 also asks
  # whether the sys views exist; view 6 reads the fleet's directory.
  status_sql="SELECT max(variable_value) FILTER (WHERE variable_name = 'provider_alive'), string_agg(variable_value::text, ', ' ORDER BY variable_value) FILTER (WHERE variable_name = 'pid'), count(*) FILTER (WHERE variable_name = 'pid') FROM %s.status WHERE variable_name IN ('provider_alive', 'pid');"
  for view in waits locks statements files threads processes memory; do
    schema=ps
    [ "$view" = processes ] && schema=fleet
    build/tools/pfs_top --sql --view "$view" -s "$schema" -S sys >"$workdir/top_$view.sql"
    [ "$view" = locks ] && echo "SELECT to_regclass('\"sys\".\"x\$lock_waits\"') IS NOT NULL;" >>"$workdir/top_$view.sql"
    printf "$status_sql\n" "$schema" >>"$workdir/top_$view.sql"
    echo "pfs_top: one refresh of view $view ($(grep -c ';$' "$workdir/top_$view.sql") queries, over $schema): $(ms_per "$workdir/top_$view.sql") ms"
  done

  # The exporter's queries, each ended by a semicolon, over the fleet's schema.
  awk '/^  query: \|/ { q = 1; next } q && /^    / { sub(/^    /, ""); buf = buf $0 "\n"; next }
       q { printf "%s;\n", buf; buf = ""; q = 0 }' tools/prometheus/queries_by_process.yaml |
    sed 's/\bps\./fleet./g' >"$workdir/scrape.sql"
  queries=$(grep -c ';$' "$workdir/scrape.sql")
  scrape_ms=$(ms_per "$workdir/scrape.sql")
  echo "scrape: the $queries queries of queries_by_process.yaml over $(psql_q -c "SELECT count(DISTINCT process_id) FROM fleet.status") regions: $scrape_ms ms"
  exit 0
fi

# --- outside: build, install, start the live program, run the session above
source scripts/build_fdw.sh
# (PGXS reads PROFILE as linker flags: not this script's PROFILE)
PROFILE='' build_and_install_fdw pfs_live pfs_fixture pfs_top
# the floor's wrapper (objects removed after: the tree stays as it was)
PROFILE='' make -C bench/null_fdw >/dev/null && make -C bench/null_fdw install >/dev/null &&
  make -C bench/null_fdw clean >/dev/null

workdir=$(mktemp -d /tmp/perfschema_bench.XXXXXX)
chmod 755 "$workdir"
# (the queries on each side: FDW, heap, floor, and a second build; then the 7
# views of pfs_top; the program must outlive them all)
live_seconds=$((rounds * seconds * (4 * ${#queries[@]} + 7) + 120))
PFS_REGION="$workdir/live.region" build/tools/pfs_live --seconds="$live_seconds" --hot-threads=2 \
  >"$workdir/pfs_live.out" 2>&1 &
live_pid=$!
trap 'kill "$live_pid" 2>/dev/null || true; wait "$live_pid" 2>/dev/null || true; rm -rf "$workdir"' EXIT
for _ in $(seq 100); do [ -s "$workdir/live.region" ] && break; sleep 0.05; done
mkdir -m 755 "$workdir/fleet"
for i in $(seq "$regions"); do
  build/tools/pfs_fixture --history-long-rows=10000 --pid=$((100000 + i)) "$workdir/fleet/p$i.pfs" >/dev/null
done
sleep 0.5
chmod 777 "$workdir"
echo "perfschema_fdw vs heap, small queries: pgbench -M prepared -c 1 -T $seconds, median of $rounds rounds"
echo "CPU: $(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -1), clock source:" \
  "$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
preload=()
[ -n "${EXEC_TIMES:-}" ] && preload=(-o shared_preload_libraries=pg_stat_statements)
pg_virtualenv "${preload[@]}" -t bash "$0" --session "$workdir/live.region" "$workdir" "$workdir/fleet"
