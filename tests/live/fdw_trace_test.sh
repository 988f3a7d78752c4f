#!/usr/bin/env bash
# Trace files (the trace worklog) turned on from SQL, and checked against the
# tables: a live process (tools/pfs_live.cpp) gets TRACE_ENABLED = 'YES' on an
# instrument and on its setup_actors row through UPDATE; threads it then starts
# write trace files; the files load into a PostgreSQL table with psql as they are
# (\i), and their end lines (END_EVENT_ID not NULL) match, row for row and column
# for column, what events_waits_history_long shows for the same events. The same
# events as timelines (pfs_trace_merge --format=chrome, scripts/timeline.sql) are
# checked by tests/live/timeline_json.py and in headless chromium.
# Usage (as root): bash tests/live/fdw_trace_test.sh    (TRACE_THREADS 4, TRACE_OPS 1000)
source "$(dirname "$0")/lib.sh"

live_session pfs_trace_merge

threads=${TRACE_THREADS:-4}
ops=${TRACE_OPS:-1000}

live_workdir
mkdir "$WORK/trace"
# history_long large enough for every event of the burst
LIVE_ENV=(PFS_TRACE_DIR="$WORK/trace" PFS_WAITS_HISTORY_LONG_SIZE=$((threads * ops * 4)))
live_start_provider --hot-threads=0 --slow=0 --burst-file="$WORK/go" \
  --burst-threads="$threads" --burst-ops="$ops"
live_import
burst=wait/synch/mutex/live/burst_lock

# the worklog's rule: a disabled instrument cannot be traced
q "UPDATE ps.setup_instruments SET enabled = 'NO' WHERE name = '$burst'"
if q "UPDATE ps.setup_instruments SET trace_enabled = 'YES' WHERE name = '$burst'" 2>"$WORK/rule.err"; then
  fail "tracing a disabled instrument was accepted"
fi
check "tracing a disabled instrument is refused: $(head -1 "$WORK/rule.err")" \
  "grep -q 'cannot be traced while it is disabled' \"$WORK/rule.err\""

# tracing on, from SQL, in one transaction
psql -X -q -v ON_ERROR_STOP=1 <<SQL
BEGIN;
UPDATE ps.setup_instruments SET enabled = 'YES', timed = 'YES', trace_enabled = 'YES' WHERE name = '$burst';
UPDATE ps.setup_actors SET trace_enabled = 'YES' WHERE host = '%' AND "user" = '%' AND role = '%';
COMMIT;
SQL
check "the process's setup shows the traced instrument and actor" \
  "[ \"$(q "SELECT (SELECT trace_enabled FROM ps.setup_instruments WHERE name = '$burst') || (SELECT trace_enabled FROM ps.setup_actors WHERE host = '%' AND \"user\" = '%' AND role = '%')")\" = YESYES ]"
q "TRUNCATE ps.events_waits_history_long"

touch "$WORK/go"
for _ in $(seq 200); do [ -e "$WORK/go.done" ] && break; sleep 0.05; done
check "the burst threads finished" "[ -e \"$WORK/go.done\" ]"
files=("$WORK"/trace/thread.*)
check "${#files[@]} trace files written (one per traced thread)" "[ ${#files[@]} -eq $threads ]"
head -2 "${files[0]}"

# the files, as they are, into a table of the events_waits columns
{
  echo "SET client_min_messages = warning;"
  echo "CREATE SCHEMA trace;"
  echo "CREATE TABLE trace.events_waits_current (LIKE ps.events_waits_history_long);"
  echo "SET search_path = trace;"
  for f in "${files[@]}"; do echo "\\i $f"; done
} >"$WORK/load.sql"
psql -X -q -v ON_ERROR_STOP=1 -f "$WORK/load.sql"

read -r lines ends starts < <(q "SELECT count(*), count(*) FILTER (WHERE end_event_id IS NOT NULL),
                                        count(*) FILTER (WHERE end_event_id IS NULL)
                                   FROM trace.events_waits_current" | tr '|' ' ')
echo "trace lines: $lines ($ends end lines, $starts start lines)"
check "one end line per traced wait ($ends = $threads x $ops)" "[ $ends -eq $((threads * ops)) ]"

psql -X -q -v ON_ERROR_STOP=1 <<'SQL'
CREATE TABLE trace.traced AS
  SELECT * FROM trace.events_waits_current WHERE end_event_id IS NOT NULL;
CREATE TABLE trace.shown AS
  SELECT h.* FROM ps.events_waits_history_long h
   WHERE h.thread_id IN (SELECT thread_id FROM trace.traced);
SQL
only_trace=$(q "SELECT count(*) FROM (SELECT * FROM trace.traced EXCEPT ALL SELECT * FROM trace.shown) x")
only_table=$(q "SELECT count(*) FROM (SELECT * FROM trace.shown EXCEPT ALL SELECT * FROM trace.traced) x")
shown=$(q "SELECT count(*) FROM trace.shown")
check "events_waits_history_long shows $shown rows of the traced threads" "[ $shown -eq $((threads * ops)) ]"
blocked=$(q "SELECT count(*) FROM trace.traced WHERE blocking_thread_id IS NOT NULL")
echo "traced waits that queued behind a holder (blocking_thread_id set): $blocked"
check "every end line matches a history_long row, column for column ($only_trace differ)" "[ $only_trace -eq 0 ]"
check "every history_long row of the traced threads is in the trace ($only_table differ)" "[ $only_table -eq 0 ]"
q "SELECT thread_id, event_id, end_event_id, event_name, source, timer_wait, operation
     FROM trace.traced ORDER BY thread_id, event_id LIMIT 3"

# Timelines (issue 19): the trace files, and the history_long tables through
# scripts/timeline.sql, as Chrome trace-event JSON: one complete event per traced
# wait, ts/dur from TIMER_START/TIMER_WAIT; and headless chromium parses them.
q "COPY (SELECT thread_id, event_id, timer_start, timer_wait FROM trace.traced) TO STDOUT (FORMAT csv)" \
  >"$WORK/traced.csv"
build/tools/pfs_trace_merge --format=chrome "$WORK/trace" >"$WORK/trace.json"
python3 tests/live/timeline_json.py "$WORK/trace.json" "$WORK/traced.csv"
psql -X -q -At -v ON_ERROR_STOP=1 -v schema=ps -f scripts/timeline.sql -o "$WORK/sql.json"
python3 tests/live/timeline_json.py "$WORK/sql.json" "$WORK/traced.csv" --only-expected-threads
# (PFS_SKIP_BROWSER=1: not here; the browser's verdict does not depend on the server,
# so the trees of scripts/pg_tree_check.sh leave it to the run on the machine)
for json in trace sql; do
  [ -z "${PFS_SKIP_BROWSER:-}" ] || { echo "skipped: headless chromium (PFS_SKIP_BROWSER)"; break; }
  verdict=$(bash tests/live/timeline_browser.sh "$WORK/$json.json") || fail "chromium: $verdict"
  echo "ok: headless chromium loads the $json timeline: $verdict"
done

live_stop_provider
echo "=== fdw_trace_test: all checks passed"
