#!/usr/bin/env bash
# The main demo, on a fresh machine, as root:  bash scripts/demo.sh
#
# Installs what is missing (scripts/setup.sh), builds the project (build/) and the
# perfschema_fdw extension, starts a throwaway PostgreSQL (pg_virtualenv), runs
# tools/pfs_demo (threads contending on an instrumented queue, cache and counter)
# with its region in a temporary directory, and reads that region from SQL while
# the program runs and after it has exited: what each thread waits on, the top
# waits by latency, and a join with an ordinary table mapping instruments to the
# teams that own them; it writes a flame graph of the waits to build/demo-waits.svg.
# Everything else it creates is removed at the end.
#
# Environment: DEMO_SECONDS (default 6) is how long the program runs.
# DEMO_INSTALLED=1 runs the installed files instead (the Debian packages:
# /usr/bin/pfs_demo and pfs_flamegraph, the packaged extension; nothing is built,
# the flame graph goes to the temporary directory): scripts/package.sh does.
set -euo pipefail
cd "$(dirname "$0")/.."

# --- inside the throwaway cluster (the script calls itself through pg_virtualenv)
if [ "${1:-}" = "--session" ]; then
  region=$2
  bin=$3
  svg=$4
  psql_run() { psql -X -q -v ON_ERROR_STOP=1 -v region="$region" "$@"; }

  "$bin/pfs_demo" --seconds="${DEMO_SECONDS:-6}" &
  demo_pid=$!
  trap 'kill "$demo_pid" 2>/dev/null || true' EXIT
  for _ in $(seq 100); do [ -s "$region" ] && break; sleep 0.1; done
  sleep 1  # let the threads get going

  psql_run <<'SQL'
\pset footer off
SET client_min_messages = warning;
CREATE EXTENSION perfschema_fdw;
CREATE SERVER app FOREIGN DATA WRAPPER perfschema_fdw OPTIONS (region :'region');
CREATE SCHEMA ps;
IMPORT FOREIGN SCHEMA performance_schema FROM SERVER app INTO ps;
CREATE SCHEMA sys;
SELECT count(*) AS views FROM perfschema_create_views('sys', 'ps') \gset
\echo
\echo '== While the program runs: what each thread is waiting on (events_waits_current)'
SELECT t.thread_id, t.name AS thread, c.event_name, c.operation,
       CASE WHEN c.end_event_id IS NULL THEN 'waiting' ELSE 'done' END AS state,
       format_pico_time(c.timer_wait) AS waited, c.source
  FROM ps.events_waits_current c
  JOIN ps.threads t ON t.thread_id = c.thread_id
 ORDER BY t.thread_id, c.event_id;
\echo '== While the program runs: the processlist (threads: request, stage and text of each connection)'
SELECT thread_id, processlist_id AS id, processlist_command AS command, processlist_state AS state,
       processlist_info AS info
  FROM ps.threads WHERE processlist_id IS NOT NULL ORDER BY processlist_id;
\echo '== While the program runs: waits by thread (sys-style view; gone once threads exit)'
SELECT thread_id, thread, event, total, total_latency, max_latency
  FROM sys.waits_by_thread_by_latency LIMIT 8;
SELECT variable_value = 1 AS provider_alive FROM ps.status WHERE variable_name = 'provider_alive';
SQL

  echo
  echo "== A flame graph of the waiting time (thread; statement; stage; wait; source)"
  psql -X -At -c "SELECT stack || ' ' || picoseconds FROM perfschema_folded_waits('ps')" |
    "$bin/pfs_flamegraph" --title="pfs_demo: where the threads waited" >"$svg"
  echo "$svg: open it in a browser (hover over a box for its time)"
  echo
  echo "== Waiting for pfs_demo to finish (its region stays behind)"
  wait "$demo_pid"
  trap - EXIT

  psql_run <<'SQL'
\pset footer off
\echo
\echo '== Top waits by latency (sys-style view over events_waits_summary_global_by_event_name)'
SELECT * FROM sys.waits_global_by_latency LIMIT 10;
\echo '== Requests by kind (sys.statement_analysis over events_statements_summary_by_digest)'
SELECT query, exec_count, total_latency, avg_latency, p95_latency, p99_latency, lock_latency, warn_count
  FROM sys.statement_analysis LIMIT 6;
\echo '== Which kind of request waited on which lock (waits by request type, from the histories)'
SELECT statement, event, total, total_latency, max_latency
  FROM sys.waits_by_statement WHERE total_latency IS NOT NULL LIMIT 10;
\echo '== Where requests spend their time: stages (events_stages_summary_global_by_event_name)'
SELECT event_name, count_star, format_pico_time(sum_timer_wait) AS total, format_pico_time(avg_timer_wait) AS avg
  FROM ps.events_stages_summary_global_by_event_name WHERE count_star > 0 ORDER BY sum_timer_wait DESC;
\echo '== The latency distribution of the queue lock (events_waits_histogram_global_by_event_name)'
SELECT bucket_timer_low, bucket_timer_high, count_bucket, round(bucket_quantile::numeric, 4) AS quantile
  FROM ps.events_waits_histogram_global_by_event_name
 WHERE event_name = 'wait/synch/mutex/demo/queue_lock' AND count_bucket > 0 ORDER BY bucket_number LIMIT 8;
\echo '== The same with format_pico_time by hand, per wait class'
SELECT substring(event_name FROM '^[^/]*/[^/]*/[^/]*') AS wait_class,
       sum(count_star) AS waits,
       format_pico_time(sum(sum_timer_wait)) AS total,
       format_pico_time(max(max_timer_wait)) AS worst
  FROM ps.events_waits_summary_global_by_event_name
 WHERE count_star > 0
 GROUP BY 1 ORDER BY sum(sum_timer_wait) DESC;

\echo '== Joined with an ordinary table: who owns the time spent waiting'
CREATE TABLE instrument_owners (instrument text PRIMARY KEY, team text NOT NULL, oncall text NOT NULL);
INSERT INTO instrument_owners VALUES
  ('wait/synch/mutex/demo/queue_lock',       'ingest',   'ana@example.com'),
  ('wait/synch/cond/demo/queue_not_empty',   'ingest',   'ana@example.com'),
  ('wait/synch/cond/demo/queue_not_full',    'ingest',   'ana@example.com'),
  ('wait/synch/rwlock/demo/cache_lock',      'storage',  'bo@example.com'),
  ('wait/synch/mutex/demo/stats_lock',       'platform', 'cy@example.com');
SELECT o.team, o.oncall, sum(s.count_star) AS waits,
       format_pico_time(sum(s.sum_timer_wait)) AS total_wait,
       format_pico_time(max(s.max_timer_wait)) AS worst_wait
  FROM ps.events_waits_summary_global_by_event_name s
  JOIN instrument_owners o ON o.instrument = s.event_name
 GROUP BY o.team, o.oncall
 ORDER BY sum(s.sum_timer_wait) DESC;
\echo '== The last waits kept in events_waits_history_long that did wait, per team and operation'
SELECT o.team, h.operation, count(*) AS waits,
       format_pico_time(avg(h.timer_wait)) AS avg_wait,
       format_pico_time(max(h.timer_wait)) AS worst_wait
  FROM ps.events_waits_history_long h
  JOIN instrument_owners o ON o.instrument = h.event_name
 WHERE h.timer_wait > 0
 GROUP BY o.team, h.operation
 ORDER BY sum(h.timer_wait) DESC;
\echo '== The plan of the join'
EXPLAIN (COSTS OFF)
SELECT o.team, count(*) FROM ps.events_waits_history_long h
  JOIN instrument_owners o ON o.instrument = h.event_name GROUP BY o.team;
SQL
  exit 0
fi

# --- outside: build, install, then run the session above in a throwaway cluster
workdir=$(mktemp -d /tmp/perfschema_demo.XXXXXX)
trap 'rm -rf "$workdir"' EXIT
chmod 755 "$workdir"  # the server (user postgres) reads the region in it
if [ -n "${DEMO_INSTALLED:-}" ]; then
  bin=/usr/bin
  svg="$workdir/demo-waits.svg"
else
  source scripts/build_fdw.sh
  # Every tool the docs use, not only the demo's: the interposer, pfs_top (when
  # libpq was found), pfs_trace_merge.
  build_and_install_fdw pfs_demo pfs_flamegraph pfs_otlp pfs_preload pfs_trace_merge
  if grep -q '^pfs_top:' <<<"$(cmake --build build --target help)"; then cmake --build build --target pfs_top >/dev/null; fi
  bin="$PWD/build/tools"
  svg="$PWD/build/demo-waits.svg"
fi
export PFS_REGION="$workdir/app.pfs"
pg_virtualenv -t bash "$0" --session "$PFS_REGION" "$bin" "$svg"
