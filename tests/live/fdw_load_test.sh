#!/usr/bin/env bash
# Load test: pgbench clients reading the event and summary tables and changing the
# setup of a live instrumented process (tools/pfs_live.cpp) at once, on a
# throwaway PostgreSQL (pg_virtualenv). Passes when pgbench exits 0 with no client
# aborted and no failed transaction, the server log shows no crash, assertion or
# PANIC, and the process is still running and recording afterwards.
#
# Usage (as root): bash tests/live/fdw_load_test.sh
#   LOAD_SECONDS (60), LOAD_CLIENTS (8), LOAD_THREADS (2), LOAD_MODE (prepared)
source "$(dirname "$0")/lib.sh"

live_session

seconds=${LOAD_SECONDS:-60}
clients=${LOAD_CLIENTS:-8}
threads=${LOAD_THREADS:-2}
mode=${LOAD_MODE:-prepared}

live_workdir
LIVE_ENV=(PFS_WAITS_HISTORY_LONG_SIZE=5000)
live_start_provider
live_import

# The workload: weights in the file names' order below.
cat >"$WORK/select_events.sql" <<'SQL'
SELECT count(*) FROM ps.events_waits_current;
SELECT event_name, operation, timer_wait FROM ps.events_waits_history_long
 ORDER BY timer_wait DESC NULLS LAST LIMIT 5;
SELECT t.name, count(*) FROM ps.events_waits_history h JOIN ps.threads t USING (thread_id) GROUP BY t.name;
SQL
cat >"$WORK/select_summaries.sql" <<'SQL'
SELECT event_name, count_star, format_pico_time(sum_timer_wait)
  FROM ps.events_waits_summary_global_by_event_name ORDER BY sum_timer_wait DESC LIMIT 5;
SELECT count(*) FROM ps.events_waits_summary_by_thread_by_event_name WHERE count_star > 0;
SELECT sum(count_star) FROM ps.events_waits_summary_by_instance;
SQL
cat >"$WORK/update_instruments.sql" <<'SQL'
\set r random(0, 3)
UPDATE ps.setup_instruments SET timed = CASE WHEN :r = 0 THEN 'NO' ELSE 'YES' END
 WHERE name = 'wait/synch/rwlock/live/hot_rw';
UPDATE ps.setup_instruments SET enabled = CASE WHEN :r = 1 THEN 'NO' ELSE 'YES' END
 WHERE name = 'wait/synch/mutex/live/slow_lock';
SQL
cat >"$WORK/update_setup.sql" <<'SQL'
BEGIN;
UPDATE ps.setup_consumers SET enabled = 'NO' WHERE name = 'events_waits_history';
SELECT enabled FROM ps.setup_consumers WHERE name = 'events_waits_history';
UPDATE ps.setup_consumers SET enabled = 'YES' WHERE name = 'events_waits_history';
UPDATE ps.setup_instruments SET enabled = 'YES', timed = 'YES' WHERE name LIKE 'wait/synch/mutex/live/%';
SELECT count(*) FROM ps.setup_instruments WHERE enabled = 'YES';
COMMIT;
SQL
cat >"$WORK/update_threads.sql" <<'SQL'
\set r random(0, 1)
UPDATE ps.threads SET history = CASE WHEN :r = 0 THEN 'NO' ELSE 'YES' END WHERE name = 'thread/live/slow_waiter';
BEGIN;
UPDATE ps.setup_actors SET history = 'YES';
SAVEPOINT s;
UPDATE ps.setup_actors SET enabled = 'NO';
ROLLBACK TO SAVEPOINT s;
COMMIT;
SQL
cat >"$WORK/truncate.sql" <<'SQL'
TRUNCATE ps.events_waits_history_long;
SQL

log=$(server_log)
log_lines_before=$(wc -l <"$log")
echo "=== pgbench: $clients clients, $threads threads, $seconds s, -M $mode, against pid $PROVIDER_PID"
set +e
pgbench -n -c "$clients" -j "$threads" -T "$seconds" -M "$mode" -P 10 \
  -f "$WORK/select_events.sql@4" -f "$WORK/select_summaries.sql@4" \
  -f "$WORK/update_instruments.sql@2" -f "$WORK/update_setup.sql@1" \
  -f "$WORK/update_threads.sql@1" -f "$WORK/truncate.sql@1" \
  >"$WORK/pgbench.out" 2>"$WORK/pgbench.err"
status=$?
set -e
cat "$WORK/pgbench.out"
grep -v '^progress' "$WORK/pgbench.err" | head -20 >&2 || true

check "pgbench exit status 0" "[ $status -eq 0 ]"
check "no client aborted" "! grep -q aborted \"$WORK/pgbench.err\""
processed=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$WORK/pgbench.out")
failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$WORK/pgbench.out")
tps=$(sed -n 's/^tps = \([0-9.]*\).*/\1/p' "$WORK/pgbench.out")
check "transactions processed: $processed, failed: ${failed:-0}, tps $tps" \
  "[ ${processed:-0} -gt 0 ] && [ ${failed:-0} -eq 0 ]"
tail -n +"$((log_lines_before + 1))" "$log" >"$WORK/server.log"
check "no crash, assertion or PANIC in the server log" \
  "! grep -E 'terminated by signal|TRAP:|PANIC|was terminated|server process' \"$WORK/server.log\""
check "no ERROR in the server log" "! grep -q 'ERROR:' \"$WORK/server.log\""
check "the provider is still running" "kill -0 $PROVIDER_PID"
q "UPDATE ps.setup_instruments SET enabled = 'YES' WHERE name = 'wait/synch/mutex/live/hot_lock'"
c1=$(count_of wait/synch/mutex/live/hot_lock); sleep 0.3; c2=$(count_of wait/synch/mutex/live/hot_lock)
check "the provider is still recording ($c1 -> $c2)" "[ $c2 -gt $c1 ]"
check "the provider is alive for the region" \
  "[ \"$(q "SELECT variable_value FROM ps.status WHERE variable_name = 'provider_alive'")\" = 1 ]"
live_stop_provider
check "pfs_live exited cleanly" "grep -q 'hot lock/unlock pairs' \"$WORK/pfs_live.out\""
echo "=== fdw_load_test: all checks passed"
